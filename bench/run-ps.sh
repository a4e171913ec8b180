#!/bin/bash
# run-ps.sh - time `pagemap ps` over every process against smem and a plain reader of every /proc/PID/smaps_rollup.
# Usage: bench/run-ps.sh
# Environment: BENCH_RUNS (runs per command, default 5), BENCH_BUILD (build dir), BENCH_TOOL (the pagemap
# binary), BENCH_PS_TARGETS (extra processes, default "off:0.5 on:0.5 off:0.25:share": THP mode, GiB,
# and "share" for a forked child sharing the pages), BENCH_PS_IDLE (idle processes started first, default 0:
# e.g. 900 for a "1000 processes" row). Needs root: it installs smem (tools/install-deps),
# and `pagemap ps --exact` (the frame path: pagemap joined with kpagecount) needs root.
# Every command runs BENCH_RUNS times, interleaved round-robin with a rotating start, after one untimed
# warm-up round; medians of wall and CPU time; speed-ups baseline/tool measured in the same run; then one
# back-to-back pass compares the PSS totals. A benchmark reports; it never fails on a ratio.
set -u
export LC_ALL=C	# join and comm want byte order

here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-5}
build=${BENCH_BUILD:-$here/../build}
tool=${BENCH_TOOL:-$build/pagemap}
rollup=$build/bench/rollup_all
target=$build/bench/target
timeit=$build/bench/timeit
targets=${BENCH_PS_TARGETS:-off:0.5 on:0.5 off:0.25:share}

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_check_programs "$tool" "$rollup" "$target" "$timeit"
if [ "$(id -u)" != 0 ]; then
	echo "run-ps.sh: needs root (pagemap ps reads kpagecount as root; smem is installed)" >&2
	exit 1
fi
if ! "$here/../tools/install-deps" smem || ! smem=$(command -v smem); then
	echo "run-ps.sh: smem is not available: its row is left out"
	smem=
fi

tmp=$(mktemp -d) || exit 1
idle_pids=()
cleanup() {
	[ ${#idle_pids[@]} -gt 0 ] && kill "${idle_pids[@]}" 2>/dev/null
	stop_targets
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

bench_snapshot_tool

# The measured commands: label, then the command (the argument is unused).
labels=(rollup ps ps-exact)
[ -n "$smem" ] && labels+=(smem)
pss_labels=("${labels[@]}")	# the readers whose PSS compare_pss compares: all of them see every process
# Unprivileged (uid 65534, which owns no process here): the same readers where /proc lets them read only
# what is theirs, so each row's cost is the walk of /proc and the refusals; compared with each other.
user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if command -v setpriv >/dev/null && chmod 755 "$tmp" "$tmp/bin" &&
	"${user[@]}" "$tool" ps -J >/dev/null 2>&1 && "${user[@]}" "$rollup" -v >/dev/null 2>&1; then
	labels+=(rollup-user ps-user)
	[ -n "$smem" ] && labels+=(smem-user)
else
	echo "run-ps.sh: uid 65534 cannot run $tool here: the unprivileged rows are left out"
fi
command_for() {
	case $1 in
	rollup) echo "$rollup -v" ;;
	ps) echo "$tool ps -J" ;;
	ps-exact) echo "$tool ps --exact -J" ;;
	smem) echo "$smem -H" ;;	# columns pid user command swap uss pss rss
	*-user) echo "${user[*]} $(command_for "${1%-user}")" ;;
	esac
}


# "PID PSS_KIB" lines of each reader's output ($2), sorted by PID.
pss_of() {
	case $1 in
	rollup) awk '$1 == "pid" { print $2, $4 }' "$2" ;;
	ps | ps-exact) awk '/"pid":/ { gsub(/[^0-9]/, "", $2); p = $2 }
		/"pss":/ { gsub(/[^0-9]/, "", $2); printf "%s %.3f\n", p, $2 / 1024 }' "$2" ;;
	smem) awk 'NF >= 7 { print $1, $(NF - 1) }' "$2" ;;
	esac | sort
}

# Source column of pagemap ps -J: how many rows came from each source.
sources() { awk -F'"' '/"source":/ { n[$4]++ } END { for (s in n) printf "%s%s %d", (k++ ? ", " : ""), s, n[s] }' "$1"; }

# One back-to-back pass, between two reads of every smaps_rollup: PSS per process compared over the
# PIDs every reader saw whose smaps_rollup Rss and Pss were the same before and after (steady ones).
compare_pss() {
	local l cmd all=$tmp/common.pids first=1
	"$rollup" -v >"$tmp/before.cmp"
	for l in "${pss_labels[@]}"; do
		cmd=$(command_for "$l" -)
		# shellcheck disable=SC2086 # the command is split on purpose
		$cmd >"$tmp/$l.cmp" 2>/dev/null
		pss_of "$l" "$tmp/$l.cmp" >"$tmp/$l.pss"
	done
	"$rollup" -v >"$tmp/after.cmp"
	for l in "${pss_labels[@]}"; do
		if [ $first = 1 ]; then
			cut -d' ' -f1 "$tmp/$l.pss" >"$all"
			first=0
		else
			cut -d' ' -f1 "$tmp/$l.pss" | comm -12 "$all" - >"$all.new" && mv "$all.new" "$all"
		fi
	done
	awk '$1 == "pid" { print $2, $4, $6 }' "$tmp/before.cmp" | sort >"$tmp/before.rss"
	awk '$1 == "pid" { print $2, $4, $6 }' "$tmp/after.cmp" | sort >"$tmp/after.rss"
	comm -12 "$tmp/before.rss" "$tmp/after.rss" | cut -d' ' -f1 | comm -12 "$all" - >"$tmp/steady.pids"
	echo "PSS per process, back to back (pagemap ps sources: $(sources "$tmp/ps.cmp"); ps --exact: $(sources "$tmp/ps-exact.cmp"))"
	for l in "${pss_labels[@]}"; do
		echo "  $l: $(wc -l <"$tmp/$l.pss") processes, total $(awk '{ s += $2 } END { printf "%.1f", s / 1024 }' "$tmp/$l.pss") MiB;" \
			"seen by it alone:$(cut -d' ' -f1 "$tmp/$l.pss" | comm -23 - "$all" | while read -r p; do
				printf ' %s(%s)' "$p" "$(cat "/proc/$p/comm" 2>/dev/null || echo gone)"; done)"
	done
	echo "  $(wc -l <"$all") processes seen by all, $(wc -l <"$tmp/steady.pids") of them steady; changing:$(comm -23 "$all" "$tmp/steady.pids" |
		while read -r p; do printf ' %s(%s)' "$p" "$(cat "/proc/$p/comm" 2>/dev/null || echo gone)"; done)"
	echo "  total PSS, difference from rollup (smaps_rollup, truncated to kB per process):"
	for set in all steady; do
		[ $set = all ] && pids=$all || pids=$tmp/steady.pids
		for l in "${pss_labels[@]}"; do
			join "$pids" "$tmp/$l.pss" | join - "$tmp/rollup.pss" | awk -v l="$l" -v set="$set" '
				{ s += $2; r += $3; d = $2 - $3; if (d < 0) d = -d; if (d > m) { m = d; mp = $1 } if (d > 1) far++ }
				END { printf "    %-6s %3d %-10s %12.1f KiB  diff %+9.1f KiB (%+.4f%%, %+.2f KiB per process)  largest %.1f KiB (pid %s), %d beyond 1 KiB\n",
					set, NR, l, s, s - r, (r ? 100 * (s - r) / r : 0), (NR ? (s - r) / NR : 0), m, (mp == "" ? "-" : mp), far }'
		done
	done
	echo "  the extra targets (PSS KiB: rollup, ps, ps --exact${smem:+, smem}):"
	for p in $(pgrep -d' ' -f "^$target "); do
		printf '    pid %s:' "$p"
		for l in "${pss_labels[@]}"; do
			printf ' %s' "$(awk -v p="$p" '$1 == p { print $2 }' "$tmp/$l.pss")"
		done
		echo
	done
}

idle=${BENCH_PS_IDLE:-0}
case $idle in '' | *[!0-9]*) echo "run-ps.sh: BENCH_PS_IDLE must be a number" >&2; exit 2 ;; esac
for ((i = 0; i < idle; i++)); do
	sleep 100000 &
	idle_pids+=($!)
done
i=0
for spec in $targets; do
	IFS=: read -r thp gib share <<<"$spec"
	start_target "$thp" "$gib" "$share"
	echo "extra target: pid ${tgt_pids[$i]}, THP $thp, $gib GiB${share:+, shared with a forked child}"
	i=$((i + 1))
done
echo "== $(ls -d /proc/[0-9]* | wc -l) processes and kernel threads in /proc, $runs runs per command"
run_rounds -
compare_pss

printf '%-10s %9s %9s %9s %9s %9s %9s %8s  %s\n' READER WALL_MS MIN_MS MAX_MS 'VS_ROLLUP' CPU_MS 'VS_SMEM' RSS_MIB COMMAND
for l in "${labels[@]}"; do
	medians "$l"
	eval "wall_${l//-/_}=$med_wall cpu_${l//-/_}=$med_cpu"
done
for l in "${labels[@]}"; do
	medians "$l"
	vr=$(ratio "$wall_rollup" "$med_wall")x
	vs=-
	[ -n "$smem" ] && vs=$(ratio "$wall_smem" "$med_wall")x
	case $l in	# unprivileged rows against the unprivileged readers
	*-user)
		vr=$(ratio "$wall_rollup_user" "$med_wall")x
		[ -n "$smem" ] && vs=$(ratio "$wall_smem_user" "$med_wall")x ;;
	esac
	printf '%-10s %9s %9s %9s %9s %9s %9s %8s  %s\n' "$l" "$(ms "$med_wall")" "$(ms "$min_wall")" "$(ms "$max_wall")" \
		"$vr" "$(ms "$med_cpu")" "$vs" "$(mib "$max_rss")" "$(command_for "$l" - | sed "s|$build/||; s|$tmp/bin/||")"
done
echo "(VS_ROLLUP, VS_SMEM: that reader's median wall time over this row's: above 1x this row is faster;"
echo " a *-user row against the *-user reader, run as uid 65534 too)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "pagemap ps (default: smaps_rollup) speed-up over rollup_all: $(ratio "$wall_rollup" "$wall_ps")x (CPU time $(ratio "$cpu_rollup" "$cpu_ps")x)"
echo "pagemap ps --exact (pagemap + kpagecount) speed-up over rollup_all: $(ratio "$wall_rollup" "$wall_ps_exact")x (CPU time $(ratio "$cpu_rollup" "$cpu_ps_exact")x)"
if [ -n "$smem" ]; then
	echo "pagemap ps (default: smaps_rollup) speed-up over smem: $(ratio "$wall_smem" "$wall_ps")x (CPU time $(ratio "$cpu_smem" "$cpu_ps")x)"
	echo "pagemap ps --exact speed-up over smem: $(ratio "$wall_smem" "$wall_ps_exact")x (CPU time $(ratio "$cpu_smem" "$cpu_ps_exact")x)"
fi
