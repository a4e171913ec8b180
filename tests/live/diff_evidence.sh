#!/bin/sh
# diff_evidence.sh - `pagemap diff` counts WRITTEN only on evidence of a write, against real processes:
#  readers  two processes map one file read-only (MAP_SHARED, PROT_READ); snapshot the first, kill the second,
#           snapshot again: the first's pages gained the exclusive bit on the same frames (its map count
#           dropped), and nothing was written: WRITTEN 0, the mapping "same" (smaps: Shared_Clean then
#           Private_Clean, never dirty);
#  after    snapshot, fork, the parent rewrites 8 MiB, the child exits, snapshot: every page on another frame,
#           exclusive in both: frames alone cannot tell a write from a migration, so NEW_FRAME 8 MiB and
#           WRITTEN 0 (with soft-dirty cleared before A, soft-dirty tells: WRITTEN 8 MiB);
#  before   fork, snapshot (the pages shared: map count 2, smaps Shared), the parent rewrites, the child exits,
#           snapshot: a shared page now alone on a frame of its own is copy-on-write broken: WRITTEN 8 MiB;
# and `diff --pages` lists, page for page, what `render --diff` colours.
# Usage: tests/live/diff_evidence.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
command -v python3 >/dev/null || { echo "SKIP diff-evidence: no python3"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP diff-evidence: frames need root"; exit 77; }
work=$(mktemp -d) || exit 1
pids=
cleanup() {
	for p in $pids; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
MiB8=8388608

# actor MODE OUT [FILE]: a process that prints "PID ADDR [CHILD]" to OUT, then acts on SIGUSR1 and writes "done".
cat >"$work/actor.py" <<'PY'
import ctypes, mmap, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
mode, out = sys.argv[1], sys.argv[2]
N, PG, NOHUGEPAGE = 8 << 20, mmap.PAGESIZE, 15
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
def say(s):
    with open(out + ".tmp", "w") as f:
        f.write(s + "\n")
    os.rename(out + ".tmp", out)
def touch(m, val):
    for i in range(0, N, PG):
        m[i] = val
if mode == "reader":
    fd = os.open(sys.argv[3], os.O_RDONLY)
    m = mmap.mmap(fd, N, mmap.MAP_SHARED, mmap.PROT_READ)
    s = sum(m[i] for i in range(0, N, PG))	# every page mapped here
    say("%d" % os.getpid())
    while True:
        time.sleep(1)
m = mmap.mmap(-1, N, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
libc.madvise(base, N, NOHUGEPAGE)	# small pages: a THP copied at fork would be split, not the point here
touch(m, 1)
child = 0
def fork():
    pid = os.fork()
    if pid == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
        while True:
            time.sleep(1)
    return pid
if mode == "before":
    child = fork()
say("%d 0x%x %d" % (os.getpid(), base, child))
signal.sigwait([signal.SIGUSR1])
if mode == "after":
    child = fork()
touch(m, 2)				# the parent rewrites every page
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
say("done")
while True:
    time.sleep(1)
PY

wait_file() {	# wait_file FILE [WANT]: until FILE exists (and its first word is WANT), at most 30 s
	i=0
	while [ $i -lt 150 ]; do
		if [ -s "$1" ] && { [ -z "$2" ] || [ "$(cut -d' ' -f1 "$1")" = "$2" ]; }; then return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
snap() {	# snap PID FILE: a snapshot of the stopped process
	kill -STOP "$1"
	err=$("$pagemap" snapshot -p "$1" -o "$2" 2>&1)
	rc=$?
	kill -CONT "$1"
	[ $rc = 0 ] || { echo "FAIL diff-evidence: snapshot: $err"; exit 1; }
}
smaps_kb() {	# smaps_kb PID ADDR FIELD: FIELD of the mapping at hex ADDR, in kB
	awk -v a="${2#0x}" -v f="$3:" '$1 ~ /^[0-9a-f]+-/ { split($1, r, "-"); on = (r[1] == a) } on && $1 == f { print $2 }' \
		"/proc/$1/smaps"
}
row() {	# row JSON ADDR KEY: KEY of the diff row at ADDR ("" if no such row)
	python3 -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["diff"] if int(x["start"],16)==int(sys.argv[2],16)]
print(r[0][sys.argv[3]] if r else "")' "$1" "$2" "$3"
}

# --- readers: the exclusive bit gained on the same frames is no write ---
head -c $MiB8 /dev/urandom >"$work/file" && sync "$work/file"	# clean in the page cache: smaps tells dirty apart
python3 "$work/actor.py" reader "$work/r1" "$work/file" &
r1=$!
python3 "$work/actor.py" reader "$work/r2" "$work/file" &
r2=$!
pids="$r1 $r2"
wait_file "$work/r1" && wait_file "$work/r2" || { echo "FAIL diff-evidence-readers: the readers did not start"; exit 1; }
start=$(awk -v f="$work/file" '$NF == f { split($1, r, "-"); print "0x" r[1]; exit }' "/proc/$r1/maps")
shared_a=$(smaps_kb "$r1" "$start" Shared_Clean)
snap "$r1" "$work/ra.snap"
kill -KILL "$r2"
wait "$r2" 2>/dev/null
priv_b=$(smaps_kb "$r1" "$start" Private_Clean)
dirty=$(($(smaps_kb "$r1" "$start" Private_Dirty) + $(smaps_kb "$r1" "$start" Shared_Dirty)))
snap "$r1" "$work/rb.snap"
"$pagemap" diff -J --all -p "$r1" "$work/ra.snap" "$work/rb.snap" >"$work/r.json"
written=$(row "$work/r.json" "$start" written) state=$(row "$work/r.json" "$start" mapping)
if [ "$shared_a" != 8192 ] || [ "$priv_b" != 8192 ]; then
	echo "SKIP diff-evidence-readers: smaps Shared_Clean ${shared_a} kB then Private_Clean ${priv_b} kB, not 8192 both"
elif [ "$written" = 0 ] && [ "$state" = same ] && [ "$dirty" = 0 ]; then
	echo "PASS diff-evidence-readers (smaps Shared_Clean 8192 kB, then Private_Clean 8192 kB, dirty 0; WRITTEN 0, same)"
else
	echo "FAIL diff-evidence-readers: WRITTEN $written, MAPPING $state (smaps dirty $dirty kB): want 0, same"
fi
# render --diff colours those pages as diff --pages lists them: not written
"$pagemap" diff --pages -J -p "$r1" "$work/ra.snap" "$work/rb.snap" >"$work/pages.json"
"$pagemap" render --diff "$work/ra.snap" "$work/rb.snap" "$r1" -f json >"$work/render.json" 2>"$work/err"
out=$(python3 "$src/tests/cli/render_check.py" diff-pages "$work/render.json" "$work/pages.json") &&
	echo "PASS diff-evidence-readers-render ($out)" || echo "FAIL diff-evidence-readers-render: $out $(cat "$work/err")"
kill "$r1" 2>/dev/null
pids=

# --- fork: MODE [softdirty] ---
fork_case() {	# fork_case MODE NAME CLEAR WANT_WRITTEN WANT_NEW_FRAME
	rm -f "$work/f"
	python3 "$work/actor.py" "$1" "$work/f" &
	p=$!
	pids=$p
	wait_file "$work/f" || { echo "FAIL diff-evidence-$2: the process did not start"; return; }
	read -r p m child <"$work/f"
	[ "$3" = clear ] && echo 4 >"/proc/$p/clear_refs"
	shared=$(smaps_kb "$p" "$m" Shared_Dirty)
	snap "$p" "$work/$2-a.snap"
	kill -USR1 "$p"
	wait_file "$work/f" done || { echo "FAIL diff-evidence-$2: the process did not rewrite"; return; }
	snap "$p" "$work/$2-b.snap"
	"$pagemap" diff -J -p "$p" "$work/$2-a.snap" "$work/$2-b.snap" >"$work/$2.json"
	w=$(row "$work/$2.json" "$m" written) n=$(row "$work/$2.json" "$m" new_frame)
	if [ "$w" = "$4" ] && [ "$n" = "$5" ]; then
		echo "PASS diff-evidence-$2 (smaps Shared_Dirty in A ${shared} kB; WRITTEN $w, NEW_FRAME $n)"
	else
		echo "FAIL diff-evidence-$2: WRITTEN '$w', NEW_FRAME '$n'; want $4, $5 (smaps Shared_Dirty in A ${shared} kB)"
	fi
	if [ "$2" = before ]; then	# which pages: diff --pages equals render --diff's cells, page for page
		"$pagemap" diff --pages -J -p "$p" "$work/$2-a.snap" "$work/$2-b.snap" >"$work/pages.json"
		"$pagemap" render --diff "$work/$2-a.snap" "$work/$2-b.snap" "$p" -f json >"$work/render.json" 2>"$work/err"
		out=$(python3 "$src/tests/cli/render_check.py" diff-pages "$work/render.json" "$work/pages.json") &&
			echo "PASS diff-evidence-pages-render ($out)" || echo "FAIL diff-evidence-pages-render: $out $(cat "$work/err")"
	fi
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	pids=
}
fork_case after after noclear 0 $MiB8
fork_case before before noclear $MiB8 0
if "$pagemap" features 2>/dev/null | grep -q '^soft-dirty *yes'; then
	fork_case after after-softdirty clear $MiB8 0
else
	echo "SKIP diff-evidence-after-softdirty: the kernel has no soft-dirty bit (CONFIG_MEM_SOFT_DIRTY)"
fi
exit 0
