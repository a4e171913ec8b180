#!/bin/sh
# total_rows.sh - -n and -r print rows only: shared's KIND total, cache --all's [meminfo Cached] and cache DIR's total,
# wss's and track's total rows are left out there, --total brings them back, JSON keeps what it has
# (pagemap(1), Output). Two sleep children of this test are the processes shared compares and
# the process track and wss watch.
# Usage: tests/live/total_rows.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap=$build/pagemap
[ "$(id -u)" = 0 ] || { echo "SKIP total-rows: needs root (shared reads frame numbers)"; exit 77; }
a= b=
files=$(mktemp -d)
trap 'kill $a $b 2>/dev/null; rm -rf "$files"' EXIT
sleep 600 &
a=$!
sleep 600 &
b=$!
fail=0

# want NAME COUNT PATTERN CMD...: the lines of CMD's output matching PATTERN are COUNT.
want() {
	name=$1 count=$2 pat=$3
	shift 3
	got=$("$pagemap" "$@" 2>/dev/null | grep -c -- "$pat")
	if [ "$got" = "$count" ]; then
		echo "PASS total-rows-$name"
	else
		echo "FAIL total-rows-$name: pagemap $* printed $got lines matching '$pat', want $count"
		fail=1
	fi
}

want shared-table 1 '^total ' shared -o KIND,PID,SHARED "$a" "$b"
want shared-n 0 '^total\b' shared -n -o KIND,PID,SHARED "$a" "$b"
want shared-r 0 '^total ' shared -r -o KIND,PID,SHARED "$a" "$b"
want shared-r-total 1 '^total ' shared -r --total -o KIND,PID,SHARED "$a" "$b"
want shared-json 1 '"kind": "total"' shared -J -o KIND,PID,SHARED "$a" "$b"
want cache-table 1 'meminfo Cached' cache --all -t 1 -o CACHED,PATH
want cache-r 0 'meminfo' cache --all -r -t 1 -o CACHED,PATH
want cache-n-total 1 'meminfo Cached' cache --all -n --total -t 1 -o CACHED,PATH
want cache-json 1 '"\[meminfo Cached\]"' cache --all -J -t 1 -o CACHED,PATH
# cache FILE|DIR: a table-only total line (its JSON rows are the files it sums). Files of our own, read
# into the cache: the guests have no source tree.
printf 'one\n' > "$files/a" && printf 'two\n' > "$files/b" && cat "$files/a" "$files/b" > /dev/null
want cache-dir-table 1 '\[total: ' cache -o CACHED,PATH "$files"
want cache-dir-r 0 'total' cache -r -o CACHED,PATH "$files"
want cache-dir-n-total 1 '\[total: ' cache -n --total -o CACHED,PATH "$files"
want cache-dir-json 0 'total' cache -J -o CACHED,PATH "$files"
# wss: its total row, the tree's root (the mappings stand alone without it).
want wss-table 1 '^total ' wss -o MAPPING,RSS "$a" 0.1
want wss-n 0 '^total' wss -n -o MAPPING,RSS "$a" 0.1
want wss-r-total 1 '^total ' wss -r --total -o MAPPING,RSS "$a" 0.1
want wss-json 1 '"mapping": "total"' wss -J -o MAPPING,RSS "$a" 0.1
# track: its table's total row, per interval (a sleep child writes nothing: the total is 0).
if "$pagemap" track "$a" 0.2 1 >/dev/null 2>&1; then
	want track-table 1 ' total$' track "$a" 0.2 1
	want track-n 0 'total' track -n "$a" 0.2 1
	want track-n-total 1 ' total$' track -n --total "$a" 0.2 1
else
	echo "SKIP total-rows-track: pagemap track cannot watch a process here"
fi
exit "$fail"
