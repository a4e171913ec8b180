#!/bin/sh
# gone_pids.sh - several PIDs, some of them not readable: every command that takes several (shared,
# numa, snapshot -p, ps -p, cache -p) answers for the processes that exist, names each one it cannot
# read on stderr in the library's words (pm_target_explain: gone, a kernel thread, a zombie), once,
# and exits 1. snapshot -p of a kernel thread or a zombie is refused as every other command refuses
# it; with other PIDs beside it, the snapshot holds the others and META refused_pids lists it.
# The processes are our own: two sleeps, a child started and reaped (a PID that is gone), a zombie
# (the child of a helper that never reaps it); PID 2, kthreadd, is only named, never touched.
# Usage: tests/live/gone_pids.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
work=$(mktemp -d) || exit 1
a='' b='' helper=''
cleanup() {
	for p in $a $b $helper; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

sleep 100000 & a=$!
sleep 100000 & b=$!
sh -c 'exit 0' & gone=$!
wait "$gone"
# The zombie: the helper starts a child that exits at 0.3 s, then becomes a sleep that never
# reaps it.
# The child outlives the shell's last chance to reap it (a shell may reap a child that ended before its exec).
sh -c 'sleep 0.3 & echo $! >"$1"; exec sleep 100000' sh "$work/zombie" & helper=$!
i=0
while [ $i -lt 100 ]; do
	z=$(cat "$work/zombie" 2>/dev/null)
	[ -n "$z" ] && [ "$(awk '{ print $3 }' "/proc/$z/stat" 2>/dev/null)" = Z ] && break
	sleep 0.05
	i=$((i + 1))
done
[ "$(awk '{ print $3 }' "/proc/$z/stat" 2>/dev/null)" = Z ] ||
	{ echo "FAIL gone-setup: no zombie"; exit 1; }
kill -0 "$gone" 2>/dev/null && { echo "SKIP gone-pids: PID $gone was reused at once"; exit 77; }
kthread=$(awk '$2 == "(kthreadd)" { print 2 }' /proc/2/stat 2>/dev/null)
sleep 0.2	# the sleeps have exec'd

gone_line="pagemap: cannot open process $gone: no such process"
zombie_line="pagemap: cannot open process $z: it is a zombie and has no memory left"
kthread_line="pagemap: cannot open process 2: it is a kernel thread and has no user memory"

# check NAME RC WANT_RC STDERR_FILE WANT_STDERR...: the exit status, and stderr exactly the
# lines wanted.
check() {
	name=$1 rc=$2 want=$3 errf=$4
	shift 4
	: >"$work/want"
	for l in "$@"; do printf '%s\n' "$l" >>"$work/want"; done
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, want $want; stderr: $(cat "$errf")"
	elif ! cmp -s "$errf" "$work/want"; then
		echo "FAIL $name: stderr '$(cat "$errf")', want '$(cat "$work/want")'"
	else
		echo "PASS $name"
	fi
}
# has NAME FILE PATTERN: an awk condition that some stdout line must meet.
has() {
	if awk "$3 { found = 1 } END { exit !found }" "$2"; then
		echo "PASS $1"
	else
		echo "FAIL $1: no line with $3 in: $(head -c 600 "$2")"
	fi
}

# shared: the rows of the processes that remain, as if only they were given.
if [ "$(id -u)" = 0 ]; then
	"$pagemap" shared -o KIND,PID,PEER "$a" "$b" "$gone" >"$work/out" 2>"$work/err"
	check shared-gone-exit $? 1 "$work/err" "$gone_line"
	has shared-gone-pids "$work/out" "\$1 == \"pids\" && \$2 == $a && \$3 == $b"
	has shared-gone-process "$work/out" "\$1 == \"process\" && \$2 == $b"
	"$pagemap" shared -o KIND,PID "$a" "$gone" "$z" >"$work/out" 2>"$work/err"
	check shared-one-left-exit $? 1 "$work/err" "$gone_line" "$zombie_line"
	has shared-one-left-process "$work/out" "\$1 == \"process\" && \$2 == $a"
	"$pagemap" shared "$gone" >"$work/out" 2>"$work/err"
	check shared-none-left-exit $? 1 "$work/err" "$gone_line"
	[ -s "$work/out" ] && echo "FAIL shared-none-left-empty: $(cat "$work/out")" ||
		echo "PASS shared-none-left-empty"
else
	echo "SKIP shared-gone: not root (shared needs frame numbers)"
fi

# numa: each process's rows, from whichever source this reader has.
if "$pagemap" numa >/dev/null 2>&1; then
	"$pagemap" numa -o PID,MAPPING "$a" "$gone" "$b" >"$work/out" 2>"$work/err.all"
	rc=$?
	grep -v ': node of each page from\|: nodes from numa_maps' "$work/err.all" >"$work/err"
	check numa-gone-exit $rc 1 "$work/err" "$gone_line"
	has numa-gone-first "$work/out" "\$1 == $a && \$2 == \"total\""
	has numa-gone-after "$work/out" "\$1 == $b && \$2 == \"total\""
else
	echo "SKIP numa-gone: no NUMA nodes (a kernel without CONFIG_NUMA)"
fi

# snapshot -p: the others are written; a kernel thread and a zombie are refused like a gone PID.
"$pagemap" snapshot -p "$a,$gone,$b" -o "$work/s1" 2>"$work/err"
check snapshot-gone-exit $? 1 "$work/err" "$gone_line"
procs() {	# procs FILE: the PIDs the snapshot holds, sorted
	"$pagemap" snapshot --list "$1" | sed -n 's|.* proc/\([0-9]*\)/maps$|\1|p' |
		sort -nu | tr '\n' ' '
}
want_procs=$(printf '%s\n' "$a" "$b" | sort -n | tr '\n' ' ')
got=$(procs "$work/s1" 2>/dev/null)
[ "$got" = "$want_procs" ] && echo "PASS snapshot-gone-written" ||
	echo "FAIL snapshot-gone-written: the snapshot holds '$got', want '$want_procs'"
# META lines are the payload of the section of type 1 (pagemap-snapshot(5)), uncompressed.
grep -a -q "refused_pids=$gone\$" "$work/s1" 2>/dev/null && echo "PASS snapshot-gone-meta" ||
	echo "FAIL snapshot-gone-meta: no META refused_pids=$gone"
"$pagemap" snapshot -p "$z" -o "$work/s2" 2>"$work/err"
check snapshot-zombie-exit $? 1 "$work/err" "$zombie_line" \
	"pagemap: no process given can be read: $work/s2 is not written"
[ -e "$work/s2" ] && echo "FAIL snapshot-zombie-nothing: $work/s2 written" ||
	echo "PASS snapshot-zombie-nothing"
if [ -n "$kthread" ]; then
	"$pagemap" snapshot -p 2 -o "$work/s3" 2>"$work/err"
	check snapshot-kthread-exit $? 1 "$work/err" "$kthread_line" \
		"pagemap: no process given can be read: $work/s3 is not written"
	[ -e "$work/s3" ] && echo "FAIL snapshot-kthread-nothing: $work/s3 written" ||
		echo "PASS snapshot-kthread-nothing"
	"$pagemap" snapshot -p "2,$a,$z" -o "$work/s4" 2>"$work/err"
	check snapshot-mixed-exit $? 1 "$work/err" "$kthread_line" "$zombie_line"
	got=$(procs "$work/s4" 2>/dev/null)
	[ "$got" = "$a " ] && echo "PASS snapshot-mixed-only-readable" ||
		echo "FAIL snapshot-mixed-only-readable: the snapshot holds '$got', want '$a '"
	grep -a -q "refused_pids=2,$z\$" "$work/s4" 2>/dev/null &&
		echo "PASS snapshot-mixed-meta" ||
		echo "FAIL snapshot-mixed-meta: no META refused_pids=2,$z"
else
	echo "SKIP snapshot-kthread: PID 2 is not kthreadd here (a PID namespace?)"
fi

# ps -p and cache -p already answered for what exists: the same words now.
"$pagemap" ps -n -o PID -p "$a,$gone,$z" >"$work/out" 2>"$work/err"
check ps-gone-exit $? 1 "$work/err" "$gone_line" "$zombie_line"
has ps-gone-row "$work/out" "\$1 == $a"
# -p of a zombie alone: its line in the same words, and no empty table before it.
"$pagemap" ps -p "$z" >"$work/out" 2>"$work/err"
check ps-zombie-exit $? 1 "$work/err" "$zombie_line"
[ -s "$work/out" ] && echo "FAIL ps-zombie-no-table: $(cat "$work/out")" || echo "PASS ps-zombie-no-table"
"$pagemap" cache -n -o PID -p "$a" -p "$gone" >"$work/out" 2>"$work/err"
check cache-gone-exit $? 1 "$work/err" "$gone_line"
has cache-gone-row "$work/out" "\$1 == $a"
exit 0
