/* test_snapdiff.c - `pagemap diff` of two snapshots around swap-outs, swap-ins and a THP split reports exactly those. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../harness.h"
#include "layout.h"
#include "smaps.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21	/* Linux 5.4 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25	/* Linux 6.1 */
#endif

#define SWAP_PAGES	64u
#define PME_PRESENT	(1ULL << 63)
#define PME_SWAP	(1ULL << 62)

/* The pages paged out: [8, 24) and [40, 48) of SWAP_PAGES; the others stay present. */
static int in_swap_set(unsigned i)
{
	return (i >= 8 && i < 24) || (i >= 40 && i < 48);
}
#define SWAP_SET	24u
#define SPLIT_PAGE	100u	/* the page of the huge page dropped with MADV_DONTNEED */

/* What the parent asks of the child; the child answers one int64 (an address, 0, or -errno). */
enum op { OP_SWAP_MAP = 1, OP_PAGEOUT, OP_TOUCH, OP_THP_MAP, OP_COLLAPSE, OP_DROP };
struct msg {
	int op;
	uint64_t arg;
};

struct child {
	pid_t pid;
	int cmd, ack;
};

static long ps;
static uint64_t pmd;
static char work[] = "/tmp/test_snapdiff.XXXXXX";

/* @n pages between two PROT_NONE pages, so no other mapping merges with them (aligned to @align). */
static char *guarded(size_t n, size_t align)
{
	size_t len = (n + 2) * (size_t)ps + align;
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *m;

	if (p == MAP_FAILED)
		return NULL;
	m = p + ps;
	if (align)
		m = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
	if (mprotect(m, n * (size_t)ps, PROT_READ | PROT_WRITE) < 0)
		return NULL;
	return m;
}

static int64_t child_op(char **swap, char **thp, const struct msg *m)
{
	volatile char sink = 0;
	unsigned i;

	switch (m->op) {
	case OP_SWAP_MAP:
		if (!(*swap = guarded(SWAP_PAGES, 0)))
			return -errno;
		madvise(*swap, SWAP_PAGES * ps, MADV_NOHUGEPAGE);	/* 4 KiB pages whatever THP says */
		for (i = 0; i < SWAP_PAGES; i++)
			memset(*swap + i * ps, 0x11 + i, (size_t)ps);
		return (int64_t)(uintptr_t)*swap;
	case OP_PAGEOUT:
		for (i = 0; i < SWAP_PAGES; i++)
			if (in_swap_set(i) && madvise(*swap + i * ps, (size_t)ps, MADV_PAGEOUT) < 0)
				return -errno;
		return 0;
	case OP_TOUCH:	/* read faults: the pages come back from swap */
		for (i = 0; i < SWAP_PAGES; i++)
			sink ^= (*swap)[i * ps];
		return 0;
	case OP_THP_MAP:
		if (!(*thp = guarded(pmd / ps, pmd)))
			return -errno;
		if (madvise(*thp, pmd, MADV_HUGEPAGE) < 0)
			return -errno;
		memset(*thp, 0x5a, pmd);
		return (int64_t)(uintptr_t)*thp;
	case OP_COLLAPSE:	/* m->arg: 1 to try MADV_COLLAPSE first; then keep khugepaged away */
		if (m->arg && madvise(*thp, pmd, MADV_COLLAPSE) < 0)
			return -errno;
		return madvise(*thp, pmd, MADV_NOHUGEPAGE) < 0 ? -errno : 0;
	case OP_DROP:
		return madvise(*thp + SPLIT_PAGE * ps, (size_t)ps, MADV_DONTNEED) < 0 ? -errno : 0;
	}
	return -EINVAL;
}

static void child_main(int cmd, int ack)
{
	char *swap = NULL, *thp = NULL;
	struct msg m;
	int64_t r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (read(cmd, &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		r = child_op(&swap, &thp, &m);
		if (write(ack, &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
	}
	_exit(0);
}

static int child_start(struct child *c)
{
	int a[2], b[2];

	if (pipe(a) < 0 || pipe(b) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(a[1]);
		close(b[0]);
		child_main(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	c->cmd = a[1];
	c->ack = b[0];
	return 0;
}

static void child_stop(struct child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->cmd);
	close(c->ack);
	c->pid = 0;
}

static int64_t ask(struct child *c, int op, uint64_t arg)
{
	struct msg m = { op, arg };
	int64_t r;

	if (write(c->cmd, &m, sizeof(m)) != (ssize_t)sizeof(m) || read(c->ack, &r, sizeof(r)) != (ssize_t)sizeof(r))
		return -EPIPE;
	return r;
}

/* Run $PAGEMAP_BUILD/pagemap with @argv (argv[0] ignored), stdout to @out (or /dev/null). Exit status, or -1. */
static int run_cli(const char *const *argv, const char *out)
{
	char bin[4096];
	pid_t p;
	int st;

	snprintf(bin, sizeof(bin), "%s/pagemap", getenv("PAGEMAP_BUILD"));
	p = fork();
	if (p == 0) {
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A snapshot of the stopped child into @name under the work directory. 0, or the CLI's status. */
static int snap(const struct child *c, const char *name)
{
	char pid[16], path[256];
	const char *argv[] = { "pagemap", "snapshot", "-p", pid, "-o", path, NULL };
	int r;

	snprintf(pid, sizeof(pid), "%d", (int)c->pid);
	snprintf(path, sizeof(path), "%s/%s", work, name);
	kill(c->pid, SIGSTOP);
	r = run_cli(argv, NULL);
	kill(c->pid, SIGCONT);
	return r;
}

/* The columns of diff_row, in this order. */
enum { D_APPEARED, D_FREED, D_SWAPOUT, D_SWAPIN, D_WRITTEN, D_THP_SPLIT, D_MOVED, D_N };
static const char *const dnames[D_N] = { "APPEARED", "FREED", "SWAPOUT", "SWAPIN", "WRITTEN", "THP_SPLIT", "MOVED" };

/*
 * `pagemap diff -p PID A B` in bytes: the row of the mapping at @start into
 * @v. Returns diff's exit status (1: different), or -1 when it printed no
 * row for @start (or could not run).
 */
static int diff_row(const struct child *c, const char *a, const char *b, uint64_t start, uint64_t v[D_N])
{
	char pid[16], pa[256], pb[256], out[256], line[512], want[32];
	const char *argv[] = { "pagemap", "diff", "-r", "-n", "-b", "-p", pid, "-o",
			       "MAPPING,START,APPEARED,FREED,SWAPOUT,SWAPIN,WRITTEN,THP_SPLIT,MOVED", pa, pb, NULL };
	int rc, found = 0;
	FILE *f;

	snprintf(pid, sizeof(pid), "%d", (int)c->pid);
	snprintf(pa, sizeof(pa), "%s/%s", work, a);
	snprintf(pb, sizeof(pb), "%s/%s", work, b);
	snprintf(out, sizeof(out), "%s/diff.out", work);
	snprintf(want, sizeof(want), "0x%" PRIx64, start);
	rc = run_cli(argv, out);
	if (!(f = fopen(out, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char status[32], st[32];
		unsigned long long x[D_N];

		if (sscanf(line, "%31s %31s %llu %llu %llu %llu %llu %llu %llu", status, st, &x[0], &x[1], &x[2], &x[3],
			   &x[4], &x[5], &x[6]) != 9 || strcmp(st, want))
			continue;
		for (int i = 0; i < D_N; i++)
			v[i] = x[i];
		found = !strcmp(status, "changed") || !strcmp(status, "same");
		if (!found)
			printf("  the mapping at %s is '%s' in the diff (want it matched)\n", want, status);
	}
	fclose(f);
	return found ? rc : -1;
}

/* Every column of @v is @w; print the ones that are not. Returns how many differ. */
static int expect(const char *what, const uint64_t v[D_N], const uint64_t w[D_N])
{
	int bad = 0;

	for (int i = 0; i < D_N; i++) {
		if (v[i] != w[i]) {
			printf("  %s: %s %" PRIu64 " bytes, want %" PRIu64 "\n", what, dnames[i], v[i], w[i]);
			bad++;
		}
	}
	return bad;
}

/* The pagemap words of the child's @n pages at @addr into @e. 0 or -errno. */
static int child_words(pid_t pid, uint64_t addr, unsigned n, uint64_t *e)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	got = pread(fd, e, n * sizeof(*e), (off_t)(addr / (uint64_t)ps * sizeof(*e)));
	close(fd);
	return got == (ssize_t)(n * sizeof(*e)) ? 0 : -EIO;
}

static unsigned long long swap_free_kb(void)
{
	long long kb = proc_field_kb("/proc/meminfo", "SwapFree");

	return kb > 0 ? (unsigned long long)kb : 0;
}

static const char *need_cli(void)
{
	static char why[4200];
	const char *build = getenv("PAGEMAP_BUILD");

	if (!build)
		return "PAGEMAP_BUILD is not set (make check sets it)";
	snprintf(why, sizeof(why), "%s/pagemap", build);
	if (access(why, X_OK) != 0) {
		snprintf(why, sizeof(why), "%s/pagemap is not built", build);
		return why;
	}
	return NULL;
}

/*
 * Swap-outs, then swap-ins: a child writes 64 pages, snapshot A; it pages
 * out 24 known ones (MADV_PAGEOUT, until its pagemap shows each in swap and
 * the others present), snapshot B; it reads them all back, snapshot C.
 * diff A B: SWAPOUT exactly those bytes, nothing else; diff B C: SWAPIN
 * exactly those bytes. Needs swap on: this test never turns it on (the CI
 * swap leg and the 6.12-swap guest do; tests/live/swap.sh for test_swap).
 */
static int t_diff_swap(void)
{
	uint64_t e[SWAP_PAGES], v[D_N], w[D_N] = { 0 }, start;
	unsigned i, tries, swapped = 0, present = 0;
	struct child c = { 0 };
	const char *why = need_cli();
	int64_t r;
	int rc;

	if (why)
		return t_skip("%s", why);
	if (swap_free_kb() < 4096)
		return t_skip("no swap is on (SwapFree %llu kB): this test does not turn it on (the CI swap leg "
			      "and the 6.12 zram guest do)", swap_free_kb());
	if (child_start(&c) < 0)
		return t_skip("fork failed");
	r = ask(&c, OP_SWAP_MAP, 0);
	CHECK(r > 0);
	start = (uint64_t)r;
	CHECK(r > 0 && child_words(c.pid, start, SWAP_PAGES, e) == 0);
	for (i = 0; r > 0 && i < SWAP_PAGES; i++)
		present += !!(e[i] & PME_PRESENT);
	CHECK_EQ_U64(present, SWAP_PAGES);
	CHECK_EQ_U64(snap(&c, "a.snap"), 0);
	for (tries = 0; r > 0 && tries < 20 && swapped < SWAP_SET; tries++) {
		if ((r = ask(&c, OP_PAGEOUT, 0)) == -EINVAL) {
			child_stop(&c);
			return t_skip("MADV_PAGEOUT refused (EINVAL: Linux < 5.4)");
		}
		CHECK_EQ_U64(r, 0);
		if (child_words(c.pid, start, SWAP_PAGES, e) < 0)
			break;
		for (i = swapped = present = 0; i < SWAP_PAGES; i++) {
			swapped += in_swap_set(i) && (e[i] & PME_SWAP) && !(e[i] & PME_PRESENT);
			present += !in_swap_set(i) && (e[i] & PME_PRESENT);
		}
	}
	if (swapped < SWAP_SET) {
		child_stop(&c);
		return t_skip("MADV_PAGEOUT put %u of %u pages in swap after %u tries (swap full or refusing?)", swapped,
			      SWAP_SET, tries);
	}
	CHECK_EQ_U64(present, SWAP_PAGES - SWAP_SET);
	CHECK_EQ_U64(snap(&c, "b.snap"), 0);
	CHECK_EQ_U64(ask(&c, OP_TOUCH, 0), 0);
	CHECK(child_words(c.pid, start, SWAP_PAGES, e) == 0);
	for (i = present = 0; i < SWAP_PAGES; i++)
		present += !!(e[i] & PME_PRESENT);
	CHECK_EQ_U64(present, SWAP_PAGES);
	CHECK_EQ_U64(snap(&c, "c.snap"), 0);

	w[D_SWAPOUT] = (uint64_t)SWAP_SET * ps;
	rc = diff_row(&c, "a.snap", "b.snap", start, v);
	CHECK_EQ_U64(rc, 1);
	if (rc >= 0)
		CHECK_EQ_U64(expect("diff A B (swap-out)", v, w), 0);
	w[D_SWAPOUT] = 0;
	w[D_SWAPIN] = (uint64_t)SWAP_SET * ps;
	rc = diff_row(&c, "b.snap", "c.snap", start, v);
	CHECK_EQ_U64(rc, 1);
	if (rc >= 0)
		CHECK_EQ_U64(expect("diff B C (swap-in)", v, w), 0);
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static uint64_t anon_huge(pid_t pid, uint64_t start)
{
	const struct smaps_entry *m;
	struct smaps s;
	uint64_t n = 0;

	if (smaps_read(pid, &s) < 0)
		return 0;
	if ((m = smaps_find(&s, start)))
		n = m->anon_huge;
	smaps_free(&s);
	return n;
}

/* Frame numbers: a snapshot tells a huge page by its 512 aligned contiguous frames (root, Linux 4.2+). */
static int frames_visible(void)
{
	uint64_t e = 0;
	volatile char *p = malloc((size_t)ps);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), ok;

	if (!p || fd < 0) {
		free((void *)p);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	p[0] = 1;
	ok = pread(fd, &e, 8, (off_t)((uintptr_t)p / (uint64_t)ps * 8)) == 8 && (e & ((1ULL << 55) - 1));
	close(fd);
	free((void *)p);
	return ok;
}

/*
 * A real THP split: a child maps a PMD-aligned MADV_HUGEPAGE region and
 * writes it (PMD-mapped: smaps AnonHugePages says the whole of it; else
 * MADV_COLLAPSE once), then MADV_NOHUGEPAGE so khugepaged leaves it alone;
 * snapshot A; it drops page 100 (MADV_DONTNEED: the PMD is split, 511
 * pages stay on their frames), snapshot B. diff A B: THP_SPLIT the 511
 * pages, FREED the one, nothing else.
 */
static int t_diff_thp_split(void)
{
	uint64_t v[D_N], w[D_N] = { 0 }, start, huge;
	struct child c = { 0 };
	const char *why = need_cli();
	int64_t r;
	int rc;

	if (why)
		return t_skip("%s", why);
	if (!thp_enabled())
		return t_skip("transparent huge pages are off (transparent_hugepage/enabled is [never])");
	if (!frames_visible())
		return t_skip("frame numbers are hidden here (not root): a snapshot cannot tell a huge page");
	if (child_start(&c) < 0)
		return t_skip("fork failed");
	r = ask(&c, OP_THP_MAP, 0);
	CHECK(r > 0);
	if (r <= 0) {
		child_stop(&c);
		return T_FAIL;
	}
	start = (uint64_t)r;
	huge = anon_huge(c.pid, start);
	r = ask(&c, OP_COLLAPSE, huge != pmd);	/* not formed at fault time (defrag, fragmentation): collapse it */
	if ((huge = anon_huge(c.pid, start)) != pmd) {
		child_stop(&c);
		return t_skip("no huge page formed (AnonHugePages %" PRIu64 " kB of %" PRIu64 ", MADV_COLLAPSE: %s)",
			      huge >> 10, pmd >> 10, r < 0 ? strerror((int)-r) : "ok");
	}
	CHECK_EQ_U64(r, 0);
	CHECK_EQ_U64(snap(&c, "a.snap"), 0);
	CHECK_EQ_U64(ask(&c, OP_DROP, 0), 0);
	CHECK_EQ_U64(anon_huge(c.pid, start), 0);	/* PTE-mapped now */
	CHECK_EQ_U64(snap(&c, "b.snap"), 0);
	w[D_FREED] = (uint64_t)ps;
	w[D_THP_SPLIT] = pmd - (uint64_t)ps;
	rc = diff_row(&c, "a.snap", "b.snap", start, v);
	CHECK_EQ_U64(rc, 1);
	if (rc >= 0)
		CHECK_EQ_U64(expect("diff A B (THP split)", v, w), 0);
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static void remove_work(void)
{
	const char *names[] = { "a.snap", "b.snap", "c.snap", "diff.out" };
	char p[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", work, names[i]);
		unlink(p);
	}
	rmdir(work);
}

static uint64_t read_pmd_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
	unsigned long long n = 0;

	if (f) {
		if (fscanf(f, "%llu", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n ? n : 2u << 20;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "diff_swap", t_diff_swap },
		{ "diff_thp_split", t_diff_thp_split },
	};
	int r;

	ps = sysconf(_SC_PAGESIZE);
	pmd = read_pmd_size();
	if (!mkdtemp(work)) {
		printf("FAIL snapdiff: cannot make a work directory: %s\n", strerror(errno));
		return 1;
	}
	r = t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	remove_work();
	return r;
}
