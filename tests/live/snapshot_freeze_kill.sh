#!/bin/sh
# snapshot_freeze_kill.sh - `pagemap snapshot --freeze` killed while it holds (SIGKILL, SIGQUIT, SIGPIPE, SIGUSR1,
# SIGALRM at random moments; SIGXFSZ under ulimit -f; SIGPIPE from a message to stderr into a closed pipe): nothing may stay held, cgroup.events "frozen 0" and no process of ours stopped (the trials are in
# snapshot_freeze_kill.py). Its own cgroup below the cgroup v2 root and its own sleeping processes, gone on any exit.
# Usage: tests/live/snapshot_freeze_kill.sh [TRIALS]   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP snapshot-freeze-kill: $1"; exit 77; }
command -v python3 >/dev/null || skip "no python3 (runs the trials)"
[ "$(id -u)" = 0 ] || skip "not root (making cgroups needs it)"
v2=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2" && $4 == "/") print $5 }' /proc/self/mountinfo |
	awk 'NR == 1 { m = $0 } $0 == "/sys/fs/cgroup" { m = $0 } END { print m }')
[ -n "$v2" ] && [ -f "$v2/cgroup.procs" ] || skip "cgroup v2 is not mounted"
cg=$v2/pagemap-kill-$$ pids=''
cleanup() {
	[ -f "$cg/cgroup.freeze" ] && echo 0 >"$cg/cgroup.freeze"
	for p in $pids; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	for p in $pids; do i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; done
	[ -d "$cg" ] && rmdir "$cg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$cg" 2>/dev/null || skip "cannot make a cgroup in $v2"
[ -f "$cg/cgroup.freeze" ] || skip "no cgroup.freeze in $cg (Linux 5.2+)"
# Processes with 64 MiB of their own each (the hold lasts long enough to be hit) that then sleep: the hold is
# what is tested, not a busy CPU, and CI runs QEMU guests beside this on 2 CPUs.
loop='import time
x = bytearray(64 << 20)
for i in range(0, len(x), 4096): x[i] = 1
while True: time.sleep(3600)'
start() {	# start CGROUP|- CMD...: CMD as a child of ours (in CGROUP, if given); its PID on stdout
	# shellcheck disable=SC2016
	sh -c '[ "$1" = - ] || echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' sh "$@" >/dev/null 2>&1 &
	echo $!
}
command -v setpriv >/dev/null || skip "no setpriv (runs a process as uid 65534)"
a=$(start "$cg" python3 -c "$loop") b=$(start "$cg" python3 -c "$loop")
c=$(start - python3 -c "$loop") d=$(start - python3 -c "$loop")
# uid 65534's own: sleep (that user may not reach root's python3)
e=$(start - setpriv --reuid=65534 --regid=65534 --clear-groups sleep 100000)
pids="$a $b $c $d $e"
sleep 0.5
for p in $pids; do kill -0 "$p" 2>/dev/null || { echo "FAIL snapshot-freeze-kill-setup: a process did not start"; exit 1; }; done
python3 "$here/snapshot_freeze_kill.py" "${PAGEMAP_BIN:-$build/pagemap}" "$cg" "$a" "$b" -- "$c" "$d" "u=$e" "n=${1:-5}"
