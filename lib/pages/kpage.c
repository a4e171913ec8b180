/* kpage.c - batched reads of /proc/kpageflags, kpagecount and kpagecgroup by PFN runs and by sorted scattered sets. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "sparse.h"

#ifndef KPAGE_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define KPAGE_BATCH	65536	/* words per pread and per lookup batch: 512 KiB per buffer */
#endif
#define KPAGE_GAP	32	/* read through gaps this short rather than issue another pread */
#define NFILES		3

static const char *const kpage_paths[NFILES] = { "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup" };

struct pm_kpage {
	struct pm_ctx *ctx;
	int fd[NFILES];		/* -errno when not readable */
	struct pmi_sparse io;	/* buf: KPAGE_BATCH words, for lookups and sorted reads */
	uint64_t nreads;
	unsigned lookup_files;	/* PM_KPAGE_BIT(file) of the files lookups read */
};

struct pm_kpage *pm_kpage_open(struct pm_ctx *ctx)
{
	struct pm_kpage *k = calloc(1, sizeof(*k));
	char path[4096];
	int i, any = 0;

	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	k->ctx = ctx;
	k->io.ctx = ctx;
	k->lookup_files = PM_KPAGE_BIT(PM_KPAGE_FLAGS) | PM_KPAGE_BIT(PM_KPAGE_COUNT) | PM_KPAGE_BIT(PM_KPAGE_CGROUP);
	for (i = 0; i < NFILES; i++) {
		k->fd[i] = pmi_path(ctx, path, sizeof(path), "%s", kpage_paths[i]);
		if (k->fd[i] == 0)
			k->fd[i] = pmi_open(ctx, path, O_RDONLY);
		any |= k->fd[i] >= 0;
	}
	if (!any) {
		int e = -k->fd[PM_KPAGE_FLAGS];
		free(k);
		errno = e;
		return NULL;
	}
	return k;
}

void pm_kpage_close(struct pm_kpage *k)
{
	int i;

	if (!k)
		return;
	for (i = 0; i < NFILES; i++)
		if (k->fd[i] >= 0)
			close(k->fd[i]);
	free(k->io.buf);
	free(k);
}

int pm_kpage_status(const struct pm_kpage *k, enum pm_kpage_file file)
{
	if (!k || (unsigned)file >= NFILES)
		return -EINVAL;
	return k->fd[file] >= 0 ? 0 : k->fd[file];
}

uint64_t pmi_kpage_nreads(const struct pm_kpage *k)
{
	return k->nreads + k->io.nio;
}

static int any_fd(const struct pm_kpage *k)
{
	int i;

	for (i = 0; i < NFILES; i++)
		if (k->fd[i] >= 0)
			return k->fd[i];
	return -EBADF;
}

/* Is there a readable word at @pfn? 1 yes (in *@w), 0 no, <0 error. */
static int read_word(struct pm_kpage *k, int fd, uint64_t pfn, uint64_t *w)
{
	ssize_t r = pmi_ctx_pread_words(k->ctx, fd, w, 1, pfn);

	k->nreads++;
	return r < 0 ? (int)r : r == 1;
}

static int readable(struct pm_kpage *k, int fd, uint64_t pfn)
{
	uint64_t w;

	return read_word(k, fd, pfn, &w);
}

int pmi_kpage_word(struct pm_kpage *k, enum pm_kpage_file file, uint64_t pfn, uint64_t *w)
{
	if (!k || (unsigned)file >= NFILES)
		return -EINVAL;
	return k->fd[file] < 0 ? k->fd[file] : read_word(k, k->fd[file], pfn, w);
}

uint64_t pm_kpage_start(const struct pm_kpage *k)
{
	return k ? k->ctx->frame_start : 0;
}

int pm_kpage_next_data(struct pm_kpage *k, uint64_t pfn, uint64_t *next)
{
	uint64_t best = UINT64_MAX, n;
	int i, r, open = 0;

	if (!k || !next)
		return -EINVAL;
	for (i = 0; i < NFILES; i++) {
		if (k->fd[i] < 0)
			continue;
		open++;
		if ((r = pmi_ctx_next_data(k->ctx, k->fd[i], pfn, &n)) < 0)
			return r;
		if (n < best)
			best = n;
	}
	*next = open ? best : pfn;
	return 0;
}

int pm_kpage_end(struct pm_kpage *k, uint64_t *end)
{
	int fd = any_fd(k), r;
	uint64_t lo = 0, hi = 1;	/* lo: known readable count; hi: first known unreadable, once found */

	if (fd < 0)
		return fd;
	/* Double until a probe fails: [0, hi) may end anywhere past lo. */
	while ((r = readable(k, fd, hi - 1)) == 1) {
		lo = hi;
		if (hi > (UINT64_MAX >> 4) / 2)
			return -EOVERFLOW;
		hi *= 2;
	}
	if (r < 0)
		return r;
	while (hi - lo > 1) {	/* readable(lo - 1), not readable(hi - 1) */
		uint64_t mid = lo + (hi - lo) / 2;
		r = readable(k, fd, mid - 1);
		if (r < 0)
			return r;
		if (r)
			lo = mid;
		else
			hi = mid;
	}
	*end = lo;
	return 0;
}

/* Read @n words of file @f from @pfn into @out in batches; past the end: @fill. */
static int read_file(struct pm_kpage *k, int f, uint64_t pfn, size_t n, uint64_t *out, uint64_t fill)
{
	size_t done = 0, i;

	if (k->fd[f] < 0)
		return k->fd[f];
	while (done < n) {
		size_t want = n - done < KPAGE_BATCH ? n - done : KPAGE_BATCH;
		ssize_t got = pmi_ctx_pread_words(k->ctx, k->fd[f], out + done, want, pfn + done);

		k->nreads++;
		if (got < 0)
			return (int)got;
		done += (size_t)got;
		if ((size_t)got < want)
			break;
	}
	for (i = done; i < n; i++)
		out[i] = fill;
	return 0;
}

int pm_kpage_read(struct pm_kpage *k, uint64_t pfn, size_t n, uint64_t *flags, uint64_t *counts,
		  uint64_t *cgroups)
{
	uint64_t *outs[NFILES] = { flags, counts, cgroups };
	int f, r;

	if (!k || pfn + n < pfn || pfn + n > UINT64_MAX / sizeof(uint64_t))
		return -EINVAL;
	for (f = 0; f < NFILES; f++) {
		if (!outs[f] || !n)
			continue;
		r = read_file(k, f, pfn, n, outs[f], f == PM_KPAGE_FLAGS ? 1ULL << PM_KPF_NOPAGE : 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A lookup batch entry: a PFN and where it came from. */
struct slot {
	uint64_t pfn;
	size_t idx;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->pfn != y->pfn)
		return x->pfn < y->pfn ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void set_field(struct pm_frame *fr, int f, uint64_t v)
{
	if (f == PM_KPAGE_FLAGS)
		fr->flags = v;
	else if (f == PM_KPAGE_COUNT)
		fr->count = v;
	else
		fr->cgroup = v;
}

/* The scratch of one lookup batch: the slots, their PFNs in sorted order, the words read for them. */
struct batch {
	struct slot *s;
	uint64_t *pfn, *val;
};

/* Sort one batch of @m frames starting at @base, then read each selected file for it, sparsely. */
static int lookup_batch(struct pm_kpage *k, struct pm_frame *frames, size_t base, size_t m, struct batch *b)
{
	size_t i;
	int f, r;

	for (i = 0; i < m; i++) {
		b->s[i].pfn = frames[base + i].pfn;
		b->s[i].idx = base + i;
		frames[base + i].flags = frames[base + i].count = frames[base + i].cgroup = 0;
	}
	qsort(b->s, m, sizeof(*b->s), slot_cmp);
	for (i = 0; i < m; i++)
		b->pfn[i] = b->s[i].pfn;
	for (f = 0; f < NFILES; f++) {
		if (k->fd[f] < 0 || !(k->lookup_files & PM_KPAGE_BIT(f)))
			continue;
		r = pmi_sparse_read(&k->io, k->fd[f], b->pfn, m, b->val, f == PM_KPAGE_FLAGS ? 1ULL << PM_KPF_NOPAGE : 0);
		if (r < 0)
			return r;
		for (i = 0; i < m; i++)
			set_field(&frames[b->s[i].idx], f, b->val[i]);
	}
	return 0;
}

static int io_ready(struct pm_kpage *k)
{
	if (!k->io.buf && !(k->io.buf = malloc(KPAGE_BATCH * sizeof(uint64_t))))
		return -ENOMEM;
	k->io.span = KPAGE_BATCH;
	k->io.gap = KPAGE_GAP;
	return 0;
}

int pmi_kpage_read_sorted(struct pm_kpage *k, enum pm_kpage_file file, const uint64_t *pfns, size_t n,
			 uint64_t *out)
{
	int r;

	if (!k || (unsigned)file >= NFILES)
		return -EINVAL;
	if (k->fd[file] < 0)
		return k->fd[file];
	r = io_ready(k);
	return r < 0 ? r : pmi_sparse_read(&k->io, k->fd[file], pfns, n, out,
					   file == PM_KPAGE_FLAGS ? 1ULL << PM_KPF_NOPAGE : 0);
}

unsigned pmi_kpage_selected(const struct pm_kpage *k)
{
	return k->lookup_files;
}

int pm_kpage_select(struct pm_kpage *k, unsigned files)
{
	if (!k || !files || (files & ~((1u << NFILES) - 1)))
		return -EINVAL;
	k->lookup_files = files;
	return 0;
}

int pm_kpage_lookup(struct pm_kpage *k, struct pm_frame *frames, size_t n)
{
	size_t base, m = n < KPAGE_BATCH ? n : KPAGE_BATCH;
	struct batch b;
	int r = 0;

	if (!k || (!frames && n))
		return -EINVAL;
	if (!n)
		return 0;
	if (io_ready(k) < 0)
		return -ENOMEM;
	b.s = malloc(m * sizeof(*b.s));
	b.pfn = malloc(m * sizeof(*b.pfn));
	b.val = malloc(m * sizeof(*b.val));
	for (base = 0; base < n && r == 0 && b.s && b.pfn && b.val; base += m) {
		size_t cnt = n - base < m ? n - base : m;
		r = lookup_batch(k, frames, base, cnt, &b);
	}
	if (!b.s || !b.pfn || !b.val)
		r = -ENOMEM;
	free(b.s);
	free(b.pfn);
	free(b.val);
	return r;
}
