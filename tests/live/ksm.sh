#!/bin/sh
# ksm.sh - run test_ksm with ksmd running and scanning fast, and always restore the saved KSM settings afterwards.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/tests/live/test_ksm
ksm=/sys/kernel/mm/ksm

skip() { echo "SKIP ksm: $*"; exit 77; }

# One run at a time: a second one would see this one's state as the system's (and restore it).
if command -v flock >/dev/null; then
	exec 9<"$0" && flock -w 120 9 || skip "another ksm.sh is still running"
fi

[ -x "$bin" ] || skip "$bin is not built (make test-programs)"
[ -w "$ksm/run" ] || skip "$ksm/run is missing or not writable (no CONFIG_KSM, or not root)"

saved_run=$(cat "$ksm/run") && saved_pages=$(cat "$ksm/pages_to_scan") &&
	saved_sleep=$(cat "$ksm/sleep_millisecs") || skip "cannot read $ksm settings"
pid=
restore() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	echo "$saved_pages" >"$ksm/pages_to_scan"
	echo "$saved_sleep" >"$ksm/sleep_millisecs"
	echo "$saved_run" >"$ksm/run" || echo "ksm.sh: cannot restore $ksm/run=$saved_run" >&2
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo 2000 >"$ksm/pages_to_scan" && echo 10 >"$ksm/sleep_millisecs" && echo 1 >"$ksm/run" ||
	skip "cannot start ksmd"

# In the background, so that a signal to this script runs the traps at once.
PAGEMAP_KSM_READY=1 "$bin" &
pid=$!
wait "$pid"
rc=$?
pid=
exit "$rc"
