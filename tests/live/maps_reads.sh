#!/bin/sh
# maps_reads.sh - the walk reads a process's maps text in large reads: each read of /proc/PID/maps takes
# the target's mmap lock and finds its place again, and stdio's own buffer for a /proc file is 1 KiB (a
# read per dozen lines); the kernel gives up to a page of whole lines per read. On a child with 6,000
# mappings, `maps PID` must read its maps file in at most one read per half page of text and two more
# (it was one per KiB). Counts system calls (strace), never a time.
# Usage: tests/live/maps_reads.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
[ -x "$pagemap" ] || { echo "SKIP maps-reads: $pagemap is not built"; exit 77; }
command -v strace >/dev/null || { echo "SKIP maps-reads: no strace"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP maps-reads: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
child=''
cleanup() {
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/child.py" <<'PY'
import ctypes, mmap, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
PG, N = mmap.PAGESIZE, 3000
a = libc.mmap(None, 2 * N * PG, 3, 0x22, -1, 0)
for i in range(N):                                     # every other page PROT_NONE: 2 * N mappings
    if libc.mprotect(ctypes.c_void_p(a + 2 * i * PG), ctypes.c_size_t(PG), 0):
        raise SystemExit("mprotect: errno %d" % ctypes.get_errno())
print("ready", flush=True)
time.sleep(120)
PY
python3 "$work/child.py" >"$work/ready" &
child=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.1; done
[ -s "$work/ready" ] || { echo "FAIL maps-reads: the child did not start"; exit 1; }
bytes=$(wc -c <"/proc/$child/maps")
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -qq -y -e trace=read -o "$work/trace" "$pagemap" maps "$child" >/dev/null 2>"$work/err" ||
	{ echo "FAIL maps-reads: maps failed under strace: $(head -n 3 "$work/err")"; exit 1; }
reads=$(awk -v f="/proc/$child/maps>" 'index($0, f) { n++ } END { print n + 0 }' "$work/trace")
most=$((bytes * 2 / $(getconf PAGESIZE) + 2))
if [ "$reads" -ge 1 ] && [ "$reads" -le "$most" ]; then
	echo "PASS maps-reads: $(grep -c . "/proc/$child/maps") mappings, $bytes bytes of maps text in $reads reads (at most $most)"
else
	echo "FAIL maps-reads: $bytes bytes of maps text in $reads reads (at most $most)"
	exit 1
fi
