#!/bin/sh
# unpriv.sh - run the live tests as uid 65534 without capabilities (hidden PFNs, EACCES on root's processes), copying the binaries if that user cannot reach the build.
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
# PAGEMAP_UNPRIV_BINS: another set (swap.sh runs its own tests through here too).
bins=${PAGEMAP_UNPRIV_BINS:-"test_unpriv test_walk test_watch"}
uid=65534

skip() { echo "SKIP unpriv: $*"; exit 77; }

for b in $bins; do
	[ -x "$build/tests/live/$b" ] || skip "$build/tests/live/$b is not built (make test-programs)"
done
tmp=
utmp=
cleanup() {
	[ -n "$tmp" ] && rm -rf "$tmp"
	[ -n "$utmp" ] && rm -rf "$utmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$(id -u)" -eq 0 ]; then
	# PAGEMAP_RUNAS: a helper doing the same (tests/vm/runas.c) where setpriv has no --reuid (busybox).
	if [ -n "${PAGEMAP_RUNAS:-}" ]; then
		as_user="$PAGEMAP_RUNAS $uid"
	else
		command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
		as_user="setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps=-all"
	fi
	# Dynamic binaries find libpagemap.so.0 at $ORIGIN/../..: copy that shape if uid 65534 cannot reach it here.
	lib=
	[ -e "$build/libpagemap.so.0" ] && lib=$build/libpagemap.so.0
	if ! $as_user sh -c 'for b; do test -x "$b" || exit 1; done' sh \
		$lib $(for b in $bins; do echo "$build/tests/live/$b"; done) 2>/dev/null; then
		tmp=$(mktemp -d /tmp/pagemap-unpriv.XXXXXX) || skip "cannot make a temp dir"
		mkdir -p "$tmp/tests/live" && { [ -z "$lib" ] || cp -P "$build"/libpagemap.so* "$tmp/"; } &&
			for b in $bins; do cp "$build/tests/live/$b" "$tmp/tests/live/"; done &&
			chmod -R a+rX "$tmp" && chmod 755 "$tmp" || skip "cannot copy the binaries to $tmp"
		build=$tmp
	fi
	# The tests make temp files: a TMPDIR of the user's own (a guest's /tmp may be root's and 0755).
	utmp=$(mktemp -d /tmp/pagemap-unpriv-tmp.XXXXXX) && chown "$uid:$uid" "$utmp" ||
		skip "cannot make a temp dir for uid $uid"
	export TMPDIR=$utmp
else
	as_user=	# already unprivileged
fi

# The tests try (and must fail) to open this root-owned shell's pagemap.
export PAGEMAP_ROOT_PID=$$
log=$(mktemp /tmp/pagemap-unpriv-log.XXXXXX) || skip "cannot make a temp file"
trap 'rm -f "$log"; cleanup' EXIT
rc=0
for b in $bins; do
	# test_watch: the cases that mean something without privilege (the rest ran as root).
	args=
	[ "$b" = test_watch ] && args="self_uffd self_mprotect remote_uffd remote_softdirty self_snapshot remote_snapshot snapshot_leaves_nothing populated_swap cli_track other_user_refused"
	# shellcheck disable=SC2086	# split into case names
	$as_user "$build/tests/live/$b" $args >"$log" 2>&1 </dev/null
	r=$?
	# Prefix the result lines so that they stand apart from the same tests run as root.
	sed "s/^\\(PASS\\|FAIL\\|SKIP\\) /\\1 ${PAGEMAP_UNPRIV_PREFIX:-unpriv}:/" "$log"
	if [ "$r" -ne 0 ] && [ "$r" -ne 77 ]; then
		grep -q '^FAIL ' "$log" || echo "FAIL unpriv:$b: exited with status $r"
		rc=1
	fi
done
exit "$rc"
