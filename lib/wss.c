/* wss.c - working-set size over a window: idle page tracking per frame, or clear_refs 1 and smaps Referenced. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "smaps.h"
#include "sparse.h"

#define BITMAP_PATH	"/sys/kernel/mm/page_idle/bitmap"
#define BITMAP_ENV	"PAGEMAP_WSS_BITMAP"	/* a plain file standing in for it, for tests */
#define IO_WORDS	4096u	/* words per coalesced read or write; the bitmap moves 512 per syscall */
#define IO_GAP		8u	/* read or write through gaps this short (writing 0 bits changes nothing) */
#define KPF_LRU		5	/* KPF_LRU, include/uapi/linux/kernel-page-flags.h */
#define NO_HEAD		UINT64_MAX

/* IDLE: a run of present pages at the start, frames pfn, pfn + 1, ... */
struct snap_run {
	uint64_t va, pfn, n;
};

struct pm_wss {
	struct pm_target *t;
	enum pm_wss_method method;
	char reason[256];
	int bitmap_fd, clear_fd;	/* -1 when the method does not use them */
	struct pm_kpage *kpage;		/* IDLE: kpageflags, to find large folios' heads */
	uint64_t psize, pmd_pages;

	bool started, stopped;
	uint64_t reset_start, reset_end;

	/* IDLE, from pm_wss_start: the frames seen and the folio heads marked idle. */
	struct snap_run *snap;
	size_t nsnap, snap_cap;
	uint64_t *pfns, *pfn_head;	/* sorted unique frames; head of each, NO_HEAD if untracked */
	size_t npfns;
	uint64_t *heads;		/* sorted unique heads marked idle */
	uint8_t *idle;			/* per head, read by pm_wss_stop */
	size_t nheads;
	struct pm_sparse io;		/* on the bitmap; buf: IO_WORDS words */

	struct pm_wss_mapping *maps;	/* results of the last stop; paths owned */
	size_t nmaps, maps_cap, next;
	struct pm_wss_summary sum;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *pm_wss_method_name(enum pm_wss_method method)
{
	switch (method) {
	case PM_WSS_AUTO:
		return "auto";
	case PM_WSS_IDLE:
		return "idle";
	case PM_WSS_REFERENCED:
		return "referenced";
	}
	return "unknown";
}

static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Open what IDLE needs into fds[0] (bitmap) and *@kpage. Returns 0 or -errno with the words in @buf. */
static int open_idle(struct pm_target *t, int *fds, struct pm_kpage **kpage, char *buf, size_t size)
{
	const char *standin = secure_getenv(BITMAP_ENV);
	char path[4096];
	int fd, r;

	if (standin && *standin) {
		fd = pm_open(t->ctx, standin, O_RDWR);
		if (fd < 0) {
			say(buf, size, "cannot open %s=%s: %s", BITMAP_ENV, standin, strerror(-fd));
			return fd;
		}
	} else {
		if ((r = pm_path(t->ctx, path, sizeof(path), BITMAP_PATH)) < 0)
			return r;
		fd = pm_open(t->ctx, path, O_RDWR);
		if (fd == -ENOENT) {
			say(buf, size, "no %s: the kernel is built without CONFIG_IDLE_PAGE_TRACKING", BITMAP_PATH);
			return -EOPNOTSUPP;
		}
		if (fd < 0) {
			say(buf, size, "cannot open %s: %s%s", BITMAP_PATH, strerror(-fd),
			    fd == -EACCES ? " (root only)" : "");
			return fd;
		}
	}
	fds[0] = fd;
	if (t->pfn_view != PM_PFN_VISIBLE) {
		say(buf, size, "the target's frame numbers are hidden from this reader (needs CAP_SYS_ADMIN)");
		return -EACCES;
	}
	*kpage = pm_kpage_open(t->ctx);
	r = *kpage ? pm_kpage_status(*kpage, PM_KPAGE_FLAGS) : -errno;
	if (r < 0) {
		say(buf, size, "cannot open /proc/kpageflags (to find large folios' heads): %s", strerror(-r));
		return r;
	}
	if (standin && *standin)
		say(buf, size, "idle page tracking emulated: %s=%s stands in for %s (a test: nothing marks "
			       "pages accessed)", BITMAP_ENV, standin, BITMAP_PATH);
	else
		say(buf, size, "idle page tracking: %s is writable and the target's frame numbers are visible",
		    BITMAP_PATH);
	return 0;
}

/* Open the target's clear_refs into fds[2]. Returns 0 or -errno with the words in @buf. */
static int open_referenced(struct pm_target *t, int *fds, char *buf, size_t size, const char *why_not_idle)
{
	char path[4096];
	int fd, r;

	if ((r = pm_pid_path(t->ctx, path, sizeof(path), t->pid, "clear_refs")) < 0)
		return r;
	fd = pm_open(t->ctx, path, O_WRONLY);
	if (fd < 0) {
		if (fd == -ENOENT)	/* clear_refs exists since 2.6.22: the process went */
			fd = -ESRCH;
		say(buf, size, "cannot open %s: %s%s", path, strerror(-fd),
		    fd == -EACCES ? " (only the process's owner or root may write it)" : "");
		return fd;
	}
	fds[2] = fd;
	if (why_not_idle)
		say(buf, size, "clear_refs 1 and smaps Referenced; idle page tracking unavailable: %s", why_not_idle);
	else
		say(buf, size, "clear_refs 1 and smaps Referenced (chosen by the caller)");
	return 0;
}

static void close_fds(int *fds, struct pm_kpage **kpage)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	pm_kpage_close(*kpage);
	*kpage = NULL;
}

/* Decide the method and open its files into fds (bitmap, unused, clear_refs) and *@kpage. */
static int choose(struct pm_target *t, enum pm_wss_method *m, int *fds, struct pm_kpage **kpage, char *buf,
		  size_t size)
{
	char idle_why[256];
	uint64_t e;
	ssize_t n;
	int r;

	fds[0] = fds[1] = fds[2] = -1;
	*kpage = NULL;
	if (*m != PM_WSS_AUTO && *m != PM_WSS_IDLE && *m != PM_WSS_REFERENCED) {
		say(buf, size, "unknown method %d", (int)*m);
		return -EINVAL;
	}
	if (!t->ctx->live) {
		say(buf, size, "a window needs a live process, not a replayed root");
		return -EOPNOTSUPP;
	}
	n = pm_target_read(t, 0, &e, 1);
	if (n < 0) {
		say(buf, size, "the target has no memory: %s", strerror((int)-n));
		return (int)n;
	}
	if (*m != PM_WSS_REFERENCED) {
		r = open_idle(t, fds, kpage, idle_why, sizeof(idle_why));
		if (r == 0 || *m == PM_WSS_IDLE) {
			say(buf, size, "%s%s", r ? "idle page tracking unavailable: " : "", idle_why);
			if (r == 0)
				*m = PM_WSS_IDLE;
			else
				close_fds(fds, kpage);
			return r;
		}
		close_fds(fds, kpage);
		*m = PM_WSS_REFERENCED;
		r = open_referenced(t, fds, buf, size, idle_why);
	} else {
		r = open_referenced(t, fds, buf, size, NULL);
	}
	if (r < 0)
		close_fds(fds, kpage);
	return r;
}

int pm_wss_explain(struct pm_target *t, enum pm_wss_method method, char *buf, size_t size)
{
	struct pm_kpage *kpage;
	int fds[3], r = choose(t, &method, fds, &kpage, buf, size);

	close_fds(fds, &kpage);
	return r;
}

struct pm_wss *pm_wss_new(struct pm_target *t, enum pm_wss_method method)
{
	struct pm_wss *w = calloc(1, sizeof(*w));
	const struct pm_features *f;
	int fds[3], r;

	if (!w)
		return NULL;
	f = pm_ctx_features(t->ctx);
	r = f ? choose(t, &method, fds, &w->kpage, w->reason, sizeof(w->reason)) : -ENOMEM;
	if (r < 0) {
		free(w);
		errno = -r;
		return NULL;
	}
	w->t = t;
	w->method = method;
	w->bitmap_fd = fds[0];
	w->clear_fd = fds[2];
	w->psize = f->page_size;
	w->pmd_pages = f->pmd_size / f->page_size;
	w->io.span = IO_WORDS;
	w->io.gap = IO_GAP;
	return w;
}

static void drop_results(struct pm_wss *w)
{
	size_t i;

	for (i = 0; i < w->nmaps; i++)
		free((char *)w->maps[i].path);
	w->nmaps = w->next = 0;
	w->stopped = false;
	memset(&w->sum, 0, sizeof(w->sum));
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

void pm_wss_free(struct pm_wss *w)
{
	int fds[3];

	if (!w)
		return;
	drop_results(w);
	drop_snapshot(w);
	fds[0] = w->bitmap_fd;
	fds[1] = -1;
	fds[2] = w->clear_fd;
	close_fds(fds, &w->kpage);
	free(w->snap);
	free(w->maps);
	free(w->io.buf);
	free(w);
}

enum pm_wss_method pm_wss_method(const struct pm_wss *w)
{
	return w->method;
}

const char *pm_wss_reason(const struct pm_wss *w)
{
	return w->reason;
}

/* ---- sorted sets ------------------------------------------------------------ */

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

/* ---- IDLE: snapshot, heads, marking --------------------------------------- */

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
	if (pm_kpage_read(w->kpage, lo, (size_t)(pfn - lo), w->io.buf, NULL, NULL) < 0)
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
	r = pm_kpage_read_sorted(w->kpage, PM_KPAGE_FLAGS, w->pfns, w->npfns, flags);
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
	w->reset_start = now_ns();
	r = pm_sparse_write(&w->io, w->bitmap_fd, words, bits, n);
	w->reset_end = now_ns();
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
	if ((r = take_snapshot(w)) < 0 || (r = find_heads(w)) < 0 || (r = mark_idle(w)) < 0)
		return r;
	return 0;
}

static int start_referenced(struct pm_wss *w)
{
	ssize_t n;

	w->reset_start = now_ns();
	do
		n = write(w->clear_fd, "1", 1);
	while (n < 0 && errno == EINTR);
	w->reset_end = now_ns();
	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -EIO;
}

/*
 * The kernel takes clear_refs from a process without memory and does
 * nothing, a zombie's smaps reads empty, a reaped one's is gone (ENOENT):
 * ask the target's pagemap fd, tied to its mm, and turn @r into -ESRCH.
 */
static int target_check(struct pm_wss *w, int r)
{
	uint64_t e;
	ssize_t n = pm_target_read(w->t, 0, &e, 1);

	if (n == -ESRCH || (r == 0 && n < 0))
		return n < 0 ? (int)n : r;
	return r;
}

int pm_wss_start(struct pm_wss *w)
{
	int r;

	drop_results(w);
	w->started = false;
	r = target_check(w, w->method == PM_WSS_IDLE ? start_idle(w) : start_referenced(w));
	w->started = r == 0;
	return r;
}

/* ---- results ---------------------------------------------------------------- */

/* A new record for mapping @m (its path copied). */
static int add_mapping(struct pm_wss *w, const struct pm_mapping *m)
{
	struct pm_wss_mapping *rec;
	char *path;

	if (w->nmaps == w->maps_cap) {
		size_t cap = w->maps_cap ? w->maps_cap * 2 : 64;
		struct pm_wss_mapping *p = realloc(w->maps, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->maps = p;
		w->maps_cap = cap;
	}
	path = strndup(m->path_len ? m->path : "", m->path_len);
	if (!path)
		return -ENOMEM;
	rec = &w->maps[w->nmaps++];
	memset(rec, 0, sizeof(*rec));
	rec->start = m->start;
	rec->end = m->end;
	memcpy(rec->perms, m->perms, sizeof(rec->perms));
	rec->kind = m->kind;
	rec->path = path;
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
	struct pm_walk *walk = pm_walk_new(w->t, 0, UINT64_MAX, PM_WALK_ENTRIES | PM_WALK_ALLMAPS);
	const struct pm_run *run;
	uint64_t va;
	int r;

	if (!walk)
		return -errno;
	while ((r = pm_walk_next(walk, &run)) == 0) {
		struct pm_wss_mapping *rec;
		if (!w->nmaps || w->maps[w->nmaps - 1].start != run->map->start)
			if ((r = add_mapping(w, run->map)) < 0)
				break;
		rec = &w->maps[w->nmaps - 1];
		if (!(run->flags & PM_PAGE_PRESENT) || (run->flags & PM_PAGE_ZERO))
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
	*read_start = now_ns();
	r = pm_sparse_read(&w->io, w->bitmap_fd, words, n, vals, 0);
	*read_end = now_ns();
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

/* One smaps record: a result with its Rss and Referenced. */
static int smaps_add(void *arg, const struct pm_smaps_rec *rec)
{
	struct pm_wss *w = arg;
	int r;

	if (!rec->mapped)	/* fields before any mapping line */
		return 0;
	if ((r = add_mapping(w, &rec->map)) < 0)
		return r;
	w->maps[w->nmaps - 1].resident = rec->val[PM_SMAPS_RSS];
	w->maps[w->nmaps - 1].accessed = rec->val[PM_SMAPS_REFERENCED];
	return 0;
}

/* Read ROOT/proc/PID/smaps: a record per mapping with Rss and Referenced. */
static int read_smaps(struct pm_wss *w)
{
	FILE *f;
	int r = pm_smaps_open(w->t, &f);

	if (r < 0)
		return r;
	r = pm_smaps_parse_file(f, smaps_add, w);
	fclose(f);
	return r;
}

static int stop_referenced(struct pm_wss *w, uint64_t *read_start, uint64_t *read_end)
{
	int r;

	*read_start = now_ns();
	r = read_smaps(w);
	*read_end = now_ns();
	return r;
}

static void summarize(struct pm_wss *w, uint64_t read_start, uint64_t read_end)
{
	size_t i;

	w->sum.method = w->method;
	w->sum.window_ns = read_start > w->reset_end ? read_start - w->reset_end : 0;
	w->sum.window_max_ns = read_end - w->reset_start;
	w->sum.mappings = w->nmaps;
	for (i = 0; i < w->nmaps; i++) {
		w->sum.resident += w->maps[i].resident;
		w->sum.accessed += w->maps[i].accessed;
		w->sum.untracked += w->maps[i].untracked;
	}
}

int pm_wss_stop(struct pm_wss *w, struct pm_wss_summary *out)
{
	uint64_t read_start = 0, read_end = 0;
	int r;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!w->started)
		return -EINVAL;
	drop_results(w);
	r = w->method == PM_WSS_IDLE ? stop_idle(w, &read_start, &read_end) :
				       stop_referenced(w, &read_start, &read_end);
	/* An exited target reads as an empty smaps or frees its frames (idle 0): never report that. */
	r = target_check(w, r);
	if (r < 0) {
		drop_results(w);
		return r;
	}
	summarize(w, read_start, read_end);
	w->stopped = true;
	if (out)
		*out = w->sum;
	return 0;
}

int pm_wss_next(struct pm_wss *w, const struct pm_wss_mapping **out)
{
	if (!w->stopped)
		return -EINVAL;
	if (w->next >= w->nmaps)
		return 1;
	*out = &w->maps[w->next++];
	return 0;
}
