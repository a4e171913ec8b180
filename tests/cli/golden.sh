#!/bin/sh
# golden.sh - replay tests/cli/cases through `pagemap --root FIXTURE` and compare with the golden outputs.
# Usage: tests/cli/golden.sh [--update]   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
update=0
[ "${1:-}" = --update ] && update=1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
pagemap="$build/pagemap"
limit=
command -v timeout >/dev/null && limit="timeout 60"

json_check() {	# json_check FILE: valid JSON, sizes are integers, addresses and PFNs "0x" strings
	# python3 is a test dependency (make deps installs it): without it the JSON goes unchecked, which fails.
	command -v python3 >/dev/null || { echo "python3 is not installed (make deps, or apt-get install python3)"; return 1; }
	python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = next(iter(doc.values()))
assert isinstance(rows, list) and rows, "no rows"
for r in rows:
    for k, v in r.items():
        if k in ("start", "end", "offset") and v is not None:
            assert isinstance(v, str) and v.startswith("0x"), (k, v)
        if k in ("pfn", "swapoff") and v is not None:
            assert isinstance(v, str) and (v.startswith("0x") or v == "hidden"), (k, v)
        if k in ("size", "present", "swapped", "file", "exclusive", "thp", "uffdwp", "guard", "zero", "pages") and v is not None:
            assert isinstance(v, int) and not isinstance(v, bool), (k, v)
PY
}

grep -v '^#' "$src/tests/cli/cases" | while read -r name fixture args; do
	[ -n "$name" ] || continue
	tree="$work/$fixture"
	[ -d "$tree" ] || "$src/tests/fixtures/unpack" "$src/tests/fixtures/$fixture" "$tree" || { echo "FAIL $name: cannot unpack $fixture"; continue; }
	# @REGION -> its range recorded when the fixture was captured.
	expanded=""
	for a in $args; do
		case $a in @*) a=$(awk -v n="${a#@}" '$1 == n { print $2 }' "$tree/regions") ;; esac
		expanded="$expanded $a"
	done
	out="$work/$name.out"
	# shellcheck disable=SC2086
	# A damaged tree once hung the tool: a case that runs a minute fails instead of stalling make check.
	$limit "$pagemap" --root "$tree" $expanded >"$out.stdout" 2>"$out.stderr"
	rc=$?
	# The unpacked tree's temporary path is not part of the answer.
	{ cat "$out.stdout"; sed "s|$work|ROOT|g; s/^/stderr: /" "$out.stderr"; echo "exit: $rc"; } >"$out"
	golden="$src/tests/cli/golden/$name.out"
	if [ $update = 1 ]; then
		cp "$out" "$golden"
		echo "SKIP $name: golden output rewritten"
		continue
	fi
	case " $expanded " in *" -J "*) if ! err=$(json_check "$out.stdout" 2>&1); then echo "FAIL $name: JSON check: $err"; continue; fi ;; esac
	if [ ! -f "$golden" ]; then
		echo "FAIL $name: no golden output (run tests/cli/golden.sh --update and review)"
	elif cmp -s "$out" "$golden"; then
		echo "PASS $name"
	else
		echo "FAIL $name: output differs from $golden:"
		diff -u "$golden" "$out" | head -20
	fi
done
