"""test_pure.py - decoding, flag tables, errors and the array buffers, without a kernel behind them."""
import errno

import pytest

import libpagemap as pm

np = pytest.importorskip("numpy", reason="python3-numpy is missing: the zero-copy checks need it")


def test_decode_present_exclusive():
    e = pm.decode((1 << 63) | (1 << 56) | 0x1234)
    assert e.flags & pm.Flag.PRESENT and e.flags & pm.Flag.EXCLUSIVE and e.flags & pm.Flag.FRAME
    assert e.pfn == 0x1234 and e.raw == (1 << 63) | (1 << 56) | 0x1234


def test_decode_hidden_frames_and_swap():
    hidden = pm.decode((1 << 63) | 0x1234, "current", False)
    assert hidden.pfn is None and not hidden.flags & pm.Flag.FRAME
    swap = pm.decode((1 << 62) | (5 << 5) | 3)
    assert swap.flags & pm.Flag.SWAPPED and swap.swap_type == 3 and swap.swap_offset == 5


def test_decode_impossible_and_bad_layout():
    with pytest.raises(ValueError):
        pm.decode((1 << 63) | (1 << 62))	# present and swapped at once
    with pytest.raises(ValueError):
        pm.decode(0, "nonsense")
    with pytest.raises(TypeError):
        pm.decode(0, layout="current")
    with pytest.raises(OverflowError):
        pm.decode(-1)


def test_flag_table_is_the_librarys():
    names = [r[1] for r in pm.FLAGS]
    assert names[:3] == ["present", "swapped", "file"]
    for bit, name, letter, meaning, raw_bit, since, needs, cat in pm.FLAGS:
        assert pm.Flag[name.upper().replace("-", "_")] == bit
        assert len(letter) == 1 and meaning
    assert pm.flag_info("exclusive")[4] == 56
    assert pm.flags_letters(0) == "-" * len(pm.FLAGS)
    assert pm.flags_letters(int(pm.Flag.PRESENT))[0] == pm.flag_info("present")[2]


def test_kpf_table_and_describe():
    rows = pm.kpf_table()
    assert any(r[1] == "anonymous" for r in rows)
    assert "anonymous" in pm.kpf_describe(1 << 12)


def test_memcg_within():
    assert pm.memcg_within("/a/b", "/a") and not pm.memcg_within("/ab", "/a") and pm.memcg_within("/x", "/")


def test_errors_are_oserror_subclasses():
    e = pm._make_error(errno.ESRCH, "cannot walk process 5", "gone")
    assert isinstance(e, ProcessLookupError) and isinstance(e, pm.PagemapError) and e.errno == errno.ESRCH
    assert isinstance(pm._make_error(errno.EACCES, "x", "y"), PermissionError)
    assert isinstance(pm._make_error(errno.ENOENT, "x", "y"), FileNotFoundError)
    assert type(pm._make_error(errno.EIO, "x", "y")) is pm.PagemapError
    assert "cannot walk process 5" in str(e)


def test_no_such_process():
    with pytest.raises(pm.NoSuchProcess) as ei:
        pm.open(2 ** 22 + 12345)
    assert ei.value.errno == errno.ENOENT and "no such process" in ei.value.strerror


def test_arrays_are_zero_copy_and_read_only():
    t = pm.open(0)
    runs = t.runs()
    a = np.asarray(runs)
    b = np.frombuffer(runs, dtype=pm.run_dtype())
    assert a.dtype == pm.run_dtype() and len(a) == len(runs) > 0
    assert a.ctypes.data == b.ctypes.data and not a.flags.writeable and not a.flags.owndata
    m = memoryview(runs)
    assert m.readonly and m.itemsize == pm._core.RUN_ITEMSIZE and m.format == pm.RUN_FORMAT
    with pytest.raises(TypeError):
        memoryview(runs).cast("B")[0:1] = b"x"	# the view refuses writes
    r0 = runs[0]
    assert (r0.start, r0.end, r0.flags) == (int(a[0]["start"]), int(a[0]["end"]), int(a[0]["flags"]))
    assert r0.map is runs.maps[int(a[0]["map"])]
    with pytest.raises(IndexError):
        runs[len(runs)]
    with pytest.raises(TypeError):
        pm.Array()


def test_entries_buffer_and_flags():
    t = pm.open(0)
    buf = np.ones(1 << 16, dtype=np.uint8)	# 16 pages, written
    e = t.read(buf.ctypes.data, 4)
    raw = np.frombuffer(e, dtype=np.uint64)
    assert raw.ctypes.data == np.asarray(e).ctypes.data and len(raw) == 4
    assert all(int(x) >> 63 for x in raw)
    f = np.asarray(e.flags())
    assert f.dtype == np.uint32 and all(f & int(pm.Flag.PRESENT))
    assert t.decode(int(raw[0])).flags == int(f[0])
    out = np.zeros(4, dtype=np.uint64)
    assert t.read_into(buf.ctypes.data, out) == 4 and (out == raw).all()
    with pytest.raises(BufferError):
        t.read_into(0, bytes(32))	# not writable


def test_hostile_arguments():
    t = pm.open(0)
    with pytest.raises(MemoryError):
        t.read(0, 2 ** 62)
    with pytest.raises(pm.PagemapError) as ei:
        t.runs(1 << 20, 1 << 12)	# start > end
    assert ei.value.errno == errno.EINVAL
    with pytest.raises(OverflowError):
        t.read(-1, 1)
    assert len(t.read(0, 0)) == 0
    short = np.zeros(3, dtype=np.uint8)	# under one entry: nothing read
    assert t.read_into(0, short) == 0
    with pytest.raises(TypeError):
        pm.Target("not a context", 0)
    with pytest.raises(ValueError):
        pm.Context().set_backend("fast")
    t.close()
    t.close()
    with pytest.raises(ValueError):
        t.runs()
    w = pm.watch(0)
    w.close()
    with pytest.raises(ValueError):
        w.collect()
    with pytest.raises(ValueError):
        pm.watch(0, "telepathy")


def test_numpy_view_outlives_the_array():
    import gc
    runs = pm.open(0).runs()
    first = (runs[0].start, runs[0].end)
    a = np.asarray(runs)
    del runs
    gc.collect()
    assert (int(a[0]["start"]), int(a[0]["end"])) == first
