#!/bin/bash
# run-cost.sh - what tracking costs the tracked process: the write rate of bench/hotwriter untracked, tracked
# in-process by the cheapest mechanism (the floor: userfaultfd async write-protect + PAGEMAP_SCAN from a thread),
# and tracked by `pagemap track` without and with --max-overhead, interleaved per configuration in the same run.
# BENCH_COST_SIZES="1 8" (GiB)  BENCH_COST_HOT="0.1 1 10" (% of the pages)  BENCH_COST_INTERVALS="0.1 1" (s)
# BENCH_COST_SECS=10 (measured seconds per run: untracked, floor, track)  BENCH_COST_MAXOVER=10 (%)
# BENCH_COST_LONG=60 (measured seconds of the --max-overhead run)  BENCH_COST_SETTLE=20 (its first part, reported
# apart: the widening; the rest is the steady state)  BENCH_COST_REPS=1 (rounds per row)
# Run it under `flock /tmp/bench.lock` on a shared machine. Prints a markdown table: rates as shares of the
# untracked rate; for --max-overhead, the share over the first SETTLE seconds and over the rest, the intervals
# pagemap track used in the rest (how many, their mean) and its estimate there (mean), and the load average.
# The steady share is also given against the median of the writer's per-second rates in the same window (its own
# speed between the fault bursts, in the same run: the untracked runs before and after may see another load).
# BENCH_COST_LOG=FILE appends each budgeted run's per-second counts and records to FILE, the other runs' rates, the
# floor's harvests (how many, how long) and the records of pagemap track without a budget.
# BENCH_COST_METHOD=NAME passes `-m NAME` to pagemap track (default: its auto choice); BENCH_COST_FLOORS="uffd" the
# floors to measure, one column each: uffd, sd-read (pagemap read + clear_refs 4), sd-scan (PAGEMAP_SCAN for
# PAGE_IS_SOFT_DIRTY + clear_refs 4). The soft-dirty guests (bench/run-cost-vm.sh) set both.
# BENCH_COST_PIN="W T": the writer runs on CPU W in every run, the floor's thread and pagemap track on CPU T (taskset).
# In a 2-vCPU guest an unpinned writer is moved between the vCPUs more often when tracked, and after a move under
# TCG it can run 5-10x slower for seconds (bench/README.md, the 6.1 row explained): pinned, a row measures the
# tracking and not those moves.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${BENCH_BUILD:-$here/../build}
tool=$build/pagemap
writer=$build/bench/hotwriter
runs=1
tmp=$(mktemp -d /tmp/pm-bench-cost.XXXXXX)
wpid=''
trap '[ -n "$wpid" ] && kill "$wpid" 2>/dev/null; rm -rf "$tmp"' EXIT	# no writer outlives the script
trap 'exit 130' INT TERM HUP
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$writer"
secs=${BENCH_COST_SECS:-10}
maxover=${BENCH_COST_MAXOVER:-10}
long=${BENCH_COST_LONG:-60}
settle=${BENCH_COST_SETTLE:-20}
floors=${BENCH_COST_FLOORS:-uffd}
method=${BENCH_COST_METHOD:+-m $BENCH_COST_METHOD}
pin_w='' pin_t=''
if [ -n "${BENCH_COST_PIN:-}" ]; then
	read -r pin_w pin_t <<<"$BENCH_COST_PIN"
	case "$pin_w/$pin_t" in
	*[!0-9/]* | /* | */) echo "run-cost.sh: BENCH_COST_PIN=\"$BENCH_COST_PIN\": want two CPU numbers, \"W T\"" >&2; exit 2 ;;
	esac
	command -v taskset >/dev/null || { echo "run-cost.sh: BENCH_COST_PIN needs taskset" >&2; exit 1; }
fi
# The prefixes that start the writer and the tracker on their CPUs (taskset execs: $! stays the program's PID).
on_w=() on_t=()
[ -n "$pin_w" ] && on_w=(taskset -c "$pin_w") on_t=(taskset -c "$pin_t")

# Start the writer; $1.. its arguments. Sets wpid; waits for "ready".
start_writer() {
	"${on_w[@]}" "$writer" "$@" >"$tmp/w.out" 2>&1 &
	wpid=$!
	while ! grep -q '^ready' "$tmp/w.out" 2>/dev/null; do
		kill -0 "$wpid" 2>/dev/null || return 1
		sleep 0.1
	done
	# The floor's thread (every thread but the writer's own, which made it before "ready") goes to the tracker's CPU.
	[ -n "$pin_t" ] && for tid in /proc/"$wpid"/task/*; do
		tid=${tid##*/}
		[ "$tid" != "$wpid" ] && { taskset -pc "$pin_t" "$tid" >/dev/null || return 1; }
	done
	return 0
}

# The writer's rate, once it has exited (call it as a command, not in $(...): wait needs this shell).
wait_rate() { wait "$wpid"; wpid=''; rate=$(awk '/^rate/ { print $2 }' "$tmp/w.out"); }	# reaped: the trap has no PID to kill

# The writer's writes per second between seconds $1 and $2 of its measure (its "at SECONDS WRITES" lines).
window_rate() {
	awk -v a="$1" -v b="$2" '$1 == "at" { w[$2] = $3 } END { printf "%.6g", ((b in w) ? (w[b] - (a > 0 ? w[a] : 0)) / (b - a) : 0) }' "$tmp/w.out"
}

# The median of the writer's per-second rates between seconds $1 and $2: in a steady state whose intervals are
# several seconds long most seconds have no tracking fault, so this is its own untracked speed in the same run.
between_rate() {
	awk -v a="$1" -v b="$2" '$1 == "at" { w[$2] = $3 } END { for (i = a + 1; i <= b; i++) if ((i in w) && ((i - 1) in w || i == 1)) d[n++] = w[i] - (i > 1 ? w[i - 1] : 0)
		for (i = 1; i < n; i++) for (j = i; j > 0 && d[j - 1] > d[j]; j--) { x = d[j]; d[j] = d[j - 1]; d[j - 1] = x }
		printf "%.6g", (n ? (n % 2 ? d[(n - 1) / 2] : (d[n / 2 - 1] + d[n / 2]) / 2) : 0) }' "$tmp/w.out"
}

# One run: MODE untracked|floor-MECH|track0|trackN.
# untracked, floor: "rate"; track0: "rate - mean-estimate-%";
# trackN: "first-rate steady-rate intervals-in-steady mean-interval-in-steady mean-estimate-in-steady-% fault-us last-interval
# median-second-rate-in-steady".
one_run() {
	local mode=$1 gib=$2 hot=$3 iv=$4 tpid n mo
	case $mode in
	floor-*) start_writer "$gib" "$hot" "$secs" floor "$iv" "${mode#floor-}" || return ;;
	trackN) start_writer "$gib" "$hot" "$long" || return ;;
	*) start_writer "$gib" "$hot" "$secs" || return ;;
	esac
	case $mode in
	untracked | floor-*)
		sleep 1
		kill -USR1 "$wpid"
		wait_rate
		[ -n "${BENCH_COST_LOG:-}" ] && echo "# $gib GiB $hot % $iv s $mode: rate $rate $(grep '^floor' "$tmp/w.out")" >>"$BENCH_COST_LOG"
		echo "$rate"
		return ;;
	track0) mo=0 ;;
	*) mo=$maxover ;;
	esac
	# shellcheck disable=SC2086 # $method is "-m NAME" or nothing
	"${on_t[@]}" "$tool" track -J $method --max-overhead "$mo" "$wpid" "$iv" >"$tmp/t.json" 2>"$tmp/t.err" &
	tpid=$!
	# Measure from the tracker's first interval on: armed, and (with a budget) widened once.
	n=0
	while [ ! -s "$tmp/t.json" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
	kill -USR1 "$wpid"
	wait_rate
	wait "$tpid"
	if [ ! -s "$tmp/t.json" ]; then	# the row's figures would read 0: say why
		echo "run-cost.sh: pagemap track wrote no record: $(tail -n 3 "$tmp/t.err" | tr '\n' ' ')" >&2
		[ -n "${BENCH_COST_LOG:-}" ] && sed 's/^/# track stderr: /' "$tmp/t.err" >>"$BENCH_COST_LOG"
	fi
	if [ "$mode" = track0 ]; then
		[ -n "${BENCH_COST_LOG:-}" ] && { echo "# $gib GiB $hot % $iv s track0: rate $rate"; sed 's/,"maps".*//' "$tmp/t.json"; } >>"$BENCH_COST_LOG"
		awk -v r="$rate" -F'[:,]' '{ for (i = 1; i < NF; i++) if ($i == "\"overhead\"") { o += $(i + 1); k++ } }
			END { printf "%s - %.1f\n", r, (k ? o / k : 0) }' "$tmp/t.json"
		return
	fi
	# The steady window in the tracker's time: from its first record + settle on.
	[ -n "${BENCH_COST_LOG:-}" ] && { echo "# $gib GiB $hot % $iv s"; grep '^at' "$tmp/w.out" | tr '\n' ' '; echo; sed 's/,"maps".*//' "$tmp/t.json"; } >>"$BENCH_COST_LOG"
	awk -v f="$(window_rate 0 "$settle")" -v s="$(window_rate "$settle" "$long")" -v settle="$settle" -v m="$(between_rate "$settle" "$long")" -F'[:,]' '
		{ for (i = 1; i < NF; i++) { v[$i] = $(i + 1) } t = v["{\"t\""]; if (NR == 1) t1 = t
		  if (v["\"fault_us\""] != "") fu = v["\"fault_us\""]; ni = v["\"next_interval\""]
		  if (t - v["\"interval\""] >= t1 + settle - 1e-9) { k++; iv += v["\"interval\""]; o += v["\"overhead\""] } }
		END { printf "%s %s %d %.3g %.1f %s %s %s\n", f, s, k, (k ? iv / k : 0), (k ? o / k : 0), fu, ni, m }' "$tmp/t.json"
}

# mean of the numbers on stdin
mean() { awk '{ s += $1; n++ } END { printf "%.6g", (n ? s / n : 0) }'; }

reps=${BENCH_COST_REPS:-1}
bench_snapshot_tool
echo "writer: bench/hotwriter; $reps round(s) per row, each round untracked, floor ($floors), untracked, track, untracked, track"
echo "--max-overhead $maxover, untracked; rates are the mean over rounds, as a share of the untracked mean ($secs s measured; $long s with the"
echo "budget: its first $settle s apart, the widening; then the steady state, with the intervals that lay wholly in it)."
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at start"
[ -n "$pin_w" ] && echo "pinned: the writer on CPU $pin_w, the floor's thread and pagemap track on CPU $pin_t"
echo
[ -n "$method" ] && echo "pagemap track $method"
fcols=$(for fl in $floors; do [ "$floors" = uffd ] && printf ' floor |' || printf ' floor (%s) |' "$fl"; done)
echo "| size | hot set | interval | untracked writes/s (min-max) |$fcols pagemap track (its estimate) | --max-overhead $maxover: first $settle s | steady ($settle-$long s) | steady, against its median second there | intervals in it (mean) | its estimate there | last next interval | fault cost (us) | load |"
echo "|---|---|---|---|$(for fl in $floors; do printf -- '---|'; done)---|---|---|---|---|---|---|---|---|"
for gib in ${BENCH_COST_SIZES:-1 8}; do
	wait_for_memory "$gib"
	for hot in ${BENCH_COST_HOT:-0.1 1 10}; do
		for iv in ${BENCH_COST_INTERVALS:-0.1 1}; do
			: >"$tmp/u" ; : >"$tmp/t0" ; : >"$tmp/tn"
			for fl in $floors; do : >"$tmp/f-$fl"; done
			# The untracked rate moves with the machine's load: measured between every two tracked runs.
			for _ in $(seq "$reps"); do
				one_run untracked "$gib" "$hot" "$iv" >>"$tmp/u"
				for fl in $floors; do one_run "floor-$fl" "$gib" "$hot" "$iv" >>"$tmp/f-$fl"; done
				one_run untracked "$gib" "$hot" "$iv" >>"$tmp/u"
				one_run track0 "$gib" "$hot" "$iv" >>"$tmp/t0"
				one_run untracked "$gib" "$hot" "$iv" >>"$tmp/u"
				one_run trackN "$gib" "$hot" "$iv" >>"$tmp/tn"
				one_run untracked "$gib" "$hot" "$iv" >>"$tmp/u"
			done
			u=$(mean <"$tmp/u")
			fr=$(for fl in $floors; do printf ' %s |' "$(ratio "$(mean <"$tmp/f-$fl")" "$u")"; done)
			t0r=$(mean <"$tmp/t0")
			t0e=$(awk '{ print ($3 == "" ? 0 : $3) }' "$tmp/t0" | mean)
			col() { awk -v c="$1" '{ print ($c == "" ? 0 : $c) }' "$tmp/tn" | mean; }
			us=$(awk '{ v = $1 + 0; if (NR == 1 || v < lo) lo = v; if (v > hi) hi = v } END { printf "%.2g-%.2g", lo, hi }' "$tmp/u")
			echo "| $gib GiB | $hot % | $iv s | $(awk -v u="$u" 'BEGIN { printf "%.3g", u }') ($us) |$fr" \
			     "$(ratio "$t0r" "$u") ($t0e %) | $(ratio "$(col 1)" "$u") | **$(ratio "$(col 2)" "$u")** | $(ratio "$(col 2)" "$(col 8)") |" \
			     "$(col 3) ($(col 4) s) | $(col 5) % | $(col 7) s | $(col 6) | $(cut -d' ' -f1 /proc/loadavg) |"
		done
	done
done
