#!/bin/sh
# snapshot_mapcount.sh - a snapshot runs the page_mapcount probe (it maps a THP and forks) only when what it
# records depends on the answer: a frame of a large folio. Without one the record says page_mapcount=not-needed
# and a replayed `features` says so in words; with a THP it records the probe's answer, as live `features`
# gives it; live `features` is unchanged; snapshots written before (fixtures) replay as they always did.
# Usage: tests/live/snapshot_mapcount.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
here=$(cd "$(dirname "$0")" && pwd)
build=${PAGEMAP_BUILD:-$here/../../build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
fixtures=$here/../fixtures/audit-snapshots
work=$(mktemp -d) || exit 1
s='' t=''
cleanup() {
	[ -n "$s" ] && kill "$s" 2>/dev/null
	[ -n "$t" ] && kill "$t" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The page-mapcount row of `features` ("STATE WHY..."), live or of a snapshot.
row() { "$pagemap" ${1:+--snapshot "$1"} features 2>/dev/null | awk '$1 == "page-mapcount" { $1 = ""; sub(/^ +/, ""); print }'; }
# The page_mapcount line a snapshot recorded.
recorded() {
	rm -rf "$work/tree"
	"$pagemap" snapshot --to-tree "$work/tree" "$1" >/dev/null 2>&1 && grep '^page_mapcount=' "$work/tree/pagemap-features"
}
# Does process $1 map a page of a large folio (kpageflags H or T: compound head or tail)?
large() { "$pagemap" phys -p "$1" -n -o FLAGS 2>/dev/null | grep -q '[HT]'; }

live=$(row)
case $live in
yes*|no*|unknown*) echo "PASS mapcount-live-row ($live)" ;;
*) echo "FAIL mapcount-live-row: no page-mapcount row in live features: '$live'" ;;
esac

# Old snapshots (written with the probe always run) replay as before. The QEMU guests get the live tests and
# the tools, not tests/fixtures.
if [ ! -f "$fixtures/sub/kept.pms" ] || [ ! -f "$fixtures/hidden.pms" ]; then
	echo "SKIP mapcount-old-kept: no $fixtures here (a guest of the kernel matrix has no fixtures)"
	echo "SKIP mapcount-old-hidden: no fixtures here"
else
	r=$(row "$fixtures/sub/kept.pms")
	case $r in
	"yes each page of a large folio has its own map count"*) echo "PASS mapcount-old-kept" ;;
	*) echo "FAIL mapcount-old-kept: '$r'" ;;
	esac
	r=$(row "$fixtures/hidden.pms")
	if [ "$r" = "unknown not recorded by the capture" ]; then echo "PASS mapcount-old-hidden"
	else echo "FAIL mapcount-old-hidden: '$r'"; fi
fi

if [ "$(id -u)" != 0 ] || [ ! -r /proc/kpageflags ]; then
	echo "SKIP mapcount-sleep: not root (the probe and the frames' flags need root)"
	echo "SKIP mapcount-thp: not root"
	exit 0
fi
case $live in
*"every kernel before 6.15"*)
	echo "SKIP mapcount-sleep: a kernel before 6.15 counts per page without a probe ($live)"
	echo "SKIP mapcount-thp: a kernel before 6.15 counts per page without a probe"
	exit 0 ;;
esac

# A sleep: most often no large folio (unless its binary or libc sit in large page-cache folios).
sleep 100000 & s=$!
i=0
while [ "$(cat "/proc/$s/comm" 2>/dev/null)" != sleep ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$pagemap" snapshot -p "$s" -o "$work/s.pms" 2>"$work/err" || { echo "FAIL mapcount-sleep: $(cat "$work/err")"; exit 1; }
rec=$(recorded "$work/s.pms") r=$(row "$work/s.pms")
if large "$s"; then
	if [ "$rec" != page_mapcount=not-needed ] && [ "${r%% *}" = "${live%% *}" ]; then
		echo "PASS mapcount-sleep (it maps large folios: probed, $rec)"
	else echo "FAIL mapcount-sleep: it maps large folios, yet recorded '$rec', replays '$r' (live '$live')"; fi
else
	case $rec:$r in
	"page_mapcount=not-needed:unknown not probed: the snapshot holds no page of a large folio"*)
		echo "PASS mapcount-sleep (not probed, and said so)" ;;
	*) echo "FAIL mapcount-sleep: no large folio, recorded '$rec', replays '$r'" ;;
	esac
fi
[ "$(row)" = "$live" ] && echo "PASS mapcount-live-same" || echo "FAIL mapcount-live-same: '$(row)' against '$live'"

# A process with a THP: the probe runs and its answer is recorded, as live features gives it.
if grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
	echo "SKIP mapcount-thp: transparent_hugepage is never"
	exit 0
fi
[ -x "$build/tests/tools/pm-thp-hold" ] || { echo "SKIP mapcount-thp: pm-thp-hold is not built (make test-programs)"; exit 0; }
"$build/tests/tools/pm-thp-hold" >"$work/target.out" 2>&1 & t=$!
i=0
while ! grep -q ready "$work/target.out" 2>/dev/null && kill -0 "$t" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
if ! grep -q AnonHugePages:.*[1-9] "/proc/$t/smaps_rollup" 2>/dev/null; then
	echo "SKIP mapcount-thp: the target got no THP (memory fragmented?)"
	exit 0
fi
"$pagemap" snapshot -p "$t" -o "$work/t.pms" 2>"$work/err" || { echo "FAIL mapcount-thp: $(cat "$work/err")"; exit 1; }
rec=$(recorded "$work/t.pms") r=$(row "$work/t.pms")
if [ "$rec" != page_mapcount=not-needed ] && [ "${r%% *}" = "${live%% *}" ]; then echo "PASS mapcount-thp ($rec)"
else echo "FAIL mapcount-thp: recorded '$rec', replays '$r', live '$live'"; fi
exit 0
