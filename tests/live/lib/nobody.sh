# nobody.sh - sourced by live test scripts that run pagemap as uid 65534 (not a test of its own).
# shellcheck shell=sh

# nobody_pagemap PAGEMAP DIR: print a pagemap binary uid 65534 can run: PAGEMAP itself, or, for a build
# that user cannot reach (a clone under a 0700 directory, as `make check` from mktemp -d), a copy beside
# its library in DIR/nobody-bin, DIR made traversable. Returns non-zero if the copy fails.
nobody_pagemap() {
	if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$1"; then
		echo "$1"
		return 0
	fi
	mkdir -p "$2/nobody-bin" && cp -P "$1" "$(dirname "$1")"/libpagemap.so* "$2/nobody-bin/" &&
		chmod -R a+rX "$2/nobody-bin" && chmod o+x "$2" && echo "$2/nobody-bin/pagemap"
}
