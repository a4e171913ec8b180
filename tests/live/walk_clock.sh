#!/bin/sh
# walk_clock.sh - the walk's cost model reads its clock (CLOCK_THREAD_CPUTIME_ID, a system call each) only
# where a mapping's reader is to be chosen: `maps` of a `sleep`, whose mappings one scan call sees whole,
# reads it not once; `maps` of a child with a 64 MiB mapping of one 4 KiB page in 16 written chooses its
# reader (PAGEMAP_DEBUG=1 says which) and reads it. Counts system calls (strace), never a time.
# Root only (frames shown: the default reads some mappings by pread only then).
# Usage: tests/live/walk_clock.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
[ -x "$pagemap" ] || { echo "SKIP walk-clock: $pagemap is not built"; exit 77; }
command -v strace >/dev/null || { echo "SKIP walk-clock: no strace"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP walk-clock: no python3"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP walk-clock: not root (frames hidden: the default keeps the scan, nothing to choose)"; exit 77; }
"$pagemap" features 2>/dev/null | grep -q '^pagemap-scan  *yes' ||
	{ echo "SKIP walk-clock: no PAGEMAP_SCAN (Linux 6.7+): the default is pread"; exit 77; }
work=$(mktemp -d) || exit 1
small='' child=''
cleanup() {
	[ -n "$small" ] && kill "$small" 2>/dev/null
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0

# CPU-clock reads of one `maps PID` (pagemap's own threads: -f). LeakSanitizer cannot run under ptrace.
clock_reads() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -e trace=clock_gettime -o "$work/trace" "$pagemap" maps "$1" >"$work/out" 2>"$work/err" ||
		{ echo "FAIL walk-clock: maps $1 failed under strace: $(head -n 3 "$work/err")" >&2; return 1; }
	awk '/CLOCK_THREAD_CPUTIME_ID/ { n++ } END { print n + 0 }' "$work/trace"
}

sleep 1000 &
small=$!
i=0	# until the child is sleep (a fork not yet exec'd would be a copy of this shell)
while [ "$(cat "/proc/$small/comm" 2>/dev/null)" != sleep ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
n=$(clock_reads "$small") || exit 1
if [ "$n" = 0 ]; then
	echo "PASS walk-clock-small: maps of a sleep ($(grep -c . "/proc/$small/maps") mappings) reads no CPU clock"
else
	echo "FAIL walk-clock-small: maps of a sleep reads the CPU clock $n times (no mapping's reader was to choose)"
	fail=1
fi

cat >"$work/child.py" <<'PY'
import ctypes, mmap, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
PG, SIZE = mmap.PAGESIZE, 64 << 20
a = libc.mmap(None, SIZE, 3, 0x22, -1, 0)
libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(SIZE), 15)   # MADV_NOHUGEPAGE: a page table entry per page
for p in range(0, SIZE, 16 * PG):
    ctypes.memset(a + p, 1, 8)
print("%x" % a, flush=True)
time.sleep(120)
PY
python3 "$work/child.py" >"$work/addr" &
child=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
[ -s "$work/addr" ] || { echo "FAIL walk-clock: the child did not start"; exit 1; }
n=$(clock_reads "$child") || exit 1
PAGEMAP_DEBUG=1 "$pagemap" maps "$child" 2>&1 >/dev/null | grep 'walk: .*sampled' >"$work/choice"
if [ "$n" -gt 0 ] && [ -s "$work/choice" ]; then
	echo "PASS walk-clock-large: a 64 MiB one-in-16 mapping's reader is chosen ($(sed 's/.*: //' "$work/choice" | head -n 1)), the CPU clock read $n times"
else
	echo "FAIL walk-clock-large: CPU clock read $n times, choices: $(cat "$work/choice")"
	fail=1
fi
exit $fail
