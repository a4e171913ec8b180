/* cmd_phys.c - `pagemap phys`: physical memory by page flags (page-types), frame runs, and a process's pages joined with their frames. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

#define PHYS_BATCH 65536	/* frames per kpageflags read, pages per process lookup */

/* Summary and --describe: one row per flag combination. */
enum { S_FLAGS, S_PAGES, S_SIZE, S_SYMBOLIC, S_NAMES };
static const struct out_col sum_cols[] = {
	[S_FLAGS] = { "FLAGS", 18, 0, OUT_HEX, "the page flags word (kpageflags, cooked unless --raw-flags)" },
	[S_PAGES] = { "PAGES", 8, SCOLS_FL_RIGHT, OUT_NUM, "frames with these flags" },
	[S_SIZE] = { "SIZE", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of those frames" },
	[S_SYMBOLIC] = { "SYMBOLIC", 27, 0, OUT_STR, "one letter per flag, '_' clear (see --help)" },
	[S_NAMES] = { "NAMES", 0.3, 0, OUT_STR, "the flags by name" },
};

/* -l: runs of frames. */
enum { L_PFN, L_PAGES, L_FLAGS, L_SYMBOLIC, L_NAMES };
static const struct out_col list_cols[] = {
	[L_PFN] = { "PFN", 10, SCOLS_FL_RIGHT, OUT_HEX, "first frame of the run" },
	[L_PAGES] = { "PAGES", 8, SCOLS_FL_RIGHT, OUT_NUM, "frames in the run" },
	[L_FLAGS] = { "FLAGS", 18, 0, OUT_HEX, "the page flags word" },
	[L_SYMBOLIC] = { "SYMBOLIC", 27, 0, OUT_STR, "one letter per flag, '_' clear" },
	[L_NAMES] = { "NAMES", 0.3, 0, OUT_STR, "the flags by name" },
};

/* -p PID: a process's pages joined with their frames. */
enum { P_START, P_END, P_PAGES, P_PFN, P_FLAGS, P_KPF, P_NAMES, P_COUNT, P_CGROUP, P_PATH };
static const struct out_col proc_cols[] = {
	[P_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the run" },
	[P_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after the run" },
	[P_PAGES] = { "PAGES", 5, SCOLS_FL_RIGHT, OUT_NUM, "pages in the run" },
	[P_PFN] = { "PFN", 10, SCOLS_FL_RIGHT, OUT_HEX, "frame of the first page" },
	[P_FLAGS] = { "FLAGS", 27, 0, OUT_STR, "the frames' flags, one letter each, '_' clear" },
	[P_KPF] = { "KPF", 18, 0, OUT_HEX, "the frames' flags word" },
	[P_NAMES] = { "NAMES", 0.3, 0, OUT_STR, "the frames' flags by name" },
	[P_COUNT] = { "COUNT", 5, SCOLS_FL_RIGHT, OUT_NUM, "mappings of each frame (kpagecount)" },
	[P_CGROUP] = { "CGROUP", 6, SCOLS_FL_RIGHT, OUT_NUM, "inode of the memory cgroup charged (kpagecgroup)" },
	[P_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "the mapping's file or [name]" },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct phys_opts {
	struct pm_kpf_filter filter;
	struct out_opts o;
	bool raw, list, summary;
	const char *pid, *range, *describe;
	uint64_t page_size;
};

/* ---- a histogram of flag words: open addressing, grows without limit ---- */

struct hslot {
	uint64_t flags, pages;	/* pages == 0: empty */
};

struct hist {
	struct hslot *slot;
	size_t cap, used;
};

static size_t hist_pos(const struct hist *h, uint64_t flags)
{
	size_t i = (size_t)((flags * 0x9e3779b97f4a7c15ULL) >> 20) & (h->cap - 1);

	while (h->slot[i].pages && h->slot[i].flags != flags)
		i = (i + 1) & (h->cap - 1);
	return i;
}

static int hist_grow(struct hist *h)
{
	struct hist n = { calloc(h->cap ? 2 * h->cap : 256, sizeof(struct hslot)), h->cap ? 2 * h->cap : 256, 0 };
	size_t i;

	if (!n.slot)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->slot[i].pages)
			n.slot[hist_pos(&n, h->slot[i].flags)] = h->slot[i];
	n.used = h->used;
	free(h->slot);
	*h = n;
	return 0;
}

static int hist_add(struct hist *h, uint64_t flags, uint64_t pages)
{
	size_t i;

	if (2 * (h->used + 1) > h->cap && hist_grow(h) < 0)
		return -ENOMEM;
	i = hist_pos(h, flags);
	if (!h->slot[i].pages) {
		h->slot[i].flags = flags;
		h->used++;
	}
	h->slot[i].pages += pages;
	return 0;
}

static int hslot_cmp(const void *a, const void *b)
{
	const struct hslot *x = a, *y = b;

	return x->flags < y->flags ? -1 : x->flags > y->flags;
}

/* ---- cells shared by the tables ---- */

static void hex16(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "0x%016" PRIx64, v);
}

static void name_cells(struct out *out, struct libscols_line *ln, size_t sym, size_t names, uint64_t flags,
		       bool raw)
{
	char buf[1024];

	/* Only the columns shown: naming the flags was a third of phys -l's time (run-rows.sh). */
	if (out_has(out, sym)) {
		pm_kpf_letters(flags, raw, buf, sizeof(buf));
		out_str(out, ln, sym, buf);
	}
	if (out_has(out, names)) {
		pm_kpf_describe(flags, buf, sizeof(buf));
		out_str(out, ln, names, buf);
	}
}

static void sum_row(struct out *out, const struct hslot *s, const struct phys_opts *po)
{
	struct libscols_line *ln = out_line(out);
	char buf[32];

	hex16(buf, sizeof(buf), s->flags);
	out_str(out, ln, S_FLAGS, buf);
	out_u64(out, ln, S_PAGES, s->pages);
	out_u64(out, ln, S_SIZE, s->pages * po->page_size);
	name_cells(out, ln, S_SYMBOLIC, S_NAMES, s->flags, po->raw);
}

/* The rows of @h in flag order, then a total in the table view. */
static int print_hist(struct hist *h, const struct phys_opts *po, const char *name)
{
	struct out *out = out_new(name, sum_cols, NELEM(sum_cols), "FLAGS,PAGES,SIZE,SYMBOLIC,NAMES", &po->o);
	struct libscols_line *ln;
	uint64_t total = 0;
	size_t i, k = 0;
	int r;

	if (!out)
		return EXIT_USAGE;
	for (i = 0; i < h->cap; i++)
		if (h->slot[i].pages)
			h->slot[k++] = h->slot[i];
	if (k)
		qsort(h->slot, k, sizeof(*h->slot), hslot_cmp);
	for (i = 0; i < k; i++) {
		sum_row(out, &h->slot[i], po);
		total += h->slot[i].pages;
	}
	if ((ln = out_total_line(out))) {
		out_str(out, ln, S_FLAGS, "total");
		out_u64(out, ln, S_PAGES, total);
		out_u64(out, ln, S_SIZE, total * po->page_size);
	}
	r = out_print(out);
	out_free(out);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

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
	hex16(buf, sizeof(buf), run->flags);
	out_str(out, ln, L_FLAGS, buf);
	name_cells(out, ln, L_SYMBOLIC, L_NAMES, run->flags, raw);
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
			if (hist_add(h, f, 1) < 0)
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
		return hist_add(h, f, n) < 0 ? -ENOMEM : 0;
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

static struct pm_kpage *open_kpage(struct pm_ctx *ctx)
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
	struct pm_kpage *k = open_kpage(ctx);
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
		code = list ? (out_print(list) < 0 ? EXIT_RUNTIME : EXIT_OK) : print_hist(&h, po, "phys");
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
	out = out_new("describe", sum_cols, NELEM(sum_cols), "FLAGS,SYMBOLIC,NAMES", &po->o);
	if (!out)
		return EXIT_USAGE;
	po->raw = po->raw || (s.flags & PM_KPF_INTERNAL_MASK);	/* show what was asked */
	sum_row(out, &s, po);
	r = out_print(out);
	out_free(out);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* ---- a process's pages with their frames ---- */

struct ppage {
	uint64_t va;
	uint32_t pmflags;	/* PM_PAGE_* of the page */
	uint32_t path;		/* index into proc_batch.paths */
};

struct prow {
	uint64_t start, end, pfn, last_pfn, flags, count, cgroup;
	uint32_t path;
	int step;		/* PFN step between pages: 1, 0 (zero page), -1 not yet known */
};

struct proc_batch {
	struct pm_frame *fr;
	struct ppage *pg;
	size_t n;
	char **paths;
	size_t npaths, cap_paths;
	uint64_t map_start;	/* mapping of paths[npaths - 1] */
	struct pm_kpage *k;
	struct out *out;
	struct hist hist;
	struct prow row;
	bool have_count, have_cgroup;
};

/* Page-types' raw mode folds the pagemap entry's bits into the frame's word. */
static uint64_t page_flags(const struct phys_opts *po, const struct pm_frame *fr, uint32_t pm)
{
	uint64_t f = pm_kpf_cook(fr->flags, po->raw);

	return po->raw ? f | cli_kpf_entry_bits(pm) : f;
}

/* One row of the -p list, printed with its batch as the walk goes (out_stream); 0 or -EIO. */
static int proc_row(struct proc_batch *b, const struct phys_opts *po)
{
	const struct prow *r = &b->row;
	struct libscols_line *ln;
	char buf[32];

	if (r->end == r->start)
		return 0;
	ln = out_line(b->out);
	out_u64(b->out, ln, P_START, r->start);
	out_u64(b->out, ln, P_END, r->end);
	out_u64(b->out, ln, P_PAGES, (r->end - r->start) / po->page_size);
	out_u64(b->out, ln, P_PFN, r->pfn);
	hex16(buf, sizeof(buf), r->flags);
	out_str(b->out, ln, P_KPF, buf);
	name_cells(b->out, ln, P_FLAGS, P_NAMES, r->flags, po->raw);
	if (b->have_count)
		out_u64(b->out, ln, P_COUNT, r->count);
	else
		out_unknown(b->out, ln, P_COUNT);
	if (b->have_cgroup)
		out_u64(b->out, ln, P_CGROUP, r->cgroup);
	else
		out_unknown(b->out, ln, P_CGROUP);
	out_str(b->out, ln, P_PATH, b->paths[r->path]);
	return out_stream(b->out);
}

/* Does page @i continue the pending row? */
static bool extends(const struct prow *r, const struct ppage *p, const struct pm_frame *fr, uint64_t flags)
{
	int64_t d = (int64_t)(fr->pfn - r->last_pfn);

	return r->end != r->start && p->va == r->end && p->path == r->path && flags == r->flags &&
	       fr->count == r->count && fr->cgroup == r->cgroup && (d == 1 || d == 0) && (r->step < 0 || d == r->step);
}

static int emit_page(struct proc_batch *b, const struct phys_opts *po, size_t i, uint64_t flags)
{
	const struct ppage *p = &b->pg[i];
	const struct pm_frame *fr = &b->fr[i];
	struct prow *r = &b->row;

	if (extends(r, p, fr, flags)) {
		if (r->step < 0)
			r->step = (int)(fr->pfn - r->last_pfn);
		r->end += po->page_size;
		r->last_pfn = fr->pfn;
		return 0;
	}
	if (proc_row(b, po) < 0)
		return -EIO;
	*r = (struct prow){ p->va, p->va + po->page_size, fr->pfn, fr->pfn, flags, fr->count, fr->cgroup, p->path, -1 };
	return 0;
}

static void free_paths(struct proc_batch *b)
{
	size_t i;

	for (i = 0; i < b->npaths; i++)
		free(b->paths[i]);
	b->npaths = 0;
}

/* Free the batch's paths but the current mapping's, which the pending row and the next batch may use. */
static int keep_last_path(struct proc_batch *b, const struct phys_opts *po)
{
	size_t i, last = b->npaths - 1;

	if (!b->npaths)
		return 0;
	if (b->row.end != b->row.start && b->row.path != last) {
		if (proc_row(b, po) < 0)
			return -EIO;
		b->row.end = b->row.start;
	}
	for (i = 0; i < last; i++)
		free(b->paths[i]);
	b->paths[0] = b->paths[last];
	b->npaths = 1;
	b->row.path = 0;
	return 0;
}

/* Look up the batch's frames in one sorted pass, then account or print its pages. */
static int flush(struct proc_batch *b, const struct phys_opts *po)
{
	size_t i;
	int r = pm_kpage_lookup(b->k, b->fr, b->n);

	for (i = 0; r == 0 && i < b->n; i++) {
		uint64_t f = page_flags(po, &b->fr[i], b->pg[i].pmflags);

		if (!pm_kpf_match(&po->filter, f))
			continue;
		if (po->summary)
			r = hist_add(&b->hist, f, 1);
		else
			r = emit_page(b, po, i, f);
	}
	if (r == 0)
		r = keep_last_path(b, po);
	b->n = 0;
	return r;
}

static int add_path(struct proc_batch *b, const struct pm_mapping *m)
{
	char **more;

	if (b->npaths && b->map_start == m->start)
		return 0;
	if (b->npaths == b->cap_paths) {
		more = realloc(b->paths, (b->cap_paths ? 2 * b->cap_paths : 64) * sizeof(*more));
		if (!more)
			return -ENOMEM;
		b->paths = more;
		b->cap_paths = b->cap_paths ? 2 * b->cap_paths : 64;
	}
	b->paths[b->npaths] = strndup(m->path, m->path_len);
	if (!b->paths[b->npaths])
		return -ENOMEM;
	b->npaths++;
	b->map_start = m->start;
	return 0;
}

/* Queue the present pages of @run, flushing full batches. */
static int add_run(struct proc_batch *b, const struct phys_opts *po, const struct pm_run *run)
{
	bool zero = (run->flags & PM_PAGE_ZERO) && !(run->flags & PM_PAGE_THP);
	uint64_t va, i = 0;
	int r;

	if ((run->flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME)) != (PM_PAGE_PRESENT | PM_PAGE_FRAME))
		return 0;
	for (va = run->start; va < run->end; va += po->page_size, i++) {
		if (b->n == PHYS_BATCH && (r = flush(b, po)) < 0)
			return r;
		if ((r = add_path(b, run->map)) < 0)
			return r;
		b->fr[b->n].pfn = run->pfn + (zero ? 0 : i);
		b->pg[b->n++] = (struct ppage){ va, run->flags, (uint32_t)(b->npaths - 1) };
	}
	return 0;
}

static int walk_target(struct pm_ctx *ctx, struct pm_target *t, struct proc_batch *b, const struct phys_opts *po,
		       uint64_t start, uint64_t end)
{
	struct pm_walk *w = pm_walk_new(t, start, end, PM_WALK_ENTRIES);
	const struct pm_run *run;
	uint64_t runs = 0;
	int rc;

	if (!w) {
		cli_walk_error(ctx, errno, po->pid);
		return EXIT_RUNTIME;
	}
	while ((rc = pm_walk_next(w, &run)) == 0 && ++runs)
		if ((rc = add_run(b, po, run)) < 0)
			break;
	pm_walk_free(w);
	if (rc == 1)
		rc = flush(b, po);
	if (rc == 0 && !po->summary)
		rc = proc_row(b, po);
	if (rc < 0) {
		cli_walk_error(ctx, -rc, po->pid);
		return EXIT_RUNTIME;
	}
	if (!runs && po->range) {
		cli_error(0, "process %s has nothing mapped at %s", po->pid, po->range);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static void batch_free(struct proc_batch *b)
{
	free_paths(b);
	free(b->paths);
	free(b->fr);
	free(b->pg);
	free(b->hist.slot);
	out_free(b->out);
	pm_kpage_close(b->k);
}

/* The target, its frames visible, and kpageflags open; NULL after a message. */
static struct pm_target *open_visible(struct pm_ctx *ctx, const char *arg, pid_t pid)
{
	struct pm_target *t = cli_open_target(ctx, pid, arg);

	if (t && pm_target_pfn_view(t) != PM_PFN_VISIBLE) {
		cli_error(0, "cannot join process %s with its frames: physical frame numbers are hidden %s", arg,
			  strcmp(pm_ctx_root(ctx), "/") ? "in the capture (reading them needs CAP_SYS_ADMIN)" :
							  "(reading them needs CAP_SYS_ADMIN)");
		pm_target_close(t);
		return NULL;
	}
	return t;
}

static int phys_proc(struct pm_ctx *ctx, struct phys_opts *po)
{
	struct proc_batch b = { .map_start = UINT64_MAX };
	uint64_t start = 0, end = UINT64_MAX;
	struct pm_target *t;
	pid_t pid;
	int code;

	if (cli_parse_pid(po->pid, &pid) < 0)
		return cli_usage_error("invalid PID '%s'", po->pid);
	if (po->range && cli_parse_range(po->range, po->page_size, &start, &end) < 0)
		return cli_usage_error("invalid range '%s' (0xSTART-0xEND or an address)", po->range);
	if (!po->summary && !(b.out = out_new("pages", proc_cols, NELEM(proc_cols),
					      "START,END,PAGES,PFN,FLAGS,COUNT,CGROUP,PATH", &po->o)))
		return EXIT_USAGE;
	t = open_visible(ctx, po->pid, pid);
	b.k = t ? open_kpage(ctx) : NULL;
	b.fr = malloc(PHYS_BATCH * sizeof(*b.fr));
	b.pg = malloc(PHYS_BATCH * sizeof(*b.pg));
	code = b.k && b.fr && b.pg ? EXIT_OK : EXIT_RUNTIME;
	if (code == EXIT_OK) {
		/* Read only the frame files shown: the kernel charges each per frame (the summary needs flags). */
		b.have_count = pm_kpage_status(b.k, PM_KPAGE_COUNT) == 0 && b.out && out_has(b.out, P_COUNT);
		b.have_cgroup = pm_kpage_status(b.k, PM_KPAGE_CGROUP) == 0 && b.out && out_has(b.out, P_CGROUP);
		pm_kpage_select(b.k, PM_KPAGE_BIT(PM_KPAGE_FLAGS) | (b.have_count ? PM_KPAGE_BIT(PM_KPAGE_COUNT) : 0) |
					     (b.have_cgroup ? PM_KPAGE_BIT(PM_KPAGE_CGROUP) : 0));
		code = walk_target(ctx, t, &b, po, start, end);
	}
	if (code == EXIT_OK)
		code = po->summary ? print_hist(&b.hist, po, "phys") : (out_print(b.out) < 0 ? EXIT_RUNTIME : EXIT_OK);
	else if (t && b.k && (!b.fr || !b.pg))
		cli_error(ENOMEM, "cannot join process %s with its frames", po->pid);
	batch_free(&b);
	pm_target_close(t);
	return code;
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
	       " -b, --bits EXPR        only frames whose flags match, as page-types -b: a,b (any),\n"
	       "                        a,~b, =a,b (exact), a,b=a (under a mask); names, prefixes\n"
	       "                        (the first name in bit order: u is uptodate, a active),\n"
	       "                        numbers (0x1000); repeat to narrow. A letter below that is\n"
	       "                        no prefix of a name (L, x, ...) means its flag\n"
	       " -l, --list             runs of frames with equal flags instead of the summary\n"
	       " -p, --pid PID          a process's pages and their frames\n"
	       " -s, --summary          with -p: the summary by flags over the process's pages\n"
	       "     --raw-flags        page-types' raw mode: kernel-internal and pseudo bits too\n"
	       "     --describe FLAGS   the flags of a value (0x5868) or a list of names, without\n"
	       "                        reading the kernel\n"
	       "\nFlags (raw-only ones marked *):\n");
	tab = pm_kpf_table(&n);
	for (i = 0; i < n; i++)
		printf("  %c %2u %-15s%s %s\n", tab[i].letter, tab[i].bit, tab[i].name, tab[i].internal ? "*" : " ",
		       tab[i].meaning);
	out_help_long_bytes(stdout, sum_cols, NELEM(sum_cols));
	printf("\nColumns with -l:\n");
	for (i = 0; i < NELEM(list_cols); i++)
		printf(" %12s  %s\n", list_cols[i].name, list_cols[i].help);
	printf("\nColumns with -p:\n");
	for (i = 0; i < NELEM(proc_cols); i++)
		printf(" %12s  %s\n", proc_cols[i].name, proc_cols[i].help);
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
