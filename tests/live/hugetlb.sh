#!/bin/sh
# hugetlb.sh - run test_hugetlb with a few more hugetlb pages reserved (vm.nr_hugepages) and a hugetlbfs mounted in a temporary directory, and always restore the saved count and unmount afterwards.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/tests/live/test_hugetlb
nr=/proc/sys/vm/nr_hugepages
want=7	# huge pages the test maps (6: MAP_HUGETLB 3, memfd, hugetlbfs file, SysV segment) and one spare

skip() { echo "SKIP hugetlb: $*"; exit 77; }

# One run at a time: a second one would see this one's pages as the system's (and restore that count).
if command -v flock >/dev/null; then
	exec 9<"$0" && flock -w 120 9 || skip "another hugetlb.sh is still running"
fi

[ -x "$bin" ] || skip "$bin is not built (make test-programs)"
[ -w "$nr" ] || skip "$nr is missing or not writable (no CONFIG_HUGETLB_PAGE, or not root)"

saved=$(cat "$nr") || skip "cannot read $nr"
pid=
mnt=
restore() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	if [ -n "$mnt" ]; then
		# the test's helper dies by its parent-death signal, maybe a moment later: detach then (-l), freed at its end
		umount "$mnt" 2>/dev/null || umount -l "$mnt" || echo "hugetlb.sh: cannot unmount $mnt" >&2
		rmdir "$mnt" || echo "hugetlb.sh: cannot remove $mnt" >&2
	fi
	# The test's mappings are gone with it: the pages it used can be freed.
	echo "$saved" >"$nr" || echo "hugetlb.sh: cannot restore $nr=$saved" >&2
	now=$(cat "$nr")
	[ "$now" = "$saved" ] || echo "hugetlb.sh: $nr is $now, not the saved $saved" >&2
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo $((saved + want)) >"$nr" || skip "cannot write $nr"
free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
[ "${free:-0}" -ge "$want" ] || skip "only ${free:-0} free hugetlb pages after asking for $want more (memory fragmented?)"

# A file on a hugetlbfs mount of our own: the test maps one (it says why not, if no mount can be made).
mnt=$(mktemp -d "${TMPDIR:-/tmp}/pm-hugetlbfs.XXXXXX") || mnt=
if [ -n "$mnt" ] && mount -t hugetlbfs none "$mnt" 2>/dev/null; then
	export PM_HUGETLBFS_DIR="$mnt"
elif [ -n "$mnt" ]; then
	echo "hugetlb.sh: cannot mount hugetlbfs on $mnt: the hugetlbfs file case is skipped"
	rmdir "$mnt"
	mnt=
fi

# In the background, so that a signal to this script runs the traps at once.
PAGEMAP_HUGETLB_READY=1 "$bin" &
pid=$!
wait "$pid"
rc=$?
pid=
exit "$rc"
