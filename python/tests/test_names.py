"""test_names.py - names the system gives (comm, mapping paths, cgroups) and paths the user gives may be any
bytes: they come to Python as str decoded as os.fsdecode does (surrogateescape, so os.fsencode gives the bytes
back), paths are taken as str, bytes or os.PathLike, and a bad byte never hides the real error behind a
UnicodeDecodeError or UnicodeEncodeError. Real processes and a real cgroup of our own, named b"\\xff"."""
import ctypes
import os
import signal
import subprocess
import sys

import pytest

import libpagemap as pm

BAD = b"\xff"

# A child that names itself b"\xff" (comm), maps a memfd so named, prints its PID and waits for stdin to close.
CHILD = r"""
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, b"\xff", 0, 0, 0)			# PR_SET_NAME
fd = os.memfd_create(b"\xff-memfd".decode("utf-8", "surrogateescape"))
os.ftruncate(fd, mmap.PAGESIZE)
m = mmap.mmap(fd, mmap.PAGESIZE)
m[0] = 1
print(os.getpid(), flush=True)
sys.stdin.read()
"""


@pytest.fixture
def named_child():
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        pid = int(p.stdout.readline())
        yield pid
    finally:
        p.kill()
        p.wait()


def test_comm_and_mapping_names_with_bad_bytes(named_child):
    procs = {p.pid: p for p in pm.Context().processes()}
    assert os.fsencode(procs[named_child].comm) == BAD
    (p, acc), = pm.ps(pids=[named_child])
    assert os.fsencode(p.comm) == BAD and acc.rss > 0
    paths = [os.fsencode(m.path) for m in pm.open(named_child).maps()]
    assert b"/memfd:\xff-memfd (deleted)" in paths


def memory_hierarchy():
    """(mount point, our cgroup path in it) of the hierarchy pm_memcg_of reads: v1 "memory" if mounted, else v2."""
    v1 = v2 = None
    with open("/proc/self/cgroup") as f:
        for line in f:
            num, ctrls, path = line.rstrip("\n").split(":", 2)
            if "memory" in ctrls.split(","):
                v1 = path
            elif num == "0" and not ctrls:
                v2 = path
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            fstype, opts = fields[sep + 1], fields[sep + 3].split(",")
            if fields[3] != "/":
                continue
            if v1 is not None and fstype == "cgroup" and "memory" in opts:
                return fields[4], v1
            if v1 is None and v2 is not None and fstype == "cgroup2":
                return fields[4], v2
    return None, None


def test_cgroup_with_bad_bytes(named_child):
    """ps(cgroup=...) works with a cgroup named b"\\xff" on the host (UnicodeEncodeError before), and finds it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a cgroup")
    mnt, mine = memory_hierarchy()
    if not mnt:
        pytest.skip("no memory cgroup hierarchy mounted here")
    name = b"pm-test-\xff-%d" % os.getpid()
    made, moved = None, False
    try:
        # under our own cgroup (its limits keep holding the child), else at the root (v2's no-internal-process rule)
        for parent in (os.fsencode(mine).rstrip(b"/"), b""):
            d = os.fsencode(mnt) + parent + b"/" + name
            try:
                os.mkdir(d)
                made = d
                with open(d + b"/cgroup.procs", "w") as f:
                    f.write(str(named_child))
                moved = True
                cg = parent + b"/" + name
                break
            except OSError:
                if made:
                    os.rmdir(made)
                    made = None
        if not moved:
            pytest.skip("cannot move a process into a new cgroup here")
        ctx = pm.Context()
        assert os.fsencode(ctx.memcg_of(named_child)) == cg
        everyone = pm.ps(cgroup="/", exact=False)
        assert named_child in [p.pid for p, a in everyone]
        for want in (cg, os.fsdecode(cg)):
            assert [p.pid for p, a in pm.ps(cgroup=want, exact=False)] == [named_child]
        assert pm.memcg_within(os.fsdecode(cg), "/") and pm.memcg_within(cg, os.fsencode(os.fsdecode(cg)))
    finally:
        if made:
            os.kill(named_child, signal.SIGKILL)
            # the child leaves the cgroup once reaped (the fixture waits too: waiting twice is harmless)
            try:
                os.waitpid(named_child, 0)
            except ChildProcessError:
                pass
            for _ in range(100):
                try:
                    os.rmdir(made)
                    break
                except OSError:
                    import time
                    time.sleep(0.05)


def test_paths_with_bad_bytes_keep_the_real_error(tmp_path):
    """from_snapshot(b"\\xff...") raises the open's error (UnicodeDecodeError before), str and bytes alike."""
    missing = os.fsencode(tmp_path) + b"/\xff-missing.pmsnap"
    for path in (missing, os.fsdecode(missing)):
        with pytest.raises(FileNotFoundError) as ei:
            pm.Context.from_snapshot(path)
        assert os.fsdecode(missing) in str(ei.value)
        with pytest.raises(FileNotFoundError):
            pm.Context().cache_stat(path)
        with pytest.raises(OSError) as ei:
            pm.Context(path)
        assert not isinstance(ei.value, UnicodeError)
    junk = os.fsencode(tmp_path) + b"/\xff-junk.pmsnap"
    with open(junk, "wb") as f:
        f.write(b"\xff" * 4096)
    with pytest.raises(pm.PagemapError) as ei:
        pm.Context.from_snapshot(junk)
    assert os.fsdecode(junk) in str(ei.value)


def test_replayed_tree_with_bad_bytes(fixtures_dir, tmp_path):
    """A replayed tree is anyone's bytes: a kernel release, a NUMA policy and a node's cpulist of b"\\xff"
    come as surrogate-escaped str (UnicodeDecodeError before), and the tree's own path may hold one too."""
    root = os.fsencode(tmp_path) + b"/tree-\xff"
    # hard links (cp -al): the tree's pagemap files are sparse and huge; a copy would fill the disk
    subprocess.run(["cp", "-al", os.fsencode(fixtures_dir("numa-2node")), root], check=True)
    try:
        check_tree(root)
    finally:
        import shutil
        shutil.rmtree(root)


def check_tree(root):

    def rewrite(path, data):	# a new file in place of the link: the shared fixture stays as it is
        os.unlink(path)
        with open(path, "wb") as f:
            f.write(data)

    rewrite(root + b"/proc/sys/kernel/osrelease", b"6.18.0-\xff\n")
    numa_maps = root + b"/proc/4242/numa_maps"
    with open(numa_maps, "rb") as f:
        lines = f.read().split(b"\n")
    first = lines[0].split(b" ")
    first[1] = b"bind:\xff"
    lines[0] = b" ".join(first)
    rewrite(numa_maps, b"\n".join(lines))
    cpulist = root + b"/sys/devices/system/node/node0/cpulist"
    if os.path.exists(cpulist):
        rewrite(cpulist, b"0-1\xff\n")
    ctx = pm.Context(root)
    assert os.fsencode(ctx.root) == root
    f = ctx.features()
    assert os.fsencode(f.kernel_release) == b"6.18.0-\xff"
    assert any("\udcff" in d for r in f.rows for d in r)
    ctx.numa_nodes()
    source, maps = ctx.open(4242).numa(source="numa_maps")
    assert "bind:\udcff" in [policy for m, policy, nodes in maps]

