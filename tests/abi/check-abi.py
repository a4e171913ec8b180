#!/usr/bin/env python3
"""check-abi.py - the public header, lib/libpagemap.sym, the shared library's exports and the man page SYNOPSIS name the same functions.

Kept in step by hand they drift; this says which function each source lacks (after libbpf's scripts/check-abi).
Usage: check-abi.py [SRC [LIB]]: the source tree (default $PAGEMAP_SRC) and the built shared library
(default $PAGEMAP_BUILD/libpagemap.so). Prints one PASS or FAIL line per comparison, for tests/run.
"""
import os
import re
import subprocess
import sys


def header_text(path):
    """The public header with the family headers it includes ("pagemap/x.h") put in their place."""
    text = open(path, encoding="utf-8").read()
    base = os.path.dirname(path)
    return re.sub(r'^#include "(pagemap/\w+\.h)"$',
                  lambda m: open(os.path.join(base, m.group(1)), encoding="utf-8").read(), text, flags=re.M)


def header_functions(path):
    """Every function declared PM_API in the public header and its family headers (a declaration may span lines)."""
    text = header_text(path)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    names = set()
    for decl in re.findall(r"\bPM_API\b([^;{]*)[;{]", text):
        m = re.search(r"\b(pm_\w+)\s*\(", decl)
        if m:
            names.add(m.group(1))
    return names


def sym_functions(path):
    """The global names of every version node, and the node of each; a name in two nodes is an error."""
    text = re.sub(r"/\*.*?\*/", " ", open(path, encoding="utf-8").read(), flags=re.S)
    nodes, dups = {}, []
    for node, body in re.findall(r"([\w.]+)\s*\{(.*?)\}", text, flags=re.S):
        glob = re.split(r"\blocal\s*:", body)[0]
        glob = re.sub(r"\bglobal\s*:", " ", glob)
        for name in re.findall(r"([A-Za-z_]\w*)\s*;", glob):
            if name in nodes:
                dups.append(name)
            nodes[name] = node
    return nodes, dups


def exported_functions(lib):
    """Defined dynamic symbols of the built library, with the version node each is bound to."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":	# version node markers are absolute symbols
            continue
        name, _, node = parts[2].partition("@")
        syms[name] = node.lstrip("@")
    return syms


def internal_pm_functions(lib):
    """Global functions of the static library named pm_ that the header does not declare: each file's
    cross-file helpers are pmi_ (lib/base/base.h), so pm_ means public."""
    out = subprocess.run(["nm", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    return {p[2] for p in (l.split() for l in out.splitlines()) if len(p) == 3 and p[1] == "T"
            and p[2].startswith("pm_")}


def cli_library_calls(cli_dir, stlib):
    """Library functions the CLI's objects call: their undefined symbols that libpagemap.a defines. The
    CLI is linked with the library's objects (Makefile), so nothing but this keeps it on the public API."""
    objs = sorted(os.path.join(cli_dir, f) for f in os.listdir(cli_dir) if f.endswith(".o"))
    if not objs:
        return None
    out = subprocess.run(["nm", "--defined-only", stlib], check=True, capture_output=True, text=True).stdout
    defined = {p[2] for p in (l.split() for l in out.splitlines()) if len(p) == 3 and p[1] in "TDBR"}
    out = subprocess.run(["nm", "-u"] + objs, check=True, capture_output=True, text=True).stdout
    return {p[1] for p in (l.split() for l in out.splitlines()) if len(p) == 2 and p[0] == "U"} & defined


def man_functions(path):
    """Functions the SYNOPSIS declares (.BI/.B lines between .SH SYNOPSIS and the next .SH)."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^\.SH SYNOPSIS\n(.*?)^\.SH ", text, flags=re.S | re.M)
    if not m:
        return None
    # A function's name directly precedes its "(" ("(*pm_log_fn)(" is a typedef's, not one).
    return set(re.findall(r"\b(pm_\w+)\(", m.group(1)))


def compare(label, have, want, want_label):
    """One PASS/FAIL line: names in @want missing from @have, and names in @have not in @want."""
    missing, extra = sorted(want - have), sorted(have - want)
    if not missing and not extra:
        print(f"PASS abi: {label} names the {len(want)} functions of {want_label}")
        return True
    print(f"FAIL abi: {label} differs from {want_label}")
    for n in missing:
        print(f"  missing from {label}: {n}")
    for n in extra:
        print(f"  in {label} only: {n}")
    return False


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PAGEMAP_SRC", ".")
    build = os.environ.get("PAGEMAP_BUILD", os.path.join(src, "build"))
    lib = sys.argv[2] if len(sys.argv) > 2 else os.path.join(build, "libpagemap.so")
    header = header_functions(os.path.join(src, "include/pagemap.h"))
    sym, dups = sym_functions(os.path.join(src, "lib/libpagemap.sym"))
    man = man_functions(os.path.join(src, "man/libpagemap.3"))
    if not header:
        print("FAIL abi: no PM_API declarations found in include/pagemap.h")
        return 1
    ok = compare("lib/libpagemap.sym", set(sym), header, "include/pagemap.h")
    if dups:
        print("FAIL abi: lib/libpagemap.sym lists a name twice: " + " ".join(sorted(dups)))
        ok = False
    if not os.path.exists(lib):
        print(f"FAIL abi: no shared library at {lib} (run make first)")
        ok = False
    else:
        exp = exported_functions(lib)
        ok &= compare(f"exports of {os.path.basename(os.path.realpath(lib))}", set(exp), header,
                      "include/pagemap.h")
        moved = sorted(n for n in set(exp) & set(sym) if exp[n] and exp[n] != sym[n])
        if moved:
            print("FAIL abi: exported under another version node than lib/libpagemap.sym says: "
                  + " ".join(f"{n}@{exp[n]}" for n in moved))
            ok = False
    stlib = os.path.join(os.path.dirname(lib), "libpagemap.a")
    if os.path.exists(stlib):
        stray = sorted(internal_pm_functions(stlib) - header)
        if stray:
            print("FAIL abi: functions named pm_ that include/pagemap.h does not declare (internal ones are pmi_): "
                  + " ".join(stray))
            ok = False
        else:
            print("PASS abi: every global pm_ function of libpagemap.a is public; internal ones are pmi_")
        calls = cli_library_calls(os.path.join(os.path.dirname(lib), "cli"), stlib)
        if calls is None:
            print("FAIL abi: no CLI objects beside the library (run make first)")
            ok = False
        elif calls - header:
            print("FAIL abi: the CLI calls library functions that include/pagemap.h does not declare: "
                  + " ".join(sorted(calls - header)))
            ok = False
        else:
            print(f"PASS abi: the CLI calls {len(calls)} library functions, all public")
    if man is None:
        print("FAIL abi: man/libpagemap.3 has no SYNOPSIS section")
        ok = False
    else:
        ok &= compare("man/libpagemap.3 SYNOPSIS", man, header, "include/pagemap.h")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
