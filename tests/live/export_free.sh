#!/bin/sh
# export_free.sh - `pagemap export --pss` (root) gives free memory its own class: class="free"
# is the kernel's MemFree, read within the same scrape, so it lies between MemFree read just
# before and just after (give or take what the rest of the machine allocated or freed
# meanwhile: 1% of MemTotal), and "other" holds only what no class does (before Linux 4.10,
# kpageflags flagged only a free block's first page, and the rest of free memory read as
# other; since, every free page is flagged buddy, which no longer counts it a second time).
# Nothing is timed: the bounds come from the two readings around the scrape.
# Usage: tests/live/export_free.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
[ "$(id -u)" = 0 ] || { echo "SKIP export-free: not root (needs /proc/kpageflags)"; exit 77; }
[ -r /proc/kpageflags ] || { echo "SKIP export-free: /proc/kpageflags cannot be read"; exit 77; }
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
kb() { echo $(($(awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo) * 1024)); }

total=$(kb MemTotal)
before=$(kb MemFree)
"$pagemap" export --pss >"$out" 2>/dev/null
rc=$?
after=$(kb MemFree)
[ $rc = 0 ] || { echo "FAIL export-free-run: export --pss exited $rc"; exit 1; }
class() { awk -v c="pagemap_physical_bytes{class=\"$1\"}" '$1 == c { print $2 }' "$out"; }
free=$(class free) other=$(class other) buddy=$(class buddy)
lo=$((before < after ? before : after)) hi=$((before > after ? before : after))
slack=$((total / 100))
echo "  MemFree before $before, after $after;" \
	"class free ${free:-none}, other ${other:-none}, buddy ${buddy:-none}"
if [ -z "$free" ]; then
	echo "FAIL export-free-class: no class=\"free\" sample"
elif [ "$free" -lt $((lo - slack)) ] || [ "$free" -gt $((hi + slack)) ]; then
	echo "FAIL export-free-class: free $free outside MemFree's [$lo, $hi] +- $slack"
else
	echo "PASS export-free-class"
fi
[ -z "$buddy" ] && echo "PASS export-free-no-buddy" ||
	echo "FAIL export-free-no-buddy: class=\"buddy\" $buddy counts free pages again"
# An idle machine (over a quarter of its memory free): other is far below MemFree.
if [ "$lo" -lt $((total / 4)) ]; then
	echo "SKIP export-free-other: not idle (MemFree $lo of $total)"
elif [ -n "$other" ] && [ "$other" -lt $((lo / 4)) ]; then
	echo "PASS export-free-other"
else
	echo "FAIL export-free-other: other ${other:-none} not below a quarter of MemFree $lo"
fi
