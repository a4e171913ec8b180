#!/bin/sh
# cols80_more.sh - the default view of diff, audit, shared, track, wss, ps (plain and --group-by), cache (FILE,
# DIR, -p, --all) and snapshot --list fits an 80-column terminal, as pmap's, lsblk's and ps's do: each run in a
# real pseudo-terminal (script(1)) against processes and snapshots made here (sleeps; two writers mapping a file
# whose path is 200 bytes long, named with an escape, a quote, a backslash and bytes that are not UTF-8). At 80
# columns the widest line (stderr's notes too) is at most 80 and the figures are those of the piped output of the
# same columns; at 132 columns the wider terminal is used; piped output keeps the old default columns (scripts and
# the golden outputs see what they saw).
# Usage: tests/live/cols80_more.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${PAGEMAP_BUILD:-$src/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
skip() { echo "SKIP cols80-more: $*"; exit 77; }
command -v script >/dev/null || skip "no script(1) (util-linux/bsdutils) for a pseudo-terminal"
command -v python3 >/dev/null || skip "python3 is not installed (the writers, the width of a line)"
[ -x "$pagemap" ] || skip "pagemap is not built"
[ "$(id -u)" = 0 ] || skip "needs root (shared reads frames; track and wss change their target)"
. "$src/tests/live/lib/pty.sh"

tmp=$(mktemp -d) || exit 1
spids='' wpid=''
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$wpid" ] && wait "$wpid" 2>/dev/null
	for p in $spids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

# Two writers mapping one file whose path is 200 bytes long, shared and privately; each rewrites a byte of every
# page of 1 MiB of its own every 50 ms until stdin closes, and writes one more page of the private file mapping
# each time (what diff, track and wss see change: diff shows that mapping's path).
dir="$tmp/$(printf 'd%.0s' $(seq 90))"
mkdir "$dir" || exit 1
file="$dir/$(printf 'f%.0s' $(seq $((199 - ${#dir}))))"
head -c 262144 /dev/zero >"$file"
[ ${#file} = 200 ] || { fail cols80-setup "the file's path is ${#file} bytes, not 200"; exit 1; }
cat >"$tmp/writer.py" <<'PY'
import ctypes, mmap, os, select, sys
PR_SET_NAME = 15
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
with open(sys.argv[1], "r+b") as f:
    fm = mmap.mmap(f.fileno(), 65536)
fm[:] = b"x" * 65536
with open(sys.argv[1], "rb") as f:
    priv = mmap.mmap(f.fileno(), 262144, access=mmap.ACCESS_COPY)
n = 0
buf = mmap.mmap(-1, 1 << 20)
buf[:] = b"\1" * (1 << 20)
if os.fork():
    os._exit(0)	# the child: shares nothing written since with a parent that lives on
comm = b'h\x1b[1m"\\\xc3\xa9\xff\tlong-name'	# prctl takes 15 bytes
libc.prctl(PR_SET_NAME, ctypes.cast(ctypes.c_char_p(comm), ctypes.c_void_p).value, 0, 0, 0)
os.write(1, b"%d\n" % os.getpid())
while not select.select([0], [], [], 0.05)[0]:
    for i in range(0, 1 << 20, 4096):
        buf[i] = (buf[i] + 1) & 255
    priv[n % 262144] = 1	# copy-on-write: a page of its own
    n += 4096
os._exit(0)
PY
mkfifo "$tmp/hold"
for _ in 1 2; do python3 "$tmp/writer.py" "$file" <"$tmp/hold" >>"$tmp/wpids" & done
wpid=$!
exec 3>"$tmp/hold"
for _ in $(seq 100); do [ "$(wc -l <"$tmp/wpids")" = 2 ] && break; sleep 0.1; done
w1=$(sed -n 1p "$tmp/wpids") w2=$(sed -n 2p "$tmp/wpids")
[ -n "$w1" ] && [ -n "$w2" ] || { fail cols80-setup "the writers did not start"; exit 1; }
sleep 1000 & s1=$!
sleep 1000 & s2=$!
spids="$s1 $s2"
sleep 0.3	# the writers' loops have run

"$pagemap" snapshot -p "$w1,$w2,$s1" -o "$tmp/a.snap" 2>"$tmp/err" || { fail cols80-setup "$(cat "$tmp/err")"; exit 1; }
sleep 0.3
"$pagemap" snapshot -p "$w1,$w2,$s1" -o "$tmp/b.snap" 2>"$tmp/err" || { fail cols80-setup "$(cat "$tmp/err")"; exit 1; }

# same NAME PTY PIPED: PTY's table (80 columns) holds PIPED's figures (the same columns, piped): line for line
# from the header on, the same figures (sizes, counts, addresses) in the same order, and every other word on
# the terminal is one of the piped line's in order, but a cell libsmartcols cut to the terminal's width (a
# path, a name: the start of a piped word). Wrapped cells (audit's evidence) are compared joined.
same() {
	why=$(python3 - "$2" "$3" 2>&1 <<'PY'
import re, sys
num = re.compile(r"^(-|[0-9][0-9.]*[KMGTPE]?i?B?|0x[0-9a-f]+|[0-9.]+%?)$")
def lines(path):
    ls = [l.rstrip() for l in open(path, encoding="utf-8", errors="replace")]
    head = next((i for i, l in enumerate(ls) if l.split() and l == l.upper() and l.split()[0].isalpha()), None)
    if head is None:
        sys.exit("no header in " + path)
    return ls[head:]
pty, piped = lines(sys.argv[1]), lines(sys.argv[2])
if pty[0].split() != piped[0].split():
    sys.exit("headers differ: %r, %r" % (pty[0], piped[0]))
def words(l):
    return l.split()
rows, wrapped = [], []
for l in pty[1:]:	# a line that begins blank under a wrapped cell's column goes on its row
    if rows and l.startswith(" " * 20) and len(piped) < len(pty):
        rows[-1] += l.strip()
        wrapped[-1] = True
    else:
        rows.append(l)
        wrapped.append(False)
if len(rows) != len(piped) - 1:
    sys.exit("%d rows on the terminal, %d piped" % (len(rows), len(piped) - 1))
def subseq(a, b):	# a is b with some characters left out (a cut cell)
    it = iter(b)
    return all(c in it for c in a)
for x, y, wr in zip(rows, piped[1:], wrapped):
    if wr:	# cut at any character: the text, blanks aside, is the piped text less a cut cell's tail
        if not subseq(x.replace(" ", ""), y.replace(" ", "")):
            sys.exit("wrapped row %r is not piped %r" % (x, y))
        continue
    wx, wy = words(x), words(y)
    if [w for w in wx if num.match(w)] != [w for w in wy if num.match(w)]:
        sys.exit("figures differ: terminal %r, piped %r" % (x, y))
    k = 0
    for w in wx:
        while k < len(wy) and wy[k] != w and not (wy[k].startswith(w) and not num.match(w)):
            k += 1
        if k == len(wy):
            sys.exit("terminal %r has %r, not in piped %r" % (x, w, y))
        k += 1
PY
) && pass "$1-figures" || fail "$1-figures" "$why"
}

# lines PTY PIPED: a list, not a table (snapshot --list): PTY's lines, those that go on under the path joined
# to theirs, are PIPED's.
lines() {
	why=$(python3 - "$2" "$3" 2>&1 <<'PY'
import sys
rows = []
for l in open(sys.argv[1], encoding="utf-8", errors="replace"):
    l = l.rstrip()
    if rows and l.startswith(" " * 27):
        rows[-1] += l[27:]
    else:
        rows.append(l)
piped = [l.rstrip() for l in open(sys.argv[2], encoding="utf-8", errors="replace")]
if rows != piped:
    bad = next((i for i in range(min(len(rows), len(piped))) if rows[i] != piped[i]), min(len(rows), len(piped)))
    sys.exit("line %d: terminal %r, piped %r" % (bad, rows[bad:bad + 1], piped[bad:bad + 1]))
PY
) && pass "$1-figures" || fail "$1-figures" "$why"
}

# check NAME FIGURES CMD...: CMD at 80 and 132 columns; FIGURES yes: compare with the piped output of the
# terminal's columns (commands whose figures do not change between two runs); lines: with the piped output.
check() {
	name=$1 figures=$2
	shift 2
	pty_run 80 "$tmp/t80" "$pagemap" "$@"
	pty_run 132 "$tmp/t132" "$pagemap" "$@"
	"$pagemap" "$@" >"$tmp/piped" 2>/dev/null
	cols=$(awk 'NF && $0 == toupper($0) && !/^#/ { $1 = $1; gsub(/ /, ","); print; exit }' "$tmp/t80")
	"$pagemap" "$@" -o "$cols" >"$tmp/pipedcols" 2>/dev/null
	w80=$(pty_widest "$tmp/t80") w132=$(pty_widest "$tmp/t132") wp=$(pty_widest "$tmp/piped")
	wc=$(pty_widest "$tmp/pipedcols")
	echo "# $name: $w80 columns at 80, $w132 at 132; piped $wp, its terminal's columns $wc"
	if [ "$w80" -gt 80 ]; then
		fail "$name-80" "$w80 columns wide in an 80-column terminal: $(awk 'length > 80' "$tmp/t80" | head -n 2)"
	else
		pass "$name-80"
	fi
	# At 132 columns more of the cut text shows, up to the terminal's width.
	if [ "$w132" -gt 132 ] || { [ "$wc" -gt 80 ] && [ "$w132" -le 80 ]; }; then
		fail "$name-132" "$w132 columns wide in a 132-column terminal ($w80 at 80)"
	else
		pass "$name-132"
	fi
	if [ "$figures" = yes ]; then
		same "$name" "$tmp/t80" "$tmp/pipedcols"
	elif [ "$figures" = lines ]; then
		lines "$name" "$tmp/t80" "$tmp/piped"
	fi
}

# piped NAME COLUMNS: the piped output's header is COLUMNS, the defaults scripts have always had.
piped() {
	h=$(awk 'NF && $0 == toupper($0) && $1 ~ /^[A-Z]/ { $1 = $1; print; exit }' "$tmp/piped")
	[ "$h" = "$2" ] && pass "$1-piped" || fail "$1-piped" "header '$h', not '$2'"
}

check diff yes diff "$tmp/a.snap" "$tmp/b.snap"
piped diff "PID MAPPING START END APPEARED FREED SWAPOUT SWAPIN WRITTEN THP_FORMED THP_SPLIT NEW_FRAME PATH"
# audit's figures are the machine's (processes holding CAP_SYS_ADMIN come and go)
check audit no audit --snapshots "$tmp"
piped audit "NAME VERDICT SUBJECT EVIDENCE FIX"
# --strict: exit 1 on this machine's context findings, and the hint naming the fixes' view, which fits too
check audit-strict no audit --strict
check audit-fixes no audit -o NAME,VERDICT,FIX
check shared yes shared "$w1" "$w2"
piped shared "KIND PID START PERMS PATH PEER PEER_START PEER_PATH RSS SHARED OTHERS SWAP"
check track no track "$w1" 0.2 2
piped track "START END PERMS PAGES WRITTEN HUGE PATH"
check wss no wss "$w1" 0.2
piped wss "MAPPING START END RSS ACCESSED PCT METHOD WINDOW MEASURED"
check ps no ps
# ps's own figures move between two runs (PSS: other processes map the same libraries and come and go)
check ps-p no ps -p "$s1,$s2,$w1"
check ps-group-comm no ps --group-by comm
check ps-group-user no ps --group-by user
check ps-group-mapping no ps --group-by mapping -p "$w1,$w2"
check cache-file yes cache "$file"
piped cache-file "CACHED DIRTY WRITEBACK EVICTED RECENT SIZE PATH"
check cache-dir yes cache "$dir"
check cache-p yes cache -p "$w1"
piped cache-p "PID COMMAND CACHED MAPPED MAPONLY SHARED VIA PATH"
check cache-all no cache --all
check snapshot-list lines snapshot --list "$tmp/a.snap"
exit $failed
