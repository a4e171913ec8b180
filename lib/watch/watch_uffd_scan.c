/* watch_uffd_scan.c - the uffd write watch's PAGEMAP_SCAN passes: written pages reported and re-armed around the huge pages left whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "scan.h"
#include "watch_uffd.h"

struct scan_call {
	struct pm_watch *w;
	regions_fn fn;
	void *data;
};

static int scan_batch(void *data, const struct page_region *v, size_t n)
{
	struct scan_call *c = data;

	return c->fn(c->w, v, (int)n, c->data);
}

/*
 * PAGEMAP_SCAN over [arg.start, arg.end) with @arg's flags and masks; with
 * arg.vec_len non-zero the regions go to @fn batch by batch (the vector is
 * the handle's), else one call does it all. The loop and its resume rule
 * are pmi_scan_each's.
 */
int pmi_uffd_scan_each(struct pm_watch *w, struct pm_scan_arg arg, regions_fn fn, void *data)
{
	struct uffd_state *s = w->priv;
	struct scan_call c = { w, fn, data };
	bool out = arg.vec_len != 0;

	return pmi_scan_each(w->t->pagemap_fd, arg, out ? s->vec : NULL, out ? VEC_LEN : 0, scan_batch, &c);
}

static int scan_written_chunk(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse);

static int emit_regions(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	int i;

	(void)data;
	for (i = 0; i < n; i++)
		pmi_watch_emit(w, v[i].start, v[i].end, false);
	return 0;
}

/* The size of the call after one of @chunk bytes that held the lock @hold seconds (see SCAN_CHUNK). Pure. */
uint64_t pmi_uffd_next_chunk(uint64_t chunk, double hold)
{
	if (hold > HOLD_GOAL && chunk > SCAN_CHUNK_MIN)
		return chunk / 2 > SCAN_CHUNK_MIN ? chunk / 2 : SCAN_CHUNK_MIN;
	if (hold < HOLD_GOAL / 2 && chunk < SCAN_CHUNK_MAX)
		return 2 * chunk < SCAN_CHUNK_MAX ? 2 * chunk : SCAN_CHUNK_MAX;
	return chunk;
}

/*
 * One pass over [start, end): report written pages (when @report), write-protect them again (when @rearm).
 * In chunks (dense pieces): one PAGEMAP_SCAN call holds the process's mmap lock (read) for its whole walk,
 * and one that re-arms flushes its TLB; between calls its mmap, munmap and mprotect run. The chunk adapts
 * to hold the lock about HOLD_GOAL a call (pmi_uffd_next_chunk), and each call's time is reported as a hold
 * (pm_watch_cost max_hold).
 */
int pmi_uffd_scan_written(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse)
{
	struct uffd_state *s = w->priv;
	uint64_t a, b, pmd = w->ctx->features.pmd_size;
	int err = 0;

	if (!s->chunk)
		s->chunk = SCAN_CHUNK;
	for (a = start; a < end && !err; a = b) {
		double t0 = pmi_now(), held;
		bool whole;

		/* A sparse piece (1 GiB+, mostly empty: a sanitizer's shadow) is walked whole: mostly holes, skipped fast. */
		b = !sparse && end - a > s->chunk ? a + s->chunk : end;
		/* A call that ends inside a huge PMD would split it to arm half of it: end calls on PMD bounds. */
		if (b < end && pmd && (b & ~(pmd - 1)) > a)
			b &= ~(pmd - 1);
		whole = b < end || b - a == s->chunk;	/* a call the chunk cut (maybe to a PMD bound) */
		err = scan_written_chunk(w, a, b, report, rearm, sparse);
		held = pmi_now() - t0;
		pmi_watch_hold(w, held);
		if (whole && !sparse)	/* a shorter call says little of what a whole one holds */
			s->chunk = pmi_uffd_next_chunk(s->chunk, held);
	}
	return err;
}

static int scan_written_chunk(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse)
{
	struct pm_scan_arg arg = {
		.flags = (rearm ? PM_SCAN_WP_MATCHING : 0) | PM_SCAN_CHECK_WPASYNC,
		.start = start,
		.end = end,
		.vec_len = report,
		/*
		 * Sparse pieces: only populated pages, and not the zero page (a read maps it
		 * unprotected there, as nothing armed the empty entry).
		 */
		.category_inverted = sparse ? PAGE_IS_PFNZERO : 0,
		.category_mask = PAGE_IS_WRITTEN | (sparse ? PAGE_IS_PFNZERO : 0),
		.category_anyof_mask = sparse ? PAGE_IS_PRESENT | PAGE_IS_SWAPPED : 0,
		/*
		 * WRITTEN alone: the kernel's fast path (docs/kernel-interface.md §6.2). Before the
		 * stable fix of docs/kernel-interface.md §6.5 (6.12.95 lacks it) only that path reads an emptied
		 * entry (MADV_DONTNEED) as written. A huge page needs no HUGE bit here:
		 * the first write splits its PMD, so reports are per page anyway.
		 */
		.return_mask = PAGE_IS_WRITTEN,
	};

	return pmi_uffd_scan_each(w, arg, emit_regions, NULL);
}

/* Index of the first piece that ends after @a (pieces are sorted and do not overlap). */
size_t pmi_uffd_piece_lower(const struct uffd_state *s, uint64_t a)
{
	size_t lo = 0, hi = s->npieces;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pieces[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Scan (report and/or re-arm) [@a, @b) of @p around the huge blocks left whole. */
static int scan_gaps(struct pm_watch *w, const struct piece *p, bool report, bool rearm)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size, a = p->start;
	size_t i;
	int err = 0;

	for (i = pmi_uffd_hb_lower(s, p->start); i < s->nhb && s->hb[i].start < p->end && !err; i++) {
		if (s->hb[i].start > a)
			err = pmi_uffd_scan_written(w, a, s->hb[i].start, report, rearm, p->sparse);
		a = s->hb[i].start + pmd;
	}
	if (!err && a < p->end)
		err = pmi_uffd_scan_written(w, a, p->end, report, rearm, p->sparse);
	return err;
}

/*
 * One piece: the huge pages left whole first (@huge: look at them; at add,
 * @discover them), then everything else through the write-protect bits.
 */
static int scan_piece(struct pm_watch *w, struct piece *p, bool report, bool rearm, bool huge, bool discover)
{
	bool keep = !(w->flags & PM_WATCH_NOTHP) && w->ctx->features.pmd_size;
	int err;

	if (!keep)
		return pmi_uffd_scan_written(w, p->start, p->end, report, rearm, p->sparse);
	if (!huge)
		return scan_gaps(w, p, report, rearm);
	err = pmi_uffd_huge_pass(w, p, report, rearm, discover);
	return err ? err : scan_gaps(w, p, report, rearm);
}

/* Scan (report and/or re-arm) every piece inside @r; @huge: look at the huge pages left whole too. */
int pmi_uffd_scan_range(struct pm_watch *w, const struct pmi_watch_range *r, bool report, bool rearm, bool huge,
		      bool discover)
{
	struct uffd_state *s = w->priv;
	size_t i;

	for (i = pmi_uffd_piece_lower(s, r->start); i < s->npieces && s->pieces[i].start < r->end; i++) {
		int err = scan_piece(w, &s->pieces[i], report, rearm, huge, discover);

		if (err < 0)
			return err;
	}
	return 0;
}
