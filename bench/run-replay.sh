#!/bin/bash
# run-replay.sh - a snapshot's replay against the kernel's walk of the same stopped process: `pagemap
# --snapshot FILE pages PID` against `pagemap pages PID`, and `--snapshot FILE features` against `features`,
# on a GIB GiB target (dense: every page written; THP off), its snapshot written by the same build first.
# Interleaved rounds (the start rotating), medians of wall and CPU time, the ratio replay/live of each round's
# pair and of the medians; the replayed pages must equal the live ones byte for byte (checked, said).
# Goal (#34): replay-pages <= 1.0x pages. Quick: about a minute at the defaults.
# Usage: bench/run-replay.sh [GIB]   (or BENCH_GIB; default 1)
# Environment: BENCH_RUNS (rounds, default 11), BENCH_THP (off; "on" for a THP target), BENCH_BUILD,
# BENCH_TOOL (see run-phys.sh), BENCH_TOOL_BEFORE (another build's pagemap: its replay of the same snapshot
# timed in the same rounds, rows before-replay-*).
# Never a timed assertion: prints figures and exits 0 once it has measured.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-1}}
runs=${BENCH_RUNS:-11}
thp=${BENCH_THP:-off}
before=${BENCH_TOOL_BEFORE:-}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit"
[ -z "$before" ] || [ -x "$before" ] || { echo "run-replay.sh: BENCH_TOOL_BEFORE $before is not executable" >&2; exit 1; }
bench_begin
# The target is stopped while measured (the same pages for every row): continue it before it is stopped.
trap 'for p in "${tgt_pids[@]}"; do kill -CONT "$p" 2>/dev/null; done; stop_targets; rm -rf "$tmp"' EXIT

labels=(pages replay-pages features replay-features)
[ -n "$before" ] && labels+=(before-replay-pages before-replay-features)
command_for() {
	case $1 in
	pages) echo "$tool pages $2" ;;
	replay-pages) echo "$tool --snapshot $tmp/s.snap pages $2" ;;
	features) echo "$tool features" ;;
	replay-features) echo "$tool --snapshot $tmp/s.snap features" ;;
	before-replay-pages) echo "$before --snapshot $tmp/s.snap pages $2" ;;
	before-replay-features) echo "$before --snapshot $tmp/s.snap features" ;;
	esac
}

start_target "$thp" "$gib"
pid=${tgt_pids[0]}
kill -STOP "$pid"
"$tool" snapshot -p "$pid" -o "$tmp/s.snap" || { echo "run-replay.sh: the snapshot failed" >&2; exit 1; }
echo "== THP $thp, target pid $pid (stopped): $gib GiB written, $(awk '/^Rss:/ { print $2 }' "/proc/$pid/smaps_rollup") kB resident; snapshot $(stat -c %s "$tmp/s.snap") bytes; $runs rounds interleaved"
run_rounds "$pid"
if cmp -s "$tmp/pages.out" "$tmp/replay-pages.out"; then same=yes; else same=NO; fi
printf '%-22s %9s %9s %9s %9s %8s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB
for l in "${labels[@]}"; do
	medians "$l"
	eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
	printf '%-22s %9s %9s %9s %9s %8s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
		"$(ms "$med_cpu")" "$(mib "$max_rss")"
done
# Each round's replay over the live row of the same round: the median of those ratios is robust to drift.
pair() { paste -d' ' <(cut -d' ' -f1 "$tmp/$1.times") <(cut -d' ' -f1 "$tmp/$2.times") | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' | median; }
echo "replay-pages / pages: $(ratio "$wall_replay_pages" "$wall_pages")x wall (medians), $(awk -v r="$(pair replay-pages pages)" 'BEGIN { printf "%.2f", r }')x (median of the rounds' pairs), $(ratio "$cpu_replay_pages" "$cpu_pages")x CPU; same output: $same (goal #34: <= 1.0x)"
echo "replay-features / features: $(ratio "$wall_replay_features" "$wall_features")x wall, $(ratio "$cpu_replay_features" "$cpu_features")x CPU"
if [ -n "$before" ]; then
	echo "before-replay-pages / pages: $(ratio "$wall_before_replay_pages" "$wall_pages")x wall (medians), $(awk -v r="$(pair before-replay-pages pages)" 'BEGIN { printf "%.2f", r }')x (pairs)"
	echo "before-replay-features: $(ms "$wall_before_replay_features") ms wall, $(ratio "$wall_before_replay_features" "$wall_features")x features"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
