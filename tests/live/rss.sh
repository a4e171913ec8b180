#!/bin/sh
# rss.sh - RSS is the kernel's Rss and THP the process's own huge pages, in every command: a child read-faults a
# plain anonymous region (the zero page) and a MADV_HUGEPAGE region (the huge zero page, where THP is enabled and
# use_zero_page is 1) and writes two more (small pages, one huge page); for each of its mappings `maps` RSS,
# Python's Usage.rss and ps's total equal smaps Rss (smaps_rollup), and `maps` THP, Python's Usage.thp and
# render's "huge" equal AnonHugePages.
# Usage: tests/live/rss.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP rss: no python3"; exit 77; }
[ -x "$pagemap" ] || { echo "SKIP rss: $pagemap is not built"; exit 77; }
work=$(mktemp -d) || exit 1
child=
cleanup() {
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

thp=/sys/kernel/mm/transparent_hugepage
huge=no
if grep -q '\[never\]' "$thp/enabled" 2>/dev/null; then
	echo "SKIP rss-huge-zero: THP is disabled ($thp/enabled says never)"
elif [ "$(cat "$thp/use_zero_page" 2>/dev/null)" != 1 ]; then
	echo "SKIP rss-huge-zero: $thp/use_zero_page is not 1: read faults get no huge zero page"
else
	huge=yes
fi

# The child: A read-faulted (zero page), B MADV_HUGEPAGE read-faulted (huge zero page), C written small pages,
# D MADV_HUGEPAGE written (a huge page of its own). It prints their starts, then sleeps: its pages stay still.
cat >"$work/child.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PG, HP, MADV_HUGEPAGE, MADV_NOHUGEPAGE = os.sysconf("SC_PAGE_SIZE"), 2 << 20, 14, 15

def region(size, advice):
    # 2 MiB aligned, with a page of PROT_NONE after it so that no neighbour merges into the mapping.
    raw = libc.mmap(None, size + 2 * HP, 3, 0x22, -1, 0)
    start = (raw + HP - 1) & ~(HP - 1)
    if start > raw:
        libc.munmap(raw, start - raw)
    libc.munmap(start + size + PG, raw + size + 2 * HP - start - size - PG)
    libc.mmap(start + size, PG, 0, 0x32, -1, 0)
    libc.madvise(start, size, advice)
    return start

a = region(16 << 20, MADV_NOHUGEPAGE)
b = region(8 << 20, MADV_HUGEPAGE if sys.argv[1] == "yes" else MADV_NOHUGEPAGE)
c = region(4 << 20, MADV_NOHUGEPAGE)
d = region(4 << 20, MADV_HUGEPAGE if sys.argv[1] == "yes" else MADV_NOHUGEPAGE)
s = 0
for p in range(0, 16 << 20, PG):
    s += ctypes.c_char.from_address(a + p).value[0]
for p in range(0, 8 << 20, PG):
    s += ctypes.c_char.from_address(b + p).value[0]
ctypes.memset(c, 1, 4 << 20)
ctypes.memset(d, 1, 4 << 20)
print("%x %x %x %x" % (a, b, c, d), flush=True)
time.sleep(120)
PY
# start_child OUT [PREFIX...]: the child in the background (as PREFIX runs it), its starts in OUT; $! is it.
start_child() {
	out=$1
	shift
	"$@" "$py" "$work/child.py" "$huge" >"$out" &
	pid=$!
	for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.2; done
	# Until it sleeps: the interpreter's own pages must not move between the reads compared.
	for _ in $(seq 50); do
		case $(cat "/proc/$pid/wchan" 2>/dev/null) in *nanosleep*|*hrtimer*) break ;; esac
		sleep 0.1
	done
	[ -s "$out" ]
}
py=python3
start_child "$work/addr" || { echo "FAIL rss-setup: the child did not start"; exit 1; }
child=$pid

"$pagemap" maps -J -b -o START,RSS,PRESENT,ZERO,THP "$child" >"$work/maps.json" 2>"$work/err" ||
	{ echo "FAIL rss-maps: $(cat "$work/err")"; exit 1; }
"$pagemap" ps -J -b -o PID,RSS -p "$child" >"$work/ps.json" 2>>"$work/err" ||
	{ echo "FAIL rss-ps: $(cat "$work/err")"; exit 1; }
"$pagemap" render -f json "$child" >"$work/render.json" 2>>"$work/err" ||
	{ echo "FAIL rss-render: $(cat "$work/err")"; exit 1; }
cp "/proc/$child/smaps" "$work/smaps" && cp "/proc/$child/smaps_rollup" "$work/rollup" ||
	{ echo "FAIL rss-smaps: cannot read the child's smaps"; exit 1; }
pylib=$build/python/lib
[ -d "$pylib/libpagemap" ] || pylib=

PYTHONPATH=$pylib python3 - "$work" "$child" "$huge" "$(cat "$work/addr")" <<'PY'
import json, sys
work, pid, huge, addrs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes", [int(x, 16) for x in sys.argv[4].split()]

def smaps(path):
    maps, cur = {}, None
    for line in open(path):
        f = line.split()
        if "-" in f[0] and not f[0].endswith(":"):
            cur = maps.setdefault(int(f[0].split("-")[0], 16), {})
        elif f[0].endswith(":") and len(f) >= 2 and f[1].isdigit():
            cur[f[0][:-1]] = int(f[1]) * 1024
    return maps

sm = smaps(work + "/smaps")
rollup = list(smaps(work + "/rollup").values())[0]	# one line of addresses, then the sums
fails = []
def check(name, got, want, where):
    if got != want:
        fails.append("%s %#x: %s, smaps %s" % (name, where, got, want))

rows = json.load(open(work + "/maps.json"))["maps"]
by_start = {int(r["start"], 16): r for r in rows if r["start"] != "total" and r.get("start")}
for a in addrs:
    r, k = by_start.get(a), sm.get(a)
    if r is None or k is None:
        fails.append("mapping %#x missing (maps %s, smaps %s)" % (a, r is not None, k is not None))
        continue
    check("maps RSS", r.get("rss"), k["Rss"], a)
    check("maps THP", r.get("thp"), k["AnonHugePages"], a)
# Every mapping, and the total: what smaps says, to the byte (hugetlb and unreadable mappings aside).
for r in rows:
    try:
        a = int(r["start"], 16)
    except (TypeError, ValueError):
        continue
    if a in sm and r.get("rss") is not None and not sm[a].get("Private_Hugetlb") and not sm[a].get("Shared_Hugetlb"):
        check("maps RSS", r.get("rss"), sm[a]["Rss"], a)
# JSON has no total row: the rows add up to smaps_rollup's Rss (VmRSS less hugetlb, to the byte).
check("maps RSS summed", sum(r.get("rss") or 0 for r in rows), rollup["Rss"], 0)
ps = json.load(open(work + "/ps.json"))["processes"]
check("ps RSS", [p["rss"] for p in ps if p.get("pid") == pid][0], rollup["Rss"], 0)

render = json.load(open(work + "/render.json"))["render"]
for s in render["segments"]:
    if s.get("kind") == "band" and int(s["start"], 16) in addrs:
        a = int(s["start"], 16)
        check("render huge", s["bytes"].get("huge", 0), sm[a]["AnonHugePages"], a)

try:
    import libpagemap
except ImportError:
    print("SKIP rss-python: the binding is not built (make python)")
else:
    with libpagemap.open(pid) as t:
        for m, u in t.mapstat():
            if m.start in addrs:
                check("Python Usage.rss", getattr(u, "rss", None), sm[m.start]["Rss"], m.start)
                check("Python Usage.thp", u.thp, sm[m.start]["AnonHugePages"], m.start)

# What the child made, so that the checks above compare something: the zero pages are there.
a, b, c, d = addrs
zero = {x: by_start[x].get("zero") for x in addrs if x in by_start}
if not zero.get(a):
    print("SKIP rss-zero: no zero page mapped in the read-faulted region (the walk cannot tell it here?)")
if huge and not (by_start.get(b, {}).get("thp") or zero.get(b)):
    print("SKIP rss-huge-zero: the MADV_HUGEPAGE region got no huge zero page (memory fragmented?)")
for f in fails:
    print("  " + f)
print("%s rss (%d mappings; region A: PRESENT %s, ZERO %s, RSS %s, smaps Rss %s)" % (
    "FAIL" if fails else "PASS", len(rows), by_start.get(a, {}).get("present"), zero.get(a),
    by_start.get(a, {}).get("rss"), sm.get(a, {}).get("Rss")))
PY

# Unprivileged (uid 65534, a child of its own): frame numbers are hidden. Where PAGEMAP_SCAN tells the zero
# page (PAGE_IS_PFNZERO) RSS is still smaps Rss; the pread back end cannot tell it: RSS is null, never PRESENT.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP rss-unprivileged: needs root and setpriv to run as uid 65534"
	exit 0
fi
. "$(dirname "$0")/lib/nobody.sh"
upm=$(nobody_pagemap "$pagemap" "$work") || { echo "FAIL rss-unprivileged: cannot copy pagemap for uid 65534"; exit 1; }
chmod o+rx "$work" "$work/child.py"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# a python3 that uid 65534 may run (root's may live under /root)
py=/usr/bin/python3
as_nobody "$py" -c 'pass' 2>/dev/null || { echo "SKIP rss-unprivileged: uid 65534 cannot run $py"; exit 0; }
start_child "$work/addr2" setpriv --reuid=65534 --regid=65534 --clear-groups || { echo "FAIL rss-unprivileged-setup: the child did not start"; exit 1; }
kill "$child" 2>/dev/null
child=$pid
for backend in scan pread; do
	as_nobody "$upm" --backend "$backend" maps -J -b -o START,RSS,PRESENT,ZERO,THP "$child" \
		>"$work/u-$backend.json" 2>"$work/err" || echo "SKIP rss-unprivileged-$backend: $(tail -1 "$work/err")"
done
cp "/proc/$child/smaps" "$work/smaps2" || { echo "FAIL rss-unprivileged: cannot read the child's smaps"; exit 1; }
python3 - "$work" "$(cat "$work/addr2")" <<'PY'
import json, os, sys
work, addrs = sys.argv[1], [int(x, 16) for x in sys.argv[2].split()]
sm, cur = {}, None
for line in open(work + "/smaps2"):
    f = line.split()
    if "-" in f[0] and not f[0].endswith(":"):
        cur = sm.setdefault(int(f[0].split("-")[0], 16), {})
    elif f[0].endswith(":") and len(f) >= 2 and f[1].isdigit():
        cur[f[0][:-1]] = int(f[1]) * 1024
for backend in ("scan", "pread"):
    path = "%s/u-%s.json" % (work, backend)
    if not os.path.getsize(path):
        continue
    rows = {int(r["start"], 16): r for r in json.load(open(path))["maps"]}
    fails = []
    for a in addrs:
        r, k = rows.get(a, {}), sm.get(a, {})
        if r.get("zero") is None:	# the zero page cannot be told: RSS must say unknown, not PRESENT
            if r.get("rss") is not None:
                fails.append("%#x: RSS %s where ZERO is unknown" % (a, r.get("rss")))
        elif r.get("rss") != k.get("Rss"):
            fails.append("%#x: RSS %s, smaps Rss %s" % (a, r.get("rss"), k.get("Rss")))
        if r.get("thp") is not None and r.get("thp") != k.get("AnonHugePages"):
            fails.append("%#x: THP %s, smaps AnonHugePages %s" % (a, r.get("thp"), k.get("AnonHugePages")))
    for f in fails:
        print("  " + f)
    print("%s rss-unprivileged-%s (RSS of the read-faulted region: %s, ZERO %s)" % (
        "FAIL" if fails else "PASS", backend, rows.get(addrs[0], {}).get("rss"), rows.get(addrs[0], {}).get("zero")))
PY
exit 0
