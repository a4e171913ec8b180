#!/bin/sh
# doc_examples.sh - every example of README.md and of the man pages runs against processes of the test's own and
# its exit status and output's shape are checked (tests/live/doc_examples.py says how they are found, what stands
# for their placeholders, and which cannot run here and why). A new example is picked up without editing the test.
# Usage: tests/live/doc_examples.sh   (PAGEMAP_SRC and PAGEMAP_BUILD come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
[ -f "$src/README.md" ] && [ -d "$src/man" ] && [ -f "$src/tests/live/doc_examples.py" ] ||
	{ echo "SKIP doc-examples: no source tree at $src (a guest runs the built tests only)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP doc-examples: needs root (most examples are root's: phys, v2p, shared, audit)"; exit 77; }
[ -x "$build/pagemap" ] && [ -x "$build/pagemap-demo" ] ||
	{ echo "SKIP doc-examples: no $build/pagemap or pagemap-demo (make all)"; exit 77; }
for t in python3 jq cc pkg-config; do
	command -v "$t" >/dev/null || { echo "SKIP doc-examples: no $t here (make test-deps)"; exit 77; }
done
exec python3 "$src/tests/live/doc_examples.py" "$src" "$build"
