/* cmd_ps.c - `pagemap ps`: one row per process with RSS, PSS, USS, swap, shared and hugetlb bytes, by user, PID or memory cgroup. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"
#include "ps.h"

enum {
	COL_PID, COL_USER, COL_COMMAND, COL_RSS, COL_PSS, COL_USS, COL_SWAP, COL_SHARED, COL_HUGETLB, COL_SOURCE,
	COL_ESTIMATE, COL_CGROUP
};

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 6, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_USER] = { "USER", 8, 0, OUT_STR, "owner (real UID) by name: a snapshot's as it recorded them; a --root tree's as numbers" },
	[COL_COMMAND] = { "COMMAND", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "command name (comm)" },
	[COL_RSS] = { "RSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_RSS_HELP, OUT_RSS_ALIASES },
	[COL_PSS] = { "PSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, "proportional bytes: each page divided by its map count" },
	[COL_USS] = { "USS", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_USS_HELP },
	[COL_SWAP] = { "SWAP", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_SWAP_HELP },
	[COL_SHARED] = { "SHARED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of pages mapped more than once" },
	[COL_HUGETLB] = { "HUGETLB", 5, SCOLS_FL_RIGHT, OUT_SIZE, "hugetlb bytes mapped (in no other column)" },
	[COL_SOURCE] = { "SOURCE", 12, 0, OUT_STR, "smaps_rollup, or pagemap (with kpagecount: --exact)" },
	[COL_ESTIMATE] = { "ESTIMATE", 3, 0, OUT_BOOL, "USS, SHARED, PSS rest on averaged map counts of large folios" },
	[COL_CGROUP] = { "CGROUP", 0.3, SCOLS_FL_TRUNC, OUT_STR, "memory cgroup, as in /proc/PID/cgroup" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

struct ps_opts {
	struct out_opts o;
	size_t sort;			/* column index */
	const char *sort_name;		/* -s as given: a column of the table shown (ps's or the groups') */
	bool group;			/* --group-by: one row per group, keyed by @by */
	enum fleet_by by;
	pid_t *pids;
	bool *seen;			/* per -p PID: listed in ROOT/proc */
	int *why;			/* per -p PID: why it has no row (errno, WHY_KTHREAD), 0 */
	size_t npids;
	bool by_user;
	uid_t user;
	const char *cgroup;		/* --cgroup: this memory cgroup and those below it */
	size_t cgroup_len;		/* without trailing slashes */
	bool want_cgroup;		/* filter or CGROUP column */
	bool exact;			/* --exact: every row from pagemap + kpagecount */
};

struct ps_state {
	struct ps_row *rows;
	size_t n, cap;
	unsigned exited, denied, kthreads, estimates;
	bool failed;
	bool cgroup_seen;		/* some process is in --cgroup or below it */
	struct pm_groups *groups;	/* --group-by: the groups (mapping: filled per process) */
};

#define WHY_KTHREAD (-1)

/* ---- sorting: sizes and PID descending, text ascending; ties by PID ---- */

static size_t sort_col;

static uint64_t row_num(const struct ps_row *r, size_t col)
{
	switch (col) {
	case COL_PID: return (uint64_t)r->pid;
	case COL_RSS: return r->acct.rss;
	case COL_USS: return r->acct.uss;
	case COL_SWAP: return r->acct.swap;
	case COL_SHARED: return r->acct.shared;
	case COL_HUGETLB: return r->acct.hugetlb;
	default: return r->acct.pss;
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct ps_row *x = a, *y = b;
	uint64_t u, v;
	int c = 0;

	if (sort_col == COL_COMMAND)
		c = strcmp(x->comm, y->comm);
	else if (sort_col == COL_SOURCE)
		c = (int)x->acct.source - (int)y->acct.source;
	else if (sort_col == COL_ESTIMATE)
		c = (int)x->acct.estimate - (int)y->acct.estimate;
	else if (sort_col == COL_CGROUP)
		c = strcmp(x->cgroup ? x->cgroup : "", y->cgroup ? y->cgroup : "");
	else if (sort_col == COL_USER)
		c = x->uid_known != y->uid_known ? (x->uid_known ? -1 : 1) : (x->uid > y->uid) - (x->uid < y->uid);
	else if ((u = row_num(x, sort_col)) != (v = row_num(y, sort_col)))
		c = u > v ? -1 : 1;
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* ---- rows ---- */

/* USER: the name the processes' machine gave the UID, else the number (cli_user_label). */
static void fill_row(struct pm_ctx *ctx, struct out *out, const struct ps_row *r)
{
	struct libscols_line *ln = out_line(out);
	char buf[256];

	out_u64(out, ln, COL_PID, (uint64_t)r->pid);
	if (r->uid_known)
		out_str(out, ln, COL_USER, cli_user_label(ctx, r->uid, buf, sizeof(buf)));
	else
		out_unknown(out, ln, COL_USER);
	out_str(out, ln, COL_COMMAND, r->comm);
	out_u64(out, ln, COL_RSS, r->acct.rss);
	out_u64(out, ln, COL_PSS, r->acct.pss);
	out_u64(out, ln, COL_USS, r->acct.uss);
	out_u64(out, ln, COL_SWAP, r->acct.swap);
	out_u64(out, ln, COL_SHARED, r->acct.shared);
	out_u64(out, ln, COL_HUGETLB, r->acct.hugetlb);
	out_str(out, ln, COL_SOURCE, pm_account_source_name(r->acct.source));
	out_u64(out, ln, COL_ESTIMATE, r->acct.estimate);
	if (r->cgroup)
		out_str(out, ln, COL_CGROUP, r->cgroup);
	else
		out_unknown(out, ln, COL_CGROUP);
}

/* Sums are meaningful for RSS, PSS, USS, swap and hugetlb; shared bytes would count a page once per mapper. */
static void total_row(struct out *out, const struct ps_state *st)
{
	struct libscols_line *ln = out_total_line(out);
	struct pm_account sum = { 0 };
	size_t i;

	if (!ln)
		return;
	for (i = 0; i < st->n; i++) {
		sum.rss += st->rows[i].acct.rss;
		sum.pss += st->rows[i].acct.pss;
		sum.uss += st->rows[i].acct.uss;
		sum.swap += st->rows[i].acct.swap;
		sum.hugetlb += st->rows[i].acct.hugetlb;
	}
	out_str(out, ln, COL_COMMAND, "total");
	out_u64(out, ln, COL_RSS, sum.rss);
	out_u64(out, ln, COL_PSS, sum.pss);
	out_u64(out, ln, COL_USS, sum.uss);
	out_u64(out, ln, COL_SWAP, sum.swap);
	out_unknown(out, ln, COL_SHARED);
	out_u64(out, ln, COL_HUGETLB, sum.hugetlb);
}

/* ---- collecting ---- */

static bool wanted(const struct ps_opts *po, const struct pm_proc *p)
{
	bool hit = !po->npids;
	size_t i;

	for (i = 0; i < po->npids; i++)
		if (po->pids[i] == p->pid)
			hit = po->seen[i] = true;
	return hit && (!po->by_user || (p->uid_known && p->uid == po->user));
}

/*
 * The memory cgroup of @pid, allocated; NULL if unknown (the process
 * exited, or a capture without the file). A damaged replayed tree is an
 * error worth a message.
 */
static char *memcg_of(struct pm_ctx *ctx, pid_t pid, bool *failed)
{
	char buf[4096];
	int r = pm_memcg_of(ctx, pid, buf, sizeof(buf));

	if (r == -EBADMSG && pm_ctx_tree_error(ctx)) {
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
		*failed = true;
	}
	return r == 0 ? strdup(buf) : NULL;
}

/* Remember why -p PID has no row: @why is an errno or WHY_KTHREAD. */
static void note_why(const struct ps_opts *po, pid_t pid, int why)
{
	size_t i;

	for (i = 0; i < po->npids; i++)
		if (po->pids[i] == pid)
			po->why[i] = why;
}

/* Count a process we could not account; false for an error worth a message. */
static bool skip_reason(struct ps_state *st, int err)
{
	if (err == ESRCH || err == ENOENT)
		st->exited++;
	else if (err == EACCES || err == EPERM)
		st->denied++;
	else
		return false;
	return true;
}

/*
 * The kernel's smaps_rollup holds PSS exact in fixed point, truncated to
 * the KiB once, and the other figures whole: the same answer as the frames
 * to the KiB, at a fraction of the cost (one file per process, against a
 * pagemap walk and a kpagecount read per frame). So the frames only with
 * --exact, or where there is no rollup (before 4.14, trees without one).
 * Returns 0 or an errno.
 */
static int account(struct pm_target *t, struct pm_kpage *k, bool exact, struct pm_account *out)
{
	int r = -ENOENT;

	if (!exact)
		r = pm_account_process(t, NULL, out);
	if (r == -ENOENT && k)
		r = pm_account_process(t, k, out);
	return -r;
}

/* The key of @p's group (export's words, one home), allocated; NULL without memory. */
static char *group_of(struct pm_ctx *ctx, const struct ps_opts *po, const struct pm_proc *p)
{
	struct fleet_opts fo = { .by = po->by, .user_key = cli_user_label };	/* as the USER cells */
	char key[4096];

	fleet_group_key(ctx, &fo, p, key, sizeof(key));
	return strdup(key);
}

static int add_proc(struct pm_ctx *ctx, struct pm_kpage *k, const struct ps_opts *po, struct ps_state *st,
		    const struct pm_proc *p)
{
	char *cg = po->want_cgroup ? memcg_of(ctx, p->pid, &st->failed) : NULL;
	struct pm_target *t;
	struct ps_row *r;
	int e;

	if (po->cgroup && !pm_memcg_within(cg, po->cgroup)) {
		free(cg);
		return 0;
	}
	st->cgroup_seen = true;
	if (p->state != PM_PROC_RUNNING) {
		if (p->state == PM_PROC_KTHREAD)
			st->kthreads++;
		else
			st->exited++;
		note_why(po, p->pid, p->state == PM_PROC_KTHREAD ? WHY_KTHREAD : ESRCH);
		free(cg);
		return 0;
	}
	if (st->n == st->cap) {
		r = realloc(st->rows, (st->cap ? 2 * st->cap : 256) * sizeof(*r));
		if (!r) {
			free(cg);
			return -ENOMEM;
		}
		st->rows = r;
		st->cap = st->cap ? 2 * st->cap : 256;
	}
	r = &st->rows[st->n];
	*r = (struct ps_row){ p->pid, p->uid_known, p->uid, "", cg, NULL, { 0 } };
	snprintf(r->comm, sizeof(r->comm), "%s", p->comm);
	if (po->group && po->by != BY_MAPPING && !(r->group = group_of(ctx, po, p))) {
		free(cg);
		return -ENOMEM;
	}
	t = pm_target_open(ctx, p->pid);
	e = t ? account(t, k, po->exact, &r->acct) : errno;
	if (e == 0 && po->group && po->by == BY_MAPPING)
		e = -ps_group_mappings(st->groups, t);
	pm_target_close(t);
	if (e == 0) {
		st->n++;
		st->estimates += r->acct.estimate;
		return 0;
	}
	free(cg);
	free(r->group);
	if (e == EBADMSG && pm_ctx_tree_error(ctx)) {	/* a damaged replayed tree */
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
		st->failed = true;
		return 0;
	}
	note_why(po, p->pid, e);
	if (!skip_reason(st, e)) {
		cli_error(e, "cannot account process %d", (int)p->pid);
		st->failed = true;
	}
	return 0;
}

static int collect(struct pm_ctx *ctx, const struct ps_opts *po, struct ps_state *st)
{
	struct pm_procs *it = pm_procs_open(ctx);
	struct pm_kpage *k = it ? pm_kpage_open(ctx) : NULL;	/* NULL for non-root */
	const struct pm_proc *p;
	size_t i;
	int r;

	if (!it) {
		cli_error(errno, "cannot list %s/proc", strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "");
		return -1;
	}
	if (k && pm_kpage_status(k, PM_KPAGE_COUNT) != 0) {	/* map counts unreadable: no frame path */
		pm_kpage_close(k);
		k = NULL;
	}
	if (po->exact && !k) {
		cli_error(0, "--exact needs %s/proc/kpagecount, and root to read it: %s",
			  strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "",
			  geteuid() ? "not root" : "it cannot be read here");
		pm_procs_close(it);
		return -1;
	}
	while ((r = pm_procs_next(it, &p)) == 0)
		if (wanted(po, p) && (r = add_proc(ctx, k, po, st, p)) < 0)
			break;
	pm_kpage_close(k);
	pm_procs_close(it);
	for (i = 0; r >= 0 && i < po->npids; i++) {
		st->exited += !po->seen[i];	/* no such process (any more) */
		if (!po->seen[i])
			po->why[i] = ENOENT;
	}
	if (r < 0) {
		cli_error(-r, "cannot list processes");
		return -1;
	}
	return 0;
}

/* ---- options ---- */

#define OPT_CGROUP 0x2000
#define OPT_EXACT 0x2001
#define OPT_GROUP_BY 'g'

/* -p: the PIDs, each not yet seen and without a reason. 0 or an exit code (said why). */
static int parse_pids(struct ps_opts *po, const char *arg)
{
	size_t i, was = po->npids;
	int r = cli_parse_pid_list(arg, false, &po->pids, &po->npids);
	bool *seen;
	int *why;

	if (r)
		return r;
	if ((seen = realloc(po->seen, po->npids * sizeof(*seen))))
		po->seen = seen;
	if ((why = realloc(po->why, po->npids * sizeof(*why))))
		po->why = why;
	if (!seen || !why) {
		cli_error(ENOMEM, "cannot keep the PIDs");
		return EXIT_RUNTIME;
	}
	for (i = was; i < po->npids; i++) {
		po->seen[i] = false;
		po->why[i] = 0;
	}
	return 0;
}

/* USER: a name as the processes' machine gave it (cli_user_uid: a snapshot's META users first), or a UID. */
static int parse_user(struct ps_opts *po, const char *arg)
{
	po->by_user = true;
	return cli_parse_user(arg, &po->user);
}

/* -s names a column of the table shown, so it is checked once --group-by is known. */
static int parse_sort(struct ps_opts *po, const char *arg)
{
	size_t i;

	if (po->group)
		return ps_group_sort_known(arg) ? 0 : -EINVAL;
	for (i = 0; i < NCOLS; i++)
		if (!strcasecmp(arg, columns[i].name)) {
			po->sort = i;
			return 0;
		}
	return -EINVAL;
}

static int parse_cgroup(struct ps_opts *po, const char *arg)
{
	size_t n = strlen(arg);

	if (arg[0] != '/')
		return -EINVAL;
	while (n && arg[n - 1] == '/')
		n--;
	po->cgroup = arg;
	po->cgroup_len = n;
	return 0;
}

static int usage_help(void)
{
	printf("Usage: pagemap ps [options]\n\n"
	       "One row per process: resident (RSS), proportional (PSS), unique (USS),\n"
	       "swapped and shared bytes, from the kernel's /proc/PID/smaps_rollup (PSS exact\n"
	       "to the KiB); with --exact, or where there is no smaps_rollup (before 4.14),\n"
	       "from pagemap joined with /proc/kpagecount (root; PSS exact to the byte).\n"
	       "Hugetlb pages are counted apart (HUGETLB). The total row sums RSS, PSS, USS,\n"
	       "SWAP and HUGETLB; shared bytes would count a page once per process that maps\n"
	       "it, so their total is left out. Where the kernel averages the map counts of\n"
	       "large folios (CONFIG_NO_PAGE_MAPCOUNT), affected rows are estimates (ESTIMATE).\n\n"
	       "Options:\n"
	       " -s, --sort COL         sort by COL, sizes largest first (default PSS)\n"
	       " -p, --pid PID,...      only these processes (one without a row is named\n"
	       "                        on stderr; none with a row: no table)\n"
	       " -u, --user USER        only processes of USER (a name, the capture's under\n"
	       "                        --snapshot, or a UID)\n"
	       "     --cgroup PATH      only processes in memory cgroup PATH or below it\n"
	       "                        (as in /proc/PID/cgroup); adds the CGROUP column\n"
	       "     --exact            every row from the frames, exact to the byte (root)\n"
	       " -g, --group-by KEY     one row per user, comm (command name) or cgroup (memory\n"
	       "                        cgroup), its processes' rows summed (smem -u, ps_mem),\n"
	       "                        or per mapping: a path's smaps figures summed over its\n"
	       "                        mappings in every process (smem -m); -p, -u and\n"
	       "                        --cgroup choose the processes first\n");
	out_help_with(stdout, columns, NCOLS, OUT_HELP_TOTAL);
	ps_group_help();
	return EXIT_OK;
}

/* Returns -1 to go on, or an exit code. */
static int parse_opt(struct ps_opts *po, int c, char **argv)
{
	switch (c) {
	case 's':
		po->sort_name = optarg;
		return -1;
	case OPT_GROUP_BY:
		po->group = true;
		return ps_group_parse(optarg, &po->by) < 0 ?
			cli_usage_error("unknown --group-by '%s': user, comm, cgroup or mapping", optarg) : -1;
	case 'p':
		return (c = parse_pids(po, optarg)) ? c : -1;
	case 'u':
		return parse_user(po, optarg) < 0 ? cli_usage_error("unknown user '%s'", optarg) : -1;
	case OPT_EXACT:
		po->exact = true;
		return -1;
	case OPT_CGROUP:
		return parse_cgroup(po, optarg) < 0 ? cli_usage_error("cgroup path '%s' does not start with /", optarg) : -1;
	case 'h':
		return usage_help();
	default:
		return out_parse_opt(&po->o, c, optarg) ? -1 : cli_bad_option(argv);
	}
}

/*
 * Every -p PID without a row, in the words every command uses (the library's); the error lines
 * come after the table. Returns true if there was one.
 */
static bool report_pids(struct pm_ctx *ctx, const struct ps_opts *po)
{
	bool any = false;
	char arg[16];
	size_t i;

	fflush(stdout);
	for (i = 0; i < po->npids; i++) {
		int why = po->why[i];

		any |= why != 0;
		snprintf(arg, sizeof(arg), "%d", (int)po->pids[i]);
		if (why == ENOENT || why == ESRCH || why == EACCES || why == EPERM)
			cli_explain_target(ctx, po->pids[i], arg, why);
		else if (why == WHY_KTHREAD)	/* the library asks the process's state again */
			cli_explain_target(ctx, po->pids[i], arg, ESRCH);
		else if (why)
			cli_error(why, "cannot account process %d", (int)po->pids[i]);
	}
	return any;
}

static void report_skipped(const struct ps_opts *po, const struct ps_state *st)
{
	unsigned n = st->exited + st->denied + st->kthreads;

	fflush(stdout);	/* the notes come after the table */
	if (n && !po->npids)	/* -p names each one */
		cli_note("skipped %u process%s: %u exited, %u not permitted, %u kernel thread%s", n,
			 n == 1 ? "" : "es", st->exited, st->denied, st->kthreads, st->kthreads == 1 ? "" : "s");
	if (st->estimates)
		cli_note("note: USS, SHARED and PSS of %u process%s are estimates: this kernel averages the map "
			 "counts of large folios (CONFIG_NO_PAGE_MAPCOUNT)", st->estimates, st->estimates == 1 ? "" : "es");
}

/* JSON always says whether a row is an estimate; --cgroup shows where each process is. */
static int run(struct pm_ctx *ctx, struct ps_opts *po)
{
	char defaults[128];
	struct ps_state st = { 0 };
	struct out *out;
	size_t i;
	int code = EXIT_OK;

	snprintf(defaults, sizeof(defaults), "PID,USER,COMMAND,RSS,PSS,USS,SWAP,SHARED,HUGETLB,SOURCE%s%s",
		 po->o.json ? ",ESTIMATE" : "", po->cgroup ? ",CGROUP" : "");
	out = po->group ? ps_group_out(po->by, &po->o) : out_new("processes", columns, NCOLS, defaults, &po->o);
	if (!out)
		return EXIT_USAGE;
	po->want_cgroup = po->cgroup || (!po->group && out_has(out, COL_CGROUP));
	if (po->group && !(st.groups = pm_groups_new())) {
		out_free(out);
		cli_error(ENOMEM, "cannot group processes");
		return EXIT_RUNTIME;
	}
	if (collect(ctx, po, &st) < 0) {
		code = EXIT_RUNTIME;
		goto out;
	}
	/* A cgroup no process is in and sysfs does not show is a mistake, not an empty answer. */
	if (po->cgroup && !st.cgroup_seen && !pm_memcg_exists(ctx, po->cgroup)) {
		cli_error(0, "no memory cgroup %.*s: no process is in it and %s/sys/fs/cgroup does not show it",
			  (int)po->cgroup_len, po->cgroup, strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "");
		code = EXIT_RUNTIME;
		goto out;
	}
	sort_col = po->sort;
	if (po->group && ((po->by != BY_MAPPING && ps_group_rows(st.groups, st.rows, st.n) < 0) ||
			  ps_group_fill(out, st.groups, po->by, po->sort_name, st.n) < 0)) {
		cli_error(ENOMEM, "cannot group processes");
		code = EXIT_RUNTIME;
		goto out;
	}
	if (!po->group && st.n)
		qsort(st.rows, st.n, sizeof(*st.rows), row_cmp);
	for (i = 0; !po->group && i < st.n; i++)
		fill_row(ctx, out, &st.rows[i]);
	if (!po->group)
		total_row(out, &st);
	/* -p PID of which none has a row: only the lines saying why, as every command that takes one PID. */
	if (((po->npids == 0 || st.n > 0) && out_print(out) < 0) || st.failed)
		code = EXIT_RUNTIME;
	if (report_pids(ctx, po))
		code = EXIT_RUNTIME;
	report_skipped(po, &st);
out:
	for (i = 0; i < st.n; i++) {
		free(st.rows[i].cgroup);
		free(st.rows[i].group);
	}
	free(st.rows);
	pm_groups_free(st.groups);
	out_free(out);
	return code;
}

int cmd_ps(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
		{ "sort", required_argument, NULL, 's' }, { "pid", required_argument, NULL, 'p' },
		{ "user", required_argument, NULL, 'u' }, { "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "exact", no_argument, NULL, OPT_EXACT }, { "group-by", required_argument, NULL, OPT_GROUP_BY },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct ps_opts po = { .sort = COL_PSS };
	int c, r = -1;

	optind = 0;
	while (r < 0 && (c = getopt_long(argc, argv, OUT_SHORTOPTS "s:p:u:g:h", longopts, NULL)) != -1)
		r = parse_opt(&po, c, argv);
	if (r < 0 && optind < argc)
		r = cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (r < 0 && po.exact && po.group && po.by == BY_MAPPING)
		r = cli_usage_error("--group-by mapping reads each mapping's figures from smaps: --exact does not apply");
	if (r < 0 && po.sort_name && parse_sort(&po, po.sort_name) < 0)
		r = cli_usage_error("unknown sort column '%s'", po.sort_name);
	if (r < 0)
		r = run(ctx, &po);
	free(po.pids);
	free(po.seen);
	free(po.why);
	return r;
}
