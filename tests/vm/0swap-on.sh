#!/bin/sh
# 0swap-on.sh - (QEMU guest, runs first: the runner takes the folder in name order) with PAGEMAP_VM_SWAP_MIB set,
# turn on that much swap on the guest's zram device (run-in-vm.sh -M zram) for every test after it, as on an
# installed machine with swap. Nothing to restore: the guest is thrown away. Without the variable: nothing.
mib=${PAGEMAP_VM_SWAP_MIB:-}
[ -n "$mib" ] || exit 0
[ "${KM_IN_VM:-}" = 1 ] || { echo "SKIP vm_swap_on: not in a run-in-vm.sh guest: not touching this machine's swap"; exit 77; }
z=/sys/block/zram0
[ -e "$z/disksize" ] || { echo "FAIL vm_swap_on: no $z: boot the guest with run-in-vm.sh -M zram"; exit 1; }
if echo "${mib}M" >"$z/disksize" && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0; then
	echo "# swap on for the whole run: $(tail -n +2 /proc/swaps)"
	echo "PASS vm_swap_on"
else
	echo "FAIL vm_swap_on: cannot turn on ${mib} MiB of swap on /dev/zram0"
	exit 1
fi
