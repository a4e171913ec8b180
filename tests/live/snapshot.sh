#!/bin/sh
# snapshot.sh - a stopped process with a known layout (python3: private anonymous memory, every other page
# written, a forked child sharing it copy-on-write) answers the same live and through `pagemap --snapshot`:
# maps, pages, ps, shared and (as root) phys -p, byte for byte.
# Usage: tests/live/snapshot.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP snapshot-live: no python3"; exit 77; }
work=$(mktemp -d) || exit 1
parent= child=
cleanup() {
	[ -n "$child" ] && kill -CONT "$child" 2>/dev/null && kill "$child" 2>/dev/null
	[ -n "$parent" ] && kill -CONT "$parent" 2>/dev/null && kill "$parent" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

python3 - >"$work/pids" <<'PY' &
import ctypes, mmap, os, sys, time
m = mmap.mmap(-1, 4 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
start = ctypes.addressof(ctypes.c_char.from_buffer(m))
for off in range(0, 4 << 20, 8192):	# every other page written: present and absent runs
    m[off] = 1
# 1 GiB with four pages written past its first 256 MiB: a snapshot reads a mostly empty mapping's words
# after its first 65536 by PAGEMAP_SCAN, and must not lose these (lib/snapshot/snapshot_proc.c pass_mapping).
big = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0x4000))
bstart = ctypes.addressof(ctypes.c_char.from_buffer(big))
for off in (300 << 20, (300 << 20) + 4096, 700 << 20, (1 << 30) - 4096):
    big[off] = 3
pid = os.fork()
if pid == 0:
    m[4096 * 10] = 2	# one page written after the fork: the child's own copy
    while True:
        time.sleep(1)
print(os.getpid(), pid, "0x%x-0x%x" % (start, start + (4 << 20)), "0x%x" % start,
      "0x%x-0x%x" % (bstart, bstart + (1 << 30)), flush=True)
while True:
    time.sleep(1)
PY
parent=$!	# python3 may start slowly on a loaded machine: wait up to 30 s for its line
i=0
while [ ! -s "$work/pids" ] && [ $i -lt 150 ] && kill -0 "$parent" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
read -r parent child range addr sparse <"$work/pids" || { echo "FAIL snapshot-live: the target did not start"; exit 1; }
sleep 0.3	# the child's write
kill -STOP "$parent" "$child"

if ! err=$("$pagemap" snapshot -p "$parent,$child" -o "$work/s.snap" 2>&1); then
	echo "FAIL snapshot-write: $err"
	exit 1
fi
echo "PASS snapshot-write"
mode=$(stat -c %a "$work/s.snap")
[ "$mode" = 600 ] && echo "PASS snapshot-mode" || echo "FAIL snapshot-mode: $mode, want 600"

# The targets are stopped, the rest of the system is not: other processes map and unmap the shared libraries
# (their map counts, so PSS and shared bytes of file pages, change) and idle page tracking may set the idle
# flag of any frame. So the comparisons stay on the targets' private anonymous memory, and FILTER (a command
# both outputs go through) drops what the live system changes meanwhile.
filter=cat
# The kernel may migrate a stopped process's pages too (compaction under memory pressure): a difference is
# taken again with a fresh snapshot, twice at most; one that persists is real.
same() {	# same NAME ARGS...: live and replayed output and status are identical
	name=$1
	shift
	for try in 1 2 3; do
		"$pagemap" "$@" 2>&1 | $filter >"$work/live.out"
		rl=$?
		"$pagemap" --snapshot "$work/s.snap" "$@" 2>&1 | $filter >"$work/snap.out"
		rs=$?
		{ [ $rl = $rs ] && cmp -s "$work/live.out" "$work/snap.out"; } && break
		[ $try = 3 ] && break
		echo "  snapshot-$name: differs from the live system; snapshotting again (pages may have moved)"
		"$pagemap" snapshot -p "$parent,$child" -o "$work/s.snap" >/dev/null 2>&1 || break
	done
	if [ "$(wc -l <"$work/live.out")" -lt 2 ]; then
		echo "FAIL snapshot-$name: no rows live:"
		cat "$work/live.out"
	elif [ $rl = $rs ] && cmp -s "$work/live.out" "$work/snap.out"; then
		echo "PASS snapshot-$name"
	else
		echo "FAIL snapshot-$name: exit $rs replayed, $rl live"
		diff -u "$work/live.out" "$work/snap.out" | head -20
	fi
}
filter="grep -e ^START -e ^$addr"
same maps maps -b -r -o START,END,PERMS,SIZE,RSS,SWAPPED,EXCLUSIVE,THP,PATH "$parent"
same maps-child maps -b -r --output-all "$child"
filter=cat
same pages pages "$parent" "$range"
same pages-json pages -J "$child" "$range"
same pages-sparse pages "$parent" "$sparse"
# USER: a replay shows UIDs, not this machine's names for them (as --root does); PSS and USS: see above.
same ps ps -b -p "$parent,$child" -o PID,COMMAND,RSS,SWAP,HUGETLB
same ps-exact ps --exact -b -p "$parent,$child" -o PID,COMMAND,RSS,SWAP,HUGETLB,SOURCE
filter="grep -e ^KIND -e $addr"	# OTHERS of the libraries' rows: see above
same shared shared "$parent" "$child"
if [ "$(id -u)" = 0 ]; then
	filter="tr i _"	# the idle flag (kpageflags bit 25), set by whoever runs idle page tracking
	same phys phys -p "$parent" "$range"
	same phys-child phys -p "$child" "$range"
else
	echo "SKIP snapshot-phys: not root (frames are hidden)"
fi

# --phys: the machine's /proc/meminfo and /proc/vmstat beside the whole frame files (text files of the tree, replayed
# as such); without it, neither.
if [ "$(id -u)" = 0 ]; then
	if ! err=$("$pagemap" snapshot -p "$parent" --phys -o "$work/phys.snap" 2>&1); then
		echo "FAIL snapshot-phys-context: $err"
	elif ! "$pagemap" snapshot --list "$work/phys.snap" | grep -q ' FILE .* proc/meminfo$' ||
		! "$pagemap" snapshot --list "$work/phys.snap" | grep -q ' FILE .* proc/vmstat$'; then
		echo "FAIL snapshot-phys-context: no proc/meminfo or proc/vmstat in the --phys snapshot"
	elif "$pagemap" snapshot --list "$work/s.snap" | grep -q -e ' proc/meminfo$' -e ' proc/vmstat$'; then
		echo "FAIL snapshot-phys-context: proc/meminfo or proc/vmstat without --phys"
	elif ! "$pagemap" --snapshot "$work/phys.snap" ps -p "$parent" -o PID >/dev/null 2>"$work/err"; then
		echo "FAIL snapshot-phys-context: the --phys snapshot does not replay: $(cat "$work/err")"
	else
		echo "PASS snapshot-phys-context"
	fi
else
	echo "SKIP snapshot-phys-context: not root (--phys needs the frame files)"
fi

# Where a second CPU is free, a thread reads the process's text files (smaps, numa_maps, cgroup...) and the
# machine's (the NUMA topology, the kernel release) ahead while the pagemap is read (lib/snapshot/snapshot_ahead.c):
# their opens come from that thread then, and from the caller with --one-thread or with one CPU to run on (taskset);
# the target's private anonymous mapping reads the same either way, and the machine's files are the same ones.
if ! command -v strace >/dev/null || ! command -v taskset >/dev/null; then
	echo "SKIP snapshot-ahead: needs strace and taskset"
elif [ "$(nproc)" -lt 2 ]; then
	echo "SKIP snapshot-ahead: one CPU to run on (nproc): no second thread to test"
else
	opener() {	# opener LOG: who opened smaps, numa_maps, cgroup, osrelease: "main" (the first pid strace logs) or "thread"
		awk 'NR == 1 { first = $1 } /\/(smaps|numa_maps|[0-9]+\/cgroup|osrelease)"/ && !/= -1 / {
			printf "%s ", ($1 == first ? "main" : "thread") }' "$1"
	}
	machine() {	# machine TREE: the machine's files it holds, and the kernel release
		(cd "$1" && find sys proc/sys proc/swaps -type f 2>/dev/null | sort && cat proc/sys/kernel/osrelease)
	}
	mapping() {	# mapping TREE: the target's private anonymous mapping in smaps, numa_maps, smaps_rollup
		awk -v a="${addr#0x}-" 'index($0, a) == 1 { on = 1; print; next } /^[0-9a-f]+-[0-9a-f]+ / { on = 0 } on' \
			"$1/proc/$parent/smaps"
		grep "^${addr#0x} " "$1/proc/$parent/numa_maps"
		grep "^Anonymous:" "$1/proc/$parent/smaps_rollup"
	}
	ok=yes
	for how in ahead one cpu0; do
		case $how in
		ahead) set -- "$pagemap" snapshot ;;
		one) set -- "$pagemap" snapshot --one-thread ;;
		cpu0) set -- taskset -c 0 "$pagemap" snapshot ;;
		esac
		# (LeakSanitizer cannot run under ptrace: an ASan build would end in its fatal error)
		LSAN_OPTIONS=detect_leaks=0 strace -f -e trace=openat -o "$work/$how.st" "$@" -p "$parent" \
			-o "$work/$how.snap" >/dev/null 2>&1 &&
			"$pagemap" snapshot --to-tree "$work/$how.tree" "$work/$how.snap" || { ok="$how: not written"; break; }
		# osrelease: once by the caller's features probe, then for the snapshot
		want="main main main main main "
		[ $how = ahead ] && want="main thread thread thread thread "
		[ "$(opener "$work/$how.st")" = "$want" ] || { ok="$how: opened by '$(opener "$work/$how.st")', want '$want'"; break; }
		mapping "$work/$how.tree" >"$work/$how.text"
		[ "$(wc -l <"$work/$how.text")" -ge 20 ] || { ok="$how: no mapping at $addr in its smaps"; break; }
		cmp -s "$work/ahead.text" "$work/$how.text" || { ok="$how: text differs: $(diff "$work/ahead.text" "$work/$how.text" | head -3)"; break; }
		machine "$work/$how.tree" >"$work/$how.machine"
		[ "$(wc -l <"$work/$how.machine")" -ge 4 ] || { ok="$how: machine files missing: $(tr '\n' ' ' <"$work/$how.machine")"; break; }
		cmp -s "$work/ahead.machine" "$work/$how.machine" ||
			{ ok="$how: machine files differ: $(diff "$work/ahead.machine" "$work/$how.machine" | head -3)"; break; }
	done
	[ "$ok" = yes ] && echo "PASS snapshot-ahead" || echo "FAIL snapshot-ahead: $ok"
fi

# --all as a user who may not read every process: the others are refused (EACCES), said so, and the
# snapshot is written with its own processes (a refused process failed the whole snapshot before).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && setpriv --help 2>&1 | grep -q -- --reuid; then
	mkdir "$work/u" && chown 65534 "$work/u" && chmod 700 "$work/u" && chmod 711 "$work"
	. "$(dirname "$0")/lib/nobody.sh"
	upm=$(nobody_pagemap "$pagemap" "$work")
	# (the shell and pagemap itself are that user's own processes, in the snapshot)
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "'$upm' snapshot --all -o '$work/u/all.snap'" \
		>"$work/u.out" 2>"$work/u.err"
	rc=$?
	if [ $rc = 0 ] && [ -s "$work/u/all.snap" ] && grep -q "refused reading, not in the snapshot: " "$work/u.err"; then
		echo "PASS snapshot-all-refused"
	else
		echo "FAIL snapshot-all-refused: exit $rc, stderr: $(head -n 3 "$work/u.err")"
	fi
else
	echo "SKIP snapshot-all-refused: needs root and util-linux setpriv"
fi
