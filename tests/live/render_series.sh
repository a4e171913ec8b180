#!/bin/sh
# render_series.sh - `pagemap render --series` on a stopped writer (python3 + ctypes): a 64-page mapping between
# PROT_NONE guards; snapshot 0 before any access, then between each two snapshots it writes a disjoint known set
# of pages it never touched. Each interval's cells over the mapping hold exactly its set under --what appeared and
# --what changed, and none under --what written (a first touch appears; pagemap diff counts WRITTEN only for pages
# present on both sides). The child is stopped (SIGSTOP) during every snapshot.
# Usage: tests/live/render_series.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
check="$src/tests/cli/render_check.py"
command -v python3 >/dev/null || { echo "SKIP render-series-live: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
writer=''
cleanup() {
	[ -n "$writer" ] && kill -9 "$writer" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/cmd"

# Reads lines of page numbers from the fifo, writes those pages, answers "done" in $work/acks.
python3 - "$work/cmd" >"$work/acks" <<'PY' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PG = os.sysconf("SC_PAGE_SIZE")
base = libc.mmap(None, 66 * PG, 3, 0x22, -1, 0)
libc.mprotect(base, PG, 0)
libc.mprotect(base + 65 * PG, PG, 0)
buf = (ctypes.c_char * (64 * PG)).from_address(base + PG)
print("%x" % (base + PG), flush=True)
with open(sys.argv[1]) as cmds:
    for line in cmds:
        for p in line.split():
            buf[int(p) * PG] = b"\x07"
        print("done", flush=True)
PY
writer=$!
exec 3>"$work/cmd"
acks=0
step() {	# step PAGES...: the writer writes them, then is stopped
	echo "$*" >&3
	acks=$((acks + 1))
	for _ in $(seq 100); do [ "$(grep -c "done" "$work/acks")" -ge $acks ] && break; sleep 0.05; done
	kill -STOP "$writer"
}
snap() {	# snap N: snapshot N of the stopped writer, then let it go on
	"$pagemap" snapshot -p "$writer" -o "$work/s$1.snap" >/dev/null 2>"$work/err" ||
		{ echo "FAIL render-series-live-snapshot: $(cat "$work/err")"; exit 1; }
	kill -CONT "$writer"
}
for _ in $(seq 100); do [ -s "$work/acks" ] && break; sleep 0.05; done
addr=$(head -1 "$work/acks")
[ -n "$addr" ] || { echo "FAIL render-series-live-setup: the writer did not start"; exit 1; }
kill -STOP "$writer"
snap 0
step 0 1 2 3 10 11
snap 1
step 40 63
snap 2
step 20 21 22 23 24 25 26 27 30
snap 3
pg() { printf '0x%x' $((0x$addr + $1 * 4096)); }
lo=$(pg 0) hi=$(pg 64)
s1="$(pg 0)-$(pg 4),$(pg 10)-$(pg 12)" s2="$(pg 40)-$(pg 41),$(pg 63)-$(pg 64)" s3="$(pg 20)-$(pg 28),$(pg 30)-$(pg 31)"
for w in "appeared:$s1;$s2;$s3" "changed:$s1;$s2;$s3" "written:;;"; do
	what=${w%%:*}
	"$pagemap" render --series --what "$what" "$work/s0.snap" "$work/s1.snap" "$work/s2.snap" "$work/s3.snap" \
		-f json >"$work/$what.json" 2>"$work/err" &&
		out=$(python3 "$check" series "$work/$what.json" "${w#*:}" "$lo" "$hi") &&
		echo "PASS render-series-live-$what ($out)" || echo "FAIL render-series-live-$what: $out $(cat "$work/err")"
done
exit 0
