#!/bin/sh
# diff.sh - `pagemap diff` around known changes of a live process (python3 + ctypes): snapshot it stopped, let it
# break copy-on-write on 5 pages, fault in 3 new ones, drop 2 (MADV_DONTNEED) and replace one mapping, snapshot
# it stopped again: WRITTEN, APPEARED and FREED are exactly those bytes, the old mapping "unmapped", the new
# one "mapped". The regions sit between PROT_NONE guard pages so no other mapping merges with them.
# Usage: tests/live/diff.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP diff-live: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
target= sharer=
cleanup() {
	[ -n "$sharer" ] && kill -CONT "$sharer" 2>/dev/null && kill "$sharer" 2>/dev/null
	[ -n "$target" ] && kill -CONT "$target" 2>/dev/null && kill "$target" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/go" >"$work/pids" <<'PY' &
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PG, RW, NONE, RD = os.sysconf("SC_PAGE_SIZE"), 3, 0, 1
PRIV_ANON, FIXED_NOREPLACE, DONTNEED = 0x22, 0x100000, 4
def guarded(n):	# n pages between two PROT_NONE pages; returns the first of the n
    base = libc.mmap(None, (n + 2) * PG, RW, PRIV_ANON, -1, 0)
    assert base and base != ctypes.c_void_p(-1).value
    libc.mprotect(base, PG, NONE)
    libc.mprotect(base + (n + 1) * PG, PG, NONE)
    return base + PG
def write(addr, n):
    for i in range(n):
        ctypes.memset(addr + i * PG, 0x5a, 1)
m = guarded(32)	# pages 0-7 written (CoW after fork), 8-15 untouched, 16-23 written, 24-31 untouched
write(m, 8)
write(m + 16 * PG, 8)
r = guarded(4)	# replaced later
write(r, 4)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
pid = os.fork()
if pid == 0:
    while True:
        time.sleep(1)
print(os.getpid(), pid, "0x%x" % m, "0x%x" % r, flush=True)
signal.sigwait([signal.SIGUSR1])
write(m, 5)				# copy-on-write broken: WRITTEN 5 pages
write(m + 8 * PG, 3)			# APPEARED 3 pages
libc.madvise(m + 16 * PG, 2 * PG, DONTNEED)	# FREED 2 pages
libc.munmap(r, 4 * PG)			# unmapped ...
got = libc.mmap(r, 3 * PG, RD, PRIV_ANON | FIXED_NOREPLACE, -1, 0)	# ... and mapped: another mapping there
open(sys.argv[1], "w").write("done %d\n" % (got == r))
while True:
    time.sleep(1)
PY
target=$!
i=0
while [ ! -s "$work/pids" ] && [ $i -lt 150 ] && kill -0 "$target" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
read -r target sharer m r <"$work/pids" || { echo "FAIL diff-live: the target did not start"; exit 1; }

snap() {	# snap FILE: a snapshot of the stopped target
	kill -STOP "$target"
	err=$("$pagemap" snapshot -p "$target" -o "$1" 2>&1)
	rc=$?
	kill -CONT "$target"
	[ $rc = 0 ] || { echo "FAIL diff-live: snapshot: $err"; exit 1; }
}
snap "$work/a.snap"
kill -USR1 "$target"
i=0
while [ ! -s "$work/go" ] && [ $i -lt 150 ]; do
	sleep 0.2
	i=$((i + 1))
done
read -r done fixed <"$work/go" || { echo "FAIL diff-live: the target did not make its changes"; exit 1; }
snap "$work/b.snap"

pg=$(getconf PAGESIZE)
"$pagemap" diff -r -n -b -p "$target" -o MAPPING,START,APPEARED,FREED,SWAPOUT,WRITTEN,MOVED "$work/a.snap" \
	"$work/b.snap" >"$work/out"
rc=$?
[ $rc = 1 ] && echo "PASS diff-live-status" || echo "FAIL diff-live-status: exit $rc, want 1"
want="changed $m $((3 * pg)) $((2 * pg)) 0 $((5 * pg)) 0"
got=$(grep " $m " "$work/out")
[ "$got" = "$want" ] && echo "PASS diff-live-bytes" || echo "FAIL diff-live-bytes: got '$got', want '$want'"
if [ "$fixed" = 1 ]; then
	n=$(grep -c -e "^unmapped $r " -e "^mapped $r " "$work/out")
	[ "$n" = 2 ] && echo "PASS diff-live-remap" || { echo "FAIL diff-live-remap:"; grep " $r " "$work/out"; }
else
	echo "SKIP diff-live-remap: MAP_FIXED_NOREPLACE did not place the new mapping (Linux < 4.17)"
fi
"$pagemap" diff -p "$target" "$work/a.snap" "$work/a.snap" >/dev/null
rc=$?
[ $rc = 0 ] && echo "PASS diff-live-same" || echo "FAIL diff-live-same: exit $rc, want 0"
exit 0
