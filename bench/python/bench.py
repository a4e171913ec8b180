#!/usr/bin/python3
"""bench.py - the Python package against C and pure Python, figures for bench/README.md.

  entries   1 GiB of raw entries (a 512 GiB PROT_NONE reservation) into a numpy array: Target.read +
            numpy.frombuffer against the same pm_target_read in C (ref.c), and a pure-Python reader
            (os.pread of /proc/self/pagemap into a bytearray, then numpy.frombuffer)
  runs      the runs of 1 GiB touched (THP off) into a numpy array: Target.runs + numpy.asarray against
            pm_walk_new/pm_walk_next copying each run in C
  small     one call: decode an entry, look a flag up (timeit, best of 5), against pure Python
  ps        per-process totals of every process: libpagemap.ps() against psutil's memory_full_info()
            (USS/PSS/swap from smaps) when python3-psutil is installed
Run by `make bench-python` (under flock /tmp/bench.lock); rounds interleave C and Python, medians taken.
"""
import ctypes
import mmap
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

import libpagemap as pm

SRC = os.environ.get("PAGEMAP_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("PAGEMAP_BUILD") or os.path.join(SRC, "build")
ROUNDS = int(os.environ.get("BENCH_RUNS", "5"))
PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def build_ref(tmp):
    exe = os.path.join(tmp, "ref")
    subprocess.run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE", "-I", os.path.join(SRC, "include"),
                    os.path.join(SRC, "bench", "python", "ref.c"), os.path.join(BUILD, "libpagemap.a"), "-lzstd",
                    "-o", exe], check=True)
    return exe


def ref_times(exe, mode, gib, rounds):
    out = subprocess.run([exe, mode, str(gib), str(rounds)], capture_output=True, text=True, check=True).stdout
    return [float(x) for x in out.split()]


def mapping(size, touched):
    prot = mmap.PROT_READ | mmap.PROT_WRITE if touched else 0
    addr = libc.mmap(None, size, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)	# MAP_NORESERVE
    if addr in (None, ctypes.c_void_p(-1).value):
        sys.exit("bench.py: cannot map %d GiB" % (size >> 30))
    if touched:
        libc.madvise(addr, size, 15)	# MADV_NOHUGEPAGE
        ctypes.memset(addr, 1, size)
    return addr


def py_entries(t, addr, n):
    t0 = time.perf_counter()
    a = np.frombuffer(t.read(addr, n), dtype=np.uint64)
    a[-1]
    return time.perf_counter() - t0


def pure_entries(addr, n):
    t0 = time.perf_counter()
    fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    buf = bytearray(n * 8)
    view = memoryview(buf)
    off, chunk = 0, 2 << 20
    while off < len(buf):
        got = os.preadv(fd, [view[off:off + chunk]], (addr // PAGE) * 8 + off)
        off += got
    os.close(fd)
    a = np.frombuffer(buf, dtype=np.uint64)
    a[-1]
    return time.perf_counter() - t0


def py_runs(t, addr, size):
    t0 = time.perf_counter()
    a = np.asarray(t.runs(addr, addr + size))
    len(a)
    return time.perf_counter() - t0


def med(xs):
    return statistics.median(xs)


def bulk(exe):
    t = pm.open(0)
    rows = []
    # 1 GiB of entries: 512 GiB reserved
    size = 512 << 30
    n = size // PAGE
    addr = mapping(size, False)
    c, py, pure = [], [], []
    for _ in range(3):
        c += ref_times(exe, "read", -512, ROUNDS)
        py += [py_entries(t, addr, n) for _ in range(ROUNDS)]
        pure += [pure_entries(addr, n) for _ in range(max(1, ROUNDS // 2))]
    libc.munmap(addr, size)
    rows.append(("1 GiB of entries -> numpy", med(c), med(py), med(pure)))
    # runs of 1 GiB touched: one run per page with THP off? no: identical neighbours merge; flags alike
    size = 1 << 30
    addr = mapping(size, True)
    c, py = [], []
    for _ in range(3):
        c += ref_times(exe, "walk", 1, ROUNDS)
        py += [py_runs(t, addr, size) for _ in range(ROUNDS)]
    runs = len(t.runs(addr, addr + size))
    libc.munmap(addr, size)
    rows.append(("runs of 1 GiB touched (%d runs) -> numpy" % runs, med(c), med(py), None))
    print("| what | C (libpagemap) | Python | Python / C | pure Python | pure / Python |")
    print("|---|---|---|---|---|---|")
    for what, c, py, pure in rows:
        print("| %s | %.1f ms | %.1f ms | %.3fx | %s | %s |" % (
            what, c * 1e3, py * 1e3, py / c, "%.1f ms" % (pure * 1e3) if pure else "-",
            "%.2fx" % (pure / py) if pure else "-"))


def small():
    raw = (1 << 63) | (1 << 56) | 0x1234
    t = pm.open(0)
    Flag = pm.Flag
    g = {"pm": pm, "raw": raw, "t": t, "Flag": Flag, "pure": pure_decode}
    cases = [("pm.decode(raw)", "decode an entry"), ("t.decode(raw)", "decode an entry as a target's"),
             ("Flag.PRESENT", "a flag by name (IntFlag)"), ("pm.flag_info('present')", "a flag's table row"),
             ("pure(raw)", "pure-Python decode (bit arithmetic into a tuple)")]
    print("\n| call | what | time |")
    print("|---|---|---|")
    for stmt, what in cases:
        n = 200000
        best = min(timeit.repeat(stmt, globals=g, number=n, repeat=5)) / n
        print("| `%s` | %s | %.0f ns |" % (stmt, what, best * 1e9))


def pure_decode(raw):
    present = raw >> 63
    return (raw, present, (raw >> 62) & 1, (raw >> 61) & 1, (raw >> 56) & 1, raw & ((1 << 55) - 1) if present else 0)


def ps():
    t0 = time.perf_counter()
    mine = pm.ps()
    t_pm = time.perf_counter() - t0
    src = mine[0][1].source if mine else "-"
    print("\n| per-process totals | processes | total | per process |")
    print("|---|---|---|---|")
    print("| `libpagemap.ps()` (%s) | %d | %.1f ms | %.0f us |" % (src, len(mine), t_pm * 1e3, t_pm * 1e6 / max(1, len(mine))))
    t0 = time.perf_counter()
    mine = pm.ps(exact=False)
    t_r = time.perf_counter() - t0
    print("| `libpagemap.ps(exact=False)` (smaps_rollup) | %d | %.1f ms | %.0f us |" % (len(mine), t_r * 1e3, t_r * 1e6 / max(1, len(mine))))
    try:
        import psutil
    except ImportError:
        print("| psutil | not installed (apt-get install python3-psutil) | | |")
        return
    t0 = time.perf_counter()
    n = 0
    for p in psutil.process_iter():
        try:
            p.memory_full_info()
            n += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    t_ps = time.perf_counter() - t0
    print("| psutil `memory_full_info()` (smaps) | %d | %.1f ms | %.0f us |" % (n, t_ps * 1e3, t_ps * 1e6 / max(1, n)))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_ref(tmp)
        bulk(exe)
    small()
    ps()


if __name__ == "__main__":
    main()
