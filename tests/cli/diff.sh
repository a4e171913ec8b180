#!/bin/sh
# diff.sh - `pagemap diff A B` on two snapshots of a fixture tree, B (and A) edited word by word: each change
# lands in its category with its exact bytes; a mapping removed and one added are rows of their own; exit 0
# for equal, 1 for different or a damaged snapshot (one line naming it), 2 for misuse.
# Usage: tests/cli/diff.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP diff: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

fixture=current-5.10-root	# root, current layout, swap on, two THPs (pread infers them from the frames)
for s in a b; do
	"$src/tests/fixtures/unpack" "$src/tests/fixtures/$fixture" "$work/$s" >/dev/null 2>&1 ||
		{ echo "FAIL diff-setup: cannot unpack $fixture"; exit 1; }
done

# Edit pagemap words: VA=entry in A or B. Bits: 63 present, 62 swapped, 56 exclusive, 55 soft-dirty, 0-54 PFN
# (or swap type 0-4, offset 5-54).
python3 - "$work/a/proc/4242" "$work/b/proc/4242" <<'PY' || { echo "FAIL diff-setup: cannot edit"; exit 1; }
import struct, sys
P, S, X, D = 1 << 63, 1 << 62, 1 << 56, 1 << 55
def edit(d, va, fn):
    with open(d + "/pagemap", "r+b") as f:
        f.seek(va // 4096 * 8)
        w = struct.unpack("<Q", f.read(8))[0]
        f.seek(va // 4096 * 8)
        f.write(struct.pack("<Q", fn(w)))
a, b = sys.argv[1:]
edit(b, 0x55c74c998000, lambda w: P | X | D | 0x200000)		# [heap]: appeared
edit(b, 0x55c74c996000, lambda w: 0)					# [heap]: freed
edit(b, 0x7f05c1974000, lambda w: S | D | (0x100 << 5))		# anon: swapped out
edit(b, 0x7f05c1975000, lambda w: (w & ~((1 << 55) - 1)) | 0x300000)	# anon: another frame, still exclusive: moved
edit(a, 0x7f05c1977000, lambda w: w & ~X)				# anon: shared in A ...
edit(b, 0x7f05c1977000, lambda w: (w & ~((1 << 55) - 1)) | 0x300001)	# ... own frame in B: written (CoW)
edit(a, 0x7f05c197c000, lambda w: w & ~D)				# anon: soft-dirty gained: written
edit(b, 0x7f05c1c01000, lambda w: (w & ~((1 << 55) - 1)) | 0x300002)	# first THP broken in B: split + moved
edit(a, 0x7f05c1e01000, lambda w: (w & ~((1 << 55) - 1)) | 0x300003)	# second THP broken in A: formed + moved
PY
# B: one mapping gone (unmapped), one new in the hole after it (mapped).
grep -v '^7f05c2771000-' "$work/a/proc/4242/maps" | sed 's/^7f05c277a000-/7f05c2779000-7f05c277a000 rw-p 00000000 00:00 0 \n&/' \
	>"$work/b/proc/4242/maps"
for s in a b; do
	err=$("$pagemap" snapshot --from-tree "$work/$s" -o "$work/$s.snap" 2>&1) ||
		{ echo "FAIL diff-setup: snapshot --from-tree $s: $err"; exit 1; }
done

check() {	# check NAME WANT_STATUS WANT_FILE CMD...: stdout and status exactly
	name=$1 want=$2 file=$3
	shift 3
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc != "$want" ]; then
		echo "FAIL diff-$name: exit $rc, want $want"
		cat "$work/err"
	elif [ -n "$file" ] && ! cmp -s "$file" "$work/out"; then
		echo "FAIL diff-$name: output differs"
		diff -u "$file" "$work/out" | head -20
	else
		echo "PASS diff-$name"
	fi
}

cols=MAPPING,START,APPEARED,FREED,SWAPOUT,SWAPIN,WRITTEN,THP_FORMED,THP_SPLIT,MOVED,UFFD_WP
cat >"$work/want" <<'EOF'
changed 0x55c74c996000 4096 4096 0 0 0 0 0 0 0
changed 0x7f05c1974000 0 0 4096 0 8192 0 0 4096 0
changed 0x7f05c1c00000 0 0 0 0 0 2097152 2097152 8192 0
unmapped 0x7f05c2771000      
mapped 0x7f05c2779000      
EOF
sed -i 's/ *$//' "$work/want"
"$pagemap" diff -r -n -b -o "$cols" "$work/a.snap" "$work/b.snap" 2>&1 | grep -v '^same ' | sed 's/ *$//' >"$work/got"
if cmp -s "$work/want" "$work/got"; then
	echo "PASS diff-categories"
else
	echo "FAIL diff-categories:"
	diff -u "$work/want" "$work/got" | head -20
fi

# The total row (tables only), and the same answer from the trees and for -p.
"$pagemap" diff -b -o MAPPING,APPEARED,FREED,SWAPOUT,WRITTEN,THP_FORMED,THP_SPLIT,MOVED,PATH \
	"$work/a.snap" "$work/b.snap" | tail -1 | tr -s ' ' >"$work/got"
echo " 4096 4096 4096 8192 2097152 2097152 12288 total" >"$work/want"
cmp -s "$work/want" "$work/got" && echo "PASS diff-total" || { echo "FAIL diff-total: $(cat "$work/got")"; }
# -n prints rows only (a script counts rows); --total brings the total row back.
rows=$("$pagemap" diff -b -o MAPPING,PATH "$work/a.snap" "$work/b.snap" | grep -vc ' total$')
got=$("$pagemap" diff -n -b -o MAPPING,PATH "$work/a.snap" "$work/b.snap" | wc -l)
tot=$("$pagemap" diff -n --total -b -o MAPPING,PATH "$work/a.snap" "$work/b.snap" | tail -1 | tr -s ' ')
[ "$got" = $((rows - 1)) ] && [ "$tot" = " total" ] && echo "PASS diff-noheadings-rows" ||
	echo "FAIL diff-noheadings-rows: -n printed $got lines for $((rows - 1)) rows; with --total the last is '$tot'"
"$pagemap" diff -J "$work/a.snap" "$work/b.snap" >"$work/snap.json"
check tree 1 "$work/snap.json" "$pagemap" diff -J --tree "$work/a" "$work/b"
check pid 1 "$work/snap.json" "$pagemap" diff -J -p 4242 "$work/a.snap" "$work/b.snap"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["diff"]; assert sum(r["new_frame"] or 0 for r in d) == 12288' \
	"$work/snap.json" && echo "PASS diff-json" || echo "FAIL diff-json"

# Only what changed by default (and what is in one snapshot only); --all every mapping, unchanged ones "same".
"$pagemap" diff -r -n -o MAPPING "$work/a.snap" "$work/b.snap" | sort | uniq -c | tr -s ' ' >"$work/got"
printf ' 3 changed\n 1 mapped\n 1 unmapped\n' >"$work/want"
cmp -s "$work/want" "$work/got" && echo "PASS diff-only-changed" || echo "FAIL diff-only-changed: $(cat "$work/got")"
n_all=$("$pagemap" diff -r -n --all -o MAPPING "$work/a.snap" "$work/b.snap" | grep -c '^same$')
n_maps=$(($(wc -l <"$work/a/proc/4242/maps") - 4))	# A's mappings less the 3 changed and the unmapped one
[ "$n_all" = "$n_maps" ] && [ "$n_all" -gt 0 ] && echo "PASS diff-all ($n_all same rows)" ||
	echo "FAIL diff-all: $n_all same rows, want $n_maps"

# --pages: which pages, one row per run that changed alike, adjacent pieces merged; a page counted in two
# columns names both.
cat >"$work/want" <<'EOF'
0x55c74c996000 0x55c74c997000 1 freed
0x55c74c998000 0x55c74c999000 1 appeared
0x7f05c1974000 0x7f05c1975000 1 swapout
0x7f05c1975000 0x7f05c1976000 1 new_frame
0x7f05c1977000 0x7f05c1978000 1 written
0x7f05c197c000 0x7f05c197d000 1 written
0x7f05c1c00000 0x7f05c1c01000 1 thp_split
0x7f05c1c01000 0x7f05c1c02000 1 new_frame,thp_split
0x7f05c1c02000 0x7f05c1e00000 510 thp_split
0x7f05c1e00000 0x7f05c1e01000 1 thp_formed
0x7f05c1e01000 0x7f05c1e02000 1 new_frame,thp_formed
0x7f05c1e02000 0x7f05c2000000 510 thp_formed
EOF
check pages 1 "$work/want" "$pagemap" diff --pages -r -n -p 4242 "$work/a.snap" "$work/b.snap"
"$pagemap" diff --pages -J "$work/a.snap" "$work/b.snap" >"$work/pages.json"
python3 - "$work/pages.json" "$work/snap.json" <<'PY' && echo "PASS diff-pages-sum" || echo "FAIL diff-pages-sum"
import json, sys	# the runs of a kind add up to the rows' bytes of that kind (4096-byte pages)
runs, rows = json.load(open(sys.argv[1]))["diff"], json.load(open(sys.argv[2]))["diff"]
for k in ("appeared", "freed", "swapout", "swapin", "written", "new_frame", "thp_formed", "thp_split"):
    got = sum(r["pages"] * 4096 for r in runs if k in r["change"].split(","))
    assert got == sum(r[k] or 0 for r in rows), (k, got)
PY

# Exit status as diff(1)'s: 0 the same, 1 different, 2 trouble (misuse; a missing process or file; a damaged
# snapshot, with one line naming it), so that a script tells "different" from "could not compare".
check same 0 "" "$pagemap" diff "$work/a.snap" "$work/a.snap"
check usage 2 "" "$pagemap" diff "$work/a.snap"
check bad-pid 2 "" "$pagemap" diff -p x "$work/a.snap" "$work/b.snap"
check no-pid 2 "" "$pagemap" diff -p 4243 "$work/a.snap" "$work/b.snap"
check no-file 2 "" "$pagemap" diff "$work/a.snap" "$work/none.snap"
check no-tree 2 "" "$pagemap" diff --tree "$work/a" "$work/none"
size=$(stat -c %s "$work/b.snap")
head -c $((size - 100)) "$work/b.snap" >"$work/cut.snap"
check damaged 2 "" "$pagemap" diff "$work/a.snap" "$work/cut.snap"
if [ "$(wc -l <"$work/err")" = 1 ] && grep -q "cut.snap" "$work/err"; then
	echo "PASS diff-damaged-message"
else
	echo "FAIL diff-damaged-message: $(cat "$work/err")"
fi
exit 0
