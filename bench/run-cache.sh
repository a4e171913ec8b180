#!/bin/bash
# run-cache.sh - time `pagemap cache --top N DIR` over a synthetic tree of 100k files on the cachestat path, against fincore (mincore) over the same files.
# Usage: bench/run-cache.sh
# Needs build/bench/timeit (make bench-programs; `make bench-cache` builds it).
# Environment: BENCH_RUNS (runs per command, default 5), BENCH_BUILD (build dir), BENCH_TOOL (the pagemap binary),
# BENCH_CACHE_FILES (files, default 100000), BENCH_CACHE_DIR (where the tree goes, default a temporary directory
# under TMPDIR or /tmp; removed afterwards). Each file holds 1 KiB (one page of cache); every 10th is evicted
# again with dd's fadvise(DONTNEED) so the tree has both states. Goal: <= 1 s on the cachestat path.
# A benchmark reports; it never fails on a time. It checks that the tree's page cache is the same after the
# runs as before (cachestat does not perturb what it measures) and that fincore and pagemap agree.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-5}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
nfiles=${BENCH_CACHE_FILES:-100000}
case $runs in '' | *[!0-9]* | 0) echo "run-cache.sh: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
case $nfiles in '' | *[!0-9]* | 0) echo "run-cache.sh: BENCH_CACHE_FILES must be a positive integer" >&2; exit 2 ;; esac
[ -x "$tool" ] || { echo "run-cache.sh: $tool is missing: run make" >&2; exit 1; }

tmp=$(mktemp -d "${BENCH_CACHE_DIR:-${TMPDIR:-/tmp}}/pagemap-cache-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

echo "run-cache.sh: making $nfiles files of 1 KiB in 100 directories under $tree"
t0=$(now)
python3 - "$tree" "$nfiles" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 1024
for d in range(100):
    os.makedirs(f"{root}/d{d:02}", exist_ok=True)
path = lambda i: f"{root}/d{i % 100:02}/f{i:06}"
for i in range(n):
    with open(path(i), "wb") as f:
        f.write(data)
# DONTNEED drops only clean pages: one sync for the tree, not one fsync per evicted file.
os.sync()
for i in range(0, n, 10):
    fd = os.open(path(i), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
echo "run-cache.sh: made in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"

before=$("$tool" cache -b -r -n -o CACHED,EVICTED,DIRTY "$tree" | awk '{ c += $1 } END { print c }')
timeit=$build/bench/timeit
[ -x "$timeit" ] || { echo "run-cache.sh: $timeit is missing: run make bench-programs" >&2; exit 1; }
# Prints "WALL_MS CPU_MS" (medians) of "$@" after one untimed warm-up. CPU time (user + system) is what a
# busy shared machine disturbs least; wall time is the goal's measure.
time_cmd() {
	local i
	"$@" >/dev/null 2>&1
	for ((i = 0; i < runs; i++)); do
		"$timeit" /dev/null "$@" 2>/dev/null || { echo "run-cache.sh: $* failed" >&2; return 1; }
	done >"$tmp/times"
	echo "$(awk '{ print $1 * 1000 }' "$tmp/times" | median) $(awk '{ print $3 * 1000 }' "$tmp/times" | median)"
}
report() {	# LABEL "WALL CPU"
	set -- "$1" $2
	printf '%s: median wall %.0f ms, CPU %.0f ms over %d runs\n' "$1" "$2" "$3" "$runs"
}
report "pagemap cache --top 20 (cachestat, $nfiles files)" "$(time_cmd "$tool" cache --top 20 "$tree")"
if command -v fincore >/dev/null; then
	report "find | xargs fincore (mincore, util-linux $(fincore --version | awk '{ print $NF }'))" \
		"$(time_cmd sh -c "find '$tree' -type f -print0 | xargs -0 fincore -b -n -o RES")"
	a=$(find "$tree" -type f -print0 | xargs -0 fincore -b -n -o RES | awk '{ s += $1 } END { print s }')
	echo "cached bytes: pagemap $before, fincore $a$([ "$a" = "$before" ] && echo " (equal)" || echo " (DIFFER: the cache changed between the two, or a disagreement)")"
fi
echo "uptime: $(uptime)"
after=$("$tool" cache -b -r -n -o CACHED,EVICTED,DIRTY "$tree" | awk '{ c += $1 } END { print c }')
echo "tree's cached bytes before the runs $before, after $after$([ "$before" = "$after" ] && echo " (unperturbed)" || echo " (CHANGED: the machine's reclaim, or a perturbation)")"
