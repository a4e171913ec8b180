/* cmd_phys.c - `pagemap phys`: physical memory by page flags (page-types), frame runs, and a
 * process's pages joined with their frames. Options, whole physical memory and --describe here; the
 * histogram of flag words: phys_hist.c; -p PID: phys_proc.c. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"
#include "phys.h"

/* Summary and --describe: one row per flag combination. */
const struct out_col phys_sum_cols[S_NCOLS] = {
	[S_FLAGS] = { "FLAGS", 18, 0, OUT_HEX, "the page flags word (kpageflags, cooked unless --raw-flags)" },
	[S_PAGES] = { "PAGES", 8, SCOLS_FL_RIGHT, OUT_NUM, "frames with these flags" },
	[S_SIZE] = { "SIZE", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of those frames" },
	[S_SYMBOLIC] = { "SYMBOLIC", 27, 0, OUT_STR, "one letter per flag, '_' clear (see --help)" },
	[S_NAMES] = { "NAMES", 0.3, SCOLS_FL_WRAP, OUT_STR, "the flags by name" },
};

/* -l: runs of frames. */
enum { L_PFN, L_PAGES, L_FLAGS, L_SYMBOLIC, L_NAMES };
static const struct out_col list_cols[] = {
	[L_PFN] = { "PFN", 10, SCOLS_FL_RIGHT, OUT_HEX, "first frame of the run" },
	[L_PAGES] = { "PAGES", 8, SCOLS_FL_RIGHT, OUT_NUM, "frames in the run" },
	[L_FLAGS] = { "FLAGS", 18, 0, OUT_HEX, "the page flags word" },
	[L_SYMBOLIC] = { "SYMBOLIC", 27, 0, OUT_STR, "one letter per flag, '_' clear" },
	[L_NAMES] = { "NAMES", 0.3, SCOLS_FL_WRAP, OUT_STR, "the flags by name" },
};

/* -p PID: a process's pages joined with their frames. */
const struct out_col phys_proc_cols[P_NCOLS] = {
	[P_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the run" },
	[P_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after the run" },
	[P_PAGES] = { "PAGES", 5, SCOLS_FL_RIGHT, OUT_NUM, "pages in the run" },
	[P_PFN] = { "PFN", 10, SCOLS_FL_RIGHT, OUT_HEX, "frame of the first page" },
	[P_FLAGS] = { "FLAGS", 27, 0, OUT_STR, "the frames' flags, one letter each, '_' clear" },
	[P_KPF] = { "KPF", 18, 0, OUT_HEX, "the frames' flags word" },
	[P_NAMES] = { "NAMES", 0.3, SCOLS_FL_WRAP, OUT_STR, "the frames' flags by name" },
	[P_COUNT] = { "COUNT", 5, SCOLS_FL_RIGHT, OUT_NUM, "mappings of each frame (kpagecount)" },
	[P_CGROUP] = { "CGROUP", 6, SCOLS_FL_RIGHT, OUT_NUM, "inode of the memory cgroup charged (kpagecgroup)" },
	[P_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
	             "the mapping's file or [name]; empty: anonymous" },
};

/* ---- whole physical memory ---- */

struct frun {
	uint64_t pfn, pages, flags;
};

/* One row of -l, printed with its batch as the scan goes (out_stream): memory stays flat. */
static int list_row(struct out *out, const struct frun *run, bool raw)
{
	struct libscols_line *ln;
	char buf[32];

	if (!run->pages)
		return 0;
	ln = out_line(out);
	out_u64(out, ln, L_PFN, run->pfn);
	out_u64(out, ln, L_PAGES, run->pages);
	phys_hex16(buf, sizeof(buf), run->flags);
	out_str(out, ln, L_FLAGS, buf);
	phys_name_cells(out, ln, L_SYMBOLIC, L_NAMES, run->flags, raw);
	return out_stream(out);
}

/* Account one batch of kpageflags words starting at @pfn. */
/* Returns 0, -errno, or 1 when the list could not be written (not a read error of the frame files). */
static int scan_batch(const uint64_t *w, size_t n, uint64_t pfn, const struct phys_opts *po, struct hist *h,
		      struct out *list, struct frun *run)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t f = pm_kpf_cook(w[i], po->raw);

		if (!pm_kpf_match(&po->filter, f))
			continue;
		if (!list) {
			if (phys_hist_add(h, f, 1) < 0)
				return -ENOMEM;
		} else if (run->pages && run->flags == f && run->pfn + run->pages == pfn + i) {
			run->pages++;
		} else {
			if (list_row(list, run, po->raw) < 0)
				return 1;
			*run = (struct frun){ pfn + i, 1, f };
		}
	}
	return 0;
}

/* Account @n frames from @pfn whose words are all 0 (a replayed snapshot holds none of them) at once. */
static int scan_zeros(uint64_t n, uint64_t pfn, const struct phys_opts *po, struct hist *h, struct out *list,
		      struct frun *run)
{
	uint64_t f = pm_kpf_cook(0, po->raw);

	if (!n || !pm_kpf_match(&po->filter, f))
		return 0;
	if (!list)
		return phys_hist_add(h, f, n) < 0 ? -ENOMEM : 0;
	if (run->pages && run->flags == f && run->pfn + run->pages == pfn) {
		run->pages += n;
		return 0;
	}
	if (list_row(list, run, po->raw) < 0)
		return 1;
	*run = (struct frun){ pfn, n, f };
	return 0;
}

static void kpage_error(struct pm_ctx *ctx, int err, const char *file)
{
	const char *root = pm_ctx_root(ctx);

	cli_error(0, "cannot read %s/proc/%s: %s%s", strcmp(root, "/") ? root : "", file, strerror(err),
		  err == EACCES || err == EPERM ? " (it is readable only by root)" : "");
}

/* Read every frame's flags in batches; fill the histogram or the list. */
static int scan_all(struct pm_ctx *ctx, struct pm_kpage *k, const struct phys_opts *po, struct hist *h,
		    struct out *list)
{
	uint64_t *w = malloc(PHYS_BATCH * sizeof(*w)), end, pfn;
	struct frun run = { 0 };
	int r = w ? pm_kpage_end(k, &end) : -ENOMEM;

	/*
	 * A keyed snapshot's frames start at its lift: the words below are no
	 * frames. Frames a replayed snapshot holds no words of read 0: they are
	 * accounted at once, so a walk costs what the files hold, not what
	 * they claim (up to 2^40 frames).
	 */
	for (pfn = pm_kpage_start(k); r == 0 && pfn < end;) {
		uint64_t n = end - pfn < PHYS_BATCH ? end - pfn : PHYS_BATCH, data;	/* a hole: up to 2^40 frames */

		if ((r = pm_kpage_next_data(k, pfn, &data)) < 0)
			break;
		if (data > pfn) {
			n = data < end ? data - pfn : end - pfn;
			r = scan_zeros(n, pfn, po, h, list, &run);
			pfn += n;
			continue;
		}
		r = pm_kpage_read(k, pfn, (size_t)n, w, NULL, NULL);
		if (r == 0)
			r = scan_batch(w, (size_t)n, pfn, po, h, list, &run);
		pfn += n;
	}
	if (r == 0 && list && list_row(list, &run, po->raw) < 0)
		r = 1;
	free(w);
	if (r > 0)
		cli_error(EIO, "cannot write the list");
	else if (r < 0)
		kpage_error(ctx, -r, "kpageflags");
	return r ? EXIT_RUNTIME : EXIT_OK;
}

struct pm_kpage *phys_open_kpage(struct pm_ctx *ctx)
{
	struct pm_kpage *k = pm_kpage_open(ctx);
	int e = k ? pm_kpage_status(k, PM_KPAGE_FLAGS) : -errno;

	if (e < 0) {
		kpage_error(ctx, -e, "kpageflags");
		pm_kpage_close(k);
		return NULL;
	}
	return k;
}

static int phys_all(struct pm_ctx *ctx, struct phys_opts *po)
{
	struct pm_kpage *k = phys_open_kpage(ctx);
	struct hist h = { 0 };
	struct out *list = NULL;
	int code;

	if (!k)
		return EXIT_RUNTIME;
	if (po->list) {
		list = out_new("frames", list_cols, NELEM(list_cols), "PFN,PAGES,FLAGS,SYMBOLIC", &po->o);
		if (!list) {
			pm_kpage_close(k);
			return EXIT_USAGE;
		}
	}
	code = scan_all(ctx, k, po, &h, list);
	if (code == EXIT_OK)
		code = list ? (out_print(list) < 0 ? EXIT_RUNTIME : EXIT_OK) :
		       phys_print_hist(&h, po, "phys");
	out_free(list);
	free(h.slot);
	pm_kpage_close(k);
	return code;
}

static int describe(struct phys_opts *po)
{
	struct pm_kpf_filter f = { 0 };
	struct hslot s = { 0, 1 };
	struct out *out;
	int r;

	/* As page-types -d: a number or names, a list of them ORed. */
	if (strpbrk(po->describe, "=~") || pm_kpf_parse(&f, po->describe) < 0)
		return cli_usage_error("invalid flags '%s' (a number such as 0x5868, or names such as anonymous,lru)",
				       po->describe);
	s.flags = f.term[0].mask;
	out = out_new("describe", phys_sum_cols, NELEM(phys_sum_cols), "FLAGS,SYMBOLIC,NAMES",
		      &po->o);
	if (!out)
		return EXIT_USAGE;
	po->raw = po->raw || (s.flags & PM_KPF_INTERNAL_MASK);	/* show what was asked */
	phys_sum_row(out, &s, po);
	r = out_print(out);
	out_free(out);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* ---- options ---- */

static int usage_help(void)
{
	const struct pm_kpf_info *tab;
	size_t n, i;

	printf("Usage: pagemap phys [options]\n"
	       "       pagemap phys [options] -p PID [RANGE]\n"
	       "       pagemap phys --describe FLAGS\n\n"
	       "Physical memory by page flags, as page-types: one row per flag combination\n"
	       "of /proc/kpageflags (root only). With -p, the present pages of process PID\n"
	       "(\"self\") joined with their frames' flags, map count and memory cgroup;\n"
	       "RANGE is 0xSTART-0xEND or one address.\n\n"
	       "Options:\n"
	       " -b, --bits EXPR        only frames whose flags match, as page-types -b: a,b\n"
	       "                        (any), a,~b, =a,b (exact), a,b=a (under a mask); names,\n"
	       "                        prefixes (the first name in bit order: u is uptodate, a\n"
	       "                        active), numbers (0x1000); repeat to narrow. A letter\n"
	       "                        below that is no prefix of a name (L, x, ...) means its\n"
	       "                        flag\n"
	       " -l, --list             runs of frames with equal flags instead of the summary\n"
	       " -p, --pid PID          a process's pages and their frames\n"
	       " -s, --summary          with -p: the summary by flags over the process's pages\n"
	       "     --raw-flags        page-types' raw mode: kernel-internal and pseudo bits\n"
	       "                        too\n"
	       "     --describe FLAGS   the flags of a value (0x5868) or a list of names,\n"
	       "                        without reading the kernel\n"
	       "\nFlags (raw-only ones marked *):\n");
	tab = pm_kpf_table(&n);
	for (i = 0; i < n; i++)
		printf("  %c %2u %-15s%s %s\n", tab[i].letter, tab[i].bit, tab[i].name, tab[i].internal ? "*" : " ",
		       tab[i].meaning);
	out_help_with(stdout, phys_sum_cols, NELEM(phys_sum_cols),
		      OUT_HELP_LONG_BYTES | OUT_HELP_TOTAL);
	out_help_defaults(stdout, PHYS_SUM_DEFAULTS, PHYS_SUM_TERM_DEFAULTS);
	printf("\nColumns with -l:\n");
	out_help_columns(stdout, list_cols, NELEM(list_cols));
	out_help_defaults(stdout, "PFN,PAGES,FLAGS,SYMBOLIC", NULL);
	printf("\nColumns with -p:\n");
	out_help_columns(stdout, phys_proc_cols, NELEM(phys_proc_cols));
	out_help_defaults(stdout, PHYS_PROC_DEFAULTS, PHYS_PROC_TERM_DEFAULTS);
	return EXIT_OK;
}

#define OPT_RAWFLAGS 0x2000
#define OPT_DESCRIBE 0x2001
#define OPT_BYTES 0x2002

/* Returns -1 to go on, or an exit code. */
static int parse_opt(struct phys_opts *po, int c, char **argv)
{
	int r;

	switch (c) {
	case 'b':
		r = pm_kpf_parse(&po->filter, optarg);
		if (r == -E2BIG)
			return cli_usage_error("too many -b filters (at most %d)", PM_KPF_MAX_TERMS);
		return r < 0 ? cli_usage_error("invalid flags expression '%s' (see --help)", optarg) : -1;
	case 'l':
		po->list = true;
		return -1;
	case 's':
		po->summary = true;
		return -1;
	case 'p':
		po->pid = optarg;
		return -1;
	case OPT_RAWFLAGS:
		po->raw = true;
		return -1;
	case OPT_DESCRIBE:
		po->describe = optarg;
		return -1;
	case OPT_BYTES:
		po->o.bytes = true;
		return -1;
	case 'h':
		return usage_help();
	default:
		return out_parse_opt(&po->o, c, optarg) ? -1 : cli_bad_option(argv);
	}
}

int cmd_phys(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' }, { "raw", no_argument, NULL, 'r' },
		{ "noheadings", no_argument, NULL, 'n' }, { "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, OUT_OPT_ALL }, { "bytes", no_argument, NULL, OPT_BYTES },
		OUT_TOTAL_LONGOPT,
		{ "bits", required_argument, NULL, 'b' }, { "list", no_argument, NULL, 'l' },
		{ "pid", required_argument, NULL, 'p' }, { "summary", no_argument, NULL, 's' },
		{ "raw-flags", no_argument, NULL, OPT_RAWFLAGS }, { "describe", required_argument, NULL, OPT_DESCRIBE },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct phys_opts po = { 0 };
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "Jrno:b:lp:sh", longopts, NULL)) != -1)
		if ((r = parse_opt(&po, c, argv)) >= 0)
			return r;
	if (po.describe)
		return optind < argc ? cli_usage_error("too many arguments") : describe(&po);
	if (argc - optind > 1 || (!po.pid && optind < argc))
		return po.pid ? cli_usage_error("too many arguments") :
				cli_usage_error("unexpected argument '%s' (a RANGE needs -p PID)", argv[optind]);
	if (po.summary && (!po.pid || po.list))
		return cli_usage_error("--summary goes with -p PID, without --list");
	if (po.list && po.pid)
		return cli_usage_error("--list lists physical frames; with -p the rows already are runs");
	po.range = optind < argc ? argv[optind] : NULL;
	po.page_size = pm_ctx_features(ctx)->page_size;
	return po.pid ? phys_proc(ctx, &po) : phys_all(ctx, &po);
}
