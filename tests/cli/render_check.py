#!/usr/bin/env python3
"""render_check.py - checks behind tests/cli/render.sh and tests/live/render.sh: layout bounds, exact heat cells, PNG pixels, node legends, diff pages (stdlib only)."""
import json
import struct
import sys
import zlib


def bounds(path):
    """Every mapping at least one cell, gaps at most 2 % of the cells drawn, cells within the rows."""
    r = json.load(open(path))["render"]
    segs = r["segments"]
    area = r["width"] * r["rows"]
    gaps = sum(s["cells"] for s in segs if s["kind"] == "gap")
    bands = [s for s in segs if s["kind"] == "band"]
    assert all(s["cells"] >= 1 for s in bands), "a band without a cell"
    if r["group"] == 1:
        assert sum(s["mappings"] for s in bands) == len(bands), "a band of several mappings with group 1"
    assert gaps * 50 <= area, "gaps take %d of %d cells" % (gaps, area)
    end = max((s["cell"] + s["cells"] for s in segs), default=0)
    assert end <= area, "cells beyond the rows"
    assert area <= 260000, "more than 250 k cells: %d" % area
    total = r["total"]
    cells = {}
    for c in r["cells"]:
        for k, v in c["bytes"].items():
            cells[k] = cells.get(k, 0) + v
    assert cells == total, "cells %s, total %s" % (cells, total)
    print("%d bands, %d gap cells of %d, group %d" % (len(bands), gaps, area, r["group"]))


def pages_in(ranges, start, end, ps):
    n = 0
    for s, e in ranges:
        s, e = max(s, start), min(e, end)
        if s < e:
            n += (e - s + ps - 1) // ps
    return n


def heat(path, rec):
    """Each cell of each interval holds exactly the recorded pages inside its address range."""
    h = json.load(open(path))["heatmap"]
    ps = h["page_size"]
    recs = [json.loads(line) for line in open(rec) if line.strip()]
    assert len(recs) == len(h["intervals"]), "intervals"
    cells = {}
    for iv in h["intervals"]:
        for c in iv["cells"]:
            cells[c["cell"]] = (int(c["start"], 16), int(c["end"], 16))
    for i, (iv, r) in enumerate(zip(h["intervals"], recs)):
        ranges = [(int(x["start"], 16), int(x["end"], 16)) for x in r["ranges"]]
        got = {c["cell"]: c["pages"] for c in iv["cells"]}
        for cell, (s, e) in cells.items():
            want = pages_in(ranges, s, e, ps)
            assert got.get(cell, 0) == want, "interval %d cell %d: %d pages, want %d" % (i, cell, got.get(cell, 0), want)
        on = sum(got.values())
        assert on + (h["off_axis_pages"] if i == 0 else 0) >= 0
    print("%d intervals exact" % len(recs))


def series(path, spec, lo="0", hi="0xffffffffffffffff"):
    """spec: the ranges changed in each interval, "S-E,S-E;...;..." (hex): each hot cell in [lo, hi) holds exactly
    the pages of its interval's ranges inside it, and the cells add up to all of them (no page left out)."""
    h = json.load(open(path))["heatmap"]
    ps, lo, hi = h["page_size"], int(lo, 16), int(hi, 16)
    want = [[tuple(int(x, 16) for x in r.split("-")) for r in iv.split(",") if r] for iv in spec.split(";")]
    assert h["exact"] and h["off_axis_pages"] == 0, "not exact, or pages off the axis"
    assert len(h["intervals"]) == len(want), "%d intervals, want %d" % (len(h["intervals"]), len(want))
    for i, (iv, ranges) in enumerate(zip(h["intervals"], want)):
        cells = [c for c in iv["cells"] if int(c["start"], 16) >= lo and int(c["end"], 16) <= hi]
        for c in cells:
            n = pages_in(ranges, int(c["start"], 16), int(c["end"], 16), ps)
            assert c["pages"] == n, "interval %d cell %s-%s: %d pages, want %d" % (i, c["start"], c["end"], c["pages"], n)
        total = sum((e - s) // ps for s, e in ranges)
        assert sum(c["pages"] for c in cells) == total, "interval %d: %d pages, want %d" % (
            i, sum(c["pages"] for c in cells), total)
    print("%d intervals exact: %s pages" % (len(want), "/".join(str(sum((e - s) // ps for s, e in r)) for r in want)))


def writer(path, addr, npages, pattern):
    """The known writer's mapping: hot cells exactly on its written pages, in every full interval."""
    h = json.load(open(path))["heatmap"]
    ps = h["page_size"]
    lo, hi = int(addr, 16), int(addr, 16) + int(npages) * ps
    written = {lo + int(p) * ps for p in pattern.split(",")}
    full = 0
    for iv in h["intervals"][1:-1]:	# the first and last interval may be partial
        inside = [c for c in iv["cells"] if int(c["start"], 16) >= lo and int(c["end"], 16) <= hi]
        for c in inside:
            s, e = int(c["start"], 16), int(c["end"], 16)
            want = len([w for w in written if s <= w < e])
            assert c["pages"] == want, "cell %s-%s: %d pages, want %d" % (c["start"], c["end"], c["pages"], want)
        assert sum(c["pages"] for c in inside) == len(written), "interval t=%s: %d pages in the writer's mapping" % (
            iv["t"], sum(c["pages"] for c in inside))
        full += 1
    assert full >= 1, "no full interval"
    print("%d intervals: hot cells exactly the %d written pages" % (full, len(written)))


def png_pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "PNG kind %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def pixels(png, render_json, starts):
    """starts: START,... : the pixel in the middle of that mapping's middle cell has the cell's colour and opacity."""
    w, h, bpp, rows = png_pixels(png)
    r = json.load(open(render_json))["render"]
    colours = {"none": "E4E4E4", "anon": "0072B2", "file": "009E73", "huge": "CC79A7", "zero": "F0E442",
               "swap": "D55E00", "guard": "000000"}
    cells = {c["cell"]: c for c in r["cells"]}
    bad = []
    for start in starts.split(","):
        seg = next(s for s in r["segments"] if s["kind"] == "band" and s["start"] == start)
        cell = seg["cell"] + seg["cells"] // 2
        c = cells.get(cell, {"state": "none", "level": 0})
        op = [1, .4, .6, .8, 1][c["level"]]
        want = [round(255 - (255 - v) * op) for v in bytes.fromhex(colours[c["state"]])]
        x, y = 8 + cell % r["width"], 48 + cell // r["width"] * 26 + 7
        px = rows[y][x * bpp:x * bpp + 3]
        if max(abs(px[i] - want[i]) for i in range(3)) > 6:
            bad.append("%s (%s) at (%d,%d): #%s, want #%s" % (start, c["state"], x, y, px.hex(), bytes(want).hex()))
    assert not bad, "; ".join(bad)
    print("%d mappings have their colours" % len(starts.split(",")))


def node_legend(render_json, numa_json):
    """The legend of render -c node holds the bytes per node `pagemap numa -J` counts ("?": unknown)."""
    got = json.load(open(render_json))["render"]["legend"]
    want = {}
    for r in (x for x in json.load(open(numa_json))["numa"] if x["mapping"] == "map"):
        k = "unknown" if r["node"] == "?" else "node " + r["node"]
        want[k] = want.get(k, 0) + r["total"]
    for k, v in want.items():
        assert got.get(k, 0) == v, "%s: %s bytes, numa says %d" % (k, got.get(k), v)
    assert sum(want.values()) > 0, want
    print(" ".join("%s=%d" % kv for kv in sorted(want.items())))


# render --diff's state for a `diff --pages` CHANGE: its first word (uffd_wp alone has no colour)
DIFF_STATE = {"appeared": "appeared", "freed": "freed", "swapout": "swapped", "swapin": "swapped",
              "written": "written", "new_frame": "new_frame", "thp_formed": "thp", "thp_split": "thp"}


def diff_pages(render_json, pages_json):
    """Page for page: every cell of render --diff holds, in each change state, exactly the bytes of the
    `pagemap diff --pages -J` runs of that change inside the cell; the rest of its pages are unchanged."""
    r = json.load(open(render_json))["render"]
    runs = [(int(x["start"], 16), int(x["end"], 16), DIFF_STATE.get(x["change"].split(",")[0]))
            for x in json.load(open(pages_json))["diff"]]
    runs = [x for x in runs if x[2]]
    seen = {}
    for c in r["cells"]:
        cs, ce = int(c["start"], 16), int(c["end"], 16)
        want = {}
        for s, e, st in runs:
            n = min(e, ce) - max(s, cs)
            if n > 0:
                want[st] = want.get(st, 0) + n
        got = {k: v for k, v in c["states"].items() if k != "unchanged"}
        assert got == want, "cell %s-%s: render %s, diff --pages %s" % (c["start"], c["end"], got, want)
        for k, v in got.items():
            seen[k] = seen.get(k, 0) + v
    assert sum(e - s for s, e, _ in runs) == sum(seen.values()), "runs outside every cell"
    print(" ".join("%s=%d" % kv for kv in sorted(seen.items())))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        {"bounds": bounds, "heat": heat, "series": series, "writer": writer, "pixels": pixels, "node-legend": node_legend,
         "diff-pages": diff_pages}[cmd](*args)
    except AssertionError as e:
        print("check failed: %s" % e)
        sys.exit(1)
