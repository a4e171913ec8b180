#!/bin/sh
# render_cgroup.sh - `pagemap render -c cgroup` told apart by two memory cgroups of the test's own: one child in
# each touches a known amount of anonymous memory; the legend bytes of each cgroup's path are that child's resident
# anonymous bytes (smaps_rollup Anonymous), and each child's cgroup is its own. The cgroups are removed on any exit.
# cgroup v2 with the memory controller enabled below the root (no controller is switched on here), else the v1
# memory hierarchy below this shell's own memory cgroup; skipped when neither is there or writable, or not root.
# Usage: tests/live/render_cgroup.sh   (PAGEMAP_BUILD and PAGEMAP_SRC come from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
skip() { echo "SKIP render-cgroup: $1"; exit 77; }
command -v python3 >/dev/null || skip "no python3"
[ "$(id -u)" = 0 ] || skip "not root (kpagecgroup needs it, and so does making cgroups)"

v2=/sys/fs/cgroup
if grep -qw memory "$v2/cgroup.controllers" 2>/dev/null && grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
	parent=$v2
else
	mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
	if [ -z "$mnt" ] || [ -z "$own" ]; then
		skip "no cgroup v2 with the memory controller enabled below the root, and no v1 memory hierarchy"
	fi
	parent=$mnt${own%/}
fi
work=$(mktemp -d) || exit 1
a='' b='' cga='' cgb=''
cleanup() {
	for p in $a $b; do kill -9 "$p" 2>/dev/null; done
	for p in $a $b; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
	for cg in $cga $cgb; do [ -d "$cg" ] && rmdir "$cg"; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
for x in a b; do	# each removed on exit once made
	mkdir "$parent/pagemap-test-$$-$x" 2>"$work/err" || skip "cannot make a cgroup in $parent: $(cat "$work/err")"
	eval "cg$x=\$parent/pagemap-test-\$\$-\$x"
done

# The child: joins its cgroup, then execs python, which writes MIB of anonymous memory and waits. Its every anonymous
# page is faulted after the exec, so charged to that cgroup. A first run outside warms the page cache, so that no
# file page is first read (and charged) by a child.
child='import signal, sys; b = b"\x01" * (int(sys.argv[1]) << 20); print("ready", flush=True); signal.pause()'
python3 -S -c 'import signal, sys; b = b"\x01" * (int(sys.argv[1]) << 20)' 1
start() {	# start CGROUP MIB: the PID, once the child wrote its memory
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$1/cgroup.procs" && exec python3 -S -c "$2" "$3"' sh "$1" "$child" "$2" >"$work/ready.$2" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q ready "$work/ready.$2" && break; sleep 0.05; done
	grep -q ready "$work/ready.$2" || {
		kill -9 "$pid"
		wait "$pid"
		echo "FAIL render-cgroup-setup: child of $1: $(cat "$work/ready.$2")" >&2
		exit 1
	}
	echo "$pid"
}
a=$(start "$cga" 8) || exit 1
b=$(start "$cgb" 24) || exit 1

for p in $a $b; do
	"$pagemap" render -c cgroup -f json "$p" >"$work/$p.json" 2>"$work/err" ||
		{ echo "FAIL render-cgroup-render: $(cat "$work/err")"; exit 1; }
	awk '/^Anonymous:/ { print $2 * 1024 }' "/proc/$p/smaps_rollup" >"$work/$p.anon"
done
out=$(python3 - "$work" "$a" "$b" "$cga" "$cgb" <<'PY'
import json, sys
work, pids, cgs = sys.argv[1], sys.argv[2:4], sys.argv[4:6]
said = []
for pid, cg, mib in zip(pids, cgs, (8, 24)):
    legend = json.load(open("%s/%s.json" % (work, pid)))["render"]["legend"]
    anon = int(open("%s/%s.anon" % (work, pid)).read())
    mine = [k for k in legend if k.endswith("/" + cg.rsplit("/", 1)[1])]
    other = [k for k in legend if "pagemap-test-" in k and k not in mine]
    assert len(mine) == 1, "process %s: no legend entry of its cgroup %s: %s" % (pid, cg, sorted(legend))
    assert not other, "process %s: pages charged to the other test cgroup: %s" % (pid, other)
    assert legend[mine[0]] == anon, "process %s: %s holds %d bytes, smaps_rollup Anonymous %d" % (
        pid, mine[0], legend[mine[0]], anon)
    assert anon >= mib << 20, "process %s: Anonymous %d, less than the %d MiB it wrote" % (pid, anon, mib)
    said.append("%s=%d" % (mine[0], anon))
print(" ".join(said))
PY
) && echo "PASS render-cgroup-two ($out)" || echo "FAIL render-cgroup-two: $out"
exit 0
