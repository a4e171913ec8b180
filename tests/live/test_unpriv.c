/* test_unpriv.c - what an unprivileged reader gets: hidden frames, no PFN-based THP for pread, EACCES on root's processes, sums still equal smaps; run by tests/live/unpriv.sh. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"
#include "runs.h"
#include "smaps.h"

static const enum pm_backend backends[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
static const unsigned wflags[2] = { 0, PM_WALK_ENTRIES };

static struct pm_ctx *ctx;
static const struct pm_features *feat;

static void free_ctx(void)
{
	pm_ctx_free(ctx);
}

static const char *need_unpriv(void)
{
	if (geteuid() == 0)
		return "run through tests/live/unpriv.sh (as uid 65534)";
	if (!ctx) {
		ctx = pm_ctx_new(NULL);
		if (!ctx)
			return "pm_ctx_new failed";
		atexit(free_ctx);
	}
	feat = pm_ctx_features(ctx);
	return feat ? NULL : "pm_ctx_features failed";
}

static int unpriv_features(void)
{
	const char *why = need_unpriv();

	if (why)
		return t_skip("%s", why);
	CHECK(!feat->privileged);
	CHECK_EQ_U64(feat->pfn_view, PM_PFN_HIDDEN);
	CHECK_EQ_U64(feat->zero_pfn, 0);
	CHECK_EQ_U64(feat->layout, PM_LAYOUT_CURRENT);
	CHECK_EQ_U64(feat->pagemap_error, 0);
	CHECK(!feat->kpageflags.readable);
	CHECK_EQ_U64(feat->kpageflags.error, EACCES);
	return T_PASS;
}

/* Walks of an own child: no frames anywhere, pread cannot know THP (it needs PFNs), scan can; smaps agrees. */
static int unpriv_walk(void)
{
	struct layout_opts o = { .anon_pages = 16, .memfd_pages = 8, .thp_count = 2, .cow_pages = 16,
				 .cow_written = 5, .guard_pages = 8, .guard_count = 3, .uffd_pages = 16,
				 .uffd_populated = 10, .zero_pages = 8 };
	const char *why = need_unpriv();
	struct runs rs[2][2];
	struct pm_target *t;
	struct layout l;
	int b, k, r;

	if (why)
		return t_skip("%s", why);
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		return T_FAIL;
	}
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_U64(pm_target_pfn_view(t), PM_PFN_HIDDEN);
	memset(rs, 0, sizeof(rs));
	for (b = 0; t && b < 2; b++) {
		for (k = 0; k < 2; k++) {
			const struct runs *x = &rs[b][k];
			const struct lay_region *thp = &l.r[LR_THP], *cow = &l.r[LR_COW];
			size_t i, pfns = 0;

			if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
				continue;
			CHECK_EQ_U64(-runs_collect_all(t, ctx, backends[b], wflags[k], &rs[b][k]), 0);
			CHECK_EQ_U64(runs_check_shape(x, l.page_size), 0);
			CHECK_EQ_U64(runs_vs_smaps(x, l.pid), 0);
			CHECK_EQ_U64(x->known & PM_PAGE_FRAME, 0);
			CHECK_EQ_U64(runs_bytes(x, 0, UINT64_MAX, PM_PAGE_FRAME, 0), 0);
			for (i = 0; i < x->n; i++)
				pfns += x->v[i].pfn || x->v[i].swap_offset || x->v[i].swap_type;
			CHECK_EQ_U64(pfns, 0);
			if (backends[b] == PM_BACKEND_PREAD) {
				CHECK_EQ_U64(x->known & PM_PAGE_THP, 0);
				CHECK_EQ_U64(x->known & PM_PAGE_ZERO, 0);
			} else {
				CHECK_EQ_U64(x->known & PM_PAGE_THP, PM_PAGE_THP);
				if (thp->start && !thp->error)
					CHECK_EQ_U64(runs_usage(x, thp->start, thp->end).thp, thp->end - thp->start);
			}
			/* Exclusivity needs no privilege: the fork-shared pages are told apart. */
			if (x->known & PM_PAGE_EXCLUSIVE)
				CHECK_EQ_U64(runs_usage(x, cow->start, cow->end).exclusive, 5ULL * l.page_size);
		}
	}
	/* Identical on every flag both know, so pread's present pages are the scan's, zero pages included. */
	if (t && kernel_has_scan())
		for (k = 0; k < 2; k++)
			CHECK_EQ_U64(runs_compare_settled(t, ctx, wflags[k], &rs[0][k], &rs[1][k], 3), 0);
	for (b = 0; b < 2; b++)
		for (k = 0; k < 2; k++)
			runs_free(&rs[b][k]);
	pm_target_close(t);
	layout_stop(&l);
	return T_PASS;
}

/* A root-owned process (the wrapper's shell, or pid 1): pm_target_open says EACCES. */
static int unpriv_denied(void)
{
	const char *why = need_unpriv(), *env = getenv("PAGEMAP_ROOT_PID");
	pid_t pid = env && *env ? (pid_t)strtol(env, NULL, 10) : 1;
	struct pm_target *t;
	char path[64];
	struct stat st;

	if (why)
		return t_skip("%s", why);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0 || st.st_uid != 0)
		return t_skip("no root-owned process to try (pid %d)", (int)pid);
	errno = 0;
	t = pm_target_open(ctx, pid);
	CHECK(t == NULL);
	CHECK_EQ_U64(errno, EACCES);
	pm_target_close(t);
	CHECK_EQ_U64(pm_proc_state(ctx, pid), PM_PROC_RUNNING);
	return T_PASS;
}

T_MAIN(T(unpriv_features), T(unpriv_walk), T(unpriv_denied))
