#!/bin/bash
# run-tiny.sh - the fixed cost of one command on a small process: `pagemap maps PID` and `pagemap --version`
# against `cat /proc/PID/smaps` and /bin/true, interleaved in the same run (goal: a tiny process
# <= 1.3x `cat smaps`; no fork, no huge-page fault, no library the command does not use).
# Usage: bench/run-tiny.sh   (make bench-tiny). Environment: BENCH_RUNS (rounds, default 200),
# BENCH_BUILD (build dir), BENCH_TOOL (the pagemap binary), BENCH_BASE_TOOL (another build's pagemap,
# e.g. main's, timed in the same rounds: rows base-version and base-maps). Medians of wall and CPU time.
# A benchmark reports; it never fails on a time.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-200}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
base=${BENCH_BASE_TOOL:-}
timeit=$build/bench/timeit
case $runs in '' | *[!0-9]* | 0) echo "run-tiny.sh: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
[ -x "$tool" ] || { echo "run-tiny.sh: $tool is missing: run make" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base" ] || { echo "run-tiny.sh: BENCH_BASE_TOOL $base is not executable" >&2; exit 1; }
[ -x "$timeit" ] || { echo "run-tiny.sh: $timeit is missing: run make bench-programs" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagemap-tiny-bench.XXXXXX") || exit 1
sleep 100000 &	# the small process: a static-size sleep(1), about 25 mappings
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=bench/common.sh
. "$here/common.sh"	# median

labels=(true cat-smaps version maps)
[ -z "$base" ] || labels+=(base-version base-maps)
cmd() {
	case $1 in
	true) echo /bin/true ;;
	cat-smaps) echo "cat /proc/$pid/smaps" ;;
	version) echo "$tool --version" ;;
	maps) echo "$tool maps $pid" ;;
	base-version) echo "$base --version" ;;
	base-maps) echo "$base maps $pid" ;;
	esac
}
for l in "${labels[@]}"; do $(cmd "$l") >/dev/null 2>&1; done	# warm-up, untimed
for ((i = 0; i < runs; i++)); do
	for l in "${labels[@]}"; do
		# shellcheck disable=SC2046
		"$timeit" /dev/null $(cmd "$l") 2>/dev/null >>"$tmp/$l" || { echo "run-tiny.sh: $(cmd "$l") failed" >&2; exit 1; }
	done
done
echo "run-tiny.sh: $(grep -c . "/proc/$pid/maps") mappings, $runs rounds interleaved"
printf '%-12s %8s %8s %9s %9s\n' ROW WALL_MS CPU_MS WALL/CAT CPU/CAT
cw=$(awk '{ print $1 }' "$tmp/cat-smaps" | median)
cc=$(awk '{ print $3 }' "$tmp/cat-smaps" | median)
for l in "${labels[@]}"; do
	w=$(awk '{ print $1 }' "$tmp/$l" | median)
	c=$(awk '{ print $3 }' "$tmp/$l" | median)
	awk -v l="$l" -v w="$w" -v c="$c" -v cw="$cw" -v cc="$cc" \
		'BEGIN { printf "%-12s %8.2f %8.2f %8.2fx %8.2fx\n", l, w * 1000, c * 1000, w / cw, (cc > 0 ? c / cc : 0) }'
done
echo "goal (#12): maps <= 1.3x cat-smaps"
