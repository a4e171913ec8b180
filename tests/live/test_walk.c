/* test_walk.c - live walks of a child with a known layout: both back ends vs smaps and each other, exact per-region state, soft-dirty, exit/exec races, bounded memory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../../lib/base/compat.h"
#include "../harness.h"
#include "layout.h"
#include "runs.h"
#include "smaps.h"

/* Sizes (pages unless said); the environment can shrink them for slow machines. */
#define SPARSE_PAGES_DEFAULT	4096	/* > 2048: one PAGEMAP_SCAN call returns > 512 regions */
#define BIG_MIB_DEFAULT		1024

enum { B_PREAD, B_SCAN, NB };
enum { F_PLAIN, F_ENTRIES, NF };
static const enum pm_backend backends[NB] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
static const unsigned wflags[NF] = { 0, PM_WALK_ENTRIES };

static struct pm_ctx *ctx;
static const struct pm_features *feat;
static uint64_t ps;

/* The main layout, set up by the first test that needs it and walked once per back end and flag set. */
static struct layout main_l = { .sock = -1 };
static struct pm_target *main_t;
static struct runs main_runs[NB][NF];
static int main_runs_err[NB][NF];
static int main_err = 1;	/* 1: not set up yet */

/* Built with AddressSanitizer: GCC says so by __SANITIZE_ADDRESS__, clang by __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define PM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PM_ASAN 1
#endif
#endif
#ifndef PM_ASAN
#define PM_ASAN 0
#endif

#define CHECK_KNOWN(r, flag, a, b)                   \
	do {                                         \
		if ((r)->known & (flag))             \
			CHECK_EQ_U64(a, b);          \
	} while (0)

static unsigned env_uint(const char *name, unsigned def)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : def;
}

static bool init_ctx(void)
{
	if (!ctx) {
		ctx = pm_ctx_new(NULL);
		if (!ctx)
			return false;
		feat = pm_ctx_features(ctx);
		ps = feat->page_size;
	}
	return feat != NULL;
}

static void teardown_main(void)
{
	int b, f;

	for (b = 0; b < NB; b++)
		for (f = 0; f < NF; f++)
			runs_free(&main_runs[b][f]);
	pm_target_close(main_t);
	main_t = NULL;
	layout_stop(&main_l);
	pm_ctx_free(ctx);
	ctx = NULL;
}

static int setup_main(void)
{
	struct layout_opts o = {
		.anon_pages = 16, .file_pages = 8, .memfd_pages = 8, .thp_count = 2,
		.cow_pages = 16, .cow_written = 5, .guard_pages = 8, .guard_count = 3,
		.uffd_pages = 16, .uffd_populated = 10, .protnone_pages = 4, .zero_pages = 8, .hzero_count = 1,
		.sparse_pages = env_uint("PAGEMAP_TEST_SPARSE_PAGES", SPARSE_PAGES_DEFAULT),
	};
	int b, f;

	if (main_err <= 0)
		return main_err;
	if (!init_ctx())
		return main_err = -ENOMEM;
	atexit(teardown_main);
	main_err = layout_start(&o, &main_l);
	if (main_err < 0)
		return main_err;
	main_t = pm_target_open(ctx, main_l.pid);
	if (!main_t) {
		main_err = -errno;
		printf("  pm_target_open(%d): %s\n", (int)main_l.pid, strerror(-main_err));
		return main_err;
	}
	for (b = 0; b < NB; b++)
		for (f = 0; f < NF; f++)
			main_runs_err[b][f] = runs_collect_all(main_t, ctx, backends[b], wflags[f], &main_runs[b][f]);
	return 0;
}

/* The running kernel's release, for skip reasons. */
static const char *release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u) < 0)
		snprintf(u.release, sizeof(u.release), "?");
	return u.release;
}

/* Was walk [b][f] possible? A kernel without PAGEMAP_SCAN cannot use the scan back end: that is not a failure. */
static bool walk_ok(int b, int f)
{
	int e = main_runs_err[b][f];

	if (e == -EOPNOTSUPP && backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
		return false;
	if (e < 0) {
		printf("  walk %s: %s\n", main_runs[b][f].desc, strerror(-e));
		CHECK(e == 0);
		return false;
	}
	return true;
}

/* Run @check on region @g for every back end and flag set; on a failure, say which walk and dump its runs. */
static void check_each_walk(const struct lay_region *g, void (*check)(const struct runs *, const struct lay_region *))
{
	int b, f;

	for (b = 0; b < NB; b++) {
		for (f = 0; f < NF; f++) {
			int before = t_failed_checks;
			if (!walk_ok(b, f))
				continue;
			check(&main_runs[b][f], g);
			if (t_failed_checks != before) {
				printf("  ^ with the %s walk (known flags %#x)\n", main_runs[b][f].desc,
				       main_runs[b][f].known);
				runs_dump(&main_runs[b][f], g->start, g->end);
			}
		}
	}
}

/* check_each_walk on region @reg of the main child, skipped when the child could not set it up. */
static int for_each_walk(enum lay_id reg, void (*check)(const struct runs *, const struct lay_region *))
{
	const struct lay_region *g;

	if (setup_main() < 0)
		return T_FAIL;
	g = &main_l.r[reg];
	if (!g->start || g->error)
		return t_skip("the child could not set up its %s region: %s", layout_region_name(reg),
			      layout_region_why(&main_l, reg));
	check_each_walk(g, check);
	return T_PASS;
}

/* ---- the whole address space -------------------------------------- */

/* Every walk tiles every mapping, and its per-mapping sums equal the kernel's smaps. */
static int walk_vs_smaps(void)
{
	int b, f;

	if (setup_main() < 0)
		return T_FAIL;
	for (b = 0; b < NB; b++) {
		for (f = 0; f < NF; f++) {
			const struct runs *r = &main_runs[b][f];
			if (!walk_ok(b, f))
				continue;
			CHECK(r->n > 0);
			CHECK_EQ_U64(runs_check_shape(r, (unsigned)ps), 0);
			CHECK_EQ_U64(runs_vs_smaps(r, main_l.pid), 0);
		}
	}
	/* The scan back end with entries knows as much as pread with visible PFNs, bar PM_PAGE_FRAME's use. */
	if (walk_ok(B_SCAN, F_ENTRIES) && feat->pfn_view == PM_PFN_VISIBLE)
		CHECK_EQ_U64(main_runs[B_SCAN][F_ENTRIES].known & PM_PAGE_EXCLUSIVE, PM_PAGE_EXCLUSIVE);
	return T_PASS;
}

/* pread and PAGEMAP_SCAN give the same runs, restricted to the flags both know, with and without entries. */
static int backends_agree(void)
{
	struct runs each[NB];
	int f, b;

	memset(each, 0, sizeof(each));
	if (setup_main() < 0)
		return T_FAIL;
	if (!kernel_has_scan())
		return t_skip("Linux %s has no PAGEMAP_SCAN (6.7+): only the pread back end", release());
	for (f = 0; f < NF; f++)
		if (walk_ok(B_PREAD, f) && walk_ok(B_SCAN, f))
			CHECK_EQ_U64(runs_compare(&main_runs[B_PREAD][f], &main_runs[B_SCAN][f]), 0);
	/* Entries only add knowledge: the plain scan walk agrees with the entries one. */
	if (walk_ok(B_SCAN, F_PLAIN) && walk_ok(B_SCAN, F_ENTRIES))
		CHECK_EQ_U64(runs_compare(&main_runs[B_SCAN][F_PLAIN], &main_runs[B_SCAN][F_ENTRIES]), 0);
	/*
	 * One run per page gives the same pages too. The whole address space includes shared library
	 * pages, whose exclusive bit and residency change when other processes come and go: compare
	 * with a fresh run-length walk taken right before, and try again (up to 5 times) on a difference.
	 */
	for (b = 0; b < NB; b++) {
		int e = 0, tries = 0, diff = 1;

		while (diff && tries++ < 5) {
			struct runs fresh;

			if (tries > 1)
				runs_free(&each[b]);
			e = runs_collect_all(main_t, ctx, backends[b], PM_WALK_ENTRIES, &fresh);
			if (!e)
				e = runs_collect_all(main_t, ctx, backends[b], PM_WALK_EACH | PM_WALK_ENTRIES, &each[b]);
			if (e || !walk_ok(b, F_ENTRIES)) {
				if (!e)
					runs_free(&fresh);
				break;
			}
			diff = runs_compare(&each[b], &fresh) != 0;
			runs_free(&fresh);
		}
		CHECK_EQ_U64(-e, 0);
		if (!e && walk_ok(b, F_ENTRIES)) {
			size_t i, multi = 0;
			for (i = 0; i < each[b].n; i++)
				multi += each[b].v[i].end - each[b].v[i].start != ps;
			CHECK_EQ_U64(multi, 0);
			CHECK_EQ_U64(diff, 0);
			if (tries > 1)
				printf("  %s: %d walks until the per-page and run walks agreed\n",
				       backends[b] == PM_BACKEND_SCAN ? "scan" : "pread", tries);
		}
	}
	/* Shared library pages may be reclaimed or faulted between the two walks: walk both again then. */
	CHECK_EQ_U64(runs_compare_settled(main_t, ctx, PM_WALK_EACH | PM_WALK_ENTRIES, &each[B_PREAD], &each[B_SCAN], 3),
		     0);
	runs_free(&each[B_PREAD]);
	runs_free(&each[B_SCAN]);
	return T_PASS;
}

/*
 * A walk of part of the address space gives what the whole walk gives for
 * that part, even when the range cuts a run, a THP or a mapping, and starts
 * or ends off a page boundary.
 */
static int subrange_walks(void)
{
	static const enum lay_id regs[] = { LR_ANON, LR_FILE, LR_MEMFD, LR_THP, LR_COW, LR_GUARD, LR_UFFD,
					    LR_PROTNONE, LR_ZERO, LR_HZERO, LR_SPARSE };
	size_t i;
	int b, f;

	if (setup_main() < 0)
		return T_FAIL;
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		const struct lay_region *g = &main_l.r[regs[i]];
		/* From inside page 3 to inside the third page from the end. */
		uint64_t s = g->start + 3 * ps + 100, e = g->end - 3 * ps + 1;

		if (!g->start || g->error || e <= s)
			continue;
		for (b = 0; b < NB; b++) {
			for (f = 0; f < NF; f++) {
				struct runs part, cut;
				if (!walk_ok(b, f))
					continue;
				CHECK_EQ_U64(-runs_collect(main_t, ctx, backends[b], wflags[f], s, e, &part), 0);
				CHECK_EQ_U64(-runs_clip(&main_runs[b][f], s, e, (unsigned)ps, &cut), 0);
				if (runs_compare(&cut, &part)) {
					printf("  ^ %s region, %s walk of %#" PRIx64 "-%#" PRIx64 "\n",
					       layout_region_name(regs[i]), part.desc, s, e);
					CHECK(!"a part walk differs from the whole walk");
				}
				runs_free(&part);
				runs_free(&cut);
			}
		}
	}
	return T_PASS;
}

/* ---- each region, exact ------------------------------------------- */

/* Present run parts of [s, e) that carry a non-zero PFN (only when the walk shows frames). */
static uint64_t bytes_with_pfn(const struct runs *r, uint64_t s, uint64_t e)
{
	uint64_t b = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct run_rec *x = &r->v[i];
		if (x->end <= s || x->start >= e || (x->flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME)) !=
							    (PM_PAGE_PRESENT | PM_PAGE_FRAME) || !x->pfn)
			continue;
		b += (x->end < e ? x->end : e) - (x->start > s ? x->start : s);
	}
	return b;
}

static void check_anon(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_EQ_U64(u.file, 0);
	CHECK_EQ_U64(u.guard, 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);
	CHECK_KNOWN(r, PM_PAGE_THP, u.thp, 0);
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, 0);
	CHECK_KNOWN(r, PM_PAGE_UFFD_WP, u.uffdwp, 0);
	CHECK_KNOWN(r, PM_PAGE_FRAME, bytes_with_pfn(r, g->start, g->end), n);
}

static int region_anon(void)
{
	return for_each_walk(LR_ANON, check_anon);
}

/* Private file mapping: every page read (page cache, FILE), page `detail` written (an anonymous COW copy). */
static void check_file(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start, cow = g->start + g->detail * ps;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, n - ps);
	CHECK_EQ_U64(runs_bytes(r, cow, cow + ps, PM_PAGE_PRESENT, PM_PAGE_FILE), ps);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);	/* nobody else maps the temp file */
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, 0);
}

static int region_file(void)
{
	return for_each_walk(LR_FILE, check_file);
}

static void check_memfd(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, n);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, 0);
}

static int region_memfd(void)
{
	return for_each_walk(LR_MEMFD, check_memfd);
}

/* Each PMD block of a THP run starts at a PMD-aligned PFN. */
static uint64_t misaligned_thp_blocks(const struct runs *r, const struct lay_region *g)
{
	uint64_t a, bad = 0, per = main_l.pmd_size / ps;
	size_t i;

	for (a = g->start; a < g->end; a += main_l.pmd_size) {
		for (i = 0; i < r->n; i++) {
			const struct run_rec *x = &r->v[i];
			if (x->start <= a && a < x->end)
				bad += !(x->flags & PM_PAGE_FRAME) || ((x->pfn + (a - x->start) / ps) & (per - 1));
		}
	}
	return bad;
}

static void check_thp(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);
	struct smaps s;

	CHECK_EQ_U64(u.present, n);
	CHECK_KNOWN(r, PM_PAGE_THP, u.thp, n);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);
	CHECK_EQ_U64(u.file, 0);
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, 0);
	if (r->known & PM_PAGE_FRAME)
		CHECK_EQ_U64(misaligned_thp_blocks(r, g), 0);
	if (smaps_read(main_l.pid, &s) == 0) {
		const struct smaps_entry *e = smaps_find(&s, g->start);
		CHECK(e != NULL);
		if (e)
			CHECK_EQ_U64(e->anon_huge, n);
		smaps_free(&s);
	}
}

static int region_thp(void)
{
	if (!thp_enabled())
		return t_skip("transparent_hugepage/enabled is [never]");
	return for_each_walk(LR_THP, check_thp);
}

/* Shared with a grandchild after fork: not exclusive, except the pages the grandchild wrote (COW). */
static void check_cow(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start, w = 5 * ps;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, 0);
	if (r->known & PM_PAGE_EXCLUSIVE) {
		CHECK_EQ_U64(u.exclusive, w);
		CHECK_EQ_U64(runs_bytes(r, g->start, g->start + w, PM_PAGE_PRESENT | PM_PAGE_EXCLUSIVE, 0), w);
		CHECK_EQ_U64(runs_bytes(r, g->start + w, g->end, PM_PAGE_PRESENT, PM_PAGE_EXCLUSIVE), n - w);
	}
}

static int region_cow(void)
{
	return for_each_walk(LR_COW, check_cow);
}

/* 8 pages written, guards on pages 1, 3, 5: markers, never swap, not present. */
static void check_guard(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start, k = 3 * ps, i;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n - k);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_KNOWN(r, PM_PAGE_GUARD, u.guard, k);
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, PM_PAGE_MARKER, PM_PAGE_PRESENT | PM_PAGE_SWAPPED), k);
	for (i = 0; i < 3; i++) {
		uint64_t a = g->start + (2 * i + 1) * ps;
		CHECK_KNOWN(r, PM_PAGE_GUARD, runs_bytes(r, a, a + ps, PM_PAGE_GUARD, 0), ps);
	}
	/* A marker is no swap slot: no frame flag, swap type or offset (the kernel's: 31 and 4). */
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, PM_PAGE_MARKER | PM_PAGE_FRAME, 0), 0);
	for (i = 0; i < r->n; i++)
		if ((r->v[i].flags & PM_PAGE_MARKER) && r->v[i].start < g->end &&
		    r->v[i].end > g->start)
			CHECK_EQ_U64(r->v[i].swap_type | r->v[i].swap_offset, 0);
}

/*
 * A region that needs a feature from Linux @maj.@min: before, the child's
 * setup must have failed with EINVAL (@what is missing: a skip that says
 * so); from then on it must have worked.
 */
static int region_since(enum lay_id reg, unsigned maj, unsigned min, const char *what,
			void (*check)(const struct runs *, const struct lay_region *))
{
	const struct lay_region *g;

	if (setup_main() < 0)
		return T_FAIL;
	g = &main_l.r[reg];
	if (!kernel_at_least(maj, min)) {
		CHECK_EQ_U64(g->error, EINVAL);
		return t_skip("Linux %s has no %s (%u.%u+): the child's setup failed with %s, as it must", release(),
			      what, maj, min, strerror(g->error));
	}
	CHECK_EQ_U64(g->error, 0);
	return for_each_walk(reg, check);
}

static int region_guard(void)
{
	/* MADV_GUARD_INSTALL came in 6.13, pagemap's guard bit 58 in 6.15. */
	if (kernel_at_least(6, 13) && !kernel_at_least(6, 15))
		return t_skip("Linux %s has guard regions but no pagemap bit for them (6.15+)", release());
	return region_since(LR_GUARD, 6, 13, "guard regions", check_guard);
}

/* 16 pages registered, 10 written, all write-protected, page 0 written again: 9 present WP, 6 WP markers. */
static void check_uffd(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start, pop = 10 * ps;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, pop);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, PM_PAGE_PRESENT), n - pop);
	if (r->known & PM_PAGE_UFFD_WP) {
		CHECK_EQ_U64(u.uffdwp, n - ps);
		CHECK_EQ_U64(runs_bytes(r, g->start, g->start + ps, PM_PAGE_PRESENT, PM_PAGE_UFFD_WP), ps);
		CHECK_EQ_U64(runs_bytes(r, g->start + ps, g->start + pop, PM_PAGE_PRESENT | PM_PAGE_UFFD_WP, 0),
			     pop - ps);
	}
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, pop);
}

static int region_uffd(void)
{
	return region_since(LR_UFFD, 6, 7, "userfaultfd WP async", check_uffd);
}

static void check_protnone(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.swapped, 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);
	CHECK_KNOWN(r, PM_PAGE_FRAME, bytes_with_pfn(r, g->start, g->end), n);
}

static int region_protnone(void)
{
	return for_each_walk(LR_PROTNONE, check_protnone);
}

/* Read faults only: the shared zero page, present but not exclusive, not file, not counted by smaps Rss. */
static void check_zero(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, 0);
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, n);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, 0);
	CHECK_KNOWN(r, PM_PAGE_THP, u.thp, 0);
	if (r->known & PM_PAGE_FRAME)
		CHECK_EQ_U64(runs_bytes(r, g->start, g->end, PM_PAGE_FRAME, 0), n);
}

/* A kernel that maps no zero page: each read fault allocated a page, which is no zero page. */
static void check_zero_allocated(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, 0);
	CHECK_KNOWN(r, PM_PAGE_ZERO, u.zero, 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, n);
}

static int region_zero(void)
{
	const struct lay_region *g;

	if (setup_main() < 0)
		return T_FAIL;
	g = &main_l.r[LR_ZERO];
	if (g->start && g->error == EOPNOTSUPP) {
		check_each_walk(g, check_zero_allocated);
		return t_skip("%s; checked instead that those pages are present, exclusive and not flagged zero",
			      layout_region_why(&main_l, LR_ZERO));
	}
	return for_each_walk(LR_ZERO, check_zero);
}

/* Read faults in a MADV_HUGEPAGE PMD: the huge zero page, PMD-mapped, reading PM_FILE that the walker drops. */
static void check_hzero(const struct runs *r, const struct lay_region *g)
{
	uint64_t n = g->end - g->start;
	struct pm_usage u = runs_usage(r, g->start, g->end);

	CHECK_EQ_U64(u.present, n);
	CHECK_EQ_U64(u.file, 0);
	CHECK_EQ_U64(u.zero, n);	/* known or not: PM_FILE in private anonymous memory gives it away */
	/* PMD-mapped, so its pages say THP; but no huge page of the process's: neither THP nor RSS sums it */
	CHECK_KNOWN(r, PM_PAGE_THP, runs_bytes(r, g->start, g->end, PM_PAGE_THP | PM_PAGE_ZERO, 0), n);
	CHECK_EQ_U64(u.thp, 0);
	CHECK_EQ_U64(pm_usage_rss(&u, NULL), 0);
	CHECK_KNOWN(r, PM_PAGE_EXCLUSIVE, u.exclusive, 0);
}

static int region_hzero(void)
{
	if (!thp_enabled())
		return t_skip("transparent_hugepage/enabled is [never]");
	return for_each_walk(LR_HZERO, check_hzero);
}

/*
 * Every other page written over more than 2048 pages: one PAGEMAP_SCAN call
 * returns more than 512 regions, where 6.12-6.18 leave walk_end stale
 * (docs/kernel-interface.md §6.2). A walker trusting walk_end counts pages twice.
 */
static void check_sparse(const struct runs *r, const struct lay_region *g)
{
	uint64_t pages = (g->end - g->start) / ps, written = (pages + 1) / 2;
	struct pm_usage u = runs_usage(r, g->start, g->end);
	size_t i, present_runs = 0;

	CHECK_EQ_U64(u.present, written * ps);
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, 0, PM_PAGE_PRESENT), (pages - written) * ps);
	for (i = 0; i < r->n; i++)
		if (r->v[i].start >= g->start && r->v[i].end <= g->end && (r->v[i].flags & PM_PAGE_PRESENT))
			present_runs += (r->v[i].end - r->v[i].start) / ps;
	CHECK_EQ_U64(present_runs, written);
}

/*
 * Raw PAGEMAP_SCAN calls over the sparse region, resuming at walk_end as
 * documented: the most regions one call returned, and how many calls came
 * back with walk_end before the end of their last region (the stale case).
 */
static int raw_scan(const struct lay_region *g, int *max_n, int *stale)
{
	enum { VEC = 1024 };
	struct page_region *vec = calloc(VEC, sizeof(*vec));
	uint64_t start = g->start;
	char path[64];
	int fd, n = 0;

	*max_n = *stale = 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)main_l.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (vec && fd >= 0 && start < g->end) {
		struct pm_scan_arg arg = { .size = sizeof(arg), .start = start, .end = g->end,
					   .vec = (uint64_t)(uintptr_t)vec, .vec_len = VEC,
					   .return_mask = PAGE_IS_PRESENT };
		n = ioctl(fd, PAGEMAP_SCAN, &arg);
		if (n <= 0 || arg.walk_end <= start)
			break;
		*max_n = n > *max_n ? n : *max_n;
		*stale += arg.walk_end < vec[n - 1].end;
		start = arg.walk_end;
	}
	n = !vec ? -ENOMEM : fd < 0 || n < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	free(vec);
	return n;
}

static int sparse_walk_end(void)
{
	const struct lay_region *g;
	int max_n, stale, r = for_each_walk(LR_SPARSE, check_sparse);

	if (r != T_PASS || !kernel_has_scan())
		return r;
	g = &main_l.r[LR_SPARSE];
	if ((g->end - g->start) / ps <= 2048)
		return t_skip("PAGEMAP_TEST_SPARSE_PAGES must be above 2048 to reach the stale walk_end");
	CHECK_EQ_U64(-raw_scan(g, &max_n, &stale), 0);
	CHECK(max_n > 512);	/* else this test does not reach the kernel condition */
	printf("  raw PAGEMAP_SCAN: up to %d regions per call, %d call(s) with a stale walk_end\n", max_n, stale);
	return T_PASS;
}

/*
 * A THP whose PMD was split while its folio stayed whole: smaps counts no
 * AnonHugePages and PAGEMAP_SCAN reports no PAGE_IS_HUGE, so PM_PAGE_THP
 * ("PMD-mapped") must be clear. The pread back end infers THP from
 * contiguous aligned PFNs plus KPF_THP, which a PTE-mapped whole folio has
 * too: that is a known limitation of pagemap without PAGEMAP_SCAN, reported
 * as a skip while it lasts.
 */
static int thp_pte_mapped(void)
{
	struct layout_opts o = { .thp_split = true };
	const struct lay_region *g;
	struct pm_target *t;
	struct layout l;
	bool pread_says_thp = false;
	int b, f, r;

	if (!init_ctx())
		return T_FAIL;
	if (!thp_enabled())
		return t_skip("transparent_hugepage/enabled is [never]");
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		return T_FAIL;
	}
	g = &l.r[LR_THP_SPLIT];
	if (!g->start || g->error) {
		r = g->error;
		layout_stop(&l);
		/* The split takes uffd-wp async (6.7+); EAGAIN is a THP shortage, on any kernel. */
		if (!kernel_at_least(6, 7) && r != EAGAIN) {
			CHECK_EQ_U64(r, EINVAL);
			return t_skip("Linux %s has no userfaultfd WP async (6.7+) to split a THP's PMD with: %s, as it must",
				      release(), strerror(r));
		}
		return t_skip("the child could not split a THP's PMD: %s", strerror(r));
	}
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	for (b = 0; t && b < NB; b++) {
		for (f = 0; f < NF; f++) {
			struct runs x;
			struct pm_usage u;
			if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
				continue;
			CHECK_EQ_U64(-runs_collect(t, ctx, backends[b], wflags[f], g->start, g->end, &x), 0);
			u = runs_usage(&x, g->start, g->end);
			CHECK_EQ_U64(u.present, g->end - g->start);
			CHECK_EQ_U64(u.uffdwp, 0);
			if (backends[b] == PM_BACKEND_SCAN)
				CHECK_EQ_U64(u.thp, 0);
			else if ((x.known & PM_PAGE_THP) && u.thp)
				pread_says_thp = true;
			runs_free(&x);
		}
	}
	pm_target_close(t);
	layout_stop(&l);
	if (pread_says_thp && !t_failed_checks)
		return t_skip("known limitation: the pread back end reports a PMD-split THP whose folio is whole "
			      "as PM_PAGE_THP (smaps AnonHugePages 0, PAGEMAP_SCAN not HUGE)");
	return T_PASS;
}

/* ---- soft-dirty -------------------------------------------------------- */

/* clear_refs @what (docs/kernel-interface.md §5) of @pid. */
static int clear_refs(pid_t pid, const char *what)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = write(fd, what, strlen(what)) == (ssize_t)strlen(what) ? 0 : -errno;
	close(fd);
	return r;
}

/*
 * Soft-dirty bits of another process, where the kernel has them (the
 * oracle is apart from our probe: "sd" in the child's VmFlags, as in the
 * kernel selftests). Fresh VMAs read soft-dirty on every page, holes
 * included; after clear_refs 4 on the idle child, no page does. Which
 * pages a write sets again is test_kernel's test_soft_dirty_exact.
 */
static int soft_dirty_child(void)
{
	static const enum lay_id regs[] = { LR_ANON, LR_MEMFD, LR_SPARSE, LR_THP };
	struct layout_opts o = { .anon_pages = 16, .memfd_pages = 8, .sparse_pages = 64, .thp_count = 1 };
	const struct smaps_entry *e;
	struct pm_target *t;
	struct smaps sm;
	struct layout l;
	bool sd = false;
	int b, f, round, r;
	size_t i;

	if (!init_ctx())
		return T_FAIL;
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		return T_FAIL;
	}
	if (smaps_read(l.pid, &sm) == 0) {
		e = smaps_find(&sm, l.r[LR_ANON].start);
		sd = e && strstr(e->vmflags, " sd");
		smaps_free(&sm);
	}
	if (!sd) {
		layout_stop(&l);
		return t_skip("no \"sd\" in the child's VmFlags: kernel without CONFIG_MEM_SOFT_DIRTY");
	}
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	for (round = 0; t && round < 2; round++) {
		if (round == 1)
			CHECK_EQ_U64(-clear_refs(l.pid, "4"), 0);
		for (b = 0; b < NB; b++) {
			for (f = 0; f < NF; f++) {
				int before = t_failed_checks;
				struct runs x;

				if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
					continue;
				CHECK_EQ_U64(-runs_collect_all(t, ctx, backends[b], wflags[f], &x), 0);
				CHECK(x.known & PM_PAGE_SOFTDIRTY);
				for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
					const struct lay_region *g = &l.r[regs[i]];
					if (!g->start || g->error)
						continue;	/* no THP here */
					CHECK_EQ_U64(runs_bytes(&x, g->start, g->end, PM_PAGE_SOFTDIRTY, 0),
						     round ? 0 : g->end - g->start);
				}
				if (t_failed_checks != before)
					printf("  ^ with the %s walk, %s clear_refs 4\n", x.desc, round ? "after" : "before");
				runs_free(&x);
			}
		}
	}
	pm_target_close(t);
	layout_stop(&l);
	return T_PASS;
}

/* ---- races with the target's exit and exec -------------------------- */

/* Walk to the end; the result of the last pm_walk_next (1 at the end, or -errno), counting runs. */
static int drain(struct pm_walk *w, size_t *runs)
{
	const struct pm_run *run;
	int r;

	*runs = 0;
	while ((r = pm_walk_next(w, &run)) == 0)
		(*runs)++;
	return r;
}

/* A walk from @start to the top (from the child's first region: below lie ASan's reservations, if any). */
static struct pm_walk *new_walk(struct pm_target *t, enum pm_backend b, uint64_t start)
{
	pm_ctx_set_backend(ctx, b);
	return pm_walk_new(t, start, UINT64_MAX, 0);
}

/* A walk of a target whose memory is gone ends in -ESRCH; a new one fails with ESRCH/ENOENT or ends so too. */
static void expect_gone(struct pm_target *t, struct pm_walk *fresh[NB], struct pm_walk *mid[NB], const char *when,
			uint64_t addr)
{
	uint64_t buf[8];
	size_t runs;
	int b, r;

	for (b = 0; b < NB; b++) {
		if (fresh[b]) {
			r = drain(fresh[b], &runs);
			if (r != -ESRCH)
				printf("  %s, walk made before, %s: %d after %zu runs\n", when,
				       pm_backend_name(backends[b]), r, runs);
			CHECK_EQ_U64(-r, ESRCH);
		}
		if (mid[b]) {
			r = drain(mid[b], &runs);
			if (r != -ESRCH)
				printf("  %s, walk begun before, %s: %d after %zu more runs\n", when,
				       pm_backend_name(backends[b]), r, runs);
			CHECK_EQ_U64(-r, ESRCH);
		}
		if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
			continue;
		{
			struct pm_walk *w = new_walk(t, backends[b], addr);
			if (!w) {
				if (errno != ESRCH && errno != ENOENT)
					printf("  %s, new %s walk: %s\n", when, pm_backend_name(backends[b]), strerror(errno));
				CHECK(errno == ESRCH || errno == ENOENT);
			} else {
				r = drain(w, &runs);
				if (r != -ESRCH)
					printf("  %s, walk made after, %s: %d after %zu runs\n", when,
					       pm_backend_name(backends[b]), r, runs);
				CHECK_EQ_U64(-r, ESRCH);
				pm_walk_free(w);
			}
		}
	}
	CHECK_EQ_U64(-pm_target_read(t, addr / ps, buf, 8), ESRCH);
	CHECK_EQ_U64(-pm_target_read(t, 0, buf, 1), ESRCH);
}

struct race {
	struct layout l;
	struct pm_target *t;
	struct pm_walk *fresh[NB], *mid[NB];
};

/* A child, a target, and per back end one walk not started and one walk that has returned its first run. */
static int race_setup(struct race *x)
{
	struct layout_opts o = { .anon_pages = 8, .memfd_pages = 4 };
	const struct pm_run *run;
	int b, r;

	memset(x, 0, sizeof(*x));
	if (!init_ctx())
		return -ENOMEM;
	r = layout_start(&o, &x->l);
	if (r < 0)
		return r;
	x->t = pm_target_open(ctx, x->l.pid);
	if (!x->t)
		return -errno;
	for (b = 0; b < NB; b++) {
		if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
			continue;
		x->fresh[b] = new_walk(x->t, backends[b], x->l.r[LR_ANON].start);
		x->mid[b] = new_walk(x->t, backends[b], x->l.r[LR_ANON].start);
		if (!x->fresh[b] || !x->mid[b])
			return -errno;
		r = pm_walk_next(x->mid[b], &run);
		if (r != 0)
			return r < 0 ? r : -EIO;
	}
	return 0;
}

static void race_free(struct race *x)
{
	int b;

	for (b = 0; b < NB; b++) {
		pm_walk_free(x->fresh[b]);
		pm_walk_free(x->mid[b]);
		x->fresh[b] = x->mid[b] = NULL;
	}
	pm_target_close(x->t);
	x->t = NULL;
	layout_stop(&x->l);
}

/* The target exits: its walks and reads say ESRCH, never an empty address space; opens say ESRCH, then ENOENT. */
static int exit_race(void)
{
	struct race x;
	pid_t pid;
	int r = race_setup(&x);
	struct pm_target *t2;

	if (r < 0) {
		printf("  race setup: %s\n", strerror(-r));
		race_free(&x);
		return T_FAIL;
	}
	pid = x.l.pid;
	CHECK_EQ_U64(-layout_kill_nowait(&x.l), 0);
	CHECK_EQ_U64(pm_proc_state(ctx, pid), PM_PROC_ZOMBIE);
	expect_gone(x.t, x.fresh, x.mid, "zombie", x.l.r[LR_ANON].start);
	errno = 0;
	t2 = pm_target_open(ctx, pid);
	CHECK(t2 == NULL);
	CHECK_EQ_U64(errno, ESRCH);
	pm_target_close(t2);

	/* Reaped: the pid is gone. */
	layout_stop(&x.l);
	CHECK_EQ_U64(pm_proc_state(ctx, pid), PM_PROC_GONE);
	{
		struct pm_walk *none[NB] = { NULL, NULL };
		expect_gone(x.t, none, none, "reaped", x.l.r[LR_ANON].start);
	}
	errno = 0;
	t2 = pm_target_open(ctx, pid);
	CHECK(t2 == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	pm_target_close(t2);
	race_free(&x);
	return T_PASS;
}

/* Wait up to 5 s until @pid is seen sleeping ('S') three polls in a row. */
static bool wait_sleeping(pid_t pid)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char path[64], buf[512], *p;
	int i, calm = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 250 && calm < 3; i++) {
		FILE *f = fopen(path, "re");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		calm = p && p[1] == ' ' && p[2] == 'S' ? calm + 1 : 0;
		nanosleep(&ts, NULL);
	}
	return calm >= 3;
}

/* The target execs: the old handle's walks and reads say ESRCH; a new handle sees the new program. */
static int exec_race(void)
{
	struct race x;
	struct pm_target *t2;
	struct runs rr;
	int r;

	if (access("/bin/sleep", X_OK) < 0)
		return t_skip("no /bin/sleep to exec");
	r = race_setup(&x);
	if (r < 0) {
		printf("  race setup: %s\n", strerror(-r));
		race_free(&x);
		return T_FAIL;
	}
	r = layout_exec(&x.l, "/bin/sleep", "600");
	CHECK_EQ_U64(-r, 0);
	if (r == 0) {
		expect_gone(x.t, x.fresh, x.mid, "exec'd", x.l.r[LR_ANON].start);
		CHECK(wait_sleeping(x.l.pid));	/* the new program has finished starting up */
		t2 = pm_target_open(ctx, x.l.pid);
		CHECK(t2 != NULL);
		if (t2) {
			CHECK_EQ_U64(-runs_collect_all(t2, ctx, PM_BACKEND_PREAD, 0, &rr), 0);
			CHECK(rr.n > 0);
			CHECK_EQ_U64(runs_vs_smaps(&rr, x.l.pid), 0);
			runs_free(&rr);
			pm_target_close(t2);
		}
	}
	race_free(&x);
	return T_PASS;
}

/* pm_target_open: a kernel thread has no memory (ESRCH); ourselves (pid 0) works. */
static int open_errors(void)
{
	char comm[32] = "";
	struct pm_target *t;
	FILE *f;

	if (!init_ctx())
		return T_FAIL;
	t = pm_target_open(ctx, 0);
	CHECK(t != NULL);
	pm_target_close(t);
	f = fopen("/proc/2/comm", "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	if (strcmp(comm, "kthreadd\n"))
		return t_skip("pid 2 is not kthreadd here (a pid namespace?)");
	CHECK_EQ_U64(pm_proc_state(ctx, 2), PM_PROC_KTHREAD);
	errno = 0;
	t = pm_target_open(ctx, 2);
	CHECK(t == NULL);
	CHECK_EQ_U64(errno, ESRCH);
	pm_target_close(t);
	return T_PASS;
}

/* ---- bounded memory -------------------------------------------------- */

static long long self_kb(const char *field)
{
	return proc_field_kb("/proc/self/status", field);
}

/*
 * Walk a large populated region: the walker's memory stays at its batch
 * size, whatever the region's size. Holding every entry would be 2 MiB per
 * GiB, every run far more; the pread batch is 512 KiB.
 */
static int bounded_memory(void)
{
	struct layout_opts o = { .big_bytes = (uint64_t)env_uint("PAGEMAP_TEST_BIG_MIB", BIG_MIB_DEFAULT) << 20 };
	struct layout l;
	struct pm_target *t = NULL;
	long long limit_kb = 1536, avail_kb;
	int b, r;

	if (!o.big_bytes)
		return t_skip("PAGEMAP_TEST_BIG_MIB=0");
	/* The child populates it all: with less available, it would swap or meet the OOM killer. */
	avail_kb = proc_field_kb("/proc/meminfo", "MemAvailable");
	if (avail_kb >= 0 && (uint64_t)avail_kb < (o.big_bytes >> 10) + (o.big_bytes >> 12) + (128 << 10))
		return t_skip("MemAvailable is %lld MiB: too little for the %" PRIu64
			      " MiB region and a margin (PAGEMAP_TEST_BIG_MIB sets its size)",
			      avail_kb >> 10, o.big_bytes >> 20);
#if PM_ASAN
	limit_kb += 512;	/* ASan's allocator and shadow add their own, still not proportional */
#endif
	if (!init_ctx())
		return T_FAIL;
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		return T_FAIL;
	}
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	for (b = 0; t && b < NB; b++) {
		struct pm_usage u;
		const struct pm_run *run;
		struct pm_walk *w;
		long long before, after;
		size_t runs = 0;
		int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

		if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
			continue;
		/* 5 resets VmHWM to the current RSS (docs/kernel-interface.md §5). */
		CHECK(fd >= 0 && write(fd, "5", 1) == 1);
		if (fd >= 0)
			close(fd);
		before = self_kb("VmHWM");
		pm_ctx_set_backend(ctx, backends[b]);
		w = pm_walk_new(t, l.r[LR_BIG].start, l.r[LR_BIG].end, PM_WALK_ENTRIES);
		CHECK(w != NULL);
		memset(&u, 0, sizeof(u));
		while (w && (r = pm_walk_next(w, &run)) == 0) {
			pm_usage_add(&u, run);
			runs++;
		}
		CHECK_EQ_U64(r, 1);
		pm_walk_free(w);
		after = self_kb("VmHWM");
		CHECK_EQ_U64(u.present, o.big_bytes);
		CHECK_EQ_U64(u.exclusive, o.big_bytes);
		printf("  %s: %" PRIu64 " MiB in %zu runs, VmHWM grew %lld kB (limit %lld)\n",
		       pm_backend_name(backends[b]), o.big_bytes >> 20, runs, after - before, limit_kb);
		CHECK(before > 0 && after - before < limit_kb);
	}
	pm_target_close(t);
	layout_stop(&l);
	return T_PASS;
}

/* ---- what the context says of this machine -------------------------- */

/* The probe agrees with smaps, here and as the machine is (some guest kernels never map the zero page). */
static int zero_probe(void)
{
	enum pm_tristate want;
	int zero;

	if (!init_ctx())
		return T_FAIL;
	zero = zero_page_on_read();
	want = zero > 0 ? PM_YES : zero == 0 ? PM_NO : PM_UNKNOWN;
	if (want == PM_UNKNOWN)
		return t_skip("smaps did not tell whether a read fault maps the zero page");
	printf("  smaps: read faults %s the zero page; probe: zero_page %d, zero_pfn %#llx\n",
	       want == PM_YES ? "map" : "do not map", feat->zero_page, (unsigned long long)feat->zero_pfn);
	CHECK_EQ_U64(feat->zero_page, want);
	if (want == PM_NO) {
		CHECK_EQ_U64(feat->zero_pfn, 0);
		CHECK_EQ_U64(feat->huge_zero_page, PM_NO);
	} else if (feat->pfn_view == PM_PFN_VISIBLE) {
		CHECK(feat->zero_pfn != 0);
	}
	return T_PASS;
}

/*
 * Pages written right after the probe are never the zero page: a probe that
 * took the frame of a page it then freed flagged the next allocation (it
 * reuses the frame) as zero.
 */
static int no_false_zero_round(void)
{
	const size_t n = 256;
	char *p;
	struct pm_target *t;
	struct runs r[NB] = { { 0 } };
	struct pm_usage u;
	size_t i;
	int b;

	struct pm_ctx *c = pm_ctx_new(NULL);
	const struct pm_features *f;

	/* A context of its own: the probe runs now, and the pages are allocated right after it. */
	CHECK(c != NULL);
	f = pm_ctx_features(c);
	CHECK(f != NULL);
	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	for (i = 0; i < n; i++)
		p[i * ps] = 1;
	t = pm_target_open(c, getpid());
	CHECK(t != NULL);
	for (b = 0; b < NB; b++) {
		if (backends[b] == PM_BACKEND_SCAN && !f->scan)
			continue;
		CHECK_EQ_U64(runs_collect(t, c, backends[b], PM_WALK_ENTRIES, (uint64_t)(uintptr_t)p,
					  (uint64_t)(uintptr_t)p + n * ps, &r[b]), 0);
		u = runs_usage(&r[b], (uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + n * ps);
		if (u.zero)
			printf("  %s: %llu present, %llu zero bytes\n", r[b].desc, (unsigned long long)u.present,
			       (unsigned long long)u.zero);
		CHECK_EQ_U64(u.present, n * ps);
		CHECK_EQ_U64(u.zero, 0);
		runs_free(&r[b]);
	}
	pm_target_close(t);
	pm_ctx_free(c);
	munmap(p, n * ps);
	return T_PASS;
}

/* The frame reuse happens in some rounds only (about 1 in 4 here before the fix): take eight. */
static int no_false_zero(void)
{
	int i, r;

	for (i = 0; i < 8; i++)
		if ((r = no_false_zero_round()) != T_PASS)
			return r;
	return T_PASS;
}

/*
 * The auto back end with entries (what `maps` asks) samples each mapping
 * by a bounded scan: 4 KiB pages to read go by pread alone, huge pages and
 * mostly empty space keep the scan (lib/pages/walk_cost.c, by the costs
 * the walk measures: a scan's way that reads every entry too costs more). Regions of
 * this process, apart (PROT_NONE between them, so no two merge): dense and
 * sparse 4 KiB ones past the 32 MiB sample, THP, and 1 GiB with 3 pages.
 * Every back end must give the same sums; the log says which way each went.
 */
enum { H_DENSE, H_SPARSE, H_THP, H_EMPTY, NH };

struct hybrid_log {
	char lines[64][256];
	unsigned n;
};

static void hybrid_log_line(void *data, const char *line)
{
	struct hybrid_log *l = data;

	if (l->n < 64)
		snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%s", line);
}

static bool went_pread(const struct hybrid_log *l, uint64_t start, uint64_t end)
{
	char want[80];
	unsigned i;

	snprintf(want, sizeof(want), "%#llx-%#llx:", (unsigned long long)start, (unsigned long long)end);
	for (i = 0; i < l->n; i++)
		if (strstr(l->lines[i], want) && strstr(l->lines[i], "rest by pread"))
			return true;
	return false;
}

/* The sums of each region from one pm_mapstat walk of this process with back end @b. */
static int hybrid_sums(struct pm_target *t, enum pm_backend b, char *const *r, const size_t *len, struct pm_usage *u)
{
	const struct pm_mapping *m;
	const struct pm_usage *mu;
	struct pm_mapstat *it;
	int rc, i, found = 0;

	pm_ctx_set_backend(ctx, b);
	it = pm_mapstat_open(t, PM_WALK_ENTRIES);
	if (!it)
		return -errno;
	while ((rc = pm_mapstat_next(it, &m, &mu)) == 0)
		for (i = 0; i < NH; i++)
			if (m->start == (uint64_t)(uintptr_t)r[i] && m->end == m->start + len[i]) {
				u[i] = *mu;
				found++;
			}
	pm_mapstat_close(it);
	pm_ctx_set_backend(ctx, PM_BACKEND_AUTO);
	return rc < 0 ? rc : found == NH ? 0 : -ENOENT;
}

static int hybrid_backend(void)
{
	static const enum pm_backend bs[] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
	const size_t len[NH] = { 64 << 20, 96 << 20, 16 << 20, (size_t)1 << 30 };
	struct pm_usage u[NH], o[NH];
	struct hybrid_log log = { .n = 0 };
	size_t total = 0, off = 0, j, pmd;
	struct pm_target *t;
	char *base, *r[NH];
	int i, b, rc;

	if (!init_ctx())
		return T_FAIL;
	pmd = feat->pmd_size ? feat->pmd_size : 2 << 20;
	if (!kernel_has_scan())
		return t_skip("no PAGEMAP_SCAN (Linux 6.7+): auto is the pread back end");
	if (!feat->privileged || feat->pfn_view != PM_PFN_VISIBLE)
		return t_skip("frames hidden from this reader: the auto back end keeps the scan (huge pages need it)");
	for (i = 0; i < NH; i++)
		total += len[i] + 2 * pmd;
	base = mmap(NULL, total + pmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return t_skip("cannot reserve the regions");
	off = pmd - ((uintptr_t)base & (pmd - 1));
	for (i = 0; i < NH; i++) {	/* PMD-aligned, a PROT_NONE PMD between any two */
		r[i] = base + off;
		if (mprotect(r[i], len[i], PROT_READ | PROT_WRITE) != 0) {
			munmap(base, total + pmd);
			return t_skip(strerror(errno));
		}
		madvise(r[i], len[i], i == H_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		off += len[i] + 2 * pmd;
	}
	/* Each page its own content: where KSM is on for every process, alike pages would merge (not exclusive). */
	for (j = 0; j < len[H_DENSE]; j += ps)
		*(uint64_t *)(r[H_DENSE] + j) = j + 1;
	for (j = 0; j < len[H_SPARSE]; j += 2 * ps)
		*(uint64_t *)(r[H_SPARSE] + j) = j + 1;
	for (j = 0; j < len[H_THP]; j += ps)
		*(uint64_t *)(r[H_THP] + j) = j + 1;
	for (j = 0; j < 3; j++)
		*(uint64_t *)(r[H_EMPTY] + j * ((len[H_EMPTY] / 3) & ~(ps - 1))) = j + 1;

	t = pm_target_open(ctx, getpid());
	CHECK(t != NULL);
	if (!t) {
		munmap(base, total + pmd);
		return T_FAIL;
	}
	pm_ctx_set_log(ctx, hybrid_log_line, &log);
	rc = hybrid_sums(t, PM_BACKEND_AUTO, r, len, u);
	pm_ctx_set_log(ctx, NULL, NULL);
	CHECK_EQ_U64(-rc, 0);
	/* The layout itself, as written. */
	CHECK_EQ_U64(u[H_DENSE].present, len[H_DENSE]);
	CHECK_EQ_U64(u[H_DENSE].exclusive, len[H_DENSE]);
	CHECK_EQ_U64(u[H_SPARSE].present, len[H_SPARSE] / 2);
	CHECK_EQ_U64(u[H_SPARSE].exclusive, len[H_SPARSE] / 2);
	CHECK_EQ_U64(u[H_EMPTY].present, 3 * ps);
	CHECK_EQ_U64(u[H_THP].present, len[H_THP]);
	printf("  THP region: %llu of %zu bytes in huge pages\n", (unsigned long long)u[H_THP].thp, len[H_THP]);
	/* The way each went: 4 KiB pages to read by pread, the rest by the scan. */
	CHECK(went_pread(&log, (uintptr_t)r[H_DENSE], (uintptr_t)r[H_DENSE] + len[H_DENSE]));
	CHECK(went_pread(&log, (uintptr_t)r[H_SPARSE], (uintptr_t)r[H_SPARSE] + len[H_SPARSE]));
	/*
	 * The nearly empty region: the scan is the cheaper reader, but the choice is the walk's measured
	 * costs (lib/pages/walk_cost.c), which a busy machine or a sanitizer can tip; it is said, not judged
	 * (bench/run-sparse.sh measures the cost). The sums below hold whichever reader it took.
	 */
	if (went_pread(&log, (uintptr_t)r[H_EMPTY], (uintptr_t)r[H_EMPTY] + len[H_EMPTY]))
		printf("  the nearly empty region was read by pread here (its measured costs chose it)\n");
	if (u[H_THP].thp == len[H_THP])
		CHECK(!went_pread(&log, (uintptr_t)r[H_THP], (uintptr_t)r[H_THP] + len[H_THP]));
	/* Every back end gives the same sums (whichever way the THP region went). */
	for (b = 0; b < 2; b++) {
		rc = hybrid_sums(t, bs[b], r, len, o);
		CHECK_EQ_U64(-rc, 0);
		for (i = 0; rc == 0 && i < NH; i++) {
			if (memcmp(&u[i], &o[i], sizeof(u[i])) != 0)
				printf("  region %d: %s sums differ from auto's\n", i, pm_backend_name(bs[b]));
			CHECK(memcmp(&u[i], &o[i], sizeof(u[i])) == 0);
		}
	}
	pm_target_close(t);
	munmap(base, total + pmd);
	return T_PASS;
}

/* A check function that says stop after @arg calls: counts how often a walk asks. */
static int stop_after(void *arg)
{
	int *left = arg;

	return --*left < 0 ? -EINTR : 0;
}

/*
 * pm_ctx_set_check: a walk of one untouched 64 GiB mapping (a single run) asks before every read, so a
 * caller can stop it part way (Python's Ctrl-C); the walk then fails with the check's value, and reads of
 * more than one word too (one word is a liveness probe).
 */
static int check_stops_walks(void)
{
	size_t len = (size_t)64 << 30;
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct pm_ctx *c = pm_ctx_new(NULL);
	struct pm_target *t = c ? pm_target_open(c, 0) : NULL;
	const struct pm_run *run;
	struct pm_walk *w;
	uint64_t e, two[2], vpn = (uintptr_t)p / (uint64_t)sysconf(_SC_PAGESIZE);
	int b, r = 0, left;

	if (p == MAP_FAILED)
		return t_skip("cannot reserve 64 GiB of address space");
	CHECK(t != NULL);
	for (b = 0; t && b < NB; b++) {
		if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
			continue;
		pm_ctx_set_backend(c, backends[b]);
		left = 3;
		pm_ctx_set_check(c, stop_after, &left);
		w = pm_walk_new(t, (uintptr_t)p, (uintptr_t)p + len, 0);
		CHECK(w != NULL);
		while (w && (r = pm_walk_next(w, &run)) == 0)
			;
		pm_walk_free(w);
		printf("  %s: %s\n", pm_backend_name(backends[b]), r == -EINTR ? "stopped" : r == 1 ? "ended (few scan steps)" : strerror(-r));
		/* PAGEMAP_SCAN may see the whole hole in fewer steps than the check allows: then it simply ends */
		CHECK(backends[b] == PM_BACKEND_PREAD ? r == -EINTR : (r == -EINTR || r == 1));
		left = 0;
		CHECK_EQ_U64(-pm_target_read(t, vpn, two, 2), EINTR);
		CHECK_EQ_U64(pm_target_read(t, vpn, &e, 1), 1);	/* one word: a liveness probe, never stopped */
		pm_ctx_set_check(c, NULL, NULL);
		CHECK_EQ_U64(pm_target_read(t, vpn, &e, 1), 1);
	}
	pm_target_close(t);
	pm_ctx_free(c);
	munmap(p, len);
	return T_PASS;
}

static int features_root(void)
{
	int zero;

	if (!init_ctx())
		return T_FAIL;
	if (geteuid() != 0 || !feat->privileged)
		return t_skip("not running as root with CAP_SYS_ADMIN");
	CHECK_EQ_U64(feat->layout, PM_LAYOUT_CURRENT);
	CHECK_EQ_U64(feat->page_size, (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK_EQ_U64(feat->pfn_view, PM_PFN_VISIBLE);
	/* By effect, not by the probe under test: a kernel may map no zero page on read faults. */
	zero = zero_page_on_read();
	printf("  zero page on read faults (smaps Rss of read-only pages): %s; zero_pfn %#llx\n",
	       zero > 0 ? "yes" : zero == 0 ? "no" : "unknown", (unsigned long long)feat->zero_pfn);
	if (zero > 0)
		CHECK(feat->zero_pfn != 0);
	else if (zero == 0)
		CHECK_EQ_U64(feat->zero_pfn, 0);
	CHECK_EQ_U64(feat->pagemap_error, 0);
	if (kernel_has_scan())
		CHECK_EQ_U64(feat->scan_categories & 0x7f, 0x7f);	/* every 6.7 category */
	return T_PASS;
}

T_MAIN(T(features_root), T(zero_probe), T(no_false_zero), T(walk_vs_smaps), T(backends_agree), T(subrange_walks), T(region_anon), T(region_file), T(region_memfd),
       T(region_thp), T(thp_pte_mapped), T(region_cow), T(region_guard), T(region_uffd), T(region_protnone), T(region_zero), T(region_hzero),
       T(soft_dirty_child), T(sparse_walk_end), T(hybrid_backend), T(exit_race), T(exec_race), T(open_errors), T(bounded_memory),
       T(check_stops_walks))
