/* cmd_maps.c - `pagemap maps PID`: one row per mapping with what its pages are doing. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "node_cells.h"
#include "output.h"

/*
 * The columns: four about the mapping, RSS (the kernel's Rss, derived from
 * two sums), one size column per flag the flag table sums per mapping
 * (pm_flag_sums, in its column order, named as the flag in upper case),
 * then five more about the mapping. Built once, by maps_columns().
 */
enum { COL_START, COL_END, COL_PERMS, COL_SIZE, COL_RSS, COL_USAGE };
enum { TAIL_OFFSET, TAIL_DEV, TAIL_INODE, TAIL_NODES, TAIL_PATH, NTAIL };
#define MAX_USAGE	32	/* a flags word's bits */

static const struct out_col head_cols[COL_USAGE] = {
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "size of the mapping" },
	[COL_RSS] = { "RSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_RSS_HELP, OUT_RSS_ALIASES },
};
static const struct out_col tail_cols[NTAIL] = {
	[TAIL_OFFSET] = { "OFFSET", 0.1, SCOLS_FL_RIGHT, OUT_HEX, "file offset" },
	[TAIL_DEV] = { "DEV", 5, 0, OUT_STR, "device major:minor" },
	[TAIL_INODE] = { "INODE", 5, SCOLS_FL_RIGHT, OUT_NUM, "inode" },
	[TAIL_NODES] = { "NODES", 0.1, 0, OUT_STR,
			 "bytes in RAM per NUMA node, \"0:1.2M,1:4K\" (see pagemap numa)" },
	[TAIL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
			"the mapping's file or [name]; empty: anonymous" },
};

/*
 * Pipes, -r and -J: every figure the flag table sums, as scripts have always had them. A terminal:
 * what pmap -x shows (address, size, RSS, mode, mapping) with what is private and what is in swap,
 * the path truncated, so that a row fits 80 columns.
 */
#define MAPS_DEFAULTS "START,END,PERMS,SIZE,PRESENT,SWAPPED,FILE,EXCLUSIVE,THP,SOFTDIRTY,UFFDWP,GUARD,PATH"
#define MAPS_TERM_DEFAULTS "START,SIZE,RSS,EXCLUSIVE,SWAPPED,PERMS,PATH"

static struct out_col columns[COL_USAGE + MAX_USAGE + NTAIL];
static char usage_name[MAX_USAGE][16];
static uint32_t usage_flag[MAX_USAGE];	/* the flag whose bytes usage column i shows */
static size_t nusage, ncols;

#define COL_TAIL(t)	(COL_USAGE + nusage + (t))
#define COL_OFFSET	COL_TAIL(TAIL_OFFSET)
#define COL_DEV		COL_TAIL(TAIL_DEV)
#define COL_INODE	COL_TAIL(TAIL_INODE)
#define COL_NODES	COL_TAIL(TAIL_NODES)
#define COL_PATH	COL_TAIL(TAIL_PATH)

/* The name of flag @bit in the flag table, or "". */
static const char *flag_name(uint32_t bit)
{
	const struct pm_flag_info *t;
	size_t i, n;

	for (t = pm_flag_table(&n), i = 0; i < n; i++)
		if (t[i].bit == bit)
			return t[i].name;
	return "";
}

/* A size column for each summed flag, in place. */
static void usage_column(const struct pm_flag_sum *s)
{
	size_t c = (size_t)s->column, j;
	const char *name = flag_name(s->bit);

	for (j = 0; name[j] && j + 1 < sizeof(usage_name[c]); j++)
		usage_name[c][j] = (char)toupper((unsigned char)name[j]);
	usage_name[c][j] = '\0';
	usage_flag[c] = s->bit;
	columns[COL_USAGE + c] =
		(struct out_col){ usage_name[c], 5, SCOLS_FL_RIGHT, OUT_SIZE, s->bytes, NULL };
	if (c + 1 > nusage)
		nusage = c + 1;
}

static void maps_columns(void)
{
	const struct pm_flag_sum *s;
	size_t i, n;

	if (ncols)
		return;
	memcpy(columns, head_cols, sizeof(head_cols));
	for (s = pm_flag_sums(&n), i = 0; i < n; i++)
		if (s[i].column >= 0 && s[i].column < MAX_USAGE)
			usage_column(&s[i]);
	memcpy(&columns[COL_USAGE + nusage], tail_cols, sizeof(tail_cols));
	ncols = COL_USAGE + nusage + NTAIL;
}

static uint64_t flag_bytes(const struct pm_flag_bytes *b, uint32_t flag)
{
	return b->by_flag[__builtin_ctz(flag)];
}

static void add_bytes(struct pm_flag_bytes *sum, const struct pm_flag_bytes *b)
{
	size_t i;

	for (i = 0; i < sizeof(sum->by_flag) / sizeof(sum->by_flag[0]); i++)
		sum->by_flag[i] += b->by_flag[i];
}

/* Size cells; a flag the kernel or back end cannot tell prints "-" (null), never 0. */
static void usage_cells(struct out *out, struct libscols_line *ln, const struct pm_flag_bytes *b, uint32_t known)
{
	size_t i;

	for (i = 0; i < nusage; i++) {
		if (known & usage_flag[i])
			out_u64(out, ln, COL_USAGE + i, flag_bytes(b, usage_flag[i]));
		else
			out_unknown(out, ln, COL_USAGE + i);
	}
}

/* RSS is PRESENT less ZERO: unknown when either is. */
#define RSS_NEEDS	(PM_PAGE_PRESENT | PM_PAGE_ZERO)

static void rss_cell(struct out *out, struct libscols_line *ln, uint64_t rss, uint32_t known)
{
	if ((known & RSS_NEEDS) == RSS_NEEDS)
		out_u64(out, ln, COL_RSS, rss);
	else
		out_unknown(out, ln, COL_RSS);
}

static void mapping_row(struct out *out, const struct pm_mapping *m, const struct pm_flag_bytes *b,
			uint64_t rss, uint32_t known, const struct node_cells *nodes)
{
	struct libscols_line *ln = out_line(out);
	const char *cell = nodes ? node_cells_get(nodes, m->start) : NULL;
	char buf[4096];

	out_u64(out, ln, COL_START, m->start);
	out_u64(out, ln, COL_END, m->end);
	out_str(out, ln, COL_PERMS, m->perms);
	out_u64(out, ln, COL_SIZE, m->end - m->start);
	rss_cell(out, ln, rss, known);
	usage_cells(out, ln, b, known);
	out_u64(out, ln, COL_OFFSET, m->offset);
	if (out_has(out, COL_DEV)) {	/* snprintf only for cells shown: it cost a tenth of maps at 10k mappings */
		snprintf(buf, sizeof(buf), "%02x:%02x", m->dev_major, m->dev_minor);
		out_str(out, ln, COL_DEV, buf);
	}
	out_u64(out, ln, COL_INODE, m->inode);
	if (cell)
		out_str(out, ln, COL_NODES, cell);
	else
		out_unknown(out, ln, COL_NODES);
	if (out_has(out, COL_PATH)) {
		size_t n = m->path_len < sizeof(buf) - 1 ? m->path_len : sizeof(buf) - 1;

		memcpy(buf, m->path, n);
		buf[n] = '\0';
		out_str(out, ln, COL_PATH, buf);
	}
}

static const struct pm_flag_fact *fact_of(uint32_t flag)
{
	const struct pm_flag_fact *x;
	size_t i, n;

	for (x = pm_flag_facts(&n), i = 0; i < n; i++)
		if (x[i].bit == flag)
			return &x[i];
	return NULL;
}

/* Why a column the kernel, privilege or back end cannot tell is "-", all in one stderr line. */
static void note_unknown(struct pm_ctx *ctx, struct out *out, uint32_t known, const struct pm_target *t,
			 const struct pm_walk *w, bool entries)
{
	const struct pm_features *f = pm_ctx_features(ctx);
	struct pm_decode_info d;
	struct pm_read_how how;
	char line[1024], why[128];
	size_t i, n = 0;
	int lack;

	pm_target_decode_info(t, &d);
	how = (struct pm_read_how){ .layout = d.layout, .frames = d.frame_visible,
				    .scan = pm_walk_backend(w) == PM_BACKEND_SCAN, .entries = entries };
	/* RSS first, with the reason of the flag it lacks (PRESENT less ZERO). */
	for (i = 0; i <= nusage; i++) {
		size_t col = i ? COL_USAGE + i - 1 : COL_RSS;
		uint32_t flag = i ? usage_flag[i - 1] :
				    (known & PM_PAGE_ZERO) ? PM_PAGE_PRESENT : PM_PAGE_ZERO;

		if (!out_has(out, col) || (known & flag) || n >= sizeof(line))
			continue;
		lack = pm_flag_lack(f, &how, flag);
		if (!pm_flag_lack_str(flag, lack, &how, why, sizeof(why)))
			continue;	/* every summed flag is one the library knows */
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s (%s%s)", n ? ", " : "",
				      columns[col].name,
				      i ? "" : flag == PM_PAGE_ZERO ? "needs ZERO: " : "needs PRESENT: ", why);
	}
	if (n)
		cli_error(0, "note: shown as \"-\": %s", line);
}

/* Does a column shown need entries read (PM_NEED_ENTRIES: no PAGEMAP_SCAN category tells it)? */
static bool entries_wanted(struct out *out)
{
	const struct pm_flag_fact *x;
	size_t i;

	for (i = 0; i < nusage; i++)
		if (out_has(out, COL_USAGE + i) && (x = fact_of(usage_flag[i])) &&
		    (x->needs & PM_NEED_ENTRIES))
			return true;
	return false;
}

static int walk_maps(struct pm_ctx *ctx, struct pm_target *t, struct out *out, const char *arg,
		     const struct node_cells *nodes)
{
	bool entries = entries_wanted(out);
	struct pm_mapstat *it = pm_mapstat_open(t, entries ? PM_WALK_ENTRIES : 0);
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_flag_bytes total = { { 0 } };
	uint64_t size = 0, rss = 0;
	uint32_t known;
	struct libscols_line *ln;
	int rc;

	if (!it) {
		cli_walk_error(ctx, errno, arg);
		return EXIT_RUNTIME;
	}
	known = pm_walk_known(pm_mapstat_walk(it));
	note_unknown(ctx, out, known, t, pm_mapstat_walk(it), entries);
	while ((rc = pm_mapstat_next(it, &m, &u)) == 0) {
		uint64_t map_rss = pm_usage_rss(u, m);

		/* [vvar] (VM_PFNMAP) and [vsyscall] (above task_size) are never read: all "-" */
		mapping_row(out, m, pm_mapstat_bytes(it), map_rss, pm_mapstat_known(it), nodes);
		add_bytes(&total, pm_mapstat_bytes(it));
		rss += map_rss;
		size += m->end - m->start;
	}
	pm_mapstat_close(it);
	if (rc < 0) {
		cli_walk_error(ctx, -rc, arg);
		return EXIT_RUNTIME;
	}
	ln = out_total_line(out);
	if (ln) {
		/* Label the totals in the first text column shown. */
		out_str(out, ln, out_has(out, COL_PATH) ? COL_PATH : out_has(out, COL_PERMS) ? COL_PERMS : COL_START,
			"total");
		out_u64(out, ln, COL_SIZE, size);
		rss_cell(out, ln, rss, known);
		usage_cells(out, ln, &total, known);
	}
	return EXIT_OK;
}

static int usage_help(void)
{
	printf("Usage: pagemap maps [options] PID\n\n"
	       "One row per mapping of process PID (or \"self\"): how much of it is in RAM, in\n"
	       "swap, shared, exclusive, in huge pages, soft-dirty, write-protected or guarded.\n"
	       "A dash (null in JSON) means this kernel or privilege level cannot tell.\n");
	maps_columns();
	out_help_with(stdout, columns, ncols, OUT_HELP_TOTAL);
	out_help_defaults(stdout, MAPS_DEFAULTS, MAPS_TERM_DEFAULTS);
	return EXIT_OK;
}

int cmd_maps(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct out_opts o = { 0 };
	struct node_cells *nodes = NULL;
	struct pm_target *t;
	struct out *out;
	pid_t pid;
	int c, code;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == 'h')
			return usage_help();
		return cli_bad_option(argv);
	}
	if (optind + 1 != argc)
		return cli_usage_error(optind == argc ? "no PID given" : "too many arguments");
	if (cli_parse_pid(argv[optind], &pid) < 0)
		return cli_usage_error("invalid PID '%s'", argv[optind]);
	maps_columns();
	out = out_new_fit("maps", columns, ncols, MAPS_DEFAULTS, MAPS_TERM_DEFAULTS, &o);
	if (!out)
		return EXIT_USAGE;
	t = cli_open_target(ctx, pid, argv[optind]);
	if (!t) {
		out_free(out);
		return EXIT_RUNTIME;
	}
	if (out_has(out, COL_NODES) && !(nodes = node_cells_new(ctx, t, o.bytes)))
		cli_error(errno, "note: NODES shown as \"-\": cannot tell the nodes of process %s (see pagemap numa)",
			  argv[optind]);
	code = walk_maps(ctx, t, out, argv[optind], nodes);
	node_cells_free(nodes);
	if (code == EXIT_OK && out_print(out) < 0)
		code = EXIT_RUNTIME;
	pm_target_close(t);
	out_free(out);
	return code;
}
