#!/bin/sh
# snapshot_grow.sh - the writer's buffers start at a small process's size and grow as a large one needs
# (lib/snapshot: the chunk buffer and word-stream columns double up to a chunk's limits, the pass's read
# and frame buffers follow the process's maps): a stopped process larger than every starting size
# (320 MiB written page by page, more words than one read and one chunk take; 64 MiB with every other
# page written, an extent a page; a forked child sharing both, whose frames are met again) replays as it
# reads live: pages, pages -J, maps and (as root) phys -p of the sparse part, byte for byte.
# Usage: tests/live/snapshot_grow.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
command -v python3 >/dev/null || { echo "SKIP snapshot-grow: no python3"; exit 77; }
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
[ "${avail:-0}" -ge 1024 ] || { echo "SKIP snapshot-grow: less than 1 GiB available (${avail} MiB)"; exit 77; }
work=$(mktemp -d) || exit 1
parent= child=
cleanup() {
	[ -n "$child" ] && kill -CONT "$child" 2>/dev/null && kill "$child" 2>/dev/null
	[ -n "$parent" ] && kill -CONT "$parent" 2>/dev/null && kill "$parent" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

python3 - >"$work/pids" <<'PY' &
import ctypes, mmap, os, time
def anon(size):
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return m, ctypes.addressof(ctypes.c_char.from_buffer(m))
dense, d0 = anon(320 << 20)
for off in range(0, 320 << 20, 4096):	# 81,920 pages: past a read's 65,536 words
    dense[off] = 1
sparse, s0 = anon(64 << 20)
for off in range(0, 64 << 20, 8192):	# every other page: 8,192 extents of one word
    sparse[off] = 2
pid = os.fork()
if pid == 0:
    sparse[4096 * 10] = 3	# the child's own copy of one page; the rest shared with the parent
    while True:
        time.sleep(1)
print(os.getpid(), pid, "0x%x-0x%x" % (d0, d0 + (320 << 20)), "0x%x-0x%x" % (s0, s0 + (64 << 20)),
      "0x%x" % d0, "0x%x" % s0, flush=True)
while True:
    time.sleep(1)
PY
parent=$!	# python3 may start slowly on a loaded machine: wait up to 60 s for its line
i=0
while [ ! -s "$work/pids" ] && [ $i -lt 300 ] && kill -0 "$parent" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
read -r parent child dense sparse daddr saddr <"$work/pids" || { echo "FAIL snapshot-grow: the target did not start"; exit 1; }
sleep 0.3	# the child's write
kill -STOP "$parent" "$child"

snap() { "$pagemap" snapshot -p "$parent,$child" -o "$work/s.pms" 2>"$work/err"; }
snap || { echo "FAIL snapshot-grow-write: $(cat "$work/err")"; exit 1; }
echo "PASS snapshot-grow-write ($(stat -c %s "$work/s.pms") bytes)"

# Only the targets' private anonymous memory is compared (other processes change the libraries' map counts
# meanwhile); the kernel may migrate a stopped process's pages (compaction): a difference is taken again
# with a fresh snapshot, twice at most.
filter=cat
same() {	# same NAME ARGS...
	name=$1
	shift
	for try in 1 2 3; do
		"$pagemap" "$@" 2>&1 | $filter >"$work/live"
		rl=$?
		"$pagemap" --snapshot "$work/s.pms" "$@" 2>&1 | $filter >"$work/replay"
		rs=$?
		{ [ $rl = $rs ] && cmp -s "$work/live" "$work/replay"; } && break
		[ $try = 3 ] && break
		echo "  snapshot-grow-$name: differs from the live system; snapshotting again (pages may have moved)"
		snap || break
	done
	if [ "$(wc -l <"$work/live")" -lt 2 ]; then
		echo "FAIL snapshot-grow-$name: no rows live:"
		head -n 5 "$work/live"
	elif [ $rl = $rs ] && cmp -s "$work/live" "$work/replay"; then
		echo "PASS snapshot-grow-$name ($(wc -l <"$work/live") lines)"
	else
		echo "FAIL snapshot-grow-$name: live (status $rl) and replay (status $rs) differ:"
		diff "$work/live" "$work/replay" | head -n 10
	fi
}
same pages pages "$parent" "$dense"
same pages-sparse pages "$parent" "$sparse"
same pages-child pages "$child" "$sparse"
same pages-json pages -J "$child" "$dense"
filter="grep -e ^START -e ^$daddr -e ^$saddr"
same maps maps -b -r -o START,END,SIZE,RSS,SWAPPED,EXCLUSIVE,PATH "$parent"
if [ "$(id -u)" = 0 ] && [ -r /proc/kpageflags ]; then
	# The sparse mapping only: over 81,920 dense pages some frame's LRU flags move meanwhile on a busy
	# machine (the live rows split where the replay's do not, with the writer of before as well).
	filter="tr i _"	# the idle flag (kpageflags bit 25), set by whoever runs idle page tracking
	same phys phys -p "$parent" "$sparse"
	same phys-child phys -p "$child" "$sparse"
else
	echo "SKIP snapshot-grow-phys: needs root (the frames' kpage words)"
fi
exit 0
