#!/bin/bash
# run-numa.sh - time `pagemap numa PID` by each source on a process with GIB GiB touched, against
# reading numa_maps (the kernel's own per-node counts) and numastat -p (numactl's per-process view).
# Usage: bench/run-numa.sh [GIB]    (or BENCH_GIB=GIB; default 4)
# Environment: BENCH_RUNS (runs per command, default 5), BENCH_THP ("off on"), BENCH_BUILD (build dir),
# BENCH_TOOL (the pagemap binary to measure). Root for the frames source; numastat (Debian numactl)
# is timed when installed. Every command runs BENCH_RUNS times, interleaved round-robin with a rotating
# start, after one untimed warm-up round; medians of wall and CPU time; ratios against cat numa_maps
# measured in the same run. Exits 1 if a source's bytes per node differ from numa_maps'; never on a ratio.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-4}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off on}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit"
for thp in $thp_modes; do
	case $thp in on | off) ;; *) echo "run-numa.sh: BENCH_THP takes on and off, not '$thp'" >&2; exit 2 ;; esac
done
if [ "$(id -u)" != 0 ]; then
	echo "run-numa.sh: needs root (the frames source reads frame numbers)" >&2
	exit 1
fi

bench_begin

labels=(numa_maps-cat numa-numa_maps numa-move_pages numa-frames maps)
command -v numastat >/dev/null && labels+=(numastat)
command_for() {
	case $1 in
	numa_maps-cat) echo "cat /proc/$2/numa_maps" ;;
	numa-numa_maps) echo "$tool numa --source numa_maps -r -n -o MAPPING,NODE,TOTAL $2" ;;
	numa-move_pages) echo "$tool numa --source move_pages -r -n -o MAPPING,NODE,TOTAL $2" ;;
	numa-frames) echo "$tool numa --source frames -r -n -o MAPPING,NODE,TOTAL $2" ;;
	maps) echo "$tool maps -r -n $2" ;;
	numastat) echo "numastat -p $2" ;;
	esac
}

# "NODE BYTES" of the whole process: from numa_maps (N<node>=<pages> times kernelpagesize_kB) and from
# each source's mapping rows. Pages may move between two reads only if something migrates them; three tries.
node_bytes_kernel() {
	awk '{ ps = 4096; for (i = 2; i <= NF; i++) if ($i ~ /^kernelpagesize_kB=/) { split($i, a, "="); ps = a[2] * 1024 }
	       for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), a, "="); b[a[1]] += a[2] * ps } }
	     END { for (n in b) print n, b[n] }' "/proc/$1/numa_maps" | sort
}
# The vdso's page is the kernel's: move_pages and frame numbers place it, numa_maps leaves it out.
node_bytes_tool() {
	"$tool" numa --source "$2" -r -n -b -o MAPPING,NODE,TOTAL,PATH "$1" 2>/dev/null |
		awk '$1 == "map" && $4 != "[vdso]" { b[$2] += $3 } END { for (n in b) if (b[n] > 0) print n, b[n] }' | sort
}
check_sources() {
	local s try
	node_bytes_kernel "$1" >"$tmp/kernel.nodes"
	for s in numa_maps move_pages frames; do
		for try in 1 2 3; do
			node_bytes_tool "$1" "$s" >"$tmp/$s.nodes"
			cmp -s "$tmp/kernel.nodes" "$tmp/$s.nodes" && break
			node_bytes_kernel "$1" >"$tmp/kernel.nodes"
		done
		if ! cmp -s "$tmp/kernel.nodes" "$tmp/$s.nodes"; then
			echo "run-numa.sh: FAIL: --source $s and numa_maps give different bytes per node:" >&2
			diff "$tmp/kernel.nodes" "$tmp/$s.nodes" | sed 's/^/  /' >&2
			exit 1
		fi
	done
	echo "bytes per node, the same from numa_maps and the three sources: $(tr '\n' ' ' <"$tmp/kernel.nodes")"
}

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib"
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times
	echo "== THP $thp: target pid $pid, $gib GiB touched, $runs runs per command"
	check_sources "$pid"
	run_rounds "$pid"
	printf '%-16s %9s %9s %9s %9s %9s %8s  %s\n' READER WALL_MS MIN_MS MAX_MS VS_CAT CPU_MS RSS_MIB COMMAND
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall"
		printf '%-16s %9s %9s %9s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" \
			"$(ms "$max_wall")" "$(ratio "$med_wall" "$wall_numa_maps_cat")x" "$(ms "$med_cpu")" \
			"$(mib "$max_rss")" "$(command_for "$l" PID | sed "s|$build/||; s|$tmp/bin/||")"
	done
	echo
	summary+=("THP $thp: wall time against cat numa_maps: frames $(ratio "$wall_numa_frames" "$wall_numa_maps_cat")x, move_pages $(ratio "$wall_numa_move_pages" "$wall_numa_maps_cat")x, numa_maps source $(ratio "$wall_numa_numa_maps" "$wall_numa_maps_cat")x; frames against pagemap maps (one walk) $(ratio "$wall_numa_frames" "$wall_maps")x")
	stop_targets
done

for s in "${summary[@]}"; do
	echo "$s"
done
