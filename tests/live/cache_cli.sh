#!/bin/sh
# cache_cli.sh - pagemap cache on the live system: usage errors, a file of known size, JSON, and the system view's rows adding up to meminfo Cached.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pm=$build/pagemap
skip() { echo "SKIP cache_cli: $*"; exit 77; }
[ -x "$pm" ] || skip "$pm is not built"
command -v python3 >/dev/null || skip "no python3 to check JSON"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
ok() { echo "PASS cache_cli_$1"; }
bad() { echo "FAIL cache_cli_$1: $2"; }

# Usage: exit 2 with one line and the hint; --help exit 0 on stdout.
"$pm" cache >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "Try 'pagemap cache --help'" "$dir/err"; then ok usage; else bad usage "rc $rc: $(cat "$dir/err")"; fi
"$pm" cache --top 0 --all >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok bad_top || bad bad_top "rc $rc"
"$pm" cache --help >"$dir/out" 2>&1 && grep -q "unattributed" "$dir/out" && ok help || bad help "$(head -3 "$dir/out")"

# A written, synced file: cachestat says every byte cached (before 6.5 the row says unknown: skip).
dd if=/dev/zero of="$dir/f" bs=4096 count=32 status=none && sync "$dir/f" 2>/dev/null
"$pm" cache -J -o CACHED,SIZE,METHOD,PATH "$dir/f" >"$dir/json" 2>"$dir/err"; rc=$?
if grep -q ENOSYS "$dir/err" 2>/dev/null; then
	echo "SKIP cache_cli_file: no cachestat"
elif [ $rc -eq 0 ] && python3 - "$dir/json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["cache"]
assert len(r) == 1, r
assert r[0]["cached"] == 131072 and r[0]["size"] == 131072 and r[0]["method"] == "cachestat", r
PY
then ok file; else bad file "rc $rc: $(cat "$dir/err")"; fi

# A missing file: a message, exit 1, the other files still shown.
"$pm" cache "$dir/f" "$dir/missing" >"$dir/out" 2>"$dir/err"; rc=$?
[ $rc -eq 1 ] && grep -q "$dir/f" "$dir/out" && grep -q "cannot measure $dir/missing" "$dir/err" && ok missing ||
	bad missing "rc $rc"

# A directory: every regular file below it, nested ones included, once per inode; symbolic links and FIFOs
# are not followed or opened; a trailing slash does not double the separator.
mkdir -p "$dir/t/sub/deeper" && cp "$dir/f" "$dir/t/a" && cp "$dir/f" "$dir/t/sub/deeper/b" &&
	ln "$dir/t/a" "$dir/t/sub/hard" && ln -s "$dir/f" "$dir/t/link" && mkfifo "$dir/t/fifo"
"$pm" cache -r -n -o PATH "$dir/t/" >"$dir/out" 2>"$dir/err"; rc=$?
n=$(wc -l <"$dir/out")
if [ $rc -eq 0 ] && [ "$n" -eq 2 ] && grep -qx "$dir/t/sub/deeper/b" "$dir/out" &&
	grep -Eqx "$dir/t/(a|sub/hard)" "$dir/out" && ! grep -q "//" "$dir/out"; then
	ok tree
else
	bad tree "rc $rc, $n rows: $(tr '\n' ' ' <"$dir/out") $(cat "$dir/err")"
fi

# A directory's total row, as vmtouch's: files, cached bytes and size summed over the rows (known
# files read into the cache); a table-only line as maps' and ps's: rows only with -n or -r unless
# --total, and none in JSON, whose rows are what it sums.
mkdir -p "$dir/sum/d" && dd if=/dev/urandom of="$dir/sum/a" bs=4096 count=5 status=none &&
	dd if=/dev/urandom of="$dir/sum/d/b" bs=4096 count=3 status=none && printf 'x' >"$dir/sum/c" &&
	sync && cat "$dir/sum/a" "$dir/sum/d/b" "$dir/sum/c" >/dev/null
"$pm" cache -b -o CACHED,DIRTY,SIZE,PATH "$dir/sum" >"$dir/out" 2>"$dir/err"; rc=$?
if grep -q ENOSYS "$dir/err" 2>/dev/null; then
	echo "SKIP cache_cli_total: no cachestat"
elif [ $rc -eq 0 ] && awk -v want="[total: 3 files]" '
	NR == 1 { next }
	{ path = $4; for (i = 5; i <= NF; i++) path = path " " $i }
	path == want { total++; tc = $1; td = $2; ts = $3; next }
	{ rows++; c += $1; d += $2; s += $3 }
	END { exit !(total == 1 && rows == 3 && tc == c && td == d && ts == s && ts == 8 * 4096 + 1 && tc >= 8 * 4096) }
' "$dir/out"; then
	ok total
else
	bad total "rc $rc: $(cat "$dir/out" "$dir/err")"
fi
n=$("$pm" cache -r -o PATH "$dir/sum" 2>/dev/null | grep -c 'total')
t=$("$pm" cache -n --total -o PATH "$dir/sum" 2>/dev/null | grep -c '^\[total: 3 files\]$')
j=$("$pm" cache -J -o PATH "$dir/sum" 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["cache"]))')
[ "$n" = 0 ] && [ "$t" = 1 ] && [ "$j" = 3 ] && ok total_rules || bad total_rules "-r: $n totals, -n --total: $t, JSON: $j rows"

# A directory the caller may not read is said, with exit 1, not skipped in silence (root: run as nobody).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$dir/u/no" && chmod 755 "$dir" "$dir/u" && cp "$dir/f" "$dir/u/a" && chmod 644 "$dir/u/a" && chmod 000 "$dir/u/no"
	. "$(dirname "$0")/lib/nobody.sh"
	upm=$(nobody_pagemap "$pm" "$dir")
	setpriv --reuid=65534 --regid=65534 --clear-groups "$upm" cache -r -n -o PATH "$dir/u" >"$dir/out" 2>"$dir/err"; rc=$?
	chmod 755 "$dir/u/no"
	[ $rc -eq 1 ] && grep -qx "$dir/u/a" "$dir/out" && grep -q "cannot walk $dir/u/no: Permission denied" "$dir/err" &&
		ok unreadable_dir || bad unreadable_dir "rc $rc: $(cat "$dir/err")"
else
	echo "SKIP cache_cli_unreadable_dir: needs root and setpriv"
fi

# The system view: the rows (top N, the others, unattributed) add up to meminfo Cached, which is printed.
"$pm" cache --all --top 5 -J >"$dir/json" 2>"$dir/err"; rc=$?
if [ $rc -eq 0 ] && python3 - "$dir/json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["cache"]
paths = [r["path"] for r in rows]
assert paths[-2] == "[unattributed]" and paths[-1] == "[meminfo Cached]", paths
total = rows[-1]["cached"]
found = sum(r["cached"] or 0 for r in rows[:-2])
assert found + rows[-2]["cached"] == total or (rows[-2]["cached"] == 0 and found >= total), (found, rows[-2:])
assert len(rows) <= 8, len(rows)
PY
then ok system_view; else bad system_view "rc $rc: $(cat "$dir/err")"; fi

# Per process: this shell's pairs include its own executable or libc, mapped.
"$pm" cache -p $$ -r -n -o VIA,PATH >"$dir/out" 2>"$dir/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^map.*libc" "$dir/out" && ok pairs || bad pairs "rc $rc: $(cat "$dir/err")"
"$pm" cache -p $$ --processes -J >"$dir/out" 2>"$dir/err"; rc=$?
[ $rc -eq 0 ] && python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["cache"]; assert len(p)==1 and p[0]["files"]>0' "$dir/out" &&
	ok processes || bad processes "rc $rc"
"$pm" cache -p 4194303 >/dev/null 2>"$dir/err"; rc=$?
[ $rc -eq 1 ] && ok no_process || bad no_process "rc $rc: $(cat "$dir/err")"
exit 0
