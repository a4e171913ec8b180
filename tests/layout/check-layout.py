#!/usr/bin/env python3
"""check-layout.py - lib/ and cli/ keep the folder rules folders.mk writes down, and size limits.

folders.mk is the one statement of who may use whom (LIB_USES_x, CLI_USES_x); the Makefile compiles
each folder with only those -I paths, which catches most #include mistakes but not a relative path,
a header that sits in two folders, nor a call through a declaration the caller wrote itself or
through the public API (the base calling pm_snapshot_* breaks the floors as much as including
snapshot.h does). This reads the same rules and checks the #include lines, the symbols each folder's
built objects take from the others, that the folders form floors (no circle), the sizes of files
and functions, and that the pm_/PM_ names lib/ defines are public ones.

Usage: check-layout.py [SRC]   the tree (default $PAGEMAP_SRC or .), built in $PAGEMAP_BUILD
       check-layout.py --self-test        small trees with one broken rule each: each must fail
       check-layout.py --internal-names   the internal pm_/PM_ names lib/ defines (for a rename)
Prints one PASS or FAIL line per rule for tests/run; a FAIL is followed by "  file:line: why" lines.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 650
MAX_FUNCTION_LINES = 80
# PAGEMAP_SCAN's argument and flags are the kernel's own names (include/uapi/linux/fs.h);
# lib/base/compat.h repeats them for older uapi headers, so they keep the kernel's spelling.
KERNEL_NAMES = {"pm_scan_arg", "PM_SCAN_WP_MATCHING", "PM_SCAN_CHECK_WPASYNC"}
SOURCE_EXT = (".c", ".h")

RULES = [
    ("folders", "no source file at lib/'s root; each lib/ and cli/ folder is in folders.mk"),
    ("floors", "LIB_USES rules form floors: no lib/ folder may use one that may use it back"),
    ("lib-includes", "each lib/ folder includes itself, include/ and what LIB_USES allows"),
    ("cli-includes", "cli/ includes <pagemap.h> and the cli/ folders CLI_USES allows, never lib/"),
    ("python-includes", "python/ includes nothing from cli/ or lib/ and builds no CLI source"),
    ("lib-symbols", "each lib/ folder's objects use symbols of the folders LIB_USES allows only"),
    ("cli-symbols", "each cli/ folder's objects use symbols of the folders CLI_USES allows only"),
    ("no-circle", "the lib/ folders' include and call arrows, and the cli/ folders' calls, form no circle"),
    ("file-size", f"no file in lib/ or cli/ is over {MAX_FILE_LINES} lines"),
    ("function-size", f"no function in lib/ or cli/ is over {MAX_FUNCTION_LINES} lines"),
    ("pm-names", "each pm_/PM_ struct, enum, typedef, macro or object lib/ defines is in include/"),
]


# ---- reading the tree ----------------------------------------------------------------------

def read_rules(src):
    """folders.mk's variables: NAME := words (comments and blank lines skipped)."""
    var = {}
    with open(os.path.join(src, "folders.mk"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0]
            m = re.match(r"\s*([A-Za-z_]\w*)\s*[:+]?=\s*(.*)", line)
            if m:
                var[m.group(1)] = m.group(2).split()
    lib = var.get("LIB_FOLDERS", [])
    cli = var.get("CLI_FOLDERS", [])
    return {
        "lib": lib,
        "cli": cli,
        "lib_uses": {d: set(var.get("LIB_USES_" + d, [])) | {d} for d in lib},
        # LIB_CALLS_x: folders x may call through the public API only, never include.
        "lib_calls": {d: set(var.get("LIB_USES_" + d, [])) | set(var.get("LIB_CALLS_" + d, [])) | {d}
                      for d in lib},
        "cli_uses": {d: set(var.get("CLI_USES_" + d, [])) | {d} for d in ["root"] + cli},
        "declared_lib_uses": {k[len("LIB_USES_"):] for k in var if k.startswith("LIB_USES_")},
        "declared_cli_uses": {k[len("CLI_USES_"):] for k in var if k.startswith("CLI_USES_")},
    }


def rel(src, path):
    return os.path.relpath(path, src)


def files_under(src, top, ext=None):
    """Files below src/top (recursively), sorted, as paths relative to src."""
    out = []
    for root, dirs, names in os.walk(os.path.join(src, top)):
        dirs.sort()
        for n in sorted(names):
            if ext is None or n.endswith(ext):
                out.append(rel(src, os.path.join(root, n)))
    return out


def read_lines(src, path):
    with open(os.path.join(src, path), encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def strip_comments(text):
    """C comments blanked (newlines kept, so line numbers stay); string and character literals
    kept, so "/proc/*/maps" opens no comment."""
    def blank(m):
        if m.group(0)[0] in "\"'":
            return m.group(0)
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', blank, text,
                  flags=re.S)


def folder_of(path):
    """Where a file belongs: ('lib', x), ('cli', x or 'root'), ('include', ''), ('python', '')
    or None."""
    parts = path.split(os.sep)
    if parts[0] == "lib" and len(parts) >= 3:
        return ("lib", parts[1])
    if parts[0] == "lib":
        return ("lib", "")
    if parts[0] == "cli":
        return ("cli", "root" if len(parts) == 2 else parts[1])
    if parts[0] == "include":
        return ("include", "")
    if parts[0] == "python":
        return ("python", "")
    return None


def show(where):
    kind, name = where
    if kind == "cli":
        return "cli/" if name == "root" else f"cli/{name}"
    return f"{kind}/{name}" if name else f"{kind}/"


# ---- rule: folders -------------------------------------------------------------------------

def check_folders(src, rules, bad):
    for path in files_under(src, "lib"):
        parts = path.split(os.sep)
        if len(parts) == 2 and path.endswith(SOURCE_EXT):
            bad.append((path, 0, "a source file at lib/'s root: it belongs in one of the folders"))
        elif len(parts) >= 3 and parts[1] not in rules["lib"]:
            bad.append((path, 0, f"lib/{parts[1]} is not in folders.mk's LIB_FOLDERS"))
        elif len(parts) > 3:
            bad.append((path, 0, "a folder inside a lib/ folder: folders.mk knows one level only"))
    for path in files_under(src, "cli"):
        parts = path.split(os.sep)
        if len(parts) >= 3 and parts[1] not in rules["cli"]:
            bad.append((path, 0, f"cli/{parts[1]} is not in folders.mk's CLI_FOLDERS"))
        elif len(parts) > 3:
            bad.append((path, 0, "a folder inside a cli/ folder: folders.mk knows one level only"))
    for d in rules["lib"]:
        if d not in rules["declared_lib_uses"]:
            bad.append(("folders.mk", 0, f"lib/{d} has no LIB_USES_{d}"))
        if not os.path.isdir(os.path.join(src, "lib", d)):
            bad.append(("folders.mk", 0, f"LIB_FOLDERS names lib/{d}, which does not exist"))
    for d in rules["cli"]:
        if d not in rules["declared_cli_uses"]:
            bad.append(("folders.mk", 0, f"cli/{d} has no CLI_USES_{d}"))
        if not os.path.isdir(os.path.join(src, "cli", d)):
            bad.append(("folders.mk", 0, f"CLI_FOLDERS names cli/{d}, which does not exist"))
    for kind, known, declared in (("LIB", rules["lib"], rules["declared_lib_uses"]),
                                  ("CLI", ["root"] + rules["cli"], rules["declared_cli_uses"])):
        for d in sorted(declared - set(known)):
            bad.append(("folders.mk", 0,
                        f"{kind}_USES_{d} names a folder {kind}_FOLDERS does not list"))
        uses = rules["lib_uses"] if kind == "LIB" else rules["cli_uses"]
        for d in known:
            for u in sorted(uses.get(d, set()) - set(known)):
                bad.append(("folders.mk", 0, f"{kind}_USES_{d} names {u}, which is no folder"))


def find_circle(nodes, edges):
    """One circle of the directed graph (a list of nodes, first repeated last), or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in nodes:
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def path_between(edges, a, b):
    """The folders from @a to @b along @edges (breadth first), or None."""
    seen, todo = {a: None}, [a]
    while todo:
        n = todo.pop(0)
        if n == b:
            path = []
            while n is not None:
                path.append(n)
                n = seen[n]
            return path[::-1]
        for m in sorted(edges.get(n, ())):
            if m not in seen:
                seen[m] = n
                todo.append(m)
    return None


def check_floors(src, rules, bad):
    edges = {d: rules["lib_calls"][d] - {d} for d in rules["lib"]}
    c = find_circle(rules["lib"], edges)
    if c:
        bad.append(("folders.mk", 0, "LIB_USES rules run in a circle: " + " -> ".join(c)))


# ---- rules: includes -----------------------------------------------------------------------

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def search_dirs(src, rules):
    dirs = (["include"] + [f"lib/{d}" for d in rules["lib"]]
            + ["cli"] + [f"cli/{d}" for d in rules["cli"]])
    return [d for d in dirs if os.path.isdir(os.path.join(src, d))]


def resolve(src, path, quote, name, dirs):
    """The tree's file an #include names (relative to the includer first for "..."), or None (a
    system header). Searched in the includer's own folder, then include/, then every folder: a
    header found only in a folder the includer may not use is what the rules are about."""
    here = os.path.dirname(path)
    cands = []
    if quote == '"':
        cands.append(os.path.normpath(os.path.join(here, name)))
    cands += [os.path.normpath(os.path.join(d, name)) for d in [here] + dirs]
    for c in cands:
        if not c.startswith("..") and os.path.isfile(os.path.join(src, c)):
            return c
    return None


def includes(src, path, dirs):
    """(line number, target path) of each #include of @path that names a file of the tree."""
    for i, line in enumerate(read_lines(src, path), 1):
        m = INCLUDE_RE.match(line)
        if m:
            target = resolve(src, path, m.group(1), m.group(2), dirs)
            if target:
                yield i, target


def check_lib_includes(src, rules, bad, arrows):
    dirs = search_dirs(src, rules)
    for d in rules["lib"]:
        for path in files_under(src, f"lib/{d}", SOURCE_EXT):
            for line, target in includes(src, path, dirs):
                where = folder_of(target)
                if where and where[0] == "include":
                    continue
                if where and where[0] == "lib" and where[1] in rules["lib_uses"][d]:
                    if where[1] != d:
                        arrows.setdefault((d, where[1]), f"{path}:{line} includes {target}")
                    continue
                if where and where[0] == "lib" and where[1] in rules["lib"]:
                    arrows.setdefault((d, where[1]), f"{path}:{line} includes {target}")
                bad.append((path, line, f"includes {target}: lib/{d} may use "
                            + ", ".join(sorted(rules["lib_uses"][d])) + " (LIB_USES_" + d + ")"))


def check_cli_includes(src, rules, bad):
    dirs = search_dirs(src, rules)
    for path in files_under(src, "cli", SOURCE_EXT):
        d = folder_of(path)[1]
        allowed = rules["cli_uses"].get(d, {d})
        for line, target in includes(src, path, dirs):
            where = folder_of(target)
            if target == os.path.join("include", "pagemap.h"):
                continue
            if where and where[0] == "cli" and where[1] in allowed:
                continue
            if where and where[0] == "include":
                why = "the CLI includes <pagemap.h>, not the family headers behind it"
            elif where and where[0] == "lib":
                why = "the CLI never includes the library's private headers"
            else:
                why = (f"{show(('cli', d))} may use " + ", ".join(sorted(allowed))
                       + f" (CLI_USES_{d})")
            bad.append((path, line, f"includes {target}: {why}"))


def check_python_includes(src, rules, bad):
    dirs = search_dirs(src, rules)
    for path in files_under(src, os.path.join("python", "libpagemap"), SOURCE_EXT):
        for line, target in includes(src, path, dirs):
            where = folder_of(target)
            if where and where[0] in ("cli", "lib"):
                bad.append((path, line,
                            f"includes {target}: the Python binding uses <pagemap.h> only"))
    # The build script links the library's objects (lib/) but compiles nothing of the CLI's.
    setup = os.path.join("python", "setup.py")
    if os.path.isfile(os.path.join(src, setup)):
        for i, line in enumerate(read_lines(src, setup), 1):
            if re.search(r"""["']cli["'/]""", line):
                bad.append((setup, i, "names cli/: the Python binding builds on the library only"))


# ---- rules: symbols ------------------------------------------------------------------------

def nm(args, objs):
    """(object, type, name) of nm -A's lines for @objs."""
    if not objs:
        return []
    out = subprocess.run(["nm", "-A"] + args + objs, check=True, capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        obj, sep, rest = line.partition(".o:")
        p = rest.split()
        if sep and len(p) >= 2:
            rows.append((obj + ".o", p[-2], p[-1]))
    return rows


def objects(src, build, top, folders):
    """{folder: [object paths]} of $BUILD/top/<folder>/*.o (position-dependent ones: the same
    code) whose source is still there (one left behind by a file since moved says nothing)."""
    out = {}
    for d in folders:
        sub = top if d == "root" else os.path.join(top, d)
        path = os.path.join(build, sub)
        if os.path.isdir(path):
            out[d] = sorted(os.path.join(path, n) for n in os.listdir(path)
                            if n.endswith(".o") and not n.endswith(".pic.o")
                            and os.path.isfile(os.path.join(src, sub, n[:-2] + ".c")))
    return out


def source_line(src, path, name):
    """The first line of @path that names @name (for a file:line a reader can open), else 0."""
    try:
        for i, line in enumerate(read_lines(src, path), 1):
            if re.search(r"\b" + re.escape(name) + r"\b", line):
                return i
    except OSError:
        pass
    return 0


def check_use(src, build, top, uses, bad, arrows, var, use):
    """@use: an undefined symbol @name of @obj (in folder @d), defined in folder @to (or None:
    outside the folders)."""
    obj, d, name, to = use
    if to is None or to == d:
        return
    base = os.path.relpath(obj, os.path.join(build, top))
    srcpath = os.path.join(top, base[:-2] + ".c")
    arrows.setdefault((d, to), f"{srcpath} uses {name}")
    if to not in uses.get(d, {d}):
        bad.append((srcpath, source_line(src, srcpath, name),
                    f"uses {name} of {show((top, to))}: {show((top, d))} may use "
                    + ", ".join(sorted(uses.get(d, {d}))) + f" ({var}_{d})"))


def check_symbols(src, build, top, folders, uses, bad, arrows, var):
    objs = objects(src, build, top, folders)
    if not any(objs.values()):
        bad.append((os.path.join(build, top), 0, "no objects here: run make first"))
        return
    folder = {obj: d for d, files in objs.items() for obj in files}
    rows = nm([], [obj for files in objs.values() for obj in files])
    owner = {}
    for obj, t, name in rows:
        if t.isupper() and t not in "AUN":
            owner.setdefault(name, folder[obj])
    for obj, t, name in rows:
        d = folder[obj]
        if t == "U":
            check_use(src, build, top, uses, bad, arrows, var, (obj, d, name, owner.get(name)))


# ---- rules: sizes --------------------------------------------------------------------------

def check_file_sizes(src, bad):
    for path in files_under(src, "lib") + files_under(src, "cli"):
        lines = read_lines(src, path)
        n = len(lines) - (lines[-1] == "")
        if n > MAX_FILE_LINES:
            bad.append((path, n, f"{n} lines: split it by concern (at most {MAX_FILE_LINES})"))


def functions(lines):
    """(first line, last line, name) of each function written kernel style: the body opens with
    "{" alone at column 0 and closes with "}" at column 0; the definition starts at its first
    declarator line. @lines have their comments blanked."""
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        start = i
        while start > 0:
            prev = lines[start - 1].rstrip()
            if not prev or prev.startswith("#") or prev.endswith((";", "}", "{")):
                break
            start -= 1
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        head = " ".join(lines[start:i])
        m = re.search(r"(\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", head)
        yield start + 1, end + 1, m.group(1) if m else head.strip()
        i = end + 1


def check_function_sizes(src, bad):
    for path in files_under(src, "lib", SOURCE_EXT) + files_under(src, "cli", SOURCE_EXT):
        lines = strip_comments("\n".join(read_lines(src, path))).split("\n")
        for first, last, name in functions(lines):
            n = last - first + 1
            if n > MAX_FUNCTION_LINES:
                bad.append((path, first, f"{name}() is {n} lines (at most {MAX_FUNCTION_LINES})"))


# ---- rule: pm_ means public ----------------------------------------------------------------

def public_names(src):
    names = set()
    for path in files_under(src, "include", ".h"):
        names |= set(re.findall(r"\b(?:pm|PM)_\w+", "\n".join(read_lines(src, path))))
    return names


def defined_names(text):
    """(offset, name) of each pm_/PM_ name @text (comments stripped) defines: macros,
    struct/enum/union tags, enum constants, typedefs, and objects with external linkage."""
    pats = [
        r"^[ \t]*#[ \t]*define[ \t]+((?:pm|PM)_\w+)",
        r"\b(?:struct|enum|union)\s+(pm_\w+)\s*\{",
        r"\btypedef\b[^;]*?\(\s*\*\s*(pm_\w+)\s*\)",
        r"\btypedef\b[^;(]*?\b(pm_\w+)\s*;",
        r"^(?!static\b)[A-Za-z_][^;=(){}\n]*?\b(pm_\w+)\s*(?:\[[^\]\n]*\])?\s*=",
    ]
    for p in pats:
        for m in re.finditer(p, text, flags=re.M):
            yield m.start(1), m.group(1)
    for m in re.finditer(r"\benum\b[^;{]*\{([^}]*)\}", text):
        for e in re.finditer(r"(?:^|,)\s*((?:pm|PM)_\w+)", m.group(1)):
            yield m.start(1) + e.start(1), e.group(1)
    for m in re.finditer(r"^[ \t]*extern\b([^;]*);", text, flags=re.M):
        for e in re.finditer(r"(?<!struct )(?<!enum )(?<!union )\b(pm_\w+)\b(?!\s*\()", m.group(1)):
            yield m.start(1) + e.start(1), e.group(1)


def internal_names(src):
    """{name: (path, line)} of pm_/PM_ names lib/ defines that include/ does not."""
    public = public_names(src) | KERNEL_NAMES
    found = {}
    for path in files_under(src, "lib", SOURCE_EXT):
        text = strip_comments("\n".join(read_lines(src, path)))
        for off, name in defined_names(text):
            if name not in public:
                found.setdefault(name, (path, text.count("\n", 0, off) + 1))
    return found


def check_pm_names(src, bad):
    for name, (path, line) in sorted(internal_names(src).items(), key=lambda x: x[1]):
        new = "pmi_" + name[3:] if name.startswith("pm_") else "PMI_" + name[3:]
        bad.append((path, line, f"{name} is internal: name it {new} (pm_ and PM_ are the "
                    "public API's)"))


# ---- running the rules ---------------------------------------------------------------------

def circles(arrows, edges, bad, top):
    """Each arrow of @arrows that closes a circle of @edges, as a finding."""
    for a, b in sorted(arrows):
        back = path_between(edges, b, a)
        if back:
            bad.append((arrows[(a, b)].split(" ")[0].rsplit(":", 1)[0], 0,
                        f"{top}{a} -> {top}{b} closes a circle ({' -> '.join([a] + back)}): "
                        + arrows[(a, b)]))


def run(src, build):
    """{rule: [(path, line, why)]} and a summary for each PASS line."""
    rules = read_rules(src)
    bad = {r: [] for r, _ in RULES}
    note = {}
    check_folders(src, rules, bad["folders"])
    check_floors(src, rules, bad["floors"])
    inc_arrows, sym_arrows, cli_arrows = {}, {}, {}
    check_lib_includes(src, rules, bad["lib-includes"], inc_arrows)
    check_cli_includes(src, rules, bad["cli-includes"])
    check_python_includes(src, rules, bad["python-includes"])
    check_symbols(src, build, "lib", rules["lib"], rules["lib_calls"], bad["lib-symbols"],
                  sym_arrows, "LIB_USES/LIB_CALLS")
    check_symbols(src, build, "cli", ["root"] + rules["cli"], rules["cli_uses"], bad["cli-symbols"],
                  cli_arrows, "CLI_USES")
    arrows = dict(inc_arrows)
    for k, v in sym_arrows.items():
        arrows.setdefault(k, v)
    edges = {}
    for a, b in arrows:
        edges.setdefault(a, set()).add(b)
    circles(arrows, edges, bad["no-circle"], "lib/")
    cli_edges = {}
    for a, b in cli_arrows:
        cli_edges.setdefault(a, set()).add(b)
    circles(cli_arrows, cli_edges, bad["no-circle"], "cli/")
    note["lib-symbols"] = f"{len(sym_arrows)} cross-folder call arrows"
    note["lib-includes"] = f"{len(inc_arrows)} cross-folder include arrows"
    note["no-circle"] = (f"{len(arrows)} arrows between {len(rules['lib'])} lib/ folders: "
                         + ", ".join(f"{a}->{b}" for a, b in sorted(arrows))
                         + f"; {len(cli_arrows)} between cli/'s: "
                         + ", ".join(f"{a}->{b}" for a, b in sorted(cli_arrows)))
    note["cli-symbols"] = f"{len(cli_arrows)} cross-folder call arrows"
    check_file_sizes(src, bad["file-size"])
    check_function_sizes(src, bad["function-size"])
    check_pm_names(src, bad["pm-names"])
    return bad, note


def report(bad, note, prefix="layout"):
    ok = True
    for rule, text in RULES:
        if bad[rule]:
            ok = False
            extra = f"; {note[rule]}" if rule in note else ""
            print(f"FAIL {prefix}: {rule}: {text} ({len(bad[rule])} found{extra})")
            for path, line, why in bad[rule]:
                print(f"  {path}:{line}: {why}" if line else f"  {path}: {why}")
        else:
            extra = f" ({note[rule]})" if rule in note else ""
            print(f"PASS {prefix}: {rule}: {text}{extra}")
    return ok


# ---- self-test: a small tree, then one broken rule at a time -------------------------------

CLEAN = {
    "folders.mk": "LIB_FOLDERS := low high\nLIB_USES_low := low\nLIB_USES_high := low high\n"
                  "CLI_FOLDERS := out\nCLI_USES_root := root out\nCLI_USES_out := root out\n",
    "include/pagemap.h": "#include \"pagemap/fam.h\"\n",
    "include/pagemap/fam.h": "struct pm_ctx;\nint pm_low(void);\n#define PM_PUBLIC 1\n",
    "lib/libpagemap.sym": "PAGEMAP_0.1 { global: pm_low; local: *; };\n",
    "lib/low/low.h": "#ifndef PMI_LOW_H\n#define PMI_LOW_H\n#include <pagemap.h>\n"
                     "struct pm_ctx { int x; };\nstruct pmi_low { int y; };\n"
                     "int pmi_low_helper(void);\n#endif\n",
    "lib/low/low.c": "#include \"low.h\"\n\nint pmi_low_helper(void)\n{\n\treturn 1;\n}\n\n"
                     "int pm_low(void)\n{\n\treturn pmi_low_helper();\n}\n",
    "lib/high/high.h": "#include \"low.h\"\nint pmi_high(void);\n",
    "lib/high/high.c": "#include \"high.h\"\n\nint pmi_high(void)\n"
                       "{\n\treturn pmi_low_helper() + pm_low();\n}\n",
    "cli/cli.h": "#include <pagemap.h>\nint cli_out(void);\n",
    "cli/main.c": "#include \"cli.h\"\n#include \"out.h\"\n\n"
                  "int main(void)\n{\n\treturn cli_out() + pm_low();\n}\n",
    "cli/out/out.h": "#include \"cli.h\"\n",
    "cli/out/out.c": "#include \"out.h\"\n\nint cli_out(void)\n{\n\treturn 0;\n}\n",
    "python/libpagemap/_core.c": "#include <pagemap.h>\n#include \"_core.h\"\n",
    "python/libpagemap/_core.h": "int py(void);\n",
    "python/setup.py": "include_dirs = [os.path.join(ROOT, \"include\")]\n",
}


def long_function(n):
    return ("int pmi_long(void);\n\nint pmi_long(void)\n{\n" + "\tpmi_low_helper();\n" * (n - 4)
            + "\treturn 0;\n}\n")


# rule: (what breaks it, {file: new text or None to delete, or (old, new) to replace in the file})
BREAKS = [
    ("folders", "a .c at lib/'s root", {"lib/stray.c": "int pmi_stray;\n"}),
    ("folders", "an undeclared lib/ folder", {"lib/new/new.c": "int pmi_new;\n"}),
    ("folders", "an undeclared cli/ folder", {"cli/pics/pics.c": "int cli_pics;\n"}),
    ("floors", "LIB_USES in a circle",
     {"folders.mk": ("LIB_USES_low := low", "LIB_USES_low := low high")}),
    ("lib-includes", "the floor includes the folder above it",
     {"lib/low/low.c": ("#include \"low.h\"\n", "#include \"low.h\"\n#include \"high.h\"\n")}),
    ("lib-includes", "a relative path around -I",
     {"lib/low/low.c": ("#include \"low.h\"\n",
                        "#include \"low.h\"\n#include \"../high/high.h\"\n")}),
    ("lib-includes", "the library includes the CLI",
     {"lib/high/high.c": ("#include \"high.h\"\n",
                          "#include \"high.h\"\n#include \"../../cli/cli.h\"\n")}),
    ("cli-includes", "the CLI includes a private library header",
     {"cli/main.c": ("#include \"cli.h\"\n",
                     "#include \"cli.h\"\n#include \"../lib/low/low.h\"\n")}),
    ("cli-includes", "the CLI includes a family header, not <pagemap.h>",
     {"cli/cli.h": ("#include <pagemap.h>\n", "#include <pagemap/fam.h>\n")}),
    ("cli-includes", "a cli/ folder includes one CLI_USES does not allow",
     {"folders.mk": ("CLI_USES_out := root out", "CLI_USES_out := out")}),
    ("python-includes", "Python compiles CLI source",
     {"python/libpagemap/_core.c": ("#include \"_core.h\"\n",
                                    "#include \"_core.h\"\n#include \"../../cli/main.c\"\n")}),
    ("python-includes", "Python's build script compiles against cli/",
     {"python/setup.py": ("]", ", os.path.join(ROOT, \"cli\")]")}),
    ("lib-symbols", "the floor calls the folder above it (declared by hand, no #include)",
     {"lib/low/low.c": ("return pmi_low_helper();", "int pmi_high(void);\n\treturn pmi_high();")}),
    ("lib-symbols", "the floor calls up through the public API",
     {"include/pagemap/fam.h": ("int pm_low(void);", "int pm_low(void);\nint pm_up(void);"),
      "lib/high/high.c": ("int pmi_high(void)",
                          "int pm_up(void)\n{\n\treturn 0;\n}\n\nint pmi_high(void)"),
      "lib/low/low.c": ("return pmi_low_helper();", "return pm_up();")}),
    ("cli-symbols", "the output layer calls a folder it may not use",
     {"folders.mk": ("CLI_USES_out := root out", "CLI_USES_out := out"),
      "cli/out/out.h": None,
      "cli/out/out.c": "int cli_out(void);\nint cli_root(void);\n\n"
                       "int cli_out(void)\n{\n\treturn cli_root();\n}\n",
      "cli/main.c": "#include \"cli.h\"\n\nint cli_root(void);\n\n"
                    "int cli_root(void)\n{\n\treturn 0;\n}\n\n"
                    "int main(void)\n{\n\treturn cli_out() + pm_low();\n}\n"}),
    ("no-circle", "two folders call each other (both allowed)",
     {"folders.mk": ("LIB_USES_low := low", "LIB_USES_low := low high"),
      "lib/low/low.c": ("return pmi_low_helper();", "int pmi_high(void);\n\treturn pmi_high();")}),
    ("no-circle", "the CLI's output layer and its root call each other (both allowed)",
     {"cli/main.c": ("int main(void)", "int cli_root_fn(void);\n\nint cli_root_fn(void)\n{\n\treturn 1;\n}\n\n"
                                       "int main(void)"),
      "cli/out/out.c": ("\treturn 0;", "\treturn cli_root_fn();"),
      "cli/out/out.h": ("#include \"cli.h\"\n", "#include \"cli.h\"\nint cli_root_fn(void);\n")}),
    ("file-size", "a file over the limit",
     {"cli/out/out.c": "#include \"out.h\"\n" + "\n" * MAX_FILE_LINES
      + "int cli_out(void)\n{\n\treturn 0;\n}\n"}),
    ("function-size", "a function over the limit",
     {"lib/low/long.c": "#include \"low.h\"\n" + long_function(MAX_FUNCTION_LINES + 1)}),
    ("pm-names", "an internal struct named pm_",
     {"lib/low/low.h": ("struct pmi_low {", "struct pm_low_state {")}),
    ("pm-names", "an internal macro named PM_",
     {"lib/low/low.h": ("#define PMI_LOW_H", "#define PMI_LOW_H\n#define PM_LIMIT 4")}),
    ("pm-names", "an internal ops object named pm_",
     {"lib/high/high.h": ("int pmi_high(void);",
                          "int pmi_high(void);\nextern const struct pmi_low pm_high_ops;")}),
    ("pm-names", "an internal enum constant named PM_",
     {"lib/high/high.h": ("int pmi_high(void);",
                          "int pmi_high(void);\nenum pmi_kind { PMI_A, PM_B };")}),
]


def make_tree(root, changes, build=None):
    """The clean tree with @changes at @root; its objects compiled, unless @build (objects to
    reuse) is given."""
    files = dict(CLEAN)
    for path, change in changes.items():
        if change is None:
            files.pop(path)
        elif isinstance(change, tuple):
            assert change[0] in files[path], (path, change[0])
            files[path] = files[path].replace(change[0], change[1], 1)
        else:
            files[path] = change
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)
    if build:
        return build
    build = os.path.join(root, "build")
    srcs = [p for p in files if p.endswith(".c") and p.startswith(("lib/", "cli/"))]
    inc = ["-I" + os.path.join(root, d)
           for d in ("include", "lib/low", "lib/high", "cli", "cli/out")]
    # One compiler run for the tree (the sources' names differ), its objects then put where make
    # puts them.
    subprocess.run([os.environ.get("CC", "cc"), "-c", "-w"] + inc
                   + [os.path.join(root, p) for p in srcs], check=True, cwd=root)
    for path in srcs:
        obj = os.path.join(build, path[:-2] + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        os.rename(os.path.join(root, os.path.basename(path)[:-2] + ".o"), obj)
    return build


def self_test():
    ok = True
    with tempfile.TemporaryDirectory(prefix="check-layout.") as tmp:
        root = os.path.join(tmp, "clean")
        clean_build = make_tree(root, {})
        bad, _ = run(root, clean_build)
        broken = [r for r in bad if bad[r]]
        if broken:
            ok = False
            print("FAIL layout self-test: the clean tree breaks " + ", ".join(broken))
            report(bad, {}, "layout self-test (clean tree)")
        else:
            print("PASS layout self-test: the clean tree keeps every rule")
        for n, (rule, what, changes) in enumerate(BREAKS):
            root = os.path.join(tmp, f"break{n}")
            symbols = rule in ("lib-symbols", "cli-symbols", "no-circle")
            bad, _ = run(root, make_tree(root, changes, None if symbols else clean_build))
            if bad[rule]:
                path, line, why = bad[rule][0]
                print(f"PASS layout self-test: {what}: {rule} fails ({path}:{line}: {why})")
            else:
                ok = False
                print(f"FAIL layout self-test: {what}: {rule} did not fail")
            shutil.rmtree(root)
    return ok


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return 0 if self_test() else 1
    if len(sys.argv) > 1 and sys.argv[1] == "--internal-names":
        src = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("PAGEMAP_SRC", ".")
        for name in sorted(internal_names(src)):
            print(name)
        return 0
    src = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PAGEMAP_SRC", ".")
    build = os.environ.get("PAGEMAP_BUILD", os.path.join(src, "build"))
    bad, note = run(src, build)
    return 0 if report(bad, note) else 1


if __name__ == "__main__":
    sys.exit(main())
