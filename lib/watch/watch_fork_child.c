/* watch_fork_child.c - the fork snapshot's child: cloned in us or injected into the target, held, let go, killed and reaped. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "inject.h"
#include "watch_fork.h"

/*
 * The snapshot, a child of the watched process that never runs, is made one of two ways.
 * Self: glibc's clone() with exit signal 0 (no SIGCHLD; waitpid(-1) without
 * __WALL or __WCLONE never sees it), every signal blocked, on a small stack
 * of its own, so its few writes land in pages only it has. It closes its
 * copies of our descriptors but one end of a pipe, and exits when the pipe
 * reads EOF: when we die.
 * Another process: clone(flags 0) injected in it by ptrace with
 * PTRACE_O_TRACECLONE, so the child is auto-attached to us and held at its
 * first stop before it runs an instruction, with PTRACE_O_EXITKILL.
 */

/* The snapshot of ourselves: only raw system calls, on its own stack; no signal reaches it but SIGKILL/SIGSTOP. */
__attribute__((no_sanitize_address)) static int snapshot_main(void *arg)
{
	static const uint64_t all = ~0ULL;
	long rfd = (long)(intptr_t)arg;
	char c;

	/* Also glibc's own two signals, which pthread_sigmask leaves unblocked. */
	syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &all, NULL, (long)sizeof(all));
	if (rfd > 0)
		syscall(SYS_close_range, 0L, rfd - 1, 0L);
	syscall(SYS_close_range, rfd + 1, (long)~0U, 0L);
	while (syscall(SYS_read, rfd, &c, 1L) != 0)	/* EOF: the watcher is gone */
		;
	syscall(SYS_exit_group, 0L);
	return 0;
}

static int self_snapshot(struct snap_state *s, pid_t *out)
{
	sigset_t all, old;
	pid_t pid;
	int err = 0;

	if (!s->stack) {
		s->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s->stack == MAP_FAILED) {
			s->stack = NULL;
			return -errno;
		}
	}
	if (s->pipe[0] < 0 && pipe2(s->pipe, O_CLOEXEC) < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Flags 0: exit signal 0, a copy of the address space, no atfork handlers. */
	pid = clone(snapshot_main, (char *)s->stack + STACK_SIZE, 0, (void *)(intptr_t)s->pipe[0]);
	if (pid < 0)
		err = -errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*out = pid;
	return err;
}

/* SIGKILL @pid (ours, or our tracee) and wait for its death; ECHILD: somebody reaped it already. */
static void kill_wait(pid_t pid)
{
	int status;
	pid_t r;

	if (kill(pid, SIGKILL) < 0)
		return;
	do
		r = waitpid(pid, &status, __WALL);
	while ((r < 0 && errno == EINTR) || (r == pid && !WIFEXITED(status) && !WIFSIGNALED(status)));
}

/* Remote: an exit-signal-0 child is never reaped by itself: wait4 it inside the target (it is a zombie by now). */
static void reap_there(struct pmi_inject *in, pid_t there)
{
	int i;

	for (i = 0; i < 100; i++) {
		long r = pmi_inject_syscall(in, SYS_wait4, there, 0, __WALL | WNOHANG, 0, 0, 0);
		struct timespec ms = { 0, 1000000 };

		if (r != 0)	/* reaped, ECHILD (the target reaped it itself), or the mechanism broke */
			return;
		nanosleep(&ms, NULL);
	}
}

/* Inject clone(flags 0) into the attached target; the child is held stopped as our tracee. */
static int remote_clone(struct pmi_inject *in, pid_t *child, pid_t *there)
{
	long r;
	int err;

	*child = 0;
	err = pmi_inject_set_options(in, PTRACE_O_TRACECLONE);
	if (err)
		return err;
	/* Its own stack: let go before it is held (we are killed), it exits instead of running on. */
	r = pmi_inject_exit_stack(in);
	if (r > 0)
		r = pmi_inject_syscall(in, SYS_clone, 0, r, 0, 0, 0, 0);
	*child = pmi_inject_event_pid(in);
	err = pmi_inject_set_options(in, 0);
	if (r < 0)
		return (int)r;
	*there = (pid_t)r;
	if (*child <= 0)	/* cannot be: TRACECLONE reports every exit-signal-0 clone */
		return -EIO;
	if (!err)
		err = pmi_inject_hold_child(*child);
	if (!err) {
		/* Its copies of the target's descriptors would hold pipes, sockets and locks open. */
		err = pmi_inject_child_close_fds(in, *child);
		if (err == -ENOSYS)	/* close_range is 5.9+: keep them */
			err = 0;
	}
	if (err) {
		kill_wait(*child);
		reap_there(in, *there);
		*child = 0;
	}
	return err;
}

/*
 * Remote: attach once; make a new snapshot (if @make), then kill and reap the
 * old one (if any). If the target cannot be attached (it exited), a drop
 * still kills our tracee; its new parent (init) reaps it.
 */
static int remote_cycle(struct pm_watch *w, bool make, pid_t *child, pid_t *there)
{
	struct snap_state *s = w->priv;
	struct pmi_inject *in;
	int err = pmi_inject_attach(w->pid, &in);

	if (err) {
		if (!make && s->snap)
			kill_wait(s->snap);
		return err;
	}
	if (make)
		err = remote_clone(in, child, there);
	if (!err && s->snap) {
		kill_wait(s->snap);
		reap_there(in, s->snap_there);
	}
	pmi_inject_detach(in);
	return err;
}

/* Drop the snapshot: kill and reap it (inside the target too). */
void pmi_watch_snap_drop(struct pm_watch *w)
{
	struct snap_state *s = w->priv;

	if (s->snap) {
		if (w->pid)
			remote_cycle(w, false, NULL, NULL);
		else
			kill_wait(s->snap);
	}
	pm_target_close(s->st);
	s->st = NULL;
	s->snap = 0;
}

/* Make a new snapshot (its PID, its PID in the target, its pagemap); the current one stays. */
int pmi_watch_snap_take(struct pm_watch *w, pid_t *child, pid_t *there, struct pm_target **st)
{
	struct snap_state *s = w->priv;
	pid_t old = s->snap;
	int err;

	*child = *there = 0;
	*st = NULL;
	if (s->err)
		return s->err;
	/* remote_cycle kills s->snap after making the new one: keep it for the comparison. */
	s->snap = 0;
	err = w->pid ? remote_cycle(w, true, child, there) : self_snapshot(s, child);
	s->snap = old;
	if (err) {
		if (w->pid)
			s->err = err;	/* ptrace does not work on it: not per range, not per interval */
		return err;
	}
	*st = pm_target_open(w->ctx, *child);
	return *st ? 0 : (errno ? -errno : -ESRCH);
}

/* Drop a snapshot pmi_watch_snap_take made, keeping the current one. */
void pmi_watch_snap_drop_new(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st)
{
	struct snap_state *s = w->priv;
	struct pm_target *old_st = s->st;
	pid_t old = s->snap, old_there = s->snap_there;

	s->snap = child;
	s->snap_there = there;
	s->st = st;
	pmi_watch_snap_drop(w);
	s->snap = old;
	s->snap_there = old_there;
	s->st = old_st;
}

/* Drop the current snapshot and keep the one pmi_watch_snap_take made. */
void pmi_watch_snap_switch_to(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st)
{
	struct snap_state *s = w->priv;

	pmi_watch_snap_drop(w);
	s->snap = child;
	s->snap_there = there;
	s->st = st;
}

/* Take a new snapshot, then drop the old one: a failure keeps the old one. */
int pmi_watch_snap_retake(struct pm_watch *w)
{
	struct pm_target *st;
	pid_t child, there;
	int err = pmi_watch_snap_take(w, &child, &there, &st);

	if (!err)
		pmi_watch_snap_switch_to(w, child, there, st);
	else if (child)
		pmi_watch_snap_drop_new(w, child, there, st);
	return err;
}
