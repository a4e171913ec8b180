/* test_account.c - live per-process accounting: pm_account_process vs smaps_rollup on known layouts, PSS counted once, both sources. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"
#include "smaps.h"

#define ANON 64
#define COW 128
#define MEMFD 32
#define SLACK 4096	/* smaps_rollup prints kB and truncates Pss */
/*
 * The children are dynamic programs: the PSS of their shared library pages
 * moves whenever any process on the machine maps or unmaps libc. Every
 * comparison of two readings is retried until the readings around it held
 * still (a real difference stays through every try); at a load of 16 a try
 * can see a change more often than not, so there are many.
 */
#define TRIES 50

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

static long long rollup_of(pid_t pid, const char *field)
{
	char path[64];
	long long v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	v = proc_field_kb(path, field);
	return v < 0 ? -1 : v * 1024;
}

static bool near(uint64_t a, long long b)
{
	return b >= 0 && (a > (uint64_t)b ? a - (uint64_t)b : (uint64_t)b - a) <= SLACK;
}

static void check_rollup(const char *what, pid_t pid, struct pm_target *t, struct pm_account *a);

/* The figures match the kernel's own rollup for a quiescent child. */
static int vs_rollup(void)
{
	struct pm_account a;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	check_rollup("layout child", lay.pid, tgt, &a);	/* retried while other processes move libc's PSS */
	CHECK_EQ_U64(a.swap, 0);
	CHECK(a.uss >= (uint64_t)(ANON + MEMFD) * lay.page_size);
	CHECK(a.shared >= (uint64_t)COW * lay.page_size);
	CHECK_EQ_U64(a.source, exact_possible() ? PM_ACCOUNT_PAGEMAP : PM_ACCOUNT_SMAPS_ROLLUP);
	CHECK_EQ_U64(a.exact, exact_possible());
	CHECK(!a.estimate || pm_ctx_probe(ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO);
	CHECK_EQ_U64(a.hugetlb, 0);
	return T_PASS;
}

/* Map count of each present page of @t's [start, end), in page order; -errno. */
static int counts_in(struct pm_target *t, uint64_t start, uint64_t end, struct pm_frame *fr, size_t max, size_t *n)
{
	struct pm_walk *w = pm_walk_new(t, start, end, PM_WALK_ENTRIES);
	const struct pm_run *run;
	uint64_t va;
	int r;

	if (!w)
		return -errno;
	*n = 0;
	while ((r = pm_walk_next(w, &run)) == 0) {
		/* not page by page through runs of nothing: an ASan process reserves terabytes of shadow */
		if (!(run->flags & PM_PAGE_PRESENT) || (run->flags & PM_PAGE_ZERO))
			continue;
		for (va = run->start; va < run->end && *n < max; va += lay.page_size)
			fr[(*n)++].pfn = run->pfn + (va - run->start) / lay.page_size;
	}
	pm_walk_free(w);
	return r < 0 ? r : pm_kpage_lookup(kp, fr, *n);
}

static int counts_of(uint64_t start, uint64_t end, struct pm_frame *fr, size_t max, size_t *n)
{
	return counts_in(tgt, start, end, fr, max, n);
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
	long double exact = 0, held_exact = 0;
	struct pm_account a = { 0 };
	uint64_t held_pss = 0;
	size_t n = 0, i;
	int r = setup(), tries, held = 0;

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
	/*
	 * Processes starting or exiting elsewhere change the counts of shared
	 * library pages: sum before and after pm_account, until both agree.
	 */
	for (tries = 0; tries < TRIES; tries++) {
		long double before = exact;

		memset(per, 0, MAXCOUNT * sizeof(*per));
		exact = 0;
		CHECK_EQ_U64(counts_of(0, UINT64_MAX, fr, MAXFRAMES, &n), 0);
		for (i = 0; i < n; i++)
			if (fr[i].count && fr[i].count < MAXCOUNT && !(fr[i].flags & (1ULL << PM_KPF_HUGE)))
				per[fr[i].count]++;
		for (i = 1; i < MAXCOUNT; i++)
			exact += (long double)per[i] * lay.page_size / i;
		if (tries && exact == before && (uint64_t)(exact + 0.5L) == a.pss)
			break;
		if (tries && exact == before) {
			held++;	/* the counts held still around pm_account, yet the sums differ */
			held_exact = exact;
			held_pss = a.pss;
		}
		CHECK_EQ_U64(pm_account_process(tgt, kp, &a), 0);
	}
	CHECK(a.pss >= (uint64_t)(ANON + MEMFD) * lay.page_size + (uint64_t)COW * lay.page_size / 2);
	free(fr);
	free(per);
	if (tries < TRIES)
		return T_PASS;	/* one sum held still around pm_account and agreed with it */
	/*
	 * A process that starts and exits between two sums leaves them equal
	 * (its +1 and -1 cancel) while pm_account saw it: a busy machine can
	 * make a quiet moment look held. A real difference shows at every
	 * quiet moment, so it takes three of them to call it one.
	 */
	if (held < 3)
		return t_skip("shared library map counts changed (processes starting and exiting elsewhere) around %d of %d sums: the exact PSS could not be compared; the fork-shared pages' counts were",
			      TRIES - held, TRIES);
	CHECK_EQ_U64(held_pss, (uint64_t)(held_exact + 0.5L));
	return T_PASS;
}

/* As root both sources agree; a forced fallback (no pm_kpage) reads smaps_rollup. */
static int sources_agree(void)
{
	struct pm_account e, f;
	int r = setup(), tries;

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	CHECK_EQ_U64(pm_account_process(tgt, NULL, &f), 0);
	CHECK_EQ_U64(f.source, PM_ACCOUNT_SMAPS_ROLLUP);
	CHECK_STR(pm_account_source_name(f.source), "smaps_rollup");
	CHECK_EQ_U64(f.exact, 0);
	CHECK_EQ_U64(f.rss % 1024, 0);
	if (!exact_possible())
		return t_skip("fallback checked; PFNs or /proc/kpagecount not readable (root only) for the exact source");
	/* The two sources read at two moments: retried until the fallback read around the exact one held still. */
	for (tries = 1;; tries++) {
		struct pm_account g;

		CHECK_EQ_U64(pm_account_process(tgt, NULL, &f), 0);
		CHECK_EQ_U64(pm_account_process(tgt, kp, &e), 0);
		CHECK_EQ_U64(pm_account_process(tgt, NULL, &g), 0);
		if (tries >= TRIES || (f.rss == g.rss && f.pss == g.pss && f.uss == g.uss && f.shared == g.shared &&
				       e.rss == f.rss && e.uss == f.uss && e.shared == f.shared &&
				       e.pss >= f.pss && e.pss - f.pss < 1024 + 1))
			break;
	}
	if (tries > 1)
		printf("  %d readings until the fallback held still around the exact source\n", tries);
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

/* ---- more layouts: each process vs its own smaps_rollup ---- */

/*
 * pm_account_process of @t against /proc/@pid/smaps_rollup: RSS, PSS, USS
 * (Private_*), SHARED (Shared_*) and hugetlb (*_Hugetlb) within SLACK each.
 * The figures are printed either way: they are the measurement.
 */
struct rollup {
	long long rss, pss, uss, shared, hugetlb;
};

static struct rollup read_rollup(pid_t pid)
{
	struct rollup r = { rollup_of(pid, "Rss"), rollup_of(pid, "Pss"), 0, 0, 0 };
	long long hp = rollup_of(pid, "Private_Hugetlb"), hs = rollup_of(pid, "Shared_Hugetlb");

	r.uss = rollup_of(pid, "Private_Clean") + rollup_of(pid, "Private_Dirty");
	r.shared = rollup_of(pid, "Shared_Clean") + rollup_of(pid, "Shared_Dirty");
	r.hugetlb = hp < 0 || hs < 0 ? -1 : hp + hs;
	return r;
}

/*
 * The target is quiescent, the rest of the system may not be: a process
 * starting or exiting elsewhere changes the map counts of shared library
 * pages. So smaps_rollup is read before and after pm_account_process, and
 * the three readings are retried (up to TRIES times) until the two rollups agree.
 */
static void check_rollup(const char *what, pid_t pid, struct pm_target *t, struct pm_account *a)
{
	struct rollup before, after;
	long long rss, pss, uss, sh;
	int r, tries = 0;

	/*
	 * Also retried when the figures differ although both rollups agree: a page can change its map
	 * count and back between them (a short-lived process elsewhere, a deferred THP split); a real
	 * difference stays through every try.
	 */
	do {
		before = read_rollup(pid);
		r = pm_account_process(t, kp, a);
		after = read_rollup(pid);
	} while (++tries < TRIES && (memcmp(&before, &after, sizeof(before)) ||
				  (r == 0 && !(near(a->rss, after.rss) && near(a->pss, after.pss) &&
					       near(a->uss, after.uss) && near(a->shared, after.shared)))));
	rss = after.rss;
	pss = after.pss;
	uss = after.uss;
	sh = after.shared;

	CHECK_EQ_U64(r, 0);
	printf("  %s (pid %d, %s): rss %llu/%lld pss %llu/%lld uss %llu/%lld shared %llu/%lld (pm_account/smaps_rollup)\n",
	       what, (int)pid, pm_account_source_name(a->source), (unsigned long long)a->rss, rss,
	       (unsigned long long)a->pss, pss, (unsigned long long)a->uss, uss, (unsigned long long)a->shared, sh);
	if (r || !near(a->rss, rss) || !near(a->pss, pss) || !near(a->uss, uss) || !near(a->shared, sh)) {
		printf("  %s:%d: %s differs from smaps_rollup by more than %d bytes\n", __FILE__, __LINE__, what, SLACK);
		t_failed_checks++;
	}
	if (after.hugetlb >= 0)
		CHECK_EQ_U64(a->hugetlb, (uint64_t)after.hugetlb);
	if (tries > 1)
		printf("  %s: %d readings until smaps_rollup held still and agreed\n", what, tries);
}

/* PSS (bytes, rounded once) of @t's present pages in [start, end) from their map counts. */
static uint64_t range_pss(struct pm_target *t, uint64_t start, uint64_t end, size_t *pages)
{
	static struct pm_frame fr[4096];
	long double sum = 0;
	size_t n = 0, i;

	CHECK_EQ_U64(counts_in(t, start, end, fr, 4096, &n), 0);
	for (i = 0; i < n; i++)
		if (fr[i].count)
			sum += (long double)lay.page_size / fr[i].count;
	*pages = n;
	return (uint64_t)(sum + 0.5L);
}

/* Both sides of the fork-shared region: the child and the grandchild that holds it too. */
static int fork_both_sides(void)
{
	const struct lay_region *c = &lay.r[LR_COW];
	struct pm_target *g;
	struct pm_account a, b;
	size_t n;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	if (!lay.grandchild || !c->start)
		return t_skip("no fork-shared region");
	g = pm_target_open(ctx, lay.grandchild);
	CHECK(g != NULL);
	if (!g)
		return T_FAIL;
	check_rollup("child", lay.pid, tgt, &a);
	check_rollup("grandchild", lay.grandchild, g, &b);
	CHECK(b.shared >= (uint64_t)COW * lay.page_size);
	if (exact_possible()) {
		/* every fork-shared page is half in each: the region adds COW pages once over both PSS */
		uint64_t pa = range_pss(tgt, c->start, c->end, &n), pb;
		CHECK_EQ_U64(n, COW);
		pb = range_pss(g, c->start, c->end, &n);
		CHECK_EQ_U64(n, COW);
		CHECK_EQ_U64(pa + pb, (uint64_t)COW * lay.page_size);
	}
	pm_target_close(g);
	return T_PASS;
}

/*
 * Helper processes with layouts the layout library has no words for. The
 * test binary re-executes itself (as layout.c does, so the helper's memory
 * is its own, not COW-shared with the test); this constructor takes over
 * before main() and reports on a pipe.
 *   m: map memfd FD (PAGES pages) shared and write every page
 *   h: map the first half of memfd FD shared and read every page
 *   t: one PMD-aligned MADV_HUGEPAGE THP, fully written, then fork a
 *      grandchild that MADV_DONTNEEDs its second half
 */
#define HELPER_ENV "PM_ACCOUNT_HELPER"

struct helper_report {
	int error;		/* errno of a failed step, 0 */
	pid_t grandchild;	/* mode t */
	uint64_t start, end;	/* the region */
};

static int helper_setup(char mode, int fd, unsigned pages, struct helper_report *rep)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), pmd = 2u << 20, i;
	volatile char *p;
	char *raw;
	int gp[2];
	char b;

	if (mode == 'm' || mode == 'h') {
		size_t len = (mode == 'm' ? pages : pages / 2) * ps;
		if ((p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
			return errno;
		for (i = 0; i < len / ps; i++)
			if (mode == 'm')
				p[i * ps] = (char)(i + 1);
			else
				(void)p[i * ps];
		rep->start = (uintptr_t)p;
		rep->end = (uintptr_t)p + len;
		return 0;
	}
	raw = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return errno;
	p = (char *)(((uintptr_t)raw + pmd - 1) & ~(uintptr_t)(pmd - 1));
	if (madvise((char *)p, pmd, MADV_HUGEPAGE) < 0)
		return errno;
	for (i = 0; i < pmd / ps; i++)
		p[i * ps] = (char)(i + 7);
	rep->start = (uintptr_t)p;
	rep->end = (uintptr_t)p + pmd;
	if (pipe(gp) < 0 || (rep->grandchild = fork()) < 0)
		return errno;
	if (rep->grandchild == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		b = madvise((char *)p + pmd / 2, pmd / 2, MADV_DONTNEED) == 0 ? 0 : 1;
		if (write(gp[1], &b, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(gp[0], &b, 1) != 1 || b)
		return ECHILD;
	close(gp[0]);
	close(gp[1]);
	return 0;
}

__attribute__((constructor)) static void helper_entry(void)
{
	const char *v = getenv(HELPER_ENV);
	struct helper_report rep = { 0 };
	unsigned pages;
	int rfd, fd;
	char mode;

	if (!v || sscanf(v, "%c,%d,%d,%u", &mode, &rfd, &fd, &pages) != 4)
		return;
	unsetenv(HELPER_ENV);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rep.error = helper_setup(mode, fd, pages, &rep);
	if (fd >= 0)
		close(fd);
	if (write(rfd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(1);
	close(rfd);
	for (;;)
		pause();
}

struct helper {
	pid_t pid;
	struct helper_report rep;
};

/* Start a helper in @mode; 0 or -errno (nothing left running then). */
static int helper_start(struct helper *h, char mode, int fd, unsigned pages)
{
	char env[64];
	int p[2], r = 0;

	memset(h, 0, sizeof(*h));
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	h->pid = fork();
	if (h->pid == 0) {
		char *argv[] = { (char *)"pm-account-helper", NULL };
		snprintf(env, sizeof(env), "%c,%d,%d,%u", mode, p[1], fd, pages);
		if (setenv(HELPER_ENV, env, 1) == 0 && fcntl(p[1], F_SETFD, 0) == 0 && (fd < 0 || fcntl(fd, F_SETFD, 0) == 0))
			execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	if (h->pid < 0)
		r = -errno;
	else if (read(p[0], &h->rep, sizeof(h->rep)) != (ssize_t)sizeof(h->rep))
		r = -ECHILD;
	else if (h->rep.error)
		r = -h->rep.error;
	close(p[0]);
	if (r < 0 && h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		h->pid = 0;
	}
	return r;
}

static void helper_stop(struct helper *h)
{
	if (h->rep.grandchild > 0)
		kill(h->rep.grandchild, SIGKILL);
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	/* the grandchild came back to us if we are a subreaper (layout.c makes us one); else init reaps it */
	if (h->rep.grandchild > 0)
		waitpid(h->rep.grandchild, NULL, 0);
	h->pid = h->rep.grandchild = 0;
}

#define MEMFD2 64

/* A memfd mapped by two processes: one maps all of it, the other the first half. Both PSS vs smaps_rollup. */
static int memfd_two(void)
{
	struct helper a, b;
	struct pm_target *ta = NULL, *tb = NULL;
	struct pm_account x, y;
	int fd, r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	fd = memfd_create("pm-account-two", MFD_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)MEMFD2 * lay.page_size) == 0);
	if (fd < 0)
		return T_FAIL;
	CHECK_EQ_U64(-helper_start(&a, 'm', fd, MEMFD2), 0);
	CHECK_EQ_U64(-helper_start(&b, 'h', fd, MEMFD2), 0);
	close(fd);
	if (a.pid > 0 && b.pid > 0) {
		CHECK((ta = pm_target_open(ctx, a.pid)) != NULL);
		CHECK((tb = pm_target_open(ctx, b.pid)) != NULL);
	}
	if (ta && tb) {
		check_rollup("memfd, all", a.pid, ta, &x);
		check_rollup("memfd, half", b.pid, tb, &y);
		CHECK(x.shared >= (uint64_t)MEMFD2 / 2 * lay.page_size);
		CHECK(y.shared >= (uint64_t)MEMFD2 / 2 * lay.page_size);
		if (exact_possible()) {
			size_t n, m;
			uint64_t pa = range_pss(ta, a.rep.start, a.rep.end, &n);
			uint64_t pb = range_pss(tb, b.rep.start, b.rep.end, &m);
			printf("  memfd PSS: %llu + %llu bytes over %zu + %zu pages\n", (unsigned long long)pa,
			       (unsigned long long)pb, n, m);
			CHECK_EQ_U64(n, MEMFD2);
			CHECK_EQ_U64(m, MEMFD2 / 2);
			/* half mapped twice, half once: 3/4 and 1/4 of the file, counted once in all */
			CHECK_EQ_U64(pa, (uint64_t)MEMFD2 * lay.page_size * 3 / 4);
			CHECK_EQ_U64(pb, (uint64_t)MEMFD2 * lay.page_size / 4);
		}
	}
	pm_target_close(ta);
	pm_target_close(tb);
	helper_stop(&a);
	helper_stop(&b);
	return T_PASS;
}

/* A layout child of its own, vs its smaps_rollup; *@l is stopped by the caller. */
static int own_layout(const struct layout_opts *o, struct layout *l, struct pm_target **t)
{
	int r = setup();

	if (r < 0)
		return r;
	if ((r = layout_start(o, l)) < 0)
		return r;
	if (!(*t = pm_target_open(ctx, l->pid))) {
		r = -errno;
		layout_stop(l);
	}
	return r;
}

/* PMD-mapped THPs (and one PTE-mapped whole folio): counted once, each base page with its map count. */
static int thp(void)
{
	struct layout_opts o = { .anon_pages = 16, .thp_count = 2, .thp_split = true };
	struct pm_target *t = NULL;
	struct pm_account a;
	struct layout l;
	int r;

	if (!thp_enabled())
		return t_skip("transparent huge pages are disabled (transparent_hugepage/enabled is [never])");
	if ((r = own_layout(&o, &l, &t)) < 0)
		return t_skip("no layout child: %s", strerror(-r));
	if (l.r[LR_THP].error) {
		r = l.r[LR_THP].error;
		pm_target_close(t);
		layout_stop(&l);
		return t_skip("no THP: %s (EAGAIN: the kernel could not give huge pages)", strerror(r));
	}
	check_rollup("thp", l.pid, t, &a);
	printf("  AnonHugePages %lld\n", rollup_of(l.pid, "AnonHugePages"));
	CHECK(rollup_of(l.pid, "AnonHugePages") >= 2 * (long long)l.pmd_size);
	CHECK(a.rss >= 2 * l.pmd_size);
	CHECK(a.uss >= 2 * l.pmd_size);
	if (a.source == PM_ACCOUNT_PAGEMAP)
		CHECK_EQ_U64(a.estimate, pm_ctx_probe(ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO);
	pm_target_close(t);
	layout_stop(&l);
	return T_PASS;
}

/* A THP shared by fork, half of it dropped in the grandchild: 3/4 here, 1/4 there, each side vs smaps_rollup. */
static int thp_fork_half(void)
{
	struct pm_target *ta = NULL, *tb = NULL;
	struct pm_account x, y;
	struct helper h;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	if (!thp_enabled())
		return t_skip("transparent huge pages are disabled (transparent_hugepage/enabled is [never])");
	if ((r = helper_start(&h, 't', -1, 0)) < 0)
		return t_skip("THP helper: %s", strerror(-r));
	if (rollup_of(h.pid, "AnonHugePages") < (long long)lay.pmd_size) {
		helper_stop(&h);
		return t_skip("the helper got no huge page (fragmented memory?)");
	}
	CHECK((ta = pm_target_open(ctx, h.pid)) != NULL);
	CHECK((tb = pm_target_open(ctx, h.rep.grandchild)) != NULL);
	if (ta && tb) {
		check_rollup("thp, whole", h.pid, ta, &x);
		check_rollup("thp, half", h.rep.grandchild, tb, &y);
		if (exact_possible() && pm_ctx_probe(ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_YES) {
			size_t n, m;
			uint64_t pa = range_pss(ta, h.rep.start, h.rep.end, &n);
			uint64_t pb = range_pss(tb, h.rep.start, h.rep.end, &m);
			printf("  THP PSS: %llu + %llu bytes over %zu + %zu pages\n", (unsigned long long)pa,
			       (unsigned long long)pb, n, m);
			CHECK_EQ_U64(pa, lay.pmd_size * 3 / 4);
			CHECK_EQ_U64(pb, lay.pmd_size / 4);
		}
	}
	pm_target_close(ta);
	pm_target_close(tb);
	helper_stop(&h);
	return T_PASS;
}

/* Read-faulted anonymous memory maps the zero page (and huge zero page): present, yet in no RSS. */
static int zero_pages(void)
{
	struct layout_opts o = { .anon_pages = 16, .zero_pages = 256, .hzero_count = thp_enabled() ? 1 : 0 };
	struct pm_target *t = NULL;
	const struct pm_run *run;
	struct pm_account a;
	struct pm_walk *w;
	uint64_t zero = 0;
	struct layout l;
	int r;

	if ((r = own_layout(&o, &l, &t)) < 0)
		return t_skip("no layout child: %s", strerror(-r));
	check_rollup("zero", l.pid, t, &a);
	if (l.r[LR_ZERO].error) {
		const char *why = layout_region_why(&l, LR_ZERO);

		pm_target_close(t);
		layout_stop(&l);
		return t_skip("%s", why);
	}
	/* the region really is the zero page, so counting it would have shown above */
	if ((w = pm_walk_new(t, l.r[LR_ZERO].start, l.r[LR_ZERO].end, 0))) {
		while (pm_walk_next(w, &run) == 0)
			if ((run->flags & (PM_PAGE_PRESENT | PM_PAGE_ZERO)) == (PM_PAGE_PRESENT | PM_PAGE_ZERO))
				zero += (run->end - run->start) / l.page_size;
		pm_walk_free(w);
	}
	printf("  %llu zero pages seen, huge zero region: %s\n", (unsigned long long)zero,
	       l.r[LR_HZERO].start && !l.r[LR_HZERO].error ? "yes" : "no");
	if (pm_target_pfn_view(t) == PM_PFN_VISIBLE)
		CHECK_EQ_U64(zero, 256);
	pm_target_close(t);
	layout_stop(&l);
	return T_PASS;
}

/* kernel config from /proc/config.gz or /boot: 1 if @opt=y, 0 if not set, -1 if no config is readable. */
static int config_has(const char *opt)
{
	char cmd[512], line[256];
	struct utsname u;
	FILE *f;
	int r = -1;

	if (uname(&u) < 0)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "{ zcat /proc/config.gz 2>/dev/null || cat /boot/config-%s 2>/dev/null; } | grep -E '^(# )?%s[= ]'",
		 u.release, opt);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		r = strstr(line, "=y") ? 1 : 0;
	pclose(f);
	return r;
}

/* Our mappings marked MADV_HUGEPAGE ("hg" in VmFlags), as the probe's THP is; -1 if smaps is unreadable. */
static long count_hg_maps(void)
{
	struct smaps s;
	long n = 0;
	size_t i;

	if (smaps_read(getpid(), &s) < 0)
		return -1;
	for (i = 0; i < s.n; i++)
		n += strstr(s.v[i].vmflags, " hg") != NULL;
	smaps_free(&s);
	return n;
}

/* The library's debug lines about the probe, kept for the test. */
static void probe_log(void *data, const char *line)
{
	if (strstr(line, "page_mapcount probe: "))
		snprintf(data, 64, "%s", strstr(line, "page_mapcount probe: ") + 21);
}

/* The page_mapcount probe: it ran by effect, matches the kernel config, and leaves no mapping or child behind. */
static int mapcount_probe(void)
{
	long before = count_hg_maps(), after;
	struct pm_ctx *c = pm_ctx_new(NULL);
	const struct pm_features *f;
	char said[64] = "";
	int cfg = config_has("CONFIG_NO_PAGE_MAPCOUNT"), st;

	if (c)
		pm_ctx_set_log(c, probe_log, said);	/* a callback turns the debug lines on */
	f = c ? pm_ctx_probe(c, PM_PROBE_MAPCOUNT) : NULL;
	CHECK(f != NULL);
	if (!f)
		return T_FAIL;
	printf("  probe: %s\n", said[0] ? said : "(did not run)");
	/*
	 * As root with THP on, on 6.15+ (where CONFIG_NO_PAGE_MAPCOUNT exists) the answer comes from
	 * the probe; older kernels always count per page, and the probe does not run there.
	 */
	if (kernel_at_least(6, 15) && f->pfn_view == PM_PFN_VISIBLE && f->kpagecount.readable && thp_enabled() &&
	    strcmp(said, "no THP to probe with"))
		CHECK(!strcmp(said, "per-page") || !strcmp(said, "averaged"));
	after = count_hg_maps();
	CHECK(before >= 0);
	CHECK_EQ_U64(after, before);
	CHECK(waitpid(-1, &st, WNOHANG) <= 0);	/* no child of the probe left to reap */
	printf("  page_mapcount %s; CONFIG_NO_PAGE_MAPCOUNT %s\n",
	       f->page_mapcount == PM_YES ? "yes" : f->page_mapcount == PM_NO ? "no" : "unknown",
	       cfg == 1 ? "y" : cfg == 0 ? "not set" : "(no config readable)");
	if (!kernel_at_least(6, 15))
		CHECK_EQ_U64(f->page_mapcount, PM_YES);
	if (f->page_mapcount == PM_UNKNOWN) {
		bool no_pfns = f->pfn_view != PM_PFN_VISIBLE || !f->kpagecount.readable;

		pm_ctx_free(c);		/* f is c's */
		if (no_pfns)
			return t_skip("the probe needs PFNs and /proc/kpagecount (root)");
		return t_skip("the probe got no transparent huge page (THP disabled or memory fragmented)");
	}
	if (cfg >= 0)
		CHECK_EQ_U64(f->page_mapcount, cfg ? PM_NO : PM_YES);
	pm_ctx_free(c);
	return T_PASS;
}


T_MAIN(T(mapcount_probe), T(vs_rollup), T(cow_half), T(sources_agree), T(fork_both_sides), T(memfd_two), T(thp),
       T(thp_fork_half), T(zero_pages), T(gone_and_listed))
