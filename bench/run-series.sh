#!/bin/bash
# run-series.sh - `pagemap diff S@1 S@2` of two members of one series (snapshot --append) of a process with GIB
# GiB touched (default 8), taken around a write of 64 pages (copy-on-write broken: the target shares its pages
# with a child), against `pagemap diff A B` of two separate snapshot files taken at the same two moments, in the
# same run. Both with --pfn drop (no kpage* words: the frame join's kpageflags change between captures, and a
# diff of members walks everything when kpageflags differ) unless BENCH_PFN says otherwise. Also prints the
# size of each member (WORDS bytes stored, chunks reused) against the separate files'.
# Usage: bench/run-series.sh [GIB]    (or BENCH_GIB=GIB; default 8)
# Environment: BENCH_RUNS (default 5), BENCH_THP (default "off"), BENCH_PFN (default drop), BENCH_BUILD, BENCH_TOOL,
# BENCH_REPLAY_TMP (the TMPDIR the diffs extract their replay trees into, e.g. /dev/shm: on ext4 creating the
# trees' files costs most of a diff, the same for members as for files, and hides the walk).
# Never a timed assertion: prints figures and exits 0 once it has measured. Run it under flock /tmp/bench.lock.
set -u

here=$(cd "$(dirname "$0")" && pwd)
gib=${1:-${BENCH_GIB:-8}}
runs=${BENCH_RUNS:-5}
thp_modes=${BENCH_THP:-off}
pfn=${BENCH_PFN:-drop}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
target=$build/bench/target
timeit=$build/bench/timeit

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$target" "$timeit"
bench_begin

# diff exits 1 when the snapshots differ (they do): a wrapper turns 1 into 0 for timeit, 2 and up stay failures.
replay_tmp=${BENCH_REPLAY_TMP:+TMPDIR=$BENCH_REPLAY_TMP }
cat >"$tmp/diff.sh" <<EOS
#!/bin/sh
$replay_tmp"$tool" diff "\$@"
[ \$? -le 1 ]
EOS
cat >"$tmp/diffwalk.sh" <<EOS
#!/bin/sh
${replay_tmp}PAGEMAP_DIFF_WALK=1 "$tool" diff "\$@"
[ \$? -le 1 ]
EOS
chmod +x "$tmp/diff.sh" "$tmp/diffwalk.sh"

labels=(diff-files diff-members diff-members-walk)
command_for() {
	case $1 in
	diff-files) echo "$tmp/diff.sh $tmp/a.snap $tmp/b.snap" ;;
	diff-members) echo "$tmp/diff.sh $tmp/s.series@1 $tmp/s.series@2" ;;
	diff-members-walk) echo "$tmp/diffwalk.sh $tmp/s.series@1 $tmp/s.series@2" ;;
	esac
}

wait_written() {
	local waited=0
	until [ "$(grep -c '^written$' "$tmp/target0.out")" -ge "$1" ]; do
		[ $waited -ge 6000 ] && { echo "$(basename "$0"): the target did not write" >&2; exit 1; }
		sleep 0.1
		waited=$((waited + 1))
	done
}

summary=()
for thp in $thp_modes; do
	start_target "$thp" "$gib" share
	pid=${tgt_pids[0]}
	rm -f "$tmp"/*.times "$tmp/s.series"
	kill -STOP "$pid"
	"$tool" snapshot -p "$pid" --pfn "$pfn" -o "$tmp/a.snap" || exit 1
	"$tool" snapshot -p "$pid" --pfn "$pfn" --append "$tmp/s.series" || exit 1
	kill -CONT "$pid"
	kill -USR2 "$pid"
	wait_written 1
	kill -STOP "$pid"
	"$tool" snapshot -p "$pid" --pfn "$pfn" -o "$tmp/b.snap" || exit 1
	start=$(date +%s.%N)
	"$tool" snapshot -p "$pid" --pfn "$pfn" --append "$tmp/s.series" || exit 1
	app_s=$(echo "$(date +%s.%N) - $start" | bc)
	kill -CONT "$pid"
	echo "== THP $thp, --pfn $pfn, replay trees in ${BENCH_REPLAY_TMP:-${TMPDIR:-/tmp}}: target pid $pid, $gib GiB touched, 64 pages written between the two captures, $runs runs per command"
	echo "files: A $(stat -c %s "$tmp/a.snap") bytes, B $(stat -c %s "$tmp/b.snap") bytes; series of both $(stat -c %s "$tmp/s.series") bytes (the append of member 2 took ${app_s%???????} s)"
	"$tool" snapshot --list "$tmp/s.series"
	run_rounds "$pid"
	printf '%-18s %9s %9s %9s %9s %8s\n' COMMAND WALL_MS MIN_MS MAX_MS CPU_MS RSS_MIB
	for l in "${labels[@]}"; do
		medians "$l"
		eval "wall_${l//-/_}=$med_wall"
		printf '%-18s %9s %9s %9s %9s %8s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
			"$(ms "$med_cpu")" "$(mib "$max_rss")"
	done
	cmp -s "$tmp/diff-files.out" "$tmp/diff-members.out" && same=same || same=DIFFERENT
	cmp -s "$tmp/diff-members-walk.out" "$tmp/diff-members.out" && same2=same || same2=DIFFERENT
	echo "diff total row: $(tail -1 "$tmp/diff-members.out" | tr -s ' ') (files' output: $same; members walked: $same2)"
	echo
	summary+=("THP $thp, $gib GiB, --pfn $pfn: diff of members $(ms "$wall_diff_members") ms, of files $(ms "$wall_diff_files") ms: members/files $(ratio "$wall_diff_members" "$wall_diff_files")x, members/members-walked $(ratio "$wall_diff_members" "$wall_diff_members_walk")x")
	stop_targets
done
for s in "${summary[@]}"; do
	echo "$s"
done
