/* watch_uffd_huge.c - the uffd write watch's huge pages left whole: told written by their soft-dirty bits where the kernel keeps them, else compared by contents. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#define XXH_INLINE_ALL	/* header-only: no link dependency */
#include <xxhash.h>
#include "scan.h"
#include "smaps.h"
#include "watch_uffd.h"

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

/* The handle's notice (pm_watch_notice), once the first huge page is left whole: what it costs, or what it risks. */
static void notice_huge(struct pm_watch *w)
{
	struct uffd_state *s = w->priv;

	if (w->notice[0])
		return;
	if (s->sd)
		snprintf(w->notice, sizeof(w->notice), "%s", "huge pages are left whole: their soft-dirty bits tell "
			 "which were written (cleared every interval for the whole process, clear_refs 4); a first "
			 "write to one between reading the bits and clearing them, a moment per interval, is missed");
	else
		snprintf(w->notice, sizeof(w->notice), "%s", "huge pages are left whole, and every interval each "
			 "is read and compared: this kernel keeps no soft-dirty bits to tell the written ones "
			 "(CONFIG_MEM_SOFT_DIRTY is off), so a collect costs a read of them all; --no-thp makes it "
			 "as fast as the kernel's scan and counts writes per 4 KiB, splitting each huge page written");
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

/* Is the PMD block at @a still one PMD-mapped huge page (and, tracking soft-dirty bits, *@dirty: written)? */
static int still_huge(struct pm_watch *w, uint64_t a, bool *huge, bool *dirty)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	struct pm_scan_arg arg = {
		.start = a, .category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_HUGE | (s->sd ? PAGE_IS_SOFT_DIRTY : 0),
	};
	int n = pmi_scan_step(w->t->pagemap_fd, &arg, a + pmd, s->vec, 1);

	if (n < 0)
		return n;
	*huge = n == 1 && s->vec[0].start == a && s->vec[0].end == a + pmd;
	*dirty = *huge && (s->vec[0].categories & PAGE_IS_SOFT_DIRTY);
	return 0;
}

/*
 * Tracking soft-dirty bits: was anything in [@a, @a + PMD) written since the
 * last clear? For a block that is no longer one huge page: its PTEs kept the
 * PMD's bit when it was split, and a write since sets theirs.
 */
static int block_dirty(struct pm_watch *w, uint64_t a, bool *dirty)
{
	struct uffd_state *s = w->priv;
	struct pm_scan_arg arg = {
		.start = a, .category_mask = PAGE_IS_SOFT_DIRTY, .return_mask = PAGE_IS_SOFT_DIRTY,
	};
	int n = pmi_scan_step(w->t->pagemap_fd, &arg, a + w->ctx->features.pmd_size, s->vec, 1);

	if (n < 0)
		return n;
	*dirty = n > 0;
	return 0;
}

struct found {
	uint64_t *v;
	bool *dirty;		/* tracking soft-dirty bits: v[i] was written since the last clear */
	size_t n, cap;
};

static int found_add(struct found *f, uint64_t a, bool dirty)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		uint64_t *p = realloc(f->v, cap * sizeof(*p));
		bool *d = p ? realloc(f->dirty, cap * sizeof(*d)) : NULL;

		if (p)
			f->v = p;
		if (!d)
			return -ENOMEM;
		f->dirty = d;
		f->cap = cap;
	}
	f->dirty[f->n] = dirty;
	f->v[f->n++] = a;
	return 0;
}

static int collect_huge(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	uint64_t pmd = w->ctx->features.pmd_size, a;
	struct found *f = data;
	int i;

	for (i = 0; i < n; i++)
		for (a = (v[i].start + pmd - 1) & ~(pmd - 1); a + pmd <= v[i].end; a += pmd)
			if (found_add(f, a, v[i].categories & PAGE_IS_SOFT_DIRTY) < 0)
				return -ENOMEM;
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
 * over them, and khugepaged skips uffd-wp entries), one call each, or by one
 * scan of the piece where that costs less. At add (@discover) the whole
 * piece is scanned.
 */
static int huge_now(struct pm_watch *w, struct piece *p, bool discover, struct found *f)
{
	struct uffd_state *s = w->priv;
	size_t i = pmi_uffd_hb_lower(s, p->start), j = i;
	uint64_t pmd = w->ctx->features.pmd_size;
	int err = 0;

	while (j < s->nhb && s->hb[j].start < p->end)
		j++;
	/*
	 * A call's fixed cost (the syscall, the walk's setup: 1-2 us) is about what
	 * the kernel takes to walk one PMD's 512 PTEs, and a huge PMD walks at once:
	 * one scan of the piece costs less than a call per known huge page once
	 * they are at least half of its PMDs (a 730 MiB heap: 365 calls against one).
	 */
	if (discover || p->sparse || 2 * (j - i) >= (p->end - p->start) / pmd) {
		struct pm_scan_arg arg = {
			.start = p->start, .end = p->end, .vec_len = 1,
			.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT,
			.return_mask = PAGE_IS_HUGE | (s->sd ? PAGE_IS_SOFT_DIRTY : 0),
		};

		err = pmi_uffd_scan_each(w, arg, collect_huge, f);
		if (!err && f->n && piece_hugetlb(w, p))
			f->n = 0;
		return err;
	}
	for (; i < j && !err; i++) {
		bool huge = false, dirty = false;

		err = still_huge(w, s->hb[i].start, &huge, &dirty);
		if (!err && huge)
			err = found_add(f, s->hb[i].start, dirty);
	}
	return err;
}

/*
 * Was block @a written since the last look? Tracking soft-dirty bits, they say,
 * without a read (@dirty: its bit, read with the blocks still huge; a block
 * split since is asked again); else its contents decide, hashed into *@hash,
 * against the known block @b's (NULL: new since, so written: its contents are
 * new either way). *@herr: the contents could not be read (counted written).
 */
static bool written(struct pm_watch *w, uint64_t a, const struct hblock *b, bool now, bool dirty, uint64_t *hash,
		    int *herr)
{
	struct uffd_state *s = w->priv;

	*herr = 0;
	if (s->sd) {
		if (b && !now && block_dirty(w, a, &dirty) < 0)
			dirty = true;	/* cannot tell: count it */
		return !b || dirty;
	}
	*herr = hb_hash(w, a, hash);
	return !b || *herr || *hash != b->hash;
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
	int err = 0, herr;

	while (!err && (j < f->n || (i < s->nhb && s->hb[i].start < p->end))) {
		bool known = i < s->nhb && s->hb[i].start < p->end;
		uint64_t a = known && (j >= f->n || s->hb[i].start <= f->v[j]) ? s->hb[i].start : f->v[j];
		bool now = j < f->n && f->v[j] == a;

		known = known && s->hb[i].start == a;
		herr = 0;
		if (report) {
			if (written(w, a, known ? &s->hb[i] : NULL, now, now && f->dirty[j], &hash, &herr))
				pmi_watch_emit(w, a, a + pmd, true);
		} else if (!s->sd) {
			herr = hb_hash(w, a, &hash);
		}
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
			notice_huge(w);
		}
		if (now)
			j++;
	}
	return err;
}


/*
 * The huge pages of piece @p: look at them (@report: report the written ones;
 * @reset: take what they are now as the new baseline; @discover: at add, find
 * them all).
 */
int pmi_uffd_huge_pass(struct pm_watch *w, struct piece *p, bool report, bool reset, bool discover)
{
	struct found f = { 0 };
	int err = huge_now(w, p, discover, &f);

	if (!err)
		err = huge_merge(w, p, &f, report, reset);
	free(f.v);
	free(f.dirty);
	return err;
}

/* The huge pages of every piece inside @r alone (pmi_uffd_huge_pass), before the soft-dirty bits are cleared. */
int pmi_uffd_huge_range(struct pm_watch *w, const struct pmi_watch_range *r, bool report, bool reset)
{
	struct uffd_state *s = w->priv;
	size_t i;

	for (i = pmi_uffd_piece_lower(s, r->start); i < s->npieces && s->pieces[i].start < r->end; i++) {
		int err = pmi_uffd_huge_pass(w, &s->pieces[i], report, reset, false);

		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * Once, at the start: can the huge pages left whole be told written by their
 * soft-dirty bits? The kernel must keep them (CONFIG_MEM_SOFT_DIRTY: the probe
 * saw a written page read back soft-dirty) and let us clear the target's:
 * its clear_refs, opened now and kept. Reading one bit per huge page costs
 * next to nothing where reading its 2 MiB costs about 0.3 ms (bench/track_thp.c:
 * 164-230 ms a collect for a 730 MiB heap, 300-570 times the kernel's scan).
 */
void pmi_uffd_sd_start(struct pm_watch *w)
{
	struct uffd_state *s = w->priv;
	const struct pm_features *f;
	char path[64];

	s->refs_fd = -1;
	if ((w->flags & PM_WATCH_NOTHP) || !w->ctx->features.pmd_size)
		return;
	f = pm_ctx_probe(w->ctx, PM_PROBE_SOFT_DIRTY);
	if (!f || f->soft_dirty != PM_YES || pmi_pid_path(w->ctx, path, sizeof(path), w->pid, "clear_refs") < 0)
		return;
	s->refs_fd = pmi_open(w->ctx, path, O_WRONLY);
	s->sd = s->refs_fd >= 0;
}

/*
 * Tracking soft-dirty bits: clear them, for the whole process (clear_refs has
 * no range). With @keep, the known huge blocks outside @fresh (the range being
 * added) are read first, and those written since the last clear are kept for
 * the next collect (a collect read them just before: no @keep).
 */
int pmi_uffd_sd_clear(struct pm_watch *w, bool keep, const struct pmi_watch_range *fresh)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	size_t i;

	for (i = 0; keep && i < s->nhb; i++) {
		uint64_t a = s->hb[i].start;
		bool dirty = true;

		if (fresh && a >= fresh->start && a < fresh->end)
			continue;
		block_dirty(w, a, &dirty);	/* an error counts it written */
		if (dirty)
			pmi_watch_keep(w, a, a + pmd, true);
	}
	if (write(s->refs_fd, "4", 1) != 1)
		return -errno;
	return 0;
}
