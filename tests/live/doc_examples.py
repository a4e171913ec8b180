#!/usr/bin/env python3
"""doc_examples.py - every example of README.md and of the man pages' EXAMPLES (and of any other .EX/.nf block
whose lines are commands) runs, and its exit status and the shape of its output are checked.

The examples are found mechanically (a new one is picked up without editing this file): README.md's indented
code blocks and the pagemap commands its prose writes inline with options and no placeholder; in man/*.[135], the .EX/.EE and .nf/.fi blocks and the .B lines of EXAMPLES, and the blocks of other
sections whose lines begin with a command. Each line is a command ("$ " prompts: the lines after one are its
output, checked with every number free). Placeholders are replaced by what the test starts or makes (SUBS):
PIDs by demo processes (build/pagemap-demo), addresses by the demo's regions, a user, cgroup and directories
by the test's own, a captured tree by tests/fixtures/demo-6.18-user. Input snapshots an example names but
does not make are taken of the demo first. What cannot run here is in SKIPS, with the reason.

Checks: the status (0; diff and audit also answer 1), then the shape: JSON parses (one document, or one per
line) and has the -o columns as keys; a table's heading line names the -o columns; a written file is what
its name says (SVG, HTML, a snapshot, Prometheus text); otherwise output is not empty. Later stages of a
pipeline (jq, grep, awk, head) take the first stage's output and must succeed (grep's 1, no line matched, is
said). The C program of libpagemap(3) is compiled against the built library through a pagemap.pc of the build.
Usage: tests/live/doc_examples.py SRC BUILD   (from tests/live/doc_examples.sh)
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC, BUILD = sys.argv[1], sys.argv[2]

# (regex on the command, reason): examples that cannot run here.
SKIPS = [
    (r"^make check$", "it is the run that holds this test (make check)"),
    (r"python3 -m venv", "tests/live/python_venv.sh runs it: a venv made, the package installed into it"),
    (r"pyenv which", "needs pyenv; tests/live/python_venv.sh runs make install-python with pyenv's Python when it is there"),
    (r"make install-python PIP_FLAGS=--break-system-packages",
     "installs into the system's Python (/usr/local): a test does not change the machine"),
    (r"pagemap serve", "serves until stopped, on an address of the machine; tests/live/serve*.sh run serve on their own"),
    (r"snapshot --cgroup \S+ --freeze",
     "freezes a whole cgroup; tests/live/snapshot_freeze.sh runs it on cgroups of its own"),
    (r"^export PKG_CONFIG_PATH=\$HOME/\.local",
     "an install into $HOME/.local: tests/live/install.sh builds and runs the program so (user-install-rpath-program)"),
]

# Placeholders of the text -> what the test made ({KEY} filled per run). Addresses are done apart (addresses()).
SUBS = [
    (r"\$\(pidof postgres\)", "{D}"),
    (r"\b1234\b", "{D}"), (r"\b1235\b", "{D2}"), (r"\b5678\b", "{D2}"), (r"\b9012\b", "{D3}"),
    (r"\balice\b", "{USER}"),
    (r"/system\.slice(/[\w.@-]+)?", "{CGROUP}"),
    (r"/var/lib/postgresql", "{FILES}"),
    (r"/var/lib/pagemap", "{SNAPDIR}"),
    (r"/var/lib/prometheus/node-exporter", "{TEXTDIR}"),
    (r"\bsleep 10\b", "sleep 0.2"),
]
ANSWERS = {"diff": (0, 1), "audit": (0, 1)}	# commands whose 1 is an answer (pagemap(1), EXIT STATUS)
results = {"PASS": 0, "FAIL": 0, "SKIP": 0}


def say(kind, name, why=""):
    results[kind] += 1
    print(f"{kind} doc-example {name}{': ' + why if why else ''}", flush=True)


def unroff(s):
    for a, b in ((r"\fB", ""), (r"\fP", ""), (r"\fR", ""), (r"\fI", ""), (r"\-", "-"), (r"\(aq", "'"),
                 (r"\(dq", '"'), (r"\&", ""), (r"\%", ""), (r"\ ", " "), (r"\e", "\\")):
        s = s.replace(a, b)
    return s


def commands_of(lines):
    """Lines of a block -> [(command, expected output lines)]: '\\' continues a line; "$ " marks prompts."""
    out, prompts = [], any(l.startswith("$ ") for l in lines)
    cur = None
    for raw in lines:
        line = raw.rstrip()
        if cur is not None and cur[0].endswith("\\"):
            cur[0] = cur[0][:-1].rstrip() + " " + line.strip()
            continue
        if prompts and not line.startswith("$ "):
            if cur is not None and line:
                cur[1].append(line)
            continue
        if not line.strip():
            continue
        cur = [line[2:] if prompts else line.strip(), []]
        out.append(cur)
    return [(c, e) for c, e in out]


def readme_examples():
    lines = open(os.path.join(SRC, "README.md"), encoding="utf-8").read().split("\n")
    blocks, cur, prev_blank = [], None, True
    for l in lines + [""]:
        if l.startswith("    ") and (cur is not None or prev_blank):
            cur = cur if cur is not None else []
            cur.append(l[4:])
        elif not l.strip() and cur is not None:
            cur.append("")
        else:
            if cur:
                blocks.append(cur)
            cur = None
        prev_blank = not l.strip()
    # Commands written inline in the prose: a pagemap command with an option and no placeholder (PID, FILE,
    # [..], a|b, ...), which the text offers to be typed as it is.
    for span in re.findall(r"`((?:sudo )?pagemap [^`]*-[^`]*)`", "\n".join(lines)):
        if not re.search(r"\b[A-Z]{2,}\b|\[|\||\.\.\.", span):
            yield ("README.md", "sh", span, [])
    for b in blocks:
        while b and not b[-1]:
            b.pop()
        if b[0].startswith("import "):
            yield ("README.md", "python", "\n".join(b), [])
            continue
        for para in "\n".join(b).split("\n\n"):
            pl = para.split("\n")
            if re.match(r"#\s*\S+\.(yml|yaml|conf|toml)\s*$", pl[0]):
                yield ("README.md", "file", para, [])
                continue
            for c, e in commands_of(pl):
                yield ("README.md", "sh", re.sub(r"\s+#\s.*$", "", c), e)


COMMANDISH = re.compile(r"^(\$ |sudo |pagemap |PAGEMAP_\w+=|kill |cc |make )")


def man_examples(path):
    text = open(path, encoding="utf-8").read().split("\n")
    section, block, in_rs = "", None, False
    found = []
    for l in text:
        if l.startswith(".SH"):
            section = l[3:].strip().strip('"')
            continue
        if l.startswith((".EX", ".nf")):
            block = []
            continue
        if l.startswith((".EE", ".fi")):
            if block is not None:
                found.append((section, [unroff(x) for x in block]))
            block = None
            continue
        if block is not None:
            block.append(l)
        elif section.startswith("EXAMPLE") and l.startswith(".B ") and in_rs:
            found.append((section, [unroff(l[3:].strip())]))
        if l.startswith(".RS"):
            in_rs = True
        elif l.startswith(".RE"):
            in_rs = False
    name = os.path.basename(path)
    for section, b in found:
        b = [x[4:] if x.startswith("    ") else x for x in b]
        if any(x.startswith("#include") for x in b):
            yield (name, "c", "\n".join(b), [])
            continue
        if section == "SYNOPSIS" or not section.startswith("EXAMPLE") and not any(COMMANDISH.match(x) for x in b):
            continue	# a synopsis shows the form, not an example
        for para in "\n".join(b).split("\n\n"):
            pl = para.strip("\n").split("\n")
            if re.match(r"#\s*\S+\.(yml|yaml|conf|toml)\s*$", pl[0]):
                yield (name, "file", para, [])
                continue
            if not section.startswith("EXAMPLE") and not COMMANDISH.match(pl[0]):
                continue
            for c, e in commands_of(pl):
                yield (name, "sh", re.sub(r"\s+#\s.*$", "", c), e)


def split_top(s, seps):
    """Split @s at the separators in @seps outside quotes and $( ): [(piece, separator that ended it)]."""
    out, cur, q, depth, i = [], "", None, 0, 0
    while i < len(s):
        ch = s[i]
        if q:
            q = None if ch == q else q
            cur += ch
        elif ch in "'\"":
            q = ch
            cur += ch
        elif s.startswith("$(", i):
            depth += 1
            cur += "$("
            i += 2
            continue
        elif ch == ")" and depth:
            depth -= 1
            cur += ch
        else:
            hit = next((x for x in seps if not depth and s.startswith(x, i)), None)
            if hit:
                out.append((cur.strip(), hit))
                cur = ""
                i += len(hit)
                continue
            cur += ch
        i += 1
    out.append((cur.strip(), None))
    return out


class Demo:
    """A demo process of our own: its PID and its regions (NAME -> (start, end))."""

    def __init__(self):
        self.p = subprocess.Popen([os.path.join(BUILD, "pagemap-demo")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline())
        self.regions = {}
        for _ in range(5):
            n, r = self.p.stdout.readline().split()
            a, b = r.split("-")
            self.regions[n] = (int(a, 16), int(b, 16))

    def stop(self):
        os.kill(self.pid, 18)	# SIGCONT, in case an example left it stopped
        self.p.stdin.close()
        self.p.wait()


def addresses(cmd, demo):
    """Addresses of the text -> the demo's regions, in order: a range -> a region, an address -> in one."""
    order = ["demo-sparse", "demo-thp", "demo-anon", "demo-guard", "demo-protnone"]
    seen = {}

    def region(lit):
        if lit not in seen:
            seen[lit] = demo.regions[order[len(seen) % len(order)]]
        return seen[lit]

    def rng(m):
        a, b = region(m.group(0))
        return f"{a:#x}-{b:#x}"

    cmd = re.sub(r"\b0x[0-9a-f]{9,}-0x[0-9a-f]{9,}\b", rng, cmd)
    return re.sub(r"\b0x[0-9a-f]{9,}\b", lambda m: f"{region(m.group(0))[0] + (int(m.group(0), 16) & 0xfff):#x}", cmd)


def pagemap_args(stage):
    """The argv of a stage that runs pagemap (after env assignments and sudo), else None."""
    try:
        w = shlex.split(stage)
    except ValueError:
        return None
    while w and (re.match(r"^\w+=", w[0]) or w[0] == "sudo"):
        w = w[1:]
    return w[1:] if w and w[0] == "pagemap" else None


def subcommand(args):
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("--root", "-R", "--snapshot", "-S", "--backend") else 1
    return args[i] if i < len(args) else None, args[i + 1:] if i < len(args) else []


def opt(args, short, long_):
    for i, a in enumerate(args):
        if a in (short, long_) and i + 1 < len(args):
            return args[i + 1]
        if long_ and a.startswith(long_ + "="):
            return a.split("=", 1)[1]
    return None


def check_shape(args, out, cwd):
    """'' when the output of pagemap ARGS has the shape the example shows, else why not."""
    cmd, rest = subcommand(args)
    if cmd in ("render", "snapshot") and opt(rest, "-o", "--output") or "--append" in rest:
        f = os.path.join(cwd, opt(rest, "-o", "--output") or opt(rest, None, "--append"))
        if not os.path.isfile(f) or os.path.getsize(f) == 0:
            return f"no file {f} written"
        head = open(f, "rb").read(64)
        want = {".svg": (b"<svg", b"<?xml"), ".html": (b"<!DOCTYPE html", b"<!doctype html", b"<html")}
        ext = os.path.splitext(f)[1]
        if ext in want and not head.lstrip().startswith(want[ext]):
            return f"{f} is not {ext[1:]}: {head[:20]!r}"
        if cmd == "snapshot" and not head.startswith(b"\x89PMSNAP"):
            return f"{f} is not a snapshot"
        return ""
    if cmd == "export" and opt(rest, None, "--textfile"):
        d = os.path.join(cwd, opt(rest, None, "--textfile"))
        proms = [x for x in os.listdir(d) if x.endswith(".prom")]
        if not proms or "# TYPE" not in open(os.path.join(d, proms[0])).read():
            return f"no Prometheus text file in {d}"
        return ""
    if not out.strip():
        return "no output"
    if cmd == "v2p" and re.search(r"\bnot mapped\b", out):
        return "an address of the example is not mapped in its process"
    cols = opt(rest, "-o", "--output")
    if cmd == "render":	# render -f ansi: a picture, no columns
        cols = None
    names = [c for c in (cols or "").lstrip("+").split(",") if c]
    if "-J" in rest or "--json" in rest:
        try:
            docs = [json.loads(out)]
        except ValueError:
            try:
                docs = [json.loads(l) for l in out.splitlines() if l.strip()]
            except ValueError as e:
                return f"JSON does not parse: {e}"
        keys = set()

        def walk(v):
            if isinstance(v, dict):
                keys.update(v)
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        for d in docs:
            walk(d)
        miss = [n for n in names if n.lower() not in keys]
        return f"JSON lacks the keys {miss}" if miss else ""
    if cmd == "top":	# a frame: the header lines, then the table's headings
        lines = out.splitlines()
        heads = [l.split() for l in lines if l.split() and all(re.match(r"^[A-Z][A-Z0-9_%/]*$", h) for h in l.split())]
        if not lines or not lines[0].startswith("pagemap top - ") or not heads:
            return f"not a frame of top (its header, then headings): {lines[:2]!r}"
        miss = [n for n in names if n not in heads[0]]
        return f"the heading line lacks {miss}: {' '.join(heads[0])!r}" if miss else ""
    if {"-n", "--noheadings", "-r", "--raw"} & set(rest) or cmd in (None, "render", "track", "export") or \
            "--describe" in rest or "--export" in rest:
        return ""	# rows only, or not a table
    head = out.splitlines()[0].split()
    if not all(re.match(r"^[A-Z][A-Z0-9_%]*$", h) for h in head):
        return f"the first line is not a table's headings: {out.splitlines()[0]!r}"
    miss = [n for n in names if n not in head]
    return f"the heading line lacks {miss}: {out.splitlines()[0]!r}" if miss else ""


def make_inputs(stage, cwd, demo):
    """Snapshots an example reads but does not write: taken of the demo first (as the text's earlier steps would)."""
    args = pagemap_args(stage) or []
    cmd, rest = subcommand(args)
    if cmd == "snapshot":
        return
    for i, a in enumerate(args):
        f = re.sub(r"@-?\d+$", "", a)
        if re.search(r"\.(pm)?snap$|\.series$", f) and not os.path.exists(os.path.join(cwd, f)) \
                and (i == 0 or args[i - 1] not in ("-o", "--output")):
            subprocess.run([os.path.join(BUILD, "pagemap"), "snapshot", "-p", str(demo.pid), "-o", f], cwd=cwd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


def run_sh(name, cmd, expect, cwd, env, demo, fill):
    for rx, why in SKIPS:
        if re.search(rx, cmd):
            say("SKIP", name, f"{cmd!r}: {why}")
            return
    cmd = addresses(cmd, demo)
    for rx, rep in SUBS:
        cmd = re.sub(rx, rep, cmd)
    cmd = cmd.format(**fill)
    if re.match(r"^sudo ", cmd):
        if os.geteuid() != 0:
            say("SKIP", name, f"{cmd!r}: needs root")
            return
        cmd = cmd[5:]
    for part, _ in split_top(cmd, [";"]):
        if part:
            run_one(name, part, expect, cwd, env, demo)


def run_one(name, cmd, expect, cwd, env, demo):
    t0 = time.monotonic()
    stages = split_top(cmd, ["||", "|"])
    first = stages[0][0]
    # "|| exit 1": the script's answer to the status, which the status check below already makes.
    rest = [s for s, _ in stages[1:] if not re.match(r"^exit \d+$", s)]
    redir = split_top(first, [">"])
    make_inputs(redir[0][0], cwd, demo)
    args = pagemap_args(redir[0][0]) or []
    sub = subcommand(args)[0]
    stop_after = None
    if sub == "track" and "--" not in args and len([a for a in subcommand(args)[1] if not a.startswith("-")]) < 3:
        stop_after = 3	# track PID [INTERVAL] runs until Ctrl-C
    if sub == "top" and not ({"-n", "--iterations"} & set(args) or any(a.startswith("--iterations=") for a in args)):
        stop_after = 3	# top runs until q or Ctrl-C (frames, here: no terminal)
    try:
        p = subprocess.Popen(["sh", "-c", first], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace", start_new_session=True)
        out, err = p.communicate(timeout=stop_after or 120)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGINT)	# Ctrl-C, as its user would end it
        out, err = p.communicate(timeout=30)
        rc = 0 if p.returncode in (0, 130, -2) else p.returncode
    ok = ANSWERS.get(sub, (0,))
    if rc not in ok:
        say("FAIL", name, f"{cmd!r}: exit {rc}, want {' or '.join(map(str, ok))}: {err.strip()[-300:]}")
        return
    if len(redir) > 1 and redir[1][0]:
        out = open(os.path.join(cwd, redir[1][0])).read()
    if not args:	# kill, sleep: their status is their answer
        why = ""
    elif sub == "diff" and rc == 0 and not out.strip():
        why = ""	# nothing differs: no row to show
    else:
        why = check_shape(args, out, cwd)
    if not why and expect:
        got = out.splitlines()
        for w, g in zip(expect, got + [""] * len(expect)):
            rx = "^" + re.sub(r"\\\d+", r"\\d+", re.sub(r"\d+", r"\\d+", re.escape(w))) + "$"
            if not re.match(rx, g):
                why = f"output {g!r}, the text shows {w!r}"
                break
    if why:
        say("FAIL", name, f"{cmd!r}: {why}")
        return
    note = ""
    for st in rest:
        q = subprocess.run(["sh", "-c", st], cwd=cwd, env=env, input=out, capture_output=True, text=True)
        if q.returncode == 1 and st.startswith("grep") and not q.stdout:
            note = f" (no line matched {st!r} here)"
        elif q.returncode != 0:
            say("FAIL", name, f"{cmd!r}: {st!r} exited {q.returncode}: {q.stderr.strip()[-200:]}")
            return
        elif st.startswith("jq") and any(l.strip() == "null" for l in q.stdout.splitlines()):
            say("FAIL", name, f"{cmd!r}: {st!r} printed null: the JSON has no such field")
            return
        out = q.stdout
    say("PASS", name, f"{cmd!r}{note} ({time.monotonic() - t0:.1f} s)")


def run_c(name, text, cwd):
    with open(os.path.join(cwd, "present.c"), "w") as f:
        f.write(text + "\n")


def main():
    asan = b"libasan" in subprocess.run(["readelf", "-d", os.path.join(BUILD, "pagemap")], capture_output=True).stdout
    examples = list(readme_examples())
    pages = sorted({os.path.realpath(os.path.join(SRC, "man", f)) for f in os.listdir(os.path.join(SRC, "man"))
                    if re.search(r"\.[135]$", f)})
    for p in pages:
        examples += list(man_examples(p))
    work = tempfile.mkdtemp()
    demos = [Demo() for _ in range(3)]
    try:
        run_all(examples, work, demos, asan)
    finally:
        for d in demos:
            d.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(examples)} examples ({sum(results.values())} commands, a line's ';' apart): {results['PASS']} passed, "
          f"{results['FAIL']} failed, {results['SKIP']} skipped")
    return 1 if results["FAIL"] else 0


def setup(work, demos, asan):
    """The environment the examples run in: PATH with the build's pagemap (and a cc that adds ASan's flags under
    ASan), a pagemap.pc of the build, the loader pointed at the build; the placeholders' values."""
    bin_ = os.path.join(work, "bin")
    os.makedirs(os.path.join(work, "pkgconfig"))
    os.makedirs(bin_)
    os.symlink(os.path.join(BUILD, "pagemap"), os.path.join(bin_, "pagemap"))
    if asan:
        with open(os.path.join(bin_, "cc"), "w") as f:
            f.write('#!/bin/sh\nexec /usr/bin/cc -fsanitize=address,undefined "$@"\n')
        os.chmod(os.path.join(bin_, "cc"), 0o755)
    with open(os.path.join(work, "pkgconfig", "pagemap.pc"), "w") as f:
        f.write(f"libdir={BUILD}\nincludedir={SRC}/include\n\nName: pagemap\nDescription: the build's libpagemap\n"
                f"Version: 0\nLibs: -L${{libdir}} -lpagemap\nLibs.private: -lzstd -ldl\nCflags: -I${{includedir}}\n")
    env = dict(os.environ, PATH=bin_ + ":" + os.environ["PATH"], PKG_CONFIG_PATH=os.path.join(work, "pkgconfig"),
               LD_LIBRARY_PATH=BUILD, HOME=work, PYTHONPATH=os.path.join(BUILD, "python", "lib"))
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    env.pop("MFLAGS", None)
    for d in ("files", "snapdir", "textdir"):
        os.makedirs(os.path.join(work, d))
    for i in range(3):	# files of our own, read into the page cache
        with open(os.path.join(work, "files", f"f{i}"), "w") as f:
            f.write("pagemap\n" * 1000 * (i + 1))
    subprocess.run([os.path.join(BUILD, "pagemap"), "snapshot", "-p", str(demos[0].pid), "-o",
                    os.path.join(work, "snapdir", "kept.pms")], check=True, stderr=subprocess.DEVNULL)
    cg = "/"
    for l in open(f"/proc/{demos[0].pid}/cgroup"):
        if l.startswith("0::"):
            cg = l[3:].strip()
    fill = dict(D=demos[0].pid, D2=demos[1].pid, D3=demos[2].pid, USER=subprocess.run(
        ["id", "-un"], capture_output=True, text=True).stdout.strip(), CGROUP=cg,
        FILES=os.path.join(work, "files"), SNAPDIR=os.path.join(work, "snapdir"),
        TEXTDIR=os.path.join(work, "textdir"))
    return env, fill


def page_dir(work, name):
    """Each page's examples run in a directory of their own: `capture` (a captured tree, pid 4243), a Makefile
    for `track -- make`."""
    d = os.path.join(work, "run-" + name)
    os.makedirs(d)
    subprocess.run([os.path.join(SRC, "tests", "fixtures", "unpack"), os.path.join(SRC, "tests", "fixtures",
                    "demo-6.18-user"), os.path.join(d, "capture")], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=dict(os.environ, PAGEMAP_BUILD=BUILD))
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all:\n\t@sleep 0.3\n")
    return d


def run_all(examples, work, demos, asan):
    env, fill = setup(work, demos, asan)
    dirs, counts = {}, {}
    for src, kind, text, expect in examples:
        counts[src] = counts.get(src, 0) + 1
        name = f"{src}#{counts[src]}"
        cwd = dirs.get(src) or dirs.setdefault(src, page_dir(work, src))
        if kind == "file":
            say("SKIP", name, f"{text.splitlines()[0]!r}: a configuration file, not a command")
        elif kind == "c":
            run_c(name, text, cwd)
            say("PASS", name, "the program of EXAMPLES written to present.c (built and run by the commands after it)")
        elif kind == "python":
            if asan:
                say("SKIP", name, "the Python example under ASan (python/run-tests runs the package so)")
                continue
            # The Python the package is built with (python/python.mk's PY_BUILD), whose numpy is Debian's.
            py = os.environ.get("PY_BUILD", "/usr/bin/python3")
            q = subprocess.run([py, "-c", text], cwd=cwd, env=env, capture_output=True, text=True)
            if q.returncode == 0 and q.stdout.startswith("[("):
                say("PASS", name, f"Python: {q.stdout.strip()[:60]}")
            else:
                say("FAIL", name, f"Python: exit {q.returncode}: {(q.stdout + q.stderr).strip()[-300:]}")
        elif asan and re.search(r"-static\b", text):
            say("SKIP", name, f"{text!r}: ASan does not link statically (tests/live/install.sh links it without)")
        elif re.match(r"^make ", text):
            run_make(name, text, cwd, env, asan)
        else:
            run_sh(name, text, expect, cwd, env, demos[0], fill)


def run_make(name, text, cwd, env, asan):
    """make TARGET of the README, in the source tree, for this build (BUILD=, SANITIZE= as the build was made)."""
    for rx, why in SKIPS:
        if re.search(rx, text):
            say("SKIP", name, f"{text!r}: {why}")
            return
    if asan:
        say("SKIP", name, f"{text!r}: the README's make targets are of the plain build (make check runs them)")
        return
    w = shlex.split(text)
    q = subprocess.run(w[:1] + ["-s", "-C", SRC, "BUILD=" + BUILD] + w[1:], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    why = "" if q.returncode == 0 else f"exit {q.returncode}: {(q.stdout + q.stderr).strip()[-300:]}"
    if not why and "demo" in w and not re.search(r"^demo process \d+;.*^\$ pagemap maps \d+", q.stdout, re.S | re.M):
        why = f"no demo process and maps shown: {q.stdout[:200]!r}"
    if not why and "python" in w and not os.path.isdir(os.path.join(BUILD, "python", "lib", "libpagemap")):
        why = f"no {BUILD}/python/lib/libpagemap"
    say("FAIL" if why else "PASS", name, f"{text!r}{': ' + why if why else ''}")


if __name__ == "__main__":
    sys.exit(main())
