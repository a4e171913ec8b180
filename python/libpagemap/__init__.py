"""libpagemap: Linux /proc/PID/pagemap decoded and walked, for Python.

The C library's handles as objects (Context, Target, Watch), its value structs as frozen records
(Entry, Mapping, Usage, Account, Run, ...), and page data as read-only arrays that numpy wraps without a
copy (numpy.asarray(target.runs()), numpy.frombuffer(target.read(addr, n), numpy.uint64)).

    import libpagemap
    t = libpagemap.open(1234)               # or libpagemap.open(0) for this process
    for m, u in t.mapstat(): print(m.path, u.present)

Unknown is None, never 0: a Usage field this kernel, reader or back end cannot tell (where `pagemap maps`
prints "-"), a frame number hidden from this reader, a count cache_stat() cannot measure. Arrays are numpy
records, which hold no None: their known attribute names the Flag bits they can tell.

Names. Whatever the system names (a process's comm, mapping paths, memfd names, cgroups, a replayed tree's
files) may be any bytes, chosen by any user: it comes as str decoded as os.fsdecode does (surrogateescape), so
os.fsencode(name) gives the exact bytes back and a bad byte never raises. Paths and cgroups you give may be str,
bytes or os.PathLike (ps(cgroup=b"/a\\xff") and ps(cgroup="/a\\udcff") are the same cgroup).

Misuse raises, never crashes. PIDs are ints from 0 (this process) to 2**31 - 1: OverflowError past it,
ValueError below 0, TypeError for anything not an int (ps(pids=["a"])); duplicate PIDs count once. A closed
Target or Watch raises ValueError("... is closed"); an Array read from a Target stays valid after close.
close() from another thread while a call runs closes the handle when that call ends; a Watch serves one
call at a time (other threads wait; a signal handler's call inside one raises RuntimeError). Long calls (walks,
reads, wss windows, kpage_read) stop on Ctrl-C with KeyboardInterrupt. wss() takes 0 to one year of
seconds; kpage_read() returns only the machine's frames.
"""
import enum as _enum
import errno as _errno
import os as _os
from dataclasses import dataclass as _dataclass

from . import _core
from ._core import (Account, Array, Context, DecodeInfo, Entry, Mapping, Proc, Run, ShareSum, Target, Usage,
                    V2P, Watch, decode, flag_table, flags_letters, kpf_describe, kpf_table, memcg_within)

__all__ = [
    "Account", "Array", "Context", "DecodeInfo", "Entry", "Mapping", "Proc", "Run", "ShareSum", "Target", "Usage",
    "V2P", "Watch", "decode", "flag_table", "flags_letters", "kpf_describe", "kpf_table", "memcg_within",
    "Flag", "FLAGS", "Features", "PagemapError", "ProcessGone", "NoSuchProcess", "AccessDenied", "Unsupported",
    "DamagedInput", "open", "features", "ps", "shared", "watch", "RUN_FORMAT", "run_dtype", "to_dataframe",
]

RUN_FORMAT = _core.RUN_FORMAT


# ---- errors: OSError subclasses carrying errno, the library's explanation in strerror ----

class PagemapError(OSError):
    """A libpagemap call failed: .errno, .strerror (what the library says it means), .what (what failed)."""

    def __init__(self, err, what, why):
        super().__init__(err, why)
        self.what = what

    def __str__(self):
        return "%s: %s (%s)" % (self.what, self.strerror, _errno.errorcode.get(self.errno, self.errno))


class ProcessGone(PagemapError, ProcessLookupError):
    """ESRCH: the process exited or exec'd, or is a zombie or kernel thread: never read as empty memory."""


class NoSuchProcess(PagemapError, FileNotFoundError):
    """ENOENT: no such process (or file)."""


class AccessDenied(PagemapError, PermissionError):
    """EACCES or EPERM: another user's process, root-only files, CAP_SYS_ADMIN needed."""


class Unsupported(PagemapError):
    """EOPNOTSUPP or ENOSYS: this kernel, privilege level or replayed root cannot do it."""


class DamagedInput(PagemapError):
    """EBADMSG: a replayed tree or snapshot the kernel could not have written (the reason names the file)."""


_BY_ERRNO = {_errno.ESRCH: ProcessGone, _errno.ENOENT: NoSuchProcess, _errno.EACCES: AccessDenied,
             _errno.EPERM: AccessDenied, _errno.EOPNOTSUPP: Unsupported, _errno.ENOSYS: Unsupported,
             _errno.EBADMSG: DamagedInput}


def _make_error(err, what, why):
    return _BY_ERRNO.get(err, PagemapError)(err, what, why)


_core._set_error_factory(_make_error)


# ---- flags: one table, the library's (pm_flag_table), as the CLI's letters and help use it ----

FLAGS = tuple(flag_table())
"""(bit, name, letter, meaning, raw_bit, (since_major, since_minor), needs, scan_category) per PM_PAGE_* flag."""

Flag = _enum.IntFlag("Flag", [(row[1].upper().replace("-", "_"), row[0]) for row in FLAGS] + [("FRAME", 1 << 11)],
                     module=__name__)
Flag.__doc__ = "PM_PAGE_* page flags: " + ", ".join("%s (%s)" % (r[1], r[3]) for r in FLAGS)

_FLAG_BY_NAME = {row[1]: row for row in FLAGS}


def flag_info(name):
    """The table row of flag NAME ('present', 'thp', ...): bit, name, letter, meaning and kernel facts."""
    return _FLAG_BY_NAME[name]


# ---- features: a frozen record, with the library's rows (pm_features_row), as pagemap features prints ----

@_dataclass(frozen=True)
class Features:
    """What this kernel and privilege level allow (pm_features), and `pagemap features`' rows."""
    kernel_release: str
    kernel_version: tuple
    page_size: int
    pmd_size: int
    privileged: bool
    layout: str
    layout_by_effect: bool
    pfn_view: str
    pagemap_error: int
    unpriv_pfn: str
    zero_pfn: int
    scan: bool
    scan_categories: int
    uffd_wp_async: str
    uffd_features: int
    uffd_error: int
    soft_dirty: str
    guard_regions: str
    page_mapcount: str
    kpageflags: tuple
    kpagecount: tuple
    kpagecgroup: tuple
    page_idle: tuple
    by_effect: bool
    zero_page: str
    huge_zero_page: str
    rows: tuple = ()
    """(feature, status, detail) rows, word for word those of `pagemap features`."""

    def why(self, feature):
        """The CLI's detail for FEATURE ('pfn', 'soft-dirty', 'kpageflags', ...): why, and what would enable it."""
        for name, status, detail in self.rows:
            if name == feature:
                return detail
        raise KeyError(feature)

    def hidden(self):
        """The rows whose status is not yes: what is missing here, with why."""
        return tuple(r for r in self.rows if r[1] in ("no", "unknown", "hidden", "refused"))


def _features(ctx, full=True):
    fields, rows = ctx._features(full)
    return Features(rows=tuple(rows or ()), **fields)


Context.features = _features


def features(root=None):
    """The probed features of the live system (or of the tree at ROOT), every probe run, with the CLI's rows."""
    return _features(Context(root))


# ---- convenience ----

_default = None


def _context(root=None, context=None):
    global _default
    if context is not None:
        return context
    if root is not None:
        return Context(root)
    if _default is None:
        _default = Context()
    return _default


def open(pid=0, root=None, context=None):  # noqa: A001 - the library's verb
    """Open process PID (0: this one) in CONTEXT, a Context(ROOT), or the live system's."""
    return Target(_context(root, context), pid)


Context.open = lambda self, pid=0: Target(self, pid)
Context.open.__doc__ = "Open process PID (0: this one) in this context."


def ps(pids=None, cgroup=None, root=None, context=None, exact=True):
    """[(Proc, Account)] for every process (or PIDS, or those of memory cgroup CGROUP and below).

    Exact PSS/USS from kpagecount as root, else the kernel's smaps_rollup (Account.source says which).
    Processes that exit meanwhile, kernel threads and those this user may not read are left out.
    """
    ctx = _context(root, context)
    if pids is not None:	# checked first: ps(pids=["a"]) is a mistake, not an empty answer
        if isinstance(pids, (str, bytes)):
            raise TypeError("pids is a sequence of ints, not %s" % type(pids).__name__)
        # 0 is this process (as for open()): its own PID is what processes() lists
        want = {_core._check_pid(p) or _os.getpid() for p in pids}
    procs = [p for p in ctx.processes() if p.state == "running"]
    if pids is not None:
        procs = [p for p in procs if p.pid in want]
    out = []
    for p in procs:
        try:
            if cgroup is not None:
                cg = ctx.memcg_of(p.pid)
                if cg is None or not memcg_within(cg, cgroup):
                    continue
            t = Target(ctx, p.pid)
            try:
                out.append((p, t.account(exact=exact)))
            finally:
                t.close()
        except (ProcessGone, NoSuchProcess, AccessDenied):
            continue
    return out


def shared(pids, root=None, context=None):
    """What processes PIDS share with each other and the rest of the system (root): sums, maps, pairs.
    A PID given twice counts once (its first place orders "processes")."""
    return _context(root, context).shared(list(pids))


def watch(pid=0, method="auto", nothp=False, root=None, context=None):
    """A Watch of the pages process PID (0: this one) writes; use as a context manager to close it."""
    return Watch(_context(root, context), pid, method, nothp)


Watch.__enter__ = lambda self: self
Watch.__exit__ = lambda self, *exc: self.close()
Target.__enter__ = lambda self: self
Target.__exit__ = lambda self, *exc: self.close()


# ---- numpy and pandas, when present (never dependencies) ----

def run_dtype():
    """The numpy dtype of a runs Array's records (RUN_FORMAT): start, end, pfn, swap_offset, flags, map, swap_type.
    A record holds no None: a flag bit outside the Array's known is unknown, though it reads 0 in flags, and pfn
    and the swap fields read 0 where a Run's are None (no FRAME flag; pfn without PRESENT; swap without SWAPPED
    or MIGRATION)."""
    import numpy
    return numpy.dtype({"names": ["start", "end", "pfn", "swap_offset", "flags", "map", "swap_type"],
                        "formats": ["=u8", "=u8", "=u8", "=u8", "=u4", "=u4", "u1"],
                        "offsets": [0, 8, 16, 24, 32, 36, 40], "itemsize": _core.RUN_ITEMSIZE})


def to_dataframe(obj):
    """A pandas DataFrame of a runs Array (one row per run, with its mapping's path and flag columns),
    a mapstat() list, a ps() list, or any list of records. Needs pandas, imported only here.
    Unknown is NA, never False or 0: a flag column outside the Array's known bits (a nullable boolean), a run's
    pfn and swap fields where a Run's are None, and a Usage column's None (nullable UInt64 columns)."""
    import pandas
    if isinstance(obj, Array) and obj.kind == "runs":
        import numpy
        a = numpy.asarray(obj)
        df = pandas.DataFrame({k: a[k] for k in ("start", "end", "pfn", "swap_offset", "flags", "swap_type")})
        frame = (a["flags"] & int(Flag.FRAME)) != 0
        slot = frame & ((a["flags"] & int(Flag.SWAPPED | Flag.MIGRATION)) != 0)
        for k, real in (("pfn", frame & ((a["flags"] & int(Flag.PRESENT)) != 0)), ("swap_offset", slot),
                        ("swap_type", slot)):	# NA where Run's field is None
            df[k] = pandas.arrays.IntegerArray(numpy.asarray(a[k], dtype="uint64"), ~real)
        df["bytes"] = df["end"] - df["start"]
        paths = numpy.array([m.path for m in obj.maps] or [""], dtype=object)
        df["path"] = paths[a["map"]] if len(a) else []
        for row in FLAGS:
            if obj.known & row[0]:
                df[row[1]] = (a["flags"] & row[0]) != 0
            else:
                df[row[1]] = pandas.array([None] * len(a), dtype="boolean")
        return df
    rows = list(obj)
    if rows and type(rows[0]) is tuple and len(rows[0]) == 2:
        df = pandas.DataFrame([dict(_asdict(a), **_asdict(b)) for a, b in rows])
        for name in _fields(Usage) if type(rows[0][1]) is Usage else ():
            df[name] = df[name].astype("UInt64")
        return df
    return pandas.DataFrame([_asdict(r) for r in rows])


def _fields(rtype):
    """The record type's fields: the tuple's, then those read by name only (Usage.rss)."""
    named = [k for k, v in vars(rtype).items() if type(v).__name__ == "member_descriptor"]
    return list(rtype.__match_args__) + [k for k in named if k not in rtype.__match_args__]


def _asdict(rec):
    return {name: getattr(rec, name) for name in _fields(type(rec))}
