/* test_wss.c - live working-set windows: a child touches a known 64 of its 256 pages; each method counts them, exit mid-window, EACCES for other users, the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define PAGES		256	/* written before the window */
#define TOUCHED		64	/* read again and again during it: pages [TOUCH_FIRST, TOUCH_FIRST + TOUCHED) */
#define WINDOWS		20	/* windows a referenced count may take to be exact (see referenced_exact) */
#define TOUCH_FIRST	32	/* not the last pages written: those may still sit in a per-CPU LRU batch */

#define THP_TOUCHED	3	/* the one page of the huge page read during the window */

/*
 * A child with one private anonymous mapping, driven through two pipes:
 * PAGES small pages, or (thp) one PMD-aligned huge page of thp_bytes.
 */
struct kid {
	pid_t pid;
	int cmd, rep;		/* to it, from it */
	uint64_t addr;
	size_t ps;
	bool thp;
	uint64_t thp_bytes;
};

static void kid_touch_loop(volatile const char *p, const struct kid *k)
{
	struct pollfd pfd = { .fd = k->cmd, .events = POLLIN };
	unsigned sum = 0;
	size_t i;
	char c = 'k';

	for (;;) {
		if (k->thp)
			sum += (unsigned char)p[THP_TOUCHED * k->ps];
		for (i = TOUCH_FIRST; !k->thp && i < TOUCH_FIRST + TOUCHED; i++)
			sum += (unsigned char)p[i * k->ps];
		if (poll(&pfd, 1, 1) > 0)
			break;
	}
	if (read(k->cmd, &c, 1) != 1 || write(k->rep, &sum, 1) != 1)
		_exit(1);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25	/* Linux 6.1 */
#endif

/* The mapping: PAGES small pages, or one PMD-aligned huge page. */
static char *kid_map(const struct kid *k, size_t *len)
{
	char *p, *raw;

	*len = k->thp ? k->thp_bytes : PAGES * k->ps;
	raw = mmap(NULL, *len * (k->thp ? 2 : 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	if (!k->thp) {
		madvise(raw, *len, MADV_NOHUGEPAGE);	/* 4 KiB pages whatever the THP setting */
		return raw;
	}
	p = (char *)(((uintptr_t)raw + *len - 1) & ~(uintptr_t)(*len - 1));
	madvise(p, *len, MADV_HUGEPAGE);
	return p;
}

static void __attribute__((noreturn)) kid_main(struct kid *k)
{
	size_t len, i;
	char *p = kid_map(k, &len);
	uint64_t a = (uint64_t)(uintptr_t)p;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!p)
		_exit(1);
	for (i = 0; i < len / k->ps; i++)
		p[i * k->ps] = (char)(i + 1);
	if (k->thp)
		madvise(p, len, MADV_COLLAPSE);	/* in case the first fault got no huge page */
	if (write(k->rep, &a, sizeof(a)) != (ssize_t)sizeof(a))
		_exit(1);
	/* 't': touch until the next byte, then answer; 'q' or EOF: exit. */
	while (read(k->cmd, &c, 1) == 1 && c == 't')
		kid_touch_loop(p, k);
	_exit(0);
}

static uint64_t pmd_bytes(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int kid_start_as(struct kid *k, bool thp)
{
	int to[2], from[2];

	memset(k, 0, sizeof(*k));
	k->cmd = k->rep = -1;
	k->thp = thp;
	k->thp_bytes = thp ? pmd_bytes() : 0;
	k->ps = (size_t)sysconf(_SC_PAGESIZE);
	if (thp && !k->thp_bytes)
		return -EOPNOTSUPP;
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (k->pid == 0) {
		close(to[1]);
		close(from[0]);
		k->cmd = to[0];
		k->rep = from[1];
		kid_main(k);
	}
	close(to[0]);
	close(from[1]);
	k->cmd = to[1];
	k->rep = from[0];
	if (read(k->rep, &k->addr, sizeof(k->addr)) != (ssize_t)sizeof(k->addr))
		return -ECHILD;
	return 0;
}

static int kid_start(struct kid *k)
{
	return kid_start_as(k, false);
}

/* Make the child touch its pages for about @ms milliseconds, and wait until it has stopped. */
static int kid_touch(struct kid *k, unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	char c;

	if (write(k->cmd, "t", 1) != 1)
		return -EPIPE;
	nanosleep(&ts, NULL);
	if (write(k->cmd, "s", 1) != 1 || read(k->rep, &c, 1) != 1)
		return -EPIPE;
	return 0;
}

static void kid_stop(struct kid *k)
{
	if (k->pid > 0) {
		kill(k->pid, SIGKILL);
		while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (k->cmd >= 0)
		close(k->cmd);
	if (k->rep >= 0)
		close(k->rep);
	k->pid = 0;
	k->cmd = k->rep = -1;
}

static struct pm_ctx *ctx;

static bool init_ctx(void)
{
	if (!ctx)
		ctx = pm_ctx_new(NULL);
	return ctx && pm_ctx_features(ctx);
}

/* Can @m work here? SKIP words in @why when not. */
static bool method_available(struct pm_target *t, enum pm_wss_method m, char *why, size_t size)
{
	return pm_wss_explain(t, m, why, size) == 0;
}

/* One window over the child with @m; the record of its mapping into *@rec. Returns 0, a T_ code on trouble. */
static int measure(enum pm_wss_method m, struct pm_wss_mapping *rec, struct pm_wss_summary *sum)
{
	struct kid k;
	struct pm_target *t = NULL;
	struct pm_wss *w = NULL;
	const struct pm_wss_mapping *r;
	char why[512];
	int rc = T_FAIL, found = 0, e;

	if (!init_ctx())
		return T_FAIL;
	if ((e = kid_start(&k)) < 0) {
		printf("  child: %s\n", strerror(-e));
		kid_stop(&k);
		return T_FAIL;
	}
	t = pm_target_open(ctx, k.pid);
	CHECK(t != NULL);
	if (!t)
		goto out;
	if (!method_available(t, m, why, sizeof(why))) {
		rc = t_skip("method %s: %s", pm_wss_method_name(m), why);
		goto out;
	}
	w = pm_wss_new(t, m);
	CHECK(w != NULL);
	if (!w)
		goto out;
	CHECK_EQ_U64(pm_wss_method(w), m);
	CHECK(pm_wss_reason(w)[0] != '\0');
	CHECK_EQ_U64(pm_wss_next(w, &r), (uint64_t)-EINVAL);	/* nothing before a stop */
	CHECK_EQ_U64(pm_wss_stop(w, sum), (uint64_t)-EINVAL);	/* nor before a start */
	CHECK_EQ_U64(pm_wss_start(w), 0);
	CHECK_EQ_U64(kid_touch(&k, 200), 0);
	e = pm_wss_stop(w, sum);
	CHECK_EQ_U64(e, 0);
	if (e)
		goto out;
	while (pm_wss_next(w, &r) == 0) {
		if (r->start <= k.addr && k.addr < r->end) {
			*rec = *r;
			rec->path = NULL;
			found++;
		}
	}
	CHECK_EQ_U64(found, 1);
	CHECK_EQ_U64(sum->method, m);
	CHECK(sum->window_ns >= 150000000u);	/* the child touched for 200 ms inside it */
	CHECK(sum->window_max_ns >= sum->window_ns);
	CHECK(sum->accessed <= sum->resident);
	CHECK(sum->mappings > 1);
	rc = found == 1 ? T_PASS : T_FAIL;
	if (found == 1)
		printf("  %s: mapping of %d pages: resident %llu, accessed %llu, untracked %llu pages; process: "
		       "resident %llu KiB, accessed %llu KiB; window %.3f s (at most %.3f s)\n",
		       pm_wss_method_name(m), PAGES, (unsigned long long)(rec->resident / k.ps),
		       (unsigned long long)(rec->accessed / k.ps), (unsigned long long)(rec->untracked / k.ps),
		       (unsigned long long)(sum->resident >> 10), (unsigned long long)(sum->accessed >> 10),
		       (double)sum->window_ns / 1e9, (double)sum->window_max_ns / 1e9);
	if (found == 1) {
		CHECK_EQ_U64(rec->start, k.addr);
		CHECK_EQ_U64(rec->end, k.addr + PAGES * k.ps);
	}
out:
	pm_wss_free(w);
	pm_target_close(t);
	kid_stop(&k);
	return rc;
}

/* clear_refs 1, then smaps Referenced: exactly the 64 pages read during the window. */
static int referenced_exact(void)
{
	struct pm_wss_mapping rec;
	struct pm_wss_summary sum;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	int rc, tries = 0;

	/*
	 * Seen under CI load only (a paravirtualized guest, QEMU guests beside
	 * it): a window whose touched pages all read unreferenced, with no page
	 * reclaim at all (pgscan 0), seen twice in a row once. On another such
	 * guest with two busy loops beside the test, windows read 1 to 63 of the
	 * 64 pages, and five windows in a row fell short in two CI legs of 2026-12-06
	 * (unpriv_own_process). Take up to WINDOWS windows; one must be exact.
	 */
	do
		rc = measure(PM_WSS_REFERENCED, &rec, &sum);
	while (rc == T_PASS && rec.accessed != TOUCHED * ps && ++tries < WINDOWS);
	if (rc != T_PASS)
		return rc;
	if (tries)
		printf("  %d window(s) before this one read %llu of %d pages accessed\n", tries,
		       (unsigned long long)(rec.accessed / ps), TOUCHED);
	CHECK_EQ_U64(rec.resident, PAGES * ps);
	CHECK_EQ_U64(rec.accessed, TOUCHED * ps);
	CHECK_EQ_U64(rec.untracked, 0);
	CHECK_EQ_U64(sum.untracked, 0);
	return T_PASS;
}

/*
 * Idle page tracking: the 64 pages read, and well below all 256. A page
 * still in a per-CPU LRU batch when the window opened cannot be marked
 * idle: it is untracked, never counted accessed; the read pages were
 * written long before that batch and are tracked. Not asserted exact: no
 * kernel at hand (6.18 here, Debian's 6.1 and 6.12) has
 * CONFIG_IDLE_PAGE_TRACKING to show it is deterministic; idle_standin
 * checks the exact count of the bookkeeping.
 */
static int idle_exact(void)
{
	struct pm_wss_mapping rec;
	struct pm_wss_summary sum;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	int rc = measure(PM_WSS_IDLE, &rec, &sum);

	if (rc != T_PASS)
		return rc;
	CHECK_EQ_U64(rec.resident, PAGES * ps);
	CHECK(rec.accessed >= TOUCHED * ps);
	CHECK(rec.accessed <= PAGES / 2 * ps);
	CHECK(rec.untracked <= (PAGES - TOUCH_FIRST - TOUCHED) * ps);
	return T_PASS;
}

/*
 * A plain file standing in for /sys/kernel/mm/page_idle/bitmap
 * (PAGEMAP_WSS_BITMAP): the IDLE bookkeeping (frames, folio heads, coalesced
 * writes and reads, the tally) runs on kernels without idle page tracking.
 * Nothing in the kernel clears its bits: the test plays the kernel and
 * clears the bits of the frames the child touched.
 */
static char standin[4096];

/* $TMPDIR, else /tmp, as the other live tests do. */
static const char *tmpdir(void)
{
	const char *d = getenv("TMPDIR");

	return d && *d ? d : "/tmp";
}

static bool standin_on(void)
{
	int fd;

	if (geteuid() != 0)
		return false;
	snprintf(standin, sizeof(standin), "%s/pm-wss-bitmap-XXXXXX", tmpdir());
	fd = mkstemp(standin);
	if (fd < 0)
		return false;
	close(fd);
	setenv("PAGEMAP_WSS_BITMAP", standin, 1);
	return true;
}

static void standin_off(void)
{
	unsetenv("PAGEMAP_WSS_BITMAP");
	if (standin[0])
		unlink(standin);
	standin[0] = '\0';
}

/* Test (and with @clear, clear) the bit of frame @pfn in the stand-in. 1 set, 0 clear, <0 -errno. */
static int standin_bit(uint64_t pfn, bool clear)
{
	int fd = open(standin, O_RDWR | O_CLOEXEC), r;
	off_t off = (off_t)(pfn / 64 * 8);
	uint64_t word = 0, bit = 1ULL << (pfn % 64);

	if (fd < 0)
		return -errno;
	if (pread(fd, &word, 8, off) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = (word & bit) != 0;
	word &= ~bit;
	if (clear && r && pwrite(fd, &word, 8, off) != 8)
		r = -EIO;
	close(fd);
	return r;
}

/* The frames of the @n pages of @t from @addr into @pfns (0 where none). Returns how many have one. */
static size_t frames_of(struct pm_target *t, uint64_t addr, size_t n, size_t ps, uint64_t *pfns)
{
	struct pm_walk *w = pm_walk_new(t, addr, addr + n * ps, PM_WALK_ENTRIES);
	const struct pm_run *r;
	uint64_t va;
	size_t got = 0;

	memset(pfns, 0, n * sizeof(*pfns));
	if (!w)
		return 0;
	while (pm_walk_next(w, &r) == 0) {
		if ((r->flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME)) != (PM_PAGE_PRESENT | PM_PAGE_FRAME))
			continue;
		for (va = r->start; va < r->end; va += ps, got++)
			pfns[(va - addr) / ps] = r->pfn + (va - r->start) / ps;
	}
	pm_walk_free(w);
	return got;
}

/* Our mapping's record after a stop, into *@rec (path dropped). Returns how many matched. */
static int find_rec(struct pm_wss *w, uint64_t addr, struct pm_wss_mapping *rec)
{
	const struct pm_wss_mapping *r;
	int found = 0;

	while (pm_wss_next(w, &r) == 0)
		if (r->start <= addr && addr < r->end) {
			*rec = *r;
			rec->path = NULL;
			found++;
		}
	return found;
}

/*
 * IDLE through the stand-in: after the start every tracked frame of the
 * mapping has its bit set; the test clears those of the 64 read pages, as
 * the kernel would on access; the stop counts exactly them. A second window
 * with nothing cleared counts none.
 */
static int idle_standin(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), i, marked = 0, touched_marked = 0;
	uint64_t pfns[PAGES];
	struct pm_wss_mapping rec;
	struct pm_wss_summary sum;
	struct pm_target *t = NULL;
	struct pm_wss *w = NULL;
	struct kid k;
	int rc = T_FAIL;

	if (!init_ctx())
		return T_FAIL;
	if (!standin_on())
		return t_skip("needs root (visible frame numbers, kpageflags) and a file in %s", tmpdir());
	if (kid_start(&k) < 0)
		goto out;
	t = pm_target_open(ctx, k.pid);
	CHECK(t != NULL);
	if (!t)
		goto out;
	w = pm_wss_new(t, PM_WSS_IDLE);
	CHECK(w != NULL);
	if (!w)
		goto out;
	CHECK(strstr(pm_wss_reason(w), "PAGEMAP_WSS_BITMAP") != NULL);
	CHECK_EQ_U64(pm_wss_start(w), 0);
	CHECK_EQ_U64(frames_of(t, k.addr, PAGES, ps, pfns), PAGES);
	for (i = 0; i < PAGES; i++) {
		bool touched = i >= TOUCH_FIRST && i < TOUCH_FIRST + TOUCHED;
		int b = standin_bit(pfns[i], touched);
		CHECK(b >= 0);
		marked += b == 1;
		touched_marked += b == 1 && touched;
	}
	/* Only pages still in a per-CPU LRU batch (the last written) may be left out. */
	printf("  stand-in: %zu of %d frames marked idle at the start, %zu of the %d read\n", marked, PAGES,
	       touched_marked, TOUCHED);
	CHECK(marked >= PAGES - 32);
	CHECK_EQ_U64(touched_marked, TOUCHED);
	CHECK_EQ_U64(pm_wss_stop(w, &sum), 0);
	CHECK_EQ_U64(find_rec(w, k.addr, &rec), 1);
	printf("  stand-in: mapping: resident %llu, accessed %llu, untracked %llu pages; process: resident %llu KiB, "
	       "accessed %llu KiB, untracked %llu KiB\n", (unsigned long long)(rec.resident / ps),
	       (unsigned long long)(rec.accessed / ps), (unsigned long long)(rec.untracked / ps),
	       (unsigned long long)(sum.resident >> 10), (unsigned long long)(sum.accessed >> 10),
	       (unsigned long long)(sum.untracked >> 10));
	CHECK_EQ_U64(sum.method, PM_WSS_IDLE);
	CHECK_EQ_U64(rec.resident, PAGES * ps);
	CHECK_EQ_U64(rec.accessed, TOUCHED * ps);
	CHECK_EQ_U64(rec.untracked, (PAGES - marked) * ps);
	CHECK(sum.accessed >= TOUCHED * ps && sum.accessed <= sum.resident);
	/* Again, and this time the "kernel" sees no access. */
	CHECK_EQ_U64(pm_wss_start(w), 0);
	CHECK_EQ_U64(pm_wss_stop(w, &sum), 0);
	CHECK_EQ_U64(find_rec(w, k.addr, &rec), 1);
	CHECK_EQ_U64(rec.resident, PAGES * ps);
	CHECK_EQ_U64(rec.accessed, 0);
	rc = T_PASS;
out:
	pm_wss_free(w);
	pm_target_close(t);
	kid_stop(&k);
	standin_off();
	return rc;
}

/* Is [addr, addr + len) of @t one PMD-mapped huge page? */
static bool is_huge(struct pm_target *t, uint64_t addr, uint64_t len)
{
	struct pm_walk *w = pm_walk_new(t, addr, addr + len, PM_WALK_ENTRIES);
	const struct pm_run *r;
	uint64_t huge = 0;

	if (!w)
		return false;
	while (pm_walk_next(w, &r) == 0)
		if ((pm_walk_known(w) & PM_PAGE_THP) && (r->flags & PM_PAGE_THP))
			huge += r->end - r->start;
	pm_walk_free(w);
	return huge == len;
}

/* One page of a huge page read during the window: the whole huge page is accessed, by either method. */
static int thp_method(enum pm_wss_method m, int *tried)
{
	const struct pm_wss_mapping *r;
	struct pm_wss_summary sum;
	struct pm_target *t = NULL;
	struct pm_wss *w = NULL;
	char why[512];
	struct kid k;
	int found = 0, e;

	if ((e = kid_start_as(&k, true)) < 0) {
		kid_stop(&k);
		return e == -EOPNOTSUPP ? T_SKIP : T_FAIL;
	}
	t = pm_target_open(ctx, k.pid);
	CHECK(t != NULL);
	if (!t || !is_huge(t, k.addr, k.thp_bytes) || !method_available(t, m, why, sizeof(why))) {
		if (t && !is_huge(t, k.addr, k.thp_bytes))
			printf("  %s: the huge page did not form\n", pm_wss_method_name(m));
		pm_target_close(t);
		kid_stop(&k);
		return t ? T_SKIP : T_FAIL;
	}
	w = pm_wss_new(t, m);
	CHECK(w && pm_wss_start(w) == 0);
	CHECK_EQ_U64(kid_touch(&k, 100), 0);
	CHECK(w && pm_wss_stop(w, &sum) == 0);
	while (w && pm_wss_next(w, &r) == 0) {
		if (r->start <= k.addr && k.addr < r->end) {
			printf("  %s: huge page of %llu KiB, one page read: resident %llu KiB, accessed %llu KiB\n",
			       pm_wss_method_name(m), (unsigned long long)(k.thp_bytes >> 10),
			       (unsigned long long)(r->resident >> 10), (unsigned long long)(r->accessed >> 10));
			CHECK_EQ_U64(r->resident, k.thp_bytes);
			CHECK_EQ_U64(r->accessed, k.thp_bytes);
			found++;
		}
	}
	CHECK_EQ_U64(found, 1);
	(*tried)++;
	pm_wss_free(w);
	pm_target_close(t);
	kid_stop(&k);
	return T_PASS;
}

/* A huge page through the stand-in: only its head frame is marked; clearing that one bit makes it all accessed. */
static int thp_standin(int *tried)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), i, others = 0, n;
	struct pm_wss_mapping rec;
	struct pm_wss_summary sum;
	struct pm_target *t = NULL;
	struct pm_wss *w = NULL;
	uint64_t *pfns = NULL;
	struct kid k;
	int rc = T_SKIP;

	if (!standin_on())
		return T_SKIP;
	if (kid_start_as(&k, true) < 0)
		goto out;
	n = k.thp_bytes / ps;
	t = pm_target_open(ctx, k.pid);
	pfns = calloc(n, sizeof(*pfns));
	if (!t || !pfns || !is_huge(t, k.addr, k.thp_bytes) || !(w = pm_wss_new(t, PM_WSS_IDLE)))
		goto out;
	rc = T_FAIL;
	CHECK_EQ_U64(pm_wss_start(w), 0);
	CHECK_EQ_U64(frames_of(t, k.addr, n, ps, pfns), n);
	CHECK_EQ_U64(pfns[0] % n, 0);
	for (i = 1; i < n; i++)
		others += standin_bit(pfns[i], false) == 1;
	CHECK_EQ_U64(others, 0);				/* tails carry no flag */
	CHECK_EQ_U64(standin_bit(pfns[0], true), 1);		/* the head does: "accessed" now */
	CHECK_EQ_U64(pm_wss_stop(w, &sum), 0);
	CHECK_EQ_U64(find_rec(w, k.addr, &rec), 1);
	printf("  stand-in: huge page of %llu KiB, head bit cleared: resident %llu KiB, accessed %llu KiB\n",
	       (unsigned long long)(k.thp_bytes >> 10), (unsigned long long)(rec.resident >> 10),
	       (unsigned long long)(rec.accessed >> 10));
	CHECK_EQ_U64(rec.resident, k.thp_bytes);
	CHECK_EQ_U64(rec.accessed, k.thp_bytes);
	CHECK_EQ_U64(rec.untracked, 0);
	CHECK_EQ_U64(pm_wss_start(w), 0);			/* and untouched: none of it */
	CHECK_EQ_U64(pm_wss_stop(w, &sum), 0);
	CHECK_EQ_U64(find_rec(w, k.addr, &rec), 1);
	CHECK_EQ_U64(rec.accessed, 0);
	(*tried)++;
	rc = T_PASS;
out:
	free(pfns);
	pm_wss_free(w);
	pm_target_close(t);
	kid_stop(&k);
	standin_off();
	return rc;
}

static int thp_counts_whole(void)
{
	int tried = 0;

	if (!init_ctx())
		return T_FAIL;
	if (thp_method(PM_WSS_REFERENCED, &tried) == T_FAIL || thp_method(PM_WSS_IDLE, &tried) == T_FAIL ||
	    thp_standin(&tried) == T_FAIL)
		return T_FAIL;
	return tried ? T_PASS : t_skip("no transparent huge page could be made, or no method works here");
}

/* AUTO takes idle page tracking exactly when it can work, and says why either way. */
static int auto_choice(void)
{
	struct pm_target *t;
	struct pm_wss *w;
	char why[512];
	bool idle;

	if (!init_ctx())
		return T_FAIL;
	t = pm_target_open(ctx, 0);
	CHECK(t != NULL);
	if (!t)
		return T_FAIL;
	idle = pm_wss_explain(t, PM_WSS_IDLE, why, sizeof(why)) == 0;
	printf("  idle: %s\n", why);
	CHECK_EQ_U64(pm_wss_explain(t, PM_WSS_AUTO, why, sizeof(why)), 0);
	w = pm_wss_new(t, PM_WSS_AUTO);
	CHECK(w != NULL);
	if (w) {
		printf("  auto: %s: %s\n", pm_wss_method_name(pm_wss_method(w)), pm_wss_reason(w));
		CHECK_EQ_U64(pm_wss_method(w), idle ? PM_WSS_IDLE : PM_WSS_REFERENCED);
		CHECK_STR(pm_wss_reason(w), why);
	}
	/* No bitmap: forcing idle fails cleanly (EOPNOTSUPP, or EACCES without privilege). */
	if (!idle) {
		errno = 0;
		CHECK(pm_wss_new(t, PM_WSS_IDLE) == NULL);
		CHECK(errno == EOPNOTSUPP || errno == EACCES);
	}
	CHECK(pm_wss_new(t, (enum pm_wss_method)42) == NULL && errno == EINVAL);
	CHECK_STR(pm_wss_method_name(PM_WSS_REFERENCED), "referenced");
	pm_wss_free(w);
	pm_wss_free(NULL);
	pm_target_close(t);
	return T_PASS;
}

/* The target exits during the window, reaped or left a zombie: -ESRCH, never an idle process. */
static int exit_mid_window(void)
{
	static const enum pm_wss_method methods[] = { PM_WSS_REFERENCED, PM_WSS_IDLE };
	char why[512];
	int tried = 0;
	size_t i, zombie;

	if (!init_ctx())
		return T_FAIL;
	for (i = 0; i < 2; i++) {
		for (zombie = 0; zombie < 2; zombie++) {
			struct pm_wss_summary sum;
			struct pm_target *t;
			struct pm_wss *w;
			struct kid k;
			siginfo_t si;

			if (kid_start(&k) < 0) {
				kid_stop(&k);
				return T_FAIL;
			}
			t = pm_target_open(ctx, k.pid);
			CHECK(t != NULL);
			if (t && methods[i] == PM_WSS_IDLE && !method_available(t, PM_WSS_IDLE, why, sizeof(why)))
				standin_on();	/* no bitmap: the stand-in, so the IDLE paths meet the exit too */
			if (t && method_available(t, methods[i], why, sizeof(why))) {
				w = pm_wss_new(t, methods[i]);
				CHECK(w && pm_wss_start(w) == 0);
				kill(k.pid, SIGKILL);
				if (zombie)
					waitid(P_PID, (id_t)k.pid, &si, WEXITED | WNOWAIT);
				else
					waitpid(k.pid, NULL, 0);
				if (w) {
					CHECK_EQ_U64(pm_wss_stop(w, &sum), (uint64_t)-ESRCH);
					CHECK_EQ_U64(sum.resident, 0);
					CHECK_EQ_U64(pm_wss_start(w), (uint64_t)-ESRCH);
				}
				pm_wss_free(w);
				tried++;
			}
			standin_off();
			pm_target_close(t);
			if (!zombie && tried)
				k.pid = 0;	/* reaped already: its PID may be someone else's now */
			kid_stop(&k);
		}
	}
	return tried ? T_PASS : t_skip("no method available");
}

/* A user without privilege may not measure root's process: EACCES from the target or the method. */
static int unpriv_eacces(void)
{
	struct kid k;
	pid_t p;
	int st = 0;

	if (geteuid() != 0)
		return t_skip("needs root to make a process of another user");
	if (kid_start(&k) < 0) {
		kid_stop(&k);
		return T_FAIL;
	}
	fflush(NULL);
	p = fork();
	if (p == 0) {
		struct pm_ctx *c;
		struct pm_target *t;
		int e;

		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(10);
		c = pm_ctx_new(NULL);
		if (!c)
			_exit(11);
		t = pm_target_open(c, k.pid);
		if (!t)
			_exit(errno == EACCES ? 0 : 12);
		e = pm_wss_new(t, PM_WSS_REFERENCED) ? 0 : errno;
		_exit(e == EACCES ? 0 : 13);
	}
	CHECK(p > 0);
	if (p > 0)
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("  unprivileged child: status %#x (10 setuid, 11 ctx, 12 open errno, 13 wss errno)\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kid_stop(&k);
	return T_PASS;
}

/*
 * A same-user process without privilege: idle is refused (EACCES: the
 * bitmap, or the root-only stand-in where the kernel has none, and hidden
 * frame numbers), the referenced method works and auto falls back to it.
 */
static int unpriv_own_process(void)
{
	pid_t p;
	int st = 0;

	if (geteuid() != 0)
		return t_skip("needs root to switch user");
	if (access("/sys/kernel/mm/page_idle/bitmap", F_OK) < 0)
		standin_on();	/* mode 0600, root's */
	fflush(NULL);
	p = fork();
	if (p == 0) {
		struct pm_wss_mapping rec;
		struct pm_wss_summary sum;
		struct pm_ctx *c;
		struct pm_target *t;
		struct pm_wss *w;
		struct kid k;
		const struct pm_wss_mapping *r;
		size_t ps = (size_t)sysconf(_SC_PAGESIZE);
		int ok = 0, win;

		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(10);
		prctl(PR_SET_DUMPABLE, 1);	/* the change of UID made us, and so the child we fork, undumpable */
		if (kid_start(&k) < 0 || !(c = pm_ctx_new(NULL)) || !(t = pm_target_open(c, k.pid)))
			_exit(11);
		errno = 0;
		if (pm_wss_new(t, PM_WSS_IDLE) || errno != EACCES)
			_exit(15);
		w = pm_wss_new(t, PM_WSS_AUTO);
		if (!w || pm_wss_method(w) != PM_WSS_REFERENCED)
			_exit(12);
		/* As in referenced_exact: a window can read no access under load; up to WINDOWS of them. */
		for (win = 0; !ok && win < WINDOWS; win++) {
			memset(&rec, 0, sizeof(rec));
			if (pm_wss_start(w) < 0 || kid_touch(&k, 100) < 0 || pm_wss_stop(w, &sum) < 0)
				_exit(13);
			while (pm_wss_next(w, &r) == 0)
				if (r->start == k.addr)
					rec = *r;
			ok = rec.resident == PAGES * ps && rec.accessed == TOUCHED * ps;
			if (!ok)
				printf("  unprivileged window %d: resident %llu, accessed %llu pages (%d, %d expected)\n",
				       win + 1, (unsigned long long)(rec.resident / ps),
				       (unsigned long long)(rec.accessed / ps), PAGES, TOUCHED);
		}
		fflush(stdout);
		kid_stop(&k);
		_exit(ok ? 0 : 14);
	}
	CHECK(p > 0);
	if (p > 0)
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("  unprivileged child: status %#x (10 setuid, 11 setup, 12 method, 13 window, 14 counts, "
		       "15 idle not refused)\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	standin_off();
	return T_PASS;
}

/* The CLI: JSON with the window and method on the total row, the perturbation stated on stderr. */
static int cli_json(void)
{
	const char *build = getenv("PAGEMAP_BUILD");
	char cmd[4096], out[1 << 16], err[4096], want[64];
	char errpath[1024];
	size_t n = 0;
	struct kid k;
	FILE *f;
	int st, fd;

	if (!build)
		return t_skip("PAGEMAP_BUILD is not set");
	snprintf(cmd, sizeof(cmd), "%s/pagemap", build);
	if (access(cmd, X_OK) < 0)
		return t_skip("%s is not built", cmd);
	snprintf(errpath, sizeof(errpath), "%s/pm-wss-err-XXXXXX", tmpdir());
	fd = mkstemp(errpath);
	if (fd < 0)
		return T_FAIL;
	if (kid_start(&k) < 0) {
		kid_stop(&k);
		close(fd);
		unlink(errpath);
		return T_FAIL;
	}
	snprintf(cmd, sizeof(cmd), "%s/pagemap wss -J %d 0.3 2>%s", build, (int)k.pid, errpath);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (f) {
		n = fread(out, 1, sizeof(out) - 1, f);
		st = pclose(f);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	out[n] = '\0';
	n = (size_t)pread(fd, err, sizeof(err) - 1, 0);
	err[n < sizeof(err) ? n : 0] = '\0';
	CHECK(strstr(out, "\"wss\": [") != NULL);
	CHECK(strstr(out, "\"method\": \"referenced\"") != NULL || strstr(out, "\"method\": \"idle\"") != NULL);
	CHECK(strstr(out, "\"window\": 0.300") != NULL);
	CHECK(strstr(out, "\"measured\": ") != NULL);
	CHECK(strstr(out, "\"children\": [") != NULL);
	snprintf(want, sizeof(want), "\"start\": \"0x%llx\"", (unsigned long long)k.addr);
	CHECK(strstr(out, want) != NULL);	/* the child's mapping, written all through but idle now */
	snprintf(want, sizeof(want), "\"rss\": %llu", (unsigned long long)PAGES * k.ps);
	CHECK(strstr(out, want) != NULL);
	CHECK(strstr(err, "pagemap: wss: clearing the accessed bits of process") != NULL);
	CHECK(strstr(err, "clear_refs 1") != NULL || strstr(err, "idle page tracking") != NULL);
	CHECK(strstr(err, "pagemap: note: method ") != NULL);
	if (t_failed_checks)
		printf("  stdout: %.600s\n  stderr: %s\n", out, err);
	/* The idle method through the stand-in bitmap: its name, and UNTRACKED as a number. */
	if (standin_on()) {
		snprintf(cmd, sizeof(cmd), "%s/pagemap wss -J -o MAPPING,START,ACCESSED,UNTRACKED,METHOD %d 0.1 2>%s",
			 build, (int)k.pid, errpath);
		n = 0;
		f = popen(cmd, "r");
		CHECK(f != NULL);
		if (f) {
			n = fread(out, 1, sizeof(out) - 1, f);
			st = pclose(f);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		out[n] = '\0';
		n = (size_t)pread(fd, err, sizeof(err) - 1, 0);
		err[n < sizeof(err) ? n : 0] = '\0';
		CHECK(strstr(out, "\"method\": \"idle\"") != NULL);
		CHECK(strstr(out, "\"untracked\": ") != NULL);
		CHECK(strstr(out, "\"untracked\": null") == NULL);
		CHECK(strstr(err, "pagemap: wss: clearing the accessed bits of process") != NULL);
		CHECK(strstr(err, "PAGEMAP_WSS_BITMAP") != NULL);
		if (t_failed_checks)
			printf("  stdout: %.600s\n  stderr: %s\n", out, err);
		standin_off();
	}
	/* A bad interval is a usage error. */
	snprintf(cmd, sizeof(cmd), "%s/pagemap wss %d abc 2>/dev/null", build, (int)k.pid);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	close(fd);
	unlink(errpath);
	kid_stop(&k);
	return T_PASS;
}

static void cleanup(void)
{
	standin_off();
	pm_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		T(referenced_exact), T(idle_exact), T(idle_standin), T(thp_counts_whole), T(auto_choice),
		T(exit_mid_window), T(unpriv_eacces), T(unpriv_own_process), T(cli_json),
	};

	atexit(cleanup);
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
