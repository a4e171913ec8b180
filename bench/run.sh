#!/bin/bash
# run.sh - time `pagemap maps` on a process with GIB GiB touched (THP off and on, dense and sparse) against the raw pagemap read.
# Usage: bench/run.sh [GIB]    (or BENCH_GIB=GIB; default 4)
# Environment: BENCH_RUNS (runs per command, default 5), BENCH_THP ("off on"), BENCH_LAYOUT ("dense sparse":
# every page written, or every other page with THP off and every other 2 MiB block with THP on), BENCH_BUILD (build dir),
# BENCH_TOOL (the pagemap binary to measure, default BENCH_BUILD/pagemap, e.g. a patched build).
# Every command runs BENCH_RUNS times, interleaved round-robin with a rotating start, after one
# untimed warm-up round. The table shows medians of wall time (fork to wait4, the same wrapper for
# every command) and of CPU time (user + system: steadier when the machine is shared), and ratios
# tool/raw measured in the same run. A benchmark reports; it never fails on a ratio.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-4}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off on}
layouts=${BENCH_LAYOUT:-dense sparse}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
raw=$build/bench/rawread
target=$build/bench/target
timeit=$build/bench/timeit
target_ratio=1.15
target_rss_mib=32
scan_cols=START,END,SIZE,PRESENT,SWAPPED,FILE,THP,GUARD,PATH

for f in "$tool" "$raw" "$target" "$timeit"; do
	if [ ! -x "$f" ]; then
		echo "run.sh: $f is missing: run 'make bench' (or 'make all bench-programs')" >&2
		exit 1
	fi
done
case $runs in '' | *[!0-9]* | 0) echo "run.sh: BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
for thp in $thp_modes; do
	case $thp in on | off) ;; *) echo "run.sh: BENCH_THP takes on and off, not '$thp'" >&2; exit 2 ;; esac
done
for layout in $layouts; do
	case $layout in dense | sparse) ;; *) echo "run.sh: BENCH_LAYOUT takes dense and sparse, not '$layout'" >&2; exit 2 ;; esac
done

tmp=$(mktemp -d) || exit 1
tgt_pid=
cleanup() {
	if [ -n "$tgt_pid" ]; then
		kill "$tgt_pid" 2>/dev/null
		wait "$tgt_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

page=$(getconf PAGESIZE)

# Measure a snapshot of the tool and its library: the build directory may be rebuilt during the run.
mkdir "$tmp/bin" && cp -P "$tool" "$tmp/bin/" || exit 1
for f in "$(dirname "$tool")"/libpagemap.so*; do	# a CLI from before beb8770 finds it at $ORIGIN
	[ ! -e "$f" ] || cp -P "$f" "$tmp/bin/" || exit 1
done
tool=$tmp/bin/pagemap
src=$(cd "$here/.." && pwd)
rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$src" status --porcelain -- lib cli include 2>/dev/null)" ] && rev="$rev+local changes in lib/ cli/ include/"
[ -n "${BENCH_TOOL:-}" ] && rev="$BENCH_TOOL"
echo "pagemap $rev; kernel $(uname -r); $(nproc) CPUs; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled); load $(cut -d' ' -f1-3 /proc/loadavg)"

# The measured commands: label, then the command; PID is substituted.
labels=(raw-pread maps-pread raw-scan maps-scan maps-scan-default maps-default)
command_for() {
	case $1 in
	raw-pread) echo "$raw pread $2" ;;
	maps-pread) echo "$tool --backend pread maps $2" ;;
	raw-scan) echo "$raw scan $2" ;;
	maps-scan) echo "$tool --backend scan maps -o $scan_cols $2" ;;
	maps-scan-default) echo "$tool --backend scan maps $2" ;;
	maps-default) echo "$tool maps $2" ;;
	esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -g | tail -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# Start the target with THP $1 and layout $2; sets tgt_pid once it has touched its memory.
start_target() {
	local line ready mode=
	[ "$2" = sparse ] && mode=sparse
	coproc TGT { exec "$target" "$1" "$gib" $mode; }
	tgt_pid=$TGT_PID
	exec {tgt_out}<&"${TGT[0]}"
	if ! read -r -t 600 line <&"$tgt_out" || ! read -r -t 600 ready <&"$tgt_out" || [ "$ready" != ready ]; then
		echo "run.sh: the target did not get ready" >&2
		exit 1
	fi
	exec {tgt_out}<&-
	[ "$line" = "$tgt_pid" ] || { echo "run.sh: target says pid $line, expected $tgt_pid" >&2; exit 1; }
}

stop_target() {
	kill "$tgt_pid" 2>/dev/null
	wait "$tgt_pid" 2>/dev/null
	tgt_pid=
}

# Run label $1 once against pid $2; append "wall_seconds maxrss_kib cpu_seconds" to $tmp/$1.times.
run_one() {
	local out
	# shellcheck disable=SC2046 # the command is split on purpose
	if ! out=$("$timeit" "$tmp/$1.out" $(command_for "$1" "$2") 2>"$tmp/$1.err"); then
		cat "$tmp/$1.err" >&2
		echo "run.sh: $1 failed: $(command_for "$1" "$2")" >&2
		exit 1
	fi
	echo "$out" >>"$tmp/$1.times"
	case $1 in raw-*) sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$tmp/$1.out" >>"$tmp/$1.pass" ;; esac
}

# Bytes the tool reports present (and THP) in total, with back end $1.
tool_total() { "$tool" --backend "$1" maps -b -o PRESENT,THP "$2" 2>/dev/null | tail -n 1; }

summary=()
rss_all=()
for shape in $(for l in $layouts; do for t in $thp_modes; do echo "$t/$l"; done; done); do
	thp=${shape%/*} layout=${shape#*/}
	start_target "$thp" "$layout"
	pid=$tgt_pid
	rm -f "$tmp"/*.times "$tmp"/*.pass
	anon_huge=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$pid/smaps_rollup")
	echo "== THP $thp, $layout: target pid $pid, $gib GiB ($layout), AnonHugePages $(mib "$anon_huge") MiB, $runs runs per command"
	want_huge=$((${gib%.*} * 1024 * 1024 * 9 / 10))
	[ "$layout" = sparse ] && want_huge=$((want_huge / 2))
	if [ "$thp" = on ] && [ "$anon_huge" -lt "$want_huge" ]; then
		echo "warning: under 90% of the target is in huge pages (THP mode never, or memory fragmented)"
	fi

	for l in "${labels[@]}"; do	# warm-up: page cache, dentries, first-touch allocations
		run_one "$l" "$pid"
		sed "s/^/$l: /" "$tmp/$l.err"	# the tool's notes, once
	done
	rm -f "$tmp"/*.times "$tmp"/*.pass
	for ((r = 0; r < runs; r++)); do
		n=${#labels[@]}
		for ((i = 0; i < n; i++)); do
			run_one "${labels[(i + r) % n]}" "$pid"
		done
	done

	# Same answer from every reader: present bytes (and THP bytes) of the whole process.
	raw_present=$(($(sed -n 's/.*present_pages=\([0-9]*\).*/\1/p' "$tmp/raw-pread.out") * page))
	scan_present=$(($(sed -n 's/.*present_pages=\([0-9]*\).*/\1/p' "$tmp/raw-scan.out") * page))
	read -r p_present p_thp <<<"$(tool_total pread "$pid")"
	read -r s_present s_thp <<<"$(tool_total scan "$pid")"
	echo "present bytes: raw pread $raw_present, raw scan $scan_present, tool pread $p_present (THP $p_thp), tool scan $s_present (THP $s_thp)"

	printf '%-18s %8s %8s %8s %7s %8s %7s %8s %8s  %s\n' READER WALL_MS MIN_MS MAX_MS RATIO CPU_MS RATIO RSS_MIB PASS_MS COMMAND
	for l in "${labels[@]}"; do
		col() { cut -d' ' -f"$1" "$tmp/$l.times"; }
		wall=$(col 1 | median)
		cpu=$(col 3 | median)
		eval "wall_${l//-/_}=$wall cpu_${l//-/_}=$cpu"
		case $l in
		maps-pread | maps-default) bw=$wall_raw_pread bc=$cpu_raw_pread ;;
		maps-scan | maps-scan-default) bw=$wall_raw_scan bc=$cpu_raw_scan ;;
		*) bw=$wall bc=$cpu ;;
		esac
		rss=$(col 2 | maximum)
		case $l in maps-*) rss_all+=("$rss") ;; esac
		pass=-
		[ -s "$tmp/$l.pass" ] && pass=$(ms "$(median <"$tmp/$l.pass")")
		printf '%-18s %8s %8s %8s %6sx %8s %6sx %8s %8s  %s\n' "$l" "$(ms "$wall")" "$(ms "$(col 1 | sort -g | head -n 1)")" \
			"$(ms "$(col 1 | maximum)")" "$(ratio "$wall" "$bw")" "$(ms "$cpu")" "$(ratio "$cpu" "$bc")" "$(mib "$rss")" \
			"$pass" "$(command_for "$l" PID | sed "s|$build/||; s|$tmp/bin/||")"
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	if awk -v w="$wall_raw_pread" -v c="$cpu_raw_pread" 'BEGIN { exit !(w > 1.3 * c) }'; then
		echo "note: the raw pread waited $(ratio "$wall_raw_pread" "$cpu_raw_pread")x its CPU time: the machine is busy, the CPU-time ratios are steadier"
	fi
	echo
	summary+=("THP $thp, $layout: maps pread/raw-pread: $(ratio "$wall_maps_pread" "$wall_raw_pread")x (target ${target_ratio}x; CPU time $(ratio "$cpu_maps_pread" "$cpu_raw_pread")x)")
	summary+=("THP $thp, $layout: maps scan/raw-scan: $(ratio "$wall_maps_scan" "$wall_raw_scan")x (target ${target_ratio}x; CPU time $(ratio "$cpu_maps_scan" "$cpu_raw_scan")x)")
	fastest=$(printf '%s\n' "$wall_raw_pread" "$wall_raw_scan" | sort -g | head -n 1)
	summary+=("THP $thp, $layout: maps (default back end and columns)/the faster raw reader: $(ratio "$wall_maps_default" "$fastest")x; /raw pread, the reader of the same answer: $(ratio "$wall_maps_default" "$wall_raw_pread")x (target ${target_ratio}x; CPU time $(ratio "$cpu_maps_default" "$cpu_raw_pread")x)")
	summary+=("THP $thp, $layout: maps scan default columns/raw-scan: $(ratio "$wall_maps_scan_default" "$wall_raw_scan")x (information; CPU time $(ratio "$cpu_maps_scan_default" "$cpu_raw_scan")x)")
	stop_target
done

for s in "${summary[@]}"; do
	echo "$s"
done
echo "max RSS: $(mib "$(printf '%s\n' "${rss_all[@]}" | maximum)") MiB (target $target_rss_mib MiB)"
