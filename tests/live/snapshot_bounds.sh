#!/bin/sh
# snapshot_bounds.sh - replays are bounded: with $TMPDIR a 64 MiB tmpfs (a private mount namespace), hostile
# snapshots (a 2 GiB smaps claimed in 340 KB, 1 PiB of kpageflags claimed in 11 KB) fail at once with one line
# and write nothing there; within the limits, 2^40 frames claimed cost phys what is held, a 250 MiB smaps costs
# `maps` nothing; a real snapshot replays and leaves nothing; a replay killed by SIGKILL, alone or with its
# whole process group (timeout -s KILL), leaves no tree (`pages` makes none). QEMU guests (tests/vm) lack the crafting tool and
# python3: SKIP there.
# Usage: tests/live/snapshot_bounds.sh   (PAGEMAP_BUILD comes from make; root: mount needs it)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap="$build/pagemap"
tool="$build/tests/unit/test_snapshot_bounds"
n=snapshot-bounds

if [ -z "$SNAPSHOT_BOUNDS_INNER" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP $n: needs root (a tmpfs in a private mount namespace)"; exit 77; }
	[ -x "$tool" ] || { echo "SKIP $n: no $tool (make test-programs; not copied into a VM)"; exit 77; }
	command -v python3 >/dev/null || { echo "SKIP $n: no python3 (the target that fills a pipe)"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP $n: no unshare"; exit 77; }
	unshare -m true 2>/dev/null || { echo "SKIP $n: unshare -m refused"; exit 77; }
	SNAPSHOT_BOUNDS_INNER=1 exec unshare -m --propagation private sh "$0"
fi

work=$(mktemp -d) || exit 1
tmp="$work/tmpfs"
target= reader=
cleanup() {
	[ -n "$reader" ] && kill "$reader" 2>/dev/null
	[ -n "$target" ] && kill "$target" 2>/dev/null
	umount "$tmp" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fails=0
pass() { echo "PASS $n-$1"; }
fail() { echo "FAIL $n-$1"; fails=$((fails + 1)); }

mkdir "$tmp" && mount -t tmpfs -o size=64m,mode=1777 tmpfs "$tmp" || { echo "SKIP $n: cannot mount a tmpfs"; exit 77; }
empty() { [ -z "$(ls -A "$tmp")" ]; }
used_kib() { df -k "$tmp" | awk 'NR == 2 { print $3 }'; }

# The target: 64 MiB written, so that `pages` has more to say than a pipe holds (the SIGKILL cases below).
python3 -c 'import mmap, time
m = mmap.mmap(-1, 64 << 20)
for o in range(0, 64 << 20, 4096): m[o] = 1
print("ready", flush=True)
time.sleep(1000)' >"$work/ready" &
target=$!
i=0
while ! grep -q ready "$work/ready" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$pagemap" snapshot -p "$target" -o "$work/real.snap" 2>"$work/err" || { fail snapshot; cat "$work/err"; exit 1; }
"$pagemap" snapshot -p "$target" --pfn drop -o "$work/drop.snap" 2>"$work/err" || { fail snapshot; exit 1; }
"$tool" --claim "$work/drop.snap" "$work/smaps2g.snap" proc/1/smaps text 2147483648 2147483648 &&
"$tool" --claim "$work/drop.snap" "$work/smaps250m.snap" proc/1/smaps text 262144000 262144000 &&
"$tool" --claim "$work/drop.snap" "$work/kpage1p.snap" proc/kpageflags words 1125899906842624 0 ||
	{ fail craft; exit 1; }
# 2^40 frames (the limit) claimed, one held: drop's tree without its kpage*.errno, written back, then the claim
"$pagemap" snapshot --to-tree "$work/tree" "$work/drop.snap" && rm -f "$work"/tree/proc/kpage* &&
"$pagemap" snapshot --from-tree "$work/tree" -o "$work/nokpage.snap" &&
"$tool" --claim "$work/nokpage.snap" "$work/kpage8t.snap" proc/kpageflags words 8796093022208 0 || { fail craft; exit 1; }
export TMPDIR="$tmp"

# Hostile claims: one line, exit 1, nothing written. `timeout` only guards against the hang (phys walked 2^47
# frames before the fix); the outcome is the exit status and the message, not the time.
for c in "smaps2g maps $target" "smaps2g features" "kpage1p phys" "kpage1p maps $target"; do
	set -- $c
	f=$1
	shift
	timeout 300 "$pagemap" --snapshot "$work/$f.snap" "$@" >/dev/null 2>"$work/err"
	rc=$?
	case $f in
	smaps2g) want="proc/1/smaps claims 2147483648 bytes, over the 256 MiB a text file may hold" ;;
	kpage1p) want="proc/kpageflags claims 1125899906842624 bytes, over the 2^40 frames a machine can have" ;;
	esac
	if [ $rc = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -qF "$want" "$work/err" && empty; then
		pass "$f-$1"
	else
		fail "$f-$1"
		echo "  exit $rc, $(used_kib) KiB left in the tmpfs: $(head -c 300 "$work/err")"
	fi
done

# Within the limits: phys of 2^40 frames claimed and one held costs what is held (it walked them all, hours).
timeout 300 "$pagemap" --snapshot "$work/kpage8t.snap" phys -J >"$work/got" 2>"$work/err"
rc=$?
[ $rc = 0 ] && grep -q '"pages": *1099511627775' "$work/got" && empty && pass kpage8t-phys ||
	{ fail kpage8t-phys; echo "  exit $rc: $(head -c 300 "$work/err")"; }

timeout 300 "$pagemap" --snapshot "$work/kpage8t.snap" export --pss >"$work/got" 2>"$work/err"
rc=$?
[ $rc = 0 ] && grep -q 'pagemap_physical_bytes{class="other"} 4503599627366400' "$work/got" && empty &&
	pass kpage8t-export || { fail kpage8t-export; echo "  exit $rc: $(head -c 300 "$work/err")"; }

# Within the limits: 250 MiB of smaps nobody reads costs `maps` nothing in $TMPDIR, and the answer is the
# real snapshot's.
"$pagemap" --snapshot "$work/drop.snap" maps "$target" >"$work/want" 2>/dev/null
"$pagemap" --snapshot "$work/smaps250m.snap" maps "$target" >"$work/got" 2>"$work/err"
rc=$?
[ $rc = 0 ] && cmp -s "$work/want" "$work/got" && empty && pass smaps250m-maps ||
	{ fail smaps250m-maps; echo "  exit $rc: $(head -c 300 "$work/err")"; }

# A real snapshot: every command it answers leaves the tmpfs as it was.
ok=1
for c in "maps $target" "pages $target" "ps" "features" "phys"; do
	"$pagemap" --snapshot "$work/real.snap" $c >/dev/null 2>"$work/err" || { ok=0; echo "  $c: $(cat "$work/err")"; }
	empty || { ok=0; echo "  $c left: $(ls -A "$tmp")"; }
done
[ $ok = 1 ] && pass real-leaves-nothing || fail real-leaves-nothing

# SIGKILL while it runs: `pages` writes MiBs into a FIFO nobody reads, so it is blocked mid-replay when it is
# killed. It only opens files, which the snapshot's chunks answer: it makes no tree at all, then or before. (A
# replay that lists a directory makes its tree of names, and its keeper removes it if it is killed: the unit
# test t_replay_killed.)
mkfifo "$work/fifo"
sleep 1000 <"$work/fifo" &
reader=$!
"$pagemap" --snapshot "$work/real.snap" pages "$target" >"$work/fifo" 2>/dev/null &
pm=$!
i=0	# until it waits on the full pipe (64 MiB of pages is more than a pipe holds)
while ! grep -q pipe "/proc/$pm/wchan" 2>/dev/null && kill -0 $pm 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1)); done
had_tree=$(ls -A "$tmp")
kill -0 $pm 2>/dev/null && running=1 || running=0	# it must be killed mid-replay, not have ended
kill -KILL $pm 2>/dev/null
wait $pm 2>/dev/null
if [ $running = 1 ] && [ -z "$had_tree" ] && empty; then
	pass killed-leaves-nothing
else
	fail killed-leaves-nothing
	echo "  running when killed: $running; tree while running: '$had_tree'; left: '$(ls -A "$tmp")' ($(used_kib) KiB)"
fi

# The same killed with its whole process group: `timeout -s KILL` signals its group, which the keeper was in
# (it left the tree behind); the keeper has a session of its own now.
timeout -s KILL 3 "$pagemap" --snapshot "$work/real.snap" pages "$target" >"$work/fifo" 2>/dev/null
rc=$?
i=0
while ! empty && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if [ $rc = 137 ] && empty; then
	pass group-killed-leaves-nothing
else
	fail group-killed-leaves-nothing
	echo "  exit $rc (137: killed); left: '$(ls -A "$tmp")' ($(used_kib) KiB)"
fi
exit "$fails"
