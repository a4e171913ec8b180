/* walk.c - runs of pages with identical state over a range: mappings, the PAGEMAP_SCAN back end's segments, runs (pread entries: walk_entries.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "scan.h"
#include "walk.h"

#define SCAN_VEC	1024u	/* regions per PAGEMAP_SCAN call (24 KiB) */
#define SCAN_FAR	0x7ffffffff000ULL	/* x86-64 4-level task size; a smaller one refuses it (EFAULT): then no scan ahead */

/* The flags a walk by the scan (@scan) or by pread can tell: each one the flag facts say this kernel and reader can. */
uint32_t pmi_walk_known_how(const struct pm_walk *w, bool scan)
{
	const struct pm_read_how how = {
		.layout = w->t->decode.layout,
		.frames = w->t->decode.frame_visible,
		.scan = scan,
		.entries = w->flags & PM_WALK_ENTRIES,
	};
	const struct pm_flag_fact *x;
	uint32_t k = 0;
	size_t i, n;

	for (x = pm_flag_facts(&n), i = 0; i < n; i++)
		if (pm_flag_lack(w->f, &how, x[i].bit) == PM_LACK_NONE)
			k |= x[i].bit;
	return k;
}

/*
 * The PAGEMAP_SCAN categories a walk asks for, and the flag each gives: the
 * flag facts' scan_category column, where this kernel accepts the category
 * (6.7 has bits 0-7; an older kernel's EINVAL on bit 8 would fail the scan).
 */
static void scan_categories(struct pm_walk *w)
{
	const struct pm_flag_fact *x;
	size_t i, n;

	w->scan_mask = 0;
	w->ncat = 0;
	for (x = pm_flag_facts(&n), i = 0; i < n && w->ncat < PMI_ARRAY_SIZE(w->cat); i++) {
		uint64_t c = x[i].scan_category & w->f->scan_categories;

		if (!c)
			continue;
		w->cat[w->ncat].category = c;
		w->cat[w->ncat++].flag = x[i].bit;
		w->scan_mask |= c;
	}
}

static int choose_backend(struct pm_walk *w)
{
	enum pm_backend b = w->t->ctx->backend;

	if (b == PM_BACKEND_SCAN && (!w->f->scan || !w->t->ctx->live))
		return -EOPNOTSUPP;
	/* A replayed tree is plain files: no ioctl can answer there. */
	if (b == PM_BACKEND_AUTO)
		b = w->f->scan && w->t->ctx->live ? PM_BACKEND_SCAN : PM_BACKEND_PREAD;
	w->backend = b;
	if (b == PM_BACKEND_SCAN)	/* the walk's end, page-aligned, never past SCAN_FAR */
		w->scan_far = w->end < SCAN_FAR ? (w->end + w->psize - 1) & ~(w->psize - 1) : SCAN_FAR;
	scan_categories(w);
	w->hybrid = b == PM_BACKEND_SCAN && w->t->ctx->backend == PM_BACKEND_AUTO && pmi_walk_hybrid_ok(w);
	w->known = pmi_walk_known_how(w, b == PM_BACKEND_SCAN);
	return 0;
}

struct pm_walk *pm_walk_new(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags)
{
	/* Unknown bits are refused, so a later flag cannot be silently ignored by an older library. */
	if (flags & ~(PM_WALK_ENTRIES | PM_WALK_EACH)) {
		errno = EINVAL;
		return NULL;
	}
	return pmi_walk_open(t, start, end, flags, 0);
}

struct pm_walk *pmi_walk_open(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags, unsigned iflags)
{
	struct pm_walk *w;
	int r;

	if (start > end) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->t = t;
	w->f = pm_ctx_features(t->ctx);
	w->flags = flags;
	w->iflags = iflags;
	w->start = start;
	w->end = end;
	w->smaps_err = 1;
	w->psize = w->f->page_size;
	w->shift = w->f->page_shift;
	w->pmd_size = w->f->pmd_size;
	r = choose_backend(w);
	if (r < 0) {
		free(w);
		errno = -r;
		return NULL;
	}
	w->buf_cap = BUF_FIRST < BATCH_PAGES ? BUF_FIRST : BATCH_PAGES;
	w->buf = malloc(w->buf_cap * sizeof(uint64_t));
	w->vec = w->backend == PM_BACKEND_SCAN ? malloc(SCAN_VEC * sizeof(*w->vec)) : NULL;
	w->maps = pm_maps_open(t);
	if (!w->buf || (w->backend == PM_BACKEND_SCAN && !w->vec) || !w->maps) {
		r = errno ? errno : ENOMEM;
		pm_walk_free(w);
		errno = r;
		return NULL;
	}
	return w;
}

void pm_walk_free(struct pm_walk *w)
{
	if (!w)
		return;
	pm_maps_close(w->maps);
	pm_kpage_close(w->kpage);
	free(w->smaps);
	free(w->buf);
	free(w->vec);
	free(w);
}

enum pm_backend pm_walk_backend(const struct pm_walk *w)
{
	return w->backend;
}

uint32_t pm_walk_known(const struct pm_walk *w)
{
	return w->known;
}

/* As pm_mapstat's walk from its start: compatible() and same_run() then look at the flags alone. */
void pm_walk_ignore_frames(struct pm_walk *w)
{
	w->iflags |= PMI_IWALK_NOFRAMES;
}

/*
 * The end of the maps file is the end of the walk only if the target still
 * has its memory. A maps file whose process exited or exec'd reads empty
 * from then on (6.x seq_file m_start finds no mm), which alone would pass
 * for an empty address space instead of -ESRCH (live test exit_race).
 * Live only: a replayed tree's pagemap file may legitimately be empty.
 */
static int maps_end(struct pm_walk *w)
{
	uint64_t e;
	ssize_t n;

	if (!w->t->ctx->live)
		return 1;
	n = pm_target_read(w->t, 0, &e, 1);	/* -ESRCH when the mm is gone */
	return n < 0 ? (int)n : 1;
}

/* Name the maps file and line of a replayed tree that the kernel could not have written. */
static int bad_maps(struct pm_walk *w, const char *why, const struct pm_mapping *m)
{
	char path[4096];

	if (w->t->ctx->live)
		return -EINVAL;
	if (pmi_pid_path(w->t->ctx, path, sizeof(path), w->t->pid, "maps") < 0)
		snprintf(path, sizeof(path), "maps");
	if (!m)
		return pmi_tree_error(w->t->ctx, "%s line %u: %s", path, w->map_line, why);
	return pmi_tree_error(w->t->ctx, "%s line %u: %#llx-%#llx %s", path, w->map_line,
			     (unsigned long long)m->start, (unsigned long long)m->end, why);
}

/*
 * Mappings as the kernel prints them: whole pages, not empty, ascending and
 * apart. A replayed maps file may hold anything; a piece shorter than a page
 * would never advance the walk.
 */
static int check_mapping(struct pm_walk *w, const struct pm_mapping *m)
{
	/* [vsyscall] is 4 KiB whatever the page size of a synthetic tree: it is never read. */
	uint64_t unit = m->kind == PM_MAP_VSYSCALL || m->kind == PM_MAP_VVAR ? 4096 : w->psize;

	if ((m->start | m->end) & (unit - 1))
		return bad_maps(w, "is not a whole number of pages", m);
	if (m->start >= m->end)
		return bad_maps(w, "is empty", m);
	if (m->start < w->prev_end && !w->t->ctx->live)
		return bad_maps(w, "starts before the previous mapping ends", m);
	w->prev_end = m->end;
	return 0;
}

/* Advance to the next mapping that overlaps the range and can be read. Returns 0, 1 at the end, <0. */
static int next_mapping(struct pm_walk *w)
{
	const struct pm_mapping *m;
	int r;

	for (;;) {
		r = pm_maps_next(w->maps, &m);
		if (r == 1)
			return maps_end(w);
		w->map_line++;
		if (r == -EINVAL)
			return bad_maps(w, "is not a maps line", NULL);
		if (r)
			return r;
		r = check_mapping(w, m);
		if (r)
			return r;
		if (m->end <= w->start || m->start >= w->end)
			continue;
		/* [vsyscall] lies above task_size; [vvar] is VM_PFNMAP and always reads empty. */
		w->unreadable = m->kind == PM_MAP_VSYSCALL || m->kind == PM_MAP_VVAR;
		if (w->unreadable && !(w->iflags & PMI_IWALK_ALLMAPS))
			continue;
		w->map = *m;
		/* Runs point at the whole mapping; the walk covers its part in range. */
		w->map_start = m->start < w->start ? w->start & ~(w->psize - 1) : m->start;
		w->map_end = m->end > w->end ? (w->end + w->psize - 1) & ~(w->psize - 1) : m->end;
		if (w->map_start < m->start)	/* a [vsyscall] smaller than a page */
			w->map_start = m->start;
		if (w->map_end > m->end || w->map_end < w->map_start)
			w->map_end = m->end;
		w->map_cur = w->map_start;
		if (w->map_start >= w->scan_next) {	/* not in what an earlier call scanned ahead */
			w->scan_next = w->map_start;
			w->vec_n = w->vec_pos = 0;
		}
		w->seg_cur = w->seg.end = w->map_start;
		w->map_swap = -1;
		w->decided = w->sampled = w->explored = false;
		w->have_map = true;
		return 0;
	}
}

/* The flags a region's categories give (scan_categories). */
uint32_t pmi_walk_cat_flags(const struct pm_walk *w, uint64_t c)
{
	uint32_t f = 0;
	unsigned i;

	for (i = 0; i < w->ncat; i++)
		if (c & w->cat[i].category)
			f |= w->cat[i].flag;
	/* A guard marker is a swap-format PTE marker: the scan calls it swapped too. */
	if (f & PM_PAGE_GUARD)
		f = (f & ~PM_PAGE_SWAPPED) | PM_PAGE_MARKER;
	return f;
}

/* Must the entries of a region with these flags be read? PAGE_IS_SWAPPED also covers uffd-wp markers and migration entries. */
bool pmi_walk_needs_entries(const struct pm_walk *w, uint32_t fl)
{
	return (fl & PM_PAGE_SWAPPED) || ((w->flags & PM_WALK_ENTRIES) && (fl & (PM_PAGE_PRESENT | PM_PAGE_MARKER)));
}

/*
 * Scan back end: how far one pread of entries from @lim_vpn (the current
 * segment's end) may reach, up to @cap_vpn, to cover the next regions that
 * need entries too. A sparse layout gives one region per page; a pread per
 * region made `maps` (whose EXCLUSIVE column needs entries) 7x slower than
 * PAGEMAP_SCAN alone. Gaps of up to READAHEAD_GAP pages are read through:
 * 4 KiB of unused entries costs less than a system call.
 */
uint64_t pmi_scan_readahead(const struct pm_walk *w, uint64_t lim_vpn, uint64_t cap_vpn)
{
	size_t i;

	if (w->backend != PM_BACKEND_SCAN)
		return lim_vpn;
	/* Past the mapping too: vec holds the next mappings' regions (scan_refill), the entries stay in buf for them. */
	for (i = w->vec_pos; i < w->vec_n && lim_vpn < cap_vpn; i++) {
		uint64_t s = w->vec[i].start >> w->shift, e = w->vec[i].end >> w->shift;

		if (s > lim_vpn + READAHEAD_GAP)
			break;
		if (pmi_walk_needs_entries(w, pmi_walk_cat_flags(w, w->vec[i].categories)) && e > lim_vpn)
			lim_vpn = e < cap_vpn ? e : cap_vpn;
	}
	return lim_vpn;
}

/*
 * One PAGEMAP_SCAN call over the rest of the mapping and, up to scan_far,
 * the mappings after it (pmi_scan_step keeps the resume rule): a call per
 * mapping cost more than cat smaps of a process with 10,000 of them (bench/run-mappings.sh).
 * The regions past this mapping stay in vec for the next ones (next_mapping).
 */

int pmi_walk_scan_refill(struct pm_walk *w)
{
	struct pm_scan_arg arg = { .start = w->scan_next, .return_mask = w->scan_mask };
	uint64_t end = w->scan_far > w->map_end ? w->scan_far : w->map_end, t0 = 0;
	int n = w->t->ctx->check ? w->t->ctx->check(w->t->ctx->check_data) : 0;

	if (n < 0)	/* the caller asked to stop (pm_ctx_set_check) */
		return n;

	/* Hybrid: bounded until a mapping is decided, then to that mapping's end (the next ones are decided apart). */
	w->scan_timed = false;
	if (w->hybrid && w->scan_next < w->free_end) {
		end = w->free_end;
	} else if (w->hybrid) {
		arg.max_pages = PROBE_PAGES;
		w->scan_timed = pmi_walk_call_may_sample((w->map_end - w->scan_next) >> w->shift, PROBE_PAGES, SCAN_VEC);
		t0 = w->scan_timed ? pmi_walk_now() : 0;
	}
	n = pmi_scan_step(w->t->pagemap_fd, &arg, end, w->vec, SCAN_VEC);
	if ((n == -EFAULT || n == -EINVAL) && end > w->map_end) {
		w->scan_far = 0;
		arg = (struct pm_scan_arg){ .start = w->scan_next, .return_mask = w->scan_mask,
					    .max_pages = arg.max_pages };
		n = pmi_scan_step(w->t->pagemap_fd, &arg, w->map_end, w->vec, SCAN_VEC);
	}
	if (n < 0)
		return n;
	w->vec_n = (size_t)n;
	w->vec_pos = 0;
	w->scan_next = arg.start;
	/* What this call cost per page it reported (mappings' pages; the space between them costs nothing): walk_cost.c. */
	if (w->scan_timed) {
		w->scan_ns = pmi_walk_now() - t0;
		for (w->scan_pages = 0; n > 0; n--)
			w->scan_pages += (w->vec[n - 1].end - w->vec[n - 1].start) >> w->shift;
	}
	return 0;
}

void pmi_walk_set_seg(struct pm_walk *w, uint64_t start, uint64_t end, uint32_t flags, bool entries)
{
	w->seg = (struct segment){ .start = start, .end = end, .flags = flags, .entries = entries };
	w->seg_cur = start;
	w->map_cur = end;
	w->seg_pread = false;
}

/* Scan back end: the next region, or the gap before it (VM_PFNMAP parts are not reported). */
static int scan_segment(struct pm_walk *w)
{
	const struct page_region *reg;
	uint32_t fl;
	bool entries;
	int r;

	if (w->map_cur >= w->map_end)
		return 1;
	if (w->hybrid && !w->decided && w->explored) {	/* its sample read by pread: choose before scanning on */
		r = pmi_walk_decide(w);
		if (r)
			return r < 0 ? r : 0;
	}
	while (w->vec_pos == w->vec_n) {
		if (w->scan_next >= w->map_end) {
			if (w->map_cur >= w->map_end)
				return 1;
			pmi_walk_set_seg(w, w->map_cur, w->map_end, 0, false);
			return 0;
		}
		r = pmi_walk_scan_refill(w);
		if (r < 0)
			return r;
	}
	reg = &w->vec[w->vec_pos];
	if (reg->end <= w->map_cur) {	/* already counted: never twice */
		w->vec_pos++;
		return scan_segment(w);
	}
	if (w->hybrid && !w->decided) {
		r = pmi_walk_decide(w);
		if (r)
			return r < 0 ? r : 0;
		if (w->vec_pos == w->vec_n)	/* sampled afresh: nothing of it left */
			return scan_segment(w);
		reg = &w->vec[w->vec_pos];
		if (reg->end <= w->map_cur) {
			w->vec_pos++;
			return scan_segment(w);
		}
	}
	if (reg->start > w->map_cur) {
		pmi_walk_set_seg(w, w->map_cur, reg->start, 0, false);
		return 0;
	}
	if (reg->end <= w->map_end)	/* one running on into the next mapping serves it too */
		w->vec_pos++;
	fl = pmi_walk_cat_flags(w, reg->categories);
	entries = pmi_walk_needs_entries(w, fl);
	if (entries)
		fl &= PM_PAGE_THP | PM_PAGE_ZERO;
	pmi_walk_set_seg(w, w->map_cur, reg->end < w->map_end ? reg->end : w->map_end, fl, entries);
	return 0;
}

static int next_segment(struct pm_walk *w)
{
	if (w->unreadable) {
		if (w->map_cur >= w->map_end)
			return 1;
		pmi_walk_set_seg(w, w->map_cur, w->map_end, 0, false);
		return 0;
	}
	if (w->backend == PM_BACKEND_SCAN)
		return scan_segment(w);
	if (w->map_cur >= w->map_end)
		return 1;
	pmi_walk_set_seg(w, w->map_cur, w->map_end, 0, true);
	return 0;
}

static bool compatible(const struct pm_run *p, uint64_t addr, uint32_t flags, const struct pm_entry *e,
		       unsigned shift, bool frames)
{
	uint64_t n = (p->end - p->start) >> shift;

	if (p->end != addr || p->flags != flags)
		return false;
	if (!(flags & PM_PAGE_FRAME) || !frames)	/* pm_mapstat only sums bytes */
		return true;
	if ((flags & PM_PAGE_ZERO) && !(flags & PM_PAGE_THP))
		return e->pfn == p->pfn;	/* every page maps the one zero page */
	if (flags & PM_PAGE_PRESENT)
		return e->pfn == p->pfn + n;
	return e->swap_type == p->swap_type && e->swap_offset == p->swap_offset + n;
}

/* Extend the pending run by @len bytes or start a new one. Returns 1 when a finished run is in w->out. */
int pmi_walk_add_pages(struct pm_walk *w, uint64_t addr, uint64_t len, uint32_t flags, const struct pm_entry *e)
{
	static const struct pm_entry none;
	bool done;

	if (w->sums) {	/* pm_flag_bytes_add without a run */
		pmi_flag_bytes_add_len(w->sums, flags, len);
		return 0;
	}
	if (!e)
		e = &none;
	if (w->has_pending && !(w->flags & PM_WALK_EACH) &&
	    compatible(&w->pending, addr, flags, e, w->shift, !(w->iflags & PMI_IWALK_NOFRAMES))) {
		w->pending.end += len;
		return 0;
	}
	done = w->has_pending;
	if (done)
		w->out = w->pending;
	w->pending = (struct pm_run){ .start = addr, .end = addr + len, .flags = flags,
				      .pfn = e->pfn, .swap_type = e->swap_type, .swap_offset = e->swap_offset,
				      .map = &w->map };
	w->has_pending = true;
	return done;
}


/* Turn the current segment into runs until one run is finished. Returns 1 with w->out, 0 when the segment ends. */
static int consume(struct pm_walk *w)
{
	int r;

	while (w->seg_cur < w->seg.end) {
		uint64_t addr = w->seg_cur, vpn = addr >> w->shift, n;

		if (!w->seg.entries) {
			uint32_t fl = w->seg.flags;
			/* In bytes: an unread [vsyscall] may be less than a page, and must still end. */
			uint64_t len = w->seg.end - addr;
			if (fl & PM_PAGE_ZERO)
				fl &= ~PM_PAGE_FILE;
			if ((w->flags & PM_WALK_EACH) && len > w->psize)
				len = w->psize;
			w->seg_cur += len;
			if (pmi_walk_add_pages(w, addr, len, fl, NULL))
				return 1;
			continue;
		}
		if (vpn < w->buf_vpn || vpn >= w->buf_vpn + w->buf_n) {
			r = pmi_walk_refill(w, vpn);
			if (r)
				return r < 0 ? r : 0;
		}
		n = pmi_walk_sum_plain(w, addr);
		if (n) {
			w->seg_cur += n << w->shift;
			continue;
		}
		n = pmi_walk_entry_piece(w, addr);
		w->seg_cur += n << w->shift;
		if (pmi_walk_add_entries(w, addr, n))
			return 1;
	}
	return 0;
}

static bool flush(struct pm_walk *w)
{
	if (!w->has_pending)
		return false;
	w->out = w->pending;
	w->has_pending = false;
	return true;
}

/*
 * A mapping's sums without its runs: `maps` of every other page present
 * built, copied and summed a run per page (about a quarter of its time).
 */
int pmi_walk_sum_mapping(struct pm_walk *w, struct pm_flag_bytes *sums, const struct pm_mapping **map)
{
	int r = 0;

	*map = NULL;
	if (!w->have_map && (r = next_mapping(w)) != 0)
		return r;
	*map = &w->map;
	w->sums = sums;
	while (r >= 0) {
		if (w->seg_cur >= w->seg.end) {
			r = next_segment(w);
			if (r == 1) {
				w->have_map = false;
				r = 0;
				break;
			}
			if (r < 0)
				break;
		}
		r = consume(w);
	}
	w->sums = NULL;
	return r;
}

uint32_t pmi_walk_map_known(const struct pm_walk *w)
{
	return w->unreadable ? 0 : pm_walk_known(w);
}

int pm_walk_next(struct pm_walk *w, const struct pm_run **out)
{
	int r;

	for (;;) {
		if (!w->have_map) {
			r = next_mapping(w);
			if (r)
				return r;
		}
		if (w->seg_cur >= w->seg.end) {
			r = next_segment(w);
			if (r < 0)
				return r;
			if (r == 1) {	/* runs never span two mappings */
				w->have_map = false;
				if (flush(w)) {
					*out = &w->out;
					return 0;
				}
				continue;
			}
		}
		r = consume(w);
		if (r < 0)
			return r;
		if (r == 1) {
			*out = &w->out;
			return 0;
		}
	}
}
