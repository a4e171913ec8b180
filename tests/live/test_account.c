/* test_account.c - live per-process accounting: pm_account_process vs the child's own smaps_rollup, fork-shared PSS, both sources. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"
#include "smaps.h"

#define ANON 64
#define COW 128
#define MEMFD 32
#define SLACK 4096	/* smaps_rollup prints kB and truncates Pss */

static struct pm_ctx *ctx;
static struct layout lay;
static struct pm_target *tgt;
static struct pm_kpage *kp;
static int setup_err = 1;

static void teardown(void)
{
	pm_kpage_close(kp);
	pm_target_close(tgt);
	layout_stop(&lay);
	pm_ctx_free(ctx);
}

/* One child: written anonymous pages, a region shared with a forked grandchild, a memfd. */
static int setup(void)
{
	struct layout_opts o = { .anon_pages = ANON, .cow_pages = COW, .memfd_pages = MEMFD };

	if (setup_err <= 0)
		return setup_err;
	atexit(teardown);
	if (!(ctx = pm_ctx_new(NULL)))
		return setup_err = -errno;
	if ((setup_err = layout_start(&o, &lay)) < 0)
		return setup_err;
	if (!(tgt = pm_target_open(ctx, lay.pid)))
		return setup_err = -errno;
	kp = pm_kpage_open(ctx);	/* NULL for non-root */
	return setup_err = 0;
}

/* Can this reader use pagemap + kpagecount? */
static bool exact_possible(void)
{
	return kp && pm_kpage_status(kp, PM_KPAGE_COUNT) == 0 && pm_target_pfn_view(tgt) == PM_PFN_VISIBLE;
}

static long long rollup(const char *field)
{
	char path[64];
	long long v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)lay.pid);
	v = proc_field_kb(path, field);
	return v < 0 ? -1 : v * 1024;
}

static bool near(uint64_t a, long long b)
{
	return b >= 0 && (a > (uint64_t)b ? a - (uint64_t)b : (uint64_t)b - a) <= SLACK;
}

#define CHECK_NEAR(a, field)                                                                                \
	do {                                                                                                \
		long long _b = rollup(field);                                                               \
		if (!near((a), _b)) {                                                                       \
			printf("  %s:%d: %s = %llu, smaps_rollup %s = %lld\n", __FILE__, __LINE__, #a,      \
			       (unsigned long long)(a), field, _b);                                         \
			t_failed_checks++;                                                                  \
		}                                                                                           \
	} while (0)

/* The figures match the kernel's own rollup for a quiescent child. */
static int vs_rollup(void)
{
	struct pm_account a;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	CHECK_EQ_U64(pm_account_process(tgt, kp, &a), 0);
	CHECK_NEAR(a.rss, "Rss");
	CHECK_NEAR(a.pss, "Pss");
	CHECK(near(a.uss, rollup("Private_Clean") + rollup("Private_Dirty")));
	CHECK(near(a.shared, rollup("Shared_Clean") + rollup("Shared_Dirty")));
	if (t_failed_checks)
		printf("  uss %llu shared %llu; rollup private %lld+%lld shared %lld+%lld\n", (unsigned long long)a.uss,
		       (unsigned long long)a.shared, rollup("Private_Clean"), rollup("Private_Dirty"),
		       rollup("Shared_Clean"), rollup("Shared_Dirty"));
	CHECK_EQ_U64(a.swap, 0);
	CHECK(a.uss >= (uint64_t)(ANON + MEMFD) * lay.page_size);
	CHECK(a.shared >= (uint64_t)COW * lay.page_size);
	CHECK_EQ_U64(a.source, exact_possible() ? PM_ACCOUNT_PAGEMAP : PM_ACCOUNT_SMAPS_ROLLUP);
	CHECK_EQ_U64(a.exact, exact_possible());
	CHECK_EQ_U64(a.estimate, 0);
	return T_PASS;
}

/* Map count of each present page of [start, end), in page order; -errno. */
static int counts_of(uint64_t start, uint64_t end, struct pm_frame *fr, size_t max, size_t *n)
{
	struct pm_walk *w = pm_walk_new(tgt, start, end, PM_WALK_ENTRIES);
	const struct pm_run *run;
	uint64_t va;
	int r;

	if (!w)
		return -errno;
	*n = 0;
	while ((r = pm_walk_next(w, &run)) == 0)
		for (va = run->start; va < run->end && *n < max; va += lay.page_size)
			if ((run->flags & PM_PAGE_PRESENT) && !(run->flags & PM_PAGE_ZERO))
				fr[(*n)++].pfn = run->pfn + (va - run->start) / lay.page_size;
	pm_walk_free(w);
	return r < 0 ? r : pm_kpage_lookup(kp, fr, *n);
}

#define MAXFRAMES (1u << 20)
#define MAXCOUNT 65536

/*
 * The fork-shared region: every page mapped twice, so it adds exactly half
 * a page each to PSS. And pm_account's PSS equals an independent sum over
 * every page, exact per map count (pages counted per count, divided once).
 */
static int cow_half(void)
{
	const struct lay_region *c = &lay.r[LR_COW];
	struct pm_frame *fr = calloc(MAXFRAMES, sizeof(*fr));
	uint64_t *per = calloc(MAXCOUNT, sizeof(*per));
	long double exact = 0;
	struct pm_account a;
	size_t n = 0, i;
	int r = setup();

	if (r < 0 || !fr || !per) {
		free(fr);
		free(per);
		return r < 0 ? t_skip("no layout child: %s", strerror(-r)) : T_FAIL;
	}
	if (!exact_possible() || !c->start || c->error) {
		free(fr);
		free(per);
		return !exact_possible() ? t_skip("PFNs or /proc/kpagecount not readable (root only)") :
					   t_skip("no fork-shared region: %s", strerror(c->error));
	}
	CHECK_EQ_U64(counts_of(c->start, c->end, fr, COW, &n), 0);
	CHECK_EQ_U64(n, COW);
	for (i = 0; i < n; i++)
		CHECK_EQ_U64(fr[i].count, 2);	/* so each page adds page_size / 2: 2048 exactly */
	CHECK_EQ_U64(counts_of(0, UINT64_MAX, fr, MAXFRAMES, &n), 0);
	for (i = 0; i < n; i++)
		if (fr[i].count && fr[i].count < MAXCOUNT && !(fr[i].flags & (1ULL << PM_KPF_HUGE)))
			per[fr[i].count]++;
	for (i = 1; i < MAXCOUNT; i++)
		exact += (long double)per[i] * lay.page_size / i;
	CHECK_EQ_U64(pm_account_process(tgt, kp, &a), 0);
	CHECK_EQ_U64(a.pss, (uint64_t)(exact + 0.5L));
	CHECK(a.pss >= (uint64_t)(ANON + MEMFD) * lay.page_size + (uint64_t)COW * lay.page_size / 2);
	free(fr);
	free(per);
	return T_PASS;
}

/* As root both sources agree; a forced fallback (no pm_kpage) reads smaps_rollup. */
static int sources_agree(void)
{
	struct pm_account e, f;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	CHECK_EQ_U64(pm_account_process(tgt, NULL, &f), 0);
	CHECK_EQ_U64(f.source, PM_ACCOUNT_SMAPS_ROLLUP);
	CHECK_STR(pm_account_source_name(f.source), "smaps_rollup");
	CHECK_EQ_U64(f.exact, 0);
	CHECK_EQ_U64(f.rss % 1024, 0);
	if (!exact_possible())
		return t_skip("fallback checked; PFNs or /proc/kpagecount not readable (root only) for the exact source");
	CHECK_EQ_U64(pm_account_process(tgt, kp, &e), 0);
	CHECK_STR(pm_account_source_name(e.source), "pagemap");
	CHECK_EQ_U64(e.rss, f.rss);
	CHECK_EQ_U64(e.uss, f.uss);
	CHECK_EQ_U64(e.shared, f.shared);
	CHECK_EQ_U64(e.swap, f.swap);
	CHECK(e.pss >= f.pss && e.pss - f.pss < 1024 + 1);	/* the kernel truncates to kB */
	return T_PASS;
}

/* A gone process is an error, never zeros; the process list finds the child. */
static int gone_and_listed(void)
{
	const struct pm_proc *p;
	struct pm_procs *it;
	struct pm_account a;
	bool seen = false;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	CHECK((it = pm_procs_open(ctx)) != NULL);
	while (it && (r = pm_procs_next(it, &p)) == 0)
		if (p->pid == lay.pid) {
			seen = true;
			CHECK_EQ_U64(p->state, PM_PROC_RUNNING);
			CHECK(p->uid_known && p->uid == getuid());
		}
	CHECK_EQ_U64(r, 1);
	CHECK(seen);
	pm_procs_close(it);
	CHECK_EQ_U64(layout_kill_nowait(&lay), 0);
	r = pm_account_process(tgt, kp, &a);
	CHECK(r == -ESRCH);
	CHECK_EQ_U64(a.rss, 0);
	r = pm_account_process(tgt, NULL, &a);
	CHECK(r == -ESRCH || r == -ENOENT);
	return T_PASS;
}

T_MAIN(T(vs_rollup), T(cow_half), T(sources_agree), T(gone_and_listed))
