#!/bin/sh
# capture-private.sh - tests/fixtures/capture makes a private tree (0700 directories, 0600 files) under a name mktemp chose.
# Usage: tests/cli/capture-private.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
[ -x "$build/tests/tools/pm-sparse" ] || { echo "SKIP capture-private: $build/tests/tools/pm-sparse not built"; exit 0; }
work=$(mktemp -d) || exit 1
sleep 30 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
# A loose umask, as a root shell may have: the capture must not depend on it.
if ! (umask 022 && PAGEMAP_BUILD=$build "$src/tests/fixtures/capture" $pid "$work/tree" 4242 >/dev/null 2>"$work/err"); then
	echo "FAIL capture-private: capture failed: $(head -1 "$work/err")"
	exit 0
fi
loose=$(find "$work/tree" \( -type d ! -perm 700 \) -o \( -type f -perm /077 \) | head -3)
if [ -z "$loose" ] && [ "$(stat -c %a "$work/tree")" = 700 ]; then
	echo "PASS capture-private"
else
	echo "FAIL capture-private: readable by others: $(stat -c %a "$work/tree") $loose"
fi
left=$(find "$work" -maxdepth 1 -name 'tree.tmp.*' | head -1)
if [ -z "$left" ]; then echo "PASS capture-no-leftover"; else echo "FAIL capture-no-leftover: $left"; fi
