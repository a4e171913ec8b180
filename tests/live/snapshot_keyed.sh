#!/bin/sh
# snapshot_keyed.sh - keyed and dropped frame numbers on a stopped process with a forked child
# sharing copy-on-write pages: maps and shared replay the same from keep, keyed and keyed-block snapshots; no
# frame number of the original appears in a keyed file (scrambled frames are lifted past max_pfn); phys -p, ps,
# shared and phys replay a keyed file as its unscrambled copy; --unscramble gives the keep snapshot's pagemap
# back bit for bit; a wrong key and a key others may read are refused; audit calls keyed and dropped snapshots
# ok. Only the anonymous mapping the target wrote is compared: file pages (libraries) may be reclaimed between
# two captures.
# Usage: tests/live/snapshot_keyed.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap="$build/pagemap"
[ "$(id -u)" = 0 ] || { echo "SKIP snapshot-keyed: needs root (frame numbers are hidden otherwise)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP snapshot-keyed: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
parent= child=
cleanup() {
	[ -n "$child" ] && kill -CONT "$child" 2>/dev/null && kill "$child" 2>/dev/null
	[ -n "$parent" ] && kill -CONT "$parent" 2>/dev/null && kill "$parent" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

python3 - >"$work/pids" <<'PY' &
import ctypes, mmap, os, time
m = mmap.mmap(-1, 4 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
start = ctypes.addressof(ctypes.c_char.from_buffer(m))
for off in range(0, 4 << 20, 8192):
    m[off] = 1
pid = os.fork()
if pid == 0:
    m[4096 * 10] = 2
    while True:
        time.sleep(1)
print(os.getpid(), pid, "0x%x-0x%x" % (start, start + (4 << 20)), "%x" % start, flush=True)
while True:
    time.sleep(1)
PY
parent=$!
i=0
while [ ! -s "$work/pids" ] && [ $i -lt 150 ] && kill -0 "$parent" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
read -r parent child range addr <"$work/pids" || { echo "FAIL snapshot-keyed: the target did not start"; exit 1; }
sleep 0.3
kill -STOP "$child" "$parent"
fails=0
fail() { echo "FAIL snapshot-keyed-$1"; fails=$((fails + 1)); }
pass() { echo "PASS snapshot-keyed-$1"; }

w=$work
"$pagemap" snapshot -p "$parent,$child" -o "$w/keep.snap" || fail write-keep
"$pagemap" snapshot -p "$parent,$child" --pfn keyed --key "$w/key" -o "$w/keyed.snap" || fail write-keyed
[ "$(stat -c %a "$w/key")" = 600 ] && [ "$(stat -c %s "$w/key")" = 32 ] && pass key-file || fail key-file
"$pagemap" snapshot -p "$parent,$child" --pfn keyed-block --key "$w/key" -o "$w/block.snap" || fail write-block
"$pagemap" snapshot -p "$parent,$child" --pfn drop -o "$w/drop.snap" || fail write-drop

for m in keyed block; do
	ok=1
	for c in "shared $parent $child" "maps $parent" "maps $child"; do
		# shellcheck disable=SC2086
		"$pagemap" --snapshot "$w/keep.snap" $c 2>&1 | grep "$addr" >"$w/a"
		# shellcheck disable=SC2086
		"$pagemap" --snapshot "$w/$m.snap" $c 2>&1 | grep "$addr" >"$w/b"
		[ -s "$w/a" ] || ok=0
		cmp -s "$w/a" "$w/b" || { ok=0; diff "$w/a" "$w/b" | head -5; }
	done
	[ $ok = 1 ] && pass "$m-replays-same" || fail "$m-replays-same"
done

# No page keeps its frame number, and no original frame appears among the scrambled ones: scrambled frames
# are key_lift + perm(f) with key_lift = max_pfn (whole 2 MiB blocks for keyed-block), so none can equal a
# real frame (before the lift, chance overlaps were about rows x rows / max_pfn: CI saw one).
pfns() { "$pagemap" --snapshot "$1" pages -J "$parent" "$range" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = next(v for v in d.values() if isinstance(v, list))
print("\n".join("%s %s" % (r["start"], r["pfn"]) for r in rows if r.get("pfn")))'; }
pfns "$w/keep.snap" >"$w/p.keep" && pfns "$w/keyed.snap" >"$w/p.keyed" && pfns "$w/block.snap" >"$w/p.block" ||
	fail pages-json
cut -d' ' -f2 "$w/p.keep" | sort -u >"$w/f.keep"
rows=$(wc -l <"$w/p.keep")
for m in keyed block; do
	# (keyed rows are more: contiguous runs split; a run starting at the same address has another frame)
	kept=$(sort "$w/p.keep" "$w/p.$m" | uniq -d | wc -l)
	cut -d' ' -f2 "$w/p.$m" | sort -u >"$w/f.$m"
	common=$(comm -12 "$w/f.keep" "$w/f.$m" | wc -l)
	if [ "$rows" -ge 256 ] && [ "$kept" = 0 ] && [ "$common" = 0 ] && [ -s "$w/f.$m" ]; then
		pass "$m-no-frame-kept"
	else
		fail "$m-no-frame-kept"
		echo "  $rows present rows: $kept kept their frame, $common original frames among the $m ones (want 0, 0)"
	fi
done

# The whole file: every present frame of every pagemap in the keyed trees lies at or above max_pfn (the keep
# snapshot's kpageflags length), and the kpage word files hold nothing below it.
"$pagemap" snapshot --to-tree "$w/t-keep0" "$w/keep.snap" || fail to-tree-keep
for m in keyed block; do
	"$pagemap" snapshot --to-tree "$w/t0-$m" "$w/$m.snap" || fail "to-tree0-$m"
	if python3 - "$w/t-keep0" "$w/t0-$m" <<'PY'
import glob, os, struct, sys
keep, tree = sys.argv[1], sys.argv[2]
max_pfn = os.stat(f"{keep}/proc/kpageflags").st_size // 8
assert max_pfn > 0
def data(path):	# (offset, bytes) of each data extent of a sparse file
    fd, off = os.open(path, os.O_RDONLY), 0
    size = os.fstat(fd).st_size
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(fd, d, os.SEEK_HOLE)
        yield d, os.pread(fd, h - d, d)
        off = h
    os.close(fd)
present = low = 0
for f in glob.glob(f"{tree}/proc/*/pagemap"):
    for _, b in data(f):
        for (w,) in struct.iter_unpack("<Q", b[: len(b) // 8 * 8]):
            if w >> 63:
                present += 1
                low += (w & ((1 << 55) - 1)) < max_pfn
for k in ("kpageflags", "kpagecount", "kpagecgroup"):
    for d, b in data(f"{tree}/proc/{k}"):
        assert d >= max_pfn * 8 or not any(b[: max_pfn * 8 - d]), (k, d)
print(f"  {tree.rsplit('/', 1)[1]}: {present} present pagemap words, {low} below max_pfn {max_pfn}")
assert present > 0 and low == 0
PY
	then pass "$m-whole-file-lifted"; else fail "$m-whole-file-lifted"; fi
	# The tree keeps where the frames start (pagemap-frame-start): phys over it walks what the file's replay
	# walks, not max_pfn empty frames below the lift as well.
	"$pagemap" --snapshot "$w/$m.snap" phys >"$w/phys-snap" 2>&1
	"$pagemap" --root "$w/t0-$m" phys >"$w/phys-tree" 2>&1
	if [ "$(cat "$w/t0-$m/pagemap-frame-start" 2>/dev/null)" -gt 0 ] 2>/dev/null && [ -s "$w/phys-snap" ] &&
	   cmp -s "$w/phys-snap" "$w/phys-tree"; then
		pass "$m-tree-phys-as-file"
	else
		fail "$m-tree-phys-as-file"
		echo "  pagemap-frame-start: $(cat "$w/t0-$m/pagemap-frame-start" 2>&1)"
		diff "$w/phys-snap" "$w/phys-tree" | head -6
	fi
	rm -rf "$w/t0-$m"
done
rm -rf "$w/t-keep0"

# Dropped frames replay as hidden, said so, never as frame number 0 (what they replayed as before this check).
"$pagemap" --snapshot "$w/drop.snap" pages -o PFN,FLAGS "$parent" "$range" 2>/dev/null | awk '$2 ~ /^P/ { print $1 }' | sort -u >"$w/p.drop"
if [ "$(cat "$w/p.drop")" = hidden ] &&
   "$pagemap" --snapshot "$w/drop.snap" features | grep -q '^pfn  *hidden .*--pfn drop'; then
	pass drop-replays-hidden
else
	fail drop-replays-hidden
	echo "  PFN column of present pages: $(tr '\n' ' ' <"$w/p.drop")"
fi

for m in keyed block; do
	"$pagemap" snapshot --unscramble --key "$w/key" -o "$w/un-$m.snap" "$w/$m.snap" || fail "unscramble-$m"
	# Its kpage words go back in index order a chunk at a time: no more WORDS chunks than the keyed file's
	# (sorted per extent, they made a chunk per word, and replays that decoded one per lookup).
	kc=$("$pagemap" snapshot --list "$w/$m.snap" | grep -c ' WORDS .* proc/kpage')
	uc=$("$pagemap" snapshot --list "$w/un-$m.snap" | grep -c ' WORDS .* proc/kpage')
	if [ "$kc" -gt 0 ] && [ "$uc" -le "$kc" ]; then
		pass "unscramble-$m-chunks"
	else
		fail "unscramble-$m-chunks"
		echo "  kpage WORDS chunks: $kc keyed, $uc unscrambled"
	fi
	# The kpage words are read by scrambled frame: the keyed file replays as its unscrambled copy (phys -p
	# without its PFN column; its keyed rows split where runs of frames were contiguous: pages summed per
	# address, flags, count, cgroup and path), and phys walks the same frames (from key_lift, not from 0).
	ok=1
	for c in "ps -p $parent,$child" "shared $parent $child" "phys" "phys -p $parent"; do
		for f in "$m" "un-$m"; do
			case $c in
			phys\ -p*) # shellcheck disable=SC2086
				"$pagemap" --snapshot "$w/$f.snap" $c -r -o START,END,FLAGS,COUNT,CGROUP,PATH | python3 -c '
import sys
for line in sys.stdin.read().splitlines()[1:]:	# one line per page: rows split where frames were contiguous
    start, end, rest = line.split(None, 2)
    for va in range(int(start, 16), int(end, 16), 4096):
        print("%x %s" % (va, rest))' ;;
			*) # shellcheck disable=SC2086
				"$pagemap" --snapshot "$w/$f.snap" $c ;;
			esac >"$w/r-$f" 2>&1
		done
		[ -s "$w/r-$m" ] || ok=0
		cmp -s "$w/r-$m" "$w/r-un-$m" || { ok=0; echo "  $c:"; diff "$w/r-$m" "$w/r-un-$m" | head -4; }
	done
	[ $ok = 1 ] && pass "$m-replays-as-unscrambled" || fail "$m-replays-as-unscrambled"
	"$pagemap" snapshot --to-tree "$w/t-keep" "$w/keep.snap" 2>/dev/null
	"$pagemap" snapshot --to-tree "$w/t-$m" "$w/un-$m.snap" || fail "to-tree-$m"
	if python3 - "$w/t-keep" "$w/t-$m" "$addr" "$parent" "$child" <<'PY'
import os, sys
a, b, addr, pids = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), sys.argv[4:]
for p in pids:	# the written mapping's pagemap words (kpagecount moves with the rest of the machine)
    fa, fb = os.open(f"{a}/proc/{p}/pagemap", os.O_RDONLY), os.open(f"{b}/proc/{p}/pagemap", os.O_RDONLY)
    off, n = addr // 4096 * 8, (4 << 20) // 4096 * 8
    x, y = os.pread(fa, n, off), os.pread(fb, n, off)
    assert x == y and len(x) == n and any(x), p
PY
	then pass "unscramble-$m-exact"; else fail "unscramble-$m-exact"; fi
	rm -rf "$w/t-keep"
done

head -c 32 /dev/urandom >"$w/other" && chmod 600 "$w/other"
"$pagemap" snapshot --unscramble --key "$w/other" -o "$w/x.snap" "$w/keyed.snap" 2>"$w/err"
[ $? = 1 ] && [ "$(wc -l <"$w/err")" = 1 ] && grep -q "wrong key" "$w/err" && pass wrong-key || fail wrong-key
chmod 644 "$w/other"
"$pagemap" snapshot -p "$parent" --pfn keyed --key "$w/other" -o "$w/x.snap" 2>"$w/err"
[ $? = 1 ] && [ "$(wc -l <"$w/err")" = 1 ] && [ ! -e "$w/x.snap" ] && pass readable-key-refused ||
	fail readable-key-refused

mkdir "$w/share" && cp "$w/keyed.snap" "$w/block.snap" "$w/drop.snap" "$w/share/"
"$pagemap" audit --snapshots "$w/share" -J >"$w/audit.json" 2>&1
python3 - "$w/audit.json" <<'PY' && pass audit-ok || fail audit-ok
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for v in d.values() if isinstance(v, list) for r in v if "snap" in json.dumps(r)]
assert len(rows) >= 3 and not any("exposed" in json.dumps(r) for r in rows), rows
PY
[ $fails = 0 ]
