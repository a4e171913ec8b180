#!/bin/sh
# demo.sh - the README's first command, `make demo`, runs demo/run: it must show the demo process every time, also
# under load and also when the demo process dies before it is ready. Runs demo/run RUNS times (default 20) beside
# two busy loops and checks each exits 0 with the process's maps shown and no "invalid PID"; then a demo binary
# that exits at once must make demo/run fail within its bound, with one line saying so.
# Usage: tests/live/demo.sh [RUNS]   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
runs=${1:-20}
[ -x "$src/demo/run" ] && [ -x "$build/pagemap-demo" ] ||
	{ echo "SKIP demo: no demo/run or $build/pagemap-demo here (make all builds it)"; exit 77; }
work=$(mktemp -d) || exit 1
busy=
cleanup() {
	for p in $busy; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
for i in 1 2; do
	nice -n 19 sh -c 'while :; do :; done' &
	busy="$busy $!"
done

bad=0
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	timeout 60 "$src/demo/run" "$build" >"$work/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || grep -q 'invalid PID\|cannot open\|Illegal number' "$work/out" ||
	   ! grep -q '^demo process [0-9][0-9]*;' "$work/out" || ! grep -q '^\$ pagemap maps [0-9]' "$work/out"; then
		bad=$((bad + 1))
		[ "$bad" -eq 1 ] && cp "$work/out" "$work/first-bad"
	fi
done
if [ "$bad" -eq 0 ]; then
	echo "PASS demo-runs ($runs of $runs under two busy loops)"
else
	echo "FAIL demo-runs: $bad of $runs failed; the first: $(head -c 600 "$work/first-bad" | tr '\n' ' ')"
	fail=1
fi

# A demo process that dies before it is ready: demo/run says so and fails, within its bound, never spins.
mkdir "$work/b"
printf '#!/bin/sh\nexit 3\n' >"$work/b/pagemap-demo"
chmod +x "$work/b/pagemap-demo"
ln -s "$build/pagemap" "$work/b/pagemap"
timeout 30 "$src/demo/run" "$work/b" >"$work/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q 'exited before it was ready' "$work/out"; then
	echo "PASS demo-dies-early"
else
	echo "FAIL demo-dies-early: exit $rc (124: it spun until the timeout): $(head -c 300 "$work/out" | tr '\n' ' ')"
	fail=1
fi
exit "$fail"
