/* export_fleet.c - one scrape for `pagemap export` and `serve`: processes into groups, then metric families. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "export_fleet.h"

#define OTHER "other"
#define FIXED_SERIES 32		/* self-telemetry and frame classes, with room to spare */
#define QUICK_SERIES 8		/* per group: rss x3, uss, swap, huge x2, processes */
#define EXACT_SERIES 3		/* per group: pss, shared, shared with other groups */

double fleet_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int fleet_parse_by(const char *s, enum fleet_by *by)
{
	static const char *const names[] = { "cgroup", "user", "comm", "pid", "rules" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*by = (enum fleet_by)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- the group of a process ---- */

void fleet_group_key(struct pm_ctx *ctx, const struct fleet_opts *o, const struct pm_proc *p, char *key,
		     size_t size)
{
	struct passwd *pw;
	size_t i;

	switch (o->by) {
	case BY_CGROUP:
		if (pm_memcg_of(ctx, p->pid, key, size) < 0)
			snprintf(key, size, CLI_UNKNOWN_GROUP);
		return;
	case BY_USER:
		if (p->uid_known && o->user_key) {
			o->user_key(ctx, p->uid, key, size);
			return;
		}
		pw = p->uid_known && !strcmp(pm_ctx_root(ctx), "/") ? getpwuid(p->uid) : NULL;
		if (pw)
			snprintf(key, size, "%s", pw->pw_name);
		else if (p->uid_known)
			snprintf(key, size, "%u", (unsigned)p->uid);
		else
			snprintf(key, size, CLI_UNKNOWN_GROUP);
		return;
	case BY_PID:
		snprintf(key, size, "%d", (int)p->pid);
		return;
	case BY_RULES:
		for (i = 0; i < o->nrules; i++)
			if (!fnmatch(o->rules[i].pattern, p->comm, 0)) {
				snprintf(key, size, "%s", o->rules[i].name);
				return;
			}
		snprintf(key, size, "unmatched");
		return;
	default:
		snprintf(key, size, "%s", p->comm);
	}
}

/* ---- rules file ---- */

static int rule_line(char *line, struct fleet_opts *o, char *err, size_t errsize, unsigned lineno)
{
	char *name, *pat, *save = NULL;
	struct fleet_rule *r;

	line[strcspn(line, "#")] = '\0';
	if (!(name = strtok_r(line, " \t\r", &save)))
		return 0;
	pat = strtok_r(NULL, " \t\r", &save);
	if (!pat || strtok_r(NULL, " \t\r", &save) || strlen(name) > 127 || strlen(pat) > 255) {
		snprintf(err, errsize, "line %u: expected GROUP PATTERN", lineno);
		return -EINVAL;
	}
	if (o->nrules == FLEET_MAX_RULES) {
		snprintf(err, errsize, "line %u: more than %d rules", lineno, FLEET_MAX_RULES);
		return -E2BIG;
	}
	if (!o->rules && !(o->rules = calloc(FLEET_MAX_RULES, sizeof(*o->rules))))
		return -ENOMEM;
	r = &o->rules[o->nrules];
	r->name = strdup(name);
	r->pattern = strdup(pat);
	if (!r->name || !r->pattern) {
		free(r->name);
		free(r->pattern);
		return -ENOMEM;
	}
	o->nrules++;
	return 0;
}

int fleet_rules_parse(const char *text, struct fleet_opts *o, char *err, size_t errsize)
{
	char *copy = strdup(text), *line, *next;
	unsigned lineno = 0;
	int r = copy ? 0 : -ENOMEM;

	for (line = copy; r == 0 && line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		r = rule_line(line, o, err, errsize, lineno);
	}
	free(copy);
	if (r == 0 && !o->nrules) {
		snprintf(err, errsize, "no rules");
		r = -EINVAL;
	}
	return r;
}

int fleet_rules_load(const char *path, struct fleet_opts *o, char *err, size_t errsize)
{
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f) {
		snprintf(err, errsize, "%s", strerror(errno));
		return -errno;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n == sizeof(buf)) {
		snprintf(err, errsize, "larger than %zu bytes", sizeof(buf) - 1);
		return -EFBIG;
	}
	buf[n] = '\0';
	if (strlen(buf) != n) {
		snprintf(err, errsize, "a NUL byte: not a text file");
		return -EINVAL;
	}
	return fleet_rules_parse(buf, o, err, errsize);
}

void fleet_rules_free(struct fleet_opts *o)
{
	size_t i;

	for (i = 0; i < o->nrules; i++) {
		free(o->rules[i].name);
		free(o->rules[i].pattern);
	}
	free(o->rules);
	o->rules = NULL;
	o->nrules = 0;
}

/* ---- collecting ---- */

struct tally {
	uint64_t gone, perm, budget, accounted, entries, longest_ns;
	bool visible;
};

static void skip(struct tally *t, int err)
{
	if (err == EACCES || err == EPERM)
		t->perm++;
	else
		t->gone++;	/* ESRCH, ENOENT: exited (or exec'd) meanwhile */
}

/* The cheap tier of every process into @g; after @deadline (0: none) the rest are skipped for the budget. */
static int collect_quick(struct pm_ctx *ctx, const struct fleet_opts *o, struct pm_groups *g, struct tally *t)
{
	double deadline = o->budget > 0 ? fleet_now() + o->budget : 0;
	struct pm_procs *it = pm_procs_open(ctx);
	const struct pm_proc *p;
	struct pm_target *tg;
	struct pm_quick q;
	char key[4096];
	int r, e;

	if (!it)
		return -errno;
	while ((r = pm_procs_next(it, &p)) == 0) {
		if (p->state == PM_PROC_KTHREAD)
			continue;
		if (p->state != PM_PROC_RUNNING) {
			t->gone++;
			continue;
		}
		if (deadline && fleet_now() > deadline) {
			t->budget++;
			continue;
		}
		tg = pm_target_open(ctx, p->pid);
		e = tg ? -pm_quick_process(tg, &q) : errno;
		if (tg && pm_target_pfn_view(tg) == PM_PFN_VISIBLE)
			t->visible = true;
		pm_target_close(tg);
		if (e) {
			skip(t, e);
			continue;
		}
		fleet_group_key(ctx, o, p, key, sizeof(key));
		if ((r = pm_groups_add(g, key, &q)) < 0)
			break;
		t->accounted++;
		t->entries += q.entries;
		if (q.longest_ns > t->longest_ns)
			t->longest_ns = q.longest_ns;
	}
	pm_procs_close(it);
	return r < 0 ? r : 0;
}

/*
 * One process of the slow tier: its exact figures into @out's groups and, when @xs is given, its shared frames
 * under its group's number. Returns 0, a positive errno when the process is skipped, or -ENOMEM.
 */
static int exact_one(struct pm_ctx *ctx, const struct fleet_opts *o, const struct pm_proc *p, struct pm_kpage *k,
		     struct fleet_exact *out, struct pm_xshare **xs)
{
	struct pm_target *tg = pm_target_open(ctx, p->pid);
	struct pm_account a;
	char key[4096];
	int e = tg ? -pm_account_process(tg, k, &a) : errno, gi, xe;

	if (e == 0) {
		fleet_group_key(ctx, o, p, key, sizeof(key));
		e = pm_groups_add_exact(out->groups, key, &a);
		gi = e == 0 ? pm_groups_find(out->groups, key) : -ENOENT;
		/*
		 * A process gone meanwhile keeps the frames it added. Out of memory, or frames hidden (not root):
		 * no shared-with-other-groups figures this pass.
		 */
		if (*xs && gi >= 0 && (xe = pm_xshare_add(*xs, tg, (uint32_t)gi)) < 0 && (xe == -ENOMEM || xe == -EPERM)) {
			pm_xshare_free(*xs);
			*xs = NULL;
		}
	}
	pm_target_close(tg);
	return e;
}

/* Each group's bytes shared with other groups, from the frames collected in @xs. */
static void xshare_finish(struct pm_xshare *xs, struct pm_groups *g, bool *have)
{
	size_t i, n = pm_groups_count(g);
	uint64_t *bytes = calloc(n ? n : 1, sizeof(*bytes));

	if (bytes && pm_xshare_finish(xs, bytes, n) == 0) {
		for (i = 0; i < n; i++)
			pm_groups_add_xshared(g, pm_groups_at(g, i)->key, bytes[i]);
		*have = true;
	}
	free(bytes);
}

int fleet_exact_pass(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_exact *out)
{
	struct pm_procs *it = pm_procs_open(ctx);
	struct pm_kpage *k = it ? pm_kpage_open(ctx) : NULL;	/* NULL without root: smaps_rollup */
	struct pm_xshare *xs = k ? pm_xshare_new(ctx) : NULL;	/* frame numbers are visible to root only */
	double t0 = fleet_now();
	const struct pm_proc *p;
	int r = -ENOMEM, e;

	memset(out, 0, sizeof(*out));
	if (!it)
		return -errno;
	if (!(out->groups = pm_groups_new()))
		goto out;
	while ((r = pm_procs_next(it, &p)) == 0) {
		if (p->state != PM_PROC_RUNNING)
			continue;
		e = exact_one(ctx, o, p, k, out, &xs);
		if (e < 0) {
			r = e;
			break;
		}
		out->skipped_perm += e == EACCES || e == EPERM;
		out->skipped_gone += e > 0 && e != EACCES && e != EPERM;
	}
	if (r >= 0)
		r = 0;
	if (r == 0 && xs)
		xshare_finish(xs, out->groups, &out->have_xshared);
	if (r == 0 && k && pm_kpage_status(k, PM_KPAGE_FLAGS) == 0)
		out->have_classes = pm_classes_read(ctx, k, &out->classes) == 0;
	if (out->have_classes)	/* without MemFree, buddy and other stay as kpageflags gave them */
		out->have_free = pm_classes_free(ctx, &out->classes, &out->free_bytes) == 0;
out:
	pm_xshare_free(xs);
	pm_kpage_close(k);
	pm_procs_close(it);
	out->taken = fleet_now();
	out->duration = out->taken - t0;
	return r;
}

void fleet_exact_free(struct fleet_exact *e)
{
	pm_groups_free(e->groups);
	e->groups = NULL;
}

/* ---- writing ---- */

static void group_u64(struct mw *w, const char *group, const char *lname, const char *lval, uint64_t v)
{
	struct mw_label l[2] = { { "group", group }, { lname, lval } };

	mw_sample_u64(w, l, lname ? 2 : 1, v);
}

static void write_quick(struct mw *w, const struct pm_groups *g)
{
	size_t i, n = pm_groups_count(g);

#define EACH for (i = 0; i < n; i++)
#define G(i) pm_groups_at(g, i)
	mw_family(w, "pagemap_group_rss_bytes", MW_GAUGE, "bytes",
		  "Resident bytes of the group's processes as the kernel counts them (smaps Rss): "
		  "not the zero page, not hugetlb; by kind");
	EACH {
		group_u64(w, G(i)->key, "kind", "anon", G(i)->quick.anon);
		group_u64(w, G(i)->key, "kind", "file", G(i)->quick.file);
		group_u64(w, G(i)->key, "kind", "shmem", G(i)->quick.shmem);
	}
	mw_family(w, "pagemap_group_uss_bytes", MW_GAUGE, "bytes",
		  "Resident bytes mapped by one process only (pagemap exclusive bit), summed over the group");
	EACH group_u64(w, G(i)->key, NULL, NULL, G(i)->quick.uss);
	mw_family(w, "pagemap_group_swap_bytes", MW_GAUGE, "bytes", "Bytes of the group's processes in swap");
	EACH group_u64(w, G(i)->key, NULL, NULL, G(i)->quick.swap);
	mw_family(w, "pagemap_group_huge_bytes", MW_GAUGE, "bytes",
		  "Bytes in huge pages: PMD-mapped transparent huge pages of its own, not the huge zero page "
		  "(thp, also in rss), and hugetlb");
	EACH {
		group_u64(w, G(i)->key, "kind", "thp", G(i)->quick.thp);
		group_u64(w, G(i)->key, "kind", "hugetlb", G(i)->quick.hugetlb);
	}
	mw_family(w, "pagemap_group_processes", MW_GAUGE, NULL, "Processes accounted in the group this scrape");
	EACH group_u64(w, G(i)->key, NULL, NULL, G(i)->procs);
}

static void write_exact(struct mw *w, const struct pm_groups *g, bool xshared)
{
	size_t i, n = pm_groups_count(g);
	struct mw_label l[3];

	mw_family(w, "pagemap_group_pss_bytes", MW_GAUGE, "bytes",
		  "Proportional set size of the group from the slow tier (see pagemap_pss_age_seconds); "
		  "estimate=true where the kernel averages large folios' map counts");
	EACH {
		if (!G(i)->exact_procs)
			continue;
		l[0] = (struct mw_label){ "group", G(i)->key };
		l[1] = (struct mw_label){ "estimate", G(i)->exact.estimate ? "true" : "false" };
		l[2] = (struct mw_label){ "source", pm_account_source_name(G(i)->exact.source) };
		mw_sample_u64(w, l, 3, G(i)->exact.pss);
	}
	mw_family(w, "pagemap_group_shared_bytes", MW_GAUGE, "bytes",
		  "Resident bytes of pages mapped more than once, summed over the group's processes (slow tier)");
	EACH
		if (G(i)->exact_procs)
			group_u64(w, G(i)->key, NULL, NULL, G(i)->exact.shared);
	if (!xshared)
		goto out;
	mw_family(w, "pagemap_group_shared_other_groups_bytes", MW_GAUGE, "bytes",
		  "Resident bytes of the group's distinct frames that another group's processes map too (slow tier, "
		  "root; group=\"other\" sums the groups folded into it)");
	EACH
		if (G(i)->exact_procs)
			group_u64(w, G(i)->key, NULL, NULL, G(i)->xshared);
out:
#undef EACH
#undef G
}

/*
 * One sample per class. Free memory is its own class, "free" (MemFree), in the place of
 * "buddy": the kernel's count, and before Linux 4.10 kpageflags flagged only a free block's
 * first page, leaving the rest of free memory in "other". Without MemFree, buddy and other
 * as kpageflags gave them.
 */
static void write_classes(struct mw *w, const struct fleet_exact *ex)
{
	struct mw_label l;
	int i;

	mw_family(w, "pagemap_physical_bytes", MW_GAUGE, "bytes",
		  "Physical memory by page class from /proc/kpageflags (slow tier, root); "
		  "class=\"free\" is MemFree of /proc/meminfo, and \"other\" what no class "
		  "holds (kernel allocations, reserved, per-CPU free lists)");
	for (i = 0; i < PM_CLASS_COUNT; i++) {
		bool free_class = i == PM_CLASS_BUDDY && ex->have_free;

		l = (struct mw_label){ "class",
				       free_class ? "free" : pm_class_name((enum pm_class)i) };
		mw_sample_u64(w, &l, 1, free_class ? ex->free_bytes : ex->classes.bytes[i]);
	}
}

static void gauge(struct mw *w, const char *name, const char *unit, const char *help, double v)
{
	mw_family(w, name, MW_GAUGE, unit, help);
	mw_sample(w, NULL, 0, v);
}

static void write_self(struct mw *w, const struct fleet_state *st, const struct tally *t, size_t ngroups,
		       const struct fleet_exact *ex, double duration)
{
	struct mw_label l;

	mw_family(w, "pagemap_processes_skipped", MW_GAUGE, NULL,
		  "Processes not accounted this scrape, by reason: gone (exited meanwhile), permission, budget");
	l = (struct mw_label){ "reason", "gone" };
	mw_sample_u64(w, &l, 1, t->gone);
	l.value = "permission";
	mw_sample_u64(w, &l, 1, t->perm);
	l.value = "budget";
	mw_sample_u64(w, &l, 1, t->budget);
	mw_family(w, "pagemap_series_dropped", MW_COUNTER, NULL,
		  "Series not exported because of the series cap (their groups were folded into group=\"other\")");
	mw_sample_u64(w, NULL, 0, st->series_dropped);
	gauge(w, "pagemap_scrape_processes", NULL, "Processes accounted this scrape", (double)t->accounted);
	gauge(w, "pagemap_scrape_groups", NULL, "Groups exported this scrape (other included)", (double)ngroups);
	gauge(w, "pagemap_scrape_pagemap_entries", NULL, "Pagemap entries read this scrape (the scan back end reads only present and swapped regions' entries)", (double)t->entries);
	gauge(w, "pagemap_frames_visible", NULL, "1 when physical frame numbers are visible to the exporter (root)",
	      t->visible);
	gauge(w, "pagemap_longest_read_seconds", "seconds",
	      "The longest single pagemap read step of this scrape (how long one target's locks were held at most)",
	      t->longest_ns / 1e9);
	if (ex && ex->groups) {
		gauge(w, "pagemap_pss_age_seconds", "seconds", "Age of the slow tier's figures (exact PSS, classes)",
		      fleet_now() - ex->taken);
		gauge(w, "pagemap_pss_duration_seconds", "seconds", "How long the last slow-tier pass took",
		      ex->duration);
	}
	gauge(w, "pagemap_scrape_duration_seconds", "seconds", "How long this scrape took", duration);
}

/* How many groups fit under the series cap, "other" included. */
static size_t groups_allowed(const struct fleet_opts *o, bool exact)
{
	size_t per = QUICK_SERIES + (exact ? EXACT_SERIES : 0);
	size_t n = o->max_series > FIXED_SERIES ? (o->max_series - FIXED_SERIES) / per : 0;

	if (o->top && o->top + 1 < n)
		n = o->top + 1;
	return n ? n : 1;
}

int fleet_scrape(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_state *st,
		 const struct fleet_exact *ex, struct mw *w)
{
	return fleet_scrape_n(ctx, o, st, ex, w, 1);
}

int fleet_scrape_n(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_state *st,
		   const struct fleet_exact *ex, struct mw *w, size_t nw)
{
	struct pm_groups *g = pm_groups_new();
	bool exact = ex && ex->groups;
	double t0 = fleet_now();
	struct tally t = { 0 };
	size_t i, folded = 0;
	int r = g ? collect_quick(ctx, o, g, &t) : -ENOMEM;
	double duration;

	for (i = 0; r == 0 && exact && i < pm_groups_count(ex->groups); i++) {
		const struct pm_group *e = pm_groups_at(ex->groups, i);

		r = pm_groups_add_exact(g, e->key, &e->exact);
		if (r == 0)
			r = pm_groups_add_xshared(g, e->key, e->xshared);
	}
	if (r == 0)
		r = pm_groups_cap(g, groups_allowed(o, exact), OTHER, &folded);
	if (r == 0) {
		st->scrapes++;
		st->series_dropped += folded * (QUICK_SERIES + (exact ? EXACT_SERIES : 0));
		duration = fleet_now() - t0;
		for (i = 0; i < nw; i++) {
			write_quick(&w[i], g);
			if (exact)
				write_exact(&w[i], g, ex->have_xshared);
			if (exact && ex->have_classes)
				write_classes(&w[i], ex);
			write_self(&w[i], st, &t, pm_groups_count(g), ex, duration);
			mw_finish(&w[i]);
			if (w[i].oom)
				r = -ENOMEM;
		}
	}
	pm_groups_free(g);
	return r;
}
