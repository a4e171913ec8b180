#!/bin/bash
# run-hugetlb-probe.sh - what telling hugetlb mappings by their device costs `pagemap maps`: a sleep (no
# mapping on an anonymous superblock: nothing is asked) and a process with a 2 MiB-aligned plain memfd (the
# one mapping that may be hugetlb: the context learns the kernel's hugetlbfs devices once, by an empty
# MFD_HUGETLB memfd per huge page size), each against another build's pagemap in the same interleaved rounds.
# Usage: BENCH_BASE_TOOL=/path/to/main/build/pagemap bench/run-hugetlb-probe.sh
# Environment: BENCH_RUNS (rounds, default 100), BENCH_BUILD, BENCH_TOOL. Medians of wall and CPU time;
# a benchmark reports, it never fails on a time.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-100}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
base=${BENCH_BASE_TOOL:-}
timeit=$build/bench/timeit
# shellcheck source=bench/common.sh
. "$here/common.sh"	# median, ratio, bench_check_programs
bench_check_programs "$tool" "$timeit"
[ -n "$base" ] && [ -x "$base" ] || { echo "run-hugetlb-probe.sh: set BENCH_BASE_TOOL to another build's pagemap" >&2; exit 2; }
command -v python3 >/dev/null || { echo "run-hugetlb-probe.sh: python3 makes the memfd target" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagemap-hugetlb-bench.XXXXXX") || exit 1
sleep 100000 &
small=$!
python3 -c '
import ctypes, os, time
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.memfd_create("bench-memfd")
os.ftruncate(fd, 2 << 20)
# MAP_SHARED | MAP_FIXED_NOREPLACE at a 2 MiB boundary: a mapping the prefilter lets through
p = libc.mmap(0x7e0000000000, 2 << 20, 3, 0x01 | 0x100000, fd, 0)
ctypes.memset(p, 1, 4096)
time.sleep(1e6)' &
memfd=$!
trap 'kill $small $memfd 2>/dev/null; rm -rf "$tmp"' EXIT
for i in 1 2 3 4 5 6 7 8 9 10; do grep -q bench-memfd "/proc/$memfd/maps" 2>/dev/null && break; sleep 0.2; done

labels=(sleep-new sleep-base memfd-new memfd-base)
cmd() {
	case $1 in
	sleep-new) echo "$tool maps $small" ;;
	sleep-base) echo "$base maps $small" ;;
	memfd-new) echo "$tool maps $memfd" ;;
	memfd-base) echo "$base maps $memfd" ;;
	esac
}
for l in "${labels[@]}"; do $(cmd "$l") >/dev/null 2>&1; done	# warm-up, untimed
# Each round alternates which build goes first: the first of a pair was seen to pay a few percent more.
rev=(memfd-base memfd-new sleep-base sleep-new)
for ((i = 0; i < runs; i++)); do
	order=("${labels[@]}")
	((i % 2)) && order=("${rev[@]}")
	for l in "${order[@]}"; do
		# shellcheck disable=SC2046
		"$timeit" /dev/null $(cmd "$l") 2>/dev/null >>"$tmp/$l" || { echo "run-hugetlb-probe.sh: $(cmd "$l") failed" >&2; exit 1; }
	done
done
echo "run-hugetlb-probe.sh: $runs rounds interleaved; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-11s %8s %8s %9s %9s\n' ROW WALL_MS CPU_MS WALL/BASE CPU/BASE
for l in "${labels[@]}"; do
	w=$(awk '{ print $1 }' "$tmp/$l" | median)
	c=$(awk '{ print $3 }' "$tmp/$l" | median)
	b=${l%-*}-base
	bw=$(awk '{ print $1 }' "$tmp/$b" | median)
	bc=$(awk '{ print $3 }' "$tmp/$b" | median)
	awk -v l="$l" -v w="$w" -v c="$c" -v bw="$bw" -v bc="$bc" \
		'BEGIN { printf "%-11s %8.2f %8.2f %8.2fx %8.2fx\n", l, w * 1000, c * 1000, w / bw, (bc > 0 ? c / bc : 0) }'
done
