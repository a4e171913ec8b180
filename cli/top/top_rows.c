/*
 * top_rows.c - a frame's rows from the live table: the processes chosen (-p, -u, --cgroup, the
 * search text), kernel threads and zombies counted apart, figures per second, groups, sorting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "cli.h"
#include "top.h"

const char *const top_fig_names[NFIGS] = { "RSS", "PSS", "USS", "SWAP", "SHARED", "HUGETLB" };

/* Memory cgroups by PID, read once per process (a reused PID is a new row, read again). */
struct cg_ent {
	pid_t pid;
	char *path;			/* NULL: unknown */
};
struct top_cgroups {
	struct cg_ent *v, *old;
	size_t n, nold;
};

struct top_cgroups *top_cgroups_new(void)
{
	return calloc(1, sizeof(struct top_cgroups));
}

static void cg_drop(struct cg_ent *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

void top_cgroups_free(struct top_cgroups *cg)
{
	if (!cg)
		return;
	cg_drop(cg->v, cg->n);
	cg_drop(cg->old, cg->nold);
	free(cg);
}

/* The cgroup of @row, kept from the frame before when it is the same process. */
static const char *cg_of(struct top_cgroups *cg, struct pm_ctx *ctx, const struct pm_live_row *row, size_t *at)
{
	char buf[4096];
	struct cg_ent *e = &cg->v[cg->n++];

	while (*at < cg->nold && cg->old[*at].pid < row->pid)
		(*at)++;
	e->pid = row->pid;
	e->path = NULL;
	if (!row->is_new && *at < cg->nold && cg->old[*at].pid == row->pid) {
		e->path = cg->old[*at].path;
		cg->old[*at].path = NULL;
	} else if (pm_memcg_of(ctx, row->pid, buf, sizeof(buf)) == 0) {
		e->path = strdup(buf);
	}
	return e->path;
}

static bool cg_within(const char *cg, const char *want)
{
	return cg && pm_memcg_within(cg, want);
}

static bool pid_wanted(const struct top_opts *to, pid_t pid)
{
	size_t i;

	if (!to->npids)
		return true;
	for (i = 0; i < to->npids; i++)
		if (to->pids[i] == pid)
			return true;
	return false;
}

static int frame_grow(struct top_frame *f)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct top_row *p = realloc(f->rows, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->rows = p;
		f->cap = cap;
	}
	return 0;
}

static void figs_of(const struct pm_account *a, uint64_t *fig)
{
	fig[FIG_RSS] = a->rss;
	fig[FIG_PSS] = a->pss;
	fig[FIG_USS] = a->uss;
	fig[FIG_SWAP] = a->swap;
	fig[FIG_SHARED] = a->shared;
	fig[FIG_HUGETLB] = a->hugetlb;
}

/* A process's row; its changes per second over the time between its last two reads. */
static void row_of(struct top_row *r, const struct pm_live_row *lr)
{
	uint64_t prev[NFIGS];
	int i;

	memset(r, 0, sizeof(*r));
	r->pid = lr->pid;
	r->procs = 1;
	snprintf(r->key, sizeof(r->key), "%s", lr->comm);
	r->uid_known = lr->uid_known;
	r->uid = lr->uid;
	r->age = lr->age;
	r->err = lr->err == -EACCES ? -EACCES : 0;
	r->hidden = r->err != 0;
	figs_of(&lr->acct, r->fig);
	figs_of(&lr->prev, prev);
	for (i = 0; i < NFIGS; i++)
		r->rate[i] = lr->interval > 0 ? ((double)r->fig[i] - (double)prev[i]) / lr->interval : 0;
}

/* The group key of @r; @cg its cgroup (NULL unknown). */
static void group_key(struct pm_ctx *ctx, const struct top_opts *to, const struct top_row *r, const char *cg,
		      char *key, size_t size)
{

	switch (to->group) {
	case GROUP_USER:	/* as ps --group-by user: each UID its own group, by name or else by number */
		if (r->uid_known)
			cli_user_label(ctx, r->uid, key, size);
		else
			snprintf(key, size, CLI_UNKNOWN_GROUP);
		break;
	case GROUP_CGROUP:
		snprintf(key, size, "%s", cg ? cg : CLI_UNKNOWN_GROUP);
		break;
	default:
		snprintf(key, size, "%s", r->key);
	}
}

/* Add @r to the group of @key (a linear search: a frame has at most a few thousand groups). */
static int add_to_group(struct top_frame *f, const struct top_row *r, const char *key)
{
	struct top_row *g = NULL;
	size_t i;
	int k;

	for (i = 0; i < f->n && !g; i++)
		if (!strcmp(f->rows[i].key, key))
			g = &f->rows[i];
	if (!g) {
		if (frame_grow(f) < 0)
			return -ENOMEM;
		g = &f->rows[f->n++];
		memset(g, 0, sizeof(*g));
		snprintf(g->key, sizeof(g->key), "%s", key);
		g->uid_known = r->uid_known;
		g->uid = r->uid;
	}
	g->procs++;
	g->hidden += r->hidden;
	for (k = 0; k < NFIGS; k++) {
		g->fig[k] += r->fig[k];
		g->rate[k] += r->rate[k];
	}
	if (g->procs == 1 || r->age > g->age)
		g->age = r->age;
	g->err = g->hidden == g->procs ? -EACCES : 0;	/* every one hidden: the group's figures are unknown */
	return 0;
}

static int cmp_sort(const struct top_opts *to, const struct top_row *a, const struct top_row *b)
{
	switch (to->sort_by) {
	case SORT_PID:
		return (a->pid > b->pid) - (a->pid < b->pid);
	case SORT_COMMAND:
		return strcmp(a->key, b->key);
	default:	/* largest first, then by PID (or key) so that equal rows keep their places */
		if (a->fig[to->sort] != b->fig[to->sort])
			return a->fig[to->sort] < b->fig[to->sort] ? 1 : -1;
		return a->pid != b->pid ? (a->pid > b->pid) - (a->pid < b->pid) : strcmp(a->key, b->key);
	}
}

static int by_opts(const void *a, const void *b, void *to)
{
	return cmp_sort(to, a, b);
}

/* Does @lr's command name hold the search text? (-p, -u and --cgroup chose the rows already: top_live_filter.) */
static bool chosen(struct pm_ctx *ctx, const struct top_opts *to, const struct pm_live_row *lr,
		   struct top_cgroups *cg, size_t *at, const char **cgp)
{
	*cgp = to->group == GROUP_CGROUP ? cg_of(cg, ctx, lr, at) : NULL;
	return !to->filter || !*to->filter || strcasestr(lr->comm, to->filter);
}

bool top_live_filter(void *data, const struct pm_live_row *row)
{
	const struct top_filter *f = data;
	char cg[4096];

	if (!pid_wanted(f->to, row->pid) || (f->to->by_user && (!row->uid_known || row->uid != f->to->user)))
		return false;
	/* Read each frame: a process may move to another cgroup, and only those of --cgroup are read at all. */
	return !f->to->cgroup || (pm_memcg_of(f->ctx, row->pid, cg, sizeof(cg)) == 0 && cg_within(cg, f->to->cgroup));
}

int top_frame_fill(struct top_frame *f, struct pm_ctx *ctx, const struct pm_live *l, const struct top_opts *to,
		   struct top_cgroups *cg)
{
	size_t i, at = 0, n = pm_live_count(l);
	struct top_cgroups tmp;

	f->n = f->kthreads = f->zombies = f->hidden = 0;
	pm_live_stats(l, &f->live);
	/* This frame's cgroups replace the last frame's; those not carried over are freed. */
	tmp = *cg;
	cg->old = tmp.v, cg->nold = tmp.n;
	cg_drop(tmp.old, tmp.nold);
	cg->v = NULL, cg->n = 0;
	if (to->group == GROUP_CGROUP && !(cg->v = calloc(n + 1, sizeof(*cg->v))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct pm_live_row *lr = pm_live_at(l, i);
		const char *cgp;
		struct top_row r;
		char key[256];

		if (!chosen(ctx, to, lr, cg, &at, &cgp))
			continue;
		if (lr->state == PM_PROC_KTHREAD || lr->state == PM_PROC_ZOMBIE) {
			*(lr->state == PM_PROC_KTHREAD ? &f->kthreads : &f->zombies) += 1;
			continue;
		}
		if (lr->err && lr->err != -EACCES)
			continue;	/* ended between its stat and its rollup */
		row_of(&r, lr);
		f->hidden += r.err != 0;
		if (to->group != GROUP_NONE) {
			group_key(ctx, to, &r, cgp, key, sizeof(key));
			if (add_to_group(f, &r, key) < 0)
				return -ENOMEM;
		} else {
			if (frame_grow(f) < 0)
				return -ENOMEM;
			f->rows[f->n++] = r;
		}
	}
	if (f->n > 1)
		qsort_r(f->rows, f->n, sizeof(*f->rows), by_opts, (void *)to);
	return 0;
}

void top_frame_free(struct top_frame *f)
{
	free(f->rows);
	f->rows = NULL;
	f->n = f->cap = 0;
}

int top_parse_sort(const char *arg, struct top_opts *to)
{
	int i;

	if (!strcasecmp(arg, "PID")) {
		to->sort_by = SORT_PID;
		return 0;
	}
	if (!strcasecmp(arg, "COMMAND") || !strcasecmp(arg, "GROUP")) {
		to->sort_by = SORT_COMMAND;
		return 0;
	}
	for (i = 0; i < NFIGS; i++)
		if (!strcasecmp(arg, top_fig_names[i])) {
			to->sort_by = SORT_FIG;
			to->sort = (enum top_fig)i;
			return 0;
		}
	return -EINVAL;
}

int top_parse_group(const char *arg, enum top_group *g)
{
	static const char *const names[] = { [GROUP_USER] = "user", [GROUP_COMM] = "comm", [GROUP_CGROUP] = "cgroup" };
	int i;

	for (i = GROUP_USER; i <= GROUP_CGROUP; i++)
		if (!strcmp(arg, names[i])) {
			*g = (enum top_group)i;
			return 0;
		}
	return -EINVAL;
}

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int top_refresh(struct pm_ctx *ctx, struct pm_live *l, struct top_frame *f, const struct top_opts *to,
		struct top_cgroups *cg, double t0)
{
	int r = pm_live_refresh(l, to->delay);

	if (r < 0)
		return r;
	f->mem_prev = f->mem;
	f->mem_prev_known = f->mem_known;
	f->mem_known = pm_live_memory(ctx, &f->mem) == 0;
	f->t = top_now() - t0;
	return top_frame_fill(f, ctx, l, to, cg);
}

void top_refresh_error(struct pm_ctx *ctx, int err)
{
	if (err == -ENOMEM)
		cli_error(ENOMEM, "cannot make a frame");
	else
		cli_error(-err, "cannot list %s/proc", strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "");
}
