#!/bin/bash
# run-render.sh - `pagemap render PID` (svg, html; json, ansi on request) on a process with GIB GiB touched,
# against `pagemap maps PID` (one walk) of the same target in the same run: the time ratio (goal, issue #34:
# html and svg within 1.15x of maps on the 4 GiB THP-off target) and the output sizes (goal: SVG <= 1 MiB,
# HTML <= 2 MiB).
# Then, on request, a JVM-sized row: the same GiB cut into hundreds of mappings (target ... jvm), maps against
# render svg and html and the colourings by value (-c class, cgroup, node: one kpage read or node lookup per frame).
# Usage: bench/run-render.sh [GIB]    (or BENCH_GIB=GIB; default 4)
# Environment: BENCH_RUNS (default 9), BENCH_THP (default "off"; "off on" for both), BENCH_FORMATS (default
# "svg html"; "svg html json ansi" for all), BENCH_JVM (default 0; 1 adds the JVM-sized row), BENCH_BASE_TOOL
# (another build's pagemap, e.g. from before a change: its render html and svg timed in the same rounds, rows
# base-html and base-svg), BENCH_BUILD, BENCH_TOOL (see run-phys.sh).
# The default run (9 rounds of maps, svg, html on one 4 GiB target) takes about a minute.
# Never a timed assertion: prints figures and exits 0 once it has measured.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-4}}
runs=${BENCH_RUNS:-9}
thp_modes=${BENCH_THP:-off}
base=${BENCH_BASE_TOOL:-}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit" ${base:+"$base"}
bench_begin

labels=(maps)
for f in ${BENCH_FORMATS:-svg html}; do
	labels+=("render-$f")
done
[ -z "$base" ] || labels+=(base-svg base-html)
command_for() {
	case $1 in
	maps) echo "$tool maps $2" ;;
	base-*) echo "$base render -f ${1#base-} $2" ;;
	render-by-*) echo "$tool render -f svg -c ${1#render-by-} $2" ;;
	render-*) echo "$tool render -f ${1#render-} $2" ;;
	esac
}

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib"
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times
	echo "== THP $thp: target pid $pid, $gib GiB touched, $(wc -l <"/proc/$pid/maps") mappings, $runs runs per command"
	run_rounds "$pid"
	printf '%-12s %9s %9s %9s %9s %8s  %s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB OUTPUT_BYTES
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
		printf '%-12s %9s %9s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
			"$(ms "$med_cpu")" "$(mib "$max_rss")" "$(stat -c %s "$tmp/$l.out")"
	done
	echo
	line="THP $thp, $(wc -l <"/proc/$pid/maps") mappings: render/maps (wall medians)"
	for l in "${labels[@]}"; do
		[ "$l" = maps ] || line+=" ${l#render-} $(ratio "$(eval echo "\$wall_${l//-/_}")" "$wall_maps")x"
	done
	line+=" (CPU:"
	for l in "${labels[@]}"; do
		[ "$l" = maps ] || line+=" ${l#render-} $(ratio "$(eval echo "\$cpu_${l//-/_}")" "$cpu_maps")x"
	done
	line+=")"
	summary+=("$line (goal <= 1.15x); maps $(ms "$wall_maps") ms; load $(cut -d' ' -f1-3 /proc/loadavg)")
	stop_targets
done
if [ "${BENCH_JVM:-0}" = 1 ]; then
	labels=(maps render-svg render-html render-by-class render-by-cgroup render-by-node)
	start_target off "$gib" jvm
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times
	echo "== JVM-sized: target pid $pid, $gib GiB touched, $(wc -l <"/proc/$pid/maps") mappings, $runs runs per command"
	run_rounds "$pid"
	printf '%-16s %9s %9s %9s %9s %8s  %s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB OUTPUT_BYTES
	line="JVM-sized ($(wc -l <"/proc/$pid/maps") mappings): render/maps"
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall"
		printf '%-16s %9s %9s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
			"$(ms "$med_cpu")" "$(mib "$max_rss")" "$(stat -c %s "$tmp/$l.out")"
		[ "$l" = maps ] || line+=" ${l#render-} $(ratio "$med_wall" "$wall_maps")x ($(stat -c %s "$tmp/$l.out") B)"
	done
	echo
	summary+=("$line")
	stop_targets
fi
for s in "${summary[@]}"; do
	echo "$s"
done
