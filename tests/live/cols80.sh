#!/bin/sh
# cols80.sh - maps, pages, phys (summary, -l, -p), v2p, numa (nodes, PIDs, --all) and features as a user sees them
# in a terminal (script(1)'s pseudo-terminal): at 80 columns every line, stderr's too, fits 80 columns, and the
# figures shown are those a pipe prints for the same columns; at 132 columns the wider terminal is used; a pipe,
# -r and -J keep the old default columns. Against processes started here: the demo, a sleep, and one that maps a
# file at a 200-byte path and names itself with an invalid byte, an escape and a wide character. As root, and as
# uid 65534 (the commands that work unprivileged, on that user's own processes).
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
skip() { echo "SKIP cols80: $*"; exit 77; }
[ -x "$pagemap" ] && [ -x "$build/pagemap-demo" ] || skip "pagemap or pagemap-demo is not built"
command -v script >/dev/null || skip "no script(1) (util-linux, package bsdutils) to make a terminal"
command -v python3 >/dev/null || skip "python3 is not installed (it measures the lines as a terminal shows them)"
[ "$(id -u)" = 0 ] || skip "needs root (phys and v2p read the frame files; the test also runs as uid 65534)"
. "$src/tests/live/lib/pty.sh"
. "$src/tests/live/lib/nobody.sh"

tmp=$(mktemp -d) || exit 1
kids=
cleanup() {
	exec 4>&- 5>&- 6>&- 2>/dev/null
	for k in $kids; do kill "$k" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }
chmod 711 "$tmp"

# hostile DIR: a process (run by the caller's user) mapping 64 KiB of a file whose path is over 200 bytes, under
# DIR, with wide characters and an escape in it, its comm an invalid byte, an escape and a wide character;
# prints its PID when ready and lives until its stdin closes.
cat >"$tmp/hostile.py" <<'PY'
import mmap, os, sys
d = os.path.join(sys.argv[1], "d" * 60, "p" * 110 + "\u00e9\u6f22\u5b57-\x1b[1mx.bin")
os.makedirs(os.path.dirname(d), exist_ok=True)
with open(d, "wb") as f:
    f.write(b"x" * 65536)
f = open(d, "r+b")
m = mmap.mmap(f.fileno(), 65536)
s = sum(m[i] for i in range(0, 65536, 4096))
assert len(os.fsencode(d)) >= 200
with open("/proc/self/comm", "wb") as c:
    c.write(b"\xff\x1b[31m\xe6\xbc\xa2x y")
print(os.getpid(), flush=True)
sys.stdin.read()
PY

# The fifos stay open on descriptors 4-6 for the test's life; closing them (at exit) ends the processes.
mkfifo "$tmp/demo.in" "$tmp/hroot.in" "$tmp/hnob.in"
: >"$tmp/demo.out"
"$build/pagemap-demo" <"$tmp/demo.in" >"$tmp/demo.out" &
kids="$kids $!"
exec 4>"$tmp/demo.in"
mkdir "$tmp/root" "$tmp/nob" && chown 65534:65534 "$tmp/nob" || exit 1
: >"$tmp/hroot.out"
python3 "$tmp/hostile.py" "$tmp/root" <"$tmp/hroot.in" >"$tmp/hroot.out" 2>&1 &
kids="$kids $!"
exec 5>"$tmp/hroot.in"
: >"$tmp/hnob.out"
chmod 666 "$tmp/hnob.out"
# A python3 that user can run (root's may be a pyenv shim under /root).
npython=
for py in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$py" -c '' 2>/dev/null && npython=$py && break
done
if [ -n "$npython" ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$npython" "$tmp/hostile.py" "$tmp/nob" \
		<"$tmp/hnob.in" >"$tmp/hnob.out" 2>&1 &
	kids="$kids $!"
else
	echo "SKIP cols80-nobody-hostile: no python3 uid 65534 can run"
	echo 0 >"$tmp/hnob.out"
fi
exec 6>"$tmp/hnob.in"
sleep 1000 </dev/null >/dev/null 2>&1 &
sleeper=$!
kids="$kids $sleeper"
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 </dev/null >/dev/null 2>&1 &
nsleeper=$!
kids="$kids $nsleeper"
for _ in $(seq 200); do
	[ "$(wc -l <"$tmp/demo.out")" -ge 6 ] && [ -s "$tmp/hroot.out" ] && [ -s "$tmp/hnob.out" ] && break
	sleep 0.05
done
demo=$(head -n 1 "$tmp/demo.out")
hroot=$(head -n 1 "$tmp/hroot.out")
hnob=$(head -n 1 "$tmp/hnob.out")
case "$demo$hroot$hnob" in *[!0-9]* | "") fail cols80-start "demo '$demo', hostile '$hroot' '$hnob'"; exit 1 ;; esac
range() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/demo.out"; }
region() { range "$1" | sed 's/-.*//'; }
npagemap=$(nobody_pagemap "$pagemap" "$tmp") || { fail cols80-nobody "cannot give uid 65534 a pagemap binary"; exit 1; }

# compare NAME TERMFILE PIPEFILE IGNORED: the figures of a terminal's table against a pipe's for the same columns but
# its last (a path truncated, or flags wrapped): each row's leading fields are the pipe's row's fields but those
# numbered (from 0) in the comma-separated IGNORED. Lines a
# wrapped cell continues on (they begin at the last column) are not rows; stderr's lines ("pagemap: ...", and
# those a folded note continues on) are left out of both.
compare() {
	python3 - "$@" <<'PY'
import re, sys
name, term, pipe, ignore = sys.argv[1:]
ignore = {int(i) for i in ignore.split(",") if i}
esc = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
def rows(path, is_term):
    lines = [esc.sub("", l.rstrip("\n")) for l in open(path, encoding="utf-8", errors="replace")]
    out, head, last, note = [], None, None, False
    for l in lines:
        if l.startswith("pagemap: "):
            note = True
            continue
        if note and l.startswith(" " * 9) and not re.fullmatch(r"[ A-Z]+", l):
            continue	# a folded note's next line
        note = False
        if head is None:
            head = l
            last = l.rstrip().rsplit(" ", 1)[-1]
            last = head.rindex(last) if is_term else None
            continue
        if is_term and len(l) - len(l.lstrip(" ")) >= last and l.strip():
            continue	# a wrapped cell's next line
        out.append(l.split())
    return head, out
_, t = rows(term, True)
phead, p = rows(pipe, False)
width = len(phead.split())
bad = None
if len(t) != len(p):
    bad = "%d rows on the terminal, %d in the pipe" % (len(t), len(p))
else:
    for i, (a, b) in enumerate(zip(t, p)):
        # A row with empty leading cells (a total row has no START) has its fields counted from its first.
        skip = {j - (width - len(b)) for j in ignore}
        if [x for j, x in enumerate(a[:len(b)]) if j not in skip] != [x for j, x in enumerate(b) if j not in skip]:
            bad = "row %d: terminal %s, pipe %s" % (i + 1, a[:len(b)], b)
            break
print("FAIL %s: %s" % (name, bad) if bad else "PASS %s" % name)
sys.exit(1 if bad else 0)
PY
	[ $? -eq 0 ] || failed=1
}

# widest NAME COLS FILE: every line of FILE fits COLS columns.
widest() {
	_w=$(pty_widest "$3")
	if [ "$_w" -le "$2" ]; then
		pass "$1 (widest line $_w at $2 columns)"
	else
		fail "$1" "widest line $_w columns at $2: $(awk -v w="$2" 'length($0) > w { print; exit }' "$3" | cut -c1-160)"
	fi
}

# view NAME USER FIGURES CMD...: CMD (pagemap's arguments) in an 80-column terminal: every line fits; in a
# 132-column one: a view wider than 80 uses the room. FIGURES: the terminal's columns (but the last) a pipe
# prints with -o, to compare the figures with; "-" not compared: a frame's flags (phys) change as the kernel
# ages pages, and the exclusive bit of a file's page as other processes map it (a shared machine's python3 and
# its libraries); $ignore: the fields (from 0) not compared.
view() {
	_name=$1 _user=$2 _fig=$3
	shift 3
	_pm=$pagemap
	_as=
	[ "$_user" = nobody ] && _pm=$npagemap && _as="setpriv --reuid=65534 --regid=65534 --clear-groups"
	# shellcheck disable=SC2086	# $_as: a command and its options, or nothing
	pty_run 80 "$tmp/t80" $_as "$_pm" "$@" || { fail "$_name" "exit $? in a terminal: $(head -c 300 "$tmp/t80")"; return; }
	widest "$_name" 80 "$tmp/t80"
	# shellcheck disable=SC2086
	pty_run 132 "$tmp/t132" $_as "$_pm" "$@"
	_w=$(pty_widest "$tmp/t132")
	if [ "$(pty_widest "$tmp/t80")" -ge 78 ] && [ "$_w" -le 80 ]; then
		fail "$_name-132" "a 132-column terminal got lines of at most $_w columns"
	elif [ "$_w" -gt 132 ]; then
		fail "$_name-132" "widest line $_w at 132 columns"
	else
		pass "$_name-132 (widest line $_w)"
	fi
	[ "$_fig" = - ] && return
	# A process may have faulted or freed a page between the two runs: one more pair before a failure.
	for _try in 1 2 3; do
		# shellcheck disable=SC2086
		$_as "$_pm" "$@" -o "$_fig" >"$tmp/pipe" 2>/dev/null
		[ "$_try" = 3 ] && break
		compare "$_name-figures" "$tmp/t80" "$tmp/pipe" "$ignore" >/dev/null 2>&1 && break
		# shellcheck disable=SC2086
		pty_run 80 "$tmp/t80" $_as "$_pm" "$@"
	done
	compare "$_name-figures" "$tmp/t80" "$tmp/pipe" "$ignore"
}

# heads NAME EXPECTED CMD...: the headings of pagemap CMD in a pipe, with -r and -J in a terminal, are EXPECTED.
heads() {
	_name=$1 _want=$2
	shift 2
	_got=$("$pagemap" "$@" 2>/dev/null | head -n 1 | tr -s ' ' | sed 's/^ //; s/ $//' | tr ' ' ,)
	[ "$_got" = "$_want" ] || fail "$_name-pipe" "headings $_got, not $_want"
	pty_run 80 "$tmp/r" sh -c '"$0" "$@" 2>/dev/null' "$pagemap" "$@" -r
	_got=$(head -n 1 "$tmp/r" | tr ' ' ,)
	[ "$_got" = "$_want" ] || fail "$_name-raw" "headings with -r on a terminal $_got, not $_want"
	pty_run 80 "$tmp/j" sh -c '"$0" "$@" 2>/dev/null' "$pagemap" "$@" -J
	_got=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(",".join(k.upper() for k in next(iter(d.values()))[0]))' <"$tmp/j")
	[ "$_got" = "$_want" ] || fail "$_name-json" "keys with -J on a terminal $_got, not $_want"
	pass "$_name-pipe-raw-json ($_want)"
}

anon=$(region demo-anon)
thp=$(region demo-thp)
guard=$(region demo-guard)
# EXCLUSIVE (maps's field 3, pages's E) of a file's page changes as other processes map and unmap the file (on a
# shared machine, its libc and python3): compared on the demo's anonymous regions only.
for p in "demo:$demo" "sleep:$sleeper" "hostile:$hroot"; do
	n=${p%%:*} pid=${p#*:}
	ignore=3
	view "cols80-maps-$n" root START,SIZE,RSS,EXCLUSIVE,SWAPPED,PERMS maps "$pid"
	ignore=
	view "cols80-pages-$n" root - pages "$pid"
	view "cols80-phys-p-$n" root - phys -p "$pid"
	view "cols80-numa-$n" root PID,START,NODE,TOTAL,ANON,FILE,SHMEM,REMOTE numa "$pid"
done
view cols80-pages-demo-sparse root START,PAGES,FLAGS,PFN pages "$demo" "$(range demo-sparse)"
view cols80-pages-demo-guard root START,PAGES,FLAGS,PFN pages "$demo" "$(range demo-guard)"
view cols80-numa-pids root PID,START,NODE,TOTAL,ANON,FILE,SHMEM,REMOTE numa "$demo" "$hroot"
view cols80-phys-s root - phys -s -p "$demo"
view cols80-v2p root ADDR,STATE,PFN,COUNT v2p "$demo" "$anon" "$thp" "$guard" 0x1000
# v2p's flag names wrap at a comma, never inside a name: rejoined, each row's are the pipe's.
pty_run 80 "$tmp/v80" "$pagemap" v2p "$demo" "$anon" "$thp" "$guard"
"$pagemap" v2p "$demo" "$anon" "$thp" "$guard" -r -o FLAGS -n >"$tmp/vpipe" 2>/dev/null
python3 - "$tmp/v80" "$tmp/vpipe" <<'PY'
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if not l.startswith("pagemap: ")]
at = lines[0].index("FLAGS")
rows = []
for l in lines[1:]:
    cell = l[at:].strip() if len(l) > at else ""
    if l[:at].strip():
        rows.append(cell)
    elif cell:
        rows[-1] += "," + cell
want = [l.strip() for l in open(sys.argv[2])]
if rows == want and any("," in r for r in rows) and max(map(len, lines)) <= 80:
    print("PASS cols80-v2p-flags")
else:
    print("FAIL cols80-v2p-flags: terminal %s, pipe %s" % (rows, want))
    sys.exit(1)
PY
[ $? -eq 0 ] || failed=1
view cols80-phys root - phys
view cols80-phys-l root - phys -l -b zero_page	# all frames: a million rows, of fixed width
view cols80-numa-nodes root - numa
view cols80-numa-all root - numa --all
view cols80-features root - features
# features: no key or status is cut or moved to a line of its own.
"$pagemap" features -r -n 2>/dev/null | cut -d' ' -f1,2 >"$tmp/keys"
pty_run 80 "$tmp/f80" "$pagemap" features
if missing=$(tr -s ' ' <"$tmp/f80" | cut -d' ' -f1,2 | grep -vxFf - "$tmp/keys"); [ -z "$missing" ]; then
	pass "cols80-features-rows"
else
	fail cols80-features-rows "not on a line of their own in the terminal: $(echo "$missing" | head -3 | tr '\n' ' ')"
fi
# maps: no note about a column the terminal's view does not show (SOFTDIRTY, on a kernel without it).
pty_run 80 "$tmp/m80" "$pagemap" maps "$demo"
if grep -q SOFTDIRTY "$tmp/m80"; then
	fail cols80-maps-notes "$(grep SOFTDIRTY "$tmp/m80" | head -1)"
else
	pass cols80-maps-notes
fi

heads cols80-maps START,END,PERMS,SIZE,PRESENT,SWAPPED,FILE,EXCLUSIVE,THP,SOFTDIRTY,UFFDWP,GUARD,PATH maps "$demo"
heads cols80-pages START,END,PAGES,FLAGS,PFN,SWAPTYPE,SWAPOFF,PATH pages "$demo"
heads cols80-phys-p START,END,PAGES,PFN,FLAGS,COUNT,CGROUP,PATH phys -p "$demo"
heads cols80-phys FLAGS,PAGES,SIZE,SYMBOLIC,NAMES phys -b zero_page	# one row: the headings are those of all
heads cols80-numa PID,MAPPING,START,END,PERMS,POLICY,NODE,TOTAL,ANON,FILE,SHMEM,HUGETLB,THP,REMOTE,PATH numa "$demo"
heads cols80-v2p ADDR,STATE,PFN,PHYS,FLAGS,COUNT v2p "$demo" "$anon"

# Unprivileged, on that user's own processes: frame numbers hidden, numa by move_pages(2), its notes folded.
for p in "sleep:$nsleeper" ${npython:+"hostile:$hnob"}; do
	n=${p%%:*} pid=${p#*:}
	ignore=3
	view "cols80-nobody-maps-$n" nobody START,SIZE,RSS,EXCLUSIVE,SWAPPED,PERMS maps "$pid"
	ignore=
	view "cols80-nobody-pages-$n" nobody - pages "$pid"
	view "cols80-nobody-numa-$n" nobody PID,START,NODE,TOTAL,ANON,FILE,SHMEM,REMOTE numa "$pid"
done
# pages's note on hidden frame numbers: with the columns it is about, and only with them.
pty_run 80 "$tmp/n1" setpriv --reuid=65534 --regid=65534 --clear-groups "$npagemap" pages "$nsleeper"
pty_run 80 "$tmp/n2" setpriv --reuid=65534 --regid=65534 --clear-groups "$npagemap" pages "$nsleeper" -o START,PAGES,FLAGS
if ! grep -q "numbers are hidden" "$tmp/n1"; then
	fail cols80-nobody-pages-note "no note on hidden frame numbers with PFN shown: $(head -2 "$tmp/n1")"
elif grep -q "numbers are hidden" "$tmp/n2"; then
	fail cols80-nobody-pages-note "a note on hidden frame numbers without PFN, NODE or the swap columns"
else
	pass cols80-nobody-pages-note
fi
view cols80-nobody-numa-nodes nobody - numa
view cols80-nobody-numa-all nobody - numa --all
view cols80-nobody-features nobody - features
exit $failed
