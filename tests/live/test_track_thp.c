/*
 * test_track_thp.c - tracking a huge-page heap (a Java heap's shape): 4 KiB
 * writes inside PMD-mapped huge pages of another process are reported exactly
 * at the granularity the watch says: by default each written huge page whole,
 * marked huge, and no other (the heap stays huge); with PM_WATCH_NOTHP
 * exactly the 4 KiB pages written, and only the huge pages written are split
 * (at their first write, by the kernel: they are write-protected whole). The watch says how it tells a written
 * huge page (pm_watch_notice, and pagemap track on stderr): by its soft-dirty
 * bit where the kernel keeps them, without reading it, else by its contents.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define BLOCKS 5		/* huge pages in the heap: the rounds write in the first 4, never in the last */
#define ROUNDS 3

static struct pm_ctx *ctx;
static size_t pmd, psize;

struct child {
	pid_t pid;
	int cmd, ack;
	uint8_t *heap;
};

/* The pages round @r writes, as page numbers in the heap (-1 ends): a few 4 KiB pages inside some huge pages. */
static const int round_pages[ROUNDS][6] = {
	{ 3, 2 * 512 + 100, 2 * 512 + 101, -1 },	/* huge pages 0 and 2 */
	{ 512 + 511, -1 },				/* the last page of huge page 1 */
	{ 3 * 512, 0, 7, -1 },				/* huge pages 3 and 0 */
};

/* The child: a heap of BLOCKS huge pages; each byte read from @cmd is a round whose pages it writes. */
static void child_main(int cmd, int ack)
{
	uint8_t *raw = mmap(NULL, (BLOCKS + 1) * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	unsigned char r;
	int i;

	if (raw == MAP_FAILED)
		_exit(1);
	p = (uint8_t *)(((uintptr_t)raw + pmd - 1) & ~(uintptr_t)(pmd - 1));
	madvise(p, BLOCKS * pmd, MADV_HUGEPAGE);
	memset(p, 0x5a, BLOCKS * pmd);
	if (write(ack, &p, sizeof(p)) != sizeof(p))
		_exit(1);
	while (read(cmd, &r, 1) == 1 && r < ROUNDS) {
		for (i = 0; round_pages[r][i] >= 0; i++)
			p[(size_t)round_pages[r][i] * psize + 8] ^= 0xff;
		if (write(ack, &r, 1) != 1)
			break;
	}
	_exit(0);
}

static int child_start(struct child *c)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	c->cmd = to[1];
	c->ack = from[0];
	return read(c->ack, &c->heap, sizeof(c->heap)) == sizeof(c->heap) ? 0 : -1;
}

static void child_stop(struct child *c)
{
	close(c->cmd);
	close(c->ack);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
}

static int child_round(struct child *c, unsigned char r)
{
	unsigned char got;

	return write(c->cmd, &r, 1) == 1 && read(c->ack, &got, 1) == 1 && got == r ? 0 : -1;
}

/* AnonHugePages of @pid's mapping that holds @addr, kB (-1: not found). */
static long anon_huge_kb(pid_t pid, const void *addr)
{
	char path[64], line[256];
	unsigned long long a, b;
	bool in = false;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a <= (uintptr_t)addr && (uintptr_t)addr < b;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

/*
 * What one collect must report of round @r: the written huge pages whole and
 * marked huge (@nothp false), or exactly the 4 KiB pages (@nothp). Checks
 * every reported range inside the heap against it, and that every written
 * page is covered.
 */
static void check_round(const struct child *c, int r, bool nothp, const struct pm_written *out, size_t n)
{
	uint64_t base = (uintptr_t)c->heap, end = base + BLOCKS * pmd, reported = 0, want = 0;
	bool block[BLOCKS] = { false }, page[BLOCKS * 512] = { false };
	size_t i, k;
	int j;

	for (j = 0; round_pages[r][j] >= 0; j++) {
		block[round_pages[r][j] / 512] = true;
		page[round_pages[r][j]] = true;
	}
	for (k = 0; k < BLOCKS * pmd / psize; k++)
		want += nothp ? page[k] : block[k / 512];
	for (i = 0; i < n; i++) {
		uint64_t a;

		if (out[i].end <= base || out[i].start >= end)
			continue;
		for (a = out[i].start > base ? out[i].start : base; a < out[i].end && a < end; a += psize) {
			k = (a - base) / psize;
			reported++;
			if (nothp ? !page[k] : !block[k / 512]) {
				printf("  round %d: page %zu reported, not written%s\n", r, k, nothp ? "" : " (nor its huge page)");
				t_failed_checks++;
			}
			if (out[i].huge == nothp) {
				printf("  round %d: page %zu reported %s\n", r, k, nothp ? "huge" : "not huge");
				t_failed_checks++;
			}
		}
	}
	CHECK_EQ_U64(reported, want);
}

/* One watch over the heap of a fresh child: ROUNDS rounds of 4 KiB writes, each collected and checked. */
static int run(unsigned flags)
{
	bool nothp = flags & PM_WATCH_NOTHP, sd;
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_SOFT_DIRTY);
	const struct pm_written *out;
	const char *notice;
	struct pm_watch *w;
	long before, after;
	struct child c;
	size_t n;
	int r, err;

	if (child_start(&c) < 0) {
		printf("  cannot start the child: %s\n", strerror(errno));
		return T_FAIL;
	}
	before = anon_huge_kb(c.pid, c.heap);
	if (before < (long)(BLOCKS * pmd >> 10)) {
		child_stop(&c);
		return t_skip("the child got %ld kB of huge pages, not %zu", before, BLOCKS * pmd >> 10);
	}
	w = pm_watch_new(ctx, c.pid, PM_WATCH_UFFD, flags);
	if (!w) {
		child_stop(&c);
		return t_skip("uffd cannot watch the child: %s", strerror(errno));
	}
	err = pm_watch_add(w, (uintptr_t)c.heap, (uintptr_t)c.heap + BLOCKS * pmd, 0);
	CHECK_EQ_U64(err, 0);
	for (r = 0; r < ROUNDS && !err; r++) {
		CHECK(child_round(&c, (unsigned char)r) == 0);
		CHECK(pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
		check_round(&c, r, nothp, out, n);
	}
	after = anon_huge_kb(c.pid, c.heap);
	notice = pm_watch_notice(w);
	sd = f && f->soft_dirty == PM_YES;
	printf("  %s: 4 KiB writes inside huge pages reported %s; AnonHugePages %ld -> %ld kB; %llu bytes read to "
	       "compare; notice: %s\n", nothp ? "--no-thp" : "default", nothp ? "per 4 KiB page" : "as their huge page, whole",
	       before, after, (unsigned long long)pm_watch_stats(w)->hashed_bytes, notice ? notice : "none");
	if (nothp) {
		/* Write-protected whole, a huge page is split only by a write: the last one, never written, is not. */
		CHECK_EQ_U64(after, before - 4 * (pmd >> 10));
	} else {
		CHECK(after == before);	/* tracking left the heap as it found it */
		CHECK(notice != NULL);
		/* With soft-dirty bits a huge page's own bit tells it: nothing is read. */
		if (sd) {
			CHECK_EQ_U64(pm_watch_stats(w)->hashed_bytes, 0);
			CHECK(notice && strstr(notice, "soft-dirty bits tell"));
			CHECK(!pm_watch_atomic(w));
		} else {
			CHECK(pm_watch_stats(w)->hashed_bytes > 0);
			CHECK(notice && strstr(notice, "CONFIG_MEM_SOFT_DIRTY is off"));
		}
	}
	pm_watch_free(w);
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int t_thp_whole(void)
{
	return run(0);
}

static int t_thp_nothp(void)
{
	return run(PM_WATCH_NOTHP);
}

/* pagemap track says on stderr how it tells written huge pages, once it watches some. */
static int t_track_says(void)
{
	char cmd[512], line[1024];
	bool said = false, cannot = false;
	struct child c;
	FILE *p;

	if (!getenv("PAGEMAP_BUILD"))
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	if (child_start(&c) < 0)
		return T_FAIL;
	if (anon_huge_kb(c.pid, c.heap) < (long)(BLOCKS * pmd >> 10)) {
		child_stop(&c);
		return t_skip("the child got no huge pages");
	}
	snprintf(cmd, sizeof(cmd), "%s/pagemap track -m uffd %d 0.1 1 2>&1 >/dev/null", getenv("PAGEMAP_BUILD"),
		 (int)c.pid);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		said |= strstr(line, "pagemap: track: huge pages are left whole") != NULL;
		cannot |= strstr(line, "cannot track process") != NULL;
	}
	if (p)
		pclose(p);
	child_stop(&c);
	if (cannot && !said)	/* uffd needs PAGEMAP_SCAN (6.7+): the 6.1 guest */
		return t_skip("track cannot watch by uffd here: nothing to say of huge pages");
	CHECK(said);
	return t_failed_checks ? T_FAIL : T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "thp_whole", t_thp_whole },
		{ "thp_nothp", t_thp_nothp },
		{ "track_says", t_track_says },
	};
	const struct pm_features *f;

	ctx = pm_ctx_new(NULL);
	f = ctx ? pm_ctx_probe(ctx, 0) : NULL;
	if (!f) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}
	psize = (size_t)sysconf(_SC_PAGESIZE);
	pmd = (size_t)f->pmd_size;
	if (!pmd || pmd / psize != 512) {
		printf("SKIP thp_whole: no 2 MiB huge pages of 4 KiB ones here\n");
		return 0;
	}
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
