#!/usr/bin/env python3
# mk-tree-seeds.py - write the fuzz_tree seeds (tests/fuzz/corpus/tree): a good two-process tree and damaged ones.
# Usage: tests/fuzz/mk-tree-seeds.py tests/fuzz/corpus/tree
import struct, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = {n: i for i, n in enumerate(["features","maps","pagemap","stat","osrelease","pmd","kflags","kcount","kcgroup","swaps","status","rollup","pagemap.errno","kflags.errno","maps43","pagemap43","stat43","status43","maps.errno","kcount.errno","cgroup"])}
def rec(name, data, fifo=False, dir=False):
    t = F[name] | (0x80 if fifo else 0) | (0x40 if dir else 0)
    if isinstance(data, str): data = data.encode()
    return bytes([t]) + struct.pack("<H", len(data)) + data
def pm(word, entries):
    return struct.pack("<I", word) + b"".join(struct.pack("<Q", e) for e in entries)
P = 1 << 63
def feats(ps=4096, view="visible", layout="current", extra=""):
    return "kernel=6.12.0\npage_size=%d\nprivileged=yes\nlayout=%s\npfn_view=%s\nzero_pfn=0x30\nscan=no\nsoft_dirty=yes\nguard_regions=no\n%s" % (ps, layout, view, extra)
STAT = "%d (victim) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
MAPS = ("00400000-00408000 r-xp 00000000 fe:00 1234   /usr/bin/victim\n"
        "00600000-00800000 rw-p 00000000 00:00 0 \n"
        "00a00000-00a04000 rw-p 00000000 00:00 0          [heap]\n"
        "00b00000-00b02000 r--p 00000000 00:00 0          [vvar]\n"
        "7ffd0000-7ffd4000 rw-p 00000000 00:00 0          [stack]\n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   [vsyscall]\n")
def base(ps=4096, view="visible", pmd="2097152\n"):
    s = rec("features", feats(ps, view)) + rec("osrelease", "6.12.0\n") + rec("pmd", pmd)
    s += rec("stat", STAT % (42, 42, 42)) + rec("status", "Name:\tvictim\nUid:\t0\t0\t0\t0\n")
    s += rec("swaps", "Filename Type Size Used Priority\n/dev/sda2 partition 100 0 -2\n")
    s += rec("rollup", "00400000-ffffffffff601000 ---p 00000000 00:00 0 [rollup]\nRss: 100 kB\nPss: 50 kB\nSwap: 0 kB\n")
    return s
good = base() + rec("maps", MAPS)
good += rec("pagemap", pm(0x400, [P | (0x10 + i) | (1 << 61) for i in range(8)]))
good += rec("pagemap", pm(0x600, [P | (1 << 56) | (0x200 + i) for i in range(512)]))
good += rec("pagemap", pm(0xa00, [P | 0x30, P | 0x30, (1 << 62) | (5 << 5) | 1, 0]))
good += rec("pagemap", pm(0x7ffd0, [P | 0x40, P | 0x41, P | 0x42, P | 0x43]))
good += rec("kflags", pm(0, [(1 << 5) | (1 << 12) | (1 << 22)] * 0x240))
good += rec("kcount", pm(0, [1] * 0x200 + [2] * 0x40))
good += rec("kcgroup", pm(0x10, [4711] * 8))
good += rec("maps43", "00400000-00408000 r-xp 00000000 fe:00 1234   /usr/bin/victim\n7ffd0000-7ffd4000 rw-p 00000000 00:00 0          [stack]\n")
good += rec("pagemap43", pm(0x400, [P | (0x10 + i) | (1 << 61) for i in range(8)]))
good += rec("pagemap43", pm(0x7ffd0, [P | 0x40, P | 0x41, P | 0x50, 0]))
good += rec("stat43", STAT % (43, 43, 43)) + rec("status43", "Name:\tvictim\nUid:\t1000\t1000\t1000\t1000\n")
good += rec("cgroup", "0::/system.slice/victim.service\n")
seeds = {
 "good": good,
 "hidden": base(view="hidden") + rec("maps", MAPS) + rec("pagemap", pm(0x400, [P | (1 << 61)] * 8)) + rec("pagemap", pm(0x7ffd0, [P] * 4)),
 "fifo-pagemap": good + rec("pagemap", b"", fifo=True),
 "fifo-maps": good + rec("maps", b"", fifo=True),
 "fifo-features": good + rec("features", b"", fifo=True) + rec("stat", b"", fifo=True) + rec("kflags", b"", fifo=True) + rec("cgroup", b"", fifo=True),
 "fifo-errno": good + rec("pagemap.errno", b"", fifo=True) + rec("kflags.errno", b"", fifo=True),
 "dir-pagemap": good + rec("pagemap", b"", dir=True) + rec("kcount", b"", dir=True),
 "errno": good + rec("pagemap.errno", "EPERM\n") + rec("kflags.errno", "ENODATA\n") + rec("kcount.errno", "13\n"),
 "pagesize-2048": base(ps=2048) + rec("maps", MAPS) + rec("pagemap", pm(0x800, [P | (0x200 + i) for i in range(512)])),
 "pagesize-16k": base(ps=16384, pmd="33554432\n") + rec("maps", "00400000-00408000 rw-p 00000000 00:00 0 \n00500000-00501000 r--p 00000000 00:00 0  [vvar]\n") + rec("pagemap", pm(0x100, [P | 0x10, P | 0x11])),
 "pmd-2p39": base(pmd="549755813888\n") + rec("maps", MAPS) + rec("pagemap", pm(0x400, [P | 0x10] * 8)),
 "vvar-half": base() + rec("maps", "00400000-00404000 rw-p 00000000 00:00 0 \n00500000-00500800 r--p 00000000 00:00 0   [vvar]\n") + rec("pagemap", pm(0x400, [P | 0x10] * 4)),
 "short-mapping": base() + rec("maps", "00400000-00400010 rw-p 00000000 00:00 0 \n") + rec("pagemap", pm(0x400, [P | 0x10])),
 "truncated": base() + rec("maps", "".join("%08x-%08x rw-p 00000000 00:00 0 \n" % (0x400000 + i * 0x10000, 0x404000 + i * 0x10000) for i in range(32))) + rec("pagemap", pm(0x400, [P | 0x10] * 4 + [0] * 0x2c + [P | 0x20] * 4)),
 "mapcount-not-needed": good + rec("features", feats(extra="page_mapcount=not-needed\npage_mapcount=no\npage_mapcount=not-needed\n")),
 "pshift": rec("features", feats(layout="pshift")) + rec("osrelease", "3.10.108\n") + rec("stat", STAT % (42, 42, 42)) + rec("maps", MAPS) + rec("pagemap", pm(0, [0x0600000000000000])) + rec("pagemap", pm(0x400, [P | (12 << 55) | 0x10] * 8)),
}
for n, s in seeds.items():
    open(os.path.join(out, n), "wb").write(s)
    print(n, len(s))
