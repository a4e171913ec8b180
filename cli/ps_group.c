/* ps_group.c - `pagemap ps --group-by`: memory summed per user, command, memory cgroup or mapping (smem -u/-m, ps_mem). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "complete.h"
#include "ps.h"

enum {
	GCOL_USER, GCOL_COMMAND, GCOL_CGROUP, GCOL_MAPPING, GCOL_PROCESSES, GCOL_RSS, GCOL_PSS, GCOL_USS, GCOL_SWAP, GCOL_HUGETLB,
	GCOL_SOURCE, GCOL_ESTIMATE
};

/*
 * SHARED is not here: summed over a group's processes it counts a page once
 * per process of the group that maps it, which is no size of the group.
 */
static const struct out_col gcols[] = {
	[GCOL_USER] = { "USER", 8, 0, OUT_STR, "--group-by user: the user (real UID) by name" },
	[GCOL_COMMAND] = { "COMMAND", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "--group-by comm: the command name (comm)" },
	[GCOL_CGROUP] = { "CGROUP", 0.3, SCOLS_FL_TRUNC, OUT_STR, "--group-by cgroup: the memory cgroup" },
	[GCOL_MAPPING] = { "MAPPING", 0.3, SCOLS_FL_TRUNC, OUT_STR, "--group-by mapping: the mapped path, or [anon]" },
	[GCOL_PROCESSES] = { "PROCESSES", 4, SCOLS_FL_RIGHT, OUT_NUM, "processes in the group (mapping it)" },
	[GCOL_RSS] = { "RSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, "RSS of its processes, summed", OUT_RSS_ALIASES },
	[GCOL_PSS] = { "PSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, "PSS of its processes, summed: its share of memory" },
	[GCOL_USS] = { "USS", 5, SCOLS_FL_RIGHT, OUT_SIZE, "USS of its processes, summed" },
	[GCOL_SWAP] = { "SWAP", 5, SCOLS_FL_RIGHT, OUT_SIZE, "swapped bytes of its processes, summed" },
	[GCOL_HUGETLB] = { "HUGETLB", 5, SCOLS_FL_RIGHT, OUT_SIZE, "hugetlb bytes of its processes, summed" },
	[GCOL_SOURCE] = { "SOURCE", 12, 0, OUT_STR, "smaps (mapping), smaps_rollup if any row came from it, pagemap" },
	[GCOL_ESTIMATE] = { "ESTIMATE", 3, 0, OUT_BOOL, "some of its rows are estimates (see ps's ESTIMATE)" },
};
#define NGCOLS (sizeof(gcols) / sizeof(gcols[0]))

/* --group-by's words, in export's order; pid and rules are export's alone (a PID is ps's own row); mapping ps's. */
static const struct {
	const char *name;
	enum fleet_by by;
	size_t col;
} keys[] = {
	{ "cgroup", BY_CGROUP, GCOL_CGROUP }, { "user", BY_USER, GCOL_USER }, { "comm", BY_COMM, GCOL_COMMAND },
	{ "mapping", BY_MAPPING, GCOL_MAPPING },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

int ps_group_parse(const char *arg, enum fleet_by *by)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (!strcmp(arg, keys[i].name)) {
			*by = keys[i].by;
			return 0;
		}
	return -EINVAL;
}

static size_t key_col(enum fleet_by by)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].by == by)
			return keys[i].col;
	return GCOL_COMMAND;
}

void ps_group_help(void)
{
	complete_columns(gcols, NGCOLS);
	printf("\nColumns with --group-by (one row per group; -o and -s take these):\n");
	out_help_columns(stdout, gcols, NGCOLS);
}

/* ---- sorting: sizes and counts descending, text ascending; ties by key ---- */

static size_t gsort_col;

static uint64_t group_num(const struct pm_group *g, size_t col)
{
	switch (col) {
	case GCOL_PROCESSES: return g->exact_procs;
	case GCOL_RSS: return g->exact.rss;
	case GCOL_USS: return g->exact.uss;
	case GCOL_SWAP: return g->exact.swap;
	case GCOL_HUGETLB: return g->exact.hugetlb;
	default: return g->exact.pss;
	}
}

static int group_cmp(const void *a, const void *b)
{
	const struct pm_group *x = *(const struct pm_group *const *)a, *y = *(const struct pm_group *const *)b;
	uint64_t u, v;
	int c = 0;

	if (gsort_col == GCOL_SOURCE)
		c = (int)x->exact.source - (int)y->exact.source;
	else if (gsort_col == GCOL_ESTIMATE)
		c = (int)x->exact.estimate - (int)y->exact.estimate;
	else if (gsort_col <= GCOL_MAPPING)
		c = 0;	/* the key: below */
	else if ((u = group_num(x, gsort_col)) != (v = group_num(y, gsort_col)))
		c = u > v ? -1 : 1;
	return c ? c : strcmp(x->key, y->key);
}

/* ---- rows ---- */

static void fill_group(struct out *out, const struct pm_group *g, size_t kcol)
{
	struct libscols_line *ln = out_line(out);
	size_t c;

	for (c = GCOL_USER; c <= GCOL_MAPPING; c++)
		if (c == kcol)
			out_str(out, ln, c, g->key);
		else
			out_unknown(out, ln, c);
	out_u64(out, ln, GCOL_PROCESSES, g->exact_procs);
	out_u64(out, ln, GCOL_RSS, g->exact.rss);
	out_u64(out, ln, GCOL_PSS, g->exact.pss);
	out_u64(out, ln, GCOL_USS, g->exact.uss);
	out_u64(out, ln, GCOL_SWAP, g->exact.swap);
	out_u64(out, ln, GCOL_HUGETLB, g->exact.hugetlb);
	out_str(out, ln, GCOL_SOURCE, pm_account_source_name(g->exact.source));
	out_u64(out, ln, GCOL_ESTIMATE, g->exact.estimate);
}

/*
 * The groups part the processes' memory: their sums are the sums of every process's row (of its
 * mappings with --group-by mapping, where a process is in several groups: @procs is their number).
 */
static void total_group(struct out *out, const struct pm_group *const *v, size_t n, size_t kcol, size_t procs)
{
	struct libscols_line *ln = out_total_line(out);
	struct pm_account sum = { 0 };
	size_t i;

	if (!ln)
		return;
	for (i = 0; i < n; i++) {
		sum.rss += v[i]->exact.rss;
		sum.pss += v[i]->exact.pss;
		sum.uss += v[i]->exact.uss;
		sum.swap += v[i]->exact.swap;
		sum.hugetlb += v[i]->exact.hugetlb;
	}
	out_str(out, ln, kcol, "total");
	out_u64(out, ln, GCOL_PROCESSES, procs);
	out_u64(out, ln, GCOL_RSS, sum.rss);
	out_u64(out, ln, GCOL_PSS, sum.pss);
	out_u64(out, ln, GCOL_USS, sum.uss);
	out_u64(out, ln, GCOL_SWAP, sum.swap);
	out_u64(out, ln, GCOL_HUGETLB, sum.hugetlb);
}

static size_t find_sort(const char *sort)
{
	size_t i;

	for (i = 0; sort && i < NGCOLS; i++)
		if (!strcasecmp(sort, gcols[i].name))
			return i;
	return sort ? NGCOLS : GCOL_PSS;
}

bool ps_group_sort_known(const char *sort)
{
	return find_sort(sort) < NGCOLS;
}

struct out *ps_group_out(enum fleet_by by, const struct out_opts *oo)
{
	char defaults[96];

	snprintf(defaults, sizeof(defaults), "%s,PROCESSES,RSS,PSS,USS,SWAP,HUGETLB%s", gcols[key_col(by)].name,
		 oo->json ? ",SOURCE,ESTIMATE" : "");
	return out_new("groups", gcols, NGCOLS, defaults, oo);
}

int ps_group_rows(struct pm_groups *g, const struct ps_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pm_groups_add_exact(g, rows[i].group, &rows[i].acct) < 0)
			return -ENOMEM;
	return 0;
}

/* One mapping into the process's own groups: a path mapped several times is one group of one process. */
static int add_mapping(void *data, const struct pm_mapping *m, const struct pm_account *a)
{
	char key[4096];

	if (m->path_len)
		snprintf(key, sizeof(key), "%.*s", (int)m->path_len, m->path);
	else
		snprintf(key, sizeof(key), "[anon]");
	return pm_groups_add_exact(data, key, a);
}

int ps_group_mappings(struct pm_groups *g, struct pm_target *t)
{
	struct pm_groups *mine = pm_groups_new();
	const struct pm_group *p;
	size_t i;
	int r = mine ? pm_account_mappings(t, add_mapping, mine) : -ENOMEM;

	for (i = 0; r == 0 && (p = pm_groups_at(mine, i)); i++)
		r = pm_groups_add_exact(g, p->key, &p->exact);
	pm_groups_free(mine);
	return r;
}

int ps_group_fill(struct out *out, const struct pm_groups *g, enum fleet_by by, const char *sort, size_t procs)
{
	size_t kcol = key_col(by), i, ng = pm_groups_count(g);
	const struct pm_group **v = calloc(ng ? ng : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	gsort_col = find_sort(sort);
	if (gsort_col <= GCOL_MAPPING)	/* by the key, whichever key column was named */
		gsort_col = kcol;
	for (i = 0; i < ng; i++)
		v[i] = pm_groups_at(g, i);
	qsort(v, ng, sizeof(*v), group_cmp);
	for (i = 0; i < ng; i++)
		fill_group(out, v[i], kcol);
	total_group(out, v, ng, kcol, procs);
	free(v);
	return 0;
}
