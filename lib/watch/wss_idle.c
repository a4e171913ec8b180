/* wss_idle.c - the IDLE working-set method: mark the target's folio heads idle in the page_idle bitmap, read them back. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "wss.h"

#define BITMAP_PATH	"/sys/kernel/mm/page_idle/bitmap"
#define BITMAP_ENV	"PAGEMAP_WSS_BITMAP"	/* a plain file standing in for it, for tests */
#define IO_WORDS	4096u	/* words per coalesced read or write; the bitmap moves 512 per syscall */
#define IO_GAP		8u	/* read or write through gaps this short (writing 0 bits changes nothing) */
#define KPF_LRU		5	/* KPF_LRU, include/uapi/linux/kernel-page-flags.h */

/* Open what IDLE needs: the bitmap and kpageflags. Returns 0 or -errno with the words in @buf. */
static int open_idle(struct pm_target *t, struct pmi_wss_files *files, char *buf, size_t size,
		     const char *why_not_before)
{
	const char *standin = secure_getenv(BITMAP_ENV);
	char path[4096];
	int fd, r;

	if (standin && *standin) {
		fd = pmi_open(t->ctx, standin, O_RDWR);
		if (fd < 0) {
			pmi_wss_say(buf, size, "cannot open %s=%s: %s", BITMAP_ENV, standin, pmi_strerror(-fd));
			return fd;
		}
	} else {
		if ((r = pmi_path(t->ctx, path, sizeof(path), BITMAP_PATH)) < 0)
			return r;
		fd = pmi_open(t->ctx, path, O_RDWR);
		if (fd == -ENOENT) {
			pmi_wss_say(buf, size, "no %s: the kernel is built without CONFIG_IDLE_PAGE_TRACKING", BITMAP_PATH);
			return -EOPNOTSUPP;
		}
		if (fd < 0) {
			pmi_wss_say(buf, size, "cannot open %s: %s%s", BITMAP_PATH, pmi_strerror(-fd),
			    fd == -EACCES ? " (root only)" : "");
			return fd;
		}
	}
	files->bitmap = fd;
	if (t->pfn_view != PM_PFN_VISIBLE) {
		pmi_wss_say(buf, size, "the target's frame numbers are hidden from this reader (needs CAP_SYS_ADMIN)");
		return -EACCES;
	}
	files->kpage = pm_kpage_open(t->ctx);
	r = files->kpage ? pm_kpage_status(files->kpage, PM_KPAGE_FLAGS) : -errno;
	if (r < 0) {
		pmi_wss_say(buf, size, "cannot open /proc/kpageflags (to find large folios' heads): %s", pmi_strerror(-r));
		return r;
	}
	if (standin && *standin)
		pmi_wss_say(buf, size, "idle page tracking emulated: %s=%s stands in for %s (a test: nothing marks "
			       "pages accessed)", BITMAP_ENV, standin, BITMAP_PATH);
	else
		pmi_wss_say(buf, size, "idle page tracking: %s is writable and the target's frame numbers are visible",
		    BITMAP_PATH);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of @v in sorted @a, or -1. */
static ssize_t find_u64(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else if (a[mid] > v)
			hi = mid;
		else
			return (ssize_t)mid;
	}
	return -1;
}

/* Sort and drop repeats; returns the new length. */
static size_t sort_unique(uint64_t *a, size_t n)
{
	size_t i, m = 0;

	qsort(a, n, sizeof(*a), cmp_u64);
	for (i = 0; i < n; i++)
		if (!m || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

static void drop_snapshot(struct pm_wss *w)
{
	free(w->pfns);
	free(w->pfn_head);
	free(w->heads);
	free(w->idle);
	w->pfns = w->pfn_head = w->heads = NULL;
	w->idle = NULL;
	w->npfns = w->nheads = w->nsnap = 0;
}

static int snap_add(struct pm_wss *w, uint64_t va, uint64_t pfn, uint64_t n)
{
	struct snap_run *last = w->nsnap ? &w->snap[w->nsnap - 1] : NULL;

	if (last && last->va + last->n * w->psize == va && last->pfn + last->n == pfn) {
		last->n += n;
		return 0;
	}
	if (w->nsnap == w->snap_cap) {
		size_t cap = w->snap_cap ? w->snap_cap * 2 : 256;
		struct snap_run *s = realloc(w->snap, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->snap = s;
		w->snap_cap = cap;
	}
	w->snap[w->nsnap++] = (struct snap_run){ .va = va, .pfn = pfn, .n = n };
	return 0;
}

/* Resident frames of the target (not the zero page) in address order, and the sorted set of them. */
static int take_snapshot(struct pm_wss *w)
{
	struct pm_walk *walk = pm_walk_new(w->t, 0, UINT64_MAX, PM_WALK_ENTRIES);
	const struct pm_run *run;
	size_t i, k = 0;
	uint64_t j, pages = 0;
	int r;

	if (!walk)
		return -errno;
	while ((r = pm_walk_next(walk, &run)) == 0) {
		uint64_t n = (run->end - run->start) / w->psize;
		if ((run->flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME | PM_PAGE_ZERO)) !=
		    (PM_PAGE_PRESENT | PM_PAGE_FRAME))
			continue;
		if ((r = snap_add(w, run->start, run->pfn, n)) < 0)
			break;
		pages += n;
	}
	pm_walk_free(walk);
	if (r < 0)
		return r;
	w->pfns = malloc((pages ? pages : 1) * sizeof(uint64_t));
	if (!w->pfns)
		return -ENOMEM;
	for (i = 0; i < w->nsnap; i++)
		for (j = 0; j < w->snap[i].n; j++)
			w->pfns[k++] = w->snap[i].pfn + j;
	w->npfns = sort_unique(w->pfns, k);
	return 0;
}

static bool trackable(uint64_t head_flags)
{
	return (head_flags & (1ULL << KPF_LRU)) &&
	       !(head_flags & ((1ULL << PM_KPF_HUGE) | (1ULL << PM_KPF_NOPAGE) | (1ULL << PM_KPF_ZERO_PAGE)));
}

/*
 * The head of the large folio that tail frame @pfn belongs to, read back
 * from kpageflags: folios are naturally aligned and no larger than a PMD,
 * so the head lies in [align_down(pfn, pmd_pages), pfn). NO_HEAD if not found.
 */
static uint64_t find_head(struct pm_wss *w, uint64_t pfn, uint64_t *head_flags)
{
	uint64_t lo = pfn & ~(w->pmd_pages - 1), p;

	if (lo == pfn || pfn - lo > IO_WORDS)
		return NO_HEAD;
	/* words past kpageflags' end read as KPF_NOPAGE: neither head nor tail */
	if (pm_kpage_read(w->f.kpage, lo, (size_t)(pfn - lo), w->io.buf, NULL, NULL) < 0)
		return NO_HEAD;
	for (p = pfn; p-- > lo;) {
		uint64_t f = w->io.buf[p - lo];
		if (f & (1ULL << PM_KPF_COMPOUND_HEAD)) {
			*head_flags = f;
			return p;
		}
		if (!(f & (1ULL << PM_KPF_COMPOUND_TAIL)))
			break;
	}
	return NO_HEAD;
}

/*
 * The folio head of every frame (itself for a small page), NO_HEAD where
 * the kernel cannot track it: only the head of a large folio carries the
 * idle flag, and only folios on an LRU list are tracked (not hugetlb, not
 * the zero page, not a page still in a per-CPU LRU batch).
 */
static int find_heads(struct pm_wss *w)
{
	uint64_t *flags = malloc((w->npfns ? w->npfns : 1) * sizeof(uint64_t));
	size_t i;
	int r;

	w->pfn_head = malloc((w->npfns ? w->npfns : 1) * sizeof(uint64_t));
	if (!flags || !w->pfn_head) {
		free(flags);
		return -ENOMEM;
	}
	r = pmi_kpage_read_sorted(w->f.kpage, PM_KPAGE_FLAGS, w->pfns, w->npfns, flags);
	for (i = 0; r == 0 && i < w->npfns; i++) {
		uint64_t f = flags[i], head = w->pfns[i], hf = f;

		if (f & (1ULL << PM_KPF_COMPOUND_TAIL)) {
			/* Frames are sorted: the previous frame, if adjacent, is in the same folio. */
			if (i && w->pfns[i - 1] == head - 1 &&
			    (flags[i - 1] & (1ULL << PM_KPF_COMPOUND_HEAD | 1ULL << PM_KPF_COMPOUND_TAIL))) {
				w->pfn_head[i] = w->pfn_head[i - 1];
				flags[i] = flags[i - 1];	/* carry the head's flags along the folio */
				continue;
			}
			head = find_head(w, head, &hf);
			flags[i] = hf;
		}
		w->pfn_head[i] = head != NO_HEAD && trackable(hf) ? head : NO_HEAD;
	}
	free(flags);
	return r;
}

/* Mark every tracked head idle: one bitmap word per 64 frames, words coalesced. */
static int mark_idle(struct pm_wss *w)
{
	uint64_t *words, *bits;
	size_t i, n = 0;
	int r;

	w->heads = malloc((w->npfns ? w->npfns : 1) * sizeof(uint64_t));
	if (!w->heads)
		return -ENOMEM;
	for (i = 0; i < w->npfns; i++)
		if (w->pfn_head[i] != NO_HEAD)
			w->heads[n++] = w->pfn_head[i];
	w->nheads = sort_unique(w->heads, n);
	words = malloc((w->nheads ? w->nheads : 1) * sizeof(uint64_t));
	bits = malloc((w->nheads ? w->nheads : 1) * sizeof(uint64_t));
	if (!words || !bits) {
		free(words);
		free(bits);
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < w->nheads; i++) {
		uint64_t word = w->heads[i] / 64, bit = 1ULL << (w->heads[i] % 64);
		if (n && words[n - 1] == word) {
			bits[n - 1] |= bit;
			continue;
		}
		words[n] = word;
		bits[n++] = bit;
	}
	w->reset_start = pmi_wss_now_ns();
	r = pmi_sparse_write(&w->io, w->f.bitmap, words, bits, n);
	w->reset_end = pmi_wss_now_ns();
	free(words);
	free(bits);
	return r;
}

static int start_idle(struct pm_wss *w)
{
	int r;

	drop_snapshot(w);
	if (!w->io.buf && !(w->io.buf = malloc(IO_WORDS * sizeof(uint64_t))))
		return -ENOMEM;
	w->io.span = IO_WORDS;
	w->io.gap = IO_GAP;
	if ((r = take_snapshot(w)) < 0 || (r = find_heads(w)) < 0 || (r = mark_idle(w)) < 0)
		return r;
	return 0;
}

/* The frame virtual address @va had when the window started, or NO_HEAD if it had none. */
static uint64_t snap_pfn(const struct pm_wss *w, uint64_t va)
{
	size_t lo = 0, hi = w->nsnap;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct snap_run *s = &w->snap[mid];
		if (va < s->va)
			hi = mid;
		else if (va >= s->va + s->n * w->psize)
			lo = mid + 1;
		else
			return s->pfn + (va - s->va) / w->psize;
	}
	return NO_HEAD;
}

/* One present page at @va on frame @pfn at the end: accessed, idle or untracked. */
static void count_page(const struct pm_wss *w, struct pm_wss_mapping *rec, uint64_t va, uint64_t pfn)
{
	ssize_t i, h;

	rec->resident += w->psize;
	if (snap_pfn(w, va) != pfn) {	/* faulted in, copied or moved during the window: touched */
		rec->accessed += w->psize;
		return;
	}
	i = find_u64(w->pfns, w->npfns, pfn);
	if (i < 0 || w->pfn_head[i] == NO_HEAD) {
		rec->untracked += w->psize;
		return;
	}
	h = find_u64(w->heads, w->nheads, w->pfn_head[i]);
	if (h < 0 || !w->idle[h])
		rec->accessed += w->psize;
}

/* Walk the target again and sort every present page into accessed, idle or untracked, per mapping. */
static int tally_idle(struct pm_wss *w)
{
	struct pm_walk *walk = pmi_walk_open(w->t, 0, UINT64_MAX, PM_WALK_ENTRIES, PMI_IWALK_ALLMAPS);
	const struct pm_run *run;
	uint64_t va;
	int r;

	if (!walk)
		return -errno;
	while ((r = pm_walk_next(walk, &run)) == 0) {
		struct pm_wss_mapping *rec;
		if (!w->nmaps || w->maps[w->nmaps - 1].start != run->map->start)
			if ((r = pmi_wss_add_mapping(w, run->map)) < 0)
				break;
		rec = &w->maps[w->nmaps - 1];
		/* resident as smaps Rss: the zero page is not, nor a hugetlb mapping's pages */
		if (!(run->flags & PM_PAGE_PRESENT) || (run->flags & PM_PAGE_ZERO) || pmi_map_hugetlb(run->map))
			continue;
		if (!(run->flags & PM_PAGE_FRAME)) {
			rec->resident += run->end - run->start;
			rec->untracked += run->end - run->start;
			continue;
		}
		for (va = run->start; va < run->end; va += w->psize)
			count_page(w, rec, va, run->pfn + (va - run->start) / w->psize);
	}
	pm_walk_free(walk);
	return r == 1 ? 0 : r;
}

static int stop_idle(struct pm_wss *w, uint64_t *read_start, uint64_t *read_end)
{
	uint64_t *words, *vals;
	size_t i, n = 0;
	ssize_t k;
	int r;

	free(w->idle);
	w->idle = calloc(w->nheads ? w->nheads : 1, 1);
	words = malloc((w->nheads ? w->nheads : 1) * sizeof(uint64_t));
	vals = malloc((w->nheads ? w->nheads : 1) * sizeof(uint64_t));
	if (!w->idle || !words || !vals) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nheads; i++)
		if (!n || words[n - 1] != w->heads[i] / 64)
			words[n++] = w->heads[i] / 64;
	*read_start = pmi_wss_now_ns();
	r = pmi_sparse_read(&w->io, w->f.bitmap, words, n, vals, 0);
	*read_end = pmi_wss_now_ns();
	if (r < 0)
		goto out;
	for (i = 0; i < w->nheads; i++) {
		k = find_u64(words, n, w->heads[i] / 64);
		w->idle[i] = k >= 0 && (vals[k] >> (w->heads[i] % 64)) & 1;
	}
	r = tally_idle(w);
out:
	free(words);
	free(vals);
	return r;
}

static void release_idle(struct pm_wss *w)
{
	drop_snapshot(w);
	free(w->snap);
	free(w->io.buf);
}

const struct pmi_wss_backend pmi_wss_backend_idle = {
	.method = PM_WSS_IDLE,
	.name = "idle",
	.unavailable = "idle page tracking unavailable: ",
	.open = open_idle,
	.start = start_idle,
	.stop = stop_idle,
	.release = release_idle,
};
