/* cmd_numa.c - `pagemap numa [PID...|--all]`: the nodes, and which node each mapping's memory is on. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

#define OPT_SOURCE 0x1001
#define OPT_ALL 0x1002
#define NO_SORT ((size_t)-1)

enum { COL_PID, COL_COMMAND, COL_MAPPING, COL_START, COL_END, COL_PERMS, COL_POLICY, COL_NODE, COL_TOTAL, COL_ANON,
       COL_FILE, COL_SHMEM, COL_HUGETLB, COL_THP, COL_REMOTE, COL_PATH };

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 6, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_COMMAND] = { "COMMAND", 0.1, SCOLS_FL_TRUNC, OUT_STR, "command name (comm; --all)", "COMM" },
	[COL_MAPPING] = { "MAPPING", 0.1, 0, OUT_STR, "\"total\" for the process's sum on a node, else \"map\"" },
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_POLICY] = { "POLICY", 8, 0, OUT_STR, "memory policy (numa_maps): default, bind:N, interleave:N-M, ..." },
	[COL_NODE] = { "NODE", 4, SCOLS_FL_RIGHT, OUT_STR, "node number; \"?\" for bytes on no known node" },
	[COL_TOTAL] = { "TOTAL", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes in RAM on this node" },
	[COL_ANON] = { "ANON", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, private anonymous (incl. copied-on-write file pages)" },
	[COL_FILE] = { "FILE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "page cache of files" },
	[COL_SHMEM] = { "SHMEM", 5, SCOLS_FL_RIGHT, OUT_SIZE, "shared memory: memfd, tmpfs, SysV, shared anonymous" },
	[COL_HUGETLB] = { "HUGETLB", 5, SCOLS_FL_RIGHT, OUT_SIZE, "hugetlbfs pages, at their own size" },
	[COL_THP] = { "THP", 5, SCOLS_FL_RIGHT, OUT_SIZE,
		      "of ANON and SHMEM, bytes in PMD-mapped huge pages of its own, not the huge zero page" },
	[COL_REMOTE] = { "REMOTE", 3, 0, OUT_BOOL,
			 "total rows: the node is none of those the process's threads last ran on" },
	[COL_PATH] = { "PATH", 0.2, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
	               "the mapping's file or [name]; empty: anonymous" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/*
 * With PIDs, a terminal gets where each mapping's bytes are and of what kind, and REMOTE, the path
 * truncated (a row fits 80 columns); a total row says "total" in PATH, as maps's does, when MAPPING
 * is not shown. --all already fits (COMMAND is truncated).
 */
#define NUMA_DEFAULTS "PID,MAPPING,START,END,PERMS,POLICY,NODE,TOTAL,ANON,FILE,SHMEM,HUGETLB,THP,REMOTE,PATH"
#define NUMA_TERM_DEFAULTS "PID,START,NODE,TOTAL,ANON,FILE,SHMEM,REMOTE,PATH"
#define NODE_DEFAULTS "NODE,CPUS,MEMORY,FREE,TIER,DISTANCES,PROMOTED,DEMOTED"
#define NUMA_ALL_DEFAULTS "PID,COMMAND,NODE,TOTAL,ANON,FILE,SHMEM,HUGETLB,THP,REMOTE"

enum { NCOL_NODE, NCOL_CPUS, NCOL_MEMORY, NCOL_FREE, NCOL_TIER, NCOL_DISTANCES, NCOL_PROMOTED, NCOL_DEMOTED };

static const struct out_col node_columns[] = {
	[NCOL_NODE] = { "NODE", 4, SCOLS_FL_RIGHT, OUT_NUM, "node number" },
	[NCOL_CPUS] = { "CPUS", 0.1, 0, OUT_STR, "its CPUs; empty for a memory-only node (a tier, CXL)" },
	[NCOL_MEMORY] = { "MEMORY", 5, SCOLS_FL_RIGHT, OUT_SIZE, "its memory (nodeN/meminfo MemTotal)" },
	[NCOL_FREE] = { "FREE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "free memory (MemFree)" },
	[NCOL_TIER] = { "TIER", 4, SCOLS_FL_RIGHT, OUT_NUM, "memory tier (lower is faster; 6.1+)" },
	[NCOL_DISTANCES] = { "DISTANCES", 0.1, SCOLS_FL_WRAP, OUT_STR, "distance to each node in order (10: local)" },
	[NCOL_PROMOTED] = { "PROMOTED", 6, SCOLS_FL_RIGHT, OUT_NUM, "pages promoted to it by tiering (pgpromote_success)" },
	[NCOL_DEMOTED] = { "DEMOTED", 6, SCOLS_FL_RIGHT, OUT_NUM, "pages demoted from it (pgdemote_*)" },
};
#define NNODE_COLS (sizeof(node_columns) / sizeof(node_columns[0]))

struct numa_opts {
	struct out_opts o;
	enum pm_numa_source source;
	bool all;
	size_t sort;			/* --sort column, NO_SORT: process and node order */
};

/* A process's total on one node; kept for --sort, printed at once otherwise. */
struct total_row {
	pid_t pid;
	char comm[64];
	size_t node;			/* node index; pm_numa_count(): no known node */
	uint64_t b[PM_NUMA_NCLASSES], thp;
	int remote;			/* 1 yes, 0 no, -1 unknown */
};

struct total_rows {
	struct total_row *v;
	size_t n, cap;
};

/* Per node sums of one process, and where its threads run. */
struct proc_sum {
	uint64_t (*bytes)[PM_NUMA_NCLASSES];
	uint64_t *thp;
	bool *ran_on, *allowed;
	int threads;
	struct total_rows kept;		/* --sort */
};

static void help_all_defaults(void)
{
	printf("With --all, everywhere:\n  %s\n", NUMA_ALL_DEFAULTS);
}

static int usage_help(void)
{
	printf("Usage: pagemap numa [options] [PID...]\n"
	       "       pagemap numa --all\n\n"
	       "Without a PID: the machine's NUMA nodes. With PIDs: each mapping's bytes on each\n"
	       "node, split anonymous/file/shared memory/hugetlb, and per process a total row\n"
	       "per node, REMOTE where its threads last ran on other nodes. --all: one total\n"
	       "row per process and node. A PID that cannot be read (gone, a kernel thread, a\n"
	       "zombie) is named on stderr and the others are answered for: exit status 1.\n\n"
	       "The node of each page comes from its frame number (root: exact, about the cost\n"
	       "of the pagemap walk), else from move_pages(2) (same user: exact, about 30-50 ms\n"
	       "per GiB in RAM), else from numa_maps (totals per mapping; classes by the\n"
	       "mapping's kind).\n\n"
	       "Options:\n"
	       "     --source S         auto, frames, move_pages or numa_maps\n"
	       "     --all              every process, one row per process and node\n"
	       " -s, --sort COL         --all: sort by COL (PID, COMMAND, NODE, or a size:\n"
	       "                        largest first)\n");
	out_help(stdout, columns, NCOLS);
	out_help_defaults(stdout, NUMA_DEFAULTS, NUMA_TERM_DEFAULTS);
	help_all_defaults();
	printf("\nColumns of the node table (no PID):\n");
	out_help(stdout, node_columns, NNODE_COLS);
	out_help_defaults(stdout, NODE_DEFAULTS, NULL);
	return EXIT_OK;
}

static int parse_source(const char *s, enum pm_numa_source *out)
{
	static const enum pm_numa_source all[] = { PM_NUMA_AUTO, PM_NUMA_FRAMES, PM_NUMA_MOVE_PAGES, PM_NUMA_MAPS };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, pm_numa_source_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

static void node_name(const struct pm_numa *n, size_t i, char *buf, size_t size)
{
	if (i < pm_numa_count(n))
		snprintf(buf, size, "%d", pm_numa_node(n, i)->id);
	else
		snprintf(buf, size, "?");
}

static void fill_classes(struct out *out, struct libscols_line *ln, const uint64_t *b, uint64_t thp)
{
	out_u64(out, ln, COL_TOTAL, b[PM_NUMA_ANON] + b[PM_NUMA_FILE] + b[PM_NUMA_SHMEM] + b[PM_NUMA_HUGETLB]);
	out_u64(out, ln, COL_ANON, b[PM_NUMA_ANON]);
	out_u64(out, ln, COL_FILE, b[PM_NUMA_FILE]);
	out_u64(out, ln, COL_SHMEM, b[PM_NUMA_SHMEM]);
	out_u64(out, ln, COL_HUGETLB, b[PM_NUMA_HUGETLB]);
	out_u64(out, ln, COL_THP, thp);
}

static bool any(const uint64_t *b)
{
	return b[PM_NUMA_ANON] || b[PM_NUMA_FILE] || b[PM_NUMA_SHMEM] || b[PM_NUMA_HUGETLB];
}

static void map_rows(struct out *out, const struct pm_numa *n, pid_t pid, const struct pm_numa_map *m)
{
	size_t i;

	for (i = 0; i < m->nnodes; i++) {
		struct libscols_line *ln;
		char node[16];

		if (!any(m->bytes[i]))
			continue;
		ln = out_line(out);
		node_name(n, i, node, sizeof(node));
		out_u64(out, ln, COL_PID, (uint64_t)pid);
		out_str(out, ln, COL_MAPPING, "map");
		out_u64(out, ln, COL_START, m->map->start);
		out_u64(out, ln, COL_END, m->map->end);
		out_str(out, ln, COL_PERMS, m->map->perms);
		out_str(out, ln, COL_POLICY, m->policy);
		out_str(out, ln, COL_NODE, node);
		fill_classes(out, ln, m->bytes[i], m->thp[i]);
		if (out_has(out, COL_PATH)) {
			char path[4096];

			snprintf(path, sizeof(path), "%.*s", (int)m->map->path_len, m->map->path);
			out_str(out, ln, COL_PATH, path);	/* anonymous: empty, as in maps */
		}
	}
}

static void total_line(struct out *out, const struct pm_numa *n, const struct total_row *t)
{
	struct libscols_line *ln = out_line(out);
	char node[16];

	node_name(n, t->node, node, sizeof(node));
	out_u64(out, ln, COL_PID, (uint64_t)t->pid);
	out_str(out, ln, COL_COMMAND, t->comm);
	out_str(out, ln, COL_MAPPING, "total");
	if (!out_has(out, COL_MAPPING) && out_term_view(out))
		out_str(out, ln, COL_PATH, "total");
	out_str(out, ln, COL_NODE, node);
	fill_classes(out, ln, t->b, t->thp);
	if (t->remote >= 0)
		out_str(out, ln, COL_REMOTE, t->remote ? "yes" : "no");
	else
		out_unknown(out, ln, COL_REMOTE);
}

static int keep_row(struct total_rows *k, const struct total_row *t)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 256;
		struct total_row *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n++] = *t;
	return 0;
}

static int total_rows(struct out *out, const struct pm_numa *n, const struct numa_opts *no, pid_t pid,
		      const char *comm, struct proc_sum *s)
{
	size_t i, nn = pm_numa_count(n) + 1;

	for (i = 0; i < nn; i++) {
		struct total_row t = { .pid = pid, .node = i, .thp = s->thp[i], .remote = -1 };

		if (!any(s->bytes[i]))
			continue;
		snprintf(t.comm, sizeof(t.comm), "%s", comm);
		memcpy(t.b, s->bytes[i], sizeof(t.b));
		if (i < nn - 1 && s->threads > 0)
			t.remote = !s->ran_on[i];
		if (no->sort == NO_SORT)
			total_line(out, n, &t);
		else if (keep_row(&s->kept, &t) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* --sort: sizes largest first, PID and NODE ascending, COMMAND alphabetical; ties by PID, then node. */
static size_t sort_col;

static uint64_t row_key(const struct total_row *t)
{
	switch (sort_col) {
	case COL_ANON: return t->b[PM_NUMA_ANON];
	case COL_FILE: return t->b[PM_NUMA_FILE];
	case COL_SHMEM: return t->b[PM_NUMA_SHMEM];
	case COL_HUGETLB: return t->b[PM_NUMA_HUGETLB];
	case COL_THP: return t->thp;
	default: return t->b[PM_NUMA_ANON] + t->b[PM_NUMA_FILE] + t->b[PM_NUMA_SHMEM] + t->b[PM_NUMA_HUGETLB];
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct total_row *x = a, *y = b;
	int c = 0;

	if (sort_col == COL_COMMAND)
		c = strcmp(x->comm, y->comm);
	else if (sort_col == COL_NODE)
		c = (x->node > y->node) - (x->node < y->node);
	else if (sort_col != COL_PID)
		c = (row_key(x) < row_key(y)) - (row_key(x) > row_key(y));
	if (!c)
		c = (x->pid > y->pid) - (x->pid < y->pid);
	return c ? c : (x->node > y->node) - (x->node < y->node);
}

static int parse_sort(const char *arg, size_t *out)
{
	static const size_t ok[] = { COL_PID, COL_COMMAND, COL_NODE, COL_TOTAL, COL_ANON, COL_FILE, COL_SHMEM,
				     COL_HUGETLB, COL_THP };
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcasecmp(arg, columns[ok[i]].name) ||
		    (columns[ok[i]].aliases && !strcasecmp(arg, columns[ok[i]].aliases))) {	/* COMM, its old name */
			*out = ok[i];
			return 0;
		}
	return -EINVAL;
}

static void print_kept(struct out *out, const struct pm_numa *n, size_t col, struct total_rows *k)
{
	size_t i;

	sort_col = col;
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), row_cmp);
	for (i = 0; i < k->n; i++)
		total_line(out, n, &k->v[i]);
}

/* "pagemap: PID: node of each page from ..." once per process that is not exact by frames. */
static void note_source(const char *arg, enum pm_numa_source s, bool chosen)
{
	if (s == PM_NUMA_MOVE_PAGES)
		cli_note("%s: node of each page from move_pages(2)%s: exact, about 30-50 ms per GiB in RAM", arg,
			 chosen ? "" : " (frame numbers hidden from this reader)");
	else if (s == PM_NUMA_MAPS)
		cli_note("%s: nodes from numa_maps totals%s: classes follow each mapping's kind, THP not told apart",
			 arg, chosen ? "" : " (neither frame numbers nor move_pages(2) allowed)");
}

/* Why a source the user asked for cannot be used; NULL for other errors. */
static const char *refused(enum pm_numa_source s, int r)
{
	if (s == PM_NUMA_FRAMES && r == -EACCES)
		return "--source frames: frame numbers are hidden from this reader (they need CAP_SYS_ADMIN)";
	if (s == PM_NUMA_MOVE_PAGES && r == -EOPNOTSUPP)
		return "--source move_pages: move_pages(2) asks the running kernel, not a replayed tree";
	if (s == PM_NUMA_MOVE_PAGES && r == -EPERM)
		return "--source move_pages: refused: another user's process needs CAP_SYS_NICE";
	if (s == PM_NUMA_MAPS && r == -ENOENT)
		return "--source numa_maps: no numa_maps for this process (a kernel without CONFIG_NUMA?)";
	return NULL;
}

static int sum_process(struct pm_ctx *ctx, struct pm_numa *n, const struct numa_opts *no, struct out *out,
		       pid_t pid, const char *arg, const char *comm, struct proc_sum *s)
{
	size_t i, j, nn = pm_numa_count(n) + 1;
	struct pm_target *t = no->all ? pm_target_open(ctx, pid) : cli_open_target(ctx, pid, arg);
	struct pm_numa_proc *p;
	const struct pm_numa_map *m;
	int r;

	if (!t)
		return no->all ? -errno : -ECANCELED;	/* cli_open_target said why */
	p = pm_numa_proc_open(t, n, no->source);
	if (!p) {
		r = -errno;
		pm_target_close(t);
		return r;
	}
	if (!no->all)
		note_source(arg, pm_numa_proc_source(p), no->source != PM_NUMA_AUTO);
	memset(s->bytes, 0, nn * sizeof(*s->bytes));
	memset(s->thp, 0, nn * sizeof(*s->thp));
	while ((r = pm_numa_proc_next(p, &m)) == 0) {
		for (i = 0; i < nn; i++) {
			for (j = 0; j < PM_NUMA_NCLASSES; j++)
				s->bytes[i][j] += m->bytes[i][j];
			s->thp[i] += m->thp[i];
		}
		if (!no->all)
			map_rows(out, n, pid, m);
	}
	pm_numa_proc_close(p);
	pm_target_close(t);
	if (r < 0)
		return r;
	s->threads = pm_numa_locality(n, pid, s->ran_on, s->allowed);
	return total_rows(out, n, no, pid, comm, s);
}

static int proc_sum_alloc(struct proc_sum *s, size_t count)
{
	memset(s, 0, sizeof(*s));
	s->bytes = calloc(count + 1, sizeof(*s->bytes));
	s->thp = calloc(count + 1, sizeof(*s->thp));
	s->ran_on = calloc(count, sizeof(*s->ran_on));
	s->allowed = calloc(count, sizeof(*s->allowed));
	return s->bytes && s->thp && s->ran_on && s->allowed ? 0 : -ENOMEM;
}

static void proc_sum_free(struct proc_sum *s)
{
	free(s->bytes);
	free(s->thp);
	free(s->ran_on);
	free(s->allowed);
	free(s->kept.v);
}

/* --all: every process we may read; the ones that exit or refuse us are counted on stderr, not fatal. */
static int all_processes(struct pm_ctx *ctx, struct pm_numa *n, const struct numa_opts *no, struct out *out,
			 struct proc_sum *s)
{
	struct pm_procs *it = pm_procs_open(ctx);
	const struct pm_proc *pr;
	unsigned skipped = 0;
	int r;

	if (!it) {
		cli_error(errno, "cannot list processes");
		return EXIT_RUNTIME;
	}
	while ((r = pm_procs_next(it, &pr)) == 0) {
		char arg[16];

		if (pr->state == PM_PROC_KTHREAD || pr->state == PM_PROC_ZOMBIE || pr->state == PM_PROC_GONE)
			continue;
		snprintf(arg, sizeof(arg), "%d", (int)pr->pid);
		if (sum_process(ctx, n, no, out, pr->pid, arg, pr->comm, s) < 0)
			skipped++;
	}
	pm_procs_close(it);
	if (skipped)
		cli_note("%u process%s skipped (exited meanwhile, or not readable by this user)", skipped,
			 skipped == 1 ? "" : "es");
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/*
 * The PIDs given: all parsed before any is read (a usage error prints nothing). A process that
 * cannot be read is named and the others are answered for; EXIT_RUNTIME then, after the table.
 */
static int given_processes(struct pm_ctx *ctx, struct pm_numa *n, const struct numa_opts *no,
			   struct out *out, struct proc_sum *s, int argc, char **argv)
{
	int code = EXIT_OK, i, r;
	pid_t pid;

	for (i = 0; i < argc; i++)
		if (cli_parse_pid(argv[i], &pid) < 0)
			return cli_usage_error("invalid PID '%s'", argv[i]);
	for (i = 0; i < argc; i++) {
		cli_parse_pid(argv[i], &pid);
		r = sum_process(ctx, n, no, out, pid, argv[i], "", s);
		if (r == -ECANCELED) {
			code = EXIT_RUNTIME;	/* cli_open_target said why */
		} else if (refused(no->source, r)) {
			cli_error(0, "%s: %s", argv[i], refused(no->source, r));
			code = EXIT_RUNTIME;
		} else if (r < 0) {
			cli_walk_error(ctx, -r, argv[i]);
			code = EXIT_RUNTIME;
		}
	}
	return code;
}

static int processes(struct pm_ctx *ctx, struct pm_numa *n, const struct numa_opts *no, int argc, char **argv)
{
	struct out *out = out_new_fit("numa", columns, NCOLS, no->all ? NUMA_ALL_DEFAULTS : NUMA_DEFAULTS,
				      no->all ? NULL : NUMA_TERM_DEFAULTS, &no->o);
	struct proc_sum s;
	int code;

	if (!out)
		return EXIT_USAGE;
	if (proc_sum_alloc(&s, pm_numa_count(n)) < 0) {
		cli_error(ENOMEM, "numa");
		code = EXIT_RUNTIME;
		goto out;
	}
	if (no->all)
		code = all_processes(ctx, n, no, out, &s);
	else
		code = given_processes(ctx, n, no, out, &s, argc, argv);
	if (code == EXIT_USAGE || (no->all && code != EXIT_OK))
		goto out;
	if (no->sort != NO_SORT)
		print_kept(out, n, no->sort, &s.kept);
	if (out_print(out) < 0)
		code = EXIT_RUNTIME;
out:
	proc_sum_free(&s);
	out_free(out);
	return code;
}

static int node_table(struct pm_numa *n, const struct out_opts *o)
{
	struct out *out = out_new("nodes", node_columns, NNODE_COLS,
				  NODE_DEFAULTS, o);
	size_t i, j, count = pm_numa_count(n);
	int code = EXIT_OK;

	if (!out)
		return EXIT_USAGE;
	for (i = 0; i < count; i++) {
		const struct pm_numa_node *nd = pm_numa_node(n, i);
		struct libscols_line *ln = out_line(out);
		char dist[256] = "";
		size_t len = 0;

		for (j = 0; j < count && len + 8 < sizeof(dist); j++)
			len += (size_t)snprintf(dist + len, sizeof(dist) - len, "%s%d", j ? " " : "",
						pm_numa_distance(n, i, j));
		out_u64(out, ln, NCOL_NODE, (uint64_t)nd->id);
		out_str(out, ln, NCOL_CPUS, nd->cpulist);
		out_u64(out, ln, NCOL_MEMORY, nd->mem_total);
		out_u64(out, ln, NCOL_FREE, nd->mem_free);
		if (nd->tier >= 0)
			out_u64(out, ln, NCOL_TIER, (uint64_t)nd->tier);
		else
			out_unknown(out, ln, NCOL_TIER);
		out_str(out, ln, NCOL_DISTANCES, dist);
		out_u64(out, ln, NCOL_PROMOTED, nd->promoted);
		out_u64(out, ln, NCOL_DEMOTED, nd->demoted);
	}
	if (out_print(out) < 0)
		code = EXIT_RUNTIME;
	out_free(out);
	return code;
}

int cmd_numa(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS,
						  { "source", required_argument, NULL, OPT_SOURCE },
						  { "all", no_argument, NULL, OPT_ALL },
						  { "sort", required_argument, NULL, 's' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	struct numa_opts no = { .source = PM_NUMA_AUTO, .sort = NO_SORT };
	struct pm_numa *n;
	int c, code;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "hs:", longopts, NULL)) != -1) {
		if (out_parse_opt(&no.o, c, optarg))
			continue;
		if (c == 'h')
			return usage_help();
		if (c == 's' && parse_sort(optarg, &no.sort) < 0)
			return cli_usage_error("unknown sort column '%s' (PID, COMMAND, NODE, TOTAL, ANON, FILE, SHMEM, "
					       "HUGETLB, THP)", optarg);
		if (c == 's')
			continue;
		if (c == OPT_ALL)
			no.all = true;
		else if (c == OPT_SOURCE && parse_source(optarg, &no.source) < 0)
			return cli_usage_error("invalid --source '%s' (auto, frames, move_pages, numa_maps)", optarg);
		else if (c != OPT_SOURCE)
			return cli_bad_option(argv);
	}
	if (no.all && optind < argc)
		return cli_usage_error("--all takes no PID");
	if (no.sort != NO_SORT && !no.all)
		return cli_usage_error("--sort goes with --all");
	n = pm_numa_open(ctx);
	if (!n) {
		cli_error(errno, errno == EOPNOTSUPP ? "no NUMA nodes in sysfs (a kernel without CONFIG_NUMA)" :
						       "cannot read the NUMA nodes");
		return EXIT_RUNTIME;
	}
	if (optind == argc && !no.all)
		code = node_table(n, &no.o);
	else
		code = processes(ctx, n, &no, argc - optind, argv + optind);
	pm_numa_close(n);
	return code;
}
