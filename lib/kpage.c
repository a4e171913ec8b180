/* kpage.c - batched reads of /proc/kpageflags, kpagecount and kpagecgroup by PFN runs and by sorted scattered sets. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#ifndef KPAGE_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define KPAGE_BATCH	65536	/* words per pread and per lookup batch: 512 KiB per buffer */
#endif
#define KPAGE_GAP	32	/* read through gaps this short rather than issue another pread */
#define NFILES		3

static const char *const kpage_paths[NFILES] = { "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup" };

struct pm_kpage {
	struct pm_ctx *ctx;
	int fd[NFILES];		/* -errno when not readable */
	uint64_t *buf;		/* KPAGE_BATCH words, for lookups */
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
	k->lookup_files = PM_KPAGE_BIT(PM_KPAGE_FLAGS) | PM_KPAGE_BIT(PM_KPAGE_COUNT) | PM_KPAGE_BIT(PM_KPAGE_CGROUP);
	for (i = 0; i < NFILES; i++) {
		k->fd[i] = pm_path(ctx, path, sizeof(path), "%s", kpage_paths[i]);
		if (k->fd[i] == 0)
			k->fd[i] = pm_open(ctx, path, O_RDONLY);
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
	free(k->buf);
	free(k);
}

int pm_kpage_status(const struct pm_kpage *k, enum pm_kpage_file file)
{
	if (!k || (unsigned)file >= NFILES)
		return -EINVAL;
	return k->fd[file] >= 0 ? 0 : k->fd[file];
}

uint64_t pm_kpage_nreads(const struct pm_kpage *k)
{
	return k->nreads;
}

static int any_fd(const struct pm_kpage *k)
{
	int i;

	for (i = 0; i < NFILES; i++)
		if (k->fd[i] >= 0)
			return k->fd[i];
	return -EBADF;
}

/* Is there a readable word at @pfn? 1 yes, 0 no, <0 error. */
static int readable(struct pm_kpage *k, int fd, uint64_t pfn)
{
	uint64_t w;
	ssize_t r = pm_pread_words(fd, &w, 1, pfn);

	k->nreads++;
	return r < 0 ? (int)r : r == 1;
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
		ssize_t got = pm_pread_words(k->fd[f], out + done, want, pfn + done);

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

/* Read one run [s[0].pfn, s[m-1].pfn] of sorted slots from every open file into @frames. */
static int lookup_run(struct pm_kpage *k, struct pm_frame *frames, const struct slot *s, size_t m)
{
	uint64_t first = s[0].pfn;
	size_t len = (size_t)(s[m - 1].pfn - first + 1), i;
	int f, r;

	for (f = 0; f < NFILES; f++) {
		if (k->fd[f] < 0 || !(k->lookup_files & PM_KPAGE_BIT(f)))
			continue;
		r = read_file(k, f, first, len, k->buf, f == PM_KPAGE_FLAGS ? 1ULL << PM_KPF_NOPAGE : 0);
		if (r < 0)
			return r;
		for (i = 0; i < m; i++)
			set_field(&frames[s[i].idx], f, k->buf[s[i].pfn - first]);
	}
	return 0;
}

/* Sort one batch of @m frames starting at @base, then read it run by run. */
static int lookup_batch(struct pm_kpage *k, struct pm_frame *frames, size_t base, size_t m, struct slot *s)
{
	size_t i, start = 0;
	int r;

	for (i = 0; i < m; i++) {
		s[i].pfn = frames[base + i].pfn;
		s[i].idx = base + i;
		frames[base + i].flags = frames[base + i].count = frames[base + i].cgroup = 0;
	}
	qsort(s, m, sizeof(*s), slot_cmp);
	for (i = 1; i <= m; i++) {
		if (i < m && s[i].pfn - s[start].pfn < KPAGE_BATCH && s[i].pfn - s[i - 1].pfn <= KPAGE_GAP)
			continue;
		r = lookup_run(k, frames, s + start, i - start);
		if (r < 0)
			return r;
		start = i;
	}
	return 0;
}

unsigned pm_kpage_selected(const struct pm_kpage *k)
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
	struct slot *s;
	int r = 0;

	if (!k || (!frames && n))
		return -EINVAL;
	if (!n)
		return 0;
	if (!k->buf && !(k->buf = malloc(KPAGE_BATCH * sizeof(uint64_t))))
		return -ENOMEM;
	s = malloc(m * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (base = 0; base < n && r == 0; base += m) {
		size_t cnt = n - base < m ? n - base : m;
		r = lookup_batch(k, frames, base, cnt, s);
	}
	free(s);
	return r;
}
