#!/bin/sh
# series.sh - a series of snapshots (snapshot --append) of a live process (python3 + ctypes) around known changes:
# stopped, member 1 appended; it breaks copy-on-write on 5 pages, faults in 3 new ones and drops 2 (MADV_DONTNEED);
# stopped again, member 2. Checks: `--snapshot S@1` and `S@2` replay `pages` of its private anonymous regions
# byte for byte as the live process showed them at each moment; `diff S@1 S@2` reports exactly those bytes (and
# the same with the full walk forced); a second series written --pfn drop stores far fewer WORDS bytes in member
# 2 than in member 1 (its idle 1 GiB region's chunks are referred to); a failed append leaves the series as it
# was; members are numbered, listed and refused past the end with one line.
# Usage: tests/live/series.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP series-live: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
target= sharer=
cleanup() {
	[ -n "$sharer" ] && kill -CONT "$sharer" 2>/dev/null && kill "$sharer" 2>/dev/null
	[ -n "$target" ] && kill -CONT "$target" 2>/dev/null && kill "$target" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/go" >"$work/pids" <<'PY' &
import ctypes, os, random, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PG, RW, NONE = os.sysconf("SC_PAGE_SIZE"), 3, 0
PRIV_ANON, DONTNEED, NOHUGE = 0x22, 4, 15
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
IDLE = 262144	# 1 GiB, a random half of its pages written, then left alone: the chunks a series reuses
big = guarded(IDLE)
libc.madvise(big, IDLE * PG, NOHUGE)
rnd = random.Random(13)
for i in range(IDLE):
    if rnd.random() < 0.5:
        ctypes.memset(big + i * PG, 1, 1)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
pid = os.fork()
if pid == 0:
    while True:
        time.sleep(1)
print(os.getpid(), pid, "0x%x" % m, "0x%x-0x%x" % (m, m + 32 * PG), "0x%x" % big, flush=True)
signal.sigwait([signal.SIGUSR1])
write(m, 5)				# copy-on-write broken: WRITTEN 5 pages
write(m + 8 * PG, 3)			# APPEARED 3 pages
libc.madvise(m + 16 * PG, 2 * PG, DONTNEED)	# FREED 2 pages
open(sys.argv[1], "w").write("done\n")
while True:
    time.sleep(1)
PY
target=$!
i=0
while [ ! -s "$work/pids" ] && [ $i -lt 300 ] && kill -0 "$target" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
read -r target sharer m range big <"$work/pids" || { echo "FAIL series-live: the target did not start"; exit 1; }
s=$work/s.series
d=$work/d.series

# append N: member N of both series, the target stopped; `pages` of its regions live just before and after
# (the kernel may migrate a stopped process's pages: the append is taken again, at most twice, until they agree;
# the comparison stays on the small region, where a migration meanwhile is rare).
append() {
	kill -STOP "$target"
	for try in 1 2 3; do
		"$pagemap" pages "$target" "$range" >"$work/live$1.out" 2>&1
		[ -f "$s" ] && cp "$s" "$work/s.before"
		err=$("$pagemap" snapshot -p "$target" --append "$s" 2>&1) || { echo "FAIL series-append: $err"; exit 1; }
		"$pagemap" pages "$target" "$range" >"$work/after.out" 2>&1
		cmp -s "$work/live$1.out" "$work/after.out" && break
		[ $try = 3 ] && break
		echo "  series-append: the live pages changed meanwhile; appending again"
		if [ -f "$work/s.before" ]; then cp "$work/s.before" "$s"; else rm -f "$s"; fi
	done
	err=$("$pagemap" snapshot -p "$target" --pfn drop --append "$d" 2>&1) || { echo "FAIL series-append-drop: $err"; exit 1; }
	kill -CONT "$target"
}
append 1
kill -USR1 "$target"
i=0
while [ ! -s "$work/go" ] && [ $i -lt 150 ]; do
	sleep 0.2
	i=$((i + 1))
done
[ -s "$work/go" ] || { echo "FAIL series-live: the target did not make its changes"; exit 1; }
append 2
echo "PASS series-append"
mode=$(stat -c %a "$s")
[ "$mode" = 600 ] && echo "PASS series-mode" || echo "FAIL series-mode: $mode, want 600"

for n in 1 2; do
	"$pagemap" --snapshot "$s@$n" pages "$target" "$range" >"$work/snap$n.out" 2>&1
	if [ "$(wc -l <"$work/live$n.out")" -ge 4 ] && cmp -s "$work/live$n.out" "$work/snap$n.out"; then
		echo "PASS series-replay-$n"
	else
		echo "FAIL series-replay-$n: --snapshot S@$n pages differs from the live output"
		diff -u "$work/live$n.out" "$work/snap$n.out" | head -20
	fi
done
"$pagemap" --snapshot "$s" pages "$target" "$range" >"$work/last.out" 2>&1
"$pagemap" --snapshot "$s@-1" pages "$target" "$range" >"$work/minus1.out" 2>&1
{ cmp -s "$work/last.out" "$work/minus1.out" && [ "$(head -n "$(wc -l <"$work/last.out")" "$work/snap2.out" | cmp - "$work/last.out" && echo y)" = y ]; } &&
	echo "PASS series-last" || echo "FAIL series-last: S, S@-1 and S@2 replay differently"

pg=$(getconf PAGESIZE)
want="changed $m $((3 * pg)) $((2 * pg)) 0 $((5 * pg)) 0"
for series in "$s" "$d"; do
	name=$(basename "$series" .series)
	"$pagemap" diff -r -n -b --all -p "$target" -o MAPPING,START,APPEARED,FREED,SWAPOUT,WRITTEN,NEW_FRAME \
		"$series@1" "$series@2" >"$work/diff.out"
	rc=$?
	# --pfn drop keeps no frame numbers: the 5 pages shared with the sharer in A and exclusive in B may be
	# copy-on-write broken or the sharer's pages gone; without frames (or soft-dirty) nothing proves a write
	[ "$name" = d ] && want="changed $m $((3 * pg)) $((2 * pg)) 0 0 0"
	got=$(grep " $m " "$work/diff.out")
	[ $rc = 1 ] && [ "$got" = "$want" ] && echo "PASS series-diff-$name" ||
		echo "FAIL series-diff-$name: exit $rc, got '$got', want '$want'"
	if [ "$name" = d ]; then	# with frame numbers kept the kernel's migrations show as NEW_FRAME: not idle
		idle=$(grep " $big " "$work/diff.out")
		[ "$idle" = "same $big 0 0 0 0 0" ] && echo "PASS series-diff-idle" ||
			echo "FAIL series-diff-idle: got '$idle'"
	fi
	"$pagemap" diff -p "$target" "$series@1" "$series@2" >"$work/skip.out"
	PAGEMAP_DIFF_WALK=1 "$pagemap" diff -p "$target" "$series@1" "$series@2" >"$work/walk.out"
	cmp -s "$work/skip.out" "$work/walk.out" && echo "PASS series-diff-walk-$name" ||
		{ echo "FAIL series-diff-walk-$name: skipping shared chunks changes the answer"; diff "$work/walk.out" "$work/skip.out" | head; }
done

# Member 2 of the --pfn drop series stores the changed slot's chunks only: the idle region's are referred to.
w1=$("$pagemap" snapshot --list "$d" | sed -n 's/^member=1 .*words_bytes=\([0-9]*\) .*/\1/p')
w2=$("$pagemap" snapshot --list "$d" | sed -n 's/^member=2 .*words_bytes=\([0-9]*\) reused=\([0-9]*\) .*/\1 \2/p')
set -- $w2
if [ -n "$w1" ] && [ -n "${1:-}" ] && [ "${2:-0}" -gt 0 ] && [ $(($1 * 4)) -lt "$w1" ]; then
	echo "PASS series-reuse: member 2 stores $1 WORDS bytes, member 1 $w1 ($2 chunks referred to)"
else
	echo "FAIL series-reuse: member 1 $w1 WORDS bytes, member 2 '$w2' (bytes, chunks reused)"
fi
[ "$("$pagemap" snapshot --list "$s" | grep -c '^member=')" = 2 ] && echo "PASS series-list" ||
	echo "FAIL series-list: $("$pagemap" snapshot --list "$s")"

# A failed append (a process that does not exist: one that has exited) leaves the series byte for byte as it was.
sh -c 'exit 0' &
gone=$!
wait "$gone"
cp "$s" "$work/s.copy"
"$pagemap" snapshot -p "$gone" --append "$s" >/dev/null 2>"$work/err"
rc=$?
[ $rc = 1 ] && cmp -s "$s" "$work/s.copy" && echo "PASS series-append-fails-intact" ||
	echo "FAIL series-append-fails-intact: exit $rc, series $(cmp -s "$s" "$work/s.copy" && echo kept || echo changed)"
out=$("$pagemap" --snapshot "$s@3" maps "$target" 2>&1)
rc=$?
[ $rc = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && echo "PASS series-no-member" ||
	echo "FAIL series-no-member: exit $rc: $out"
exit 0
