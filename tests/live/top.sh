#!/bin/sh
# top.sh - `pagemap top` as users run it: frames for scripts (-b, -J) checked against the kernel's smaps_rollup,
# and the terminal view driven in a real terminal (tmux, on a private server) at 100x30 and 80x24: the machine
# level lists a process this test started with its USS as smaps_rollup says, Enter shows its mappings, Enter on
# its memfd mapping shows that mapping's pages with the counts `maps` gives, q exits 0 and gives the terminal
# back (echo and canonical mode on), SIGTERM too, a process that ends under the view is said, a resize redraws
# within the new width; and as uid 65534, root's processes are said to be hidden, never shown as 0.
# Usage: tests/live/top.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap=$build/pagemap
command -v python3 >/dev/null || { echo "SKIP top: no python3 (the JSON checks)"; exit 77; }
[ -x "$build/pagemap-demo" ] || { echo "SKIP top: no $build/pagemap-demo (make all)"; exit 77; }
work=$(mktemp -d) || exit 1
sock=pmtop$$
demo= sleeper= nameless=
cleanup() {
	command -v tmux >/dev/null && tmux -L "$sock" kill-server 2>/dev/null
	exec 3>&- 2>/dev/null
	kill $demo $sleeper $nameless 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
pass() { echo "PASS top-$1"; }
failed() { echo "FAIL top-$1: $2"; fail=1; }

# The demo process (a known layout: a 1 MiB memfd half touched), alive while fd 3 is open.
mkfifo "$work/in"
: >"$work/demo.out"	# made here: the child opens its stdin (the FIFO, blocking) before its stdout
"$build/pagemap-demo" <"$work/in" >"$work/demo.out" &
demo=$!
exec 3>"$work/in"
i=0
while [ "$(wc -l <"$work/demo.out")" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$demo" 2>/dev/null || { echo "FAIL top-demo: the demo process did not start"; exit 1; }

# USS in bytes from smaps_rollup (Private_Clean + Private_Dirty).
rollup_uss() {
	awk '/^Private_(Clean|Dirty):/ { kb += $2 } END { print kb * 1024 }' "/proc/$1/smaps_rollup"
}

# The demo's file pages mapped by it alone (Private_Clean of its file mappings), in bytes: what another process
# mapping the same library (pagemap itself, while it reads) turns shared, so USS may move by this much while it
# is read, whoever reads it. Anonymous memory cannot move so: the rest of USS is exact.
file_private() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { file = ($6 ~ /^\//) } file && /^Private_Clean:/ { kb += $2 } END { print kb * 1024 }' \
		"/proc/$1/smaps"
}
near() {	# near GOT WANT SLACK
	awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; exit !(g != "" && (d < 0 ? -d : d) <= s) }'
}

# uss_steady OUT ARGS...: pagemap ARGS into OUT, again until the demo's USS is the same before and after (up to 5
# times: a process that ends elsewhere can leave a library page mapped by the demo alone, and USS moves); sets
# want (that USS) and rc.
uss_steady() {
	out=$1
	shift
	for try in 1 2 3 4 5; do
		before=$(rollup_uss "$demo")
		"$pagemap" "$@" >"$out" 2>"$out.err"
		rc=$?
		want=$(rollup_uss "$demo")
		slack=$(file_private "$demo")
		[ "$before" = "$want" ] && return
	done
	echo "# top: the demo's USS moved during each of 5 tries" >&2
}

# --- frames for scripts ---
uss_steady "$work/b" top -b -n 2 -d 0.2 -p "$demo" --bytes -o PID,USS,RSS
got=$(awk -v p="$demo" '$1 == p { v = $2 } END { print v }' "$work/b")
if [ $rc = 0 ] && near "$got" "$want" "$slack" && [ "$(grep -c '^pagemap top - ' "$work/b")" = 2 ]; then
	pass batch-uss
else
	failed batch-uss "rc $rc, USS $got, smaps_rollup $want (file pages of its own $slack), $(grep -c '^pagemap top - ' "$work/b") frames"
fi
uss_steady "$work/j" top -J -n 3 -d 0.2 -p "$demo"
if [ $rc = 0 ] && python3 - "$work/j" "$demo" "$want" "$slack" <<'EOF'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, len(lines)
for i, line in enumerate(lines, 1):
    f = json.loads(line)
    assert f["index"] == i and f["max_age"] >= f["oldest"] >= 0, f
    assert f["mem_total"] > 0 and f["read"] == f["read_moved"] + f["read_aged"], f
    rows = [r for r in f["processes"] if r["pid"] == int(sys.argv[2])]
    assert len(rows) == 1 and abs(rows[0]["uss"] - int(sys.argv[3])) <= int(sys.argv[4]), (rows, sys.argv[3:])
    # Keys a script names as .key in jq: lower case, digits and '_' (a change per second is NAME_per_s).
    keys = set(f) | {k for r in f["processes"] for k in r}
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in keys) and "pss_per_s" in keys, sorted(keys)
EOF
then pass json-lines; else failed json-lines "rc $rc: $(head -c 300 "$work/j") $(cat "$work/j.err")"; fi

# -g user: a UID without a passwd name is its own group, shown by its number, as ps --group-by user keys it
# (they were summed into one group, "?"). Two unused UIDs, one process and two.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v getent >/dev/null; then
	u1= u2=
	for u in $(seq 3990001 3990200); do
		getent passwd "$u" >/dev/null && continue
		[ -z "$u1" ] && u1=$u && continue
		u2=$u && break
	done
	for u in $u1 $u2 $u2; do
		setpriv --reuid="$u" --regid="$u" --clear-groups sleep 600 &
		nameless="$nameless $!"
	done
	for p in $nameless; do	# each has become sleep (setpriv execs it)
		i=0
		while [ "$(cat "/proc/$p/comm" 2>/dev/null)" != sleep ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	done
	pids=$(echo $nameless | tr ' ' ',')
	"$pagemap" top -b -n 1 -g user -p "$pids" --noheadings -o GROUP,PROCS >"$work/g" 2>&1
	"$pagemap" ps --group-by user -r -n -o USER,PROCESSES >"$work/pg" 2>&1
	if grep -qx " *$u1 *1" "$work/g" && grep -qx " *$u2 *2" "$work/g" && ! grep -q '?' "$work/g" &&
		grep -qx "$u1 1" "$work/pg" && grep -qx "$u2 2" "$work/pg"; then
		pass group-user-nameless
	else
		failed group-user-nameless "UIDs $u1 (1 process), $u2 (2): top -g user: $(tail -n 3 "$work/g" | tr '\n' '|') ps: $(grep -e "^$u1 " -e "^$u2 " "$work/pg" | tr '\n' '|')"
	fi
else
	echo "SKIP group-user-nameless: needs root, setpriv and getent to run processes under unnamed UIDs"
fi
"$pagemap" top -b -n 1 -d 0.2 --max-age 0.01 >/dev/null 2>"$work/e"
[ $? = 2 ] && grep -q "invalid --max-age" "$work/e" && pass bad-max-age || failed bad-max-age "$(cat "$work/e")"
"$pagemap" top -b -n 0 >/dev/null 2>"$work/e"
[ $? = 2 ] && grep -q "invalid count '0'" "$work/e" && pass bad-count || failed bad-count "$(cat "$work/e")"

command -v tmux >/dev/null || { echo "SKIP top-terminal: no tmux (Debian tmux)"; exit $fail; }
[ -n "${TERM:-}" ] && [ "$TERM" != dumb ] || export TERM=xterm

# screen NAME: the pane as text.
screen() { tmux -L "$sock" capture-pane -p -t "$1"; }
# wait_for NAME PATTERN: up to 5 s for the pane to show PATTERN.
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		screen "$1" | grep -q -- "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
keys() { tmux -L "$sock" send-keys -t "$@"; }

# A session that runs top, then says its exit status and the terminal's modes when top is done.
start() {
	name=$1 cols=$2 rows=$3
	shift 3
	tmux -L "$sock" new-session -d -s "$name" -x "$cols" -y "$rows" \
		"$* ; echo \"rc=\$?\"; stty -a | tr ' ' '\\n' | grep -x -e echo -e icanon -e -echo -e -icanon | tr '\\n' ' '; sleep 30"
}

for size in 100x30 80x24; do
	cols=${size%x*} rows=${size#*x}
	name=m$cols
	start "$name" "$cols" "$rows" "$pagemap" top -d 0.3 -p "$demo"
	if wait_for "$name" "pagemap-demo"; then
		row=$(screen "$name" | awk -v p="$demo" '$1 == p')
		want_h=$("$pagemap" top -b -n 1 -p "$demo" -o USS --noheadings | tail -n 1 | tr -d ' ')
		set -- $row	# PID USER COMMAND RSS PSS USS ...
		[ "$6" = "$want_h" ] && pass "uss-$size" || failed "uss-$size" "row '$row', USS of -b: $want_h"
		# The pane cuts what is wider than it: a heading that ends with its last column fitted.
		screen "$name" | grep -q " SHARED *PSS/s$" && pass "width-$size" ||
			failed "width-$size" "$(screen "$name" | grep 'PID USER')"
	else
		failed "machine-$size" "$(screen "$name" | head -12)"
	fi
	keys "$name" Enter
	nmaps=$("$pagemap" maps -r -n -o START "$demo" | wc -l)
	if wait_for "$name" "Process $demo (pagemap-demo): $nmaps mappings"; then
		pass "process-level-$size"
	else
		failed "process-level-$size" "$(screen "$name" | head -8)"
	fi
	# A mapping's swapped bytes under maps' name for them (SWAPPED; SWAP is smaps_rollup's, a process's).
	screen "$name" | grep -q " EXCLUSIVE *SWAPPED *THP " && pass "swapped-heading-$size" ||
		failed "swapped-heading-$size" "$(screen "$name" | grep ' EXCLUSIVE ')"
	# The memfd mapping: j down to its row (the rows are the mappings in address order, as maps lists them).
	idx=$("$pagemap" maps -r -n -o PATH "$demo" | grep -n 'demo-memfd' | head -n 1 | cut -d: -f1)
	rss=$("$pagemap" maps -r -b -o RSS,SIZE,PATH "$demo" | awk '/demo-memfd/ { print $1 / 4096, ($2 - $1) / 4096; exit }')
	n=1
	while [ $n -lt "$idx" ]; do keys "$name" j; n=$((n + 1)); done
	keys "$name" Enter
	set -- $rss
	if wait_for "$name" "f file $1\( \|\$\)" && screen "$name" | grep -q "\. not present $2\( \|\$\)"; then
		pass "mapping-level-$size"
	else
		failed "mapping-level-$size" "want file $1, not present $2: $(screen "$name" | head -3)"
	fi
	keys "$name" Escape
	keys "$name" Escape
	wait_for "$name" "Enter process" || failed "back-$size" "$(screen "$name" | tail -n 2)"
	keys "$name" q
	if wait_for "$name" "rc=0" && wait_for "$name" "^icanon echo"; then
		pass "quit-$size"
	else
		failed "quit-$size" "$(screen "$name" | tail -n 3)"
	fi
done

# No change reads alike in the view and in -b (it was "0" on the terminal, "0B" in -b): HUGETLB, which the
# demo never has, is the sort column, so its change per second is the last cell of the row.
start zero 100 30 "$pagemap" top -d 0.2 -s hugetlb -p "$demo"
if wait_for zero "pagemap-demo"; then
	i=0	# a frame with a change known (the row read twice): not "-" any more; at most 5 s
	while view=$(screen zero | awk -v p="$demo" '$1 == p { print $NF }') &&
		{ [ -z "$view" ] || [ "$view" = - ]; } && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	batch=$("$pagemap" top -b -n 2 -d 0.2 -s hugetlb -p "$demo" --noheadings -o HUGETLB/S | tail -n 1 | tr -d ' ')
	[ "$view" = "$batch" ] && [ "$view" = 0B ] && pass zero-change ||
		failed zero-change "view '$view', -b '$batch', want 0B"
else
	failed zero-change "$(screen zero | head -10)"
fi
keys zero q
wait_for zero "rc=0" || failed zero-quit "$(screen zero | tail -n 2)"

# SIGTERM: the terminal back, the status 0 (the view's normal end, as a series' Ctrl-C).
start term 100 30 "$pagemap" top -d 0.3
wait_for term "pagemap top -" || failed sigterm "no view"
pid=$(pgrep -n -f "^$pagemap top -d 0.3\$")
[ -n "$pid" ] && kill -TERM "$pid"
if wait_for term "rc=0" && wait_for term "^icanon echo"; then pass sigterm; else failed sigterm "pid '$pid': $(screen term | grep -v '^$' | tail -n 3)"; fi

# A process that ends under the process level, and a resize.
sleep 600 &
sleeper=$!
start gone 100 30 "$pagemap" top -d 0.2 -p "$sleeper"
wait_for gone "sleep" && keys gone Enter
wait_for gone "Process $sleeper (sleep)" || failed gone-open "$(screen gone | head -3)"
ended=$sleeper
kill "$sleeper"
wait "$sleeper" 2>/dev/null
sleeper=
wait_for gone "cannot open process $ended" && pass gone || failed gone "$(screen gone | head -3)"
keys gone Escape
# At 70 columns the view has room for four figures: SHARED goes, the change column stays.
tmux -L "$sock" resize-window -t gone -x 70 -y 20 2>/dev/null || tmux -L "$sock" resize-pane -t gone -x 70 -y 20
if wait_for gone " SWAP *PSS/s$" && ! screen gone | grep -q SHARED; then
	pass resize
else
	failed resize "$(screen gone | grep -v '^$' | head -8)"
fi
keys gone q
wait_for gone "rc=0" || failed gone-quit "$(screen gone | tail -n 2)"

# A frame that takes longer than -d: the view goes on by itself (it froze waiting for a key).
start slow 100 30 "$pagemap" top -d 0.05
wait_for slow "pagemap top - " || failed slow-start "$(screen slow | head -2)"
t1=$(screen slow | sed -n 's/^pagemap top - \([0-9:]*\),.*/\1/p')
sleep 2.5
t2=$(screen slow | sed -n 's/^pagemap top - \([0-9:]*\),.*/\1/p')
[ -n "$t1" ] && [ "$t1" != "$t2" ] && pass slow-frames || failed slow-frames "header at $t1, then $t2"
keys slow q
wait_for slow "rc=0" || failed slow-quit "$(screen slow | grep -v '^$' | tail -n 2)"

# SIGQUIT (Ctrl-\) gives the terminal back too; -n ends the view by itself; a 560-column terminal.
start quit 100 30 "$pagemap" top -d 0.3
wait_for quit "pagemap top - " && keys quit 'C-\'
wait_for quit "rc=0" && wait_for quit "^icanon echo" && pass sigquit || failed sigquit "$(screen quit | grep -v '^$' | tail -n 3)"
start count 100 30 "$pagemap" top -d 0.2 -n 2
wait_for count "rc=0" && pass interactive-count || failed interactive-count "$(screen count | grep -v '^$' | tail -n 2)"
start wide 560 30 "$pagemap" top -d 0.3
wait_for wide "PSS/s" && keys wide q
wait_for wide "rc=0" && pass wide-terminal || failed wide-terminal "$(screen wide | grep -v '^$' | tail -n 2 | cut -c1-200)"
# No terminal to read keys from: frames, as -b.
start nokeys 100 30 "$pagemap" top -n 1 -p "$demo" "</dev/null"
wait_for nokeys "rc=0" && screen nokeys | grep -q "^ *PID USER" && pass stdin-not-a-terminal ||
	failed stdin-not-a-terminal "$(screen nokeys | grep -v '^$' | tail -n 4)"

# w: the pages a writer writes per frame (8 MiB, every page, every 0.1 s), after a notice of what watching does.
python3 -c '
import time
b = bytearray(8 << 20)
while True:
    for i in range(0, len(b), 4096): b[i] = (b[i] + 1) & 255
    time.sleep(0.1)' &
writer=$!
sleeper="$sleeper $writer"
start watch 100 30 "$pagemap" top -d 0.5 -p "$writer"
wait_for watch "python3" && keys watch Enter
wait_for watch "Process $writer" && keys watch w
if wait_for watch "cannot watch writes"; then
	echo "SKIP top-watch: $(screen watch | grep 'cannot watch writes')"
elif wait_for watch "w again: watch writes by" && keys watch w && wait_for watch "WRITTEN" &&
	wait_for watch " 8M rw-p\( \|$\)"; then
	pass watch
else
	failed watch "$(screen watch | grep -v '^$' | head -12)"
fi
keys watch q
wait_for watch "rc=0" || failed watch-quit "$(screen watch | grep -v '^$' | tail -n 2)"

# Unprivileged: root's processes are hidden and said so, never shown with figures.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	. "$src/tests/live/lib/nobody.sh"
	nb=$(nobody_pagemap "$pagemap" "$work") || { failed nobody-copy "cannot give uid 65534 a pagemap"; exit 1; }
	setpriv --reuid=65534 --regid=65534 --clear-groups "$nb" top -b -n 1 -p 1,"$demo" --bytes -o PID,USS >"$work/u" 2>&1
	if grep -q "smaps_rollup this reader may not read: shown as - (root reads it)" "$work/u" &&
		awk -v p="$demo" '$1 == p && $2 == "-" { ok = 1 } END { exit !ok }' "$work/u"; then
		pass unprivileged
	else
		failed unprivileged "$(cat "$work/u")"
	fi
	# The three levels in a terminal, as uid 65534, on a process of its own.
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600 &
	mine=$!
	sleeper="$sleeper $mine"
	start nobody 100 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$nb" top -d 0.3 -p "$mine,1"
	if wait_for nobody "sleep" && wait_for nobody "shown as - (root reads it)"; then
		keys nobody Enter
		if wait_for nobody "Process $mine (sleep)" && keys nobody Enter && wait_for nobody "per cell"; then
			pass unprivileged-levels
		else
			failed unprivileged-levels "$(screen nobody | grep -v '^$' | head -6)"
		fi
	else
		failed unprivileged-levels "$(screen nobody | grep -v '^$' | head -6)"
	fi
	keys nobody q
	wait_for nobody "rc=0" || failed unprivileged-quit "$(screen nobody | grep -v '^$' | tail -n 2)"
fi
exit $fail
