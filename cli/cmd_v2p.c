/* cmd_v2p.c - `pagemap v2p PID ADDR...`: virtual to physical addresses, with the frames' flags and map counts. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_ADDR, COL_STATE, COL_PFN, COL_PHYS, COL_FLAGS, COL_SYMBOLIC, COL_COUNT, COL_CGROUP, COL_PATH };

static const struct out_col columns[] = {
	[COL_ADDR] = { "ADDR", 14, SCOLS_FL_RIGHT, OUT_HEX, "the virtual address asked for" },
	[COL_STATE] = { "STATE", 11, 0, OUT_STR, "present, swapped, not present, or not mapped" },
	[COL_PFN] = { "PFN", 10, SCOLS_FL_RIGHT, OUT_HEX, "the page's frame" },
	[COL_PHYS] = { "PHYS", 14, SCOLS_FL_RIGHT, OUT_HEX, "the physical address: PFN * page size + offset" },
	[COL_FLAGS] = { "FLAGS", 0.3, SCOLS_FL_WRAP, OUT_STR, "the frame's flags by name (kpageflags)" },
	[COL_SYMBOLIC] = { "SYMBOLIC", 27, 0, OUT_STR, "the frame's flags, one letter each, '_' clear" },
	[COL_COUNT] = { "COUNT", 5, SCOLS_FL_RIGHT, OUT_NUM, "mappings of the frame (kpagecount)" },
	[COL_CGROUP] = { "CGROUP", 6, SCOLS_FL_RIGHT, OUT_NUM, "inode of the memory cgroup charged (kpagecgroup)" },
	[COL_PATH] = { "PATH", 0.2, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
	               "the mapping's file or [name]; empty: anonymous" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* A terminal: the frame and its map count, then its flags wrapped, without PHYS (PFN tells it): 80 columns. */
#define V2P_DEFAULTS "ADDR,STATE,PFN,PHYS,FLAGS,COUNT"
#define V2P_TERM_DEFAULTS "ADDR,STATE,PFN,COUNT,FLAGS"

/* One address and what its pagemap entry says. */
struct v2p {
	uint64_t addr;
	const char *state;
	bool present;
	uint32_t pmflags;	/* PM_PAGE_* of its page */
	const char *path;	/* borrowed from the mapping table */
};

/* The target's mappings, read once, in address order. */
struct vmap {
	uint64_t start, end;
	char *path;
};

struct v2p_ctx {
	struct pm_ctx *ctx;
	struct pm_target *t;
	const char *arg;
	uint64_t page_size;
	unsigned page_shift;
	bool raw;
	struct vmap *maps;
	size_t nmaps;
};

static void free_maps(struct v2p_ctx *vc)
{
	size_t i;

	for (i = 0; i < vc->nmaps; i++)
		free(vc->maps[i].path);
	free(vc->maps);
	vc->maps = NULL;
	vc->nmaps = 0;
}

/* Read the maps once: O(mappings). Returns 0 or -errno. */
static int load_maps(struct v2p_ctx *vc)
{
	struct pm_maps *it = pm_maps_open(vc->t);
	const struct pm_mapping *m;
	size_t cap = 0;
	int r;

	if (!it)
		return -errno;
	while ((r = pm_maps_next(it, &m)) == 0) {
		if (vc->nmaps == cap) {
			struct vmap *more = realloc(vc->maps, (cap ? 2 * cap : 64) * sizeof(*more));

			if (!more) {
				r = -ENOMEM;
				break;
			}
			vc->maps = more;
			cap = cap ? 2 * cap : 64;
		}
		vc->maps[vc->nmaps] = (struct vmap){ m->start, m->end, strndup(m->path, m->path_len) };
		if (!vc->maps[vc->nmaps].path) {
			r = -ENOMEM;
			break;
		}
		vc->nmaps++;
	}
	pm_maps_close(it);
	return r < 0 ? r : 0;
}

struct by_addr {
	uint64_t addr;
	size_t i;
};

static int by_addr_cmp(const void *x, const void *y)
{
	const struct by_addr *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Decode the entry @raw (@n entries read: 0 past task_size) of @a's page; *fr gets its PFN if present. */
static void decode(const struct pm_decode_info *info, uint64_t raw, ssize_t n, struct v2p *a, struct pm_frame *fr)
{
	struct pm_entry e = { 0 };

	if (n == 1)
		pm_entry_decode(raw, info, &e);
	a->pmflags = e.flags;
	a->present = (e.flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME)) == (PM_PAGE_PRESENT | PM_PAGE_FRAME);
	a->state = a->present ? "present" : (e.flags & PM_PAGE_SWAPPED) ? "swapped" : "not present";
	fr->pfn = e.pfn;
}

/*
 * Translate every address: sort them, merge with the sorted mappings, read
 * one entry per distinct page. O(a log a + m) instead of a walk (which
 * reads the maps) per address. *@at[i] gets the index in @fr of a[i]'s
 * frame; *@nfr the number of frames. Returns 0 or -errno.
 */
static int translate(struct v2p_ctx *vc, struct v2p *a, size_t n, struct pm_frame *fr, size_t *at, size_t *nfr)
{
	struct by_addr *ord = malloc(n * sizeof(*ord));
	struct pm_decode_info info;
	uint64_t raw = 0, vpn = 0;
	size_t i, j = 0, m = 0;
	ssize_t got = -1;

	if (!ord)
		return -ENOMEM;
	pm_target_decode_info(vc->t, &info);
	for (i = 0; i < n; i++)
		ord[i] = (struct by_addr){ a[i].addr, i };
	qsort(ord, n, sizeof(*ord), by_addr_cmp);
	for (i = 0; i < n; i++) {
		struct v2p *p = &a[ord[i].i];

		while (j < vc->nmaps && vc->maps[j].end <= p->addr)
			j++;
		if (j == vc->nmaps || vc->maps[j].start > p->addr) {
			p->state = "not mapped";
			continue;
		}
		p->path = vc->maps[j].path;
		if (got < 0 || p->addr >> vc->page_shift != vpn) {
			vpn = p->addr >> vc->page_shift;
			got = pm_target_read(vc->t, vpn, &raw, 1);
			if (got < 0) {
				free(ord);
				return (int)got;
			}
		}
		decode(&info, raw, got, p, &fr[m]);
		if (p->present)
			at[ord[i].i] = m++;
	}
	free(ord);
	*nfr = m;
	return 0;
}

static void row(struct out *out, const struct v2p_ctx *vc, const struct v2p *a, const struct pm_frame *fr,
		bool have_count, bool have_cgroup)
{
	struct libscols_line *ln = out_line(out);
	uint64_t flags;
	char buf[1024];

	out_u64(out, ln, COL_ADDR, a->addr);
	out_str(out, ln, COL_STATE, a->state);
	out_str(out, ln, COL_PATH, a->path);
	/* page-types -r: a swapped page has the entry's bits (swap, file, exclusive, soft-dirty) and no frame. */
	if (!a->present && !(vc->raw && a->path && a->pmflags))
		return;
	flags = a->present ? pm_kpf_cook(fr->flags, vc->raw) : 0;
	if (vc->raw)
		flags |= cli_kpf_entry_bits(a->pmflags);
	pm_kpf_describe(flags, buf, sizeof(buf));
	out_str(out, ln, COL_FLAGS, buf);
	out_str(out, ln, COL_SYMBOLIC, pm_kpf_letters(flags, vc->raw, buf, sizeof(buf)));
	if (!a->present)
		return;
	out_u64(out, ln, COL_PFN, fr->pfn);
	out_u64(out, ln, COL_PHYS, fr->pfn * vc->page_size + (a->addr & (vc->page_size - 1)));
	if (have_count)
		out_u64(out, ln, COL_COUNT, fr->count);
	if (have_cgroup)
		out_u64(out, ln, COL_CGROUP, fr->cgroup);
}

/* Frames must be visible and kpageflags readable; one line on why not. */
static struct pm_kpage *check_access(struct v2p_ctx *vc)
{
	const char *root = pm_ctx_root(vc->ctx);
	bool replay = strcmp(root, "/") != 0;
	struct pm_kpage *k;
	int e;

	if (pm_target_pfn_view(vc->t) != PM_PFN_VISIBLE) {
		cli_error(0, "cannot translate addresses of process %s: physical frame numbers are hidden %s", vc->arg,
			  replay ? "in the capture (reading them needs CAP_SYS_ADMIN)" : "(reading them needs CAP_SYS_ADMIN)");
		return NULL;
	}
	k = pm_kpage_open(vc->ctx);
	e = k ? pm_kpage_status(k, PM_KPAGE_FLAGS) : -errno;
	if (e < 0) {
		cli_error(0, "cannot read %s/proc/kpageflags: %s%s", replay ? root : "", strerror(-e),
			  e == -EACCES || e == -EPERM ? " (it is readable only by root)" : "");
		pm_kpage_close(k);
		return NULL;
	}
	return k;
}

/* Translate every address, look the frames up in one pass, print. */
static int run(struct v2p_ctx *vc, struct pm_kpage *k, struct out *out, struct v2p *a, struct pm_frame *fr, size_t n)
{
	size_t i, m = 0, *at = calloc(n, sizeof(*at));
	int r = at ? load_maps(vc) : -ENOMEM;

	if (r == 0)
		r = translate(vc, a, n, fr, at, &m);
	if (r < 0) {
		cli_walk_error(vc->ctx, -r, vc->arg);
		free(at);
		return EXIT_RUNTIME;
	}
	r = pm_kpage_lookup(k, fr, m);
	for (i = 0; r == 0 && i < n; i++)
		row(out, vc, &a[i], &fr[at[i]], pm_kpage_status(k, PM_KPAGE_COUNT) == 0,
		    pm_kpage_status(k, PM_KPAGE_CGROUP) == 0);
	free(at);
	if (r < 0) {
		cli_error(-r, "cannot read the frames of process %s", vc->arg);
		return EXIT_RUNTIME;
	}
	return out_print(out) < 0 ? EXIT_RUNTIME : EXIT_OK;
}

static int usage_help(void)
{
	printf("Usage: pagemap v2p [options] PID ADDR...\n\n"
	       "Translate virtual addresses of process PID (or \"self\") to physical ones,\n"
	       "with the frame's flags (kpageflags), map count (kpagecount) and memory\n"
	       "cgroup (kpagecgroup). Needs CAP_SYS_ADMIN (to see frame numbers) and root\n"
	       "(to read kpageflags).\n\n"
	       "Options:\n"
	       "     --raw-flags        kernel-internal and pseudo flags too\n");
	out_help(stdout, columns, NCOLS);
	out_help_defaults(stdout, V2P_DEFAULTS, V2P_TERM_DEFAULTS);
	return EXIT_OK;
}

static int parse_addrs(char **args, size_t n, struct v2p *a)
{
	size_t i;
	char *e;

	for (i = 0; i < n; i++) {
		errno = 0;
		a[i].addr = strtoull(args[i], &e, 0);
		if (errno || e == args[i] || *e || args[i][0] < '0' || args[i][0] > '9')
			return cli_usage_error("invalid address '%s'", args[i]);
	}
	return 0;
}

static int v2p_target(struct v2p_ctx *vc, struct out *out, struct v2p *a, size_t n)
{
	struct pm_frame *fr = calloc(n, sizeof(*fr));
	struct pm_kpage *k;
	int code = EXIT_RUNTIME;

	if (!fr) {
		cli_error(ENOMEM, "cannot translate addresses");
		return EXIT_RUNTIME;
	}
	k = check_access(vc);
	if (k)
		code = run(vc, k, out, a, fr, n);
	pm_kpage_close(k);
	free(fr);
	return code;
}

#define OPT_RAWFLAGS 0x2000

int cmd_v2p(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "raw-flags", no_argument, NULL, OPT_RAWFLAGS },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct v2p_ctx vc = { .ctx = ctx };
	struct out_opts o = { 0 };
	struct v2p *a;
	struct out *out;
	size_t n;
	pid_t pid;
	int c, code;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == OPT_RAWFLAGS)
			vc.raw = true;
		else if (c == 'h')
			return usage_help();
		else
			return cli_bad_option(argv);
	}
	if (argc - optind < 2)
		return cli_usage_error(optind == argc ? "no PID given" : "no address given");
	if (cli_parse_pid(argv[optind], &pid) < 0)
		return cli_usage_error("invalid PID '%s'", argv[optind]);
	n = (size_t)(argc - optind - 1);
	a = calloc(n, sizeof(*a));
	if (!a) {
		cli_error(ENOMEM, "cannot translate addresses");
		return EXIT_RUNTIME;
	}
	code = parse_addrs(argv + optind + 1, n, a);
	out = code ? NULL : out_new_fit("v2p", columns, NCOLS, V2P_DEFAULTS, V2P_TERM_DEFAULTS, &o);
	if (!code && !out)
		code = EXIT_USAGE;
	vc.arg = argv[optind];
	vc.page_size = pm_ctx_features(ctx)->page_size;
	vc.page_shift = pm_ctx_features(ctx)->page_shift;
	if (!code && (vc.t = cli_open_target(ctx, pid, vc.arg)))
		code = v2p_target(&vc, out, a, n);
	else if (!code)
		code = EXIT_RUNTIME;
	free_maps(&vc);
	free(a);
	out_free(out);
	pm_target_close(vc.t);
	return code;
}
