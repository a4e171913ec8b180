/* watch_fork.c - write watch back end: a fork snapshot of the target, compared page by page (PFN or exclusive bit); the child: watch_fork_child.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "inject.h"
#include "watch_fork.h"

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
 * The child's life: watch_fork_child.c.
 */

typedef void (*emit_fn)(struct pm_watch *w, uint64_t start, uint64_t end, bool huge);

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
static int compare_range(struct pm_watch *w, const struct pmi_watch_range *r, struct pm_target *now, bool pair,
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
	const struct pmi_watch_range *r;
	uint64_t shared;
	bool priv;
};

static int count_part(struct pm_watch *w, const struct pmi_watch_vma *m, void *data)
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
static int shared_part(struct pm_watch *w, const struct pmi_watch_range *r, uint64_t *shared, bool *priv)
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
	return err ? err : pmi_watch_snap_retake(w);
}

/* A batch of adds took no snapshot each (pm_watch_add_writable): one for all of them now. */
static int snap_add_done(struct pm_watch *w)
{
	return resnap(w, w->batch_first);
}

static int snap_add(struct pm_watch *w, const struct pmi_watch_range *r)
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
	err = pmi_watch_snap_retake(w);
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
		return err || !reset ? err : pmi_watch_snap_retake(w);
	}
	/*
	 * The new snapshot first, then the old one compared with it: both are
	 * frozen, so a write lands before the fork (this collect) or after it
	 * (the next one), and none is lost between the two.
	 */
	err = pmi_watch_snap_take(w, &child, &there, &st);
	for (i = 0; i < w->nranges && !err; i++)
		err = compare_range(w, &w->ranges[i], st, true, pmi_watch_emit);
	if (err) {
		if (child)
			pmi_watch_snap_drop_new(w, child, there, st);	/* the old one stays */
		return err;
	}
	pmi_watch_snap_switch_to(w, child, there, st);
	return 0;
}

static void snap_fini(struct pm_watch *w)
{
	struct snap_state *s = w->priv;

	if (!s)
		return;
	pmi_watch_snap_drop(w);
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
		snprintf(buf, size, "fork-snapshot: no right to ptrace process %d: %s", (int)pid, pmi_strerror(-fd));
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

/* Calibration: a child sharing the pages copy-on-write, replaced each round (*@state: its pid). */
static int snap_cal_arm(char *p, size_t len, int *state)
{
	if (*state > 0) {
		kill(*state, SIGKILL);
		waitpid(*state, NULL, 0);
	}
	*state = fork();
	if (*state == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlives the calibrating child */
		pause();
		_exit(0);
	}
	return *state < 0 ? -1 : 0;
}

static void snap_cal_end(int state)
{
	if (state > 0) {
		kill(state, SIGKILL);
		waitpid(state, NULL, 0);
	}
}

const struct pmi_watch_ops pmi_watch_snapshot_ops = {
	.method = PM_WATCH_SNAPSHOT,
	.name = "fork-snapshot",
	.traces_often = true,
	.perturbs = "a stopped copy-on-write child is created inside it (ptrace), so its first "
		    "write to each page per interval copies the page; it is stopped briefly every "
		    "interval to replace that child",
	.details = "(only when asked for; x86-64) a stopped copy-on-write child is created\n"
		   "inside it (ptrace), so its first write to each page per interval copies\n"
		   "the page; it is stopped briefly every interval to replace the child.\n"
		   "Shared mappings are left out. As root no write is lost (the old and the\n"
		   "new child are compared by frame); without root, writes made while a\n"
		   "collection runs can be lost. If pagemap is killed, the dead child stays\n"
		   "a zombie in it.",
	.usable = snap_usable,
	.atomic = false,
	.atomic_now = snap_atomic,
	.start = snap_start,
	.add = snap_add,
	.add_done = snap_add_done,
	.collect = snap_collect,
	.fini = snap_fini,
	.cal_arm = snap_cal_arm,
	.cal_end = snap_cal_end,
};
