"""test_misuse.py - the package never crashes the interpreter: use after close, close from another thread during
a call that runs without the GIL, out-of-range numbers, huge counts, absurd intervals, duplicate and non-integer
PIDs, Ctrl-C during a long call. What could kill the interpreter runs in a child Python under faulthandler, so a
SIGSEGV fails the test (with its traceback) instead of ending pytest."""
import math
import mmap
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import libpagemap as pm

PAGE = mmap.PAGESIZE


def run_child(code, timeout=120, hang=None, **kw):
    """Run CODE in a child Python with faulthandler on; return the CompletedProcess (text). A child still running
    after TIMEOUT seconds is killed and the test fails (HANG says why that matters): a hang never stalls CI."""
    prog = "import faulthandler, os, sys\nfaulthandler.enable()\nimport libpagemap as pm\n" + textwrap.dedent(code)
    try:
        return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        pytest.fail("%s (the child was killed after %g s; its output: %r)"
                    % (hang or "the child hung", timeout, out[-2000:]))


def assert_clean(p):
    assert p.returncode == 0, "child failed (status %d):\n%s%s" % (p.returncode, p.stdout, p.stderr)


def test_flags_after_close():
    """An Array of entries decodes after its Target is closed, also after a with block (SIGSEGV before)."""
    p = run_child("""
        import mmap
        m = mmap.mmap(-1, 4 * mmap.PAGESIZE)
        m[0] = 1
        import ctypes
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        with pm.open() as t:
            a = t.read(addr, 4)
        f = a.flags()
        assert len(f) == 4 and f[0] & int(pm.Flag.PRESENT), list(f)
        t = pm.open()
        b = t.read(addr, 4)
        t.close()
        del t
        assert list(b.flags()) == list(f)
        print("ok")
    """)
    assert_clean(p)
    assert p.stdout.strip() == "ok"


def test_closed_target_raises_value_error():
    t = pm.open()
    t.close()
    for call in (t.maps, t.runs, t.mapstat, t.account, lambda: t.read(0, 1), lambda: t.v2p(0),
                 lambda: t.wss(0.0), t.numa, lambda: t.decode(0)):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_close_from_another_thread_during_runs():
    """close() while runs() runs without the GIL: the call ends or fails cleanly, 0 crashes of 40."""
    p = run_child("""
        import threading, time
        fds = lambda: len(os.listdir("/proc/self/fd"))
        pm.open().close()		# the default context's own files, once
        base = fds()
        for i in range(40):
            t = pm.open()
            out = []
            def walk():
                try:
                    for _ in range(20):
                        t.runs(entries=True)
                    out.append("done")
                except ValueError as e:
                    out.append(str(e))
            th = threading.Thread(target=walk)
            th.start()
            time.sleep(0.001 * (i % 7))
            t.close()
            th.join()
            assert out and (out[0] == "done" or "closed" in out[0]), out
            # the close deferred while runs() ran happened when it returned: no handle left open
            assert t.pid == -1 and fds() == base, (t.pid, fds(), base)
            try:
                t.maps()
                raise AssertionError("maps() after close")
            except ValueError:
                pass
        print("runs ok")
    """, timeout=120)
    assert_clean(p)
    assert p.stdout.strip() == "runs ok"


def test_close_from_another_thread_during_collect():
    """close() while collect() runs without the GIL: the call ends or fails cleanly, 0 crashes of 40."""
    p = run_child("""
        import threading, time
        m = __import__("mmap").mmap(-1, 256 * 4096)
        fds = lambda: len(os.listdir("/proc/self/fd"))
        base = fds()
        for i in range(40):
            try:
                w = pm.watch(0)
            except pm.PagemapError as e:
                print("skip watch:", e)
                break
            w.add_writable()
            out = []
            def collect():
                try:
                    for _ in range(50):
                        m[(_ % 256) * 4096] = 1
                        w.collect()
                    out.append("done")
                except ValueError as e:
                    out.append(str(e))
            th = threading.Thread(target=collect)
            th.start()
            time.sleep(0.001 * (i % 7))
            w.close()
            th.join()
            assert out and (out[0] == "done" or "closed" in out[0]), out
            # the close deferred while collect() ran happened when it returned: its files are closed
            assert fds() == base, (fds(), base)
            try:
                w.collect()
                raise AssertionError("collect() after close")
            except ValueError:
                pass
        else:
            print("collect ok")
    """, timeout=120)
    if p.stdout.startswith("skip"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)
    assert p.stdout.strip() == "collect ok"


def test_pids_are_range_checked():
    """A PID past pid_t is refused, never truncated to another process (2**32 + P opened P; 2**40 the caller)."""
    me = os.getpid()
    for bad in (2 ** 32 + me, 2 ** 40, 2 ** 63, 2 ** 64 + me):
        with pytest.raises(OverflowError):
            pm.open(bad)
        with pytest.raises(OverflowError):
            pm.watch(bad)
        with pytest.raises(OverflowError):
            pm.Context().memcg_of(bad)
        with pytest.raises(OverflowError):
            pm.Context().proc_state(bad)
        with pytest.raises(OverflowError):
            pm.shared([bad])
        with pytest.raises(OverflowError):
            pm.ps(pids=[bad])
    for bad in (-1, -me):
        with pytest.raises(ValueError):
            pm.open(bad)
        with pytest.raises(ValueError):
            pm.watch(bad)
        with pytest.raises(ValueError):
            pm.shared([bad])
    with pytest.raises(TypeError):
        pm.open("1")
    with pytest.raises(TypeError):
        pm.open(1.5)


def test_write_snapshot_pids_are_range_checked(tmp_path):
    for bad in (2 ** 32 + os.getpid(), -1):
        with pytest.raises((OverflowError, ValueError)):
            pm.Context().write_snapshot(str(tmp_path / "s"), [bad])
        assert not os.path.exists(tmp_path / "s")


def test_ps_pids_must_be_integers():
    with pytest.raises(TypeError):
        pm.ps(pids=["a"])
    with pytest.raises(TypeError):
        pm.ps(pids=[1.0])
    with pytest.raises(TypeError):
        pm.ps(pids=5)


def test_wss_refuses_absurd_windows():
    """inf, nan, 1e300 and negative windows are refused, not measured as a 10 us window."""
    t = pm.open()
    for bad in (math.inf, -math.inf, math.nan, 1e300, -1.0, 1e12):
        with pytest.raises(ValueError):
            t.wss(bad)


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("needs root (kpage files, shared)")


def test_shared_with_duplicate_pids():
    """The same PID many times counts once (pm_share_add refused the second with EEXIST)."""
    needs_root()
    me = os.getpid()
    one = pm.shared([me])
    many = pm.shared([me] * 5000)
    assert len(many["processes"]) == len(one["processes"]) == 1
    assert {m[0] for m in many["maps"]} == {me}


def test_pid_0_is_this_process():
    """0 and os.getpid() are one process: shared() listed it twice, ps(pids=[0]) found nothing."""
    me = os.getpid()
    got = pm.ps(pids=[0])
    assert [p.pid for p, a in got] == [me]
    assert [p.pid for p, a in pm.ps(pids=[0, me])] == [me]
    needs_root()
    both = pm.shared([0, me])
    assert len(both["processes"]) == 1
    assert {m[0] for m in both["maps"]} == {me}


def test_kpage_read_is_bounded_by_the_machine():
    """kpage_read(pfn, 2**31) allocates the machine's frames only (48 GiB before: MemoryError or the OOM killer)."""
    needs_root()
    if not os.access("/proc/kpageflags", os.R_OK):
        pytest.skip("/proc/kpageflags is not readable")
    p = run_child("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        ctx = pm.Context()
        flags, counts, cgroups = ctx.kpage_read(0, 2 ** 31)
        n = len(flags)
        mem = os.sysconf("SC_PHYS_PAGES")
        assert mem <= n < 2 ** 31, (n, mem)
        assert counts is None or len(counts) == n
        far, c2, g2 = ctx.kpage_read(1 << 50, 2 ** 40)
        assert len(far) == 0
        print(n)
    """)
    assert_clean(p)


def test_kpage_read_counts_are_checked():
    needs_root()
    ctx = pm.Context()
    with pytest.raises(OverflowError):
        ctx.kpage_read(0, -1)
    with pytest.raises(OverflowError):
        ctx.kpage_read(-1, 1)


CTRL_C = """
    import ctypes, signal, threading, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    size = 64 << 40		# 64 TiB never touched: a pread walk reads 128 GiB of entries (a minute or more)
    a = libc.mmap(None, size, 0, 0x22 | 0x4000, -1, 0)	# PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE
    if a in (None, ctypes.c_void_p(-1).value):
        print("SKIP cannot reserve 64 TiB of address space")
        sys.exit(0)
    ctx = pm.Context()
    ctx.set_backend("pread")	# PAGEMAP_SCAN would skip the hole at once
    t = ctx.open(0)
    def interrupt():
        time.sleep(1)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    result = None
    try:
        result = CALL
        print("returned")
    except KeyboardInterrupt:
        print("interrupted", result is None)
"""


@pytest.mark.parametrize("call", ["t.runs(a, a + size)", "t.mapstat()"])
def test_ctrl_c_stops_a_long_walk(call):
    """SIGINT during a walk of a huge mapping raises KeyboardInterrupt from inside the call (it waited for the
    walk's end before: over a minute here, so the child would not end within the bound)."""
    p = run_child(CTRL_C.replace("CALL", call), timeout=60, hang="%s did not stop on SIGINT within 60 s" % call)
    if p.stdout.startswith("SKIP"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)
    assert p.stdout.strip() == "interrupted True"


def test_ctrl_c_stops_a_long_wss_window():
    needs_root()
    p0 = run_child("""
        try:
            pm.open().wss(0)
        except pm.PagemapError as e:
            print("SKIP", e)
    """)
    if p0.stdout.startswith("SKIP"):
        pytest.skip(p0.stdout.strip())
    p = run_child("""
        import signal, threading, time
        t = pm.open()
        threading.Thread(target=lambda: (time.sleep(1), os.kill(os.getpid(), signal.SIGINT)), daemon=True).start()
        try:
            t.wss(3600)
            print("returned")
        except KeyboardInterrupt:
            print("interrupted")
    """, timeout=60, hang="wss(3600) did not stop on SIGINT within 60 s")
    assert_clean(p)
    assert p.stdout.strip() == "interrupted"


def test_numbers_past_their_width_are_refused():
    with pytest.raises(OverflowError):
        pm.flags_letters(2 ** 32 + 1)
    with pytest.raises(ValueError):
        pm.decode(0, "pshift", True, 2 ** 32 + 12)


def test_signal_handler_reentering_the_frame_files():
    """A signal handler that reads frames while the same context is inside kpage_read (the frame files'
    lock held, taken back for the handler) gets an error, never a deadlock on that lock."""
    needs_root()
    if not os.access("/proc/kpageflags", os.R_OK):
        pytest.skip("/proc/kpageflags is not readable")
    p = run_child("""
        import errno, signal, threading, time
        ctx = pm.Context()
        seen = []
        def handler(sig, frame):
            try:
                ctx.kpage_read(0, 1)
                seen.append("read")
            except pm.PagemapError as e:
                seen.append(e.errno)
        signal.signal(signal.SIGUSR1, handler)
        def poke():
            # until a signal lands inside kpage_read (most do: a read takes longer than the gap between)
            for _ in range(200):
                if errno.EDEADLK in seen:
                    break
                time.sleep(0.02)
                os.kill(os.getpid(), signal.SIGUSR1)
        th = threading.Thread(target=poke)
        th.start()
        while th.is_alive():
            ctx.kpage_read(0, 2 ** 40)
        th.join()
        assert all(x in ("read", errno.EDEADLK) for x in seen), seen
        print("EDEADLK" if errno.EDEADLK in seen else "only between calls: %d" % len(seen))
    """, timeout=120, hang="deadlock: a handler waited for the frame files' lock its own thread holds")
    assert_clean(p)
    assert p.stdout.strip() == "EDEADLK", "no handler ran inside kpage_read: the EDEADLK path was not tested"


def test_two_threads_collect_one_watch():
    """collect() and add() of one Watch from two threads at once: one at a time, never both inside the
    library's handle (its state is not made for two)."""
    p = run_child("""
        import mmap, threading
        m = mmap.mmap(-1, 1024 * 4096)
        try:
            w = pm.watch(0)
        except pm.PagemapError as e:
            print("SKIP", e)
            sys.exit(0)
        w.add_writable()
        bad = []
        def work(k):
            try:
                for i in range(300):
                    m[((i * 7 + k) % 1024) * 4096] = 1
                    w.collect()
                    if i % 50 == 0:
                        w.add_writable()
            except Exception as e:
                bad.append(repr(e))
        ths = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        w.close()
        assert not bad, bad
        print("ok")
    """)
    if p.stdout.startswith("SKIP"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)


def test_mprotect_watch_refuses_every_writable_mapping():
    """watch(0, "mprotect").add_writable() made the interpreter's own heap and stacks read-only: SIGSEGV.
    Now ValueError; add() of a range of one's own still works."""
    p = run_child("""
        import ctypes, mmap
        try:
            w = pm.watch(0, "mprotect")
        except pm.PagemapError as e:
            print("SKIP", e)
            sys.exit(0)
        try:
            w.add_writable()
            print("added")
        except ValueError as e:
            print("refused")
        m = mmap.mmap(-1, 16 * mmap.PAGESIZE)
        a = ctypes.addressof(ctypes.c_char.from_buffer(m))
        w.add(a, a + 16 * mmap.PAGESIZE)
        m[3 * mmap.PAGESIZE] = 1
        (s, e, huge), = w.collect()
        assert s == a + 3 * mmap.PAGESIZE, (hex(s), hex(a))
        w.close()
    """)
    if p.stdout.startswith("SKIP"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)
    assert p.stdout.strip() == "refused"


HANDLER_CALLS = """
    import ctypes, mmap, signal, threading, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    size = 64 << 40		# never touched: a pread walk of it takes a minute, longer than the checks need
    a = libc.mmap(None, size, 0, 0x22 | 0x4000, -1, 0)
    if a in (None, ctypes.c_void_p(-1).value):
        print("SKIP cannot reserve 64 TiB of address space")
        sys.exit(0)
    m = mmap.mmap(-1, mmap.PAGESIZE)
    m[0] = 1
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    ctx = pm.Context()
    ctx.set_backend("pread")
    t = ctx.open(0)
"""


def test_signal_handler_calling_the_library_during_a_walk():
    """A handler that calls a method keeping the GIL (v2p) while runs() waits in a check: the check ran the
    handlers with this thread's saved state still set, so the handler's own check took the GIL it held: hang."""
    p = run_child(textwrap.dedent(HANDLER_CALLS) + textwrap.dedent("""
        class Stop(Exception):
            pass
        calls = []
        def handler(sig, frame):
            calls.append(t.v2p(addr).entry.flags & int(pm.Flag.PRESENT))
            if len(calls) >= 20:
                raise Stop()
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
        try:
            t.runs(a, a + size)
            print("returned")
        except Stop:
            print("stopped", len(calls), all(calls))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
    """), timeout=60, hang="hang: a signal handler's library call took back the GIL its thread already held")
    if p.stdout.startswith("SKIP"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)
    assert p.stdout.strip() == "stopped 20 True"


def test_calls_after_an_interrupted_call_are_not_interrupted():
    """Once a handler raised inside runs(), the next call that keeps the GIL (v2p, numa) failed with EINTR too:
    the "a handler raised" mark stayed set until the next call without the GIL."""
    p = run_child(textwrap.dedent(HANDLER_CALLS) + textwrap.dedent("""
        threading.Thread(target=lambda: (time.sleep(0.5), os.kill(os.getpid(), signal.SIGINT)), daemon=True).start()
        try:
            t.runs(a, a + size)
            print("returned")
        except KeyboardInterrupt:
            pass
        v = t.v2p(addr)
        assert v.entry.flags & int(pm.Flag.PRESENT), v
        libc.munmap(ctypes.c_void_p(a), ctypes.c_size_t(size))	# numa() walks all: not 64 TiB of holes
        t.numa()
        print("ok")
    """), timeout=60, hang="runs() did not stop on SIGINT, or v2p/numa after it did not end, within 60 s")
    if p.stdout.startswith("SKIP"):
        pytest.skip(p.stdout.strip())
    assert_clean(p)
    assert p.stdout.strip() == "ok"
