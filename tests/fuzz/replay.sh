#!/bin/sh
# replay.sh - run every fuzz target's plain-main build over its committed corpus (make check runs this).
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
for t in "$src"/build-fuzz/replay/fuzz_*; do
	[ -x "$t" ] || { echo "FAIL fuzz-replay: no replay binaries in $src/build-fuzz/replay"; exit 1; }
	n=$(basename "$t")
	"$t" "$src/tests/fuzz/corpus/${n#fuzz_}" || rc=1
done
exit $rc
