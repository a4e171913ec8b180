#!/bin/bash
# run-sparse.sh - the shape that stresses a walk most: GIB GiB mapped (default 16), one 4 KiB page in 16 written
# (each present page its own run; THP off for the mapping by MADV_NOHUGEPAGE), and the three commands of it
# against their baselines, interleaved in the same rounds:
#   maps PID (default columns)                               against the raw pread of the pagemap (rawread pread):
#                                                            the fastest reader that can give EXCLUSIVE
#   maps PID -o START,END,SIZE,PRESENT,SWAPPED,FILE,THP      against one raw PAGEMAP_SCAN pass with the tool's mask
#                                                            (rawread scan): columns a scan answers
#   pages PID                                                against page-types -p PID -l (the kernel's tools/mm)
# Goals: 1.15x, 1.15x, 1.0x (wall-time medians; CPU time too, steadier on a shared machine).
# Usage: bench/run-sparse.sh [GIB]    (make bench-sparse). Environment: BENCH_RUNS (rounds, default 9),
# BENCH_BUILD, BENCH_TOOL (the pagemap measured), BENCH_BASE_TOOL (another build, e.g. main's: its three
# commands join the rounds as base-*), BENCH_ROWS (some of maps, maps-scan, pages, e.g. "pages": only these
# rows, their baselines and base-* rows are timed and compared, a third of the time for pages alone),
# PAGE_TYPES / KERNEL_SRC (see bench_page_types in common.sh).
# Before timing, the outputs of maps and pages are compared across PAGEMAP_BACKEND=pread, =scan and the default
# (they must be the same: exit 1 otherwise). Figures only: never fails on a ratio.
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-16}}
runs=${BENCH_RUNS:-9}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
base=${BENCH_BASE_TOOL:-}
raw=$build/bench/rawread
target=$build/bench/target
timeit=$build/bench/timeit
scan_cols=START,END,SIZE,PRESENT,SWAPPED,FILE,THP
stride=16

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$raw" "$target" "$timeit"
[ -z "$base" ] || [ -x "$base" ] || { echo "run-sparse.sh: BENCH_BASE_TOOL $base is not executable" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	echo "run-sparse.sh: needs root (page-types reads kpageflags; frames show the tool's pread reader huge pages)" >&2
	exit 1
fi
pt=${PAGE_TYPES:-}
[ -n "$pt" ] || pt=$(bench_page_types)
if [ -z "$pt" ] || [ ! -x "$pt" ]; then
	echo "run-sparse.sh: no page-types: set PAGE_TYPES, or KERNEL_SRC to a kernel tree, or apt-get install linux-source" >&2
	exit 1
fi

bench_begin
if [ -n "$base" ]; then
	bench_copy_tool "$base" "$tmp/base"
	base=$tmp/base/$(basename "$base")
fi

rows=${BENCH_ROWS:-maps maps-scan pages}
labels=() blabels=()
for row in $rows; do
	case $row in
	maps) labels+=(raw-pread maps) ;;
	maps-scan) labels+=(raw-scan maps-scan) ;;
	pages) labels+=(pt-runs pages) ;;
	*) echo "run-sparse.sh: BENCH_ROWS: no row '$row' (maps, maps-scan, pages)" >&2; exit 1 ;;
	esac
	[ -z "$base" ] || blabels+=("base-$row")
done
[ -z "$base" ] || labels+=("${blabels[@]}")
command_for() {
	case $1 in
	raw-pread) echo "$raw pread $pid" ;;
	maps) echo "$tool maps $pid" ;;
	raw-scan) echo "$raw scan $pid" ;;
	maps-scan) echo "$tool maps -o $scan_cols $pid" ;;
	pt-runs) echo "$pt -p $pid -l -N" ;;
	pages) echo "$tool pages $pid" ;;
	base-maps) echo "$base maps $pid" ;;
	base-maps-scan) echo "$base maps -o $scan_cols $pid" ;;
	base-pages) echo "$base pages $pid" ;;
	esac
}
# The baseline each row is measured against.
peer_of() {
	case $1 in
	maps | base-maps) echo raw-pread ;;
	maps-scan | base-maps-scan) echo raw-scan ;;
	pages | base-pages) echo pt-runs ;;
	esac
}
goal_of() {
	case $1 in
	maps | maps-scan) echo 1.15 ;;
	pages) echo 1.0 ;;
	esac
}

# Resident: one page in $stride, and the page tables.
tgt_resident_gib=$(awk -v g="$gib" -v s="$stride" 'BEGIN { printf "%.2f", g / s + g / 512 }')
start_target off "$gib" "sparse$stride"
pid=${tgt_pids[0]}
echo "== target pid $pid: $gib GiB mapped, one 4 KiB page in $stride written, THP off (MADV_NOHUGEPAGE);" \
	"$(awk '/^Rss:/ { r = $2 } /^AnonHugePages:/ { h = $2 } END { printf "Rss %.1f MiB, AnonHugePages %.1f MiB", r / 1024, h / 1024 }' "/proc/$pid/smaps_rollup");" \
	"$runs rounds; page-types: $pt"

# The same answer whichever reader reads a mapping (the default chooses per mapping).
same=0
cmds=()
for row in $rows; do
	case $row in
	maps) cmds+=("maps") ;;
	maps-scan) cmds+=("maps -o $scan_cols,EXCLUSIVE,ZERO,GUARD") ;;
	pages) cmds+=("pages") ;;
	esac
done
for cmd in "${cmds[@]}"; do
	# shellcheck disable=SC2086 # split on purpose
	for b in pread scan auto; do
		PAGEMAP_BACKEND=$b "$tool" $cmd "$pid" >"$tmp/same.$b" 2>/dev/null || { echo "run-sparse.sh: $cmd with PAGEMAP_BACKEND=$b failed" >&2; exit 1; }
	done
	if ! cmp -s "$tmp/same.pread" "$tmp/same.scan" || ! cmp -s "$tmp/same.pread" "$tmp/same.auto"; then
		echo "run-sparse.sh: '$cmd' differs between PAGEMAP_BACKEND=pread, scan and the default" >&2
		diff "$tmp/same.pread" "$tmp/same.auto" | head -n 5 >&2
		same=1
	fi
done
[ $same = 0 ] || exit 1
echo "$(printf '%s; ' "${cmds[@]}")the same output by pread, by the scan and by default"

run_rounds x
printf '%-15s %9s %9s %9s %9s %8s %8s %6s  %s\n' ROW WALL_MS MIN_MS CPU_MS RSS_MIB RATIO CPU_RAT GOAL COMMAND
for l in "${labels[@]}"; do
	medians "$l"
	eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
	p=$(peer_of "$l")
	if [ -n "$p" ]; then
		eval "r=\$(ratio \$med_wall \$wall_${p//-/_})x c=\$(ratio \$med_cpu \$cpu_${p//-/_})x"
	else
		r=- c=-
	fi
	g=$(goal_of "$l")
	printf '%-15s %9s %9s %9s %9s %8s %8s %6s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$med_cpu")" \
		"$(mib "$max_rss")" "$r" "$c" "${g:+${g}x}" "$(command_for "$l" | sed "s|$build/||; s|$tmp/bin/||; s|$tmp/base/|base:|; s|$pid|PID|")"
done
echo "RATIO: wall-time median over the baseline's in the same rounds; CPU_RAT the same in CPU time (user + system)."
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
