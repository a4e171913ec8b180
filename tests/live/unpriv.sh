#!/bin/sh
# unpriv.sh - run the live tests as uid 65534 without capabilities (hidden PFNs, EACCES on root's processes), copying the binaries if that user cannot reach the build.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bins="test_unpriv test_walk"
uid=65534

skip() { echo "SKIP unpriv: $*"; exit 77; }

for b in $bins; do
	[ -x "$build/tests/live/$b" ] || skip "$build/tests/live/$b is not built (make test-programs)"
done
tmp=
cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	as_user="setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps=-all"
	# The binaries find libpagemap.so.0 at $ORIGIN/../..: copy that shape if uid 65534 cannot reach it here.
	if ! $as_user sh -c 'for b; do test -x "$b" || exit 1; done' sh \
		"$build/libpagemap.so.0" $(for b in $bins; do echo "$build/tests/live/$b"; done) 2>/dev/null; then
		tmp=$(mktemp -d /tmp/pagemap-unpriv.XXXXXX) || skip "cannot make a temp dir"
		mkdir -p "$tmp/tests/live" && cp -P "$build"/libpagemap.so* "$tmp/" &&
			for b in $bins; do cp "$build/tests/live/$b" "$tmp/tests/live/"; done &&
			chmod -R a+rX "$tmp" && chmod 755 "$tmp" || skip "cannot copy the binaries to $tmp"
		build=$tmp
	fi
else
	as_user=	# already unprivileged
fi

# The tests try (and must fail) to open this root-owned shell's pagemap.
export PAGEMAP_ROOT_PID=$$
log=$(mktemp /tmp/pagemap-unpriv-log.XXXXXX) || skip "cannot make a temp file"
trap 'rm -f "$log"; cleanup' EXIT
rc=0
for b in $bins; do
	$as_user "$build/tests/live/$b" >"$log" 2>&1 </dev/null
	r=$?
	# Prefix the result lines so that they stand apart from the same tests run as root.
	sed 's/^\(PASS\|FAIL\|SKIP\) /\1 unpriv:/' "$log"
	if [ "$r" -ne 0 ] && [ "$r" -ne 77 ]; then
		grep -q '^FAIL ' "$log" || echo "FAIL unpriv:$b: exited with status $r"
		rc=1
	fi
done
exit "$rc"
