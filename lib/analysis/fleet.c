/* fleet.c - what an exporter needs: cheap per-process figures from pagemap bits, named groups with a cap, frame classes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cache.h"
#include "pages.h"

/* kpageflags bits the public header does not name (include/uapi/linux/kernel-page-flags.h). */
#define KPF_LRU		5
#define KPF_SLAB	7
#define KPF_BUDDY	10
#define KPF_SWAPBACKED	14
#define KPF_KSM		21
#define KPF_OFFLINE	23
#define KPF_PGTABLE	26

#define BIT(n) (1ULL << (n))

/* ---- the cheap tier: one walk of pagemap, no kpagecount ---- */

static bool path_is(const struct pm_mapping *m, const char *prefix)
{
	size_t n = strlen(prefix);

	return m->path_len >= n && !memcmp(m->path, prefix, n);
}

/* Shared memory: MAP_SHARED|MAP_ANONYMOUS (/dev/zero), memfd, SysV, POSIX (/dev/shm), named anon_shmem. */
static bool map_shmem(const struct pm_mapping *m)
{
	if (path_is(m, "[anon_shmem:") || path_is(m, "/SYSV") || path_is(m, "/memfd:"))
		return true;
	return (m->prot & PM_MAP_SHARED) && (path_is(m, "/dev/zero") || path_is(m, "/dev/shm/"));
}

/* Pure: add one run to @q. */
void pm_quick_add(struct pm_quick *q, const struct pm_run *run)
{
	uint64_t bytes = run->end - run->start;

	if (run->flags & PM_PAGE_SWAPPED)
		q->swap += bytes;
	if (!(run->flags & PM_PAGE_PRESENT) || (run->flags & PM_PAGE_ZERO))
		return;
	if (run->map && pmi_map_hugetlb(run->map)) {
		q->hugetlb += bytes;
		return;
	}
	q->rss += bytes;
	if (!(run->flags & PM_PAGE_FILE))
		q->anon += bytes;
	else if (run->map && map_shmem(run->map))
		q->shmem += bytes;
	else
		q->file += bytes;
	if (run->flags & PM_PAGE_EXCLUSIVE)
		q->uss += bytes;
	if (run->flags & PM_PAGE_THP)
		q->thp += bytes;
}

int pm_quick_process(struct pm_target *t, struct pm_quick *out)
{
	struct pm_walk *w;
	const struct pm_run *run;
	uint64_t page = t->ctx->features.page_size ? t->ctx->features.page_size : 4096, t0, dt;
	bool scan;
	int r;

	memset(out, 0, sizeof(*out));
	w = pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES);
	if (!w)
		return -errno;
	out->uss_known = (pm_walk_known(w) & PM_PAGE_EXCLUSIVE) != 0;
	scan = pm_walk_backend(w) == PM_BACKEND_SCAN;
	for (;;) {
		/* The time of one step bounds the longest read the walker made to refill its batch. */
		t0 = pmi_clock_ns(CLOCK_MONOTONIC);
		r = pm_walk_next(w, &run);
		dt = pmi_clock_ns(CLOCK_MONOTONIC) - t0;
		if (dt > out->longest_ns)
			out->longest_ns = dt;
		if (r != 0)
			break;
		/* The scan back end reads entries only where the kernel found present or swapped pages. */
		if (!scan || (run->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)))
			out->entries += (run->end - run->start) / page;
		pm_quick_add(out, run);
	}
	pm_walk_free(w);
	if (r < 0) {
		memset(out, 0, sizeof(*out));
		return r;
	}
	return 0;
}

/* ---- physical frames by class ---- */

const char *pm_class_name(enum pm_class c)
{
	static const char *const names[PM_CLASS_COUNT] = {
		[PM_CLASS_BUDDY] = "buddy", [PM_CLASS_SLAB] = "slab", [PM_CLASS_PAGETABLE] = "pagetable",
		[PM_CLASS_ZERO] = "zero", [PM_CLASS_HUGETLB] = "hugetlb", [PM_CLASS_KSM] = "ksm",
		[PM_CLASS_ANON_THP] = "anon_thp", [PM_CLASS_ANON] = "anon", [PM_CLASS_SHMEM] = "shmem",
		[PM_CLASS_FILE] = "file", [PM_CLASS_OTHER] = "other",
	};

	return (unsigned)c < PM_CLASS_COUNT ? names[c] : "unknown";
}

/* Pure: the one class of a frame, first match wins; PM_CLASS_COUNT for a hole or an offline frame. */
enum pm_class pm_class_of(uint64_t f)
{
	if (f & (BIT(PM_KPF_NOPAGE) | BIT(KPF_OFFLINE)))
		return PM_CLASS_COUNT;
	if (f & BIT(KPF_BUDDY))
		return PM_CLASS_BUDDY;
	if (f & BIT(KPF_SLAB))
		return PM_CLASS_SLAB;
	if (f & BIT(KPF_PGTABLE))
		return PM_CLASS_PAGETABLE;
	if (f & BIT(PM_KPF_ZERO_PAGE))
		return PM_CLASS_ZERO;
	if (f & BIT(PM_KPF_HUGE))
		return PM_CLASS_HUGETLB;
	if (f & BIT(KPF_KSM))
		return PM_CLASS_KSM;
	if (f & BIT(PM_KPF_ANON))
		return f & BIT(PM_KPF_THP) ? PM_CLASS_ANON_THP : PM_CLASS_ANON;
	if (f & BIT(KPF_SWAPBACKED))	/* swap-backed but not anon: shmem and tmpfs */
		return PM_CLASS_SHMEM;
	if (f & BIT(KPF_LRU))
		return PM_CLASS_FILE;
	return PM_CLASS_OTHER;
}

#define CLASS_BATCH 65536	/* frames per read: 512 KiB of flags */

int pm_classes_read(struct pm_ctx *ctx, struct pm_kpage *k, struct pm_classes *out)
{
	uint64_t *w, end, pfn, n, page = pm_ctx_features(ctx)->page_size;	/* n: a hole may be 2^40 frames */
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	r = pm_kpage_end(k, &end);
	if (r < 0)
		return r;
	w = malloc(CLASS_BATCH * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (pfn = pm_kpage_start(k); r == 0 && pfn < end; pfn += n) {
		uint64_t data, c0 = pm_class_of(0);

		if ((r = pm_kpage_next_data(k, pfn, &data)) < 0)
			break;
		if (data > pfn) {	/* frames a replayed snapshot holds no words of: 0, at once */
			n = data < end ? data - pfn : end - pfn;
			if (c0 != PM_CLASS_COUNT)
				out->bytes[c0] += n * page;
			out->frames += n;
			continue;
		}
		n = end - pfn < CLASS_BATCH ? end - pfn : CLASS_BATCH;
		r = pm_kpage_read(k, pfn, (size_t)n, w, NULL, NULL);
		for (i = 0; r == 0 && i < n; i++) {
			enum pm_class c = pm_class_of(w[i]);

			if (c != PM_CLASS_COUNT)
				out->bytes[c] += page;
		}
		out->frames += n;
	}
	free(w);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

int pm_classes_free(struct pm_ctx *ctx, struct pm_classes *c, uint64_t *free_bytes)
{
	uint64_t mem_free, unflagged;
	int r;

	if (!ctx || !c || !free_bytes)
		return -EINVAL;
	if ((r = pmi_meminfo_read(ctx, "MemFree", &mem_free)) < 0)
		return r;
	/*
	 * The free pages kpageflags did not flag buddy (before Linux 4.10, all but each block's
	 * first) were counted as other; the buddy pages it did flag are free too. MemFree is read
	 * after the walk, so the two may differ by what was allocated or freed meanwhile: other
	 * gives up at most what it holds.
	 */
	unflagged = mem_free > c->bytes[PM_CLASS_BUDDY] ? mem_free - c->bytes[PM_CLASS_BUDDY] : 0;
	if (unflagged > c->bytes[PM_CLASS_OTHER])
		unflagged = c->bytes[PM_CLASS_OTHER];
	c->bytes[PM_CLASS_OTHER] -= unflagged;
	c->bytes[PM_CLASS_BUDDY] = 0;
	*free_bytes = mem_free;
	return 0;
}
