#!/bin/sh
# shellcheck shell=bash
# install.sh - make install and make uninstall as README says them:
#  1. as a user (uid 65534), PREFIX=HOME/.local: install succeeds writing nothing outside the prefix (bash
#     completion too), the tool runs, man finds and renders every page (the alias pages' .so too), and
#     make uninstall leaves no file under the prefix;
#  2. as root into a DESTDIR: the man page's example program builds with pkg-config and runs, and links
#     statically with pkg-config --static (libpagemap.a needs -lzstd); uninstall leaves no file;
#  3. as root into the system, PREFIX=/usr/local and no DESTDIR: the example built with pkg-config runs
#     without LD_LIBRARY_PATH (install ran ldconfig), and after uninstall the loader's cache no longer names
#     the library. This one runs in a private mount namespace whose /usr and /etc are overlays over
#     directories of this test: the real system is never written (not even by a Makefile that wrote outside
#     PREFIX, as BASHCOMPDIR did), and everything goes with the namespace.
# Usage: tests/live/install.sh   (root: setpriv, a DESTDIR of root's, mounts; PAGEMAP_SRC/BUILD from make)
# bash from here on; a machine without it (the QEMU guests' busybox) skips, rather than failing at the #! line
if [ -z "${BASH_VERSION:-}" ]; then
	command -v bash >/dev/null || { echo "SKIP install: no bash here"; exit 77; }
	exec bash "$0" "$@"
fi
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
[ "$(id -u)" = 0 ] || { echo "SKIP install: needs root (setpriv to a user, mounts)"; exit 77; }
[ -x "$build/pagemap" ] && [ -e "$build/libpagemap.a" ] ||
	{ echo "SKIP install: no build in $build (make all)"; exit 77; }
command -v pkg-config >/dev/null && command -v cc >/dev/null ||
	{ echo "SKIP install: no pkg-config or cc"; exit 77; }
command -v make >/dev/null && [ -f "$src/Makefile" ] ||
	{ echo "SKIP install: no make or no source tree at $src (a guest runs the built tests only)"; exit 77; }
# make install of another build directory: the variables make would be given. Under ASan (make SANITIZE=1
# check) the example links the sanitizers as the library does, and cannot be linked statically.
mkvars=() ccflags=() asan=
[ "$build" = "$src/build" ] || mkvars=(BUILD="$build")
if readelf -d "$build"/libpagemap.so.*.* 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	asan=1 mkvars+=(SANITIZE=1) ccflags=("-fsanitize=address,undefined")
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
fail=0
pass() { echo "PASS $1"; }
bad() { echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fail=1; }
# Files and links (not directories) under $1, one a line.
left() { find "$1" -mindepth 1 -not -type d 2>/dev/null | sort; }

# The example of libpagemap(3) EXAMPLES, as C: the first .EX block after the section, roff escapes undone.
sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' "$src/man/libpagemap.3" |
	sed -n '/^\.EX/,/^\.EE/{/^\.E[XE]/d;p}' | awk '/^\$ /{exit} {print}' |
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$tmp/present.c"
grep -q 'pm_walk_next' "$tmp/present.c" || bad example-extracted "no program in libpagemap(3) EXAMPLES"

# 1. A user's install into their home.
home=$tmp/home
mkdir "$home" && chown 65534:65534 "$home"
user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$home" PATH="$PATH" "$@"; }
if ! user test -r "$build/pagemap" -a -r "$src/Makefile" -a -x "$src/man"; then
	echo "SKIP user-install: uid 65534 cannot read $src or $build (a private clone): parts 2 and 3 only"
else
	user make -s -C "$src" "${mkvars[@]}" install PREFIX="$home/.local" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && [ -f "$home/.local/share/bash-completion/completions/pagemap" ]; then
		pass "user-install (PREFIX=HOME/.local, completion under it)"
	else
		bad "user-install: make install exited $rc" "$(tail -n 3 "$tmp/out")"
	fi
	if grep -q "^note: the loader does not search $home/.local/lib" "$tmp/out"; then
		pass user-install-says-ld-path
	else
		bad user-install-says-ld-path "$(tail -n 3 "$tmp/out")"
	fi
	if [ "$("$home/.local/bin/pagemap" --version 2>&1)" = "$("$build/pagemap" --version 2>&1)" ]; then
		pass user-install-tool-runs
	else
		bad user-install-tool-runs
	fi
	# libpagemap(3)'s way for a PREFIX the loader does not search: PKG_CONFIG_PATH, and an rpath from pagemap.pc.
	# shellcheck disable=SC2016
	if user env PKG_CONFIG_PATH="$home/.local/lib/pkgconfig" bash -c 'cc "$@" -o "$HOME/present" \
		"$HOME/../present.c" $(pkg-config --cflags --libs pagemap) \
		-Wl,-rpath,"$(pkg-config --variable=libdir pagemap)" && env -u LD_LIBRARY_PATH "$HOME/present"' \
		sh "${ccflags[@]}" >"$tmp/run" 2>&1 && grep -q ' bytes present (' "$tmp/run"; then
		pass "user-install-rpath-program: $(cat "$tmp/run")"
	else
		bad user-install-rpath-program "$(head -n 3 "$tmp/run")"
	fi
	rm -f "$home/present"
	# Every installed page renders through man, found by name under the prefix (an alias's .so resolved).
	pages=0 broken=''
	for f in "$home"/.local/share/man/man?/*; do
		[ -e "$f" ] || continue
		n=${f##*/}
		pages=$((pages + 1))
		err=$(user env MANPATH="$home/.local/share/man" MANWIDTH=80 man "${n##*.}" "${n%.*}" 2>&1 >"$tmp/page")
		[ -z "$err" ] && [ "$(wc -l <"$tmp/page")" -gt 5 ] || broken="$broken $n"
	done
	if [ "$pages" -gt 0 ] && [ -z "$broken" ]; then
		pass "user-install-man ($pages pages by name)"
	else
		bad "user-install-man: $pages pages; not rendered:$broken"
	fi
	user make -s -C "$src" "${mkvars[@]}" uninstall PREFIX="$home/.local" >"$tmp/out" 2>&1
	rc=$?
	rest=$(left "$home")
	if [ "$rc" = 0 ] && [ -z "$rest" ]; then
		pass user-uninstall-leaves-nothing
	else
		bad "user-uninstall: exited $rc; left:" $rest "$(tail -n 2 "$tmp/out")"
	fi
fi

# 2. Root into a DESTDIR: pkg-config from it (sysroot), the example shared and static.
dest=$tmp/dest
make -s -C "$src" "${mkvars[@]}" install DESTDIR="$dest" >"$tmp/out" 2>&1 || bad destdir-install "$(tail -n 3 "$tmp/out")"
pc() { PKG_CONFIG_PATH="$dest/usr/local/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config "$@"; }
# shellcheck disable=SC2046
if cc "${ccflags[@]}" -o "$tmp/present" "$tmp/present.c" $(pc --cflags --libs pagemap) 2>"$tmp/err" &&
   LD_LIBRARY_PATH="$dest/usr/local/lib" "$tmp/present" >"$tmp/run" 2>&1 && grep -q ' bytes present (' "$tmp/run"; then
	pass "destdir-pkg-config-shared: $(cat "$tmp/run")"
else
	bad destdir-pkg-config-shared "$(head -n 3 "$tmp/err" "$tmp/run" 2>/dev/null)"
fi
# shellcheck disable=SC2046
if [ -n "$asan" ]; then
	echo "SKIP destdir-pkg-config-static: an ASan build does not link statically"
elif cc -static -o "$tmp/present-static" "$tmp/present.c" $(pc --static --cflags --libs pagemap) 2>"$tmp/err" &&
   "$tmp/present-static" >"$tmp/run" 2>&1 && grep -q ' bytes present (' "$tmp/run"; then
	pass "destdir-pkg-config-static ($(pc --static --libs pagemap)): $(cat "$tmp/run")"
else
	bad destdir-pkg-config-static "$(grep -v 'warning:' "$tmp/err" | head -n 3)" "$(head -n 2 "$tmp/run")"
fi
make -s -C "$src" "${mkvars[@]}" uninstall DESTDIR="$dest" >"$tmp/out" 2>&1
rest=$(left "$dest")
[ -z "$rest" ] && pass destdir-uninstall-leaves-nothing || bad "destdir-uninstall: left:" $rest

# 3. Root into the system, inside a mount namespace of overlays (upper directories under $tmp).
if ! unshare -m --propagation private true 2>/dev/null; then
	echo "SKIP system-install: no private mount namespace here"
	exit $fail
fi
mkdir -p "$tmp"/ov/{etc,usr}/{u,w}
cp "$tmp/present.c" "$tmp/sys.c"
# shellcheck disable=SC2016
CCFLAGS="${ccflags[*]}" unshare -m --propagation private bash -c '
	tmp=$1; src=$2; shift 2
	mount -t overlay ov -o "lowerdir=/etc,upperdir=$tmp/ov/etc/u,workdir=$tmp/ov/etc/w" /etc || exit 9
	mount -t overlay ov -o "lowerdir=/usr,upperdir=$tmp/ov/usr/u,workdir=$tmp/ov/usr/w" /usr || exit 9
	make -s -C "$src" "$@" install >"$tmp/sys-install" 2>&1 || exit 3
	cc $CCFLAGS -o "$tmp/sys" "$tmp/sys.c" $(pkg-config --cflags --libs pagemap) 2>"$tmp/sys-err" || exit 4
	env -u LD_LIBRARY_PATH "$tmp/sys" >"$tmp/sys-run" 2>&1 || exit 5
	make -s -C "$src" "$@" uninstall >"$tmp/sys-uninstall" 2>&1 || exit 6
	ldconfig -p | grep -q libpagemap && exit 7
	find /usr/local/include/pagemap /usr/local/lib/libpagemap* /usr/local/bin/pagemap 2>/dev/null | grep -q . && exit 8
	exit 0' sh "$tmp" "$src" "${mkvars[@]}"
rc=$?
case $rc in
0) pass "system-install-runs-without-LD_LIBRARY_PATH: $(cat "$tmp/sys-run"); uninstall cleans the loader's cache" ;;
9) echo "SKIP system-install: overlay mounts refused here" ;;
3) bad "system-install: make install failed" "$(tail -n 3 "$tmp/sys-install")" ;;
4) bad "system-install: cc with pkg-config failed" "$(head -n 3 "$tmp/sys-err")" ;;
5) bad "system-install: the program does not run without LD_LIBRARY_PATH" "$(head -n 2 "$tmp/sys-run")" ;;
*) bad "system-install: uninstall step $rc failed (6 make, 7 ldconfig cache, 8 files left)" \
	"$(tail -n 3 "$tmp/sys-uninstall" 2>/dev/null)" ;;
esac
exit $fail
