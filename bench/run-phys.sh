#!/bin/bash
# run-phys.sh - time `pagemap phys -p PID` on a process with GIB GiB touched against page-types' one-pread-per-page join.
# Usage: bench/run-phys.sh [GIB]    (or BENCH_GIB=GIB; default 4)
# Environment: BENCH_RUNS (runs per command, default 5), BENCH_THP ("off on"), BENCH_BUILD (build dir),
# BENCH_TOOL (the pagemap binary to measure). Needs root (/proc/kpageflags, visible frame numbers).
# Every command runs BENCH_RUNS times, interleaved round-robin with a rotating start, after one
# untimed warm-up round; medians of wall and CPU time; speed-ups baseline/tool measured in the same
# run. Exits 1 if the baseline and the tool do not count the same pages; never on a ratio.
# Rows: pagetypes_join per page (pagemap, kpageflags, kpagecount; with --cgroup also kpagecgroup),
# --batch (page-types' 64Ki-entry pagemap reads), --bulk (the floor: sorted PFNs read in spans),
# then pagemap phys -s -p and pagemap phys -p. Targets wait for MemAvailable (common.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-4}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off on}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
join=$build/bench/pagetypes_join
target=$build/bench/target
timeit=$build/bench/timeit
goal=10
# Flags the kernel flips as pages age (referenced, active, idle_page): they may differ between two reads.
volatile_mask=$(((1 << 2) | (1 << 6) | (1 << 25)))

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$join" "$target" "$timeit"
for thp in $thp_modes; do
	case $thp in on | off) ;; *) echo "run-phys.sh: BENCH_THP takes on and off, not '$thp'" >&2; exit 2 ;; esac
done
if [ "$(id -u)" != 0 ]; then
	echo "run-phys.sh: needs root (/proc/kpageflags and frame numbers)" >&2
	exit 1
fi

bench_begin

# The measured commands: label, then the command; PID is substituted.
labels=(pt-join pt-join-cg pt-batch pt-bulk phys-summary phys-runs)
command_for() {
	case $1 in
	pt-join) echo "$join $2" ;;
	pt-join-cg) echo "$join --cgroup $2" ;;
	pt-batch) echo "$join --batch $2" ;;
	pt-bulk) echo "$join --bulk --cgroup $2" ;;
	phys-summary) echo "$tool phys -s -p $2" ;;
	phys-runs) echo "$tool phys -p $2" ;;
	esac
}

# "FLAGS PAGES" lines of the tool's summary and of the baseline, each with its volatile bits cleared and
# summed again; and the totals. Sets join_total, tool_total; writes $tmp/join.hist and $tmp/tool.hist.
fold() {
	local f n k
	local -A h=()
	while read -r f n _; do
		[[ $f == 0x* ]] || continue
		k=$((f & ~volatile_mask))
		h[$k]=$((${h[$k]:-0} + n))
	done
	for k in "${!h[@]}"; do
		printf '0x%016x %d\n' "$k" "${h[$k]}"
	done | sort
}
compare_once() {
	"$join" "$1" >"$tmp/join.sum" || exit 1
	"$tool" phys -s -r -n -o FLAGS,PAGES -p "$1" >"$tmp/tool.sum" || exit 1
	join_total=$(awk '$1 == "total" { print $2 }' "$tmp/join.sum")
	tool_total=$(awk '$1 ~ /^0x/ { s += $2 } END { print s + 0 }' "$tmp/tool.sum")
	fold <"$tmp/join.sum" >"$tmp/join.hist"
	fold <"$tmp/tool.sum" >"$tmp/tool.hist"
	[ "$join_total" = "$tool_total" ] && cmp -s "$tmp/join.hist" "$tmp/tool.hist"
}

# Same pages, same flags: strict on the totals; the flags summary may catch pages aging between the two
# reads, so it gets three tries. The runs table must add up to the same total.
check_same_counts() {
	local try runs_total
	for try in 1 2 3; do
		compare_once "$1" && break
		[ "$join_total" != "$tool_total" ] && break
	done
	runs_total=$("$tool" phys -r -n -o PAGES -p "$1" | awk '{ s += $1 } END { print s + 0 }')
	echo "pages joined: baseline $join_total, pagemap phys -s $tool_total, pagemap phys (runs) $runs_total;" \
		"sum of map counts: baseline $(sed -n 's/.*mapcount_sum=\([0-9]*\).*/\1/p' "$tmp/join.sum")"
	if [ "$join_total" != "$tool_total" ] || [ "$join_total" != "$runs_total" ]; then
		echo "run-phys.sh: FAIL: the baseline and pagemap phys count different pages" >&2
		exit 1
	fi
	if ! cmp -s "$tmp/join.hist" "$tmp/tool.hist"; then
		echo "run-phys.sh: FAIL: the summaries by flags differ (referenced, active, idle_page ignored):" >&2
		diff "$tmp/join.hist" "$tmp/tool.hist" | sed 's/^/  /' >&2
		exit 1
	fi
	echo "summary by flags: the same $(wc -l <"$tmp/tool.hist") flag combinations with the same page counts" \
		"(referenced, active, idle_page folded: they change as pages age)"
}

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib"
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times
	anon_huge=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$pid/smaps_rollup")
	echo "== THP $thp: target pid $pid, $gib GiB touched, AnonHugePages $(mib "$anon_huge") MiB, $runs runs per command"
	run_rounds "$pid"
	check_same_counts "$pid"

	printf '%-14s %9s %9s %9s %8s %9s %8s %8s  %s\n' READER WALL_MS MIN_MS MAX_MS SPEEDUP CPU_MS SPEEDUP RSS_MIB COMMAND
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
		case $l in
		phys-*) su=$(ratio "$wall_pt_join" "$med_wall")x sc=$(ratio "$cpu_pt_join" "$med_cpu")x ;;
		*) su=- sc=- ;;
		esac
		printf '%-14s %9s %9s %9s %8s %9s %8s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" \
			"$(ms "$max_wall")" "$su" "$(ms "$med_cpu")" "$sc" "$(mib "$max_rss")" \
			"$(command_for "$l" PID | sed "s|$build/||; s|$tmp/bin/||")"
	done
	echo "pagetypes_join per run: $(sed -n 's/.*preads=\([0-9]*\).*/\1/p' "$tmp/pt-join.out") preads; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	summary+=("THP $thp: phys -s speed-up over the per-page join: $(ratio "$wall_pt_join" "$wall_phys_summary")x (goal ${goal}x; CPU time $(ratio "$cpu_pt_join" "$cpu_phys_summary")x)")
	summary+=("THP $thp: phys -s speed-up over the per-page join with kpagecgroup (the same three files): $(ratio "$wall_pt_join_cg" "$wall_phys_summary")x")
	summary+=("THP $thp: phys -s speed-up over page-types' batched pagemap + per-page frames: $(ratio "$wall_pt_batch" "$wall_phys_summary")x")
	summary+=("THP $thp: phys -s against the floor of any join (batched pagemap, sorted PFNs, spans of the three frame files): $(ratio "$wall_pt_bulk" "$wall_phys_summary")x (above 1x pagemap is faster; CPU time $(ratio "$cpu_pt_bulk" "$cpu_phys_summary")x)")
	summary+=("THP $thp: phys (runs table) speed-up over the per-page join: $(ratio "$wall_pt_join" "$wall_phys_runs")x (information)")
	stop_targets
done

for s in "${summary[@]}"; do
	echo "$s"
done
