#!/bin/bash
# run-cost.sh - what tracking costs the tracked process (#18): the write rate of bench/hotwriter untracked, tracked
# in-process by the cheapest mechanism (the floor: userfaultfd async write-protect + PAGEMAP_SCAN from a thread),
# and tracked by `pagemap track` without and with --max-overhead, interleaved per configuration in the same run.
# BENCH_COST_SIZES="1 8" (GiB)  BENCH_COST_HOT="0.1 1 10" (% of the pages)  BENCH_COST_INTERVALS="0.1 1" (s)
# BENCH_COST_SECS=15 (measured seconds per run)  BENCH_COST_MAXOVER=10 (%)  BENCH_COST_REPS=2 (rounds per row)
# Run it under `flock /tmp/bench.lock` on a shared machine. Prints a markdown table: rates as shares of the
# untracked rate, the interval pagemap track ended on, and its own estimate of the overhead (mean over intervals).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${BENCH_BUILD:-$here/../build}
tool=$build/pagemap
writer=$build/bench/hotwriter
runs=1
tmp=$(mktemp -d /tmp/pm-bench-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$writer"
secs=${BENCH_COST_SECS:-15}
maxover=${BENCH_COST_MAXOVER:-10}

# Start the writer; $1.. its arguments. Sets wpid; waits for "ready".
start_writer() {
	"$writer" "$@" >"$tmp/w.out" 2>&1 &
	wpid=$!
	while ! grep -q '^ready' "$tmp/w.out" 2>/dev/null; do
		kill -0 "$wpid" 2>/dev/null || return 1
		sleep 0.1
	done
}

# The writer's rate, once it has exited (call it as a command, not in $(...): wait needs this shell).
wait_rate() { wait "$wpid"; rate=$(awk '/^rate/ { print $2 }' "$tmp/w.out"); }

# One run: MODE untracked|floor|track0|trackN; prints "rate [final-interval mean-estimate-% collects fault-us]".
one_run() {
	local mode=$1 gib=$2 hot=$3 iv=$4 tpid n mo
	case $mode in
	floor) start_writer "$gib" "$hot" "$secs" floor "$iv" || return ;;
	*) start_writer "$gib" "$hot" "$secs" || return ;;
	esac
	case $mode in
	untracked | floor)
		sleep 1
		kill -USR1 "$wpid"
		wait_rate
		echo "$rate"
		return ;;
	track0) mo=0 ;;
	*) mo=$maxover ;;
	esac
	"$tool" track -J --max-overhead "$mo" "$wpid" "$iv" >"$tmp/t.json" 2>"$tmp/t.err" &
	tpid=$!
	# Measure from the tracker's first interval on: armed, and (with a budget) widened once.
	n=0
	while [ ! -s "$tmp/t.json" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
	kill -USR1 "$wpid"
	wait_rate
	wait "$tpid"
	awk -v r="$rate" -F'[:,]' '{ for (i = 1; i < NF; i++) { if ($i == "\"next_interval\"") ni = $(i + 1); if ($i == "\"overhead\"") { o += $(i + 1); k++ } if ($i == "\"fault_us\"") fu = $(i + 1) } }
		END { printf "%s %s %.1f %d %s\n", r, ni, (k ? o / k : 0), k, fu }' "$tmp/t.json"
}

# mean of the numbers on stdin
mean() { awk '{ s += $1; n++ } END { printf "%.6g", (n ? s / n : 0) }'; }

reps=${BENCH_COST_REPS:-2}
bench_snapshot_tool
echo "writer: bench/hotwriter; $reps rounds per row, each round untracked, floor, track, track --max-overhead in turn;"
echo "rates are the mean over rounds, as a share of the untracked mean; the last three columns are pagemap track's own"
echo "figures with --max-overhead $maxover: its last interval, its mean estimate, the fault price it measured at start."
echo
echo "| size | hot set | interval | untracked writes/s | floor | pagemap track (its estimate) | track --max-overhead $maxover | its interval at the end | its estimate (mean) | fault cost (us) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for gib in ${BENCH_COST_SIZES:-1 8}; do
	wait_for_memory "$gib"
	for hot in ${BENCH_COST_HOT:-0.1 1 10}; do
		for iv in ${BENCH_COST_INTERVALS:-0.1 1}; do
			: >"$tmp/u" ; : >"$tmp/f" ; : >"$tmp/t0" ; : >"$tmp/tn"
			for _ in $(seq "$reps"); do
				one_run untracked "$gib" "$hot" "$iv" >>"$tmp/u"
				one_run floor "$gib" "$hot" "$iv" >>"$tmp/f"
				one_run track0 "$gib" "$hot" "$iv" >>"$tmp/t0"
				one_run trackN "$gib" "$hot" "$iv" >>"$tmp/tn"
			done
			u=$(mean <"$tmp/u")
			f=$(mean <"$tmp/f")
			t0r=$(mean <"$tmp/t0")
			t0e=$(awk '{ print ($3 == "" ? 0 : $3) }' "$tmp/t0" | mean)
			tnr=$(mean <"$tmp/tn")
			tni=$(awk '{ print ($2 == "" ? 0 : $2) }' "$tmp/tn" | mean)
			tne=$(awk '{ print ($3 == "" ? 0 : $3) }' "$tmp/tn" | mean)
			fus=$(awk '{ print ($5 == "" ? 0 : $5) }' "$tmp/tn" | mean)
			echo "| $gib GiB | $hot % | $iv s | $(awk -v u="$u" 'BEGIN { printf "%.3g", u }') | $(ratio "$f" "$u") |" \
			     "$(ratio "$t0r" "$u") ($t0e %) | $(ratio "$tnr" "$u") | $tni s | $tne % | $fus |"
		done
	done
done
