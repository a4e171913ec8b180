#!/bin/sh
# snapshot_freeze.sh - `pagemap snapshot --cgroup PATH [--freeze]` and `-p PID --freeze` on processes of the test's
# own: the file holds exactly the cgroup's processes (one in a cgroup below it too), each with its META read window;
# the snapshot's own copy of each process's state shows it held (frozen: S instead of a busy loop's R; SIGSTOP: T),
# and afterwards it runs again, cgroup.freeze back to 0; a cgroup frozen before and a process stopped before stay
# so, and one whose user.* mark its delegated owner forged too; SIGTERM during a frozen snapshot thaws first; -p of a process alone in a leaf cgroup is held by its freezer;
# a missing cgroup and --freeze --all are refused.
# The test's cgroups (below the cgroup v2 root, found in /proc/self/mountinfo) and processes go on any exit.
# Usage: tests/live/snapshot_freeze.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
skip() { echo "SKIP snapshot-freeze: $1"; exit 77; }
command -v python3 >/dev/null || skip "no python3 (reads META)"
[ "$(id -u)" = 0 ] || skip "not root (making cgroups needs it)"
# The cgroup v2 mount of the whole hierarchy: /sys/fs/cgroup, or a hybrid host's (v1 beside it) .../unified.
v2=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2" && $4 == "/") print $5 }' /proc/self/mountinfo |
	awk 'NR == 1 { m = $0 } $0 == "/sys/fs/cgroup" { m = $0 } END { print m }')
[ -n "$v2" ] && [ -f "$v2/cgroup.procs" ] || skip "cgroup v2 is not mounted"
work=$(mktemp -d) || exit 1
name=pagemap-test-$$
cg=$v2/$name pids='' rc_all=0
cleanup() {
	[ -f "$cg/cgroup.freeze" ] && echo 0 >"$cg/cgroup.freeze"
	for p in $pids; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	for p in $pids; do i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; done
	[ -d "$cg/sub" ] && rmdir "$cg/sub"
	[ -d "$cg" ] && chown 0:0 "$cg" && rmdir "$cg"
	[ -d "$cg-leaf" ] && rmdir "$cg-leaf"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$cg" 2>"$work/err" || skip "cannot make a cgroup in $v2: $(cat "$work/err")"
[ -f "$cg/cgroup.freeze" ] || skip "no cgroup.freeze in $cg (Linux 5.2+)"
mkdir "$cg/sub" || exit 1

until_5s() {	# until_5s CMD...: wait (5 s at most) until CMD succeeds; its status
	i=0
	until "$@"; do
		[ $i -ge 100 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}
fail() { echo "FAIL snapshot-freeze-$1: $2"; rc_all=1; }
pass() { echo "PASS snapshot-freeze-$1"; }
# start CGROUP|- CMD: a child of the test running CMD (in CGROUP's directory, if given); its PID on stdout
start() {
	# shellcheck disable=SC2016
	sh -c '[ "$1" = - ] || echo $$ >"$1/cgroup.procs" || exit 1; shift; exec nice -n 19 "$@"' sh "$@" >/dev/null 2>&1 &
	echo $!
}
busy='while :; do :; done'	# R whenever it is not held (started under nice -n 19: CI runs QEMU guests beside it)
a=$(start "$cg" sh -c "$busy") b=$(start "$cg/sub" sh -c "$busy") c=$(start - sleep 1000)
pids="$a $b $c"
sleep 0.3
for p in $a $b; do grep -qx "$p" "$cg/cgroup.procs" "$cg/sub/cgroup.procs" 2>/dev/null ||
	grep -q "^0::/$name" "/proc/$p/cgroup" || { echo "FAIL snapshot-freeze-setup: $p not in $cg"; exit 1; }; done

meta() {	# meta FILE: the META lines (pagemap-snapshot(5): sections from byte 16, META payloads are the lines)
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 16
while off + 24 <= len(d):
    t, _, n, _ = struct.unpack_from("<IIQQ", d, off)
    if t == 1:
        sys.stdout.write(d[off + 24:off + 24 + n].decode())
    if t == 5:
        break
    off += 24 + n
PY
}
procs() {	# procs FILE: the PIDs the snapshot holds, sorted
	"$pagemap" snapshot --list "$1" | sed -n 's|.* proc/\([0-9]*\)/maps$|\1|p' | sort -nu | tr '\n' ' '
}
state() {	# state TREE PID: the state letter of the process's stat as the snapshot holds it
	sed 's/.*) \(.\).*/\1/' "$1/proc/$2/stat"
}
live() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat"; }
windows_ok() {	# windows_ok FILE PID...: a window.PID=START,END for each, START <= END, within frozen_window if any
	meta "$1" >"$work/meta" || return 1
	f=$(sed -n 's/^frozen_window=//p' "$work/meta")
	shift
	for p in "$@"; do
		w=$(sed -n "s/^window\.$p=//p" "$work/meta")
		[ -n "$w" ] || { echo "no window.$p"; return 1; }
		python3 -c 'import sys
s, e = map(int, sys.argv[1].split(","))
assert 0 < s <= e, "window %s" % sys.argv[1]
if sys.argv[2]:
    fs, fe = map(int, sys.argv[2].split(","))
    assert fs <= s and e <= fe, "window %s outside frozen_window %s" % (sys.argv[1], sys.argv[2])' "$w" "$f" 2>&1 |
			tail -n 1 | grep . && return 1
	done
	return 0
}
want=$(printf '%s\n' "$a" "$b" | sort -n | tr '\n' ' ')

# --cgroup without --freeze: that cgroup's processes and its sub-cgroup's, nothing else; not frozen.
if ! err=$("$pagemap" snapshot --cgroup "/$name" -o "$work/plain.snap" 2>&1); then
	fail cgroup "$err"
elif [ "$(procs "$work/plain.snap")" != "$want" ]; then
	fail cgroup "holds $(procs "$work/plain.snap"), want $want"
elif ! why=$(windows_ok "$work/plain.snap" "$a" "$b"); then
	fail cgroup "$why"
elif grep -q '^frozen' "$work/meta" || ! grep -qx "cgroup=/$name" "$work/meta"; then
	fail cgroup "META: $(grep -e ^frozen -e ^cgroup "$work/meta")"
else
	pass cgroup
fi

# --cgroup --freeze: held (S, not the loop's R, in the snapshot's own stat), running again after, cgroup.freeze 0.
if ! err=$("$pagemap" snapshot --cgroup "/$name" --freeze -o "$work/frozen.snap" 2>&1); then
	fail cgroup-freeze "$err"
else
	"$pagemap" snapshot --to-tree "$work/frozen.tree" "$work/frozen.snap" || exit 1
	sleep 0.1
	if [ "$(procs "$work/frozen.snap")" != "$want" ]; then
		fail cgroup-freeze "holds $(procs "$work/frozen.snap"), want $want"
	elif ! why=$(windows_ok "$work/frozen.snap" "$a" "$b"); then
		fail cgroup-freeze "$why"
	elif ! grep -qx frozen=cgroup "$work/meta" || grep -q ^frozen_already "$work/meta"; then
		fail cgroup-freeze "META: $(grep ^frozen "$work/meta")"
	elif [ "$(state "$work/frozen.tree" "$a")$(state "$work/frozen.tree" "$b")" != SS ]; then
		fail cgroup-freeze "not frozen while read: states $(state "$work/frozen.tree" "$a")$(state "$work/frozen.tree" "$b")"
	elif [ "$(cat "$cg/cgroup.freeze")" != 0 ] || ! grep -qx "frozen 0" "$cg/cgroup.events"; then
		fail cgroup-freeze "left frozen: cgroup.freeze $(cat "$cg/cgroup.freeze"), $(grep frozen "$cg/cgroup.events")"
		echo 0 >"$cg/cgroup.freeze"
	elif [ "$(live "$a")$(live "$b")" != RR ]; then
		fail cgroup-freeze "not running after: states $(live "$a")$(live "$b")"
	else
		pass cgroup-freeze
	fi
fi

# A cgroup someone else froze is left frozen (and said so).
echo 1 >"$cg/cgroup.freeze"
until_5s grep -qx "frozen 1" "$cg/cgroup.events" || { echo "FAIL snapshot-freeze-setup: cannot freeze $cg"; exit 1; }
if ! err=$("$pagemap" snapshot --cgroup "/$name" --freeze -o "$work/already.snap" 2>&1); then
	fail cgroup-already "$err"
elif [ "$(cat "$cg/cgroup.freeze")" != 1 ] || ! grep -qx "frozen 1" "$cg/cgroup.events"; then
	fail cgroup-already "thawed a cgroup it did not freeze"
elif ! meta "$work/already.snap" >"$work/meta" || ! grep -qx frozen_already=cgroup "$work/meta"; then
	fail cgroup-already "no frozen_already=cgroup in META"
else
	pass cgroup-already
fi
echo 0 >"$cg/cgroup.freeze"
until_5s grep -qx "frozen 0" "$cg/cgroup.events" || { echo "FAIL snapshot-freeze-setup: cannot thaw $cg"; exit 1; }

# A mark forged by the cgroup's delegated owner (uid 65534 sets user.pagemap.frozen_by to a holder that is gone, as
# a pagemap killed with its guardian would leave): root trusts only trusted.*, so the freeze stays someone else's.
echo 1 >"$cg/cgroup.freeze"
until_5s grep -qx "frozen 1" "$cg/cgroup.events" || { echo "FAIL snapshot-freeze-setup: cannot freeze $cg"; exit 1; }
chown 65534:65534 "$cg"
forge='import os, sys; os.setxattr(sys.argv[1], "user.pagemap.frozen_by", b"1 1")'
# As that user where a python3 it may run exists (a pyenv shim under /root is not), else as root: the same bytes.
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$forge" "$cg" 2>/dev/null ||
	python3 -c "$forge" "$cg" 2>"$work/err"
if ! python3 -c 'import os, sys; os.getxattr(sys.argv[1], "user.pagemap.frozen_by")' "$cg" 2>/dev/null; then
	echo "SKIP snapshot-freeze-forged-mark: cannot set user.* on $cg: $(cat "$work/err")"
elif ! err=$("$pagemap" snapshot --cgroup "/$name" --freeze -o "$work/forged.snap" 2>&1); then
	fail forged-mark "$err"
elif [ "$(cat "$cg/cgroup.freeze")" != 1 ] || ! grep -qx "frozen 1" "$cg/cgroup.events"; then
	fail forged-mark "thawed a cgroup on a mark its owner forged: $err"
elif ! meta "$work/forged.snap" >"$work/meta" || ! grep -qx frozen_already=cgroup "$work/meta" || [ -n "$err" ]; then
	fail forged-mark "META $(grep ^frozen "$work/meta" | tr '\n' ' '), stderr: $err"
else
	pass forged-mark
fi
python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.pagemap.frozen_by")' "$cg" 2>/dev/null
chown 0:0 "$cg"
echo 0 >"$cg/cgroup.freeze"
until_5s grep -qx "frozen 0" "$cg/cgroup.events" || { echo "FAIL snapshot-freeze-setup: cannot thaw $cg"; exit 1; }

# SIGTERM while the cgroup is frozen (its smaps_rollup read held up 2 s by strace): thawed, then ended by SIGTERM.
if command -v strace >/dev/null; then
	strace -f -qq -o /dev/null -P "/proc/$a/smaps_rollup" -e trace=openat -e inject=openat:delay_exit=2000000 \
		"$pagemap" snapshot --cgroup "/$name" --freeze --one-thread -o "$work/term.snap" 2>"$work/term.err" &
	st=$!
	i=0
	while ! grep -qx "frozen 1" "$cg/cgroup.events" && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
	sleep 0.2
	pm=$(pgrep -P "$st" -x pagemap)	# strace's child: the pagemap it started
	[ -n "$pm" ] && kill -TERM "$pm"
	wait "$st" 2>/dev/null	# (the shell would say "Terminated")
	sleep 0.1
	if [ -z "$pm" ] || [ $i -ge 100 ]; then
		fail sigterm "the snapshot did not freeze the cgroup (pagemap ${pm:-not found})"
	elif [ "$(cat "$cg/cgroup.freeze")" != 0 ] || ! grep -qx "frozen 0" "$cg/cgroup.events"; then
		fail sigterm "left frozen after SIGTERM: cgroup.freeze $(cat "$cg/cgroup.freeze")"
		echo 0 >"$cg/cgroup.freeze"
	elif [ -e "$work/term.snap" ]; then
		fail sigterm "a snapshot was written"
	else
		pass sigterm
	fi
else
	echo "SKIP snapshot-freeze-sigterm: no strace (holds the snapshot up while it is frozen)"
fi

# -p PID --freeze: stopped while read (T in the snapshot's stat), running after; one stopped before stays stopped.
echo 0 >"$cg/cgroup.freeze"
until_5s grep -qx "frozen 0" "$cg/cgroup.events" || { echo "FAIL snapshot-freeze-setup: cannot thaw $cg"; exit 1; }
kill -STOP "$b"
stopped() { [ "$(live "$1")" = T ]; }
until_5s stopped "$b" || { echo "FAIL snapshot-freeze-setup: $b did not stop"; exit 1; }
if ! err=$("$pagemap" snapshot -p "$c,$b" --freeze -o "$work/stop.snap" 2>&1); then
	fail sigstop "$err"
else
	"$pagemap" snapshot --to-tree "$work/stop.tree" "$work/stop.snap" || exit 1
	sleep 0.1
	if ! why=$(windows_ok "$work/stop.snap" "$c" "$b"); then
		fail sigstop "$why"
	elif ! grep -qx frozen=sigstop "$work/meta" || ! grep -qx "frozen_already=$b" "$work/meta"; then
		fail sigstop "META: $(grep ^frozen "$work/meta")"
	elif [ "$(state "$work/stop.tree" "$c")" != T ]; then
		fail sigstop "not stopped while read: state $(state "$work/stop.tree" "$c")"
	elif [ "$(live "$c")" != S ]; then
		fail sigstop "not running after: state $(live "$c")"
	elif [ "$(live "$b")" != T ]; then
		fail sigstop "continued a process someone else stopped: state $(live "$b")"
	else
		pass sigstop
	fi
fi
kill -CONT "$b"

# SIGTERM just after the SIGSTOP took effect, before pagemap's next instruction (strace holds the stopping call's
# return 1 s): the process must not stay stopped.
if command -v strace >/dev/null; then
	strace -qq -o /dev/null -e trace=kill,pidfd_send_signal -e inject=kill,pidfd_send_signal:delay_exit=1000000 \
		"$pagemap" snapshot -p "$c" --freeze -o "$work/stopterm.snap" 2>"$work/stopterm.err" &
	st=$!
	until_5s stopped "$c"
	pm=$(pgrep -P "$st" -x pagemap)
	[ -n "$pm" ] && kill -TERM "$pm"
	wait "$st" 2>/dev/null
	if [ -z "$pm" ]; then
		fail sigterm-stopping "pagemap not found under strace"
	elif until_5s sh -c "[ \"\$(sed 's/.*) \(.\).*/\1/' /proc/$c/stat)\" != T ]"; then
		pass sigterm-stopping
	else
		fail sigterm-stopping "process $c left stopped by a SIGTERM that came as it was stopped"
		kill -CONT "$c"
	fi
else
	echo "SKIP snapshot-freeze-sigterm-stopping: no strace (holds the stopping call up)"
fi

# -p PID --freeze of a process alone in a leaf cgroup: held by that cgroup's freezer, not SIGSTOP (S in the snapshot,
# META frozen=cgroup and frozen_cgroup), thawed after; with company in its cgroup, SIGSTOP as before.
if mkdir "$cg-leaf"; then
	l=$(start "$cg-leaf" sh -c "$busy")
	pids="$pids $l"
	until_5s grep -qx "$l" "$cg-leaf/cgroup.procs" || { echo "FAIL snapshot-freeze-setup: $l not in $cg-leaf"; exit 1; }
	if ! err=$("$pagemap" snapshot -p "$l" --freeze -o "$work/leaf.snap" 2>&1); then
		fail sigstop-leaf "$err"
	else
		"$pagemap" snapshot --to-tree "$work/leaf.tree" "$work/leaf.snap" || exit 1
		meta "$work/leaf.snap" >"$work/meta"
		if ! grep -qx frozen=cgroup "$work/meta" || ! grep -qx "frozen_cgroup=/$name-leaf" "$work/meta"; then
			fail sigstop-leaf "META: $(grep ^frozen "$work/meta" | tr '\n' ' ')"
		elif [ "$(state "$work/leaf.tree" "$l")" != S ]; then
			fail sigstop-leaf "not frozen while read: state $(state "$work/leaf.tree" "$l")"
		elif [ "$(cat "$cg-leaf/cgroup.freeze")" != 0 ] || ! until_5s grep -qx "frozen 0" "$cg-leaf/cgroup.events"; then
			fail sigstop-leaf "left frozen: $(grep frozen "$cg-leaf/cgroup.events")"
			echo 0 >"$cg-leaf/cgroup.freeze"
		else
			pass sigstop-leaf
		fi
	fi
	# Company in the leaf (a process not listed): SIGSTOP, as the cgroup's freezer would hold the other too.
	m=$(start "$cg-leaf" sleep 1000)
	pids="$pids $m"
	until_5s grep -qx "$m" "$cg-leaf/cgroup.procs" || { echo "FAIL snapshot-freeze-setup: $m not in $cg-leaf"; exit 1; }
	if ! err=$("$pagemap" snapshot -p "$l" --freeze -o "$work/leaf2.snap" 2>&1); then
		fail sigstop-leaf-company "$err"
	elif ! meta "$work/leaf2.snap" >"$work/meta" || ! grep -qx frozen=sigstop "$work/meta" ||
		[ "$(cat "$cg-leaf/cgroup.freeze")" != 0 ]; then
		fail sigstop-leaf-company "META: $(grep ^frozen "$work/meta" | tr '\n' ' ')"
	else
		pass sigstop-leaf-company
	fi
else
	echo "SKIP snapshot-freeze-sigstop-leaf: cannot make $cg-leaf"
fi

# Refusals: a missing cgroup (one line, exit 1, no file), --freeze --all (usage, exit 2).
"$pagemap" snapshot --cgroup "/$name-none" -o "$work/none.snap" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q "no cgroup /$name-none" "$work/err" && [ ! -e "$work/none.snap" ]; then
	pass missing-cgroup
else
	fail missing-cgroup "exit $rc, file $([ -e "$work/none.snap" ] && echo written || echo none): $(cat "$work/err")"
fi
"$pagemap" snapshot --all --freeze -o "$work/all.snap" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc = 2 ] && grep -q -- "--freeze takes -p or --cgroup: freezing every process" "$work/err" && [ ! -e "$work/all.snap" ]; then
	pass freeze-all
else
	fail freeze-all "exit $rc: $(cat "$work/err")"
fi
exit $rc_all
