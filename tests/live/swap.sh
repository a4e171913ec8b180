#!/bin/sh
# swap.sh - run test_swap, and test_watch's rounds (written-then-swapped pages), with a temporary 256 MiB swap file;
# always swapoff and remove it afterwards.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/tests/live/test_swap
size_mib=${PAGEMAP_TEST_SWAP_MIB:-256}

skip() { echo "SKIP swap: $*"; exit 77; }

# One run at a time: a second one would see this one's state as the system's (and restore it).
if command -v flock >/dev/null; then
	exec 9<"$0" && flock -w 120 9 || skip "another swap.sh is still running"
fi

[ -x "$bin" ] || skip "$bin is not built (make test-programs)"
[ "$(id -u)" -eq 0 ] || skip "swapon needs root"
command -v mkswap >/dev/null && command -v swapon >/dev/null && command -v swapoff >/dev/null ||
	skip "mkswap/swapon/swapoff not installed"
[ "$(wc -l </proc/swaps)" -le 1 ] && [ -z "$(tail -n +2 /proc/swaps)" ] || skip "swap is already on: not touching it"

dir=$(mktemp -d "$build/swap.XXXXXX" 2>/dev/null || mktemp -d /tmp/pagemap-swap.XXXXXX) || skip "cannot make a temp dir"
file=$dir/swapfile
on=0 pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	if [ "$on" -eq 1 ]; then
		swapoff "$file" || echo "swap.sh: swapoff $file failed: remove it by hand" >&2
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fallocate'd files work as swap on ext4/xfs; fall back to writing zeros elsewhere.
fallocate -l "${size_mib}M" "$file" 2>/dev/null ||
	dd if=/dev/zero of="$file" bs=1M count="$size_mib" status=none || skip "cannot create $file"
chmod 600 "$file"
mkswap "$file" >/dev/null 2>&1 || skip "mkswap $file failed"
if ! err=$(swapon "$file" 2>&1); then
	# A swap file needs a block-backed file system: on tmpfs or ramfs (a QEMU guest's initramfs root)
	# swapon fails with EINVAL, and without a block device (zram, loop, a disk) nothing can swap.
	fs=$(stat -f -c %T "$dir" 2>/dev/null)
	if [ ! -e /sys/class/zram-control ] && [ -z "$(ls /sys/block 2>/dev/null)" ]; then
		skip "no swap possible here: swapon of a file on ${fs:-an unknown file system} failed ($err)," \
			"and there is no block device at all (no zram: CONFIG_ZRAM not built in; no disk)"
	fi
	skip "swapon of a file on ${fs:-an unknown file system} failed: $err"
fi
on=1

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
