/* watch.c - the write watch: choosing a back end, the watched ranges, coalescing what a collect reports. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inject.h"
#include "watch.h"

const char *pm_watch_method_name(enum pm_watch_method method)
{
	switch (method) {
	case PM_WATCH_AUTO:
		return "auto";
	case PM_WATCH_UFFD:
		return "uffd";
	case PM_WATCH_SOFTDIRTY:
		return "soft-dirty";
	case PM_WATCH_MPROTECT:
		return "mprotect";
	case PM_WATCH_SNAPSHOT:
		return "fork-snapshot";
	}
	return "unknown";
}

static int softdirty_usable(const struct pm_features *f, char *buf, size_t size)
{
	if (f->soft_dirty == PM_YES) {
		snprintf(buf, size, "soft-dirty: this kernel keeps soft-dirty bits (a written page read back soft-dirty)");
		return 0;
	}
	snprintf(buf, size, "soft-dirty: %s",
		 f->soft_dirty == PM_NO ? "this kernel has no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is off)"
					: "soft-dirty support could not be probed");
	return -EOPNOTSUPP;
}

static int mprotect_usable(pid_t pid, char *buf, size_t size)
{
	if (pid != 0) {
		snprintf(buf, size, "mprotect: only for the calling process (it needs the process's own SIGSEGV handler)");
		return -EOPNOTSUPP;
	}
	snprintf(buf, size, "mprotect: read-only pages and a SIGSEGV handler (kernel writes into them fail)");
	return 0;
}

/* A fork snapshot: any process for itself; another one by ptrace injection (x86-64), with the right to attach. */
static int snapshot_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
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
	if (pm_pid_path(ctx, path, sizeof(path), pid, "mem") < 0)
		return -ENAMETOOLONG;
	fd = pm_open(ctx, path, O_RDONLY);
	if (fd < 0) {
		snprintf(buf, size, "fork-snapshot: no right to ptrace process %d: %s", (int)pid, strerror(-fd));
		return fd == -ENOENT ? -ESRCH : fd;
	}
	close(fd);
	snprintf(buf, size, "fork-snapshot: a stopped copy-on-write child made inside process %d by ptrace; %s%s",
		 (int)pid, how,
		 geteuid() == 0 && pm_inject_seccomp(pid) > 0
			 ? "; its seccomp filter is suspended for the injected calls"
			 : "");
	return 0;
}

int pm_watch_explain(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, char *buf, size_t size)
{
	/* Every back end's answer: the userfaultfd and soft-dirty probes run now. */
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_UFFD | PM_PROBE_SOFT_DIRTY);
	char why[3][200];
	int r[3];

	if (!f)
		return -errno;
	if (pid == getpid())
		pid = 0;	/* ourselves by number: no ptrace, the in-process way */
	if (!ctx->live) {
		snprintf(buf, size, "%s: a replayed tree cannot be watched", pm_watch_method_name(method));
		return -EOPNOTSUPP;
	}
	switch (method) {
	case PM_WATCH_UFFD:
		return pm_watch_uffd_usable(ctx, pid, buf, size);
	case PM_WATCH_SOFTDIRTY:
		return softdirty_usable(f, buf, size);
	case PM_WATCH_MPROTECT:
		return mprotect_usable(pid, buf, size);
	case PM_WATCH_SNAPSHOT:
		return snapshot_usable(ctx, pid, buf, size);
	case PM_WATCH_AUTO:
		break;
	default:
		snprintf(buf, size, "unknown method %d", (int)method);
		return -EINVAL;
	}
	/*
	 * The best first: uffd is exact and atomic, soft-dirty is neither quite, mprotect breaks kernel writes.
	 * A fork snapshot is never chosen: only forced (it makes a process inside the target).
	 */
	r[0] = pm_watch_uffd_usable(ctx, pid, why[0], sizeof(why[0]));
	r[1] = softdirty_usable(f, why[1], sizeof(why[1]));
	r[2] = mprotect_usable(pid, why[2], sizeof(why[2]));
	if (r[0] == 0)
		snprintf(buf, size, "%s", why[0]);
	else if (r[1] == 0)
		snprintf(buf, size, "%s; not uffd: %s", why[1], why[0]);
	else if (r[2] == 0)
		snprintf(buf, size, "%s; not uffd: %s; not %s", why[2], why[0], why[1]);
	else
		snprintf(buf, size, "no back end: %s; %s; %s", why[0], why[1], why[2]);
	return r[0] == 0 || r[1] == 0 || r[2] == 0 ? 0 : -EOPNOTSUPP;
}

/* The method AUTO stands for, given what explain found usable. */
static enum pm_watch_method choose(struct pm_ctx *ctx, pid_t pid)
{
	char buf[256];

	if (pm_watch_uffd_usable(ctx, pid, buf, sizeof(buf)) == 0)
		return PM_WATCH_UFFD;
	if (softdirty_usable(pm_ctx_probe(ctx, PM_PROBE_SOFT_DIRTY), buf, sizeof(buf)) == 0)
		return PM_WATCH_SOFTDIRTY;
	return PM_WATCH_MPROTECT;
}

static const struct pm_watch_ops *ops_of(enum pm_watch_method m)
{
	switch (m) {
	case PM_WATCH_UFFD:
		return &pm_watch_uffd_ops;
	case PM_WATCH_SOFTDIRTY:
		return &pm_watch_softdirty_ops;
	case PM_WATCH_SNAPSHOT:
		return &pm_watch_snapshot_ops;
	default:
		return &pm_watch_mprotect_ops;
	}
}

/*
 * Start the back end. If it cannot start (the userfaultfd cannot be made
 * inside the target: traced already, a vfork parent, seccomp) and the
 * method was chosen (@fallback), soft-dirty takes over where this kernel has
 * it, the reason saying why; else the watch fails.
 */
static int start(struct pm_watch *w, bool fallback)
{
	char why[300], sd[200];
	int err;

	if (!w->ops->start)
		return 0;
	err = w->ops->start(w, why, sizeof(why));
	if (!err)
		return 0;
	if (fallback && w->method == PM_WATCH_UFFD &&
	    softdirty_usable(pm_ctx_probe(w->ctx, PM_PROBE_SOFT_DIRTY), sd, sizeof(sd)) == 0) {
		snprintf(w->reason, sizeof(w->reason), "%.199s; not uffd: %.299s", sd, why);
		w->method = PM_WATCH_SOFTDIRTY;
		w->ops = ops_of(w->method);
		return 0;
	}
	snprintf(w->reason, sizeof(w->reason), "%s", why);
	return err;
}

struct pm_watch *pm_watch_new(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, unsigned flags)
{
	struct pm_watch *w;
	int r;

	if (flags & ~PM_WATCH_NOTHP || method > PM_WATCH_SNAPSHOT || pid < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!pm_ctx_features(ctx))
		return NULL;
	if (pid == getpid())
		pid = 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->ctx = ctx;
	w->pid = pid;
	w->flags = flags;
	w->psize = ctx->features.page_size;
	r = pm_watch_explain(ctx, pid, method, w->reason, sizeof(w->reason));
	if (r < 0) {
		free(w);
		errno = -r;
		return NULL;
	}
	w->method = method == PM_WATCH_AUTO ? choose(ctx, pid) : method;
	w->ops = ops_of(w->method);
	w->t = pm_target_open(ctx, pid);
	if (!w->t) {
		free(w);
		return NULL;
	}
	r = start(w, method == PM_WATCH_AUTO);
	if (r < 0) {
		pm_target_close(w->t);
		free(w);
		errno = -r;
		return NULL;
	}
	return w;
}

void pm_watch_keep(struct pm_watch *w, uint64_t start, uint64_t end, bool huge)
{
	struct pm_written *p;

	if (start >= end || w->out_err)
		return;
	if (w->npending && w->pending[w->npending - 1].end == start && w->pending[w->npending - 1].huge == huge) {
		w->pending[w->npending - 1].end = end;
		return;
	}
	if (w->npending == w->cap_pending) {
		size_t cap = w->cap_pending ? 2 * w->cap_pending : 64;

		p = realloc(w->pending, cap * sizeof(*p));
		if (!p) {
			w->out_err = ENOMEM;
			return;
		}
		w->pending = p;
		w->cap_pending = cap;
	}
	w->pending[w->npending++] = (struct pm_written){ .start = start, .end = end, .huge = huge };
}

/* The populated ranges of @r (present or swapped, not the zero page), in address order. */
static int populated_spans(struct pm_watch *w, uint64_t start, uint64_t end, struct pm_watch_range **out, size_t *n)
{
	struct pm_walk *walk = pm_walk_new(w->t, start, end, 0);
	const struct pm_run *run;
	struct pm_watch_range *v = NULL, *p;
	size_t cap = 0;
	int ret;

	*out = NULL;
	*n = 0;
	if (!walk)
		return -errno;
	while ((ret = pm_walk_next(walk, &run)) == 0) {
		if (!(run->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)) || (run->flags & (PM_PAGE_ZERO | PM_PAGE_MARKER)))
			continue;
		if (*n && v[*n - 1].end == run->start) {
			v[*n - 1].end = run->end;
			continue;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			v = p;
		}
		v[(*n)++] = (struct pm_watch_range){ run->start, run->end };
	}
	pm_walk_free(walk);
	if (ret < 0) {
		free(v);
		*n = 0;
		return ret;
	}
	*out = v;
	return 0;
}

/* Keep the parts of [a, b) that lie in @before (sorted; *@i is a cursor that only moves forward). */
static void keep_within(struct pm_watch *w, uint64_t a, uint64_t b, const struct pm_watch_range *before, size_t n, size_t *i)
{
	while (*i < n && before[*i].end <= a)
		(*i)++;
	for (size_t j = *i; j < n && before[j].start < b; j++)
		pm_watch_keep(w, before[j].start > a ? before[j].start : a, before[j].end < b ? before[j].end : b, false);
}

/*
 * Keep the populated pages of the sorted ranges @only (not the zero page) for the next collect,
 * looked up after arming: a page populated from here on was written or read,
 * and the walk sees it either way. With frames hidden and swap on, an entry
 * in swap with the uffd-wp bit may be a marker the arming left on an empty
 * page: count it only where @before (the populated ranges before arming) had
 * a page.
 */
static int add_populated(struct pm_watch *w, const struct pm_watch_range *before, size_t nbefore,
			 const struct pm_watch_range *only, size_t nonly)
{
	struct pm_walk *walk = pm_walk_new(w->t, only[0].start, only[nonly - 1].end, PM_WALK_ENTRIES);
	const struct pm_run *run;
	size_t cursor = 0, oc = 0, j;
	int ret;

	if (!walk)
		return -errno;
	while ((ret = pm_walk_next(walk, &run)) == 0) {
		uint32_t f = run->flags;

		if (!(f & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)) || (f & (PM_PAGE_ZERO | PM_PAGE_MARKER)))
			continue;
		/* The walk spans the first range to the last (a batch): keep what lies in the ranges. */
		while (oc < nonly && only[oc].end <= run->start)
			oc++;
		for (j = oc; j < nonly && only[j].start < run->end; j++) {
			uint64_t lo = only[j].start > run->start ? only[j].start : run->start;
			uint64_t hi = only[j].end < run->end ? only[j].end : run->end;

			if ((f & PM_PAGE_PRESENT) || (f & PM_PAGE_FRAME) || !(f & PM_PAGE_UFFD_WP))
				pm_watch_keep(w, lo, hi, false);
			else
				keep_within(w, lo, hi, before, nbefore, &cursor);
		}
	}
	pm_walk_free(walk);
	return ret < 0 ? ret : w->out_err ? -w->out_err : 0;
}

int pm_watch_add(struct pm_watch *w, uint64_t start, uint64_t end, unsigned flags)
{
	struct pm_watch_range *r;
	struct pm_watch_range *before = NULL;
	size_t nbefore = 0;
	int err;

	if (start > end || (flags & ~PM_WATCH_POPULATED))
		return -EINVAL;
	start &= ~(w->psize - 1);
	end = (end + w->psize - 1) & ~(w->psize - 1);
	if (start == end)
		return -EINVAL;
	if (w->nranges == w->cap_ranges) {
		size_t cap = w->cap_ranges ? 2 * w->cap_ranges : 8;

		r = realloc(w->ranges, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		w->ranges = r;
		w->cap_ranges = cap;
	}
	r = &w->ranges[w->nranges];
	r->start = start;
	r->end = end;
	w->out_err = 0;
	if ((flags & PM_WATCH_POPULATED) && (err = populated_spans(w, r->start, r->end, &before, &nbefore)) < 0)
		return err;
	err = w->ops->add(w, r);
	if (!err && w->out_err)
		err = -w->out_err;	/* ENOMEM from pm_watch_keep */
	if (!err) {
		w->nranges++;
		if (flags & PM_WATCH_POPULATED)
			err = add_populated(w, before, nbefore, r, 1);
	}
	free(before);
	return err;
}

/* ---- mappings, one listing per batch ---- */

int pm_watch_vmas_in(struct pm_watch *w, uint64_t start, uint64_t end,
		     int (*fn)(struct pm_watch *w, const struct pm_watch_vma *v, void *data), void *data)
{
	const struct pm_mapping *m;
	struct pm_maps *it;
	int ret;

	if (w->vmas) {
		size_t lo = 0, hi = w->nvmas;

		while (lo < hi) {	/* the first mapping that ends after start */
			size_t mid = lo + (hi - lo) / 2;

			if (w->vmas[mid].end <= start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < w->nvmas && w->vmas[lo].start < end; lo++)
			if ((ret = fn(w, &w->vmas[lo], data)) != 0)
				return ret;
		return 0;
	}
	it = pm_maps_open(w->t);
	if (!it)
		return -errno;
	while ((ret = pm_maps_next(it, &m)) == 0 && m->start < end) {
		struct pm_watch_vma v = { m->start, m->end, m->prot,
					  m->kind == PM_MAP_VVAR || m->kind == PM_MAP_VSYSCALL };

		if (m->end > start && (ret = fn(w, &v, data)) != 0)
			break;
	}
	pm_maps_close(it);
	return ret < 0 ? ret : ret == 1 ? 0 : ret;
}

/* The process's mappings, read once. */
static int list_vmas(struct pm_watch *w, struct pm_watch_vma **out, size_t *n)
{
	struct pm_maps *it = pm_maps_open(w->t);
	const struct pm_mapping *m;
	struct pm_watch_vma *v = NULL, *p;
	size_t cap = 0;
	int ret;

	*n = 0;
	if (!it)
		return -errno;
	while ((ret = pm_maps_next(it, &m)) == 0) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			v = p;
		}
		v[(*n)++] = (struct pm_watch_vma){ m->start, m->end, m->prot,
						   m->kind == PM_MAP_VVAR || m->kind == PM_MAP_VSYSCALL };
	}
	pm_maps_close(it);
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	return 0;
}

/* The writable, registrable stretches of @v, neighbours merged, minus what is covered already. */
static int uncovered_writable(struct pm_watch *w, const struct pm_watch_vma *v, size_t n, struct pm_watch_range **out,
			      size_t *nout)
{
	struct pm_watch_range *r = NULL, *p;
	size_t i, c = 0, cap = 0;

	*nout = 0;
	for (i = 0; i < n; i++) {
		uint64_t a = v[i].start, b = v[i].end;

		if (!(v[i].prot & PM_PROT_WRITE) || v[i].special)
			continue;
		while (a < b) {
			uint64_t piece_end = b;

			while (c < w->ncovered && w->covered[c].end <= a)
				c++;
			if (c < w->ncovered && w->covered[c].start <= a) {
				a = w->covered[c].end;	/* watched already */
				continue;
			}
			if (c < w->ncovered && w->covered[c].start < b)
				piece_end = w->covered[c].start;
			if (*nout && r[*nout - 1].end == a) {
				r[*nout - 1].end = piece_end;
			} else {
				if (*nout == cap) {
					cap = cap ? 2 * cap : 64;
					p = realloc(r, cap * sizeof(*r));
					if (!p) {
						free(r);
						return -ENOMEM;
					}
					r = p;
				}
				r[(*nout)++] = (struct pm_watch_range){ a, piece_end };
			}
			a = piece_end;
		}
	}
	*out = r;
	return 0;
}

/* Merge the sorted ranges @add into w->covered (sorted, merged). */
static int cover(struct pm_watch *w, const struct pm_watch_range *add, size_t n)
{
	size_t total = w->ncovered + n, i = 0, j = 0, k = 0;
	struct pm_watch_range *m = malloc((total ? total : 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	while (i < w->ncovered || j < n) {
		const struct pm_watch_range *x = j >= n || (i < w->ncovered && w->covered[i].start <= add[j].start) ?
							 &w->covered[i++] : &add[j++];

		if (k && m[k - 1].end >= x->start) {
			if (x->end > m[k - 1].end)
				m[k - 1].end = x->end;
		} else {
			m[k++] = *x;
		}
	}
	free(w->covered);
	w->covered = m;
	w->ncovered = k;
	w->capcovered = total;
	return 0;
}

/* A range whose mapping went away (or was replaced) between the listing and its registration. */
static bool vanished(int err)
{
	return err == -EINVAL || err == -EPERM || err == -ENOENT || err == -EFAULT;
}

int pm_watch_add_writable(struct pm_watch *w, unsigned flags, struct pm_watch_batch *b)
{
	struct pm_watch_batch dummy;
	struct pm_watch_range *todo = NULL, *before = NULL;
	struct pm_watch_vma *vmas = NULL;
	size_t nvmas = 0, ntodo = 0, nbefore = 0, i;
	int err;

	if (!b)
		b = &dummy;
	memset(b, 0, sizeof(*b));
	if (flags & ~PM_WATCH_POPULATED)
		return -EINVAL;
	err = list_vmas(w, &vmas, &nvmas);
	if (err == 0)
		err = uncovered_writable(w, vmas, nvmas, &todo, &ntodo);
	if (err < 0) {
		free(vmas);
		return err == -ENOENT ? -ESRCH : err;
	}
	/* PM_WATCH_POPULATED for the whole batch: one walk before arming, one after (not one per range). */
	if ((flags & PM_WATCH_POPULATED) && ntodo &&
	    (err = populated_spans(w, todo[0].start, todo[ntodo - 1].end, &before, &nbefore)) < 0) {
		free(todo);
		free(vmas);
		return err;
	}
	w->vmas = vmas;
	w->nvmas = nvmas;
	w->batch_first = w->nranges;
	for (i = 0, err = 0; i < ntodo; i++) {
		err = pm_watch_add(w, todo[i].start, todo[i].end, 0);
		if (err == -ESRCH || err == -ENOMEM)
			break;
		if (err == 0) {
			todo[b->added++] = todo[i];
		} else if (vanished(err)) {
			b->vanished++;
		} else if (!b->failed++) {
			b->error = -err;
			b->failed_start = todo[i].start;
			b->failed_end = todo[i].end;
		}
		err = 0;
	}
	w->vmas = NULL;
	w->nvmas = 0;
	if (!err && b->added && w->ops->add_done)
		err = w->ops->add_done(w);
	if (!err && b->added && (flags & PM_WATCH_POPULATED))
		err = add_populated(w, before, nbefore, todo, b->added);
	if (!err)
		err = cover(w, todo, b->added);
	free(before);
	free(todo);
	free(vmas);
	return err;
}

void pm_watch_emit(struct pm_watch *w, uint64_t start, uint64_t end, bool huge)
{
	struct pm_written *o;

	if (start >= end || w->out_err)
		return;
	if (w->nout && w->out[w->nout - 1].end == start && w->out[w->nout - 1].huge == huge) {
		w->out[w->nout - 1].end = end;
		return;
	}
	if (w->nout == w->cap_out) {
		size_t cap = w->cap_out ? 2 * w->cap_out : 256;

		o = realloc(w->out, cap * sizeof(*o));
		if (!o) {
			w->out_err = ENOMEM;
			return;
		}
		w->out = o;
		w->cap_out = cap;
	}
	w->out[w->nout++] = (struct pm_written){ .start = start, .end = end, .huge = huge };
}

static int by_start(const void *a, const void *b)
{
	const struct pm_written *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort, merge overlaps (a huge report covering small ones stays huge), join neighbours of one kind. */
static void coalesce(struct pm_watch *w)
{
	size_t i, n = 0;
	bool sorted = true;

	/* Back ends report each range in address order: sort only when ranges were added out of order. */
	for (i = 1; i < w->nout && sorted; i++)
		sorted = w->out[i - 1].start <= w->out[i].start;
	if (!sorted)
		qsort(w->out, w->nout, sizeof(*w->out), by_start);
	for (i = 0; i < w->nout; i++) {
		struct pm_written *cur = &w->out[i], *last = n ? &w->out[n - 1] : NULL;

		if (last && cur->start < last->end) {	/* overlap: ranges may repeat across watched ranges */
			if (cur->end > last->end)
				last->end = cur->end;
			last->huge = last->huge || cur->huge;
		} else if (last && cur->start == last->end && cur->huge == last->huge) {
			last->end = cur->end;
		} else {
			w->out[n++] = *cur;
		}
	}
	w->nout = n;
}

int pm_watch_collect(struct pm_watch *w, unsigned flags, const struct pm_written **out, size_t *n)
{
	size_t i;
	int err;

	if (flags & ~PM_WATCH_RESET)
		return -EINVAL;
	w->nout = 0;
	w->out_err = 0;
	err = w->ops->collect(w, flags & PM_WATCH_RESET);
	/*
	 * Another process that exited or exec'd: some kernels (6.12) still scan its dead mm without
	 * an error and report nothing. The pagemap fd of a dead mm reads EOF: say -ESRCH every time.
	 */
	if (!err && w->pid) {
		uint64_t e;
		ssize_t r = pm_target_read(w->t, 0, &e, 1);

		if (r == -ESRCH)
			err = -ESRCH;
	}
	for (i = 0; !err && i < w->npending; i++)
		pm_watch_emit(w, w->pending[i].start, w->pending[i].end, w->pending[i].huge);
	if (!err && w->out_err)
		err = -w->out_err;
	if (!err && (flags & PM_WATCH_RESET))
		w->npending = 0;
	if (err < 0) {
		w->nout = 0;
		return err;
	}
	coalesce(w);
	w->stats.collects++;
	for (i = 0; i < w->nout; i++) {
		uint64_t pages = (w->out[i].end - w->out[i].start) / w->psize;

		w->stats.written_pages += pages;
		if (w->out[i].huge)
			w->stats.huge_pages += pages;
	}
	*out = w->out;
	*n = w->nout;
	return 0;
}

enum pm_watch_method pm_watch_method(const struct pm_watch *w)
{
	return w->method;
}

const char *pm_watch_reason(const struct pm_watch *w)
{
	return w->reason;
}

bool pm_watch_atomic(const struct pm_watch *w)
{
	if (w->method == PM_WATCH_SNAPSHOT)
		return pm_watch_snapshot_atomic(w);
	return w->ops->atomic;
}

const struct pm_watch_stats *pm_watch_stats(const struct pm_watch *w)
{
	return &w->stats;
}

void pm_watch_free(struct pm_watch *w)
{
	if (!w)
		return;
	w->ops->fini(w);
	pm_target_close(w->t);
	free(w->ranges);
	free(w->out);
	free(w->pending);
	free(w->covered);
	free(w);
}
