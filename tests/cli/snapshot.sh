#!/bin/sh
# snapshot.sh - every fixture tree <-> snapshot round trip is lossless, and every golden case answers the same
# through `pagemap --snapshot FILE` as through `pagemap --root TREE` (stdout, stderr and exit status).
# Usage: tests/cli/snapshot.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
limit=
command -v timeout >/dev/null && limit="timeout 60"

treecmp() {	# treecmp A B: the same files with the same bytes; sparse files compared over their data only
	python3 - "$1" "$2" <<'PY'
import os, sys
a, b = sys.argv[1:]
def files(root):
    out = set()
    for d, dirs, fs in os.walk(root):
        out |= {os.path.relpath(os.path.join(d, f), root) for f in fs + [x for x in dirs if os.path.islink(os.path.join(d, x))]}
    return out
fa, fb = files(a), files(b)
assert fa == fb, ("file sets differ", sorted(fa ^ fb)[:5])
def ranges(fd, size):
    pos = 0
    while pos < size:
        try:
            d = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            return
        h = os.lseek(fd, d, os.SEEK_HOLE)
        yield d, h
        pos = h
for f in sorted(fa):
    x, y = os.open(os.path.join(a, f), os.O_RDONLY), os.open(os.path.join(b, f), os.O_RDONLY)
    sx, sy = os.fstat(x).st_size, os.fstat(y).st_size
    assert sx == sy, (f, "length", sx, sy)
    for fd, other in ((x, y), (y, x)):	# every data range of either reads the same in both
        for d, h in ranges(fd, sx):
            while d < h:
                n = min(h - d, 1 << 20)
                assert os.pread(fd, n, d) == os.pread(other, n, d), (f, "bytes differ at", d)
                d += n
PY
}

# Round trip: unpack (sparse binaries), write a snapshot, extract it, compare the trees byte for byte.
for d in "$src"/tests/fixtures/*/; do
	n=$(basename "$d")
	# Not a /proc tree: files for `audit --snapshots` to search, a symlink loop among them.
	[ "$n" = audit-snapshots ] && continue
	tree="$work/$n" snap="$work/$n.snap" back="$work/$n.back"
	"$src/tests/fixtures/unpack" "$d" "$tree" >/dev/null 2>&1 || { echo "FAIL roundtrip-$n: cannot unpack"; continue; }
	if ! err=$("$pagemap" snapshot --from-tree "$tree" -o "$snap" 2>&1); then
		echo "FAIL roundtrip-$n: snapshot --from-tree: $err"
	elif ! err=$("$pagemap" snapshot --to-tree "$back" "$snap" 2>&1); then
		echo "FAIL roundtrip-$n: snapshot --to-tree: $err"
	elif ! err=$(treecmp "$tree" "$back" 2>&1); then
		echo "FAIL roundtrip-$n: the trees differ:"
		printf '%s\n' "$err" | head -5
	else
		echo "PASS roundtrip-$n"
	fi
done

# --list: a FILE row gives that file's own length (the files of one FILES section share its offset and payload),
# checked against the tree the snapshot extracts to.
for snap in "$work"/*.snap; do
	[ -f "$snap" ] || continue
	n=$(basename "$snap" .snap) back="$work/$(basename "$snap" .snap).back"
	[ -d "$back" ] || continue
	bad=$("$pagemap" snapshot --list "$snap" | awk '$2 == "FILE" { print $3, $4 }' | while read -r len path; do
		[ "$(stat -c %s "$back/$path")" = "$len" ] || echo "$path: listed $len, extracted $(stat -c %s "$back/$path")"
	done)
	files=$("$pagemap" snapshot --list "$snap" | awk '$2 == "FILE"' | wc -l)
	if [ -n "$bad" ]; then
		echo "FAIL list-lengths-$n:"
		printf '%s\n' "$bad" | head -3
	elif [ "$files" -lt 2 ]; then
		echo "FAIL list-lengths-$n: $files FILE rows"
	else
		echo "PASS list-lengths-$n"
	fi
done

# Replay: the golden cases, --root against --snapshot (the trees' temporary paths masked).
grep -v '^#' "$src/tests/cli/cases" | while read -r name fixture args; do
	[ -n "$name" ] || continue
	tree="$work/$fixture"
	[ -f "$work/$fixture.snap" ] || { echo "SKIP replay-$name: no snapshot of $fixture"; continue; }
	expanded=""
	for a in $args; do
		case $a in @*) a=$(awk -v n="${a#@}" '$1 == n { print $2 }' "$tree/regions") ;; esac
		expanded="$expanded $a"
	done
	# shellcheck disable=SC2086
	$limit "$pagemap" --root "$tree" $expanded >"$work/a.out" 2>"$work/a.err"
	ra=$?
	# shellcheck disable=SC2086
	$limit "$pagemap" --snapshot "$work/$fixture.snap" $expanded >"$work/b.out" 2>"$work/b.err"
	rb=$?
	sed -i "s|$work/$fixture|TREE|g; s|/[^ :]*/pagemap-snapshot\.[A-Za-z0-9]*|TREE|g" "$work/a.err" "$work/b.err"
	if [ $ra != $rb ]; then
		echo "FAIL replay-$name: exit $rb through the snapshot, $ra through the tree"
		head -3 "$work/b.err"
	elif ! cmp -s "$work/a.out" "$work/b.out" || ! cmp -s "$work/a.err" "$work/b.err"; then
		echo "FAIL replay-$name: output differs:"
		diff -u "$work/a.out" "$work/b.out" | head -10
		diff -u "$work/a.err" "$work/b.err" | head -10
	else
		echo "PASS replay-$name"
	fi
done

# Damage: a truncated file and a flipped bit are refused with one line naming where, exit 1 (EXIT_RUNTIME).
snap="$work/demo-6.18-root.snap"
if [ -f "$snap" ]; then
	size=$(stat -c %s "$snap")
	head -c $((size / 2)) "$snap" >"$work/trunc.snap"
	cp "$snap" "$work/flip.snap"
	printf '\377' | dd of="$work/flip.snap" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
	for f in trunc flip; do
		err=$("$pagemap" --snapshot "$work/$f.snap" maps 4242 2>&1 >/dev/null)
		rc=$?
		lines=$(printf '%s\n' "$err" | wc -l)
		if [ $rc = 1 ] && [ "$lines" = 1 ]; then
			echo "PASS damaged-$f"
		else
			echo "FAIL damaged-$f: exit $rc, $lines lines: $err"
		fi
	done
fi

# libzstd is opened on the first snapshot, not at every start (lib/snapshot/zstd_load.c says why). With a damaged
# libzstd.so.1 first in the search path: a command without a snapshot runs as before (a linked libzstd would
# stop it at start); reading or writing a snapshot fails with one line naming the library, exit 1, and
# leaves no file behind.
tree="$work/demo-6.18-root"
if [ -f "$snap" ] && [ -d "$tree" ]; then
	mkdir -p "$work/badzstd"
	printf 'not an ELF file' >"$work/badzstd/libzstd.so.1"
	lp="$work/badzstd${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	if out=$(LD_LIBRARY_PATH=$lp "$pagemap" --root "$tree" maps 4242 2>&1 >/dev/null); then
		echo "PASS zstd-not-loaded-without-snapshot"
	else
		echo "FAIL zstd-not-loaded-without-snapshot: $out"
	fi
	err=$(LD_LIBRARY_PATH=$lp "$pagemap" --snapshot "$snap" maps 4242 2>&1 >/dev/null)
	rc=$?
	case $rc:$(printf '%s\n' "$err" | wc -l):$err in
	1:1:*libzstd.so.1*) echo "PASS zstd-missing-replay" ;;
	*) echo "FAIL zstd-missing-replay: exit $rc: $err" ;;
	esac
	err=$(LD_LIBRARY_PATH=$lp "$pagemap" snapshot --from-tree "$tree" -o "$work/badzstd/out.snap" 2>&1)
	rc=$?
	left=$(find "$work/badzstd" -type f ! -name libzstd.so.1 | wc -l)
	case $rc:$left:$(printf '%s\n' "$err" | wc -l):$err in
	1:0:1:*libzstd.so.1*) echo "PASS zstd-missing-write" ;;
	*) echo "FAIL zstd-missing-write: exit $rc, $left files left: $err" ;;
	esac
fi
