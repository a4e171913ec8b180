#!/bin/sh
# render.sh - `pagemap render --track` on a known writer (python3 + ctypes): it writes pages 0-3, 10, 11, 40 and
# 63 of a 64-page mapping between PROT_NONE guard pages every 20 ms; `pagemap track -J --ranges` records it and
# the heat map's cells over that mapping hold exactly those pages in every full interval. Also the live picture
# of the writer: its mapping is a band, valid SVG, and the JSON's cells add up to its totals. Colourings by value
# of a quiet process: node bytes as `pagemap numa` counts them, cgroup and class adding up (root), hidden unprivileged.
# Usage: tests/live/render.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP render-live: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
writer= quiet= heap=
cleanup() {
	[ -n "$writer" ] && kill "$writer" 2>/dev/null
	[ -n "$heap" ] && kill "$heap" 2>/dev/null
	[ -n "$quiet" ] && kill "$quiet" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

python3 - >"$work/addr" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PG = os.sysconf("SC_PAGE_SIZE")
base = libc.mmap(None, 66 * PG, 3, 0x22, -1, 0)
libc.mprotect(base, PG, 0)
libc.mprotect(base + 65 * PG, PG, 0)
first = base + PG
print("%x" % first, flush=True)
buf = (ctypes.c_char * (64 * PG)).from_address(first)
end = time.time() + 30
while time.time() < end:
    for p in (0, 1, 2, 3, 10, 11, 40, 63):
        buf[p * PG] = bytes([(buf[p * PG][0] + 1) % 256])
    time.sleep(0.02)
time.sleep(30)
PY
writer=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$work/addr" ] && break; sleep 0.2; done
addr=$(cat "$work/addr")
[ -n "$addr" ] || { echo "FAIL render-live-setup: the writer did not start"; exit 1; }

if ! "$pagemap" track -J --ranges "$writer" 0.3 6 >"$work/rec.json" 2>"$work/err"; then
	echo "SKIP render-live-track: pagemap track cannot track here: $(tail -1 "$work/err")"
else
	"$pagemap" render --track "$work/rec.json" -f json "$writer" >"$work/heat.json" 2>"$work/err" &&
		out=$(python3 "$src/tests/cli/render_check.py" writer "$work/heat.json" "$addr" 64 0,1,2,3,10,11,40,63) &&
		echo "PASS render-live-writer-heat ($out)" || echo "FAIL render-live-writer-heat: $out $(cat "$work/err")"
	out=$(python3 "$src/tests/cli/render_check.py" heat "$work/heat.json" "$work/rec.json") &&
		echo "PASS render-live-heat-exact" || echo "FAIL render-live-heat-exact: $out"
fi
"$pagemap" render -f json "$writer" >"$work/map.json" 2>"$work/err" &&
	python3 - "$work/map.json" "$addr" <<'PY' && echo "PASS render-live-band" || echo "FAIL render-live-band: $(cat "$work/err")"
import json, sys
r = json.load(open(sys.argv[1]))["render"]
band = [s for s in r["segments"] if s["kind"] == "band" and int(s["start"], 16) == int(sys.argv[2], 16)]
assert len(band) == 1 and band[0]["size"] == 64 * r["page_size"], band
assert band[0]["bytes"]["present"] == 8 * r["page_size"], band[0]["bytes"]
PY
if ! command -v xmllint >/dev/null; then
	echo "SKIP render-live-svg: no xmllint (Debian libxml2-utils)"
elif "$pagemap" render -f svg -o "$work/map.svg" "$writer" && xmllint --noout "$work/map.svg"; then
	echo "PASS render-live-svg"
else
	echo "FAIL render-live-svg"
fi
# --- the page's runs past its 20000: a heap whose every page has a frame of its own (pages written even ones
# first, then odd ones), more runs than the page keeps; the walk stops following frames there, and the
# mapping's bytes are still every page, as smaps counts them ---
if [ "$(id -u)" != 0 ]; then
	echo "SKIP render-live-html-runs: not root (frames hidden: runs are not cut by frames)"
else
	python3 - >"$work/heap" <<'PY' &
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PG, N = os.sysconf("SC_PAGE_SIZE"), 24576
base = libc.mmap(None, (N + 2) * PG, 3, 0x22, -1, 0)
libc.mprotect(base, PG, 0)
libc.mprotect(base + (N + 1) * PG, PG, 0)
libc.madvise(base + PG, N * PG, 15)	# MADV_NOHUGEPAGE: 4 KiB pages, each its own frame run
buf = (ctypes.c_char * (N * PG)).from_address(base + PG)
for start in (0, 1):
    for p in range(start, N, 2):
        buf[p * PG] = b"x"
print("%x %d" % (base + PG, N * PG), flush=True)
time.sleep(60)
PY
	heap=$!
	for _ in $(seq 50); do [ -s "$work/heap" ] && break; sleep 0.2; done
	if ! [ -s "$work/heap" ]; then
		echo "FAIL render-live-html-runs: the heap writer did not start"
	else
		"$pagemap" render -f html -o "$work/heap.html" "$heap" 2>"$work/err" &&
			out=$(python3 - "$work/heap.html" "/proc/$heap/smaps" $(cat "$work/heap") <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
addr, size = int(sys.argv[3], 16), int(sys.argv[4])
rss = None
for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", open(sys.argv[2]).read()):
    if int(block.split("-")[0], 16) == addr:
        rss = int(re.search(r"^Rss:\s+(\d+) kB", block, re.M).group(1)) * 1024
mp = [m for m in d["maps"] if int(m[0], 16) == addr]
assert len(mp) == 1, "the heap is not one mapping of the page"
by = dict(zip(d["classes"], mp[0][4]))
assert len(d["runs"]) == 20000 and d["runs_left_out"] > 0, (len(d["runs"]), d["runs_left_out"])
assert by["present"] == by["anon"] == rss == size, (by, rss, size)
starts = [int(r[1], 16) for r in d["runs"]]
assert starts == sorted(starts) and all(r[4].startswith("0x") for r in d["runs"] if r[3] & 1 and r[3] & 1 << 11), "runs"
print("%d bytes present, smaps Rss %d; %d runs kept, %d left out" % (by["present"], rss, len(d["runs"]), d["runs_left_out"]))
PY
) && echo "PASS render-live-html-runs ($out)" || echo "FAIL render-live-html-runs: $out $(cat "$work/err")"
	fi
	kill "$heap" 2>/dev/null
fi
# --- colourings by value on a quiet process (sleep: its pages do not change between two reads) ---
sleep 60 &
quiet=$!
# Until it sleeps: right after the fork it is still exec'ing and linking, and its pages change under the reads.
for _ in $(seq 50); do
	case $(cat "/proc/$quiet/wchan" 2>/dev/null) in *nanosleep*) break ;; esac
	sleep 0.1
done
"$pagemap" render -c node -f json "$quiet" >"$work/node.json" 2>"$work/err" &&
	"$pagemap" numa -J "$quiet" >"$work/numa.json" 2>>"$work/err"
if ! [ -s "$work/numa.json" ]; then
	echo "SKIP render-live-colour-node: pagemap numa cannot read here: $(tail -1 "$work/err")"
else
	out=$(python3 "$src/tests/cli/render_check.py" node-legend "$work/node.json" "$work/numa.json") && echo "PASS render-live-colour-node ($out)" || echo "FAIL render-live-colour-node: $out"
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP render-live-colour-root: not root (kpagecgroup and kpageflags need it)"
else
	# cgroup: the pages of a process started in this cgroup are charged to it (or to a parent, for shared
	# page cache); class: the classes add up to the present bytes, none hidden
	cg=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p' "/proc/$quiet/cgroup" | head -1)
	[ -n "$cg" ] || cg=$(sed -n 's/^0:://p' "/proc/$quiet/cgroup")
	"$pagemap" render -c cgroup -f json "$quiet" >"$work/cg.json" 2>"$work/err" &&
		"$pagemap" render -c class -f json "$quiet" >"$work/class.json" 2>>"$work/err" &&
		out=$(python3 - "$work/cg.json" "$work/class.json" "$cg" <<'PY'
import json, sys
cg, cl = (json.load(open(f))["render"] for f in sys.argv[1:3])
assert not cg["note"] and not cl["note"], (cg["note"], cl["note"])
present = cl["total"].get("present", 0)
values = {k: v for k, v in cg["legend"].items() if k not in ("none", "swapped")}
assert sum(values.values()) == present, (values, present)
assert sum(v for k, v in cl["legend"].items() if k not in ("none", "swapped")) == present, cl["legend"]
assert values.get(sys.argv[3], 0) > 0, "nothing charged to %s: %s" % (sys.argv[3], values)
print("%s %d of %d bytes" % (sys.argv[3], values[sys.argv[3]], present))
PY
) && echo "PASS render-live-colour-cgroup ($out)" || echo "FAIL render-live-colour-cgroup: $out $(cat "$work/err")"
	# unprivileged: frame numbers hidden, the picture says so (a process of its own user)
	. "$(dirname "$0")/lib/nobody.sh"
	upm=$(nobody_pagemap "$pagemap" "$work")
	if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "sleep 30 & \"$upm\" render -c class -f ansi -w 80 \$!; kill \$!" \
		>"$work/user.ansi" 2>"$work/err" && grep -q '^note: frame numbers hidden' "$work/user.ansi" &&
		grep -q ' hidden [0-9.]*[KMG]' "$work/user.ansi"; then
		echo "PASS render-live-colour-hidden"
	else
		echo "FAIL render-live-colour-hidden: $(cat "$work/err") $(tail -2 "$work/user.ansi")"
	fi
fi
kill "$quiet" 2>/dev/null
exit 0
