#!/bin/bash
# run-snap-tiny.sh - the fixed cost of a snapshot: `pagemap snapshot -p PID -o FILE` of a `sleep` against
# `pagemap maps PID` of it, interleaved in the same run (goal: snapshot <= 2x maps). Wall time, CPU time
# (user + system, which a busy machine disturbs less) and peak RSS, medians over the rounds.
# Usage: bench/run-snap-tiny.sh   (make bench-snap-tiny). Environment: BENCH_RUNS (rounds, default 60),
# BENCH_BUILD (build dir), BENCH_TOOL (the pagemap binary), BENCH_BASE_TOOL (another build's pagemap, e.g.
# main's: its snapshot timed in the same rounds, row base-snapshot). The snapshot goes to a directory of
# BENCH_DIR (default: TMPDIR or /tmp), as a user would write it: fsync and rename included.
# A benchmark reports; it never fails on a time.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-60}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
base=${BENCH_BASE_TOOL:-}
timeit=$build/bench/timeit
case $runs in '' | *[!0-9]* | 0) echo "run-snap-tiny.sh: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
[ -x "$tool" ] || { echo "run-snap-tiny.sh: $tool is missing: run make" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base" ] || { echo "run-snap-tiny.sh: BENCH_BASE_TOOL $base is not executable" >&2; exit 1; }
[ -x "$timeit" ] || { echo "run-snap-tiny.sh: $timeit is missing: run make bench-programs" >&2; exit 1; }

tmp=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/pagemap-snap-tiny.XXXXXX") || exit 1
sleep 100000 &	# the small process
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=bench/common.sh
. "$here/common.sh"	# median

labels=(maps snapshot)
[ -z "$base" ] || labels+=(base-snapshot)
cmd() {
	case $1 in
	maps) echo "$tool maps $pid" ;;
	snapshot) echo "$tool snapshot -p $pid -o $tmp/s.pms" ;;
	base-snapshot) echo "$base snapshot -p $pid -o $tmp/b.pms" ;;
	esac
}
for l in "${labels[@]}"; do $(cmd "$l") >/dev/null 2>&1; done	# warm-up, untimed
for ((i = 0; i < runs; i++)); do
	for l in "${labels[@]}"; do
		# shellcheck disable=SC2046
		"$timeit" /dev/null $(cmd "$l") 2>/dev/null >>"$tmp/$l" || { echo "run-snap-tiny.sh: $(cmd "$l") failed" >&2; exit 1; }
	done
done
echo "run-snap-tiny.sh: sleep with $(grep -c . "/proc/$pid/maps") mappings, $runs rounds interleaved; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %8s %8s %8s %10s %9s\n' ROW WALL_MS CPU_MS RSS_KB WALL/MAPS CPU/MAPS
mw=$(awk '{ print $1 }' "$tmp/maps" | median)
mc=$(awk '{ print $3 }' "$tmp/maps" | median)
for l in "${labels[@]}"; do
	w=$(awk '{ print $1 }' "$tmp/$l" | median)
	c=$(awk '{ print $3 }' "$tmp/$l" | median)
	k=$(awk '{ print $2 }' "$tmp/$l" | median)
	awk -v l="$l" -v w="$w" -v c="$c" -v k="$k" -v mw="$mw" -v mc="$mc" \
		'BEGIN { printf "%-14s %8.2f %8.2f %8d %9.2fx %8.2fx\n", l, w * 1000, c * 1000, k, w / mw, (mc > 0 ? c / mc : 0) }'
done
echo "goal (#34): snapshot <= 2x maps"
