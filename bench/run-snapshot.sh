#!/bin/bash
# run-snapshot.sh - `pagemap snapshot -p PID` on a process with GIB GiB touched: its size per page and its time,
# against `pagemap pages PID` (text and -J) of the same target in the same run, and the replay of the snapshot.
# As root the baseline is the walk plus the frame join: `pages` plus the kpage reads (raw-frames, the
# kernel's pagemap and kpage* reads of the present frames, minus raw-pread, the pagemap read alone), beside
# `phys -p PID`, which does both.
# Usage: bench/run-snapshot.sh [GIB]    (or BENCH_GIB=GIB; default 1)
# Environment: BENCH_RUNS (default 5), BENCH_THP ("off on"), BENCH_BUILD, BENCH_TOOL (see run-phys.sh),
# BENCH_LAYOUT (dense, the default: every page written; half: a random half of the pages, see target.c),
# BENCH_TOOL_BEFORE (another build's pagemap: one snapshot of the same target with it, its size beside).
# As root the snapshot also holds the kpageflags/kpagecount/kpagecgroup words of the target's frames.
# Never a timed assertion: prints figures and exits 0 once it has measured.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-1}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off on}
layout=${BENCH_LAYOUT:-dense}
before=${BENCH_TOOL_BEFORE:-}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit
raw=$build/bench/rawread

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit" "$raw"
bench_begin

labels=(pages pages-json phys-p raw-pread raw-frames snapshot replay-pages)
[ -n "$before" ] && labels+=(snapshot-before)	# timed too, interleaved with the others
command_for() {
	case $1 in
	pages) echo "$tool pages $2" ;;
	pages-json) echo "$tool pages -J $2" ;;
	phys-p) echo "$tool phys -p $2" ;;
	raw-pread) echo "$raw pread $2" ;;
	raw-frames) echo "$raw frames $2" ;;
	snapshot) echo "$tool snapshot -p $2 -o $tmp/s.snap" ;;
	snapshot-before) echo "$before snapshot -p $2 -o $tmp/before.snap" ;;
	replay-pages) echo "$tool --snapshot $tmp/s.snap pages $2" ;;
	esac
}

# Untimed before each command: write back what the commands before it wrote (pages-json.out alone is
# 40-90 MiB on $tmp, which is a disk here, not tmpfs). A snapshot ends with fsync, which on ext4 waited
# for that writeback: 3-79 ms of wall time after 120 MiB written, 1 ms without (strace -T, 2026-12-06),
# so the label after the big outputs in the rotation (snapshot) paid for them and snapshot-before did not.
bench_pre_hook() { sync; }

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib" $([ "$layout" = half ] && echo half)
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times "$tmp/s.snap"
	pages=$(($(awk '/^Rss:/ { print $2 }' "/proc/$pid/smaps_rollup") / 4))
	echo "== THP $thp ($(awk '/^AnonHugePages:/ { print $2 " kB" }' "/proc/$pid/smaps_rollup") in huge pages), layout $layout: target pid $pid, $gib GiB mapped, $pages resident 4 KiB pages, $runs runs per command"
	run_rounds "$pid"
	snap=$(stat -c %s "$tmp/s.snap")
	txt=$(stat -c %s "$tmp/pages.out")
	json=$(stat -c %s "$tmp/pages-json.out")
	if cmp -s "$tmp/pages.out" "$tmp/replay-pages.out"; then same=yes; else same=NO; fi
	printf '%-14s %9s %9s %9s %9s %8s  %s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB OUTPUT_BYTES
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
		case $l in snapshot) b=$snap ;; snapshot-before) b=$(stat -c %s "$tmp/before.snap") ;; *) b=$(stat -c %s "$tmp/$l.out") ;; esac
		printf '%-14s %9s %9s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
			"$(ms "$med_cpu")" "$(mib "$max_rss")" "$b"
	done
	echo "sections: $("$tool" snapshot --list "$tmp/s.snap" | awk '{ n[$2]++ } END { for (t in n) printf "%s %d ", t, n[t] }')"
	# Where the bytes go: WORDS payload per file (pagemap, each kpage file), the rest of the file together
	# (a FILE row gives the declared file's own length, not its section's: the rest is size minus words).
	echo "bytes by file: $("$tool" snapshot --list "$tmp/s.snap" | awk -v size="$snap" '$2 == "WORDS" { f = $4; sub(/proc\/[0-9]+\//, "", f); w[f] += $3 + 40; s += $3 + 40 } END { for (f in w) printf "%s %d, ", f, w[f]; printf "other sections %d", size - s }')"
	if [ -n "$before" ]; then
		echo "before ($before): $(stat -c %s "$tmp/before.snap") bytes = $(awk -v a="$(stat -c %s "$tmp/before.snap")" -v p="$pages" 'BEGIN { printf "%.3f", a / p }') bytes per resident page"
	fi
	echo
	# Runs of contiguous frames (the rows of `pagemap pages`): each costs a frame number the encoding cannot
	# predict, about log2(RAM pages) bits, whatever the encoding; bytes per run say how close it comes.
	rows=$(($(wc -l <"$tmp/pages.out") - 1))
	echo "runs of contiguous frames: $rows; $(awk -v a="$snap" -v r="$rows" 'BEGIN { printf "%.2f", a / r }') snapshot bytes per run"
	join=$(awk -v p="$wall_pages" -v f="$wall_raw_frames" -v r="$wall_raw_pread" 'BEGIN { print p + f - r }')
	cjoin=$(awk -v p="$cpu_pages" -v f="$cpu_raw_frames" -v r="$cpu_raw_pread" 'BEGIN { print p + f - r }')
	summary+=("THP $thp: snapshot/(pages + kpage reads) $(ratio "$wall_snapshot" "$join")x wall, $(ratio "$cpu_snapshot" "$cjoin")x CPU; snapshot/phys-p $(ratio "$wall_snapshot" "$wall_phys_p")x wall, $(ratio "$cpu_snapshot" "$cpu_phys_p")x CPU; snapshot/raw-frames $(ratio "$wall_snapshot" "$wall_raw_frames")x wall, $(ratio "$cpu_snapshot" "$cpu_raw_frames")x CPU")
	[ -n "$before" ] && summary+=("THP $thp: before's snapshot/(pages + kpage reads) $(ratio "$wall_snapshot_before" "$join")x wall, $(ratio "$cpu_snapshot_before" "$cjoin")x CPU; snapshot/before $(ratio "$wall_snapshot" "$wall_snapshot_before")x wall, $(ratio "$cpu_snapshot" "$cpu_snapshot_before")x CPU")
	summary+=("THP $thp, layout $layout: snapshot $snap bytes = $(awk -v a="$snap" -v p="$pages" 'BEGIN { printf "%.3f", a / p }') bytes per resident page (pages: $(awk -v a="$txt" -v p="$pages" 'BEGIN { printf "%.3f", a / p }') text, $(awk -v a="$json" -v p="$pages" 'BEGIN { printf "%.3f", a / p }') JSON); time snapshot/pages $(ratio "$wall_snapshot" "$wall_pages")x, replay-pages/pages $(ratio "$wall_replay_pages" "$wall_pages")x; replayed pages output identical: $same")
	stop_targets
done
for s in "${summary[@]}"; do
	echo "$s"
done
