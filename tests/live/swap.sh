#!/bin/sh
# swap.sh - run test_swap, and test_watch's rounds (written-then-swapped pages), with swap on: the swap that is
# on already (left as it is), else a temporary 256 MiB swap file (or an unused zram device in a guest), always
# switched off and removed afterwards.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/tests/live/test_swap
size_mib=${PAGEMAP_TEST_SWAP_MIB:-256}

skip() { echo "SKIP swap: $*"; exit 77; }

# One run at a time: a second one would see this one's swap as the system's and test on it while it goes away.
if command -v flock >/dev/null; then
	exec 9<"$0" && flock -w 120 9 || skip "another swap.sh is still running"
fi

[ -x "$bin" ] || skip "$bin is not built (make test-programs)"
[ "$(id -u)" -eq 0 ] || skip "the swap slots in pagemap are root's to see (and swapon needs root)"

dir= file= zram= on=0 pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	if [ "$on" -eq 1 ] && [ -n "$file" ]; then
		swapoff "$file" || echo "swap.sh: swapoff $file failed: remove it by hand" >&2
	fi
	if [ -n "$zram" ]; then
		[ "$on" -eq 1 ] && { swapoff "/dev/$zram" || echo "swap.sh: swapoff /dev/$zram failed" >&2; }
		echo 1 >"/sys/block/$zram/reset" 2>/dev/null
	fi
	[ -z "$dir" ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A zram device that nobody uses (disksize 0) as swap: a QEMU guest's initramfs cannot hold a swap file.
zram_swapon() {
	for z in /sys/block/zram*; do
		[ -e "$z/disksize" ] && [ "$(cat "$z/disksize")" = 0 ] || continue
		zram=${z##*/}
		echo "${size_mib}M" >"$z/disksize" && mkswap "/dev/$zram" >/dev/null 2>&1 && swapon "/dev/$zram" &&
			return 0
		echo 1 >"$z/reset" 2>/dev/null
		zram=
		return 1
	done
	return 1
}

if [ -n "$(tail -n +2 /proc/swaps)" ]; then
	# Swap is on already, as on most installed machines: test on it and leave it as it is.
	free_kb=$(awk '/^SwapFree:/ { print $2 }' /proc/meminfo)
	[ "${free_kb:-0}" -ge $((8 * 1024)) ] || skip "swap is on, but only ${free_kb:-0} kB of it is free (want 8 MiB)"
	echo "# swap is on already ($(tail -n +2 /proc/swaps | awk '{ printf "%s%s", sep, $1; sep = ", " }')," \
		"$((free_kb / 1024)) MiB free): testing on it, not touching it"
else
	command -v mkswap >/dev/null && command -v swapon >/dev/null && command -v swapoff >/dev/null ||
		skip "mkswap/swapon/swapoff not installed"
	dir=$(mktemp -d "$build/swap.XXXXXX" 2>/dev/null || mktemp -d /tmp/pagemap-swap.XXXXXX) || skip "cannot make a temp dir"
	file=$dir/swapfile
	# fallocate'd files work as swap on ext4/xfs; fall back to writing zeros elsewhere.
	fallocate -l "${size_mib}M" "$file" 2>/dev/null ||
		dd if=/dev/zero of="$file" bs=1M count="$size_mib" status=none || skip "cannot create $file"
	chmod 600 "$file"
	mkswap "$file" >/dev/null 2>&1 || skip "mkswap $file failed"
	if err=$(swapon "$file" 2>&1); then
		on=1
	else
		# A swap file needs a block-backed file system: on tmpfs or ramfs (a QEMU guest's initramfs root)
		# swapon fails with EINVAL. zram (run-in-vm.sh -M zram) is a block device that needs none.
		fs=$(stat -f -c %T "$dir" 2>/dev/null)
		rm -rf "$dir"
		dir= file=
		if zram_swapon; then
			on=1
			echo "# swap on /dev/$zram (${size_mib} MiB): a swap file on ${fs:-this file system} failed ($err)"
		elif [ ! -e /sys/class/zram-control ] && [ -z "$(ls /sys/block 2>/dev/null)" ]; then
			skip "no swap possible here: swapon of a file on ${fs:-an unknown file system} failed ($err)," \
				"and there is no block device at all (no zram: CONFIG_ZRAM not built in; no disk)"
		else
			skip "swapon of a file on ${fs:-an unknown file system} failed: $err; no unused zram device either"
		fi
	fi
fi

# In the background, so that a signal to this script runs the traps at once.
PAGEMAP_SWAP_READY=1 "$bin" &
pid=$!
wait "$pid"
rc=$?
pid=
# The write watch: pages written, then swapped out before a collect, must be reported.
watch=$build/tests/live/test_watch
if [ -x "$watch" ]; then
	"$watch" self_uffd self_softdirty self_mprotect remote_uffd remote_softdirty populated_swap &
	pid=$!
	wait "$pid"
	wrc=$?
	pid=
	[ "$rc" -eq 0 ] && rc=$wrc
fi
# The same without privilege: frames hidden, swap entries and uffd-wp markers read alike.
PAGEMAP_SWAP_READY=1 PAGEMAP_UNPRIV_BINS="test_swap test_watch" PAGEMAP_UNPRIV_PREFIX=unpriv-swap \
	sh "$(dirname "$0")/unpriv.sh" &
pid=$!
wait "$pid"
urc=$?
pid=
[ "$urc" -eq 77 ] && urc=0
[ "$rc" -eq 0 ] && rc=$urc
exit "$rc"
