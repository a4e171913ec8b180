#!/bin/sh
# anon_names.sh - one convention for an anonymous mapping's name in every command: an empty PATH
# (null in JSON), as /proc/PID/maps and pmap -X leave it; never "[anon]". A python3 child maps
# 16 anonymous pages without a name and writes them; maps, pages, numa and wss are asked about
# it in JSON, and the rows that start there must name nothing.
# Usage: tests/live/anon_names.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap=$build/pagemap
command -v python3 >/dev/null || { echo "SKIP anon-names: python3 is not installed"; exit 77; }
work=$(mktemp -d) || exit 1
child=
cleanup() {
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
python3 - >"$work/out" 2>&1 <<'PY' &
import ctypes, mmap, os, time
ps = mmap.PAGESIZE
m = mmap.mmap(-1, 16 * ps, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
m.write(b"a" * (16 * ps))
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print(os.getpid(), "0x%x" % addr, flush=True)
# Keep touching the pages, so that wss finds them accessed in its window; killed at the end.
while True:
	m[0:1] = b"b"
	time.sleep(0.01)
PY
child=$!
tries=0
while ! [ -s "$work/out" ]; do
	tries=$((tries + 1))
	if [ "$tries" -ge 400 ] || ! kill -0 "$child" 2>/dev/null; then
		echo "FAIL anon-names: the child did not start: $(cat "$work/out")"
		exit 1
	fi
	sleep 0.05
done
read -r pid start <"$work/out"
fail=0

# check NAME KEY ARGS...: pagemap -J ARGS; the rows (at any depth) that start at $start name nothing under KEY.
check() {
	name=$1 key=$2
	shift 2
	if ! "$pagemap" "$@" >"$work/$name.json" 2>"$work/$name.err"; then
		echo "SKIP anon-names-$name: pagemap $* failed: $(head -c 300 "$work/$name.err" | tr '\n' ' ')"
		return
	fi
	if python3 - "$work/$name.json" "$start" "$key" <<'PY'
import json, sys
doc, start, key = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
found = []
def rows(v):
	if isinstance(v, dict):
		if v.get("start") == start:
			found.append(v)
		for x in v.values():
			rows(x)
	elif isinstance(v, list):
		for x in v:
			rows(x)
rows(doc)
assert found, "no row starts at " + start
bad = [r for r in found if r.get(key) is not None]
assert not bad, bad
assert "[anon]" not in open(sys.argv[1]).read()
PY
	then
		echo "PASS anon-names-$name"
	else
		echo "FAIL anon-names-$name: an anonymous mapping is named (want $key null)"
		fail=1
	fi
}

check maps path maps -J "$pid"
check pages path pages -J -o START,END,PATH "$pid" "$start"
check numa path numa -J -o PID,START,NODE,TOTAL,PATH "$pid"
check wss mapping wss -J "$pid" 0.2
exit "$fail"
