#!/bin/sh
# snapshot_freeze_tty.sh - `snapshot -p PID --freeze` refuses a process that is the foreground job of its terminal
# (SIGSTOP would hand the terminal back to the shell: after SIGCONT the program runs in the background and the
# next keystrokes go to the shell as commands). A real pty from script(1), an interactive bash in it running a busy
# loop of ours in the foreground; afterwards the loop must still be the terminal's foreground and running. The
# same loop alone in a cgroup of its own is held by that cgroup's freezer instead, and keeps its terminal.
# Usage: tests/live/snapshot_freeze_tty.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
skip() { echo "SKIP snapshot-freeze-tty: $1"; exit 77; }
command -v script >/dev/null || skip "no script(1) (package bsdutils) for a pty"
command -v bash >/dev/null || skip "no bash (an interactive shell with job control)"
work=$(mktemp -d) || exit 1
loop='' spid=''
cg=''
cleanup() {
	[ -n "$cg" ] && [ -f "$cg/cgroup.freeze" ] && echo 0 >"$cg/cgroup.freeze"
	[ -n "$loop" ] && kill -CONT "$loop" 2>/dev/null && kill -9 "$loop" 2>/dev/null
	[ -n "$loop" ] && while kill -0 "$loop" 2>/dev/null; do sleep 0.05; done
	exec 3>&- 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$cg" ] && [ -d "$cg" ] && rmdir "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkfifo "$work/in" || exit 1
# The shell's input: a line that starts the loop in the foreground, then nothing until the test ends.
script -q -c "bash --norc --noprofile -i" /dev/null <"$work/in" >"$work/tty.log" 2>&1 &
spid=$!
exec 3>"$work/in"
echo "sh -c 'echo \$\$ >$work/pid; exec sh -c \"while :; do :; done\"'" >&3
i=0
while [ ! -s "$work/pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
loop=$(cat "$work/pid" 2>/dev/null)
[ -n "$loop" ] || skip "the loop did not start in the pty"
fg() {	# fg PID: is it its terminal's foreground process group (stat: pgrp == tpgid, a terminal)?
	sed 's/.*) //' "/proc/$1/stat" | awk '{ exit !($5 != 0 && $3 == $6) }'
}
i=0
while ! fg "$loop" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
fg "$loop" || skip "the loop is not its terminal's foreground"
"$pagemap" snapshot -p "$loop" --freeze -o "$work/s.snap" >"$work/out" 2>"$work/err"
rc=$?
sleep 0.2	# the shell's turn to take the terminal, if the loop was stopped
st=$(sed 's/.*) \(.\).*/\1/' "/proc/$loop/stat")
if [ $rc != 1 ] || ! grep -q "cannot stop process $loop: it is the foreground job of its terminal" "$work/err"; then
	echo "FAIL snapshot-freeze-tty: exit $rc, not refused: $(head -n 2 "$work/err" | tr '\n' ' ')"
	fg "$loop" || echo "FAIL snapshot-freeze-tty-fg: the loop lost the terminal's foreground (state $st)"
	exit 1
elif ! fg "$loop" || [ "$st" = T ] || [ -e "$work/s.snap" ]; then
	echo "FAIL snapshot-freeze-tty: refused, but state $st, foreground $(fg "$loop" && echo yes || echo no)"
	exit 1
fi
echo "PASS snapshot-freeze-tty"

# The same job alone in a cgroup of its own: held by that cgroup's freezer, which job control does not see.
v2=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2" && $4 == "/") print $5 }' /proc/self/mountinfo |
	awk 'NR == 1 { m = $0 } $0 == "/sys/fs/cgroup" { m = $0 } END { print m }')
if [ "$(id -u)" != 0 ] || [ -z "$v2" ] || ! mkdir "$v2/pagemap-tty-$$" 2>/dev/null; then
	echo "SKIP snapshot-freeze-tty-leaf: needs root and a cgroup v2 to make"
	exit 0
fi
cg=$v2/pagemap-tty-$$
echo "$loop" >"$cg/cgroup.procs" || exit 1
"$pagemap" snapshot -p "$loop" --freeze -o "$work/leaf.snap" >"$work/out" 2>"$work/err"
rc=$?
sleep 0.2	# as above: the shell's turn, had the loop been stopped
st=$(sed 's/.*) \(.\).*/\1/' "/proc/$loop/stat")
if [ $rc != 0 ]; then
	echo "FAIL snapshot-freeze-tty-leaf: exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
	exit 1
elif ! fg "$loop" || [ "$st" = T ] || ! grep -qx "frozen 0" "$cg/cgroup.events"; then
	echo "FAIL snapshot-freeze-tty-leaf: state $st, foreground $(fg "$loop" && echo yes || echo no), $(grep frozen "$cg/cgroup.events")"
	exit 1
fi
echo "PASS snapshot-freeze-tty-leaf"
