/* test_walk_frames.c - pm_walk_ignore_frames: runs of alike pages across frames that do not follow on, from any run on, on both back ends. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define NPAGES 64

static const enum pm_backend backends[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };

/*
 * NPAGES private anonymous pages, THP off, touched even pages first, then
 * odd ones: neighbours get frames that do not follow on (each page its own
 * frame run, as in a heap written out of order), with the same flags.
 */
static char *interleaved(size_t ps)
{
	char *p = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, NPAGES * ps, MADV_NOHUGEPAGE);
	for (i = 0; i < NPAGES; i += 2)
		p[(size_t)i * ps] = 1;
	for (i = 1; i < NPAGES; i += 2)
		p[(size_t)i * ps] = 1;
	return p;
}

/* Walk [@a, @a + NPAGES pages) of self; ignore frames after @after runs (-1: never). Returns runs or -errno. */
static int walk(struct pm_ctx *ctx, enum pm_backend b, uint64_t a, uint64_t end, int after, struct pm_run *out, int max)
{
	struct pm_target *t = pm_target_open(ctx, 0);
	struct pm_walk *w;
	const struct pm_run *r;
	int n = 0, rc;

	if (!t)
		return -errno;
	if ((rc = pm_ctx_set_backend(ctx, b)) < 0 || !(w = pm_walk_new(t, a, end, PM_WALK_ENTRIES))) {
		rc = rc < 0 ? rc : -errno;
		pm_target_close(t);
		return rc;
	}
	if (after == 0)
		pm_walk_ignore_frames(w);
	while ((rc = pm_walk_next(w, &r)) == 0) {
		if (n < max)
			out[n] = *r;
		if (++n == after)
			pm_walk_ignore_frames(w);
	}
	pm_walk_free(w);
	pm_target_close(t);
	return rc < 0 ? rc : n;
}

static int ignore_frames(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	const struct pm_features *f = ctx ? pm_ctx_features(ctx) : NULL;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	struct pm_run full[NPAGES], none[NPAGES], mid[NPAGES];
	char *p;
	int b, n, k, i, skipped = 0;

	if (!f || f->pfn_view != PM_PFN_VISIBLE) {
		pm_ctx_free(ctx);
		return t_skip("frame numbers are not visible here (root needed)");
	}
	if (!(p = interleaved(ps))) {
		pm_ctx_free(ctx);
		return t_skip("mmap failed: %s", strerror(errno));
	}
	for (b = 0; b < 2; b++) {
		uint64_t a = (uintptr_t)p, end = a + NPAGES * ps, bytes = 0;

		n = walk(ctx, backends[b], a, end, -1, full, NPAGES);
		if (n == -EOPNOTSUPP && backends[b] == PM_BACKEND_SCAN) {
			skipped++;	/* no PAGEMAP_SCAN on this kernel: the pread back end alone */
			continue;
		}
		CHECK(n > 0);
		if (n < 3) {
			printf("  %s: the frames came out following on (%d runs): nothing to merge\n",
			       pm_backend_name(backends[b]), n);
			skipped++;
			continue;
		}
		for (i = 0; i < n && i < NPAGES; i++) {	/* the pages alike: only their frames cut the runs */
			CHECK_EQ_U64(full[i].flags, full[0].flags);
			bytes += full[i].end - full[i].start;
		}
		CHECK(full[0].flags & PM_PAGE_PRESENT);
		CHECK_EQ_U64(bytes, NPAGES * ps);
		/* From the start: one run, the first page's frame, the same flags. */
		k = walk(ctx, backends[b], a, end, 0, none, NPAGES);
		CHECK_EQ_U64(k, 1);
		CHECK_EQ_U64(none[0].start, a);
		CHECK_EQ_U64(none[0].end, end);
		CHECK_EQ_U64(none[0].flags, full[0].flags);
		CHECK_EQ_U64(none[0].pfn, full[0].pfn);
		/* After two runs: those two as the full walk gave them, then the rest as one. */
		k = walk(ctx, backends[b], a, end, 2, mid, NPAGES);
		CHECK_EQ_U64(k, 3);
		for (i = 0; i < 2; i++) {
			CHECK_EQ_U64(mid[i].start, full[i].start);
			CHECK_EQ_U64(mid[i].end, full[i].end);
			CHECK_EQ_U64(mid[i].pfn, full[i].pfn);
		}
		CHECK_EQ_U64(mid[2].start, full[2].start);
		CHECK_EQ_U64(mid[2].end, end);
		CHECK_EQ_U64(mid[2].flags, full[0].flags);
		CHECK_EQ_U64(mid[2].pfn, full[2].pfn);
	}
	munmap(p, NPAGES * ps);
	pm_ctx_free(ctx);
	if (skipped == 2)
		return t_skip("no back end gave frame runs to merge");
	return T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "walk_ignore_frames", ignore_frames },
	};

	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
