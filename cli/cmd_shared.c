/* cmd_shared.c - `pagemap shared PID...`: what the processes share with each other and with the rest of the system. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_KIND, COL_PID, COL_START, COL_END, COL_PERMS, COL_PATH, COL_PEER, COL_PEER_START, COL_PEER_END,
       COL_PEER_PERMS, COL_PEER_PATH, COL_RSS, COL_SHARED, COL_OTHERS, COL_SWAP, COL_HUGETLB };

static const struct out_col columns[] = {
	[COL_KIND] = { "KIND", 7, 0, OUT_STR, "pair, map, pids (two processes), process or total" },
	[COL_PID] = { "PID", 6, SCOLS_FL_RIGHT, OUT_NUM, "process ID (pair, map, pids, process rows)" },
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping (pair, map rows)" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_PATH] = { "PATH", 0.2, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR, "the mapping's file or [name]; empty: anonymous" },
	[COL_PEER] = { "PEER", 6, SCOLS_FL_RIGHT, OUT_NUM, "the other process (pair, pids rows)" },
	[COL_PEER_START] = { "PEER_START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the other mapping (pair rows)" },
	[COL_PEER_END] = { "PEER_END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after the other mapping" },
	[COL_PEER_PERMS] = { "PEER_PERMS", 4, 0, OUT_STR, "permissions of the other mapping" },
	[COL_PEER_PATH] = { "PEER_PATH", 0.2, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR, "file or [name] of the other mapping; empty: anonymous" },
	[COL_RSS] = { "RSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_RSS_HELP "; each frame once",
		      OUT_RSS_ALIASES },
	[COL_SHARED] = { "SHARED", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes also mapped by the peer or another given process (total: by 2+)" },
	[COL_OTHERS] = { "OTHERS", 6, SCOLS_FL_RIGHT, OUT_SIZE, "of SHARED (pair, pids) or RSS, bytes processes not given map too" },
	[COL_SWAP] = { "SWAP", 5, SCOLS_FL_RIGHT, OUT_SIZE,
		       "bytes in swap (slots held, counted as SHARED counts frames)" },
	[COL_HUGETLB] = { "HUGETLB", 5, SCOLS_FL_RIGHT, OUT_SIZE, "hugetlb bytes mapped (in no other column)" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))
#define DEFAULT_COLS "KIND,PID,START,PERMS,PATH,PEER,PEER_START,PEER_PATH,RSS,SHARED,OTHERS,SWAP"
/* On a terminal, what fits 80 columns: who shares how much with whom, the path last and cut to the rest */
#define TERM_COLS "KIND,PID,START,PEER,RSS,SHARED,OTHERS,PATH"

struct shared_opts {
	struct out_opts o;
	bool all;		/* a map row for every mapping */
	pid_t *pids;
	char **args;		/* the PIDs as given, for messages */
	size_t n;		/* after collect(): the processes read, first in pids and args */
	size_t missing;		/* given but not read: named on stderr, exit 1 */
};

/* ---- rows ---- */

static void map_cells(struct out *out, struct libscols_line *ln, const struct pm_share_map *m, bool peer)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s", m->map.path);
	out_u64(out, ln, peer ? COL_PEER : COL_PID, (uint64_t)m->pid);
	out_u64(out, ln, peer ? COL_PEER_START : COL_START, m->map.start);
	out_u64(out, ln, peer ? COL_PEER_END : COL_END, m->map.end);
	out_str(out, ln, peer ? COL_PEER_PERMS : COL_PERMS, m->map.perms);
	out_str(out, ln, peer ? COL_PEER_PATH : COL_PATH, path);
}

/* Cells a row kind has no value for: "-" in tables, null in JSON. */
static void unknown_cells(struct out *out, struct libscols_line *ln, const size_t *cols, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out_unknown(out, ln, cols[i]);
}

static const size_t peer_cols[] = { COL_PEER, COL_PEER_START, COL_PEER_END, COL_PEER_PERMS, COL_PEER_PATH };
static const size_t map_cols[] = { COL_START, COL_END, COL_PERMS, COL_PATH };

static void sum_cells(struct out *out, struct libscols_line *ln, const struct pm_share_sum *u)
{
	out_u64(out, ln, COL_RSS, u->resident);
	out_u64(out, ln, COL_SHARED, u->shared);
	out_u64(out, ln, COL_OTHERS, u->outside);
	out_u64(out, ln, COL_SWAP, u->swap_shared);
	out_u64(out, ln, COL_HUGETLB, u->hugetlb);
}

static int pair_rows(struct out *out, struct pm_share *s)
{
	const struct pm_share_pair *p;
	struct libscols_line *ln;
	int r;

	while ((r = pm_share_next_pair(s, &p)) == 0) {
		ln = out_line(out);
		out_str(out, ln, COL_KIND, "pair");
		map_cells(out, ln, p->a, false);
		map_cells(out, ln, p->b, true);
		out_unknown(out, ln, COL_RSS);
		out_u64(out, ln, COL_SHARED, p->shared);
		out_u64(out, ln, COL_OTHERS, p->outside);
		out_u64(out, ln, COL_SWAP, p->swap);
		out_unknown(out, ln, COL_HUGETLB);
		if (out_stream(out) < 0)	/* pairs grow with the square of the processes: memory stays flat */
			return -EIO;
	}
	return r;
}

static int map_rows(struct out *out, struct pm_share *s, bool all)
{
	const struct pm_share_map *m;
	struct libscols_line *ln;
	int r;

	while ((r = pm_share_next_map(s, &m)) == 0) {
		if (!all && !m->sum.shared && !m->sum.outside && !m->sum.swap_shared)
			continue;
		ln = out_line(out);
		out_str(out, ln, COL_KIND, "map");
		map_cells(out, ln, m, false);
		unknown_cells(out, ln, peer_cols, sizeof(peer_cols) / sizeof(peer_cols[0]));
		sum_cells(out, ln, &m->sum);
		if (out_stream(out) < 0)
			return -EIO;
	}
	return r;
}

/* Pairs of processes, each process, the whole set; -EIO if a batch cannot be written. */
static int summary_rows(struct out *out, struct pm_share *s, const struct shared_opts *so)
{
	struct pm_share_sum u;
	struct libscols_line *ln;
	size_t a, b;

	for (a = 0; a < so->n; a++) {
		for (b = a + 1; b < so->n; b++) {
			pm_share_sum(s, (int)a, (int)b, &u);
			ln = out_line(out);
			out_str(out, ln, COL_KIND, "pids");
			out_u64(out, ln, COL_PID, (uint64_t)so->pids[a]);
			out_u64(out, ln, COL_PEER, (uint64_t)so->pids[b]);
			unknown_cells(out, ln, map_cols, 4);
			unknown_cells(out, ln, peer_cols + 1, 4);
			out_unknown(out, ln, COL_RSS);
			out_u64(out, ln, COL_SHARED, u.shared);
			out_u64(out, ln, COL_OTHERS, u.outside);
			out_u64(out, ln, COL_SWAP, u.swap_shared);
			out_unknown(out, ln, COL_HUGETLB);
			if (out_stream(out) < 0)
				return -EIO;
		}
	}
	for (a = 0; a <= so->n; a++) {
		/* The total row: not with -n or -r (rows only) unless --total; JSON keeps it. */
		ln = a < so->n ? out_line(out) : out_total_row(out);
		if (!ln)
			continue;
		pm_share_sum(s, a < so->n ? (int)a : PM_SHARE_ALL, PM_SHARE_ALL, &u);
		out_str(out, ln, COL_KIND, a < so->n ? "process" : "total");
		if (a < so->n)
			out_u64(out, ln, COL_PID, (uint64_t)so->pids[a]);
		else
			out_unknown(out, ln, COL_PID);
		unknown_cells(out, ln, map_cols, 4);
		unknown_cells(out, ln, peer_cols, 5);
		sum_cells(out, ln, &u);
	}
	return 0;
}

/* ---- collecting ---- */

/* Explain a failed pm_share_add of process @arg; @k is the kpage handle given to the library (may be NULL). */
static void explain_add(struct pm_ctx *ctx, struct pm_kpage *k, int err, int kerr, const char *arg)
{
	bool live = !strcmp(pm_ctx_root(ctx), "/");

	if (err == EPERM)
		cli_error(0, "cannot compare the pages of process %s: physical frame numbers are %s", arg,
			  live ? "hidden (needs CAP_SYS_ADMIN)" : "hidden in this capture");
	else if (!k || pm_kpage_status(k, PM_KPAGE_COUNT) < 0) {
		cli_error(kerr ? kerr : err, "cannot read %s/proc/kpagecount", live ? "" : pm_ctx_root(ctx));
		if ((kerr ? kerr : err) == EACCES)
			cli_hint("/proc/kpagecount is readable by root only");
	}
	else if (err == EEXIST)
		cli_error(0, "process %s is given twice", arg);
	else
		cli_walk_error(ctx, err, arg);
}

/*
 * Add the processes to @s. One that cannot be read (gone, a kernel thread, a zombie, refused)
 * or that exits during its walk is named on stderr and left out: the rows answer for the
 * others, as if only they were given, and so->missing counts it. A failure that would hold
 * for every process (frame numbers hidden, kpagecount unreadable) ends it: -1 after the
 * message, also when none is left.
 */
static int collect(struct pm_ctx *ctx, struct pm_share *s, struct pm_kpage *k, int kerr,
		   struct shared_opts *so)
{
	struct pm_target *t;
	size_t i, kept = 0;
	int r;

	for (i = 0; i < so->n; i++) {
		if (!(t = cli_open_target(ctx, so->pids[i], so->args[i])))
			continue;
		r = pm_share_add(s, t);	/* a failed add keeps nothing of the process */
		pm_target_close(t);
		if (r == -ESRCH) {
			cli_walk_error(ctx, ESRCH, so->args[i]);
			continue;
		}
		if (r < 0) {
			explain_add(ctx, k, -r, kerr, so->args[i]);
			return -1;
		}
		/* The rows index the processes in the order added. */
		so->pids[kept] = so->pids[i];
		so->args[kept++] = so->args[i];
	}
	so->missing = so->n - kept;
	so->n = kept;
	if (!kept)
		return -1;
	if ((r = pm_share_finish(s)) < 0) {
		cli_error(-r, "cannot read %s/proc/kpagecount", strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "");
		return -1;
	}
	return 0;
}

static int run(struct pm_ctx *ctx, struct shared_opts *so)
{
	struct out *out = out_new_fit("shared", columns, NCOLS, DEFAULT_COLS, TERM_COLS, &so->o);
	struct pm_kpage *k;
	struct pm_share *s = NULL;
	int kerr, code = EXIT_RUNTIME;

	if (!out)
		return EXIT_USAGE;
	k = pm_kpage_open(ctx);	/* NULL for non-root: pm_share_add says why, PFNs first */
	kerr = k ? 0 : errno;
	if (!(s = pm_share_new(ctx, k))) {
		cli_error(errno, "cannot compare processes");
		goto out;
	}
	if (collect(ctx, s, k, kerr, so) < 0)
		goto out;
	if (pair_rows(out, s) < 0 || map_rows(out, s, so->all) < 0 || summary_rows(out, s, so) < 0)
		goto out;
	code = out_print(out) < 0 || so->missing ? EXIT_RUNTIME : EXIT_OK;
out:
	pm_share_free(s);
	pm_kpage_close(k);
	out_free(out);
	return code;
}

/* ---- options ---- */

static int usage_help(void)
{
	printf("Usage: pagemap shared [options] PID...\n\n"
	       "Which physical pages the given processes share with each other and with the\n"
	       "rest of the system, in bytes. Rows, by KIND:\n"
	       "  pair     two mappings of two given processes: the bytes both map\n"
	       "  map      a mapping that shares something: with the given processes (SHARED)\n"
	       "           and with processes not given (OTHERS)\n"
	       "  pids     two given processes: the bytes both map\n"
	       "  process  a given process: what it shares with the others given, and outside\n"
	       "  total    all of them: bytes mapped by two or more, and shared outside\n"
	       "A frame counts once per row however often it is mapped. Needs root: physical\n"
	       "frame numbers and /proc/kpagecount. The zero page is not counted, hugetlb\n"
	       "pages only in HUGETLB; swap slots held by two given processes in SWAP.\n"
	       "A process that cannot be read (gone, a kernel thread, a zombie) is named on\n"
	       "stderr and left out: the rows answer for the others, exit status 1.\n\n"
	       "Options:\n"
	       " -a, --all              a map row for every mapping, also those sharing nothing\n\n"
	       "Default columns on a terminal, to fit its width (the path cut): KIND PID START\n"
	       "PEER RSS SHARED OTHERS PATH; piped, with -r or -J: KIND PID START PERMS PATH\n"
	       "PEER PEER_START PEER_PATH RSS SHARED OTHERS SWAP. -o and --output-all choose\n"
	       "the same everywhere.\n");
	out_help_with(stdout, columns, NCOLS, OUT_HELP_TOTAL);
	return EXIT_OK;
}

static int parse_pids(struct shared_opts *so, int argc, char **argv)
{
	size_t i, j;

	so->n = (size_t)(argc - optind);
	so->args = argv + optind;
	if (!so->n)
		return cli_usage_error("no PID given");
	if (!(so->pids = calloc(so->n, sizeof(*so->pids)))) {
		cli_error(ENOMEM, "cannot parse the PIDs");
		return EXIT_RUNTIME;
	}
	for (i = 0; i < so->n; i++) {
		if (cli_parse_pid(so->args[i], &so->pids[i]) < 0)
			return cli_usage_error("invalid PID '%s'", so->args[i]);
		for (j = 0; j < i; j++)
			if (so->pids[j] == so->pids[i])
				return cli_usage_error("PID '%s' given twice", so->args[i]);
	}
	return -1;
}

int cmd_shared(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
		{ "all", no_argument, NULL, 'a' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct shared_opts so = { 0 };
	int c, r = -1;

	optind = 0;
	while (r < 0 && (c = getopt_long(argc, argv, OUT_SHORTOPTS "ah", longopts, NULL)) != -1) {
		if (out_parse_opt(&so.o, c, optarg))
			continue;
		if (c == 'a')
			so.all = true;
		else
			r = c == 'h' ? usage_help() : cli_bad_option(argv);
	}
	if (r < 0)
		r = parse_pids(&so, argc, argv);
	if (r < 0)
		r = run(ctx, &so);
	free(so.pids);
	return r;
}
