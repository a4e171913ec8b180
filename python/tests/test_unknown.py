"""test_unknown.py - what the kernel, privilege or back end cannot tell reads None, never 0: None exactly where
pagemap prints "-" (null in its JSON). Real processes: a child of known layout (test_live.Child) and this one."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import libpagemap as pm
from test_live import PAGE, Child

USAGE = pm.Usage.__match_args__
NEED_ENTRIES = 1 << 1	# PM_NEED_ENTRIES: PAGEMAP_SCAN tells the flag only when entries are read
FLAG_OF = {row[1]: row for row in pm.FLAGS}
# cache_stat()'s counts and the columns pagemap cache prints them in
CACHE_COLUMNS = {"cached": "cached", "dirty": "dirty", "writeback": "writeback", "evicted": "evicted",
                 "recently_evicted": "recent"}


@pytest.fixture
def child():
    c = Child()
    yield c
    c.close()


def scan_target(pid):
    """Target of PID walked by PAGEMAP_SCAN, whose categories tell no exclusive bit without entries."""
    if not pm.features().scan:
        pytest.skip("no PAGEMAP_SCAN here: the pread back end reads every entry, so nothing is left unknown")
    ctx = pm.Context()
    ctx.set_backend("scan")
    return ctx.open(pid)


def test_mapstat_without_entries_leaves_exclusive_unknown(child):
    t = scan_target(child.pid)
    (m, u), = [(m, u) for m, u in t.mapstat() if m.start == child.addr]
    assert u.exclusive is None and u.uffdwp is None	# was 0: the exclusive bit was never read
    assert u.present == child.smaps_rss() == child.pages // 2 * PAGE
    (m, u), = [(m, u) for m, u in t.mapstat(entries=True) if m.start == child.addr]
    assert u.exclusive == child.smaps_rss() and u.uffdwp == 0	# private, never forked: every page its own


def cli_rows(cli, pid, fields):
    out = subprocess.run([cli, "maps", "-J", "-b", "-o", "START," + ",".join(f.upper() for f in fields), str(pid)],
                         capture_output=True, text=True, check=True).stdout
    return {int(r["start"], 16): r for r in json.loads(out)["maps"]}


@pytest.mark.parametrize("entries", [False, True])
def test_mapstat_none_where_maps_prints_a_dash(child, pagemap_cli, entries):
    # The tool reads entries when a column shown needs them: without those columns it walks as entries=False.
    fields = [f for f in USAGE if entries or not FLAG_OF[f][6] & NEED_ENTRIES]
    cli = cli_rows(pagemap_cli, child.pid, fields)
    rows = pm.open(child.pid).mapstat(entries=entries)
    assert {m.start for m, u in rows} == set(cli)
    for m, u in rows:
        assert [f for f in fields if getattr(u, f) is None] == [f for f in fields if cli[m.start][f] is None], m
    (m, u), = [(m, u) for m, u in rows if m.start == child.addr]
    assert u.present == cli[m.start]["present"] == child.smaps_rss()


@pytest.mark.parametrize("entries", [False, True])
def test_vsyscall_and_vvar_are_unknown(entries):
    unread = [(m, u) for m, u in pm.open(0).mapstat(entries=entries) if m.kind in ("vsyscall", "vvar")]
    if not unread:
        pytest.skip("this process has neither [vsyscall] nor [vvar]")
    for m, u in unread:
        assert all(getattr(u, f) is None for f in USAGE), (m.path, u)	# were 0: never read


@pytest.mark.parametrize("backend", ["pread", "scan"])
def test_softdirty_unknown_without_config_mem_soft_dirty(child, backend):
    f = pm.features()
    if f.soft_dirty != "no":
        pytest.skip("this kernel tracks soft-dirty (soft_dirty %s)" % f.soft_dirty)
    if backend == "scan" and not f.scan:
        pytest.skip("no PAGEMAP_SCAN here")
    ctx = pm.Context()
    ctx.set_backend(backend)
    for entries in (False, True):
        rows = ctx.open(child.pid).mapstat(entries=entries)
        assert rows and all(u.softdirty is None for m, u in rows)	# were 0 (the bit never set)
        assert all(u.present is not None for m, u in rows if m.kind not in ("vsyscall", "vvar"))


def test_to_dataframe_keeps_unknown_apart(child):
    pandas = pytest.importorskip("pandas", reason="python3-pandas is not installed (optional: to_dataframe only)")
    t = scan_target(child.pid)
    runs = t.runs(child.addr, child.addr + child.pages * PAGE)
    assert not runs.known & int(pm.Flag.EXCLUSIVE)
    df = pm.to_dataframe(runs)	# a numpy record holds no None: a flag outside runs.known is NA, never False
    assert df["exclusive"].isna().all() and not df["present"].isna().any()
    assert int(df["bytes"][df["present"]].sum()) == child.smaps_rss()
    assert df["pfn"].isna().all()	# PAGEMAP_SCAN without entries reads no frame
    df = pm.to_dataframe(t.runs(child.addr, child.addr + child.pages * PAGE, entries=True))
    if t.pfn_view == "visible":	# a page not present has no frame: NA, not PFN 0
        assert df["pfn"][~df["present"]].isna().all() and df["pfn"][df["present"]].notna().all()
    ms = pm.to_dataframe(t.mapstat())
    row = ms[ms["start"] == child.addr].iloc[0]
    assert row["exclusive"] is pandas.NA and row["present"] == child.smaps_rss()
    assert all(str(ms[f].dtype) == "UInt64" for f in USAGE)	# bytes stay exact integers beside NA


def test_cache_stat_counts_mincore_cannot_tell_are_none(tmp_path, monkeypatch, pagemap_cli):
    p = tmp_path / "f"
    p.write_bytes(b"x" * (16 * PAGE))
    monkeypatch.setenv("PAGEMAP_CACHE", "mincore")	# the method of kernels before cachestat (6.5): cached only
    s = pm.Context().cache_stat(str(p))
    assert s["method"] == "mincore" and s["cached"] == 16 * PAGE
    assert [k for k in CACHE_COLUMNS if s[k] is None] == ["dirty", "writeback", "evicted", "recently_evicted"]
    row, = json.loads(subprocess.run([pagemap_cli, "cache", "-J", "-b", str(p)], capture_output=True, text=True,
                                     check=True).stdout)["cache"]
    assert {k: s[k] for k in CACHE_COLUMNS} == {k: row[c] for k, c in CACHE_COLUMNS.items()}
    monkeypatch.setenv("PAGEMAP_CACHE", "cachestat")
    s = pm.Context().cache_stat(str(p))
    assert s["method"] == "cachestat" and all(s[k] is not None for k in CACHE_COLUMNS)


@pytest.mark.parametrize("method", ["referenced", "idle"])
def test_wss_untracked_is_none_where_the_method_cannot_tell(child, pagemap_cli, method):
    t = pm.open(child.pid)
    try:
        w = t.wss(0.05, method=method)
    except pm.Unsupported as e:
        pytest.skip("no %s method here: %s" % (method, e))
    m, = [m for m in w["mappings"] if m["start"] == child.addr]
    if method == "referenced":	# clear_refs 1 has no untracked pages: it cannot tell, as wss prints "-"
        assert w["untracked"] is None and m["untracked"] is None	# were 0
    else:
        assert w["untracked"] is not None and m["untracked"] is not None
    total, = json.loads(subprocess.run([pagemap_cli, "wss", "-J", "-b", "-m", method, "-o", "MAPPING,UNTRACKED",
                                        str(child.pid), "0.05"], capture_output=True, text=True,
                                       check=True).stdout)["wss"]
    assert (total["untracked"] is None) == (w["untracked"] is None)


def test_numa_tier_unknown_without_memory_tiering(fixtures_dir, pagemap_cli, tmp_path):
    src, root = fixtures_dir("numa-2node"), str(tmp_path / "tree")
    os.mkdir(root)
    for name in os.listdir(src):	# proc holds pagemap files made whole (gigabytes, sparse): linked, never copied
        if name != "sys":
            os.symlink(os.path.join(src, name), os.path.join(root, name))
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(src, "sys")) for f in fs]
    assert sum(sizes) < 1 << 20
    shutil.copytree(os.path.join(src, "sys"), os.path.join(root, "sys"), symlinks=True)
    assert [n["tier"] for n in pm.Context(root).numa_nodes()] == [4, 22]
    shutil.rmtree(os.path.join(root, "sys", "devices", "virtual", "memory_tiering"))	# before Linux 6.1
    nodes = pm.Context(root).numa_nodes()
    cli = json.loads(subprocess.run([pagemap_cli, "--root", root, "numa", "-J"], capture_output=True, text=True,
                                    check=True).stdout)["nodes"]
    assert [n["tier"] for n in nodes] == [n["tier"] for n in cli] == [None, None]	# were -1


PRESENT, SWAP, GUARD = 1 << 63, 1 << 62, 1 << 58


def test_entry_fields_none_without_their_frame():
    assert pm.decode(PRESENT | 0x1234).pfn == 0x1234
    hidden = pm.decode(PRESENT | 0x1234, "current", False)	# a reader without CAP_SYS_ADMIN: no frame shown
    assert hidden.flags & pm.Flag.PRESENT and not hidden.flags & pm.Flag.FRAME
    assert hidden.pfn is None and hidden.swap_type is None and hidden.swap_offset is None	# pfn was 0
    swapped = pm.decode(SWAP | 0x10 << 5 | 3)
    assert (swapped.swap_type, swapped.swap_offset, swapped.pfn) == (3, 0x10, None)
    empty = pm.decode(0)
    assert (empty.pfn, empty.swap_type, empty.swap_offset) == (None, None, None)
    guard = pm.decode(SWAP | GUARD | 4 << 5 | 31)	# a guard marker: no swap slot, though its type field is 31
    assert guard.flags & pm.Flag.GUARD and (guard.swap_type, guard.swap_offset) == (None, None)


UNPRIVILEGED = r"""
import mmap, ctypes, libpagemap as pm
m = mmap.mmap(-1, mmap.PAGESIZE)
m[0] = 1
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
t = pm.open(0)
e, run = t.v2p(addr).entry, t.runs(addr, addr + mmap.PAGESIZE)[0]
print(t.pfn_view, e.flags & int(pm.Flag.PRESENT) != 0, e.pfn, run.pfn)
"""


def test_hidden_frame_is_none_for_an_unprivileged_reader(tmp_path):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to read as nobody")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pm.__file__)))
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                            "import libpagemap"], capture_output=True, env=env, cwd=str(tmp_path))
    if probe.returncode:
        pytest.skip("nobody cannot import the package from %s (a clone under a private directory)"
                    % env["PYTHONPATH"])
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                          UNPRIVILEGED], capture_output=True, text=True, check=True, env=env, cwd=str(tmp_path))
    view, present, pfn, run_pfn = out.stdout.split()
    if view != "hidden":
        pytest.skip("this kernel shows frames to unprivileged readers (pfn_view %s)" % view)
    assert (present, pfn, run_pfn) == ("True", "None", "None")	# were 0


def test_entry_flags_array_says_what_it_can_tell(child):
    t = pm.open(child.pid)
    flags = t.read(child.addr, child.pages).flags()	# numpy uint32: no None, so its known mask says
    f = pm.features()
    want = {pm.Flag.PRESENT, pm.Flag.SWAPPED, pm.Flag.FILE}
    if f.layout == "current":
        want.add(pm.Flag.EXCLUSIVE)
    assert all(flags.known & b for b in want)	# was 0: nothing said
    assert not flags.known & (pm.Flag.THP | pm.Flag.ZERO)	# only a walk tells them
    assert bool(flags.known & pm.Flag.SOFTDIRTY) == (f.soft_dirty != "no")
    assert bool(flags.known & pm.Flag.FRAME) == (t.pfn_view == "visible")
