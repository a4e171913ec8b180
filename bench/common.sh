# common.sh - helpers shared by the bench/run-*.sh scripts (sourced, not run).
# shellcheck shell=bash
# The caller sets: build (build dir), tool (pagemap binary), here (bench/), runs, and the
# function command_for LABEL ARG, which prints the command line of a measured row.

bench_check_programs() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			echo "$(basename "$0"): $f is missing: run 'make bench' (or 'make all bench-programs')" >&2
			exit 1
		fi
	done
	case $runs in '' | *[!0-9]* | 0) echo "$(basename "$0"): BENCH_RUNS must be a positive integer" >&2; exit 2 ;; esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -g | tail -n 1; }
minimum() { sort -g | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# Copy the CLI $1 into directory $2 (made if need be), with its libpagemap.so where there is one: the CLI
# needs none since beb8770, a build from before finds it at $ORIGIN. Exits on failure.
bench_copy_tool() {
	local f
	mkdir -p "$2" && cp -P "$1" "$2/" || exit 1
	for f in "$(dirname "$1")"/libpagemap.so*; do
		[ ! -e "$f" ] || cp -P "$f" "$2/" || exit 1
	done
}

# Copy the tool (and its library) to $tmp/bin (a rebuild of the build directory during the run
# cannot mix versions); sets tool, prints the header line.
bench_snapshot_tool() {
	local src rev
	bench_copy_tool "$tool" "$tmp/bin"
	tool=$tmp/bin/$(basename "$tool")	# BENCH_TOOL may be named otherwise than pagemap
	src=$(cd "$here/.." && pwd)
	rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -n "$(git -C "$src" status --porcelain -- lib cli include 2>/dev/null)" ] && rev="$rev+local changes in lib/ cli/ include/"
	[ -n "${BENCH_TOOL:-}" ] && rev="$BENCH_TOOL"
	echo "pagemap $rev; kernel $(uname -r); $(nproc) CPUs; $(awk '/^MemTotal:/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo); THP $(cat /sys/kernel/mm/transparent_hugepage/enabled); load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# The usual start of a run: a private $tmp, removed and the targets stopped on every exit, and the
# tool copied there (bench_snapshot_tool). Sets tmp.
bench_begin() {
	tmp=$(mktemp -d) || exit 1
	trap 'stop_targets; rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM HUP
	bench_snapshot_tool
}

# Wait until MemAvailable leaves $1 GiB plus 1 GiB of headroom (the machine may be shared): up to
# BENCH_MEM_WAIT seconds (default 600), then give up rather than push the machine into swap or the OOM killer.
wait_for_memory() {
	local need_kib avail waited=0 limit=${BENCH_MEM_WAIT:-600}
	need_kib=$(awk -v g="$1" 'BEGIN { printf "%d", (g + 1) * 1048576 }')
	while avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) && [ "$avail" -lt "$need_kib" ]; do
		if [ $waited -ge "$limit" ]; then
			echo "$(basename "$0"): MemAvailable $(mib "$avail") MiB, needed $(mib "$need_kib") MiB for a $1 GiB target" >&2
			exit 1
		fi
		[ $waited = 0 ] && echo "waiting for memory: MemAvailable $(mib "$avail") MiB, needed $(mib "$need_kib") MiB"
		sleep 5
		waited=$((waited + 5))
	done
}

# Start `target $1 $2 [$3]` in the background; appends its pid to tgt_pids once it is ready.
# Its stdin is a FIFO the script holds open: a target also exits when the script does.
tgt_pids=()
start_target() {
	local n=${#tgt_pids[@]} out pid waited=0
	wait_for_memory "${tgt_resident_gib:-$2}"	# a sparse target's resident GiB, where the caller says
	if [ -z "${tgt_hold:-}" ]; then
		mkfifo "$tmp/hold" && exec {tgt_hold}<>"$tmp/hold" || exit 1
	fi
	out=$tmp/target$n.out
	"$target" "$1" "$2" ${3:+"$3"} <"$tmp/hold" >"$out" {tgt_hold}>&- &
	pid=$!
	tgt_pids+=("$pid")
	until [ "$(sed -n 2p "$out" 2>/dev/null)" = ready ]; do
		if ! kill -0 "$pid" 2>/dev/null || [ $waited -ge 6000 ]; then
			echo "$(basename "$0"): the target ($1 $2 $3) did not get ready" >&2
			exit 1
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	[ "$(sed -n 1p "$out")" = "$pid" ] || { echo "$(basename "$0"): target says pid $(sed -n 1p "$out"), expected $pid" >&2; exit 1; }
}

stop_targets() {
	local p
	for p in "${tgt_pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	tgt_pids=()
}

# Run label $1 once with argument $2; append "wall_seconds maxrss_kib cpu_seconds" to $tmp/$1.times,
# its stdout to $tmp/$1.out. bench_pre_hook/bench_post_hook LABEL run around it, untimed, if defined.
run_one() {
	local out
	declare -F bench_pre_hook >/dev/null && bench_pre_hook "$1"
	# shellcheck disable=SC2046 # the command is split on purpose
	if ! out=$("$timeit" "$tmp/$1.out" $(command_for "$1" "$2") 2>"$tmp/$1.err"); then
		declare -F bench_post_hook >/dev/null && bench_post_hook "$1"
		cat "$tmp/$1.err" >&2
		echo "$(basename "$0"): $1 failed: $(command_for "$1" "$2")" >&2
		exit 1
	fi
	declare -F bench_post_hook >/dev/null && bench_post_hook "$1"
	echo "$out" >>"$tmp/$1.times"
}

# One untimed warm-up round, then $runs rounds of every label of "${labels[@]}" with argument $1,
# interleaved round-robin, the start rotating each round (to cancel drift).
run_rounds() {
	local l r i n=${#labels[@]}
	for l in "${labels[@]}"; do
		run_one "$l" "$1"
	done
	rm -f "$tmp"/*.times
	for ((r = 0; r < runs; r++)); do
		for ((i = 0; i < n; i++)); do
			run_one "${labels[(i + r) % n]}" "$1"
		done
	done
}

# Medians of label $1: sets med_wall, med_cpu, min_wall, max_wall, max_rss.
medians() {
	med_wall=$(cut -d' ' -f1 "$tmp/$1.times" | median)
	min_wall=$(cut -d' ' -f1 "$tmp/$1.times" | minimum)
	max_wall=$(cut -d' ' -f1 "$tmp/$1.times" | maximum)
	med_cpu=$(cut -d' ' -f3 "$tmp/$1.times" | median)
	max_rss=$(cut -d' ' -f2 "$tmp/$1.times" | maximum)
}

# page-types from the kernel's source (BENCH_BUILD/bench/page-types, built once from KERNEL_SRC or Debian's
# linux-source tarball, installed with apt-get when missing, as root), built with a stub for the one libapi call it makes (debugfs, only
# for its hwpoison options, which are not used here).
bench_page_types() {
	local out=$build/bench/page-types src=${KERNEL_SRC:-} w f
	[ -x "$out" ] && { echo "$out"; return 0; }
	w=$(mktemp -d) || return 1
	if [ -z "$src" ]; then
		f=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -n 1)
		# Reproducible on a fresh machine: Debian's linux-source package holds the kernel's tools/.
		if [ -z "$f" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			echo "$(basename "$0"): installing linux-source (apt-get) to build page-types" >&2
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source; } >&2
			f=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -n 1)
		fi
		[ -n "$f" ] || { rm -rf "$w"; return 1; }
		tar -xJf "$f" -C "$w" --wildcards '*/tools/vm/page-types.c' '*/tools/mm/page-types.c' \
			'*/include/uapi/linux/magic.h' '*/include/uapi/linux/kernel-page-flags.h' 2>/dev/null
		src=$(ls -d "$w"/linux-source-* | head -n 1)
	fi
	f=$(ls "$src"/tools/mm/page-types.c "$src"/tools/vm/page-types.c 2>/dev/null | head -n 1)
	mkdir -p "$w/shim/api/fs" "$(dirname "$out")"
	echo 'const char *debugfs__mount(void);' >"$w/shim/api/fs/fs.h"
	echo 'const char *debugfs__mount(void) { return 0; }' >"$w/shim/stub.c"
	[ -n "$f" ] && cc -O2 -I"$w/shim" -o "$out" "$f" "$w/shim/stub.c" >&2
	rm -rf "$w"
	[ -x "$out" ] && echo "$out"
}
