#!/bin/bash
# run-top.sh - the cost of `pagemap top` against procps `top` on the same machine: CPU per frame of
# `pagemap top -b -d D -n N` and `top -b -d D -n N` (whole processes, wait4), with 100, 1,000 and 5,000 idle
# processes more (sleeps this script starts); and the staleness pagemap top accepted: the worst and median age
# of a row over its frames (-J, the AGE column), against the bound its header states (--max-age).
# Usage: bench/run-top.sh   (make bench-top). Environment: BENCH_RUNS (rounds, default 3), BENCH_TOP_IDLE
# (default "100 1000 5000"), BENCH_TOP_FRAMES (N, default 8), BENCH_TOP_DELAY (D, default 1), BENCH_BUILD,
# BENCH_TOOL. A benchmark reports; it never fails on a time.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-3}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
timeit=$build/bench/timeit
frames=${BENCH_TOP_FRAMES:-8}
delay=${BENCH_TOP_DELAY:-1}
idle_counts=${BENCH_TOP_IDLE:-100 1000 5000}
[ -x "$tool" ] || { echo "run-top.sh: $tool is missing: run make" >&2; exit 1; }
[ -x "$timeit" ] || { echo "run-top.sh: $timeit is missing: run make bench-programs" >&2; exit 1; }
command -v top >/dev/null || { echo "run-top.sh: no procps top (Debian procps)" >&2; exit 1; }
# shellcheck source=bench/common.sh
. "$here/common.sh"
idle=()
stop_targets() { [ ${#idle[@]} = 0 ] || kill "${idle[@]}" 2>/dev/null; idle=(); }
bench_begin
case $runs in '' | *[!0-9]* | 0) echo "run-top.sh: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac

printf '%-7s %-12s %10s %10s %9s %9s %9s\n' IDLE ROW CPU_MS/FR WALL_S CPU/TOP AGE_MAX AGE_MED
for n in $idle_counts; do
	stop_targets
	for ((i = 0; i < n; i++)); do
		sleep 100000 &
		idle+=($!)
	done
	procs=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
	rm -f "$tmp"/pm "$tmp"/top "$tmp"/ages
	for ((r = 0; r < runs; r++)); do
		# Interleaved, the start rotating each round to cancel drift.
		for l in $( ((r % 2)) && echo "top pm" || echo "pm top"); do
			if [ "$l" = pm ]; then
				"$timeit" "$tmp/frames" "$tool" top -b -d "$delay" -n "$frames" >>"$tmp/pm" 2>/dev/null
			else
				"$timeit" /dev/null top -b -d "$delay" -n "$frames" >>"$tmp/top" 2>/dev/null
			fi
		done
		"$tool" top -J -d "$delay" -n "$frames" -o PID,AGE >"$tmp/json" 2>/dev/null
		python3 -c '
import json, sys
for line in open(sys.argv[1]):
    f = json.loads(line)
    for r in f["processes"]:
        print(r["age"])' "$tmp/json" >>"$tmp/ages"
	done
	pc=$(awk -v n="$frames" '{ print $3 / n }' "$tmp/pm" | median)
	tc=$(awk -v n="$frames" '{ print $3 / n }' "$tmp/top" | median)
	pw=$(awk '{ print $1 }' "$tmp/pm" | median)
	tw=$(awk '{ print $1 }' "$tmp/top" | median)
	amax=$(maximum <"$tmp/ages")
	amed=$(median <"$tmp/ages")
	printf '%-7s %-12s %10s %10.2f %8sx %9s %9s\n' "$n" "pagemap-top" "$(ms "$pc")" "$pw" "$(ratio "$pc" "$tc")" "$amax" "$amed"
	printf '%-7s %-12s %10s %10.2f %9s %9s %9s\n' "$n" "procps-top" "$(ms "$tc")" "$tw" "1.00x" "-" "-"
	echo "        ($procs processes in /proc; bound on a row's age: 10 s, the default --max-age)"
done
echo "goal (#35): with 1,000 idle processes more, pagemap top uses no more CPU than top, no row older than the bound"
