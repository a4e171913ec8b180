#!/bin/sh
# series.sh - a series of snapshots of a fixture tree (snapshot --from-tree --append): two members whose pagemaps
# are equal (the second one's chunks all REUSE the first's) but whose kpageflags differ on the first frame of a
# huge page (THP in member 1, not in member 2): `diff S@1 S@2` must walk that chunk, not skip it, and report the
# 2 MiB as THP_SPLIT, as the forced walk and the diff of two separate files do; a member with equal kpageflags
# diffs as equal (exit 0).
# Usage: tests/cli/series.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP series-cli: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

fixture=current-5.10-root	# root, frames visible, two THPs (0x7f05c1c00000 on frame 0x129a00, and the next)
"$src/tests/fixtures/unpack" "$src/tests/fixtures/$fixture" "$work/t" >/dev/null 2>&1 ||
	{ echo "FAIL series-cli-setup: cannot unpack $fixture"; exit 1; }
kpf() {	# kpf WORD: the kpageflags word of frame 0x129a00 (the other THP's head keeps THP|COMPOUND_HEAD)
	rm -f "$work/t/proc/kpageflags.errno"
	python3 - "$work/t/proc/kpageflags" "$1" <<'PY'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.truncate(0x140000 * 8)
    for pfn, w in ((0x129a00, int(sys.argv[2], 0)), (0x11a400, (1 << 22) | (1 << 15))):
        f.seek(pfn * 8)
        f.write(struct.pack("<Q", w))
PY
}
append() {	# append FILE: member of the series, and the same tree as a plain snapshot FILE
	"$pagemap" snapshot --from-tree "$work/t" --append "$work/s.series" &&
		"$pagemap" snapshot --from-tree "$work/t" -o "$1" ||
		{ echo "FAIL series-cli-setup: cannot append"; exit 1; }
}
kpf 0x408000	# THP (bit 22) and COMPOUND_HEAD (bit 15)
append "$work/a.snap"
kpf 0x8000	# COMPOUND_HEAD alone: the huge page was split, its frames stayed together
append "$work/b.snap"
kpf 0x8000
append "$work/c.snap"

reused=$("$pagemap" snapshot --list "$work/s.series" | sed -n 's/^member=2 .* reused=\([0-9]*\) .*/\1/p')
[ "${reused:-0}" -gt 0 ] && echo "PASS series-cli-reuse ($reused chunks)" ||
	echo "FAIL series-cli-reuse: member 2 reuses '${reused:-}' chunks"
cols="-r -n -b -p 4242 -o MAPPING,START,THP_SPLIT,THP_FORMED,WRITTEN,MOVED"
"$pagemap" diff $cols "$work/s.series@1" "$work/s.series@2" >"$work/members.out"
rc=$?
PAGEMAP_DIFF_WALK=1 "$pagemap" diff $cols "$work/s.series@1" "$work/s.series@2" >"$work/walk.out"
"$pagemap" diff $cols "$work/a.snap" "$work/b.snap" >"$work/files.out"
got=$(grep " 0x7f05c1c00000 " "$work/members.out" | awk '{ print $1, $3 }')
[ $rc = 1 ] && [ "$got" = "changed 2097152" ] && echo "PASS series-cli-thp-split" ||
	{ echo "FAIL series-cli-thp-split: exit $rc, got '$got' for the mapping of 0x7f05c1c00000"; cat "$work/members.out"; }
cmp -s "$work/members.out" "$work/walk.out" && cmp -s "$work/members.out" "$work/files.out" &&
	echo "PASS series-cli-same-answer" || echo "FAIL series-cli-same-answer: members, forced walk and files differ"
"$pagemap" diff -p 4242 "$work/s.series@2" "$work/s.series@-1" >/dev/null
rc=$?
[ $rc = 0 ] && echo "PASS series-cli-equal" || echo "FAIL series-cli-equal: exit $rc, want 0"
exit 0
