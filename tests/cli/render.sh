#!/bin/sh
# render.sh - `pagemap render`: golden SVGs of the fixtures (old kernels too), valid XML, the same bytes twice,
# hostile layouts (40 TiB gaps, 100 k mappings, no mapping) within the bounds, exit codes and atomic output,
# exact heat-map cells (recordings and series of snapshots), and the HTML as a person sees it in headless Chromium (bands, colours, a click).
# Usage: tests/cli/render.sh [--update]   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
check="$src/tests/cli/render_check.py"
update=0
[ "${1:-}" = --update ] && update=1
command -v python3 >/dev/null || { echo "SKIP render: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

pass() { echo "PASS render-$1"; }
fail() { echo "FAIL render-$1: $2"; }

unpack() {	# unpack FIXTURE: into $work/FIXTURE
	[ -d "$work/$1" ] || "$src/tests/fixtures/unpack" "$src/tests/fixtures/$1" "$work/$1" >/dev/null 2>&1
}

# --- golden SVGs of the fixtures, validated and byte-identical when made twice ---
for case in demo-6.18-root:4242 demo-6.18-user:4243 current-4.9-user:4242 current-5.10-root:4242 root-4.1:4242 \
	v1-3.16:4242 pshift-2.6.32:4242 arm64-16k:1616 ppc64-64k:6464; do
	fx=${case%:*} pid=${case#*:}
	unpack "$fx" || { fail "golden-$fx" "cannot unpack"; continue; }
	golden="$src/tests/cli/golden/render-$fx.svg"
	"$pagemap" --root "$work/$fx" render -f svg "$pid" >"$work/$fx.svg" 2>"$work/$fx.err" ||
		{ fail "golden-$fx" "exit $?: $(cat "$work/$fx.err")"; continue; }
	"$pagemap" --root "$work/$fx" render -f svg -o "$work/$fx.2.svg" "$pid"
	cmp -s "$work/$fx.svg" "$work/$fx.2.svg" && pass "same-bytes-$fx" || fail "same-bytes-$fx" "two renders differ"
	if command -v xmllint >/dev/null; then
		err=$(xmllint --noout "$work/$fx.svg" 2>&1) && pass "xml-$fx" || fail "xml-$fx" "$err"
	else
		echo "SKIP render-xml-$fx: no xmllint (Debian libxml2-utils)"
	fi
	if [ $update = 1 ]; then
		cp "$work/$fx.svg" "$golden"
		echo "SKIP render-golden-$fx: golden SVG rewritten"
	elif cmp -s "$golden" "$work/$fx.svg"; then
		pass "golden-$fx"
	else
		fail "golden-$fx" "differs from $golden"
		diff "$golden" "$work/$fx.svg" | head -10
	fi
	"$pagemap" --root "$work/$fx" render -f json "$pid" >"$work/$fx.json" &&
		out=$(python3 "$check" bounds "$work/$fx.json") && pass "bounds-$fx" || fail "bounds-$fx" "$out"
done

cmp -s "$src/docs/render-demo.svg" "$src/tests/cli/golden/render-demo-6.18-root.svg" && pass "readme-picture" ||
	fail "readme-picture" "docs/render-demo.svg is not the demo fixture's picture (cp the golden SVG there)"

# --- hostile layouts: trees made from the demo's, their pagemap a sparse file (unmapped words read 0) ---
mktree() {	# mktree NAME MAPS_GENERATOR: $work/NAME with proc/4242/maps from python code printing lines
	cp -r "$work/demo-6.18-root" "$work/$1"
	python3 -c "$2" >"$work/$1/proc/4242/maps"
	rm -f "$work/$1/proc/4242/pagemap"
	last=$(tail -1 "$work/$1/proc/4242/maps" | sed 's/^[0-9a-f]*-\([0-9a-f]*\) .*/\1/')
	[ -n "$last" ] || last=1000
	truncate -s $(( 0x$last / 4096 * 8 )) "$work/$1/proc/4242/pagemap"
}
present() {	# present TREE VA...: make those pages present (anon, own frame)
	t=$1
	shift
	python3 - "$t/proc/4242/pagemap" "$@" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    for i, va in enumerate(sys.argv[2:]):
        f.seek(int(va, 16) // 4096 * 8)
        f.write(struct.pack("<Q", (1 << 63) | (1 << 56) | (0x1000 + i)))
PY
}
mktree gaps40t 'print("10000-12000 rw-p 00000000 00:00 0\n280000012000-280000013000 r--p 00000000 08:01 12 /lib/a.so\n500000013000-500000033000 rw-p 00000000 00:00 0 [stack]")'
present "$work/gaps40t" 0x10000 0x11000 0x500000013000
mktree many 'print("\n".join("%x-%x rw-p 00000000 00:00 0" % (0x10000000 + i * 0x2000, 0x10001000 + i * 0x2000) for i in range(100000)))'
python3 - "$work/many/proc/4242/pagemap" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:	# every other mapping present: the colours change at every band
    for i in range(0, 100000, 2):
        f.seek((0x10000000 + i * 0x2000) // 4096 * 8)
        f.write(struct.pack("<Q", (1 << 63) | (1 << 56) | (0x1000 + i)))
PY
mktree empty 'pass'
for t in gaps40t many empty; do
	for fmt in svg html json ansi; do
		"$pagemap" --root "$work/$t" render -f $fmt -o "$work/$t.$fmt" 4242 2>"$work/err" ||
			{ fail "hostile-$t-$fmt" "exit $?: $(cat "$work/err")"; continue; }
		size=$(stat -c %s "$work/$t.$fmt")
		case $fmt in
		svg) limit=1048576 ;;
		html) limit=2097152 ;;
		*) limit=0 ;;
		esac
		if [ $limit != 0 ] && [ "$size" -gt $limit ]; then
			fail "hostile-$t-$fmt" "$size bytes, more than $limit"
		else
			pass "hostile-$t-$fmt"
		fi
	done
	out=$(python3 "$check" bounds "$work/$t.json") && pass "bounds-$t" || fail "bounds-$t" "$out"
	if command -v xmllint >/dev/null; then
		err=$(xmllint --noout "$work/$t.svg" 2>&1) && pass "xml-$t" || fail "xml-$t" "$err"
	fi
done
grep -q "<title>gap 40T</title>" "$work/gaps40t.svg" && pass "gap-label" || fail "gap-label" "no 40T gap label in the SVG"
grep -q 'no mappings' "$work/empty.svg" && pass "empty-says-so" || fail "empty-says-so" "the empty picture does not say why"
grep -q 'aggregated' "$work/many.html" && pass "many-html-aggregated" || fail "many-html-aggregated" "no note"

# --- exit codes, one-line errors, atomic output ---
code() {	# code NAME WANT CMD...: exit status and a one-line error
	name=$1 want=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc != "$want" ]; then
		fail "exit-$name" "exit $rc, want $want: $(cat "$work/err")"
	elif [ "$want" != 0 ] && [ "$(grep -cv '^Try ' "$work/err")" != 1 ]; then
		fail "exit-$name" "not one line: $(cat "$work/err")"
	else
		pass "exit-$name"
	fi
}
demo="$work/demo-6.18-root"
printf '{"t":1,"interval":1,"ranges":[{"start":"0x20000","end":"0x10000"}]}\n' >"$work/backwards.json"
printf '{"t":1,"ranges":[{"start":"0x10000","end":' >"$work/cut.json"
printf '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' >"$work/deep.json"
code usage-format 2 "$pagemap" --root "$demo" render -f png 4242
code usage-nopid 2 "$pagemap" --root "$demo" render
code usage-width 2 "$pagemap" --root "$demo" render -w 3 4242
code no-process 1 "$pagemap" --root "$demo" render 999
code no-recording 3 "$pagemap" render --track "$work/nothing.json"
code backwards-range 3 "$pagemap" render --track "$work/backwards.json"
code cut-recording 3 "$pagemap" render --track "$work/cut.json"
code deep-recording 3 "$pagemap" render --track "$work/deep.json"
code not-a-snapshot 3 "$pagemap" render --snapshot "$work/backwards.json"
code no-dir 1 "$pagemap" --root "$demo" render -o "$work/no/such/dir.svg" 4242
echo keep >"$work/kept.svg"
"$pagemap" --root "$demo" render -o "$work/kept.svg" 999 2>/dev/null
[ "$(cat "$work/kept.svg")" = keep ] && [ -z "$(ls "$work" | grep 'kept.svg.')" ] && pass "atomic" ||
	fail "atomic" "a failed render touched the output or left a temporary file"

# --- a snapshot renders as its tree does ---
if "$pagemap" snapshot --from-tree "$demo" -o "$work/demo.snap" >/dev/null 2>&1; then
	"$pagemap" render --snapshot "$work/demo.snap" -f json >"$work/snap.json" 2>"$work/err" &&
		"$pagemap" --root "$demo" render -f json 4242 >"$work/tree.json" &&
		python3 -c 'import json,sys; a,b=(json.load(open(f))["render"] for f in sys.argv[1:]); a.pop("source"); b.pop("source"); assert a==b' \
			"$work/snap.json" "$work/tree.json" && pass "snapshot" || fail "snapshot" "differs from the tree's: $(cat "$work/err")"
else
	fail "snapshot" "cannot make a snapshot of the demo tree"
fi

# --- diff colouring: the bytes of each change add up to what `pagemap diff` counts for the same snapshots ---
cp -r "$demo" "$work/da" && cp -r "$demo" "$work/db"
python3 - "$work/da/proc/4242" "$work/db/proc/4242" <<'PY'
import struct, sys
P, S, X, D = 1 << 63, 1 << 62, 1 << 56, 1 << 55
def edit(d, va, fn):
    with open(d + "/pagemap", "r+b") as f:
        f.seek(va // 4096 * 8)
        w = struct.unpack("<Q", f.read(8))[0]
        f.seek(va // 4096 * 8)
        f.write(struct.pack("<Q", fn(w)))
a, b = sys.argv[1:]
edit(b, 0x55c74c998000, lambda w: P | X | D | 0x200000)			# [heap]: appeared
edit(b, 0x55c74c996000, lambda w: 0)					# [heap]: freed
edit(b, 0x7f05c1974000, lambda w: S | D | (0x100 << 5))			# swapped out
edit(b, 0x7f05c1975000, lambda w: (w & ~((1 << 55) - 1)) | 0x300000)	# new frame
edit(a, 0x7f05c1977000, lambda w: w & ~X)				# shared in A ...
edit(b, 0x7f05c1977000, lambda w: (w & ~((1 << 55) - 1)) | 0x300001)	# ... own frame in B: written
PY
if "$pagemap" snapshot --from-tree "$work/da" -o "$work/a.snap" >/dev/null 2>&1 &&
	"$pagemap" snapshot --from-tree "$work/db" -o "$work/b.snap" >/dev/null 2>&1; then
	"$pagemap" render --diff "$work/a.snap" "$work/b.snap" -f json >"$work/diff.json" 2>"$work/err"
	"$pagemap" diff -J "$work/a.snap" "$work/b.snap" >"$work/libdiff.json"
	out=$(python3 - "$work/diff.json" "$work/libdiff.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["render"]
got = {}
for c in r["cells"]:
    for k, v in c["states"].items():
        got[k] = got.get(k, 0) + v
rows = json.load(open(sys.argv[2]))["diff"]
want = {k: sum(x[k] or 0 for x in rows) for k in ("appeared", "freed", "written", "new_frame")}
want["swapped"] = sum((x["swapout"] or 0) + (x["swapin"] or 0) for x in rows)
for k, v in want.items():
    assert got.get(k, 0) == v, "%s: %d, pagemap diff says %d" % (k, got.get(k, 0), v)
assert all(v == 4096 for v in want.values()), want
PY
) && pass "diff-bytes" || fail "diff-bytes" "$out $(cat "$work/err")"
	"$pagemap" diff --pages -J "$work/a.snap" "$work/b.snap" >"$work/pages.json"
	out=$(python3 "$check" diff-pages "$work/diff.json" "$work/pages.json") && pass "diff-pages-equal ($out)" ||
		fail "diff-pages-equal" "$out"
	"$pagemap" render --diff "$work/a.snap" "$work/b.snap" -o "$work/diff.svg" && xmllint --noout "$work/diff.svg" 2>/dev/null &&
		grep -q 'appeared' "$work/diff.svg" && pass "diff-svg" || fail "diff-svg" "no valid SVG with the diff legend"
	code diff-one-snapshot 2 "$pagemap" render --diff "$work/a.snap"
else
	fail "diff-setup" "cannot make the snapshots"
fi

# --- heat maps: exact cells of a recording (ranges), the recording's own axis and a process's ---
cat >"$work/rec.json" <<'REC'
{"t":0.5,"interval":0.5,"method":"uffd","written":12288,"pages":3,"ranges":[{"start":"0x7f05c2187000","end":"0x7f05c2189000","huge":false},{"start":"0x7f05c2200000","end":"0x7f05c2201000","huge":false}]}
{"t":1.0,"interval":0.5,"method":"uffd","written":0,"pages":0,"ranges":[]}
{"t":1.5,"interval":0.5,"method":"uffd","written":8192,"pages":2,"ranges":[{"start":"0x55c74c996000","end":"0x55c74c997000","huge":false},{"start":"0x7f05c2586000","end":"0x7f05c2587000","huge":false}]}
REC
for axis in own process; do
	p=
	[ $axis = process ] && p=4242
	# shellcheck disable=SC2086
	"$pagemap" --root "$demo" render --track "$work/rec.json" -f json $p >"$work/heat-$axis.json" 2>"$work/err" &&
		out=$(python3 "$check" heat "$work/heat-$axis.json" "$work/rec.json") && pass "heat-exact-$axis" ||
		fail "heat-exact-$axis" "$out $(cat "$work/err")"
	# shellcheck disable=SC2086
	"$pagemap" --root "$demo" render --track "$work/rec.json" -f svg -o "$work/heat-$axis.svg" $p &&
		xmllint --noout "$work/heat-$axis.svg" 2>/dev/null && pass "heat-svg-$axis" || fail "heat-svg-$axis" "invalid"
done

# --- series heat maps: three snapshots of the demo with known changes; exact cells per interval and --what ---
anon=0x7f05c2187000	# demo-anon: 1024 present exclusive pages, soft-dirty clear
for s in sa sb sc; do cp -r "$demo" "$work/$s"; done
python3 - "$work/sb/proc/4242" "$work/sc/proc/4242" $anon <<'PY'
import struct, sys
S, D = 1 << 62, 1 << 55
b, c, anon = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
def edit(d, pages, fn):
    with open(d + "/pagemap", "r+b") as f:
        for p in pages:
            f.seek((anon // 4096 + p) * 8)
            w = struct.unpack("<Q", f.read(8))[0]
            f.seek((anon // 4096 + p) * 8)
            f.write(struct.pack("<Q", fn(w)))
written = list(range(0, 100)) + [500, 501, 502]
for d in (b, c):
    edit(d, written, lambda w: w | D)			# soft-dirty gained from A to B: written (and kept in C)
edit(c, range(200, 300), lambda w: 0)			# B to C: freed
edit(c, range(300, 305), lambda w: S | D | (0x100 << 5))	# B to C: swapped out
PY
grep -v ' /memfd:' "$work/sb/proc/4242/maps" >"$work/sc/proc/4242/maps"	# B to C: the memfd mapping goes
pg() { printf '0x%x' $((anon + $1 * 4096)); }
w1="$(pg 0)-$(pg 100),$(pg 500)-$(pg 503)" f2="$(pg 200)-$(pg 300)" s2="$(pg 300)-$(pg 305)"
if (cd "$work" && for s in sa sb sc; do "$pagemap" snapshot --from-tree "$s" -o "$s.snap" >/dev/null 2>&1 || exit 1; done); then
	for w in "written:$w1;" "appeared:;" "freed:;$f2" "swapped:;$s2" "changed:$w1;$f2,$s2"; do
		what=${w%%:*}
		"$pagemap" render --series --what "$what" "$work/sa.snap" "$work/sb.snap" "$work/sc.snap" -f json \
			>"$work/series-$what.json" 2>"$work/err" &&
			out=$(python3 "$check" series "$work/series-$what.json" "${w#*:}") && pass "series-exact-$what ($out)" ||
			fail "series-exact-$what" "$out $(cat "$work/err")"
	done
	# the cells of each interval add up to what `pagemap diff` counts for the same two snapshots
	"$pagemap" diff -J "$work/sa.snap" "$work/sb.snap" >"$work/d1.json"
	"$pagemap" diff -J "$work/sb.snap" "$work/sc.snap" >"$work/d2.json"
	out=$(python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
cat = {"written": ["written"], "freed": ["freed"], "swapped": ["swapout", "swapin"],
       "changed": ["appeared", "freed", "swapout", "swapin", "written", "new_frame"]}
for what, keys in cat.items():
    h = json.load(open("%s/series-%s.json" % (w, what)))["heatmap"]
    for i, d in enumerate(("d1", "d2")):
        rows = json.load(open("%s/%s.json" % (w, d)))["diff"]
        want = sum(r[k] or 0 for r in rows for k in keys)
        got = sum(c["pages"] for c in h["intervals"][i]["cells"]) * h["page_size"]
        assert got == want, "%s interval %d: %d bytes, pagemap diff says %d" % (what, i, got, want)
h = json.load(open(w + "/series-written.json"))["heatmap"]
gone = [r for r in json.load(open(w + "/d2.json"))["diff"] if r["mapping"] == "unmapped"]
assert [iv["unmatched_bytes"] for iv in h["intervals"]] == [0, sum(int(r["end"], 16) - int(r["start"], 16) for r in gone)], h["intervals"]
assert h["what"] == "written" and h["kind"] == "series"
PY
) && pass "series-diff-totals" || fail "series-diff-totals" "$out"
	# golden SVG (relative names: the same bytes wherever the test runs), valid, the same twice, within 1 MiB
	(cd "$work" && "$pagemap" render --series sa.snap sb.snap sc.snap -f svg -o series.svg &&
		"$pagemap" render --series sa.snap sb.snap sc.snap -f svg | cmp -s - series.svg) &&
		pass "series-same-bytes" || fail "series-same-bytes" "two renders differ"
	xmllint --noout "$work/series.svg" 2>/dev/null && pass "series-xml" || fail "series-xml" "invalid SVG"
	grep -q 'not compared' "$work/series.svg" && pass "series-says-unmatched" || fail "series-says-unmatched" "no note"
	if [ $update = 1 ]; then
		cp "$work/series.svg" "$src/tests/cli/golden/render-series.svg"
		echo "SKIP render-series-golden: golden SVG rewritten"
	elif cmp -s "$src/tests/cli/golden/render-series.svg" "$work/series.svg"; then
		pass "series-golden"
	else
		fail "series-golden" "differs from tests/cli/golden/render-series.svg"
	fi
	"$pagemap" render --series "$work/sa.snap" "$work/sb.snap" -f ansi -w 80 | grep -q '1.000s' &&
		pass "series-ansi" || fail "series-ansi" "no interval row"
	# A snapshot named with a terminal's title escape: the title line names it through cli/base/textsafe.c (\x1b).
	esc=$(printf '\033')
	cp "$work/sa.snap" "$work/sa$esc]0;x.snap"
	if "$pagemap" render --series "$work/sa$esc]0;x.snap" "$work/sb.snap" -f ansi -w 80 >"$work/esc.ansi"; then
		head -n 1 "$work/esc.ansi" | grep -q "$esc" && fail "series-ansi-name" "a file name's ESC written raw" ||
			pass "series-ansi-name"
	else
		fail "series-ansi-name" "render failed"
	fi
	# bad input: one snapshot, another process, several processes without a PID, a PID not held, damage
	cp -r "$demo" "$work/other" && mv "$work/other/proc/4242" "$work/other/proc/4243"
	cp -r "$demo" "$work/two" && cp -r "$work/two/proc/4242" "$work/two/proc/4243"
	for s in other two; do "$pagemap" snapshot --from-tree "$work/$s" -o "$work/$s.snap" >/dev/null 2>&1; done
	head -c 3000 "$work/sb.snap" >"$work/cut.snap"
	cp "$work/sb.snap" "$work/flip.snap"
	printf 'XXXX' | dd of="$work/flip.snap" bs=1 seek=5000 conv=notrunc 2>/dev/null
	code series-one 2 "$pagemap" render --series "$work/sa.snap"
	code series-one-pid 2 "$pagemap" render --series "$work/sa.snap" 4242
	code series-html 2 "$pagemap" render --series -f html "$work/sa.snap" "$work/sb.snap"
	code series-what 2 "$pagemap" render --series --what everything "$work/sa.snap" "$work/sb.snap"
	code series-what-alone 2 "$pagemap" render --what written --snapshot "$work/sa.snap"
	code series-with-diff 2 "$pagemap" render --series --diff "$work/sa.snap" "$work/sb.snap"
	code series-other-process 3 "$pagemap" render --series "$work/sa.snap" "$work/other.snap"
	code series-several 2 "$pagemap" render --series "$work/sa.snap" "$work/two.snap"
	code series-pid-missing 3 "$pagemap" render --series "$work/sa.snap" "$work/two.snap" 4243
	code series-no-file 3 "$pagemap" render --series "$work/sa.snap" "$work/none.snap"
	code series-cut 3 "$pagemap" render --series "$work/sa.snap" "$work/cut.snap"
	code series-damaged 3 "$pagemap" render --series "$work/sa.snap" "$work/flip.snap"
	"$pagemap" render --series "$work/sa.snap" "$work/two.snap" 4242 -f json >/dev/null 2>"$work/err" &&
		pass "series-pid-given" || fail "series-pid-given" "$(cat "$work/err")"
else
	fail "series-setup" "cannot make the snapshots"
fi

# --- colourings by value: golden SVGs of fixtures with frames, legend bytes against phys and numa, hidden said ---
colour_golden() {	# colour_golden FIXTURE PID KEY: the golden SVG of that colouring, valid and the same twice
	fx=$1 pid=$2 by=$3
	unpack "$fx" || { fail "colour-$fx-$by" "cannot unpack"; return; }
	golden="$src/tests/cli/golden/render-$fx-$by.svg"
	"$pagemap" --root "$work/$fx" render -c "$by" -f svg "$pid" >"$work/$fx-$by.svg" 2>"$work/err" ||
		{ fail "colour-$fx-$by" "exit $?: $(cat "$work/err")"; return; }
	"$pagemap" --root "$work/$fx" render -c "$by" -f svg "$pid" | cmp -s - "$work/$fx-$by.svg" &&
		pass "colour-same-bytes-$fx-$by" || fail "colour-same-bytes-$fx-$by" "two renders differ"
	if command -v xmllint >/dev/null; then
		err=$(xmllint --noout "$work/$fx-$by.svg" 2>&1) && pass "colour-xml-$fx-$by" || fail "colour-xml-$fx-$by" "$err"
	fi
	if [ $update = 1 ]; then
		cp "$work/$fx-$by.svg" "$golden"
		echo "SKIP render-colour-golden-$fx-$by: golden SVG rewritten"
	elif cmp -s "$golden" "$work/$fx-$by.svg"; then
		pass "colour-golden-$fx-$by"
	else
		fail "colour-golden-$fx-$by" "differs from $golden"
		diff "$golden" "$work/$fx-$by.svg" | head -10
	fi
	"$pagemap" --root "$work/$fx" render -c "$by" -f json "$pid" >"$work/$fx-$by.json"
}
colour_golden phys-synth 3131 class
colour_golden phys-synth 3131 cgroup
colour_golden numa-2node 4242 node
# class: the fixture's frames (tests/fixtures/README.md), 4 KiB pages each
out=$(python3 - "$work/phys-synth-class.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))["render"]["legend"]
want = {"anon": 120, "anon_thp": 512, "file": 48, "shmem": 0, "zero": 8, "ksm": 8, "hugetlb": 512, "swapped": 4}
for k, v in want.items():
    assert got.get(k) == v * 4096, "%s: %s bytes, want %d pages" % (k, got.get(k), v)
assert "hidden" not in got and "unknown" not in got and "other" not in got, got
PY
) && pass "colour-class-bytes" || fail "colour-class-bytes" "$out"
# cgroup: the bytes per kpagecgroup inode that `pagemap phys -p` lists for the same pages
"$pagemap" --root "$work/phys-synth" phys -J -p 3131 >"$work/phys.json"
out=$(python3 - "$work/phys-synth-cgroup.json" "$work/phys.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))["render"]["legend"]
want = {}
for r in json.load(open(sys.argv[2]))["pages"]:
    k = "uncharged" if not r["cgroup"] else "cgroup ino %d" % r["cgroup"]
    want[k] = want.get(k, 0) + r["pages"] * 4096
for k, v in want.items():
    assert got.get(k) == v, "%s: %s bytes, phys -p says %d" % (k, got.get(k), v)
assert len(want) == 2, want
PY
) && pass "colour-cgroup-bytes" || fail "colour-cgroup-bytes" "$out"
# node: the bytes per node `pagemap numa` counts from the same frames ("?": on no known node)
"$pagemap" --root "$work/numa-2node" numa -J 4242 >"$work/numa.json"
out=$(python3 "$check" node-legend "$work/numa-2node-node.json" "$work/numa.json") &&
	case $out in *"node 0="[1-9]*"node 1="[1-9]*) ;; *) false ;; esac && pass "colour-node-bytes" || fail "colour-node-bytes" "$out"
# more cgroups than colours: seven by name, the rest "other", and no byte lost
cp -r "$work/phys-synth" "$work/many-cg"
python3 - "$work/many-cg/proc/kpagecgroup" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:	# the private anon frames 0x600-0x6ff: nine cgroups, inodes 109 down to 101
    for pfn in range(0x600, 0x700):
        f.seek(pfn * 8)
        f.write(struct.pack("<Q", 109 - pfn % 9))
PY
"$pagemap" --root "$work/many-cg" render -c cgroup -f json 3131 >"$work/many-cg.json" 2>"$work/err"
out=$(python3 - "$work/many-cg.json" "$work/phys-synth-cgroup.json" <<'PY'
import json, sys
got, before = (json.load(open(f))["render"]["legend"] for f in sys.argv[1:])
names = [k for k in got if k.startswith("cgroup ino ")]
assert len(names) == 7 and names == sorted(names), names
assert got.get("other", 0) > 0, got
assert sum(got.values()) == sum(before.values()), (got, before)
PY
) && pass "colour-cgroup-other" || fail "colour-cgroup-other" "$out $(cat "$work/err")"
# unprivileged: frames hidden, drawn "hidden" and said in the picture, never a silent zero
unpack demo-6.18-user
for by in cgroup class node; do
	"$pagemap" --root "$work/demo-6.18-user" render -c $by -f svg 4243 >"$work/user-$by.svg" &&
		grep -q 'frame numbers hidden' "$work/user-$by.svg" && grep -q '>hidden [0-9.]*[KMG]' "$work/user-$by.svg" &&
		pass "colour-hidden-$by" || fail "colour-hidden-$by" "no hidden legend or note"
done
"$pagemap" --root "$work/demo-6.18-user" render -c class -f ansi 4243 | grep -q '^note: frame numbers hidden' &&
	pass "colour-hidden-ansi" || fail "colour-hidden-ansi" "no note"
code usage-colour 2 "$pagemap" --root "$demo" render -c flavour 4242
code usage-colour-heat 2 "$pagemap" --root "$demo" render -c node --track "$work/rec.json"
# a snapshot holding the kpage words replays the same colouring
if "$pagemap" snapshot --from-tree "$work/phys-synth" -o "$work/phys.snap" >/dev/null 2>&1; then
	"$pagemap" render -c class --snapshot "$work/phys.snap" -f json >"$work/snapc.json" 2>"$work/err" &&
		python3 -c 'import json,sys; a,b=(json.load(open(f))["render"] for f in sys.argv[1:]); a.pop("source"); b.pop("source"); assert a==b' \
			"$work/snapc.json" "$work/phys-synth-class.json" && pass "colour-snapshot" ||
		fail "colour-snapshot" "differs from the tree's: $(cat "$work/err")"
else
	fail "colour-snapshot" "cannot make a snapshot of the phys-synth tree"
fi

# --- HTML in headless Chromium: a band per mapping, the colours where the mappings are, a click lists runs ---
if ! command -v chromium >/dev/null; then
	echo "SKIP render-chromium: chromium is not installed (Debian chromium; make deps)"
	exit 0
fi
chrome() {	# chrome ARGS... URL: headless, its own profile, a minute at most
	timeout 90 chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/profile" --no-first-run "$@" 2>>"$work/chrome.err"
}
"$pagemap" --root "$demo" render -o "$work/demo.html" 4242
"$pagemap" --root "$demo" render -f json 4242 >"$work/demo.json"
chrome --enable-logging=stderr --v=0 --dump-dom "file://$work/demo.html" >"$work/dom.html"
n=$(grep -o 'class="band"' "$work/dom.html" | wc -l)
[ "$n" = 32 ] && pass "dom-bands" || fail "dom-bands" "$n band elements, want the demo's 32 mappings"
if grep -E 'Uncaught|CONSOLE.*(Error|error)' "$work/chrome.err" >/dev/null; then
	fail "console" "$(grep -E 'Uncaught|CONSOLE' "$work/chrome.err" | head -3)"
else
	pass "console"
fi
chrome --window-size=1300,1000 --hide-scrollbars --screenshot="$work/demo.png" "file://$work/demo.html" >/dev/null
starts=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["render"]; print(",".join(s["start"] for s in r["segments"] if s["kind"]=="band"))' "$work/demo.json")
out=$(python3 "$check" pixels "$work/demo.png" "$work/demo.json" "$starts") && pass "pixels" || fail "pixels" "$out"
# A test page: the map's own script selects the guard mapping (as a click does) and searches the THP's address.
guard=$(awk '$1 == "demo-guard" { print $2 }' "$demo/regions")
want=$("$pagemap" --root "$demo" pages -n -r 4242 "$guard" | wc -l)
sed 's|</body></html>|<script>const pm = window.pagemapRender, D = pm.data;\
const si = D.segs.findIndex(s => s[1] === "'"${guard%-*}"'");\
const n = pm.select(si);\
document.body.setAttribute("data-test", n + " " + document.querySelectorAll("#runs .run").length + " " +\
 (pm.search("0x7f05c1c00000").indexOf("mostly huge") >= 0));\
</script></body></html>|' "$work/demo.html" >"$work/click.html"
got=$(chrome --dump-dom "file://$work/click.html" | grep -o 'data-test="[^"]*"')
[ "$got" = "data-test=\"$want $want true\"" ] && pass "click-runs" || fail "click-runs" "$got, want $want runs and a huge page found"
# The page's sizes are the tables' (a copy of tests/unit/test_out_human.c's size_table): its script printed 150K and 12M
# where maps and the SVG said 150.7K and 12.3M.
sed 's|</body></html>|<script>const sz = window.pagemapRender.size;\
document.body.setAttribute("data-test", [0n, 1023n, 1024n, 1536n, 154317n, 2096128n, 12897485n, 1049100288n,\
 42949672960n, 1152921504606846976n].map(b => sz(b)).join(" "));\
</script></body></html>|' "$work/demo.html" >"$work/sizes.html"
got=$(chrome --dump-dom "file://$work/sizes.html" | grep -o 'data-test="[^"]*"')
want='data-test="0B 1023B 1K 1.5K 150.7K 2M 12.3M 1000M 40G 1E"'
[ "$got" = "$want" ] && pass "html-sizes" || fail "html-sizes" "$got, want $want"
# Colour by node: hover on a cell of node 1 memory names the node, a run lists it too.
"$pagemap" --root "$work/numa-2node" render -c node -o "$work/node.html" 4242
sed 's|</body></html>|<script>const pm = window.pagemapRender, D = pm.data;\
const c = [...D.cells].findIndex(ch => D.states[Math.floor((ch.charCodeAt(0) - 48) / 5)][0] === "node 1");\
document.body.setAttribute("data-test", c >= 0 \&\& pm.describe(c).indexOf("mostly node 1") >= 0 \&\& / node 1  /.test(pm.describe(c)));\
</script></body></html>|' "$work/node.html" >"$work/node-test.html"
got=$(chrome --dump-dom "file://$work/node-test.html" | grep -o 'data-test="[^"]*"')
[ "$got" = 'data-test="true"' ] && pass "colour-hover-node" || fail "colour-hover-node" "$got: hover does not name node 1"
# 100 k mappings: the page loads without errors (the bands are grouped to stay within 2 MiB).
: >"$work/chrome.err"
chrome --enable-logging=stderr --v=0 --dump-dom "file://$work/many.html" >"$work/many.dom"
n=$(grep -o 'class="band"' "$work/many.dom" | wc -l)
if [ "$n" -gt 0 ] && ! grep -E 'Uncaught|CONSOLE.*(Error|error)' "$work/chrome.err" >/dev/null; then
	pass "many-html ($n bands)"
else
	fail "many-html" "$n bands; $(grep -E 'Uncaught|CONSOLE' "$work/chrome.err" | head -3)"
fi
exit 0
