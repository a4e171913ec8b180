#!/bin/sh
# ps_group.sh - `ps --group-by` sums the rows `ps -p` prints: five sleepers of this test, under a command
# name of their own, three of them run as nobody (setpriv); the comm group's row equals the sum of their
# five `ps -p` rows, the user groups of `-p THEM --group-by user` the sums of their rows by user, in the
# table and in JSON, and with --exact (frames) as from smaps_rollup; `--group-by mapping` sums smaps.
# The sleepers are a static program of their own, so no page they map is mapped by another process of the
# machine (a shared library's map counts, and so PSS, change whenever any process starts or ends): their
# figures hold still between two reads. Without a static C library they are a copy of sleep, and --exact
# (PSS to the byte) is skipped; a comparison that differs is read again (at most 10 times), as the KiB of
# smaps_rollup may still move. A grouping that sums wrongly differs every time. From the frames (--exact)
# one page still moves: the vDSO's, which every process maps, counts in PSS by its map count (the number
# of processes), so there PSS may differ by up to 256 bytes a process between two reads.
# Usage: tests/live/ps_group.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap=$build/pagemap
skip() { echo "SKIP ps-group: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (setpriv to run sleepers as nobody, --exact)"
command -v setpriv >/dev/null || skip "setpriv is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
tmp=$(mktemp -d) || exit 1
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
comm=pmgrp$$
static=1
printf '#include <unistd.h>\nint main(void) { for (;;) pause(); }\n' >"$tmp/pause.c"
if ! cc -static -O2 -o "$tmp/$comm" "$tmp/pause.c" 2>/dev/null; then
	static=0
	cp "$(command -v sleep)" "$tmp/$comm" || exit 1
fi
for who in root root nobody nobody nobody; do
	if [ $who = root ]; then
		"$tmp/$comm" 600 &
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/$comm" 600 &
	fi
	pids="$pids $!"
done
list=$(echo $pids | tr ' ' ,)
# Each has exec'd when its comm is ours.
for _ in $(seq 100); do
	n=0
	for p in $pids; do [ "$(cat /proc/$p/comm 2>/dev/null)" = "$comm" ] && n=$((n + 1)); done
	[ $n = 5 ] && break
	sleep 0.05
done
[ $n = 5 ] || { echo "FAIL ps-group-start: $n of 5 sleepers started as $comm"; exit 1; }
fail=0

# compare NAME KEY EXTRA...: the groups of `ps EXTRA --group-by KEY -J` against the -p rows summed by KEY.
compare() {
	name=$1 key=$2
	shift 2
	i=0
	while [ $i -lt 10 ]; do
		"$pagemap" ps -J -b -p "$list" -o PID,USER,COMMAND,RSS,PSS,USS,SWAP,HUGETLB,SOURCE "$@" >"$tmp/rows" 2>"$tmp/err" &&
		if [ "$key" = comm ]; then
			"$pagemap" ps -J --group-by comm "$@" >"$tmp/groups" 2>>"$tmp/err"
		else
			"$pagemap" ps -J -p "$list" --group-by "$key" "$@" >"$tmp/groups" 2>>"$tmp/err"
		fi || { echo "FAIL ps-group-$name: pagemap failed: $(cat "$tmp/err")"; fail=1; return; }
		if python3 - "$tmp/rows" "$tmp/groups" "$key" "$comm" "$*" >"$tmp/why" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["processes"]
groups = json.load(open(sys.argv[2]))["groups"]
key, comm = sys.argv[3], sys.argv[4]
field = {"comm": "command", "user": "user"}[key]
want = {}
for r in rows:
    w = want.setdefault(r[field], {"processes": 0, "rss": 0, "pss": 0, "uss": 0, "swap": 0, "hugetlb": 0})
    w["processes"] += 1
    for f in ("rss", "pss", "uss", "swap", "hugetlb"):
        w[f] += r[f]
shape = {field, "processes", "rss", "pss", "uss", "swap", "hugetlb", "source", "estimate"}
for g in groups:
    if set(g) != shape:
        print("group keys %s, want %s" % (sorted(g), sorted(shape)))
        sys.exit(2)
got = {g[field]: {f: g[f] for f in ("processes", "rss", "pss", "uss", "swap", "hugetlb")} for g in groups}
if key == "comm":
    got = {comm: got.get(comm)}
    if len(rows) != 5 or set(want) != {comm}:
        print("ps -p gave %d rows of %s" % (len(rows), sorted(want)))
        sys.exit(2)
elif set(want) != {"root", "nobody"}:
    print("ps -p gave users %s" % sorted(want))
    sys.exit(2)
slack = 256 if "--exact" in sys.argv[5] else 0
def same(g, w):
    return g is not None and all(abs(g[f] - w[f]) <= slack * w["processes"] if f == "pss" else g[f] == w[f]
                                 for f in w)
if set(got) != set(want) or not all(same(got[k], want[k]) for k in want):
    print("groups %s, sums of the -p rows %s" % (got, want))
    sys.exit(1)
# And the kernel's own sums, where the rows are read from it (not --exact): smaps_rollup's Rss and Pss.
if key == "comm" and all(r["source"] == "smaps_rollup" for r in json.load(open(sys.argv[1]))["processes"]):
    kern = {"rss": 0, "pss": 0}
    for r in rows:
        for line in open("/proc/%d/smaps_rollup" % r["pid"]):
            f = line.split()
            if f[0] in ("Rss:", "Pss:"):
                kern[f[0][:-1].lower()] += int(f[1]) * 1024
    if kern != {"rss": got[comm]["rss"], "pss": got[comm]["pss"]}:
        print("group %s, smaps_rollup's sums %s" % (got[comm], kern))
        sys.exit(1)
print("; ".join("%s: %d processes, RSS %d, PSS %d, USS %d" % (k, v["processes"], v["rss"], v["pss"], v["uss"])
                for k, v in sorted(want.items())))
PY
		then
			echo "PASS ps-group-$name: $(cat "$tmp/why")"
			return
		fi
		[ $? = 2 ] && break
		i=$((i + 1))
	done
	echo "FAIL ps-group-$name: $(cat "$tmp/why")"
	fail=1
}

compare comm comm
compare user user
if [ $static = 1 ]; then
	compare comm-exact comm --exact
	compare user-exact user --exact
else
	echo "SKIP ps-group-exact: no static C library (cc -static): the sleepers share libc, whose PSS moves"
fi

# --group-by mapping: each path's figures are the kernel's smaps records of that path summed over the
# sleepers (Rss, Pss, Private_* as USS, Swap), and PROCESSES the sleepers that map it; the sleepers'
# own program is mapped by all five.
i=0
while [ $i -lt 10 ]; do
	"$pagemap" ps -J -p "$list" --group-by mapping >"$tmp/maps" 2>"$tmp/err" ||
		{ echo "FAIL ps-group-mapping: pagemap failed: $(cat "$tmp/err")"; fail=1; break; }
	if python3 - "$tmp/maps" "$tmp/$comm" $pids >"$tmp/why" <<'PY'
import json, sys
groups = json.load(open(sys.argv[1]))["groups"]
prog = sys.argv[2]
want = {}
for pid in sys.argv[3:]:
    mine = {}
    for line in open("/proc/%s/smaps" % pid):
        f = line.split()
        if "-" in f[0] and not f[0].endswith(":"):
            path = line.split(None, 5)[5].strip() if len(f) > 5 else "[anon]"
            m = mine.setdefault(path, {"rss": 0, "pss": 0, "uss": 0, "swap": 0})
        elif f[0] in ("Rss:", "Pss:", "Swap:"):
            m[f[0][:-1].lower()] += int(f[1]) * 1024
        elif f[0] in ("Private_Clean:", "Private_Dirty:"):
            m["uss"] += int(f[1]) * 1024
    for path, m in mine.items():
        w = want.setdefault(path, {"processes": 0, "rss": 0, "pss": 0, "uss": 0, "swap": 0})
        w["processes"] += 1
        for k in m:
            w[k] += m[k]
got = {g["mapping"]: {k: g[k] for k in ("processes", "rss", "pss", "uss", "swap")} for g in groups}
if got != want:
    print("groups %s, smaps' sums %s" % (got, want))
    sys.exit(1)
if got.get(prog, {}).get("processes") != 5 or any(g["source"] != "smaps" for g in groups):
    print("%s in %s processes, sources %s" % (prog, got.get(prog, {}).get("processes"),
                                               sorted({g["source"] for g in groups})))
    sys.exit(1)
print("%d paths; %s: %s" % (len(got), prog, got[prog]))
PY
	then
		echo "PASS ps-group-mapping: $(cat "$tmp/why")"
		break
	fi
	i=$((i + 1))
done
[ $i = 10 ] && { echo "FAIL ps-group-mapping: $(cat "$tmp/why")"; fail=1; }
if "$pagemap" ps --exact --group-by mapping -p "$list" >/dev/null 2>&1; then
	echo "FAIL ps-group-mapping-exact: --exact --group-by mapping did not refuse"
	fail=1
else
	echo "PASS ps-group-mapping-exact"
fi

# The table: the comm group's row and its process count; the total row sums the group rows.
"$pagemap" ps -b -r --total --group-by user -p "$list" -o USER,PROCESSES,RSS >"$tmp/t" 2>&1
if awk '$1 == "total" { t = $3; n = $2 } $1 != "total" { s += $3; c += $2 }
	END { exit !(NR == 4 && t == s && n == 5 && c == 5) }' "$tmp/t"; then
	echo "PASS ps-group-table: $(tr '\n' ';' <"$tmp/t")"
else
	echo "FAIL ps-group-table: $(cat "$tmp/t")"
	fail=1
fi
# Rows only with -r: the heading and the one group, no total row without --total.
"$pagemap" ps -r --group-by comm -p "$list" -o COMMAND,PROCESSES >"$tmp/r" 2>&1
if [ "$(cat "$tmp/r")" = "$(printf 'COMMAND PROCESSES\n%s 5' "$comm")" ]; then
	echo "PASS ps-group-raw"
else
	echo "FAIL ps-group-raw: $(cat "$tmp/r")"
	fail=1
fi
exit $fail
