#!/bin/sh
# names.sh - names any process or delegated user chooses break no output: processes whose comm, mapped file,
# memfd and anonymous mapping names hold invalid UTF-8, quotes, backslashes, newlines, ESC and "</script>",
# one of them in a cgroup so named, and every command's -J parsed strictly (UTF-8, then JSON), export's
# Prometheus and OpenMetrics text checked by promtool, render's SVG parsed as XML, tables free of raw ESC.
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
skip() { echo "SKIP names: $*"; exit 77; }
command -v python3 >/dev/null || skip "python3 is not installed"
[ -x "$pagemap" ] || skip "pagemap is not built"
[ "$(id -u)" = 0 ] || skip "needs root (a cgroup of its own, every process's names)"

tmp=$(mktemp -d) || exit 1
cg=
hpid=
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	[ -n "$hpid" ] && wait "$hpid" 2>/dev/null
	if [ -n "$cg" ]; then
		# The children may still be leaving: move what is left out, then remove the cgroups.
		for f in "$cg"/*/cgroup.procs; do
			[ -f "$f" ] && while read -r p; do echo "$p" >"$cgroot/cgroup.procs"; done <"$f" 2>/dev/null
		done
		for d in "$cg"/*/; do [ -d "$d" ] && rmdir "$d"; done
		rmdir "$cg"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

mkfifo "$tmp/hold"
mkdir "$tmp/files"
python3 "$src/tests/live/hostile_names.py" "$tmp/files" <"$tmp/hold" >"$tmp/kids" 2>"$tmp/kids.err" &
hpid=$!
exec 3>"$tmp/hold"
for _ in $(seq 100); do grep -q '^ready$' "$tmp/kids" && break; sleep 0.1; done
grep -q '^ready$' "$tmp/kids" || { fail names-start "$(cat "$tmp/kids.err")"; exit 1; }
pids=$(awk '$1 != "ready" { print $1 }' "$tmp/kids")
first=$(echo "$pids" | head -n 1)
second=$(echo "$pids" | sed -n 2p)
addr=$(awk 'NR == 1 { print $2 }' "$tmp/kids")

# A cgroup named with a byte that is no UTF-8 and a terminal escape, holding the first child: in the memory
# controller's hierarchy (v1 where it is mounted, else the unified one), where pagemap finds a process's group.
cgroot=$(awk '{ for (i = 7; $i != "-"; i++); t = $(i + 1); o = $(i + 3) }
	t == "cgroup" && o ~ /(^|,)memory(,|$)/ { v1 = $5 } t == "cgroup2" && !v2 { v2 = $5 }
	END { print v1 ? v1 : v2 }' /proc/self/mountinfo)
if [ -n "$cgroot" ] && mkdir "$cgroot/pm-names-test.$$" 2>/dev/null; then
	cg="$cgroot/pm-names-test.$$"
	hcg="$cg/$(printf 'g\377\033[1m"\\x')"
	mkdir "$hcg" && echo "$first" >"$hcg/cgroup.procs" || fail names-cgroup "cannot move $first into $hcg"
else
	echo "SKIP names-cgroup: no cgroup2 mount to make a test cgroup in"
fi

# check NAME FORMAT: $tmp/out holds the output of NAME; FORMAT json, jsonl (one object a line), xml, html, ansi or text.
# Every one: strict UTF-8, no raw ESC, BEL or C1 CSI/OSC (JSON escapes control bytes; a JSON C1 would be \u009b).
check() {
	python3 - "$1" "$2" "$tmp/out" <<'PY'
import json, re, sys, xml.dom.minidom
name, fmt, path = sys.argv[1:]
data = open(path, "rb").read()
try:
    text = data.decode("utf-8", "strict")
    if fmt == "json":
        json.loads(text)
    elif fmt == "jsonl":
        for line in text.splitlines():
            json.loads(line)
    elif fmt == "xml":
        xml.dom.minidom.parseString(data)
    elif fmt == "html":	# no name ends the page's script early: one end tag per script tag
        low = text.lower()
        if low.count("</script") != low.count("<script"):
            raise ValueError("%d <script but %d </script" % (low.count("<script"), low.count("</script")))
    if fmt == "ansi":	# its own colours are SGR sequences: nothing else may reach the terminal
        text = re.sub("\x1b\\[[0-9;]*m", "", text)
    bad = [c for c in ("\x1b", "\x07", "\x9b", "\x9d") if c in text]
    if bad:
        raise ValueError("raw %r in the output" % bad)
except Exception as e:
    print("FAIL %s: %s" % (name, str(e)[:300]))
    sys.exit(1)
print("PASS %s" % name)
PY
	r=$?
	[ $r -eq 0 ] || failed=1
	return $r
}

# run NAME FORMAT ARGS...: run pagemap ARGS into $tmp/out, and check its exit and output (audit exits 1 when
# something is exposed: a failure only with a message).
run() {
	name=$1 fmt=$2
	shift 2
	"$pagemap" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$1" = audit ] && ! [ -s "$tmp/err" ]; }; then
		check "$name" "$fmt"
	else
		fail "$name" "pagemap $* exited $rc: $(head -c 300 "$tmp/err")"
		return 1
	fi
}

pidlist=$(echo $pids | tr ' ' ,)
run names-maps json maps -J --output-all "$first"
run names-pages json pages -J --output-all "$first"
run names-ps json ps -J --output-all -p "$pidlist"
run names-ps-cgroup json ps -J --output-all ${cg:+--cgroup "${cg#"$cgroot"}"} -p "$pidlist"
run names-ps-all json ps -J
run names-cache-p json cache -J --output-all -p "$first"
run names-cache-pairs json cache -J --output-all --pairs -p "$first"
run names-cache-file json cache -J --output-all "$tmp"/files/f*
run names-cache-dir json cache -J --output-all "$tmp/files"
run names-numa json numa -J --output-all "$first"
run names-phys-p json phys -J --output-all -p "$first"
run names-wss json wss -J --output-all "$first" 0.1
run names-shared json shared -J "$first" "$second"
run names-v2p json v2p -J "$first" "$addr"
run names-features json features -J
run names-audit json audit -J --output-all
run names-track jsonl track -J "$first" 0.1 1
run names-snapshot text snapshot -p "$pidlist" -o "$tmp/a.pmsnap"
run names-snapshot2 text snapshot -p "$pidlist" -o "$tmp/b.pmsnap"
run names-diff json diff -J --output-all "$tmp/a.pmsnap" "$tmp/b.pmsnap"
run names-replay-maps json -S "$tmp/a.pmsnap" maps -J --output-all "$first"
run names-replay-ps json -S "$tmp/a.pmsnap" ps -J --output-all
run names-render-json json render -f json "$first"
run names-render-svg xml render -f svg "$first"
run names-render-html html render -f html "$first"
# Wide enough that the bands show the file's and the memfd's names; by cgroup, the legend names the cgroup.
run names-render-ansi ansi render -f ansi -w 2000 "$first"
run names-render-ansi-cgroup ansi render -f ansi -w 2000 -c cgroup "$first"
run names-render-svg-cgroup xml render -f svg -c cgroup "$first"
run names-render-json-cgroup json render -f json -c cgroup "$first"

# The names come back exactly: each comm, decoded as docs say (JSON, then every \xHH of a control byte, a
# backslash or a byte from 0x80 up), and each Prometheus label (the format's escapes, then the same).
decode_check() {	# NAME KIND(json|prom): the comms of the children are among the decoded names in $tmp/out
	python3 - "$1" "$2" "$tmp/out" "$src/tests/live" <<'PY'
import json, re, sys
name, kind, path, lib = sys.argv[1:]
sys.path.insert(0, lib)
from hostile_names import COMMS

def undo(b):
    def one(m):
        v = int(m[1], 16)
        return bytes([v]) if v < 0x20 or v in (0x5c, 0x7f) or v >= 0x80 else m[0]
    return re.sub(rb"\\x([0-9a-f]{2})", one, b)

text = open(path, "rb").read().decode("utf-8", "strict")
if kind == "json":
    got = {undo(r["command"].encode()) for r in json.loads(text)["processes"]}
else:
    esc = {"\\": "\\", '"': '"', "n": "\n"}
    got = set()
    for v in re.findall(r'^pagemap_group_processes\{group="((?:[^"\\]|\\.)*)"', text, re.M):
        got.add(undo(re.sub(r"\\(.)", lambda m: esc[m[1]], v).encode()))
missing = [c for c in COMMS if c not in got]
print("FAIL %s: not found back: %r" % (name, missing) if missing else "PASS %s" % name)
sys.exit(1 if missing else 0)
PY
	[ $? -eq 0 ] || failed=1
}
run names-ps-decode json ps -J -p "$pidlist" && decode_check names-ps-decode-exact json
PAGEMAP_OUT_SLOW=1 run names-ps-decode-scols json ps -J -p "$pidlist" && decode_check names-ps-decode-scols-exact json
run names-export-decode text export --group-by comm && decode_check names-export-decode-exact prom
grep -q '\[anon:' "/proc/$first/maps" ||
	echo "SKIP names-anon-vma: this kernel names no anonymous mapping (CONFIG_ANON_VMA_NAME)"

# Tables, aligned and raw, through a pipe and through libsmartcols' own printer: no raw ESC.
run names-maps-table text maps --output-all "$first"
run names-maps-raw text maps -r --output-all "$first"
run names-ps-table text ps --output-all -p "$pidlist"
run names-ps-raw text ps -r --output-all -p "$pidlist"
PAGEMAP_OUT_SLOW=1 run names-ps-table-scols text ps --output-all -p "$pidlist"
PAGEMAP_OUT_SLOW=1 run names-ps-json-scols json ps -J --output-all -p "$pidlist"
PAGEMAP_OUT_SLOW=1 run names-maps-json-scols json maps -J --output-all "$first"
run names-cache-table text cache --output-all -p "$first"
run names-wss-table text wss --output-all "$first" 0.1
run names-track-table text track "$first" 0.1 1

# On a terminal (libsmartcols fits the table to it): through a pty made by script(1), where installed.
if command -v script >/dev/null; then
	for c in "ps --output-all -p $pidlist" "maps --output-all $first" "cache -p $first" "wss $first 0.1"; do
		script -qec "'$pagemap' $c" /dev/null >"$tmp/out" 2>&1 </dev/null
		check "names-tty-${c%% *}" text
	done
else
	echo "SKIP names-tty: no script(1) to make a terminal"
fi

# The same names from an unprivileged user, read by that user (its own processes are all it may read).
upy=$(command -v /usr/bin/python3 || command -v python3)
mkdir "$tmp/u" && chown 65534 "$tmp/u" && chmod 755 "$tmp"
if ! command -v setpriv >/dev/null; then
	echo "SKIP names-unpriv: setpriv (util-linux) is not installed"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups "$upy" -c '' 2>/dev/null; then
	echo "SKIP names-unpriv: uid 65534 cannot run $upy"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups \
	test -w "$tmp/u" -a -x "$tmp/u" -a -x "$pagemap" -a -r "$src/tests/live/hostile_names.py"; then
	# a 0700 parent of $TMPDIR or of the build: every step below would fail for that, not for pagemap
	echo "SKIP names-unpriv: uid 65534 cannot reach $tmp/u, run $pagemap or read hostile_names.py"
else
	as="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
	mkfifo "$tmp/uhold"
	$as "$upy" "$src/tests/live/hostile_names.py" "$tmp/u" <"$tmp/uhold" >"$tmp/ukids" 2>"$tmp/ukids.err" &
	exec 4>"$tmp/uhold"
	for _ in $(seq 100); do grep -q '^ready$' "$tmp/ukids" && break; sleep 0.1; done
	if grep -q '^ready$' "$tmp/ukids"; then
		upids=$(awk '$1 != "ready" { print $1 }' "$tmp/ukids" | paste -sd, -)
		ufirst=$(awk 'NR == 1 { print $1 }' "$tmp/ukids")
		run names-unpriv-ps json ps -J --output-all -p "$upids" && decode_check names-unpriv-ps-exact json
		for c in "ps -J --output-all -p $upids" "maps -J --output-all $ufirst"; do
			if $as "$pagemap" $c >"$tmp/out" 2>"$tmp/err"; then
				check "names-unpriv-${c%% *}-as-user" json
			else
				fail "names-unpriv-${c%% *}-as-user" "$(head -c 300 "$tmp/err")"
			fi
		done
		run names-unpriv-export text export --group-by comm && decode_check names-unpriv-export-exact prom
	else
		fail names-unpriv-start "$(cat "$tmp/ukids.err")"
	fi
	exec 4>&-
fi

# Messages name what failed: a name planted by someone else reaches the terminal on standard error too.
"$pagemap" cache "$tmp/files/gone$(printf '\033[2J\033]0;x\007\377')" >/dev/null 2>"$tmp/out"
if [ $? -eq 1 ] && [ -s "$tmp/out" ]; then
	check names-stderr text
else
	fail names-stderr "cache of a missing file did not fail with a message"
fi

# export: every grouping whose label carries a name, both formats, checked by promtool when installed.
for g in comm cgroup; do
	for f in prometheus openmetrics; do
		run "names-export-$g-$f" text export --group-by "$g" --format "$f"
		if ! grep -q "$(printf '\377')" "$tmp/out" && python3 -c 'import sys; open(sys.argv[1], "rb").read().decode()' "$tmp/out"; then
			pass "names-export-$g-$f-utf8"
		else
			fail "names-export-$g-$f-utf8" "a label value is not UTF-8"
		fi
		# promtool reads the Prometheus format only (its parser refuses OpenMetrics' \" in HELP).
		if [ "$f" != prometheus ]; then
			:
		elif ! command -v promtool >/dev/null; then
			echo "SKIP names-promtool-$g-$f: promtool (Prometheus) is not installed"
		elif promtool check metrics <"$tmp/out" >"$tmp/promtool" 2>&1 ||
		     ! grep -qi 'error\|invalid\|parse' "$tmp/promtool"; then
			pass "names-promtool-$g-$f"
		else
			fail "names-promtool-$g-$f" "$(head -c 300 "$tmp/promtool")"
		fi
	done
done
exit $failed
