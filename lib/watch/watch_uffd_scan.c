/* watch_uffd_scan.c - the uffd write watch's PAGEMAP_SCAN passes: written pages reported and re-armed, huge pages left whole compared by contents. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#define XXH_INLINE_ALL	/* header-only: no link dependency */
#include <xxhash.h>
#include "scan.h"
#include "smaps.h"
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
	uint64_t a, b;
	int err = 0;

	if (!s->chunk)
		s->chunk = SCAN_CHUNK;
	for (a = start; a < end && !err; a = b) {
		double t0 = pmi_now(), held;
		bool whole;

		/* A sparse piece (1 GiB+, mostly empty: a sanitizer's shadow) is walked whole: mostly holes, skipped fast. */
		b = !sparse && end - a > s->chunk ? a + s->chunk : end;
		whole = b - a == s->chunk;
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

/* Index of the first huge block at or after @a. */
size_t pmi_uffd_hb_lower(const struct uffd_state *s, uint64_t a)
{
	size_t lo = 0, hi = s->nhb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->hb[mid].start < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int hb_insert(struct uffd_state *s, size_t at, uint64_t start, uint64_t hash)
{
	if (s->nhb == s->caphb) {
		size_t cap = s->caphb ? 2 * s->caphb : 16;
		struct hblock *p = realloc(s->hb, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->hb = p;
		s->caphb = cap;
	}
	memmove(&s->hb[at + 1], &s->hb[at], (s->nhb - at) * sizeof(*s->hb));
	s->hb[at] = (struct hblock){ start, hash };
	s->nhb++;
	return 0;
}

/* The contents of the huge page at @a, hashed; read from the target (process_vm_readv: never a fault here). */
static int hb_hash(struct pm_watch *w, uint64_t a, uint64_t *hash)
{
	struct uffd_state *s = w->priv;
	size_t len = (size_t)w->ctx->features.pmd_size;
	struct iovec local, remote = { (void *)(uintptr_t)a, len };
	ssize_t n;

	if (!s->hbuf && !(s->hbuf = malloc(len)))
		return -ENOMEM;
	local = (struct iovec){ s->hbuf, len };
	n = process_vm_readv(w->pid ? w->pid : getpid(), &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	*hash = XXH3_64bits(s->hbuf, len);
	w->stats.hashed_bytes += len;
	return 0;
}

/* Is the PMD block at @a still one PMD-mapped huge page? */
static int still_huge(struct pm_watch *w, uint64_t a, bool *huge)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .start = a, .end = a + pmd, .vec = (uintptr_t)s->vec, .vec_len = 1,
		.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT, .return_mask = PAGE_IS_HUGE,
	};
	int n = ioctl(w->t->pagemap_fd, PAGEMAP_SCAN, &arg);

	if (n < 0)
		return -errno;
	*huge = n == 1 && s->vec[0].start == a && s->vec[0].end == a + pmd;
	return 0;
}

struct found {
	uint64_t *v;
	size_t n, cap;
};

static int collect_huge(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	uint64_t pmd = w->ctx->features.pmd_size, a;
	struct found *f = data;
	int i;

	for (i = 0; i < n; i++)
		for (a = (v[i].start + pmd - 1) & ~(pmd - 1); a + pmd <= v[i].end; a += pmd) {
			if (f->n == f->cap) {
				size_t cap = f->cap ? 2 * f->cap : 16;
				uint64_t *p = realloc(f->v, cap * sizeof(*p));

				if (!p)
					return -ENOMEM;
				f->v = p;
				f->cap = cap;
			}
			f->v[f->n++] = a;
		}
	return 0;
}

/* Is piece @p a hugetlb mapping (armed as it is: a hugetlb page never splits)? Asked once, of smaps. */
static bool piece_hugetlb(struct pm_watch *w, struct piece *p)
{
	struct pmi_smaps_swap *v;
	const struct pmi_smaps_swap *e;
	size_t n;

	if (p->hugetlb < 0) {
		p->hugetlb = 0;
		if (pmi_smaps_swap_read(w->t, &v, &n) == 0) {
			e = pmi_smaps_find(v, n, p->map_start);
			p->hugetlb = e && e->kernel_page > w->psize;
			free(v);
		}
	}
	return p->hugetlb;
}

/*
 * The huge pages of piece @p now: in a sparse piece (empty parts not armed,
 * where a new one can form) by a scan of it all, elsewhere by checking the
 * known ones (armed page tables keep new ones from forming: no huge fault
 * over them, and khugepaged skips uffd-wp entries). At add (@discover) the
 * whole piece is scanned.
 */
static int huge_now(struct pm_watch *w, struct piece *p, bool discover, struct found *f)
{
	struct uffd_state *s = w->priv;
	size_t i;
	int err = 0;

	if (discover || p->sparse) {
		struct pm_scan_arg arg = {
			.start = p->start, .end = p->end, .vec_len = 1,
			.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT, .return_mask = PAGE_IS_HUGE,
		};

		err = pmi_uffd_scan_each(w, arg, collect_huge, f);
		if (!err && f->n && piece_hugetlb(w, p))
			f->n = 0;
		return err;
	}
	for (i = pmi_uffd_hb_lower(s, p->start); i < s->nhb && s->hb[i].start < p->end && !err; i++) {
		bool huge = false;

		err = still_huge(w, s->hb[i].start, &huge);
		if (!err && huge)
			err = collect_huge(w, &(struct page_region){ .start = s->hb[i].start,
					   .end = s->hb[i].start + w->ctx->features.pmd_size }, 1, f);
	}
	return err;
}

/*
 * Compare the known huge blocks of @p with those there now (@f, sorted):
 * still huge, its contents decide; split or gone, contents decide and (with
 * @reset) it is armed like any other memory from now on; new, it appeared
 * since the last look, so it was written (or read in: either way new
 * contents), and it is kept whole from now on (with @reset).
 */
static int huge_merge(struct pm_watch *w, const struct piece *p, const struct found *f, bool report, bool reset)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size, hash = 0;
	size_t i = pmi_uffd_hb_lower(s, p->start), j = 0;
	int err = 0;

	while (!err && (j < f->n || (i < s->nhb && s->hb[i].start < p->end))) {
		bool known = i < s->nhb && s->hb[i].start < p->end;
		uint64_t a = known && (j >= f->n || s->hb[i].start <= f->v[j]) ? s->hb[i].start : f->v[j];
		bool now = j < f->n && f->v[j] == a;
		int herr;

		known = known && s->hb[i].start == a;
		herr = hb_hash(w, a, &hash);
		if (report && (!known || herr || hash != s->hb[i].hash))
			pmi_watch_emit(w, a, a + pmd, true);
		if (known && now) {
			if (reset && !herr)
				s->hb[i].hash = hash;
			i++;
		} else if (known) {	/* split or unmapped since: arm it, forget it */
			if (reset) {
				err = pmi_uffd_scan_written(w, a, a + pmd, false, true, p->sparse);
				memmove(&s->hb[i], &s->hb[i + 1], (--s->nhb - i) * sizeof(*s->hb));
			} else {
				i++;
			}
		} else if (reset && !herr) {	/* new */
			err = hb_insert(s, i, a, hash);
			i++;
		}
		if (now)
			j++;
	}
	return err;
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
	struct found f = { 0 };
	int err;

	if (!keep)
		return pmi_uffd_scan_written(w, p->start, p->end, report, rearm, p->sparse);
	if (!huge)
		return scan_gaps(w, p, report, rearm);
	err = huge_now(w, p, discover, &f);
	if (!err)
		err = huge_merge(w, p, &f, report, rearm);
	free(f.v);
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
