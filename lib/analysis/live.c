/*
 * live.c - a live process table (pagemap/live.h): every process's smaps_rollup, read again only
 * when its stat line moved, the rest round-robin within the table's bound on a row's age.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "account.h"
#include "live.h"

struct live_ent {
	struct pm_live_row row;
	struct pmi_stat_line st;
	double read_at;			/* monotonic seconds of acct's read; < 0: never */
	bool moved;			/* the stat line moved since the refresh before */
};

struct pm_live {
	struct pm_ctx *ctx;
	double max_age;
	double last;			/* monotonic seconds of the refresh before; < 0: none */
	struct live_ent *ents, *old;	/* this refresh's rows and the one before's, in PID order */
	size_t n, nold, cap, oldcap;
	struct pm_live_stats st;
	size_t *cand;			/* scratch: indices of unmoved rows, oldest first */
	double *ages;
	pm_live_filter_fn filter;
	void *filter_data;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct pm_live *pm_live_new(struct pm_ctx *ctx, double max_age)
{
	struct pm_live *l;

	if (!ctx || !(max_age > 0)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(l = calloc(1, sizeof(*l))))
		return NULL;
	l->ctx = ctx;
	l->max_age = max_age;
	l->last = -1;
	return l;
}

void pm_live_free(struct pm_live *l)
{
	if (!l)
		return;
	free(l->ents);
	free(l->old);
	free(l->cand);
	free(l->ages);
	free(l);
}

void pm_live_set_filter(struct pm_live *l, pm_live_filter_fn fn, void *data)
{
	l->filter = fn;
	l->filter_data = data;
}

size_t pm_live_count(const struct pm_live *l)
{
	return l->n;
}

const struct pm_live_row *pm_live_at(const struct pm_live *l, size_t i)
{
	return i < l->n ? &l->ents[i].row : NULL;
}

void pm_live_stats(const struct pm_live *l, struct pm_live_stats *out)
{
	*out = l->st;
}

static struct live_ent *find_old(struct pm_live *l, pid_t pid)
{
	size_t lo = 0, hi = l->nold;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->old[mid].row.pid == pid)
			return &l->old[mid];
		if (l->old[mid].row.pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void read_uid(struct pm_live *l, struct pm_live_row *row)
{
	char path[4096], buf[4096], *a, *e;
	unsigned long v;

	if (pmi_pid_path(l->ctx, path, sizeof(path), row->pid, "status") < 0 ||
	    pmi_read_small_file(l->ctx, path, buf, sizeof(buf)) <= 0 || !(a = strstr(buf, "\nUid:")))
		return;
	v = strtoul(a + 5, &e, 10);
	if (e != a + 5) {
		row->uid = (uid_t)v;
		row->uid_known = true;
	}
}

static enum pm_proc_state state_of(const struct pmi_stat_line *st)
{
	if (st->kthread)
		return PM_PROC_KTHREAD;
	return st->state == 'Z' || st->state == 'X' ? PM_PROC_ZOMBIE : PM_PROC_RUNNING;
}

/* Row of @pid from its stat line, carried over from the refresh before when it is the same process. */
static int add_row(struct pm_live *l, pid_t pid, size_t *matched)
{
	char path[4096], buf[4096], comm[64];
	struct pmi_stat_line st;
	struct live_ent *e, *was;
	int r = pmi_pid_path(l->ctx, path, sizeof(path), pid, "stat");

	if (r == 0)
		r = pmi_read_small_file(l->ctx, path, buf, sizeof(buf));
	if (r <= 0 || pmi_stat_line_parse(buf, (size_t)r, &st, comm, sizeof(comm)) < 0)
		return 0;	/* ended meanwhile (or not a process we can list): no row */
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct live_ent *p = realloc(l->ents, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->ents = p;
		l->cap = cap;
	}
	e = &l->ents[l->n++];
	was = find_old(l, pid);
	if (was && was->st.starttime == st.starttime) {
		*e = *was;
		e->row.is_new = false;
		e->moved = pmi_stat_line_moved(&was->st, &st);
		(*matched)++;
	} else {	/* new, or a PID reused by another process */
		memset(e, 0, sizeof(*e));
		e->row.pid = pid;
		e->row.is_new = true;
		e->read_at = -1;
		e->moved = true;
		read_uid(l, &e->row);
	}
	e->st = st;
	e->row.state = state_of(&st);
	memcpy(e->row.comm, comm, sizeof(comm));
	e->row.read_now = false;
	e->row.prev = e->row.acct;
	if (l->filter && !l->filter(l->filter_data, &e->row))
		l->n--;	/* not asked for: no row, and its rollup is never read (a live one is not gone) */
	return 0;
}

static int list_rows(struct pm_live *l, size_t *matched)
{
	char path[4096];
	struct dirent *d;
	DIR *dir;
	int r = pmi_path(l->ctx, path, sizeof(path), "/proc");

	if (r < 0)
		return r;
	if (!(dir = opendir(path)))
		return -errno;
	while ((errno = 0, d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (d->d_name[0] < '1' || d->d_name[0] > '9' || *end || pid <= 0 || pid > 0x7fffffff)
			continue;
		if ((r = add_row(l, (pid_t)pid, matched)) < 0)
			break;
	}
	if (r == 0 && errno)
		r = -errno;
	closedir(dir);
	return r;
}

static int by_pid(const void *a, const void *b)
{
	const struct live_ent *x = a, *y = b;

	return (x->row.pid > y->row.pid) - (x->row.pid < y->row.pid);
}

static void read_row(struct pm_live *l, struct live_ent *e, double now)
{
	e->row.err = pmi_account_rollup(l->ctx, e->row.pid, &e->row.acct);
	if (e->row.err)
		memset(&e->row.acct, 0, sizeof(e->row.acct));
	if (e->row.is_new)
		e->row.prev = e->row.acct;
	e->read_at = now;
	e->row.read_now = true;
	l->st.read++;
}

/* Does @e have memory whose rollup this reader may read? Kernel threads and zombies have none. */
static bool readable(const struct live_ent *e)
{
	return e->row.state == PM_PROC_RUNNING && !(e->row.err == -EACCES && !e->row.is_new);
}

static int oldest_first(const void *a, const void *b, void *arg)
{
	const struct pm_live *l = arg;
	double x = l->ents[*(const size_t *)a].read_at, y = l->ents[*(const size_t *)b].read_at;

	return (x > y) - (x < y);
}

/* Read the rows that moved and the quota of the others, oldest first. */
static int read_rows(struct pm_live *l, double now, double next)
{
	size_t i, nc = 0, quota;

	free(l->cand);
	free(l->ages);
	l->cand = malloc((l->n + 1) * sizeof(*l->cand));
	l->ages = malloc((l->n + 1) * sizeof(*l->ages));
	if (!l->cand || !l->ages)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		struct live_ent *e = &l->ents[i];

		if (!readable(e)) {
			if (e->row.state != PM_PROC_RUNNING)
				e->row.err = -ESRCH;
			continue;
		}
		if (e->moved || e->read_at < 0) {
			read_row(l, e, now);
			l->st.read_moved++;
		} else {
			l->cand[nc++] = i;
		}
	}
	qsort_r(l->cand, nc, sizeof(*l->cand), oldest_first, l);
	for (i = 0; i < nc; i++)
		l->ages[i] = now - l->ents[l->cand[i]].read_at;
	quota = pmi_live_quota(l->ages, nc, next, l->max_age);
	for (i = 0; i < quota; i++)
		read_row(l, &l->ents[l->cand[i]], now);
	l->st.read_aged = quota;
	return 0;
}

int pm_live_refresh(struct pm_live *l, double next)
{
	struct live_ent *t;
	size_t matched = 0, i, c;
	double now = now_s();
	int r;

	t = l->old, l->old = l->ents, l->ents = t;
	c = l->oldcap, l->oldcap = l->cap, l->cap = c;
	l->nold = l->n;
	l->n = 0;
	memset(&l->st, 0, sizeof(l->st));
	l->st.max_age = l->max_age;
	l->st.interval = l->last < 0 ? 0 : now - l->last;
	if ((r = list_rows(l, &matched)) < 0)
		return r;
	qsort(l->ents, l->n, sizeof(*l->ents), by_pid);
	if ((r = read_rows(l, now, next)) < 0)
		return r;
	l->last = now;
	l->st.rows = l->n;
	l->st.gone = l->nold - matched;
	for (i = 0; i < l->n; i++) {
		struct live_ent *e = &l->ents[i];

		e->row.age = e->read_at < 0 ? 0 : now - e->read_at;
		if (e->row.err == -EACCES)
			l->st.hidden++;
		if (e->read_at >= 0 && e->row.age > l->st.oldest)
			l->st.oldest = e->row.age;
	}
	l->st.unread = l->n - l->st.read;
	return 0;
}
