#!/bin/sh
# readers.sh - `maps` (default columns, and the columns a scan answers) and `pages` print the same with
# PAGEMAP_BACKEND=pread, =scan and the default, which reads each mapping by the reader its measured costs
# choose: on a child with 96 MiB of one 4 KiB page in 16 written (zero pages and guard markers among them), a
# file mapping read one page in 16, a MADV_HUGEPAGE region written and, where swap is on, pages paged out.
# The rows of those regions are compared (other processes may share the interpreter's pages between readings).
# Root only (frames shown): without them the default keeps the scan and pread tells no huge page.
# Usage: tests/live/readers.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP readers: no python3"; exit 77; }
[ -x "$pagemap" ] || { echo "SKIP readers: $pagemap is not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP readers: not root (frames hidden: the default back end keeps the scan)"; exit 77; }
"$pagemap" features 2>/dev/null | grep -q '^pagemap-scan  *yes' ||
	{ echo "SKIP readers: no PAGEMAP_SCAN (Linux 6.7+): the default is pread"; exit 77; }
work=$(mktemp -d) || exit 1
child=
cleanup() {
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

swap=no
if [ "$(wc -l </proc/swaps)" -gt 1 ]; then
	swap=yes
else
	echo "SKIP readers-swap: no swap is on (swapped pages are not made here: the test changes no system state)"
fi

cat >"$work/child.py" <<'PY'
import ctypes, mmap, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PG, HP = os.sysconf("SC_PAGE_SIZE"), 2 << 20
MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_PAGEOUT, MADV_GUARD_INSTALL = 14, 15, 21, 102

def region(size, advice, fd=-1):
    # 2 MiB aligned, a page of PROT_NONE after it so that no neighbour merges into the mapping.
    raw = libc.mmap(None, size + 2 * HP, 0, 0x22, -1, 0)
    start = (raw + HP - 1) & ~(HP - 1)
    if fd < 0:
        libc.mmap(start, size, 3, 0x32, -1, 0)
    else:
        libc.mmap(start, size, 1, 0x12, fd, 0)
    if advice:
        libc.madvise(start, size, advice)
    return start

a = region(96 << 20, MADV_NOHUGEPAGE)
for p in range(0, 96 << 20, 16 * PG):
    ctypes.memset(a + p, (p // PG) % 251 + 1, 8)      # each page its own content (KSM would merge alike ones)
s = 0
for p in range(8 * PG, 4 << 20, 16 * PG):               # the zero page, read-faulted
    s += ctypes.c_char.from_address(a + p).value[0]
for p in range((4 << 20) + 4 * PG, 8 << 20, 16 * PG):   # guard markers (Linux 6.13+; EINVAL before)
    libc.madvise(a + p, PG, MADV_GUARD_INSTALL)
if sys.argv[1] == "yes":                                 # swap: page out part of it
    libc.madvise(a + (16 << 20), 16 << 20, MADV_PAGEOUT)
fd = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 64 << 20)
f = region(64 << 20, 0, fd)
for p in range(0, 64 << 20, 16 * PG):
    s += ctypes.c_char.from_address(f + p).value[0]
h = region(8 << 20, MADV_HUGEPAGE)
ctypes.memset(h, 1, 8 << 20)
print("%x %x %x %x %x %x" % (a, a + (96 << 20), f, f + (64 << 20), h, h + (8 << 20)), flush=True)
time.sleep(120)
PY
python3 "$work/child.py" "$swap" "$work/file" >"$work/addr" &
child=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
# Until it sleeps: the interpreter's own pages must not move between the reads compared.
for _ in $(seq 50); do
	case $(cat "/proc/$child/wchan" 2>/dev/null) in *nanosleep*|*hrtimer*) break ;; esac
	sleep 0.1
done
[ -s "$work/addr" ] || { echo "FAIL readers-setup: the child did not start"; exit 1; }

# The rows of the child's own regions: other processes on the machine map the interpreter's files too,
# and may change those pages' EXCLUSIVE between two readings.
own_rows() {
	python3 -c '
import sys
r = [int(x, 16) for x in sys.argv[1].split()]
for n, line in enumerate(sys.stdin):
    f = line.split()
    try:
        a = int(f[0], 16)
    except (IndexError, ValueError):
        a = -1
    if n == 0 or any(r[i] <= a < r[i + 1] for i in range(0, len(r), 2)):
        sys.stdout.write(line)
' "$(cat "$work/addr")"
}
fail=0
check() {	# check NAME ARGS...: the command's output by each reader
	name=$1
	shift
	for b in pread scan auto; do
		PAGEMAP_BACKEND=$b "$pagemap" "$@" "$child" >"$work/$b.all" 2>"$work/$b.err" ||
			{ echo "FAIL $name: PAGEMAP_BACKEND=$b: $(cat "$work/$b.err")"; fail=1; return; }
		own_rows <"$work/$b.all" >"$work/$b.out"
	done
	[ "$(wc -l <"$work/auto.out")" -gt 3 ] || { echo "FAIL $name: the child's regions are missing"; fail=1; return; }
	if cmp -s "$work/pread.out" "$work/scan.out" && cmp -s "$work/pread.out" "$work/auto.out"; then
		echo "PASS $name"
	else
		echo "FAIL $name: the readers differ (pread against the default, then against the scan):"
		diff "$work/pread.out" "$work/auto.out" | head -n 6
		diff "$work/pread.out" "$work/scan.out" | head -n 6
		fail=1
	fi
}
check readers-maps maps
check readers-maps-scan-columns maps -o START,END,SIZE,PRESENT,SWAPPED,FILE,THP,ZERO,GUARD
check readers-maps-bytes maps -b -o START,END,PRESENT,SWAPPED,FILE,EXCLUSIVE,THP,ZERO,GUARD,RSS
check readers-pages pages
# The one-in-16 region's reader was chosen by costs: the debug log says which.
PAGEMAP_DEBUG=1 "$pagemap" maps "$child" 2>&1 >/dev/null | grep -q "^libpagemap: walk: 0x$(cut -d' ' -f1 "$work/addr")-.*sampled" &&
	echo "PASS readers-chosen" || { echo "FAIL readers-chosen: no reader chosen by costs for 0x$(cut -d' ' -f1 "$work/addr")"; fail=1; }
exit $fail
