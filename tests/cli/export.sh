#!/bin/sh
# export.sh - `pagemap export`: promtool accepts its output, labels are escaped, the series cap holds with an
# "other" group and a dropped counter, --textfile writes atomically, hostile rules files are refused.
# Usage: tests/cli/export.sh   (PAGEMAP_BUILD comes from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
check() {	# check NAME WANT_STATUS CMD...
	name=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" = "$want" ]; then pass "$name"; else fail "$name" "exit $rc, want $want: $(tail -n 3 "$tmp/err")"; fi
}
samples() { grep -c -v '^#' "$1"; }

check export-runs 0 "$pagemap" export
cp "$tmp/out" "$tmp/plain.prom"
for fam in pagemap_group_rss_bytes pagemap_group_uss_bytes pagemap_group_swap_bytes pagemap_group_huge_bytes \
	pagemap_processes_skipped pagemap_series_dropped_total pagemap_scrape_duration_seconds \
	pagemap_longest_read_seconds pagemap_frames_visible; do
	if grep -q "^# TYPE $fam " "$tmp/plain.prom"; then pass "export-family-$fam"; else fail "export-family-$fam" "no TYPE line"; fi
done

# The slow tier: exact PSS, and as root what groups share with each other.
check export-pss 0 "$pagemap" export --pss
fams=pagemap_group_pss_bytes
[ "$(id -u)" = 0 ] && fams="$fams pagemap_group_shared_other_groups_bytes pagemap_physical_bytes"
for fam in $fams; do
	if grep -q "^# TYPE $fam " "$tmp/out"; then pass "export-pss-$fam"; else fail "export-pss-$fam" "no TYPE line"; fi
done

# A rule whose group name holds a quote and a backslash: escaped in the label value.
printf '# comment\n\nwe"ird\\name *\n' >"$tmp/rules"
check export-rules 0 "$pagemap" export --group-by rules --rules "$tmp/rules" --pss
cp "$tmp/out" "$tmp/rules.prom"
if grep -q 'group="we\\"ird\\\\name"' "$tmp/rules.prom"; then pass export-escaped; else fail export-escaped "$(grep -m1 ird "$tmp/rules.prom")"; fi

# The cap: every process its own group, at most 64 samples, the rest folded into "other" and counted.
check export-cap 0 "$pagemap" export --group-by pid --max-series 64
n=$(samples "$tmp/out")
if [ "$n" -le 64 ]; then pass export-cap-samples; else fail export-cap-samples "$n samples"; fi
if grep -q 'group="other"' "$tmp/out"; then pass export-cap-other; else fail export-cap-other "no other group"; fi
if grep -Eq '^pagemap_series_dropped_total [1-9]' "$tmp/out"; then pass export-cap-counted; else fail export-cap-counted "$(grep dropped_total "$tmp/out")"; fi
cp "$tmp/out" "$tmp/cap.prom"

if command -v promtool >/dev/null; then
	for f in plain rules cap; do
		if promtool check metrics <"$tmp/$f.prom" >"$tmp/lint" 2>&1; then pass "export-promtool-$f"
		else fail "export-promtool-$f" "$(head -n 5 "$tmp/lint")"; fi
	done
else
	echo "SKIP export-promtool: promtool is not installed (Debian's prometheus package has it)"
fi

# OpenMetrics: UNIT lines, counters' family without _total, # EOF last.
check export-openmetrics 0 "$pagemap" export --format openmetrics --pss
if [ "$(tail -n 1 "$tmp/out")" = "# EOF" ] && grep -q '^# UNIT pagemap_group_rss_bytes bytes$' "$tmp/out" &&
	grep -q '^# TYPE pagemap_series_dropped counter$' "$tmp/out"; then pass export-openmetrics-shape
else fail export-openmetrics-shape "$(grep -E 'EOF|UNIT pagemap_group_rss|TYPE pagemap_series' "$tmp/out")"; fi

# --textfile: the file is there, complete, and no .tmp is left.
mkdir "$tmp/tf"
check export-textfile 0 "$pagemap" export --textfile "$tmp/tf"
if [ -s "$tmp/tf/pagemap.prom" ] && [ ! -e "$tmp/tf/pagemap.prom.tmp" ] &&
	grep -q '^pagemap_scrape_duration_seconds ' "$tmp/tf/pagemap.prom"; then pass export-textfile-atomic
else fail export-textfile-atomic "$(ls "$tmp/tf")"; fi
check export-textfile-missing 1 "$pagemap" export --textfile "$tmp/nonexistent"

# Misuse and hostile rules files.
check export-bad-format 2 "$pagemap" export --format xml
check export-bad-group 2 "$pagemap" export --group-by host
check export-rules-alone 2 "$pagemap" export --rules "$tmp/rules"
check export-small-cap 2 "$pagemap" export --max-series 10
check export-bad-top 2 "$pagemap" export --top -3
check export-bad-budget 2 "$pagemap" export --budget 0
check export-extra-arg 2 "$pagemap" export 1234
check export-help 0 "$pagemap" export --help
printf 'onlyname\n' >"$tmp/r1"
printf 'a b c\n' >"$tmp/r2"
printf '# nothing\n\n' >"$tmp/r3"
printf 'a\000b *\n' >"$tmp/r4"
head -c 70000 /dev/zero | tr '\0' 'x' >"$tmp/r5"
awk 'BEGIN { for (i = 0; i < 300; i++) print "g" i " p" i }' >"$tmp/r6"
{ printf 'g '; head -c 300 /dev/zero | tr '\0' '*'; echo; } >"$tmp/r7"
for r in r1 r2 r3 r4 r5 r6 r7; do
	check "export-rules-hostile-$r" 1 "$pagemap" export --group-by rules --rules "$tmp/$r"
done
check export-rules-fifo 1 "$pagemap" export --group-by rules --rules /nonexistent/rules
