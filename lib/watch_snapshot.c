/* watch_snapshot.c - write watch back end: a fork snapshot of the target, compared page by page (PFN or exclusive bit). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "inject.h"
#include "watch.h"

/*
 * The "UndoDB method". A reset takes a snapshot: a child of the watched
 * process that shares its memory copy-on-write and never runs. A private
 * anonymous page the process writes afterwards is copied (COW), so at the
 * next collect its frame differs from the snapshot's (PFNs visible: root),
 * or, PFNs hidden, it is mapped only once (bit 56 exclusive) while an
 * unwritten one is still mapped twice. Pages of MAP_SHARED mappings have
 * no COW: they are left out (counted in shared_bytes; a range with nothing
 * else is refused). Page cache pages of private file mappings were never
 * written (a written one becomes anonymous), nor is the zero page.
 *
 * Self: glibc's clone() with exit signal 0 (no SIGCHLD; waitpid(-1) without
 * __WALL or __WCLONE never sees it), every signal blocked, on a small stack
 * of its own, so its few writes land in pages only it has. It closes its
 * copies of our descriptors but one end of a pipe, and exits when the pipe
 * reads EOF: when we die.
 * Another process: clone(flags 0) injected in it by ptrace with
 * PTRACE_O_TRACECLONE, so the child is auto-attached to us and held at its
 * first stop before it runs an instruction, with PTRACE_O_EXITKILL.
 */
#define STACK_SIZE (64u * 1024)

struct snap_state {
	pid_t snap;			/* the snapshot (our PID namespace), 0: none */
	pid_t snap_there;		/* remote: its PID in the target's namespace (for wait4 there) */
	struct pm_target *st;		/* the snapshot's pagemap */
	int pipe[2];			/* self: the snapshot reads [0] until EOF, we hold [1] */
	void *stack;			/* self: the snapshot's stack (STACK_SIZE) */
	char *scratch;			/* two pages for content comparisons, or NULL */
	int err;			/* remote: a snapshot could not be made; never tried again */
};

typedef void (*emit_fn)(struct pm_watch *w, uint64_t start, uint64_t end, bool huge);

/* ---- taking and dropping snapshots ---- */

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
static void reap_there(struct pm_inject *in, pid_t there)
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
static int remote_clone(struct pm_inject *in, pid_t *child, pid_t *there)
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
	struct pm_inject *in;
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
static void drop_snapshot(struct pm_watch *w)
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
static int take(struct pm_watch *w, pid_t *child, pid_t *there, struct pm_target **st)
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

/* Drop a snapshot take() made, keeping the current one. */
static void drop_new(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st)
{
	struct snap_state *s = w->priv;
	struct pm_target *old_st = s->st;
	pid_t old = s->snap, old_there = s->snap_there;

	s->snap = child;
	s->snap_there = there;
	s->st = st;
	drop_snapshot(w);
	s->snap = old;
	s->snap_there = old_there;
	s->st = old_st;
}

/* Drop the current snapshot and keep the one take() made. */
static void switch_to(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st)
{
	struct snap_state *s = w->priv;

	drop_snapshot(w);
	s->snap = child;
	s->snap_there = there;
	s->st = st;
}

/* Take a new snapshot, then drop the old one: a failure keeps the old one. */
static int retake(struct pm_watch *w)
{
	struct pm_target *st;
	pid_t child, there;
	int err = take(w, &child, &there, &st);

	if (!err)
		switch_to(w, child, there, st);
	else if (child)
		drop_new(w, child, there, st);
	return err;
}

/* ---- comparing ---- */

struct cursor {
	struct pm_walk *walk;
	struct pm_run run;		/* the current run (copied: borrowed runs end at the next call) */
	bool valid;			/* run holds a run; false at the end */
	int err;
};

/* Advance the snapshot's runs to the first one that ends after @a. */
static void cursor_seek(struct cursor *c, uint64_t a)
{
	const struct pm_run *r;
	int ret;

	while (c->valid && c->run.end <= a) {
		ret = pm_walk_next(c->walk, &r);
		c->valid = ret == 0;
		if (ret == 0)
			c->run = *r;
		else if (ret < 0)
			c->err = ret;
	}
}

static uint64_t pfn_at(const struct pm_run *r, uint64_t a, uint64_t psize)
{
	return (r->flags & PM_PAGE_ZERO) ? r->pfn : r->pfn + (a - r->start) / psize;
}

enum { SAME, CHANGED, ASK_CONTENT };

/* Was page @a of target run @t written, the snapshot having @sn there (NULL: nothing, no mapping)? */
static int differs(const struct pm_run *t, const struct pm_run *sn, uint64_t a, uint64_t psize, bool frames)
{
	bool had = sn && (sn->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED));

	if (t->flags & PM_PAGE_SWAPPED) {	/* swapped now: written unless the snapshot holds the same swap entry */
		if (!had || !(sn->flags & PM_PAGE_SWAPPED))
			return CHANGED;
		/* Hidden frames: one slot shared (unwritten) or two (written, then swapped out) read alike. */
		if (!frames || !(t->flags & sn->flags & PM_PAGE_FRAME))
			return ASK_CONTENT;
		return t->swap_type != sn->swap_type ||
		       t->swap_offset + (a - t->start) / psize != sn->swap_offset + (a - sn->start) / psize ?
			       CHANGED : SAME;
	}
	if (frames && (t->flags & PM_PAGE_FRAME))
		return !had || !(sn->flags & PM_PAGE_PRESENT) || !(sn->flags & PM_PAGE_FRAME) ||
		       pfn_at(t, a, psize) != pfn_at(sn, a, psize) ? CHANGED : SAME;
	/* PFNs hidden: a page shared with the snapshot since the fork is mapped twice; its COW copy once. */
	return t->flags & PM_PAGE_EXCLUSIVE ? CHANGED : SAME;
}

/*
 * Was page @a written between the old snapshot (@o; NULL: nothing there) and
 * the new one (run @n)? Frames visible: as differs(). Hidden: a page the
 * process wrote was copied, so the old snapshot's copy is mapped by nothing
 * else (exclusive), while an unwritten one is shared by all three. An old
 * copy in swap cannot say so: it counts as written unless the new one is in
 * swap too (where only frames could tell, see pm_watch_reason).
 */
static int changed(const struct pm_run *n, const struct pm_run *o, uint64_t a, uint64_t psize, bool frames)
{
	if (!o || !(o->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)))
		return CHANGED;
	if (frames && (n->flags & o->flags & PM_PAGE_FRAME))
		return differs(n, o, a, psize, true);
	/*
	 * An old copy mapped by the old snapshot alone was copied away from, unless the
	 * new one is in swap: then it may be the same page, read back in by a content
	 * comparison (below) while the process kept its swap entry.
	 */
	/*
	 * A huge page whose PMD the process has split since: a write copies one
	 * 4 KiB page out of it, and the old snapshot's PMD-mapped copy answers
	 * "shared" for the whole folio (6.x). Only contents tell which page.
	 */
	if ((o->flags & PM_PAGE_PRESENT) && (o->flags & PM_PAGE_THP) && !(n->flags & PM_PAGE_THP))
		return ASK_CONTENT;
	if (o->flags & PM_PAGE_PRESENT)
		return !(o->flags & PM_PAGE_EXCLUSIVE) ? SAME : n->flags & PM_PAGE_SWAPPED ? ASK_CONTENT : CHANGED;
	return n->flags & PM_PAGE_SWAPPED ? ASK_CONTENT : CHANGED;
}

/*
 * Both snapshots hold page @a in swap and frames are hidden: one slot shared
 * (unwritten) or two (written, then swapped out) read alike. Compare the
 * contents, read from the two frozen snapshots (never from the process);
 * this brings them back from swap. A write of the same bytes reads as none.
 */
static bool content_differs(struct pm_watch *w, pid_t older, pid_t newer, uint64_t a)
{
	struct snap_state *s = w->priv;
	char *buf = s->scratch;
	struct iovec l0 = { buf, w->psize }, l1 = { buf + w->psize, w->psize };
	struct iovec r = { (void *)(uintptr_t)a, w->psize };

	if (!buf) {
		buf = malloc(2 * w->psize);
		if (!buf)
			return true;
		s->scratch = buf;
		l0.iov_base = buf;
		l1.iov_base = buf + w->psize;
	}
	w->stats.content_compared++;
	if (process_vm_readv(older, &l0, 1, &r, 1, 0) != (ssize_t)w->psize ||
	    process_vm_readv(newer, &l1, 1, &r, 1, 0) != (ssize_t)w->psize)
		return true;	/* cannot tell: report it */
	return memcmp(buf, buf + w->psize, w->psize) != 0;
}

/* Emit the written pages of target run @t, compared with the snapshot's runs through @c. */
static void compare_run(struct pm_watch *w, const struct pm_run *t, struct cursor *c, bool frames, bool pair,
			pid_t now_pid, emit_fn emit)
{
	struct snap_state *s = w->priv;
	uint64_t p;
	int k;

	uint64_t a = t->start;
	bool huge = t->flags & PM_PAGE_THP;

	while (a < t->end) {
		uint64_t next;
		bool in = false;

		cursor_seek(c, a);
		if (c->valid && c->run.start <= a) {
			in = true;
			next = c->run.end < t->end ? c->run.end : t->end;
		} else {
			next = c->valid && c->run.start < t->end ? c->run.start : t->end;
		}
		/*
		 * Both runs advance one frame (or swap offset) per page, so the first
		 * page decides the piece; a zero-page run in the snapshot differs
		 * from every frame of the target's (its zero pages are skipped).
		 */
		k = pair ? changed(t, in ? &c->run : NULL, a, w->psize, frames) :
			   differs(t, in ? &c->run : NULL, a, w->psize, frames);
		if (k == CHANGED) {
			emit(w, a, next, huge);
		} else if (k == ASK_CONTENT) {
			for (p = a; p < next; p += w->psize)
				if (content_differs(w, s->snap, now_pid, p))
					emit(w, p, p + w->psize, huge);
		}
		a = next;
	}
}

/*
 * Compare range @r of @now (the target, or with @pair a newer snapshot of it)
 * with the current snapshot; report through @emit.
 */
static int compare_range(struct pm_watch *w, const struct pm_watch_range *r, struct pm_target *now, bool pair,
			 emit_fn emit)
{
	struct snap_state *s = w->priv;
	struct cursor c = { 0 };
	struct pm_walk *tw;
	const struct pm_run *run;
	bool frames = pm_target_pfn_view(now) == PM_PFN_VISIBLE && pm_target_pfn_view(s->st) == PM_PFN_VISIBLE;
	int ret;

	tw = pm_walk_new(now, r->start, r->end, PM_WALK_ENTRIES);
	if (!tw)
		return -errno;
	c.walk = pm_walk_new(s->st, r->start, r->end, PM_WALK_ENTRIES);
	if (!c.walk) {
		ret = -errno;
		pm_walk_free(tw);
		return ret;
	}
	c.valid = true;
	c.run.end = r->start;	/* empty: the first seek reads the first run */
	while ((ret = pm_walk_next(tw, &run)) == 0 && !c.err) {
		if (!(run->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)) || (run->flags & (PM_PAGE_ZERO | PM_PAGE_FILE)) ||
		    (run->map && (run->map->prot & PM_MAP_SHARED)))
			continue;	/* nothing there, never written (zero page, page cache), or no COW (shared) */
		compare_run(w, run, &c, frames, pair, now->pid ? now->pid : getpid(), emit);
	}
	if (ret > 0)
		ret = 0;
	if (!ret && c.err)	/* the snapshot's walk failed: it is gone (killed?) */
		ret = c.err == -ESRCH ? -EIO : c.err;
	pm_walk_free(c.walk);
	pm_walk_free(tw);
	return ret;
}

/* ---- the back end ---- */

struct parts {
	const struct pm_watch_range *r;
	uint64_t shared;
	bool priv;
};

static int count_part(struct pm_watch *w, const struct pm_watch_vma *m, void *data)
{
	struct parts *p = data;
	uint64_t a = m->start > p->r->start ? m->start : p->r->start;
	uint64_t b = m->end < p->r->end ? m->end : p->r->end;

	(void)w;
	if (a < b && (m->prot & PM_MAP_SHARED))
		p->shared += b - a;
	else if (a < b)
		p->priv = true;
	return 0;
}

static void snap_fini(struct pm_watch *w);

/* Bytes of [start, end) in shared mappings, and whether any private mapping is there. */
static int shared_part(struct pm_watch *w, const struct pm_watch_range *r, uint64_t *shared, bool *priv)
{
	struct parts p = { r, 0, false };
	int ret = pmi_watch_vmas_in(w, r->start, r->end, count_part, &p);

	*shared = p.shared;
	*priv = p.priv;
	return ret;
}

/*
 * A new snapshot covers every range: keep what the ranges before @first
 * reported so far against the old one, then take it.
 */
static int resnap(struct pm_watch *w, size_t first)
{
	struct snap_state *s = w->priv;
	size_t i;
	int err = 0;

	for (i = 0; s->snap && i < first && !err; i++)
		err = compare_range(w, &w->ranges[i], w->t, false, pmi_watch_keep);
	if (!err && w->out_err)
		err = -w->out_err;
	return err ? err : retake(w);
}

/* A batch of adds took no snapshot each (pm_watch_add_writable): one for all of them now. */
static int snap_add_done(struct pm_watch *w)
{
	return resnap(w, w->batch_first);
}

static int snap_add(struct pm_watch *w, const struct pm_watch_range *r)
{
	struct snap_state *s = w->priv;
	uint64_t shared;
	bool priv;
	int err;

	err = shared_part(w, r, &shared, &priv);
	if (err)
		return err;
	if (!priv)
		return shared ? -EOPNOTSUPP : -EINVAL;	/* only shared mappings (no COW), or none */
	if (!s)
		return -EBADF;	/* snap_start failed: pm_watch_new did not return the handle */
	/* In a batch one snapshot is taken at its end (snap_add_done). */
	if (!w->vmas)
		err = resnap(w, w->nranges);
	if (!err)
		w->stats.shared_bytes += shared;
	return err;
}

/* With frames visible a SNAPSHOT reset compares two snapshots, atomically. */
static bool snap_atomic(const struct pm_watch *w)
{
	struct snap_state *s = w->priv;

	return pm_target_pfn_view(w->t) == PM_PFN_VISIBLE && (!s || !s->st || pm_target_pfn_view(s->st) == PM_PFN_VISIBLE);
}

/* Another process: take a first snapshot now, so that a target ptrace cannot stop fails the watch at once. */
static int snap_start(struct pm_watch *w, char *why, size_t size)
{
	struct snap_state *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->pipe[0] = s->pipe[1] = -1;
	w->priv = s;
	if (!w->pid)
		return 0;
	err = retake(w);
	if (err) {
		snprintf(why, size, "fork-snapshot: cannot make a child inside process %d: %s", (int)w->pid,
			 pmi_watch_inject_words(w->pid, err));
		snap_fini(w);
	}
	return err;
}

static int snap_collect(struct pm_watch *w, bool reset)
{
	struct snap_state *s = w->priv;
	size_t i;
	int err = 0;

	struct pm_target *st;
	pid_t child, there;

	if (!s || !s->st)
		return 0;
	/*
	 * Frames hidden: the process itself is compared with the snapshot, and
	 * writes between that and the new fork are lost (pm_watch_atomic()
	 * false): two snapshots cannot be compared without frames, as the old
	 * one's copy of a page the process has split out of a huge page reads
	 * as exclusive (6.18) like a written one.
	 */
	if (!reset || !snap_atomic(w)) {
		for (i = 0; i < w->nranges && !err; i++)
			err = compare_range(w, &w->ranges[i], w->t, false, pmi_watch_emit);
		return err || !reset ? err : retake(w);
	}
	/*
	 * The new snapshot first, then the old one compared with it: both are
	 * frozen, so a write lands before the fork (this collect) or after it
	 * (the next one), and none is lost between the two.
	 */
	err = take(w, &child, &there, &st);
	for (i = 0; i < w->nranges && !err; i++)
		err = compare_range(w, &w->ranges[i], st, true, pmi_watch_emit);
	if (err) {
		if (child)
			drop_new(w, child, there, st);	/* the old one stays */
		return err;
	}
	switch_to(w, child, there, st);
	return 0;
}

static void snap_fini(struct pm_watch *w)
{
	struct snap_state *s = w->priv;

	if (!s)
		return;
	drop_snapshot(w);
	if (s->pipe[0] >= 0) {
		close(s->pipe[0]);
		close(s->pipe[1]);
	}
	if (s->stack)
		munmap(s->stack, STACK_SIZE);
	free(s->scratch);
	free(s);
	w->priv = NULL;
}

/* A fork snapshot: any process for itself; another one by ptrace injection (x86-64), with the right to attach. */
static int snap_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	const char *how = pm_ctx_features(ctx)->pfn_view == PM_PFN_VISIBLE
				  ? "pages compared by PFN (root)"
				  : "pages compared by the exclusive bit (PFNs hidden: not root)";
	char path[64];
	int fd;

	if (pid == 0) {
		snprintf(buf, size, "fork-snapshot: a copy-on-write child of this process that never runs; %s", how);
		return 0;
	}
#ifndef __x86_64__
	snprintf(buf, size, "fork-snapshot: making a child inside another process is only done on x86-64");
	return -EOPNOTSUPP;
#endif
	/* Opening /proc/PID/mem takes the same check as PTRACE_ATTACH (credentials, Yama, LSM). */
	if (pmi_pid_path(ctx, path, sizeof(path), pid, "mem") < 0)
		return -ENAMETOOLONG;
	fd = pmi_open(ctx, path, O_RDONLY);
	if (fd < 0) {
		snprintf(buf, size, "fork-snapshot: no right to ptrace process %d: %s", (int)pid, strerror(-fd));
		return fd == -ENOENT ? -ESRCH : fd;
	}
	close(fd);
	snprintf(buf, size, "fork-snapshot: a stopped copy-on-write child made inside process %d by ptrace; %s%s",
		 (int)pid, how,
		 geteuid() == 0 && pmi_inject_seccomp(pid) > 0
			 ? "; its seccomp filter is suspended for the injected calls"
			 : "");
	return 0;
}

const struct pm_watch_ops pm_watch_snapshot_ops = {
	.method = PM_WATCH_SNAPSHOT,
	.name = "fork-snapshot",
	.usable = snap_usable,
	.atomic = false,
	.atomic_now = snap_atomic,
	.start = snap_start,
	.add = snap_add,
	.add_done = snap_add_done,
	.collect = snap_collect,
	.fini = snap_fini,
};
