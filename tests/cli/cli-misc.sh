#!/bin/sh
# cli-misc.sh - CLI behaviour the golden cases cannot express: exit statuses of track -- CMD, an empty --root.
# Usage: tests/cli/cli-misc.sh   (PAGEMAP_BUILD comes from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"

check() {	# check NAME WANT_STATUS CMD...: the command exits WANT_STATUS
	name=$1 want=$2
	shift 2
	err=$("$@" 2>&1 >/dev/null </dev/null)
	rc=$?
	if [ "$rc" = "$want" ]; then echo "PASS $name"; else echo "FAIL $name: exit $rc, want $want"; printf '%s\n' "$err" | tail -n 5 | sed 's/^/  /'; fi
}

says() {	# says NAME WANT_STATUS WANT_FIRST_STDERR_LINE CMD...: the status and the message
	name=$1 want=$2 line=$3
	shift 3
	err=$("$@" 2>&1 >/dev/null </dev/null)
	rc=$?
	if [ "$rc" = "$want" ] && [ "$(printf '%s\n' "$err" | head -n 1)" = "$line" ]; then echo "PASS $name"
	else echo "FAIL $name: exit $rc, want $want; stderr '$err', want '$line'"; fi
}

check root-empty 2 "$pagemap" --root "" features
# A negative number is an operand (no command has a digit for an option): the command names it.
says wss-negative-interval 2 "pagemap: invalid interval '-1' (seconds, such as 1 or 0.5)" "$pagemap" wss self -1
says wss-negative-first 2 "pagemap: invalid PID '-1'" "$pagemap" wss -1 self
says track-negative-count 2 "pagemap: invalid count '-5'" "$pagemap" track 1 1 -5
says track-negative-interval 2 "pagemap: invalid interval '-0.5' (seconds, at least 0.01)" "$pagemap" track -0.5 -- true
says maps-negative-pid 2 "pagemap: invalid PID '-3'" "$pagemap" maps -J -3
says wss-method-arg 2 "pagemap: unknown method '-1' (auto, idle or referenced)" "$pagemap" wss -m -1 self
says wss-after-dashdash 2 "pagemap: invalid interval '-2' (seconds, such as 1 or 0.5)" "$pagemap" wss self -- -2
check root-empty-eq 2 "$pagemap" --root= features

# One -p PID,... parser for ps, top and snapshot: every PID between the commas, each a PID, one message.
for cmd in ps top snapshot; do
	for list in "" "1,,2" "1," ",1" "-1" "99999999999" "5000000" "1x" "+3" " 1" "0"; do
		bad=$list
		case $list in 1,,2|1,) bad="" ;; ,1) bad="" ;; esac
		out=; [ $cmd = snapshot ] && out="-o /dev/null"
		# shellcheck disable=SC2086
		says "pid-list-$cmd-'$list'" 2 "pagemap: invalid PID '$bad'" "$pagemap" $cmd -p "$list" $out
	done
done
says pid-list-snapshot-self-ok 2 "pagemap: --freeze cannot stop pagemap itself (-p self or its PID)" \
	"$pagemap" snapshot --freeze -p 1,self -o /dev/null
says pid-list-top-self 2 "pagemap: invalid PID 'self'" "$pagemap" top -b -n 1 -p 1,self

# audit's folded rows: PIDS is a list of numbers in JSON (a script reads it without splitting text), and the
# table's comma-separated text.
if command -v python3 >/dev/null && [ -d "$src/tests/fixtures/audit-6.18-plain/proc" ]; then
	aud="$pagemap --root $src/tests/fixtures/audit-6.18-plain audit"
	if $aud -J -o NAME,COUNT,PIDS 2>/dev/null | python3 -c '
import json, sys
rows = json.load(sys.stdin)["audit"]
for r in rows:
    p = r["pids"]
    assert p is None or (isinstance(p, list) and len(p) == r["count"] and all(type(x) is int for x in p)), r
assert [1, 640, 700] in [r["pids"] for r in rows], rows' &&
	   $aud -r -o NAME,PIDS 2>/dev/null | grep -qx 'cap-sys-admin 1,640,700'; then
		echo "PASS audit-pids-json-array"
	else
		echo "FAIL audit-pids-json-array: $($aud -J -o NAME,PIDS 2>&1 | grep -m1 '"pids": [^n]')"
	fi
else
	echo "SKIP audit-pids-json-array: no python3 or no fixture tree"
fi

# track -- CMD exits with CMD's status, as time(1); needs a method that works here.
if "$pagemap" track 0.05 -- true >/dev/null 2>&1; then
	check track-status-0 0 "$pagemap" track 0.05 -- true
	check track-status-7 7 "$pagemap" track 0.05 -- sh -c 'sleep 0.2; exit 7'
	check track-status-early 3 "$pagemap" track 0.05 -- sh -c 'exit 3'
	check track-status-signal 143 "$pagemap" track 0.05 -- sh -c 'sleep 0.2; kill -TERM $$'
	check track-status-notfound 127 "$pagemap" track 0.05 -- /nonexistent/command
	check track-status-notexec 126 "$pagemap" track 0.05 -- /
	# A command whose name holds a newline (its stat line is two lines of text): still ours to report.
	nl=$(mktemp -d)
	ln -s "$(command -v sh)" "$nl/a
b)"
	check track-status-newline-name 5 "$pagemap" track 0.05 -- "$nl/a
b)" -c 'sleep 0.2; exit 5'
	rm -rf "$nl"
	# Ctrl-C: SIGINT to pagemap is passed on to the command, whose status (130) is the answer.
	"$pagemap" track 0.05 -- sleep 10 >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	kill -INT $pid
	wait $pid
	rc=$?
	if [ $rc = 130 ]; then echo "PASS track-status-sigint"; else echo "FAIL track-status-sigint: exit $rc, want 130"; fi
	# A process tracked by PID that execs is followed into its new program; one that exits is not said to exec.
	tmp=$(mktemp -d)
	sh -c 'sleep 0.4; exec sleep 0.6' &
	pid=$!
	"$pagemap" track "$pid" 0.05 >/dev/null 2>"$tmp/exec.err"
	rc=$?
	if [ $rc = 0 ] && grep -q "exec'd: watching its new program" "$tmp/exec.err" && grep -q "exited" "$tmp/exec.err"; then
		echo "PASS track-follows-exec"
	else
		echo "FAIL track-follows-exec: exit $rc"; tail -n 5 "$tmp/exec.err" | sed 's/^/  /'
	fi
	ok=1
	for i in 1 2 3 4 5; do
		sleep 0.3 &
		pid=$!
		# Until the shell's child has exec'd sleep: on a loaded machine track could otherwise see that exec.
		n=0
		while [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sleep ] && [ $n -lt 100 ]; do
			sleep 0.01
			n=$((n + 1))
		done
		"$pagemap" track "$pid" 0.02 >/dev/null 2>"$tmp/exit.err" || ok=0
		if grep -q "exec'd" "$tmp/exit.err" || ! grep -q "exited" "$tmp/exit.err"; then ok=0; fi
		wait "$pid"
	done
	if [ $ok = 1 ]; then echo "PASS track-exit-not-exec"; else echo "FAIL track-exit-not-exec"; tail -n 5 "$tmp/exit.err" | sed 's/^/  /'; fi
	# A command held for its last interval (traced) still stops on SIGSTOP and goes on at SIGCONT.
	timeout 30 "$pagemap" track 0.05 -- sh -c 'kill -STOP $$; exit 5' >/dev/null 2>&1 &
	pid=$!
	n=0
	while ! grep -qs '^State:.*[tT] ' /proc/$(pgrep -P "$(pgrep -P $pid | head -n 1)" 2>/dev/null | head -n 1)/status \
	      && [ $n -lt 200 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	child=$(pgrep -P "$(pgrep -P $pid | head -n 1)" | head -n 1)
	sleep 0.3
	[ -n "$child" ] && kill -CONT "$child"
	wait $pid
	rc=$?
	if [ $rc = 5 ]; then echo "PASS track-held-stop-cont"; else echo "FAIL track-held-stop-cont: exit $rc, want 5"; fi
	rm -rf "$tmp"
else
	echo "SKIP track-status: pagemap track cannot track a command on this machine"
fi

# phys --help names -b once (it is --bits there; --bytes has no short form).
n=$("$pagemap" phys --help | grep -c -- '^ *-b,')
if [ "$n" = 1 ]; then echo "PASS phys-help-b-once"; else echo "FAIL phys-help-b-once: -b listed $n times"; fi

# -o "" is a usage error with a message, in every command that has -o.
fx=$(mktemp -d) || exit 1
trap 'rm -rf "$fx"' EXIT
"$src/tests/fixtures/unpack" "$src/tests/fixtures/phys-synth" "$fx/t" >/dev/null 2>&1
for cmd in "v2p 3131 0x555500000123" "maps 3131" "pages 3131" "phys" "ps" "features"; do
	sub=${cmd%% *}
	args=${cmd#"$sub"}
	# shellcheck disable=SC2086
	err=$("$pagemap" --root "$fx/t" $sub -o "" $args 2>&1 >/dev/null)
	rc=$?
	case $rc:$err in
	2:"pagemap: no columns to show"*) echo "PASS empty-output-list $sub" ;;
	*) echo "FAIL empty-output-list $sub: exit $rc, stderr '$err'" ;;
	esac
done

# ps -p: a kernel thread, a PID that does not exist, and " 1" (strict decimal).
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	check ps-pid-kthread 1 "$pagemap" ps -p 2
	# Only the error line: no empty table before it (a command that has no row to show shows none).
	out=$("$pagemap" ps -p 2 2>"$fx/kthread.err")
	want="pagemap: cannot open process 2: it is a kernel thread and has no user memory"
	if [ -z "$out" ] && [ "$(cat "$fx/kthread.err")" = "$want" ]; then echo "PASS ps-pid-kthread-words"
	else echo "FAIL ps-pid-kthread-words: stdout '$out', stderr '$(cat "$fx/kthread.err")'"; fi
else
	echo "SKIP ps-pid-kthread: PID 2 is not kthreadd here"
fi
check ps-pid-space 2 "$pagemap" ps -p " 1"

# One process counted: "1 process", not "1 processes". In a PID namespace of its own, an
# unprivileged reader sees one process it may not read: the root shell that started it.
if [ "$(id -u)" = 0 ] && unshare -pf --mount-proc true 2>/dev/null; then
	for cmd in "cache -n -A" "numa --all"; do
		err=$(unshare -pf --mount-proc sh -c 'setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$1" $2 >/dev/null; true' sh "$pagemap" "$cmd" 2>&1 | grep -E '[0-9]+ process')
		case $err in
		*" 1 process not examined "* | *" 1 process skipped "*) echo "PASS one-process-said ${cmd%% *}" ;;
		*) echo "FAIL one-process-said ${cmd%% *}: '$err'" ;;
		esac
	done
else
	echo "SKIP one-process-said: needs root and unshare -p"
fi
check maps-pid-space 2 "$pagemap" maps " 1"
check ps-cgroup-missing 1 "$pagemap" ps --cgroup /no/such/cgroup/here

# features --export round-trips pagemap_error: a name the library's short table lacks, and a number without a name.
for want in ENOMEM 200; do
	rm -rf "$fx/e"
	cp -r "$src/tests/fixtures/eperm-4.1" "$fx/e"
	sed -i "s/^pagemap_error=.*/pagemap_error=$want/" "$fx/e/pagemap-features"
	got=$("$pagemap" --root "$fx/e" features --export | sed -n 's/^pagemap_error=//p')
	if [ "$got" = "$want" ]; then echo "PASS export-pagemap-error-$want"; else echo "FAIL export-pagemap-error-$want: got '$got'"; fi
done

# pages prints its rows in batches (cli/output/output.c out_stream): the stream is the same as one table for JSON and
# raw output, and memory stays flat: 262,144 rows of --each under a 60 MB address-space limit (it took 150 MB).
"$src/tests/fixtures/unpack" "$src/tests/fixtures/demo-6.18-root" "$fx/d" >/dev/null 2>&1
for form in -J -r; do
	one=$("$pagemap" --root "$fx/d" pages --each $form 4242 | cksum)
	many=$(PAGEMAP_OUT_BATCH=7 "$pagemap" --root "$fx/d" pages --each $form 4242 | cksum)
	if [ "$one" = "$many" ]; then echo "PASS stream-same$form"; else echo "FAIL stream-same$form: batches of 7 print otherwise"; fi
done
# Streamed batches are formatted by cli/output/out_rows.c, not libsmartcols: the bytes must be libsmartcols' own
# (PAGEMAP_OUT_SLOW=1 prints every batch through it) and, for raw and JSON, those of the whole table printed at
# once; on pages --each, phys -l and the phys -p list, with a mapping path that needs escaping (quotes, a
# backslash, a tab, invalid UTF-8, an escape character).
"$src/tests/fixtures/unpack" "$src/tests/fixtures/phys-synth" "$fx/p" >/dev/null 2>&1
cp -r "$fx/d" "$fx/h"
hostile=$(printf '/tmp/we"ird\\\\path\t\377\033[1m.so')
for m in "$fx/h/proc/4242/maps" "$fx/p/proc/3131/maps"; do
	[ -f "$m" ] && awk -v p="$hostile" 'NR % 3 == 1 && NF >= 6 { sub(/[^ ]+$/, p) } { print }' "$m" >"$m.new" && mv "$m.new" "$m"
done
for cmd in "h pages --each 4242" "h pages --each -o +NAMES,NODE 4242" "p phys -l" "p phys -l -o +NAMES" "p phys -p 3131"; do
	set -- $cmd
	tree=$fx/$1
	shift
	for form in "" -r -J "-r -n" -n; do
		name="stream-rows-$(echo "$* $form" | tr -cs 'a-zA-Z0-9+' -)"
		whole=$("$pagemap" --root "$tree" "$@" $form 2>&1 | cksum)
		slow=$(PAGEMAP_OUT_SLOW=1 PAGEMAP_OUT_BATCH=7 "$pagemap" --root "$tree" "$@" $form 2>&1 | cksum)
		fast=$(PAGEMAP_OUT_BATCH=7 "$pagemap" --root "$tree" "$@" $form 2>&1 | cksum)
		case $form in -r* | -J) same=$whole ;; *) same=$slow ;; esac	# aligned: a column may widen after a batch
		if [ "$fast" = "$slow" ] && [ "$fast" = "$same" ]; then
			echo "PASS $name"
		else
			echo "FAIL $name: batches of 7 print otherwise (whole $whole, libsmartcols $slow, out_rows $fast)"
		fi
	done
done
{ echo "100000000-140000000 rw-p 00000000 00:00 0 "; cat "$fx/d/proc/4242/maps"; } >"$fx/maps" && mv "$fx/maps" "$fx/d/proc/4242/maps"
if ! sh -c 'ulimit -v 60000 && exec "$1" --version' sh "$pagemap" >/dev/null 2>&1; then
	echo "SKIP stream-bounded: pagemap does not start under ulimit -v (a sanitizer build)"
else
	n=$( (ulimit -v 60000 && "$pagemap" --root "$fx/d" pages --each -r -n 4242 0x100000000-0x140000000) 2>/dev/null | wc -l)
	if [ "$n" = 262144 ]; then echo "PASS stream-bounded"; else echo "FAIL stream-bounded: $n rows of 262144 under ulimit -v 60000"; fi
fi

# libsmartcols is opened only when a table needs it (cli/output/scols_load.c says why). With a damaged
# libsmartcols.so.1 first in the search path: piped tables, raw and JSON, which the own formatter prints,
# run as before (a linked libsmartcols would stop every command at start); a table that needs it
# (PAGEMAP_OUT_SLOW=1 sends every batch to libsmartcols) fails with one line naming it, exit 1.
mkdir -p "$fx/badscols"
printf 'not an ELF file' >"$fx/badscols/libsmartcols.so.1"
lp="$fx/badscols${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for form in "" -r -J; do
	name="scols-not-loaded$(echo "$form" | tr -cs 'a-zA-Z0-9' -)"
	want=$("$pagemap" --root "$fx/d" maps $form 4242 2>&1 | cksum)
	got=$(LD_LIBRARY_PATH=$lp "$pagemap" --root "$fx/d" maps $form 4242 2>&1 | cksum)
	if [ "$got" = "$want" ]; then echo "PASS $name"; else echo "FAIL $name: output differs without libsmartcols"; fi
done
err=$(LD_LIBRARY_PATH=$lp PAGEMAP_OUT_SLOW=1 "$pagemap" --root "$fx/d" maps 4242 2>&1 >/dev/null)
rc=$?
case $rc:$(printf '%s\n' "$err" | grep -vc '^pagemap: note:'):$err in
1:1:*libsmartcols.so.1*) echo "PASS scols-missing" ;;
*) echo "FAIL scols-missing: exit $rc: $err" ;;
esac

# Every column list of every command's --help (the output layer's, and a command's second table: diff --pages,
# ps --group-by, phys -l and -p) is folded to 80 columns by one wrapper and names the other names -o takes
# (a column's help was printed on one line of up to 174 characters where a command listed a table itself).
wide=
for c in $("$pagemap" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'); do
	w=$("$pagemap" "$c" --help 2>/dev/null | awk -v c="$c" '
		/^ +[A-Z][A-Z0-9_\/]+  [^ ]/ || /^               [^ ]/ { if (length($0) > 79) print c ": " substr($0, 1, 40) "..." }')
	wide="$wide${w:+ $w}"
done
[ -z "$wide" ] && echo "PASS help-columns-folded" || echo "FAIL help-columns-folded:$wide"
"$pagemap" ps --help | grep -A1 -e '^ *RSS  RSS of its processes' | grep -q 'also takes RESIDENT' &&
	echo "PASS help-group-aliases" || echo "FAIL help-group-aliases: ps --group-by's RSS does not say -o takes RESIDENT"

# One word per quantity: no two commands' column lists name the same quantity two ways (an old name stays in
# -o as an alias, which --help says in words, never as a column line). Where two names mean different things
# (SWAP and SWAPPED, USS and EXCLUSIVE), the help says the difference.
names=$(for c in $("$pagemap" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'); do
	"$pagemap" "$c" --help 2>/dev/null | awk -v c="$c" '/^ +[A-Z][A-Z0-9_\/]+  [^ ]/ { print $1, c }'
done | sort -u)
twice=
for pair in COMM:COMMAND RESIDENT:RSS PROCS:PROCESSES; do
	# cache's PROCS counts processes that hold a file open too: another quantity than a group's PROCESSES.
	skip=; [ "$pair" = PROCS:PROCESSES ] && skip=cache
	a=$(printf '%s\n' "$names" | awk -v n="${pair%:*}" -v skip="$skip" '$1 == n && $2 != skip { printf " %s", $2 }')
	b=$(printf '%s\n' "$names" | awk -v n="${pair#*:}" '$1 == n { printf " %s", $2 }')
	[ -n "$a" ] && [ -n "$b" ] && twice="$twice ${pair%:*} (in$a) and ${pair#*:} (in$b);"
done
[ -z "$twice" ] && echo "PASS column-words-once" || echo "FAIL column-words-once:$twice"
"$pagemap" ps --help | grep -A1 '^ *SWAP  ' | tr '\n' ' ' | grep -q "SWAPPED" &&
	"$pagemap" top --help | grep -A1 '^ *USS  ' | tr '\n' ' ' | grep -q "EXCLUSIVE" &&
	echo "PASS column-words-differ" || echo "FAIL column-words-differ: ps's SWAP or top's USS help does not say how it differs from maps' SWAPPED or EXCLUSIVE"
