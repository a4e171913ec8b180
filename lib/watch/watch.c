/* watch.c - the write watch's front: the table of back ends, choosing one, the watched ranges, collecting. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "watch.h"

/*
 * Each back end defines its ops in its own file; they are declared here, beside
 * the table, their only user. Adding one touches three files: its own
 * (watch_NAME.c, every field of struct pmi_watch_ops filled), its extern and row
 * here, and its value at the end of enum pm_watch_method (the public header).
 * The CLI, the binding and the calibration ask the ops through pm_watch_method_*().
 */
extern const struct pmi_watch_ops pmi_watch_uffd_ops;
extern const struct pmi_watch_ops pmi_watch_softdirty_ops;
extern const struct pmi_watch_ops pmi_watch_mprotect_ops;
extern const struct pmi_watch_ops pmi_watch_snapshot_ops;

/*
 * The back ends, the best first: uffd is exact and atomic, soft-dirty is
 * neither quite, mprotect breaks kernel writes. A fork snapshot is never
 * chosen (auto_pick false): only forced, since it makes a process inside the target.
 * The order is also the one pm_watch_method_at() lists them in.
 */
static const struct pmi_watch_ops *const backends[] = {
	&pmi_watch_uffd_ops,
	&pmi_watch_softdirty_ops,
	&pmi_watch_mprotect_ops,
	&pmi_watch_snapshot_ops,
};

static const struct pmi_watch_ops *ops_of(enum pm_watch_method m)
{
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(backends); i++)
		if (backends[i]->method == m)
			return backends[i];
	return NULL;
}

const char *pm_watch_method_name(enum pm_watch_method method)
{
	const struct pmi_watch_ops *o = ops_of(method);

	if (method == PM_WATCH_AUTO)
		return "auto";
	return o ? o->name : "unknown";
}

size_t pm_watch_method_count(void)
{
	return PMI_ARRAY_SIZE(backends);
}

enum pm_watch_method pm_watch_method_at(size_t i)
{
	return i < PMI_ARRAY_SIZE(backends) ? backends[i]->method : PM_WATCH_AUTO;
}

int pm_watch_method_from_name(const char *name)
{
	size_t i;

	if (!name)
		return -EINVAL;
	if (!strcmp(name, "auto"))
		return PM_WATCH_AUTO;
	for (i = 0; i < PMI_ARRAY_SIZE(backends); i++)
		if (!strcmp(name, backends[i]->name))
			return (int)backends[i]->method;
	return -EINVAL;
}

unsigned pm_watch_method_flags(enum pm_watch_method method)
{
	const struct pmi_watch_ops *o = ops_of(method);

	if (!o)
		return 0;
	return (o->caller_only ? PM_WATCH_METHOD_CALLER_ONLY : 0) | (o->traces_often ? PM_WATCH_METHOD_TRACES : 0);
}

const char *pm_watch_method_perturbs(enum pm_watch_method method)
{
	const struct pmi_watch_ops *o = ops_of(method);

	return o ? o->perturbs : NULL;
}

const char *pm_watch_method_details(enum pm_watch_method method)
{
	const struct pmi_watch_ops *o = ops_of(method);

	return o ? o->details : NULL;
}

/*
 * AUTO: the first usable back end of the table that may be chosen, its
 * words then why not each better one (the first is named again, as the
 * fallback in start() names it). Returns its index, or -EOPNOTSUPP.
 */
static int explain_auto(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	char why[PMI_ARRAY_SIZE(backends)][200];
	size_t i, j, len;
	int pick = -EOPNOTSUPP;

	for (i = 0; i < PMI_ARRAY_SIZE(backends) && pick < 0; i++)
		if (backends[i]->auto_pick && backends[i]->usable(ctx, pid, why[i], sizeof(why[i])) == 0)
			pick = (int)i;
	len = (size_t)snprintf(buf, size, "%s", pick >= 0 ? why[pick] : "no back end: ");
	for (j = 0; j < i && len < size; j++) {
		if (!backends[j]->auto_pick || (int)j == pick)
			continue;
		if (pick < 0)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", j ? "; " : "", why[j]);
		else if (j == 0)
			len += (size_t)snprintf(buf + len, size - len, "; not %s: %s", backends[j]->name, why[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "; not %s", why[j]);
	}
	return pick;
}

int pm_watch_explain(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, char *buf, size_t size)
{
	/* Every back end's answer: the userfaultfd and soft-dirty probes run now. */
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_UFFD | PM_PROBE_SOFT_DIRTY);
	const struct pmi_watch_ops *o = ops_of(method);
	int r;

	if (!f)
		return -errno;
	if (pid == getpid())
		pid = 0;	/* ourselves by number: no ptrace, the in-process way */
	if (!ctx->live) {
		snprintf(buf, size, "%s: a replayed tree cannot be watched", pm_watch_method_name(method));
		return -EOPNOTSUPP;
	}
	if (o)
		return o->usable(ctx, pid, buf, size);
	if (method != PM_WATCH_AUTO) {
		snprintf(buf, size, "unknown method %d", (int)method);
		return -EINVAL;
	}
	r = explain_auto(ctx, pid, buf, size);
	return r < 0 ? r : 0;
}

/* The method AUTO stands for, given what explain found usable: the last choosable row when none is. */
static enum pm_watch_method choose(struct pm_ctx *ctx, pid_t pid)
{
	enum pm_watch_method m = PM_WATCH_AUTO;	/* never kept: explain found a row */
	char buf[256];
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(backends); i++) {
		if (!backends[i]->auto_pick)
			continue;
		m = backends[i]->method;
		if (backends[i]->usable(ctx, pid, buf, sizeof(buf)) == 0)
			break;
	}
	return m;
}

/*
 * Start the back end. If it cannot start (the userfaultfd cannot be made
 * inside the target: traced already, a vfork parent, seccomp) and the
 * method was chosen (@fallback), a later row that may take over (soft-dirty,
 * which needs nothing of the target) does where this kernel has it, the
 * reason saying why; else the watch fails.
 */
static int start(struct pm_watch *w, bool fallback)
{
	char why[300], sd[200];
	size_t i;
	int err;

	if (!w->ops->start)
		return 0;
	err = w->ops->start(w, why, sizeof(why));
	if (!err)
		return 0;
	for (i = 0; fallback && i < PMI_ARRAY_SIZE(backends); i++) {
		const struct pmi_watch_ops *o = backends[i];

		if (o == w->ops || !o->takes_over || o->usable(w->ctx, w->pid, sd, sizeof(sd)) < 0)
			continue;
		snprintf(w->reason, sizeof(w->reason), "%.199s; not %s: %.299s", sd, w->ops->name, why);
		w->method = o->method;
		w->ops = o;
		return 0;
	}
	snprintf(w->reason, sizeof(w->reason), "%s", why);
	return err;
}

struct pm_watch *pm_watch_new(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, unsigned flags)
{
	struct pm_watch *w;
	int r;

	if (flags & ~PM_WATCH_NOTHP || (method != PM_WATCH_AUTO && !ops_of(method)) || pid < 0) {
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
	pmi_watch_cost_begin(w);
	return w;
}

/* The populated ranges of @r (present or swapped, not the zero page), in address order. */
static int populated_spans(struct pm_watch *w, uint64_t start, uint64_t end, struct pmi_watch_range **out, size_t *n)
{
	struct pm_walk *walk = pm_walk_new(w->t, start, end, 0);
	const struct pm_run *run;
	struct pmi_watch_range *v = NULL, *p;
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
		v[(*n)++] = (struct pmi_watch_range){ run->start, run->end };
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
static void keep_within(struct pm_watch *w, uint64_t a, uint64_t b, const struct pmi_watch_range *before, size_t n, size_t *i)
{
	while (*i < n && before[*i].end <= a)
		(*i)++;
	for (size_t j = *i; j < n && before[j].start < b; j++)
		pmi_watch_keep(w, before[j].start > a ? before[j].start : a, before[j].end < b ? before[j].end : b, false);
}

/*
 * Keep the populated pages of the sorted ranges @only (not the zero page) for the next collect,
 * looked up after arming: a page populated from here on was written or read,
 * and the walk sees it either way. With frames hidden and swap on, an entry
 * in swap with the uffd-wp bit may be a marker the arming left on an empty
 * page: count it only where @before (the populated ranges before arming) had
 * a page.
 */
static int add_populated(struct pm_watch *w, const struct pmi_watch_range *before, size_t nbefore,
			 const struct pmi_watch_range *only, size_t nonly)
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
				pmi_watch_keep(w, lo, hi, false);
			else
				keep_within(w, lo, hi, before, nbefore, &cursor);
		}
	}
	pm_walk_free(walk);
	return ret < 0 ? ret : w->out_err ? -w->out_err : 0;
}

int pm_watch_add(struct pm_watch *w, uint64_t start, uint64_t end, unsigned flags)
{
	struct pmi_watch_range *r;
	struct pmi_watch_range *before = NULL;
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
		err = -w->out_err;	/* ENOMEM from pmi_watch_keep */
	if (!err) {
		w->nranges++;
		if (flags & PM_WATCH_POPULATED)
			err = add_populated(w, before, nbefore, r, 1);
	}
	/* The first interval starts when writes are first watched; a later add (a new mapping) does not restart it. */
	if (!err && !w->cost.have && !w->cost.watching) {
		pmi_watch_cost_begin(w);
		w->cost.watching = true;
	}
	free(before);
	return err;
}

/* ---- mappings, one listing per batch ---- */

/* The process's mappings, read once. */
static int list_vmas(struct pm_watch *w, struct pmi_watch_vma **out, size_t *n)
{
	struct pm_maps *it = pm_maps_open(w->t);
	const struct pm_mapping *m;
	struct pmi_watch_vma *v = NULL, *p;
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
		v[(*n)++] = (struct pmi_watch_vma){ m->start, m->end, m->prot,
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
static int uncovered_writable(struct pm_watch *w, const struct pmi_watch_vma *v, size_t n, struct pmi_watch_range **out,
			      size_t *nout)
{
	struct pmi_watch_range *r = NULL, *p;
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
				r[(*nout)++] = (struct pmi_watch_range){ a, piece_end };
			}
			a = piece_end;
		}
	}
	*out = r;
	return 0;
}

/* Merge the sorted ranges @add into w->covered (sorted, merged). */
static int cover(struct pm_watch *w, const struct pmi_watch_range *add, size_t n)
{
	size_t total = w->ncovered + n, i = 0, j = 0, k = 0;
	struct pmi_watch_range *m = malloc((total ? total : 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	while (i < w->ncovered || j < n) {
		const struct pmi_watch_range *x = j >= n || (i < w->ncovered && w->covered[i].start <= add[j].start) ?
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
	struct pmi_watch_range *todo = NULL, *before = NULL;
	struct pmi_watch_vma *vmas = NULL;
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

int pm_watch_collect(struct pm_watch *w, unsigned flags, const struct pm_written **out, size_t *n)
{
	double t0 = pmi_now();
	uint64_t small = 0;
	size_t i;
	int err;

	if (flags & ~PM_WATCH_RESET)
		return -EINVAL;
	w->nout = 0;
	w->cost.hold_now = 0;	/* holds of this collect only, not of pm_watch_add's arming */
	w->cost.hold_sum = 0;
	w->cost.held = false;
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
		pmi_watch_emit(w, w->pending[i].start, w->pending[i].end, w->pending[i].huge);
	if (!err && w->out_err)
		err = -w->out_err;
	if (!err && (flags & PM_WATCH_RESET))
		w->npending = 0;
	if (err < 0) {
		w->nout = 0;
		return err;
	}
	pmi_watch_coalesce(w);
	w->stats.collects++;
	for (i = 0; i < w->nout; i++) {
		uint64_t pages = (w->out[i].end - w->out[i].start) / w->psize;

		w->stats.written_pages += pages;
		if (w->out[i].huge)
			w->stats.huge_pages += pages;
		else
			small += pages;
	}
	pmi_watch_cost_collect(w, t0, pmi_now(), small);
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

const char *pm_watch_notice(const struct pm_watch *w)
{
	return w->notice[0] ? w->notice : NULL;
}

bool pm_watch_atomic(const struct pm_watch *w)
{
	return w->ops->atomic_now ? w->ops->atomic_now(w) : w->ops->atomic;
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
