/*
 * live.c - a live process table (pagemap/live.h): every process's smaps_rollup, read again only
 * when its stat line moved, the rest round-robin within the table's bound on a row's age.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "account.h"
#include "live.h"

struct live_ent {
	struct pm_live_row row;
	struct pm_proc_stat st;
	double read_at;			/* monotonic seconds of acct's read; < 0: never */
	bool moved;			/* the stat line moved since the refresh before */
	bool rejected;			/* the filter refused it: kept (no status read again), never shown */
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
	size_t *vis, nvis;		/* the rows shown: indices of those the filter kept */
	size_t scap;			/* room in cand, ages and vis: kept from refresh to refresh */
	pm_live_filter_fn filter;
	void *filter_data;
	bool refilter;			/* a new filter: every row judged again at the next refresh */
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
	free(l->vis);
	free(l);
}

void pm_live_set_filter(struct pm_live *l, pm_live_filter_fn fn, void *data)
{
	l->filter = fn;
	l->filter_data = data;
	l->refilter = true;
}

size_t pm_live_count(const struct pm_live *l)
{
	return l->nvis;
}

const struct pm_live_row *pm_live_at(const struct pm_live *l, size_t i)
{
	return i < l->nvis ? &l->ents[l->vis[i]].row : NULL;
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
	uid_t uid;

	if (pm_proc_uid(l->ctx, row->pid, &uid) == 0) {	/* a failed read keeps what was known */
		row->uid = uid;
		row->uid_known = true;
	}
}

/* Row of @pid from its stat line, carried over from the refresh before when it is the same process. */
static int add_row(struct pm_live *l, pid_t pid, size_t *matched)
{
	char path[4096], buf[4096], comm[64];
	struct pm_proc_stat st;
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
		*matched += !was->rejected;	/* a row shown before that is still there: not gone */
	} else {	/* new, or a PID reused by another process */
		memset(e, 0, sizeof(*e));
		e->row.pid = pid;
		e->row.is_new = true;
		e->read_at = -1;
		e->moved = true;
		read_uid(l, &e->row);
	}
	e->st = st;
	e->row.state = pmi_stat_state(&st);
	memcpy(e->row.comm, comm, sizeof(comm));
	e->row.read_now = false;
	/*
	 * The filter judges a process once, and again when its stat line moved (its UID or cgroup may
	 * have changed). A row the filter left out is not read otherwise, so a setuid that moves no
	 * stat field keeps it out until one moves (shown rows read their UID with every rollup).
	 */
	if (e->rejected && e->moved)
		read_uid(l, &e->row);
	if (e->row.is_new || l->refilter || (e->rejected && e->moved))
		e->rejected = l->filter && !l->filter(l->filter_data, &e->row);
	return 0;
}

static int list_rows(struct pm_live *l, size_t *matched)
{
	DIR *dir;
	pid_t pid;
	int r = pmi_proc_dir_open(l->ctx, &dir), more;

	if (r < 0)
		return r;
	while ((more = pmi_proc_dir_next(dir, &pid)) == 0 && (r = add_row(l, pid, matched)) == 0)
		;
	closedir(dir);
	return r < 0 ? r : more < 0 ? more : 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct live_ent *x = a, *y = b;

	return (x->row.pid > y->row.pid) - (x->row.pid < y->row.pid);
}

/*
 * The rollup again, and the UID with it: a setuid can take less than a clock tick and no fault, so a
 * stat line that did not move does not prove the UID kept; read with every rollup, a row's UID is at
 * most as old as its figures (--max-age). prev and interval become the read before and the time
 * between the two, so a change is divided by the time it took, however many frames the row waited
 * (never by one frame's interval).
 */
static void read_row(struct pm_live *l, struct live_ent *e, double now)
{
	struct pm_account was = e->row.acct;

	e->row.err = pmi_account_rollup(l->ctx, e->row.pid, &e->row.acct);
	if (e->row.err)
		memset(&e->row.acct, 0, sizeof(e->row.acct));
	if (!e->row.is_new)
		read_uid(l, &e->row);
	e->row.prev = e->read_at < 0 || e->row.err ? e->row.acct : was;
	e->row.interval = e->read_at < 0 || e->row.err ? 0 : now - e->read_at;
	e->read_at = now;
	e->row.read_now = true;
	l->st.read++;
}

/*
 * Does @e have memory whose rollup this reader may read? Kernel threads and zombies have none; one
 * refused (EACCES) is tried again only when its stat line moves (a setuid may make it readable).
 */
static bool readable(const struct live_ent *e)
{
	return !e->rejected && e->row.state == PM_PROC_RUNNING && !(e->row.err == -EACCES && !e->moved);
}

static int oldest_first(const void *a, const void *b, void *arg)
{
	const struct pm_live *l = arg;
	double x = l->ents[*(const size_t *)a].read_at, y = l->ents[*(const size_t *)b].read_at;

	return (x > y) - (x < y);
}

/* Read the rows that moved and the quota of the others, oldest first. */
static void read_rows(struct pm_live *l, double now, double next)
{
	size_t i, nc = 0, quota;

	for (i = 0; i < l->n; i++) {
		struct live_ent *e = &l->ents[i];

		if (!readable(e)) {
			if (!e->rejected && e->row.state != PM_PROC_RUNNING) {
				e->row.err = -ESRCH;	/* no memory of its own: nothing to read */
				memset(&e->row.acct, 0, sizeof(e->row.acct));
				e->row.prev = e->row.acct;
				e->read_at = -1;
			}
			continue;
		}
		if (e->moved || e->read_at < 0) {
			read_row(l, e, now);
			l->st.read_moved++;
		} else {
			l->cand[nc++] = i;
		}
	}
	if (nc > 1)
		qsort_r(l->cand, nc, sizeof(*l->cand), oldest_first, l);
	for (i = 0; i < nc; i++)
		l->ages[i] = now - l->ents[l->cand[i]].read_at;
	quota = pmi_live_quota(l->ages, nc, next, l->max_age);
	for (i = 0; i < quota; i++)
		read_row(l, &l->ents[l->cand[i]], now);
	l->st.read_aged = quota;
}

static void swap_tables(struct pm_live *l)
{
	struct live_ent *t = l->old;
	size_t c = l->oldcap, n = l->nold;

	l->old = l->ents, l->ents = t;
	l->oldcap = l->cap, l->cap = c;
	l->nold = l->n, l->n = n;
}

/* Room in the scratch arrays for this refresh's rows: grown when the table grows, else kept. */
static int scratch(struct pm_live *l)
{
	size_t cap = l->scap ? l->scap : 256, *c, *v;
	double *a;

	while (cap < l->n + 1)
		cap *= 2;
	if (cap == l->scap)
		return 0;
	if ((c = realloc(l->cand, cap * sizeof(*c))))
		l->cand = c;
	if ((a = realloc(l->ages, cap * sizeof(*a))))
		l->ages = a;
	if ((v = realloc(l->vis, cap * sizeof(*v))))
		l->vis = v;
	if (!c || !a || !v)
		return -ENOMEM;
	l->scap = cap;
	return 0;
}

/* The rows shown, their ages (none for a row never read: not in oldest), and the counts. */
static void settle(struct pm_live *l, double now)
{
	size_t i;

	l->nvis = 0;
	for (i = 0; i < l->n; i++) {
		struct live_ent *e = &l->ents[i];

		if (e->rejected)
			continue;
		l->vis[l->nvis++] = i;
		e->row.age = e->read_at < 0 || e->row.err ? -1 : now - e->read_at;
		l->st.hidden += e->row.err == -EACCES;
		if (e->row.age > l->st.oldest)
			l->st.oldest = e->row.age;
	}
	l->st.rows = l->nvis;
	l->st.unread = l->nvis - l->st.read;
}

int pm_live_refresh(struct pm_live *l, double next)
{
	size_t matched = 0, shown = l->nvis;
	double now = now_s();
	int r;

	swap_tables(l);
	l->n = 0;
	memset(&l->st, 0, sizeof(l->st));
	l->st.max_age = l->max_age;
	l->st.interval = l->last < 0 ? 0 : now - l->last;
	if ((r = list_rows(l, &matched)) < 0) {
		swap_tables(l);	/* the last refresh's rows stand; the next refresh starts from them */
		return r;
	}
	if (l->n > 1)
		qsort(l->ents, l->n, sizeof(*l->ents), by_pid);
	if ((r = scratch(l)) < 0) {
		l->nvis = 0;	/* the rows shown were the table before's: none now */
		return r;
	}
	read_rows(l, now, next);
	settle(l, now);
	l->last = now;
	l->refilter = false;
	l->st.gone = shown > matched ? shown - matched : 0;
	return 0;
}
