#!/bin/bash
# run-rows.sh - many rows: `pages --each` (aligned, -r, -J; --only P), the runs of `pages`, `phys -l` and the `phys -p` list against
# page-types printing the same kind of rows, in the same run: wall, CPU, peak RSS, rows and cost per row.
# Usage: bench/run-rows.sh [GIB]    (or BENCH_GIB=GIB; default 1)
# Environment: BENCH_RUNS (default 3), BENCH_BUILD, BENCH_TOOL (see run-phys.sh), PAGE_TYPES (a page-types
# binary; otherwise built once into BENCH_BUILD/bench/page-types from KERNEL_SRC, a kernel tree, or from
# /usr/src/linux-source-*.tar.xz, Debian's linux-source package, installed with apt-get when missing (as root):
# tools/mm/page-types.c or tools/vm/page-types.c).
# Needs root (kpageflags, frame numbers). Targets (target.c, THP off): GIB GiB with a random half of the pages
# written (sparse: --each prints every page, page-types -L the present ones) and GIB GiB dense (phys -p).
# RATIO is ours / page-types (goal <= 1.0); PER_ROW compares the cost of one row (wall / rows), since
# --each also prints the pages that are not present; each-present (--only P) prints page-types' rows. phys-p-flags: the columns page-types -p -l prints (phys -p
# also reads kpagecount and kpagecgroup for COUNT and CGROUP by default; page-types does only with -M -C). Figures only: never fails on a ratio.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-1}}
runs=${BENCH_RUNS:-3}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit"
if [ "$(id -u)" != 0 ]; then
	echo "run-rows.sh: needs root (/proc/kpageflags and frame numbers)" >&2
	exit 1
fi

pt=${PAGE_TYPES:-}
[ -n "$pt" ] || pt=$(bench_page_types)
if [ -z "$pt" ] || [ ! -x "$pt" ]; then
	echo "run-rows.sh: no page-types: set PAGE_TYPES, or KERNEL_SRC to a kernel tree, or apt-get install linux-source" >&2
	exit 1
fi

bench_begin

labels=(pt-each each each-raw each-json each-present each-present-json pt-runs pages-runs pt-frames phys-l pt-proc phys-p phys-p-flags)
# BENCH_LABELS: a subset of the rows, each with its page-types peer (e.g. "pt-each each each-json").
[ -n "${BENCH_LABELS:-}" ] && read -r -a labels <<<"$BENCH_LABELS"
command_for() {
	case $1 in
	pt-each) echo "$pt -p $sparse -L -N" ;;
	each) echo "$tool pages --each $sparse" ;;
	each-raw) echo "$tool pages --each -r $sparse" ;;
	each-json) echo "$tool pages --each -J $sparse" ;;
	each-present) echo "$tool pages --each --only P $sparse" ;;	# page-types -L's rows: the present pages
	each-present-json) echo "$tool pages --each --only P -J $sparse" ;;
	pt-runs) echo "$pt -p $sparse -l -N" ;;	# runs of pages with the same flags and consecutive frames
	pages-runs) echo "$tool pages $sparse" ;;
	pt-frames) echo "$pt -l -N" ;;
	phys-l) echo "$tool phys -l" ;;
	pt-proc) echo "$pt -p $dense -l -N" ;;
	phys-p) echo "$tool phys -p $dense" ;;
	phys-p-flags) echo "$tool phys -p $dense -o START,END,PAGES,PFN,FLAGS" ;;
	esac
}
# Which page-types row each of ours is measured against.
peer_of() {
	case $1 in
	each*) echo pt-each ;;
	pages-runs) echo pt-runs ;;
	phys-l) echo pt-frames ;;
	phys-p*) echo pt-proc ;;
	esac
}

start_target off "$gib" half
start_target off "$gib"
sparse=${tgt_pids[0]} dense=${tgt_pids[1]}
echo "== targets (THP off): sparse pid $sparse ($gib GiB, a random half written), dense pid $dense ($gib GiB); $runs runs per command; page-types: $pt"
run_rounds x

printf '%-10s %9s %9s %9s %8s %9s %9s %8s  %s\n' COMMAND WALL_MS CPU_MS RSS_MIB ROWS NS_ROW RATIO PER_ROW COMMAND_LINE
for l in "${labels[@]}"; do
	medians "$l"
	# Rows: lines less the heading; in JSON the objects ("      {" first, then "},{").
	case $l in
	*json) rows=$(grep -c '{$' "$tmp/$l.out"); rows=$((rows - 1)) ;;
	*) rows=$(($(wc -l <"$tmp/$l.out") - 1)) ;;
	esac
	nsrow=$(awk -v w="$med_wall" -v n="$rows" 'BEGIN { printf "%.0f", n ? w * 1e9 / n : 0 }')
	eval "wall_${l//-/_}=$med_wall nsrow_${l//-/_}=$nsrow"
	p=$(peer_of "$l")
	if [ -n "$p" ]; then
		eval "r=\$(ratio \$med_wall \$wall_${p//-/_})x pr=\$(ratio \$nsrow \$nsrow_${p//-/_})x"
	else
		r=- pr=-
	fi
	printf '%-10s %9s %9s %9s %8s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$med_cpu")" "$(mib "$max_rss")" \
		"$rows" "$nsrow" "$r" "$pr" "$(command_for "$l" | sed "s|$build/||; s|$tmp/bin/||; s|$sparse|SPARSE|; s|$dense|DENSE|")"
done
echo "RATIO: wall time / page-types' for the same kind of rows (goal <= 1.0x); load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
