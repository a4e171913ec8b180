#!/bin/bash
# run-diff.sh - `pagemap diff A B` of two snapshots of a process with GIB GiB touched (default 8), taken around a
# write to every 16th page (copy-on-write broken: the target shares its pages with a child), against baselines
# of the same run: `pagemap pages PID` of the live process and `pagemap snapshot --list` of A then B (reads
# both files whole: every section's checksum), and the replay of one snapshot (`pagemap --snapshot A pages PID`).
# Usage: bench/run-diff.sh [GIB]    (or BENCH_GIB=GIB; default 8)
# Environment: BENCH_RUNS (default 5), BENCH_THP (default "off"), BENCH_BUILD, BENCH_TOOL (see run-phys.sh).
# Never a timed assertion: prints figures and exits 0 once it has measured (diff's exit 1, "different", is expected).
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-8}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit"
bench_begin

# diff exits 1 when the snapshots differ (they do): a wrapper turns 1 into 0 for timeit, 2 and up stay failures.
cat >"$tmp/diff.sh" <<EOS
#!/bin/sh
"$tool" diff "\$@"
[ \$? -le 1 ]
EOS
# The baseline read of both files: open (every section's checksum), list.
cat >"$tmp/list.sh" <<EOS
#!/bin/sh
"$tool" snapshot --list "\$1" && "$tool" snapshot --list "\$2"
EOS
chmod +x "$tmp/diff.sh" "$tmp/list.sh"

labels=(pages list-ab replay-pages diff)
command_for() {
	case $1 in
	pages) echo "$tool pages $2" ;;
	list-ab) echo "$tmp/list.sh $tmp/a.snap $tmp/b.snap" ;;
	replay-pages) echo "$tool --snapshot $tmp/a.snap pages $2" ;;
	diff) echo "$tmp/diff.sh $tmp/a.snap $tmp/b.snap" ;;
	esac
}

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib" share
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times
	"$tool" snapshot -p "$pid" -o "$tmp/a.snap" || exit 1
	kill -USR1 "$pid"
	waited=0
	until grep -q '^written$' "$tmp/target0.out"; do
		[ $waited -ge 6000 ] && { echo "$(basename "$0"): the target did not write" >&2; exit 1; }
		sleep 0.1
		waited=$((waited + 1))
	done
	start=$(date +%s.%N)
	"$tool" snapshot -p "$pid" -o "$tmp/b.snap" || exit 1
	snap_s=$(echo "$(date +%s.%N) - $start" | bc)
	pages=$(($(awk '/^Rss:/ { print $2 }' "/proc/$pid/smaps_rollup") / 4))
	echo "== THP $thp: target pid $pid, $gib GiB touched, every 16th page written between A and B, $pages resident 4 KiB pages, $runs runs per command"
	echo "snapshots: A $(stat -c %s "$tmp/a.snap") bytes, B $(stat -c %s "$tmp/b.snap") bytes (B took ${snap_s%???????} s)"
	run_rounds "$pid"
	printf '%-14s %9s %9s %9s %9s %8s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall"
		printf '%-14s %9s %9s %9s %9s %8s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
			"$(ms "$med_cpu")" "$(mib "$max_rss")"
	done
	echo "diff total row: $(tail -1 "$tmp/diff.out" | tr -s ' ')"
	echo
	summary+=("THP $thp, $gib GiB: diff $(ms "$wall_diff") ms; diff/pages $(ratio "$wall_diff" "$wall_pages")x, diff/list-ab $(ratio "$wall_diff" "$wall_list_ab")x, diff/replay-pages $(ratio "$wall_diff" "$wall_replay_pages")x")
	stop_targets
done
for s in "${summary[@]}"; do
	echo "$s"
done
