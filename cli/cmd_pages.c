/* cmd_pages.c - `pagemap pages PID [RANGE]`: runs of pages with their flags, frames and swap slots. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_START, COL_END, COL_PAGES, COL_SIZE, COL_FLAGS, COL_NAMES, COL_PFN, COL_NODE, COL_SWAPTYPE,
       COL_SWAPOFF, COL_PERMS, COL_PATH };

static const struct out_col columns[] = {
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the run" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after the run" },
	[COL_PAGES] = { "PAGES", 5, SCOLS_FL_RIGHT, OUT_NUM, "pages in the run" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes in the run" },
	[COL_FLAGS] = { "FLAGS", 11, 0, OUT_STR, "one letter per flag (see --help), '-' clear, '?' unknown" },
	[COL_NAMES] = { "NAMES", 0.2, 0, OUT_STR, "the flags by name" },
	[COL_PFN] = { "PFN", 0.1, SCOLS_FL_RIGHT, OUT_STR, "physical frames, first-last, or \"hidden\"" },
	[COL_NODE] = { "NODE", 4, SCOLS_FL_RIGHT, OUT_STR,
		       "NUMA node(s) of the frames (root), in order; \"?\" for frames in no node" },
	[COL_SWAPTYPE] = { "SWAPTYPE", 3, SCOLS_FL_RIGHT, OUT_STR, "swap area (type), or \"hidden\"" },
	[COL_SWAPOFF] = { "SWAPOFF", 0.1, SCOLS_FL_RIGHT, OUT_STR, "first swap slot offset, or \"hidden\"" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
		       "the mapping's file or [name]; empty: anonymous" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/*
 * A terminal gets a run's start and length, its flags and frames, and the path truncated: a row fits
 * 80 columns (PFN is a range, up to 17 characters); END and the swap slot stay with -o.
 */
#define PAGES_DEFAULTS "START,END,PAGES,FLAGS,PFN,SWAPTYPE,SWAPOFF,PATH"
#define PAGES_TERM_DEFAULTS "START,PAGES,FLAGS,PFN,PATH"

struct pages_opts {
	unsigned walk_flags;
	uint32_t known;
	bool hidden;		/* frames hidden from this reader */
	uint64_t runs;		/* runs walked so far, shown or not */
	struct pm_numa *numa;	/* for the NODE column, else NULL */
	uint32_t only_set;	/* --only: flags a row must have set */
	uint32_t only_clear;	/* --only: flags (^LETTER) a row must have clear */
	const char *only;	/* --only's argument, for messages */
};

/*
 * --only LETTERS: each letter a flag that must be set, ^LETTER one that must be clear ("P" present pages,
 * "P^E" present pages shared with another process, "S" swapped). Like page-types' -b, so that a list of
 * the present pages is the same rows as its -L.
 */
static int parse_only(const char *arg, struct pages_opts *po)
{
	const struct pm_flag_info *tab;
	size_t n, i;
	bool clear = false;

	tab = pm_flag_table(&n);
	po->only = arg;
	for (; *arg; arg++) {
		if (*arg == '^' && !clear) {
			clear = true;
			continue;
		}
		for (i = 0; i < n && tab[i].letter != *arg; i++)
			;
		if (i == n)
			return -1;
		*(clear ? &po->only_clear : &po->only_set) |= tab[i].bit;
		clear = false;
	}
	return clear || !(po->only_set | po->only_clear) ? -1 : 0;
}

/* A filter on a flag this walk cannot tell would show nothing, silently: say which flag instead. */
static int only_known(const struct pages_opts *po, uint32_t known)
{
	const struct pm_flag_info *tab;
	size_t n, i;

	tab = pm_flag_table(&n);
	for (i = 0; i < n; i++)
		if (((po->only_set | po->only_clear) & tab[i].bit) && !(known & tab[i].bit)) {
			cli_error(0, "--only %s: %s (%c) cannot be told here (shown as '?': see pagemap features)",
				  po->only, tab[i].name, tab[i].letter);
			return -1;
		}
	return 0;
}

/* Letters for set flags, '-' for clear, '?' for what this walk cannot tell. */
static void flag_cells(struct out *out, struct libscols_line *ln, uint32_t flags, uint32_t known)
{
	const struct pm_flag_info *tab;
	char letters[PM_PAGE_NFLAGS + 1], names[256];
	size_t n, i, len = 0, k = 0;

	bool want_names = out_has(out, COL_NAMES);	/* not shown by default: skip the snprintfs */

	tab = pm_flag_table(&n);
	names[0] = '\0';
	for (i = 0; i < n && k < sizeof(letters) - 1; i++) {
		letters[k++] = (flags & tab[i].bit) ? tab[i].letter : (known & tab[i].bit) ? '-' : '?';
		if (want_names && (flags & tab[i].bit) && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "", tab[i].name);
	}
	letters[k] = '\0';
	out_str(out, ln, COL_FLAGS, letters);
	out_str(out, ln, COL_NAMES, names);
}

static void frame_cells(struct out *out, struct libscols_line *ln, const struct pm_run *r, const struct pages_opts *po,
			uint64_t pages)
{
	char buf[64];

	if (r->flags & PM_PAGE_PRESENT) {
		if (r->flags & PM_PAGE_FRAME) {
			/* "0x%" PRIx64 "-0x%" PRIx64 by hand: snprintf here was a twentieth of a sparse process's rows */
			size_t len = out_fmt_u64(buf, r->pfn, true);

			if (pages > 1 && !((r->flags & PM_PAGE_ZERO) && !(r->flags & PM_PAGE_THP))) {
				buf[len++] = '-';
				out_fmt_u64(buf + len, r->pfn + pages - 1, true);
			}
			out_str(out, ln, COL_PFN, buf);
		} else if (po->hidden || !(po->known & PM_PAGE_FRAME)) {
			out_str(out, ln, COL_PFN, po->hidden ? "hidden" : "-");
		}
	}
	/* A marker (guard, uffd-wp) is no swap slot: its cells stay empty. */
	if (r->flags & (PM_PAGE_SWAPPED | PM_PAGE_NONSWAP)) {
		if (r->flags & PM_PAGE_FRAME) {
			out_fmt_u64(buf, r->swap_type, false);
			out_str(out, ln, COL_SWAPTYPE, buf);
			out_fmt_u64(buf, r->swap_offset, true);
			out_str(out, ln, COL_SWAPOFF, buf);
		} else {
			out_str(out, ln, COL_SWAPTYPE, po->hidden ? "hidden" : "-");
			out_str(out, ln, COL_SWAPOFF, po->hidden ? "hidden" : "-");
		}
	}
}

/* The nodes of frames [pfn, pfn + n), in order and each once ("0", "0,1", "?"): one lookup per node range. */
static void node_cell(struct out *out, struct libscols_line *ln, struct pm_numa *numa, uint64_t pfn, uint64_t n)
{
	char buf[64] = "";
	size_t len = 0;
	uint64_t end = pfn + n, next;
	int last = -2;

	while (pfn < end && len + 8 < sizeof(buf)) {
		int i = pm_numa_index_of_pfn(numa, pfn, &next);

		if (i != last) {
			if (i < 0)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s?", len ? "," : "");
			else
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", len ? "," : "",
							pm_numa_node(numa, (size_t)i)->id);
			last = i;
		}
		pfn = next > pfn ? next : end;
	}
	out_str(out, ln, COL_NODE, buf);
}

static void run_row(struct out *out, const struct pm_run *r, const struct pages_opts *po, unsigned shift)
{
	struct libscols_line *ln = out_line(out);
	uint64_t pages = (r->end - r->start) >> shift;
	char path[4096];

	out_u64(out, ln, COL_START, r->start);
	out_u64(out, ln, COL_END, r->end);
	out_u64(out, ln, COL_PAGES, pages);
	out_u64(out, ln, COL_SIZE, r->end - r->start);
	flag_cells(out, ln, r->flags, po->known);
	frame_cells(out, ln, r, po, pages);
	if (po->numa && (r->flags & PM_PAGE_PRESENT) && (r->flags & PM_PAGE_FRAME))
		node_cell(out, ln, po->numa, r->pfn, (r->flags & PM_PAGE_ZERO) && !(r->flags & PM_PAGE_THP) ? 1 : pages);
	else if (po->hidden && (r->flags & PM_PAGE_PRESENT))
		out_str(out, ln, COL_NODE, "hidden");
	out_str(out, ln, COL_PERMS, r->map->perms);
	if (out_has(out, COL_PATH)) {	/* a copy, not snprintf: this runs once a row */
		size_t len = r->map->path_len < sizeof(path) ? r->map->path_len : sizeof(path) - 1;

		memcpy(path, r->map->path, len);
		path[len] = '\0';
		out_str(out, ln, COL_PATH, path);
	}
}

static int walk_range(struct pm_ctx *ctx, struct pm_target *t, struct out *out, struct pages_opts *po,
		      uint64_t start, uint64_t end, const char *arg)
{
	struct pm_walk *w = pm_walk_new(t, start, end, po->walk_flags);
	const struct pm_run *r;
	int rc;

	if (!w) {
		cli_walk_error(ctx, errno, arg);
		return EXIT_RUNTIME;
	}
	po->known = pm_walk_known(w);
	if (only_known(po, po->known) < 0) {
		pm_walk_free(w);
		return EXIT_RUNTIME;
	}
	while ((rc = pm_walk_next(w, &r)) == 0) {
		po->runs++;
		if ((r->flags & po->only_set) != po->only_set || (r->flags & po->only_clear))
			continue;
		run_row(out, r, po, pm_ctx_features(ctx)->page_shift);
		if (out_stream(out) < 0) {	/* --each of a large range: memory stays flat */
			rc = -EIO;
			break;
		}
	}
	pm_walk_free(w);
	if (rc < 0) {
		cli_walk_error(ctx, -rc, arg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/*
 * A name given as a file's last component ("libc.so.6") or without its brackets ("heap"): the mapping
 * the user likely meant, said as a hint (the name is matched whole, as maps prints it).
 */
static void hint_name(struct pm_target *t, const char *name)
{
	struct pm_maps *it = pm_maps_open(t);
	const struct pm_mapping *m;
	size_t len = strlen(name);
	const char *base;

	while (it && pm_maps_next(it, &m) == 0) {
		base = memrchr(m->path, '/', m->path_len);
		base = base ? base + 1 : m->path;
		if ((m->path[0] == '/' && (size_t)(m->path + m->path_len - base) == len && !memcmp(base, name, len)) ||
		    (m->path[0] == '[' && m->path_len == len + 2 && !memcmp(m->path + 1, name, len))) {
			cli_hint("did you mean %.*s? (a mapping's name as maps shows it)", (int)m->path_len, m->path);
			break;
		}
	}
	pm_maps_close(it);
}

/* Walk every mapping whose path is @name ("[heap]", a file path, any name that is not an address). */
static int walk_named(struct pm_ctx *ctx, struct pm_target *t, struct out *out, struct pages_opts *po,
		      const char *name, const char *arg)
{
	struct pm_maps *it = pm_maps_open(t);
	const struct pm_mapping *m;
	uint64_t (*ranges)[2] = NULL, (*more)[2];
	size_t n = 0, cap = 0, i, len = strlen(name);
	int rc, code = EXIT_OK;

	if (!it) {
		cli_walk_error(ctx, errno, arg);
		return EXIT_RUNTIME;
	}
	while ((rc = pm_maps_next(it, &m)) == 0) {
		if (m->path_len != len || memcmp(m->path, name, len))
			continue;
		if (n && ranges[n - 1][1] == m->start) {	/* one file's consecutive mappings: one walk */
			ranges[n - 1][1] = m->end;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			more = realloc(ranges, cap * sizeof(*ranges));
			if (!more) {
				rc = -ENOMEM;
				break;
			}
			ranges = more;
		}
		ranges[n][0] = m->start;
		ranges[n++][1] = m->end;
	}
	pm_maps_close(it);
	if (rc < 0) {
		free(ranges);
		cli_walk_error(ctx, -rc, arg);
		return EXIT_RUNTIME;
	}
	if (!n) {
		free(ranges);
		cli_error(0, "no mapping named %s in process %s", name, arg);
		hint_name(t, name);
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n && code == EXIT_OK; i++)
		code = walk_range(ctx, t, out, po, ranges[i][0], ranges[i][1], arg);
	free(ranges);
	return code;
}

static int usage_help(void)
{
	const struct pm_flag_info *tab;
	size_t n, i;

	printf("Usage: pagemap pages [options] PID [RANGE]\n\n"
	       "Runs of consecutive pages of process PID (or \"self\") with identical state.\n"
	       "RANGE is 0xSTART-0xEND, one address (its page), or a mapping name such as\n"
	       "[heap] or a file path, as maps shows it (anything that does not begin with a\n"
	       "digit or a sign); the default is every mapping.\n\n"
	       "Options:\n"
	       "     --each             one row per page\n"
	       "     --only LETTERS     only rows with these flags set; ^L: flag L clear\n"
	       "                        (P present pages, P^E present and shared, S swapped)\n"
	       "\nFlag letters:\n");
	tab = pm_flag_table(&n);
	for (i = 0; i < n; i++)
		printf("  %c  %-10s %s\n", tab[i].letter, tab[i].name, tab[i].meaning);
	out_help(stdout, columns, NCOLS);
	out_help_defaults(stdout, PAGES_DEFAULTS, PAGES_TERM_DEFAULTS);
	return EXIT_OK;
}

#define OPT_EACH 0x2000
#define OPT_ONLY 0x2001

int cmd_pages(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "each", no_argument, NULL, OPT_EACH },
						  { "only", required_argument, NULL, OPT_ONLY },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct pages_opts po = { .walk_flags = PM_WALK_ENTRIES };
	struct out_opts o = { 0 };
	struct pm_target *t;
	uint64_t start = 0, end = UINT64_MAX;
	struct out *out;
	const char *range;
	bool named;
	pid_t pid;
	int c, code;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == OPT_EACH)
			po.walk_flags |= PM_WALK_EACH;
		else if (c == OPT_ONLY && parse_only(optarg, &po) < 0)
			return cli_usage_error("invalid --only '%s' (flag letters, ^ before a flag that must be clear)",
					       optarg);
		else if (c == OPT_ONLY)
			continue;
		else if (c == 'h')
			return usage_help();
		else
			return cli_bad_option(argv);
	}
	if (optind == argc || argc - optind > 2)
		return cli_usage_error(optind == argc ? "no PID given" : "too many arguments");
	if (cli_parse_pid(argv[optind], &pid) < 0)
		return cli_usage_error("invalid PID '%s'", argv[optind]);
	range = optind + 1 < argc ? argv[optind + 1] : NULL;
	/*
	 * An address begins with a digit (a sign is a mistyped one); anything else names a mapping, and a
	 * name the process does not map is the process's fact, not a usage error.
	 */
	named = range && !strchr("0123456789+-", range[0]);
	if (range && !named && cli_parse_range(range, pm_ctx_features(ctx)->page_size, &start, &end) < 0)
		return cli_usage_error("invalid range '%s' (0xSTART-0xEND, an address, or a mapping name)", range);
	out = out_new_fit("pages", columns, NCOLS, PAGES_DEFAULTS, PAGES_TERM_DEFAULTS, &o);
	if (!out)
		return EXIT_USAGE;
	t = cli_open_target(ctx, pid, argv[optind]);
	if (!t) {
		out_free(out);
		return EXIT_RUNTIME;
	}
	po.hidden = pm_target_pfn_view(t) != PM_PFN_VISIBLE;
	/* The note is about the columns of frames and swap slots: none shown, no note. */
	if (out_has(out, COL_PFN) || out_has(out, COL_NODE) || out_has(out, COL_SWAPTYPE) || out_has(out, COL_SWAPOFF))
		cli_note_hidden(ctx, t);
	if (out_has(out, COL_NODE) && !po.hidden && !(po.numa = pm_numa_open(ctx)))
		cli_error(errno, "NODE: cannot read the NUMA nodes");	/* the column shows "-" */
	if (named)
		code = walk_named(ctx, t, out, &po, range, argv[optind]);
	else
		code = walk_range(ctx, t, out, &po, start, end, argv[optind]);
	if (code == EXIT_OK && range && !po.runs) {
		cli_error(0, "process %s has nothing mapped at %s", argv[optind], range);
		code = EXIT_RUNTIME;
	}
	if (code == EXIT_OK && out_print(out) < 0)
		code = EXIT_RUNTIME;
	pm_numa_close(po.numa);
	pm_target_close(t);
	out_free(out);
	return code;
}
