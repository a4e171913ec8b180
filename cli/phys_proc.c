/* phys_proc.c - `pagemap phys -p PID`: a process's pages joined with their frames, in runs of pages
 * whose frames follow each other with the same flags, count and cgroup. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"
#include "phys.h"

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
	phys_hex16(buf, sizeof(buf), r->flags);
	out_str(b->out, ln, P_KPF, buf);
	phys_name_cells(b->out, ln, P_FLAGS, P_NAMES, r->flags, po->raw);
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
			r = phys_hist_add(&b->hist, f, 1);
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

int phys_proc(struct pm_ctx *ctx, struct phys_opts *po)
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
	if (!po->summary && !(b.out = out_new_fit("pages", phys_proc_cols, NELEM(phys_proc_cols), PHYS_PROC_DEFAULTS,
						  PHYS_PROC_TERM_DEFAULTS, &po->o)))
		return EXIT_USAGE;
	t = open_visible(ctx, po->pid, pid);
	b.k = t ? phys_open_kpage(ctx) : NULL;
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
		code = po->summary ? phys_print_hist(&b.hist, po, "phys") :
		       (out_print(b.out) < 0 ? EXIT_RUNTIME : EXIT_OK);
	else if (t && b.k && (!b.fr || !b.pg))
		cli_error(ENOMEM, "cannot join process %s with its frames", po->pid);
	batch_free(&b);
	pm_target_close(t);
	return code;
}
