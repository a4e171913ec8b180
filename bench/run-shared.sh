#!/bin/bash
# run-shared.sh - many processes sharing one set of pages: `pagemap shared`, `pagemap ps -p` and the fleet's slow tier
# (`export --pss`, one group per process: frames shared across groups) over N
# fork-shared processes against smem -P and the floor of a frame join, in the same run.
# Usage: bench/run-shared.sh
# Environment: BENCH_RUNS (runs per command, default 3), BENCH_BUILD (build dir), BENCH_TOOL (the pagemap
# binary), BENCH_SHARED_PROCS (processes, default 50), BENCH_GIB (GiB written by the first and shared
# copy-on-write by the others, default 1), BENCH_THP (off or on, default off), BENCH_SHARED_BASE (another
# pagemap binary, e.g. a copy of main's build, timed as `shared-base` in the same rounds). Needs root (frame
# numbers, kpagecount; smem is installed by tools/install-deps).
# The floor is bench/pagetypes_join --bulk once per process: pagemap in 64Ki batches, the frames sorted
# and the frame files read once per span, with nothing kept across processes; `shared` must also join the
# processes' frames with each other. Medians of wall and CPU time, peak RSS; a benchmark never fails on a ratio.
set -u

here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-3}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit
join=$build/bench/pagetypes_join
procs=${BENCH_SHARED_PROCS:-50}
gib=${BENCH_GIB:-1}
thp=${BENCH_THP:-off}
base=${BENCH_SHARED_BASE:-}

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit" "$join"
case $procs in '' | *[!0-9]* | 0 | 1) echo "run-shared.sh: BENCH_SHARED_PROCS must be a number above 1" >&2; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then
	echo "run-shared.sh: needs root (frame numbers and /proc/kpagecount)" >&2
	exit 1
fi
smem=
"$here/../tools/install-deps" smem >/dev/null 2>&1 && smem=$(command -v smem)
bench_begin

start_target "$thp" "$gib" "share$((procs - 1))"
pids="${tgt_pids[0]} $(sed -n 3p "$tmp/target0.out")"
list=$(tr ' ' ',' <<<"$pids")
echo "== $procs processes sharing $gib GiB (THP $thp) copy-on-write: $list"
# The floor as one command line: a script that joins each process in turn.
printf '#!/bin/sh\nfor p in %s; do "%s" --bulk "$p" >/dev/null || exit 1; done\n' "$pids" "$join" >"$tmp/floor"
chmod +x "$tmp/floor"

labels=(floor shared ps ps-exact export)
[ -n "$smem" ] && labels+=(smem)
if [ -n "$base" ]; then	# copied like the tool, with its library, so a rebuild cannot change it mid-run
	bench_copy_tool "$base" "$tmp/base"
	labels+=(shared-base export-base)
fi
command_for() {
	case $1 in
	floor) echo "$tmp/floor" ;;
	shared) echo "$tool shared -b $pids" ;;
	shared-base) echo "$tmp/base/pagemap shared -b $pids" ;;
	ps) echo "$tool ps -b -p $list" ;;
	ps-exact) echo "$tool ps --exact -b -p $list" ;;
	smem) echo "$smem -H -P ^$target" ;;
	# The fleet's slow tier, one group per process: every process of the machine, the N sharing ones
	# most of it, their frames joined across groups (pagemap_group_shared_other_groups_bytes).
	export) echo "$tool export --pss --group-by pid --max-series 100000" ;;
	export-base) echo "$tmp/base/pagemap export --pss --group-by pid --max-series 100000" ;;
	esac
}
run_rounds -

printf '%-10s %9s %9s %9s %8s %8s %9s  %s\n' READER WALL_MS MIN_MS CPU_MS VS_FLOOR VS_SMEM RSS_MIB COMMAND
medians floor
floor_wall=$med_wall
smem_wall=
[ -n "$smem" ] && { medians smem; smem_wall=$med_wall; }
for l in "${labels[@]}"; do
	medians "$l"
	printf '%-10s %9s %9s %9s %7sx %7s %9s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$med_cpu")" \
		"$(ratio "$med_wall" "$floor_wall")" "${smem_wall:+$(ratio "$med_wall" "$smem_wall")x}" "$(mib "$max_rss")" \
		"$(command_for "$l" - | cut -c1-60 | sed "s|$tmp/bin/||; s|$tmp/base/|base/|; s|$build/||")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "totals: shared says $(awk '$1 == "total" { print; exit }' "$tmp/shared.out" | tr -s ' ' | cut -c1-120)"
# Compared with runs of blanks squeezed: a streamed aligned table sizes its columns from its first batch.
[ -n "$base" ] && { cmp -s <(tr -s ' ' <"$tmp/shared.out") <(tr -s ' ' <"$tmp/shared-base.out") &&
	echo "        shared-base's output is the same (blanks squeezed)" ||
	echo "        shared-base's output DIFFERS (pages moved between the runs, or a bug)"; }
xshared() {	# the N processes' bytes shared with other groups, from one export's output
	grep '^pagemap_group_shared_other_groups_bytes' "$1" | grep -E "group=\"($(tr ' ' '|' <<<"$pids"))\"" | sort
}
[ -n "$base" ] && { cmp -s <(xshared "$tmp/export.out") <(xshared "$tmp/export-base.out") &&
	echo "        export-base gives the same bytes shared with other groups" ||
	echo "        export-base's bytes shared with other groups DIFFER (pages moved, processes came and went, or a bug)"; }
echo "        ps PSS total $(tail -n 1 "$tmp/ps.out" | tr -s ' ' | cut -c1-100)"
