#!/bin/sh
# wss_series.sh - `pagemap wss PID INTERVAL COUNT`: COUNT windows back to back, one JSON object per
# window and line with -J (the total in its head, the mappings' rows summing to it), one heading and
# table per window otherwise, a stop signal between windows ending cleanly with the windows printed;
# COUNT 1 keeps the one document it always printed. The target is a child of this test that keeps
# touching an 8 MiB buffer, so every window sees those pages accessed (smaps Rss holds them).
# Usage: tests/live/wss_series.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pm=$build/pagemap
skip() { echo "SKIP wss_series: $*"; exit 77; }
[ -x "$pm" ] || skip "$pm is not built"
command -v python3 >/dev/null || skip "no python3 to touch memory and check JSON"
dir=$(mktemp -d) || exit 1
child= wss=
trap 'kill $child $wss 2>/dev/null; rm -rf "$dir"' EXIT
fail=0
ok() { echo "PASS wss_series_$1"; }
bad() { echo "FAIL wss_series_$1: $2"; fail=1; }

python3 -c '
import time
b = bytearray(8 << 20)
while True:
    for i in range(0, len(b), 4096):
        b[i] = (b[i] + 1) & 255
    time.sleep(0.01)
' &
child=$!
# Wait until the buffer is resident (smaps Rss of the process over 8 MiB), at most 10 s.
i=0
while [ $i -lt 100 ] && [ "$(awk '/^VmRSS/ { print $2 }' /proc/$child/status 2>/dev/null || echo 0)" -lt 8192 ]; do
	sleep 0.1; i=$((i + 1))
done

# The child's pages are accessed in every window unless someone else clears their accessed bits: a running
# DAMON (kdamond) samples by clearing them, and its pageout scheme clears them in the regions it finds cold
# (this host runs one: paddr, pageout of regions idle 60 s, which a region holding the child's pages with cold
# ones can be). Then a page touched 10 ms before the read may read not accessed: 59 of 2,048 pages once.
least=$((8 << 20))
for st in /sys/kernel/mm/damon/admin/kdamonds/*/state /sys/module/damon_reclaim/parameters/enabled \
	/sys/module/damon_lru_sort/parameters/enabled; do
	if [ "$(cat "$st" 2>/dev/null)" = on ] || [ "$(cat "$st" 2>/dev/null)" = Y ]; then
		least=$((7 << 20))
		echo "  DAMON is on ($st): accessed bits are cleared by it too; at least 7 of the 8 MiB must read accessed"
		break
	fi
done

# check_lines METHOD FILE COUNT: COUNT lines, each a complete window, rows summing to the head.
check_lines() {
	LEAST=$least python3 - "$@" <<'PY'
import json, os, sys
method, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(path).read().splitlines()
assert len(lines) == count, (len(lines), "lines")
for i, line in enumerate(lines, 1):
    w = json.loads(line)
    assert w["index"] == i, w["index"]
    assert w["method"] == method, w["method"]
    assert w["window"] == 0.2 and w["measured"] > 0 and w["maximum"] >= w["measured"], w
    rows = w["wss"]
    assert rows and all("children" not in r and r["mapping"] != "total" for r in rows), rows[:2]
    assert sum(r["rss"] for r in rows) == w["rss"], (sum(r["rss"] for r in rows), w["rss"])
    assert sum(r["accessed"] for r in rows) == w["accessed"], (sum(r["accessed"] for r in rows), w["accessed"])
    assert w["accessed"] >= int(os.environ["LEAST"]), ("accessed", w["accessed"], "want at least", os.environ["LEAST"])
    assert (w["untracked"] is None) == (method != "idle"), w["untracked"]
    if i > 1:
        assert w["t"] > prev, (w["t"], prev)
    prev = w["t"]
PY
}

for method in referenced idle; do
	if [ $method = idle ] && ! "$pm" features -r -n -o FEATURE,STATUS 2>/dev/null | grep -q '^idle-page-tracking yes'; then
		echo "SKIP wss_series_json_idle: $("$pm" features -o FEATURE,DETAIL 2>/dev/null | sed -n 's/^idle-page-tracking *//p')"
		continue
	fi
	"$pm" wss -J -m $method "$child" 0.2 3 >"$dir/j" 2>"$dir/err"; rc=$?
	if [ $rc -eq 0 ] && err=$(check_lines $method "$dir/j" 3 2>&1); then
		ok json_$method
	else
		bad json_$method "rc $rc: $err $(tail -1 "$dir/err")"
	fi
done

# Unprivileged for real: the owner measures its own process (referenced: clear_refs and smaps).
nob="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP wss_series_unprivileged: needs root and setpriv to run as nobody"
elif ! $nob /usr/bin/python3 -c '' 2>/dev/null; then
	echo "SKIP wss_series_unprivileged: nobody cannot run /usr/bin/python3"
else
	. "$(dirname "$0")/lib/nobody.sh"
	chmod 755 "$dir"
	upm=$(nobody_pagemap "$pm" "$dir")
	$nob /usr/bin/python3 -c 'import time; b = bytearray(8 << 20); exec("while True:\n for i in range(0, len(b), 4096): b[i] ^= 1\n time.sleep(0.01)")' &
	uchild=$!
	i=0
	while [ $i -lt 100 ] && [ "$(awk '/^VmRSS/ { print $2 }' /proc/$uchild/status 2>/dev/null || echo 0)" -lt 8192 ]; do
		sleep 0.1; i=$((i + 1))
	done
	$nob "$upm" wss -J "$uchild" 0.2 2 >"$dir/u" 2>"$dir/err"; rc=$?
	kill $uchild
	if [ $rc -eq 0 ] && err=$(check_lines referenced "$dir/u" 2 2>&1); then
		ok unprivileged
	else
		bad unprivileged "rc $rc: $err $(tail -1 "$dir/err")"
	fi
fi

# render --wss reads a series as wss (each line's "t" comes before its "wss"), one row per window.
if "$pm" render --wss "$dir/j" -f json >"$dir/heat" 2>"$dir/err" && grep -q '"kind":"wss"' "$dir/heat"; then
	ok render
else
	bad render "$(head -c 200 "$dir/heat") $(head -1 "$dir/err")"
fi

# COUNT 1, given or not: the document it always was (the tree under the total row), not a line.
"$pm" wss -J "$child" 0.2 1 >"$dir/one" 2>/dev/null
"$pm" wss -J "$child" 0.2 >"$dir/def" 2>/dev/null
if python3 - "$dir/one" "$dir/def" <<'PY'
import json, sys
for p in sys.argv[1:]:
    text = open(p).read()
    assert text.count("\n") > 3, "one line"
    t = json.loads(text)["wss"]
    assert len(t) == 1 and t[0]["mapping"] == "total" and t[0]["children"], t
PY
then ok count_one; else bad count_one "$(head -c 300 "$dir/one")"; fi

# The table: a heading per window, each over its own table with its total row.
"$pm" wss -o MAPPING,RSS,ACCESSED "$child" 0.2 2 >"$dir/t" 2>/dev/null; rc=$?
h=$(grep -c '^# window [12] of 2, t=' "$dir/t"); n=$(grep -c '^total ' "$dir/t")
[ $rc -eq 0 ] && [ "$h" = 2 ] && [ "$n" = 2 ] && ok table || bad table "rc $rc, $h headings, $n totals"

# Bad counts: a usage error.
bc=ok
for c in 0 x 1.5 1x; do
	"$pm" wss "$child" 0.2 "$c" >/dev/null 2>"$dir/err"; rc=$?
	[ $rc -eq 2 ] && grep -q "invalid count '$c'" "$dir/err" || { bad bad_count "COUNT $c: rc $rc $(head -1 "$dir/err")"; bc=; }
done
[ -n "$bc" ] && ok bad_count

# SIGINT between windows: exit 0, the windows printed whole, stderr says so (the first line awaited, no timing).
# (The file exists before the command starts: the loop below must never read a missing file as "done".)
: >"$dir/s"
"$pm" wss -J "$child" 0.5 1000 >>"$dir/s" 2>"$dir/serr" &
wss=$!
i=0
while [ $i -lt 200 ] && [ "$(wc -l <"$dir/s")" -lt 1 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT $wss 2>/dev/null
wait $wss; rc=$?
wss=
lines=$(wc -l <"$dir/s")
if [ $rc -eq 0 ] && [ "$lines" -ge 1 ] && grep -q "stopped by signal 2: $lines of 1000 windows reported" "$dir/serr" &&
	python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$dir/s"; then
	ok sigint
else
	bad sigint "rc $rc, $lines lines: $(tail -1 "$dir/serr")"
fi
exit $fail
