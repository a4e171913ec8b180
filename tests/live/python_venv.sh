#!/bin/sh
# python_venv.sh - the README's Python lines: `make install-python` with a venv active (VIRTUAL_ENV and PATH set as
# `activate` sets them) installs into that venv, whichever Python made it: Debian's /usr/bin/python3 (python3-venv)
# and pyenv's, which has neither wheel nor an index to fetch it from (its own build would stop at "invalid command
# 'bdist_wheel'"). In each venv: import libpagemap comes from the venv, its extension is the one the kernel maps
# into that interpreter (/proc/self/maps, and the package's own mapstat), and Debian's python3 sees no new package.
# Without a venv the default is Debian's python3 and PYTHON=... names another (make -n: nothing is installed).
# Usage: tests/live/python_venv.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
if [ -f "$build/python/skip" ]; then
	echo "SKIP python-venv: $(cat "$build/python/skip")"
	exit 77
fi
for p in python3-dev python3-setuptools python3-wheel python3-venv; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		{ echo "SKIP python-venv: $p is not installed (make test-deps)"; exit 77; }
done
# Under SANITIZE the package is built from the plain objects (python-for-check links build/python/lib there):
# an ASan library cannot be loaded into python.
if [ -L "$build/python/lib" ]; then
	plain=$(readlink -f "$build/python/lib") && plain=${plain%/python/lib}
else
	plain=$build
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fail=0
# make as a user runs it: not as a sub-make of make check (its MAKEFLAGS would carry SANITIZE and the like).
pm_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u PYTHON -u PY_BUILD -u PYTHONPATH -u PYTHONHOME \
		"$@" make -s -C "$src" BUILD="$plain" install-python
}
system_has() {
	env -u PYTHONPATH /usr/bin/python3 -c 'import importlib.util as u; s = u.find_spec("libpagemap"); print(s.origin if s else "none")'
}
before=$(cd / && system_has)

# venv_case NAME PYTHON: a venv made by PYTHON, made active, then make install-python.
venv_case() {
	name=$1 py=$2 v=$work/$1
	if ! "$py" -m venv "$v" >"$work/out" 2>&1; then
		echo "SKIP python-venv-$name: $py -m venv failed: $(head -c 300 "$work/out" | tr '\n' ' ')"
		return
	fi
	if ! pm_make VIRTUAL_ENV="$v" PATH="$v/bin:$PATH" >"$work/out" 2>&1; then
		echo "FAIL python-venv-$name: make install-python in a venv of $py: $(tail -c 600 "$work/out" | tr '\n' ' ')"
		fail=1
		return
	fi
	# The interpreter the venv runs, from / so that no python/ directory is on its path.
	got=$(cd / && env -u PYTHONPATH "$v/bin/python" -c '
import os, sys, libpagemap
core = os.path.realpath(libpagemap._core.__file__)
maps = [l.split(None, 5)[-1].strip() for l in open("/proc/self/maps")]
seen = [m.path for m, u in libpagemap.open(0).mapstat() if m.path and os.path.realpath(m.path) == core]
print(os.path.realpath(libpagemap.__file__), core in maps, len(seen) > 0, "%d.%d" % sys.version_info[:2])
' 2>&1)
	set -f
	# shellcheck disable=SC2086	# four words: file, mapped in maps, mapped by mapstat, version
	set -- $got
	set +f
	case $1 in
	"$(readlink -f "$v")"/lib/python*/site-packages/libpagemap/__init__.py) ;;
	*)	echo "FAIL python-venv-$name: import libpagemap in the venv of $py: $got"; fail=1; return ;;
	esac
	if [ "$2" != True ] || [ "$3" != True ]; then
		echo "FAIL python-venv-$name: the venv's _core.abi3.so is not what /proc/self/maps ($2) and mapstat ($3) show mapped"
		fail=1
		return
	fi
	after=$(cd / && system_has)
	if [ "$after" != "$before" ]; then
		echo "FAIL python-venv-$name: Debian's python3 finds libpagemap at $after (before: $before)"
		fail=1
		return
	fi
	echo "PASS python-venv-$name (Python $4 from $py: $1, mapped)"
}

venv_case debian /usr/bin/python3

# pyenv's python3 (this machine's default python3 when pyenv is set up), and its newest Python if another.
pyenv=$(command -v pyenv)
[ -n "$pyenv" ] || [ ! -x "${PYENV_ROOT:-$HOME/.pyenv}/bin/pyenv" ] || pyenv=${PYENV_ROOT:-$HOME/.pyenv}/bin/pyenv
if [ -z "$pyenv" ]; then
	echo "SKIP python-venv-pyenv: no pyenv here"
else
	py=$("$pyenv" which python3 2>/dev/null)
	newest=
	for ver in $("$pyenv" versions --bare 2>/dev/null | sort -V); do
		case $ver in 3.1[1-9]*|3.[2-9][0-9]*) [ -x "$("$pyenv" root)/versions/$ver/bin/python3" ] &&
			newest=$("$pyenv" root)/versions/$ver/bin/python3 ;;
		esac
	done
	if [ -z "$py" ] || [ "$(readlink -f "$py")" = "$(readlink -f /usr/bin/python3)" ]; then
		echo "SKIP python-venv-pyenv: pyenv's python3 is Debian's (pyenv global system) or none"
	elif ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
		echo "SKIP python-venv-pyenv: pyenv's python3 ($py) is older than 3.11"
	else
		venv_case pyenv "$py"
	fi
	if [ -n "$newest" ] && [ "$(readlink -f "$newest")" != "$(readlink -f "$py")" ]; then
		venv_case pyenv-newest "$newest"
	else
		echo "SKIP python-venv-pyenv-newest: pyenv has no other Python from 3.11 on"
	fi
fi

# No venv: Debian's python3 (which refuses, PEP 668, without PIP_FLAGS=--break-system-packages); PYTHON=... wins
# over an active venv.
dry() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u PYTHON -u VIRTUAL_ENV ${venv:+VIRTUAL_ENV=$venv} \
		make -n -C "$src" BUILD="$plain" install-python "$@" 2>&1 | grep -- '-m pip install'
}
venv=
d=$(dry)
case " $d" in
*" /usr/bin/python3 -m pip install"*) echo "PASS python-venv-default (no venv: Debian's python3)" ;;
*)	echo "FAIL python-venv-default: without a venv make install-python runs: $d"; fail=1 ;;
esac
venv=/nonexistent/venv
d=$(dry PYTHON=/opt/other/python3)
case " $d" in
*" /opt/other/python3 -m pip install"*) echo "PASS python-venv-given (PYTHON=... over VIRTUAL_ENV)" ;;
*)	echo "FAIL python-venv-given: with PYTHON=/opt/other/python3 make install-python runs: $d"; fail=1 ;;
esac
exit "$fail"
