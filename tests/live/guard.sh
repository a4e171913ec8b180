#!/bin/sh
# guard.sh - a guard region's pages in `pagemap pages`: flag G (and M), and empty SWAPTYPE and
# SWAPOFF (null in JSON), as root and unprivileged (frames hidden). A guard marker is a
# swap-format entry whose type (31) and offset (4) name the marker's kind, not a swap slot.
# The child is a python3 process that writes 8 pages and installs guards on pages 2 and 3
# (MADV_GUARD_INSTALL, Linux 6.13; pagemap's guard bit, 6.15).
# Usage: tests/live/guard.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap=$build/pagemap
command -v python3 >/dev/null || { echo "SKIP guard: python3 is not installed"; exit 77; }
# The child's python: the system's, which any user may run (a pyenv shim under /root is not).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
work=$(mktemp -d) || exit 1
chmod 755 "$work"
child=
cleanup() {
	exec 3>&-
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
cat >"$work/child.py" <<'PY'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
ps = mmap.PAGESIZE
m = mmap.mmap(-1, 8 * ps, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
m.write(b"x" * (8 * ps))
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
if libc.madvise(addr + 2 * ps, 2 * ps, 102) != 0:	# MADV_GUARD_INSTALL
	print("error", os.strerror(ctypes.get_errno()).replace(" ", "_"), flush=True)
else:
	print(os.getpid(), "0x%x-0x%x" % (addr, addr + 8 * ps), "0x%x" % (addr + 2 * ps), flush=True)
sys.stdin.read()
PY
fail=0

# check WHO [RUN...]: start the child as WHO, read it as WHO; the guard row's swap cells must be empty.
check() {
	who=$1
	shift
	rm -f "$work/in" "$work/out"
	mkfifo "$work/in" && chmod 666 "$work/in" || exit 1
	"$@" "$py" "$work/child.py" <"$work/in" >"$work/out" 2>&1 &
	child=$!
	exec 3>"$work/in"
	tries=0
	while ! [ -s "$work/out" ]; do
		tries=$((tries + 1))
		if [ "$tries" -ge 400 ] || ! kill -0 "$child" 2>/dev/null; then
			echo "FAIL guard-$who: the child did not start: $(cat "$work/out")"
			fail=1
			return
		fi
		sleep 0.05
	done
	read -r pid range guard <"$work/out"
	if [ "$pid" = error ]; then
		echo "SKIP guard-$who: MADV_GUARD_INSTALL failed ($range):" \
		     "Linux $(uname -r) has no guard regions (6.13+)"
	elif ! "$@" "$pagemap" pages -r -o START,FLAGS,SWAPTYPE,SWAPOFF "$pid" "$range" >"$work/table" 2>&1; then
		echo "FAIL guard-$who: pagemap pages failed: $(tr '\n' ' ' <"$work/table")"
		fail=1
	else
		row=$(awk -v g="$guard" '$1 == g' "$work/table")
		case $(echo "$row" | awk '{ print $2 }') in
		*G*)
			# Raw output: empty cells are empty fields, so the row has two.
			if [ "$(echo "$row" | awk '{ print NF }')" = 2 ]; then
				echo "PASS guard-$who-cells ($row)"
			else
				echo "FAIL guard-$who-cells: the guard row is '$row'" \
				     "(a marker's type and offset are no swap slot)"
				fail=1
			fi
			"$@" "$pagemap" pages -J -o START,FLAGS,SWAPTYPE,SWAPOFF "$pid" "$range" \
				>"$work/json" 2>"$work/json.err"
			if python3 - "$work/json" "$guard" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["pages"] if r["start"] == sys.argv[2]]
assert rows and "G" in rows[0]["flags"], rows
assert rows[0]["swaptype"] is None and rows[0]["swapoff"] is None, rows
PY
			then
				echo "PASS guard-$who-json"
			else
				echo "FAIL guard-$who-json: $(tr '\n' ' ' <"$work/json" | head -c 600)"
				fail=1
			fi ;;
		*)
			echo "SKIP guard-$who: no guard row at $guard ($(tr '\n' ' ' <"$work/table")):" \
			     "Linux $(uname -r) has no pagemap guard bit (6.15+)" ;;
		esac
	fi
	exec 3>&-
	wait "$child" 2>/dev/null
	child=
}

check self
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	check nobody setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
else
	echo "SKIP guard-nobody: not root or no setpriv: no unprivileged child to read"
fi
exit "$fail"
