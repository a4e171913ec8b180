#!/usr/bin/env python3
"""snapshot_freeze_kill.py - `pagemap snapshot --freeze` ended while it holds: by SIGKILL, SIGQUIT, SIGPIPE and
SIGUSR1, SIGALRM sent at a random moment of the hold (and SIGTERM while -p stops its processes), by SIGXFSZ (ulimit -f, the snapshot written to a file) and
by SIGPIPE from its own message (-p run as uid 65534: one process of that user stopped, then another user's
refused, said on a stderr whose reader has gone). A freeze left by a pagemap killed with its guardian (both
SIGKILLed) is thawed by the next run (its mark names a holder that is gone).
Each end must leave nothing held: cgroup.events "frozen 0" (--cgroup) and no process of ours in state T (-p),
once pagemap's guardian has had its turn (5 s at most: a bound for a failure, not a timing). Every wait is bounded
(a run that does not end in RUN_LIMIT seconds is killed and fails the test): a regression fails, never hangs CI.
Usage: snapshot_freeze_kill.py PAGEMAP CGROUP_DIR PID_IN_CGROUP... -- PID... [u=PID_OF_65534] [n=TRIALS]
The cgroup and processes are the caller's (snapshot_freeze_kill.sh); prints PASS/FAIL lines with counts.
"""
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

pagemap, cgdir = sys.argv[1], sys.argv[2]
sep = sys.argv.index("--")
cg_pids = [int(p) for p in sys.argv[3:sep]]
stop_pids = [int(p) for p in sys.argv[sep + 1:] if p.isdigit()]
opt = dict(p.split("=", 1) for p in sys.argv[sep + 1:] if "=" in p)
trials = int(opt.get("n", "5"))
nobody_pid = int(opt.get("u", "0"))
cgname = "/" + os.path.relpath(cgdir, os.path.dirname(cgdir))
work = tempfile.mkdtemp()
RUN_LIMIT = 30	# seconds for one pagemap run: its snapshot takes well under 1 s, a freeze gives up after 10 s
hung = []	# the runs that had to be killed: each a failure


def until(cond, secs):
    """Poll @cond until true or @secs have passed; its last value."""
    end = time.monotonic() + secs
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.0005)
    return True


def wait(p, what):
    """p.wait(), bounded: a run still going after RUN_LIMIT s is SIGKILLed and noted as hung."""
    try:
        return p.wait(timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:
        hung.append(what)
        p.kill()
        return p.wait()


def frozen():
    with open(cgdir + "/cgroup.events") as f:
        return "frozen 1\n" in f.read()


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"


def held(mode):
    return frozen() if mode == "cgroup" else any(state(p) in "Tt" for p in stop_pids + [nobody_pid] if p)


def release_all():
    """Undo a hold left behind, so that the next trial starts clean (and says it had to)."""
    with open(cgdir + "/cgroup.freeze", "w") as f:
        f.write("0")
    for p in stop_pids + [nobody_pid]:
        if p and state(p) in "Tt":
            os.kill(p, signal.SIGCONT)


def args(mode, how, out):
    if how == "pipe-stderr":	# stops its own process, then is refused the root's: a message while it holds one
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", pagemap, "snapshot", "-p",
                "%d,%d" % (nobody_pid, stop_pids[0]), "--freeze", "-o", out]
    sel = ["--cgroup", cgname] if mode == "cgroup" else ["-p", ",".join(map(str, stop_pids))]
    return [pagemap, "snapshot"] + sel + ["--freeze", "--one-thread", "-o", out]


def trial(mode, how):
    """One run ended by @how; (ended while held, left held)."""
    out = os.path.join(work, "t.snap")
    stderr = subprocess.DEVNULL
    blocks = random.randint(1, 48) * 1024 if how == "xfsz" else resource.RLIM_INFINITY	# a limit inside the file

    def pre():
        # The dispositions a user's shell gives: a test run in the background inherits SIGQUIT ignored.
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)
        if how == "xfsz":
            resource.setrlimit(resource.RLIMIT_FSIZE, (blocks, blocks))
    if how == "pipe-stderr":
        r, stderr = os.pipe()
        os.close(r)	# the reader has gone: a write to stderr is SIGPIPE
    p = subprocess.Popen(args(mode, how, out), stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=pre)
    if stderr != subprocess.DEVNULL:
        os.close(stderr)
    was_held = False
    sig = {"kill": signal.SIGKILL, "quit": signal.SIGQUIT, "pipe": signal.SIGPIPE, "usr1": signal.SIGUSR1,
           "alrm": signal.SIGALRM, "term-stopping": signal.SIGTERM}.get(how)
    if sig:
        until(lambda: p.poll() is not None or held(mode), RUN_LIMIT)
        # SIGTERM undoes the hold itself: sent while the processes are being stopped, one after the other.
        time.sleep(random.uniform(0, 0.0002 if how == "term-stopping" else 0.03))
        was_held = held(mode)
        if p.poll() is None:
            p.send_signal(sig)
    rc = wait(p, "%s-%s" % (mode, how))
    if not sig:
        was_held = True	# the signal came from inside the run, while it wrote
    was_held = was_held and rc == -(sig or {"xfsz": signal.SIGXFSZ}.get(how, signal.SIGPIPE))
    for _ in range(500):	# the guardian's turn: it thaws as soon as pagemap is gone
        if not held(mode):
            break
        time.sleep(0.01)
    left = held(mode)
    if left:
        release_all()
    for f in os.listdir(os.path.dirname(out)):
        if f.startswith("t.snap") or f.startswith(".t.snap"):
            os.unlink(os.path.join(os.path.dirname(out), f))
    return was_held, left, rc


def guardian_of(cgdir):
    """The PID the cgroup's mark names as its holder (pagemap's guardian), or 0."""
    for name in ("trusted.pagemap.frozen_by", "user.pagemap.frozen_by"):
        try:
            return int(os.getxattr(cgdir, name).split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return 0


def trial_left_behind():
    """pagemap and its guardian both SIGKILLed while the cgroup is frozen: a re-run must thaw it after.
    (frozen left, frozen after the re-run, the re-run's exit status)"""
    out = os.path.join(work, "t.snap")
    p = subprocess.Popen(args("cgroup", "kill", out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until(lambda: p.poll() is not None or frozen(), RUN_LIMIT)
    g = guardian_of(cgdir)
    if g:
        os.kill(g, signal.SIGKILL)	# the guardian is the test's grandchild: pagemap forked it
    p.kill()
    wait(p, "left-behind")
    until(lambda: not g or state(g) in "ZX", 5)	# SIGKILL takes effect when it next runs
    left = frozen()
    try:
        r = subprocess.run(args("cgroup", "kill", out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:	# run() has killed it
        hung.append("left-behind re-run")
        r = subprocess.CompletedProcess([], -9, b"", b"hung")
    after = frozen()
    if after:
        release_all()
    for f in os.listdir(work):
        os.unlink(os.path.join(work, f))
    return left, after, r.returncode, r.stderr.decode().strip()


def main():
    rc_all = 0
    os.chmod(work, 0o1777)	# the run as uid 65534 writes there too
    for mode in ("cgroup", "pids"):
        for how in ["kill", "quit", "pipe", "usr1", "alrm", "xfsz"] + (["pipe-stderr", "term-stopping"] if mode == "pids" else []):
            landed = left = 0
            codes = set()
            for _ in range(trials):
                w, l, rc = trial(mode, how)
                landed += w
                left += l
                codes.add(rc)
            name = "snapshot-freeze-kill-%s-%s" % (mode, how)
            if left:
                print("FAIL %s: %d of %d runs left %s held (%d ended by the signal while held; exit %s)" %
                      (name, left, trials, "the cgroup" if mode == "cgroup" else "a process", landed, sorted(codes)))
                rc_all = 1
            elif landed == 0:
                print("SKIP %s: no run ended by the signal while it held (exit %s)" % (name, sorted(codes)))
            else:
                print("PASS %s: 0 of %d runs left anything held (%d ended by the signal while held)" %
                      (name, trials, landed))
    left = still = 0
    for _ in range(3):
        l, a, rc, err = trial_left_behind()
        left += l
        still += a
        if a:
            break	# its exit status and message are the ones said
    if left == 0:
        print("SKIP snapshot-freeze-kill-left-behind: the kills never left the cgroup frozen")
    elif still:
        print("FAIL snapshot-freeze-kill-left-behind: %d of %d re-runs left frozen a cgroup a dead pagemap had frozen "
              "(exit %d: %s)" % (still, left, rc, err))
        rc_all = 1
    else:
        print("PASS snapshot-freeze-kill-left-behind: %d of %d re-runs thawed a freeze a dead pagemap left" % (left, left))
    if hung:
        print("FAIL snapshot-freeze-kill-bounded: %d pagemap run(s) killed after %d s: %s" %
              (len(hung), RUN_LIMIT, ", ".join(hung)))
        rc_all = 1
    return rc_all


try:
    rc = main()
finally:
    try:
        release_all()	# an exception midway leaves nothing held (the caller ends the processes)
    except OSError:
        pass
    shutil.rmtree(work, ignore_errors=True)
sys.exit(rc)
