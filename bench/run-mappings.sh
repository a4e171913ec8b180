#!/bin/bash
# run-mappings.sh - `pagemap maps PID` of a process with many mappings (10,000 and 60,000 by default) against
# `cat /proc/PID/smaps` and the raw pagemap reader (pread) of the same process, interleaved in the same run
# (goal: maps <= 1.5x cat smaps at 10 k and 60 k mappings). The target is `target off 0.01 mapsN`:
# N one-page mappings whose protections alternate (the kernel cannot merge them), every other writable one touched.
# Usage: bench/run-mappings.sh   (make bench-mappings). Environment: BENCH_RUNS (rounds, default 9),
# BENCH_MAPPINGS (counts, default "10000 60000"), BENCH_BUILD, BENCH_TOOL. Medians of wall and CPU time,
# peak RSS. A benchmark reports; it never fails on a time.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-9}
counts=${BENCH_MAPPINGS:-10000 60000}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
timeit=$build/bench/timeit raw=$build/bench/rawread target=$build/bench/target
# shellcheck source=bench/common.sh
. "$here/common.sh"	# median, maximum, ratio, bench_check_programs
bench_check_programs "$tool" "$timeit" "$raw" "$target"
max=$(cat /proc/sys/vm/max_map_count)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagemap-mappings-bench.XXXXXX") || exit 1
tgt_pid=
trap '[ -n "$tgt_pid" ] && kill $tgt_pid 2>/dev/null; rm -rf "$tmp"' EXIT

labels=(cat-smaps raw-pread maps)
cmd() {
	case $1 in
	cat-smaps) echo "cat /proc/$2/smaps" ;;
	raw-pread) echo "$raw pread $2" ;;
	maps) echo "$tool maps $2" ;;
	esac
}

echo "run-mappings.sh: $(uptime)"
for n in $counts; do
	if [ "$n" -gt $((max - 100)) ]; then echo "skip $n mappings: vm.max_map_count is $max"; continue; fi
	coproc TGT { exec "$target" off 0.01 "maps$n"; }
	tgt_pid=$TGT_PID
	exec {tgt_out}<&"${TGT[0]}"
	read -r -t 120 _ <&"$tgt_out" && read -r -t 120 ready <&"$tgt_out" && [ "$ready" = ready ] ||
		{ echo "run-mappings.sh: the target did not get ready" >&2; exit 1; }
	exec {tgt_out}<&-
	rm -f "$tmp"/*.t
	for l in "${labels[@]}"; do $(cmd "$l" "$tgt_pid") >/dev/null 2>&1; done	# warm-up, untimed
	for ((i = 0; i < runs; i++)); do
		for l in "${labels[@]}"; do
			# shellcheck disable=SC2046
			"$timeit" /dev/null $(cmd "$l" "$tgt_pid") 2>/dev/null >>"$tmp/$l.t" ||
				{ echo "run-mappings.sh: $(cmd "$l" "$tgt_pid") failed" >&2; exit 1; }
		done
	done
	echo "== $(grep -c . "/proc/$tgt_pid/maps") mappings, $runs rounds interleaved"
	printf '%-10s %8s %8s %8s %9s %9s\n' ROW WALL_MS CPU_MS RSS_MIB WALL/CAT CPU/CAT
	cw=$(awk '{ print $1 }' "$tmp/cat-smaps.t" | median) cc=$(awk '{ print $3 }' "$tmp/cat-smaps.t" | median)
	for l in "${labels[@]}"; do
		w=$(awk '{ print $1 }' "$tmp/$l.t" | median) c=$(awk '{ print $3 }' "$tmp/$l.t" | median)
		r=$(awk '{ print $2 }' "$tmp/$l.t" | maximum)
		awk -v l="$l" -v w="$w" -v c="$c" -v r="$r" -v cw="$cw" -v cc="$cc" 'BEGIN {
			printf "%-10s %8.1f %8.1f %8.1f %8.2fx %8.2fx\n", l, w * 1000, c * 1000, r / 1024, w / cw, (cc > 0 ? c / cc : 0) }'
	done
	kill "$tgt_pid"; wait "$tgt_pid" 2>/dev/null; tgt_pid=
done
echo "goal (#12): maps <= 1.5x cat-smaps"
