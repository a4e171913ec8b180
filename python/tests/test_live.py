"""test_live.py - the running kernel: a child with a known layout (child.py) compared with its smaps, this
process's own pages, the write watch in this process and in another, sharing, v2p, and the GIL released."""
import json
import mmap
import os
import pwd
import signal
import subprocess
import sys
import threading
import time

import pytest

import libpagemap as pm

np = pytest.importorskip("numpy", reason="python3-numpy is missing")
PAGE = mmap.PAGESIZE


class Child:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "child.py")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        addr, pages = self.p.stdout.readline().split()
        self.addr, self.pages, self.pid = int(addr), int(pages), self.p.pid
        self.twins = []

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def smaps_rss(self, pid=None):
        """Rss of the child's mapping at addr, in bytes, from its smaps."""
        want = "%x-" % self.addr
        with open("/proc/%d/smaps" % (pid or self.pid)) as f:
            inside = False
            for line in f:
                if "-" in line.split()[0] and not line.startswith(("Rss", "Size")):
                    inside = line.startswith(want)
                elif inside and line.startswith("Rss:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("mapping not found")

    def close(self):
        for pid in self.twins:
            os.kill(pid, signal.SIGKILL)
        self.p.kill()
        self.p.wait()


@pytest.fixture
def child():
    c = Child()
    yield c
    c.close()


def test_child_runs_match_layout_and_smaps(child):
    t = pm.open(child.pid)
    runs = t.runs(child.addr, child.addr + child.pages * PAGE, entries=True)
    a = np.asarray(runs)
    present = (a["flags"] & int(pm.Flag.PRESENT)) != 0
    assert len(a) == child.pages and (a["end"] - a["start"] == PAGE).all()	# every page its own run
    assert list(present) == [i % 2 == 0 for i in range(child.pages)]
    assert int(((a["end"] - a["start"]) * present).sum()) == child.smaps_rss()
    assert all(runs.maps[i].start <= child.addr for i in a["map"])


def test_child_mapstat_and_entries(child):
    t = pm.open(child.pid)
    (m, u), = [(m, u) for m, u in t.mapstat() if m.start == child.addr]
    assert m.kind == "anon" and m.perms == "rw-p" and u.present == child.smaps_rss() == child.pages // 2 * PAGE
    # hugetlb is read by name only: a Mapping unpacks to the ten fields it always had
    assert m.hugetlb is False and len(m) == 10 and u.rss == u.present
    e = t.read(child.addr, child.pages)
    f = np.asarray(e.flags())
    assert list((f & int(pm.Flag.PRESENT)) != 0) == [i % 2 == 0 for i in range(child.pages)]


def test_child_account_matches_rollup(child):
    acc = pm.open(child.pid).account()
    with open("/proc/%d/smaps_rollup" % child.pid) as f:
        rollup = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in f if l.split()[-1] == "kB"}
    slack = 16 * PAGE	# the child's interpreter may touch a page between the two reads
    assert abs(acc.rss - rollup["Rss"]) <= slack
    assert abs(acc.uss - (rollup["Private_Clean"] + rollup["Private_Dirty"])) <= slack
    assert acc.source == ("pagemap" if pm.features().pfn_view == "visible" else "smaps_rollup")
    # PSS moves with the other processes mapping the same libraries: only RSS and USS are fixed
    (p, again), = pm.ps(pids=[child.pid])
    assert p.pid == child.pid and abs(again.rss - acc.rss) <= slack and abs(again.uss - acc.uss) <= slack


def test_gone_process_is_process_gone(child):
    t = pm.open(child.pid)
    child.p.kill()
    child.p.wait()
    with pytest.raises((pm.ProcessGone, pm.NoSuchProcess)) as ei:
        t.runs()
    assert isinstance(ei.value, OSError)


def test_self_v2p():
    buf = np.ones(4 * PAGE, dtype=np.uint8)
    t = pm.open(0)
    v = t.v2p(buf.ctypes.data)
    assert v.entry.flags & pm.Flag.PRESENT
    if t.pfn_view != "visible":
        assert v.phys is None
        return
    assert v.phys % PAGE == buf.ctypes.data % PAGE and v.phys // PAGE == v.entry.pfn
    if pm.features().kpageflags[0]:
        assert "anonymous" in v.kpage_names and v.kpagecount == 1


def test_features_rows_name_what_the_cli_names(pagemap_cli):
    import json
    f = pm.features()
    cli = json.loads(subprocess.run([pagemap_cli, "features", "-J"], capture_output=True, text=True, check=True).stdout)
    assert [r["feature"] for r in cli["features"]] == [r[0] for r in f.rows]
    assert f.layout == "current" and f.page_size == PAGE


def watched(method):
    try:
        return pm.watch(0, method)
    except pm.Unsupported as e:
        pytest.skip("%s cannot watch here: %s" % (method, e.what))


@pytest.mark.parametrize("method", ["auto", "uffd", "mprotect"])
def test_watch_self_reports_the_pages_written(method):
    m = mmap.mmap(-1, 16 * PAGE)
    m.madvise(mmap.MADV_NOHUGEPAGE)
    for i in range(16):
        m[i * PAGE] = 1
    a = np.frombuffer(m, dtype=np.uint8)
    base = a.ctypes.data
    with watched(method) as w:
        w.add(base, base + 16 * PAGE)
        assert len(w.collect()) == 0
        a[3 * PAGE] = 2
        a[7 * PAGE + 5] = 2
        a[8 * PAGE] = 2
        got = [(s - base, e - base) for s, e, huge in w.collect()]
        assert got == [(3 * PAGE, 4 * PAGE), (7 * PAGE, 9 * PAGE)], w.method
        assert len(w.collect()) == 0
        assert w.stats["collects"] == 3 and w.method != "auto" and w.reason
    del a
    m.close()


def test_watch_another_process(child):
    try:
        w = pm.watch(child.pid)
    except (pm.Unsupported, pm.AccessDenied) as e:
        pytest.skip("cannot watch another process here: %s" % e)
    with w:
        w.add(child.addr, child.addr + child.pages * PAGE)
        w.collect()
        assert child.ask("w 5") == "ok" and child.ask("w 6") == "ok"
        got = np.asarray(w.collect())
        assert [(int(r["start"]) - child.addr, int(r["end"]) - child.addr) for r in got] == [(5 * PAGE, 7 * PAGE)], w.method
        assert w.notice is None or "huge pages are left whole" in w.notice


def test_shared_with_a_copy_on_write_twin(child):
    if pm.open(0).pfn_view != "visible" or not pm.features().kpagecount[0]:
        pytest.skip("shared needs frame numbers and /proc/kpagecount (root)")
    twin = int(child.ask("fork"))
    child.twins.append(twin)
    s = pm.shared([child.pid, twin])
    pair = [p for p in s["pairs"] if p[1] == child.addr and p[3] == child.addr]
    assert pair and pair[0][4] == child.pages // 2 * PAGE
    assert s["total"].shared >= child.pages // 2 * PAGE


def reserve(size):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, size, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)	# PROT_NONE
    if addr in (None, ctypes.c_void_p(-1).value):
        pytest.skip("cannot reserve %d GiB of address space" % (size >> 30))
    return addr


def unreserve(addr, size):
    import ctypes
    libc = ctypes.CDLL(None)
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.munmap(addr, size)


def test_walks_release_the_gil():
    """Python code of another thread runs inside the time of one long read (no GIL held there)."""
    n = (64 << 30) // PAGE	# a 64 GiB PROT_NONE reservation (not accounted): 128 MiB of entries
    base = reserve(n * PAGE)
    t = pm.open(0)
    stamps = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            stamps.append(time.monotonic())

    th = threading.Thread(target=spin)
    th.start()
    try:
        for _ in range(5):
            t0 = time.monotonic()
            e = t.read(base, n)
            t1 = time.monotonic()
            if t1 - t0 > 0.03:
                break
        del e
    finally:
        stop.set()
        th.join()
        unreserve(base, n * PAGE)
    if t1 - t0 <= 0.03:
        pytest.skip("a read of 128 MiB of entries took under 30 ms: too short to tell")
    inside = [s for s in stamps if t0 + 0.01 < s < t1 - 0.01]
    assert inside, "no Python code ran during a %.0f ms read" % ((t1 - t0) * 1000)


def test_wss_of_a_child_touching_one_page(child):
    t = pm.open(child.pid)
    out = {}

    def measure():
        out["wss"] = t.wss(0.3)

    th = threading.Thread(target=measure)
    th.start()
    time.sleep(0.1)
    child.ask("w 4")	# inside the window
    th.join()
    w = out["wss"]
    m, = [m for m in w["mappings"] if m["start"] == child.addr]
    assert m["resident"] == child.pages // 2 * PAGE
    assert PAGE <= m["accessed"] <= m["resident"] and w["accessed"] <= w["resident"] and w["reason"]


def test_numa_bytes_match_the_walk(child):
    t = pm.open(child.pid)
    try:
        source, maps = t.numa()
    except pm.Unsupported as e:
        pytest.skip("no NUMA nodes here: %s" % e)
    (m, policy, nodes), = [(m, p, n) for m, p, n in maps if m.start == child.addr]
    assert sum(b[0] for b in nodes.values()) == child.pages // 2 * PAGE and source in ("frames", "move_pages", "numa_maps")
    assert {n["id"] for n in pm.Context().numa_nodes()} >= {k for k in nodes if k is not None}


def test_cache_stat_of_a_file_just_written(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * (16 * PAGE))
    try:
        s = pm.Context().cache_stat(str(p))
    except pm.Unsupported as e:
        pytest.skip("no cachestat here: %s" % e)
    assert s["size"] == 16 * PAGE and s["cached"] == 16 * PAGE and s["method"] in ("cachestat", "mincore")
    with pytest.raises(pm.NoSuchProcess):
        pm.Context().cache_stat(str(tmp_path / "missing"))


def test_to_dataframe(child):
    pytest.importorskip("pandas", reason="python3-pandas is not installed (optional: to_dataframe only)")
    t = pm.open(child.pid)
    df = pm.to_dataframe(t.runs(child.addr, child.addr + child.pages * PAGE))
    assert int(df["bytes"][df["present"]].sum()) == child.pages // 2 * PAGE and set(df["path"]) == {""}
    ms = pm.to_dataframe(t.mapstat())
    assert {"start", "path", "present", "exclusive"} <= set(ms.columns) and len(ms) == len(t.maps())


def test_write_snapshot_replays_the_child(child, tmp_path, pagemap_cli):
    path = str(tmp_path / "child.snap")
    pm.Context().write_snapshot(path, [child.pid])
    live = [(m, u) for m, u in pm.open(child.pid).mapstat(entries=True) if m.start == child.addr]
    ctx = pm.Context.from_snapshot(path)
    replayed = [(m, u) for m, u in ctx.open(child.pid).mapstat(entries=True) if m.start == child.addr]
    assert replayed == live and live[0][1].present == child.pages // 2 * PAGE
    out = subprocess.run([pagemap_cli, "--snapshot", path, "maps", "-J", "-b", str(child.pid)], capture_output=True,
                         text=True, check=True).stdout
    assert '"start": "%#x"' % child.addr in out.replace('"start":"', '"start": "')
    # The library records its owner's name (META users), as the CLI's snapshots do: a replay shows it, not a number.
    name = pwd.getpwuid(os.getuid()).pw_name
    user = subprocess.run([pagemap_cli, "--snapshot", path, "ps", "-n", "-r", "-o", "USER", "-p", str(child.pid)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert user == name
    with pytest.raises(ValueError):
        pm.Context().write_snapshot(path, [child.pid], pfn="scramble")


def test_snapshot_features_make_no_tree(child, tmp_path, pagemap_cli, monkeypatch):
    """features() of a replayed snapshot is answered from it: no tree of names is made under $TMPDIR (a command
    that lists the root makes one), and its rows are the tool's."""
    path = str(tmp_path / "child.snap")
    pm.Context().write_snapshot(path, [child.pid])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    ctx = pm.Context.from_snapshot(path)
    rows = ctx.features().rows
    assert os.listdir(scratch) == []
    out = subprocess.run([pagemap_cli, "--snapshot", path, "features", "-J"], capture_output=True, text=True,
                         check=True).stdout
    assert [(r["feature"], r["status"], r["detail"]) for r in next(iter(json.loads(out).values()))] == list(rows)


def test_kpage_read_of_this_process_frames():
    t = pm.open(0)
    if t.pfn_view != "visible" or not pm.features().kpageflags[0]:
        pytest.skip("kpageflags needs root and visible frame numbers")
    buf = np.ones(4 * PAGE, dtype=np.uint8)
    v = t.v2p(buf.ctypes.data)
    flags, counts, cgroups = pm.Context().kpage_read(v.entry.pfn, 1)
    assert np.asarray(flags)[0] == v.kpageflags and (counts is None or np.asarray(counts)[0] == v.kpagecount)
    assert flags.kind == "kpage" and flags.start == v.entry.pfn
