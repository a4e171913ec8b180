/*
 * test_readers.c - the auto back end reads each mapping by the reader its measured costs choose (PAGEMAP_SCAN,
 * or pread alone); whichever it chooses, the answers are those of the pread and the scan back ends. The shape that
 * stresses the choice: one 4 KiB page in 16 written (each its own run), with zero pages and guard markers among
 * them, beside a file mapping read one page in 16, a THP region and 1 GiB holding 3 pages. This process's own
 * regions, apart (PROT_NONE between them, so no two merge). Needs frames (root): without them the auto back end
 * keeps the scan throughout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pagemap.h>
#include "../../lib/base/compat.h"
#include "../harness.h"
#include "runs.h"

enum { R_S16, R_FILE, R_THP, R_EMPTY, NR };
static const size_t region_len[NR] = { 64 << 20, 64 << 20, 16 << 20, (size_t)1 << 30 };

static struct pm_ctx *ctx;
static const struct pm_features *feat;
static size_t ps, pmd;
static char *base, *reg[NR];
static size_t total;
static int fd = -1;
static bool zero_pages, guards;

struct log {
	char lines[64][320];
	unsigned n;
};

static void log_line(void *data, const char *line)
{
	struct log *l = data;

	if (l->n < 64)
		snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%s", line);
}

/* The walk's log line choosing region @i's reader, or NULL (none: not chosen by costs). */
static const char *choice(const struct log *l, int i)
{
	char want[80];
	unsigned k;

	snprintf(want, sizeof(want), "%#llx-%#llx:", (unsigned long long)(uintptr_t)reg[i],
		 (unsigned long long)(uintptr_t)(reg[i] + region_len[i]));
	for (k = 0; k < l->n; k++)
		if (strstr(l->lines[k], want) && strstr(l->lines[k], "sampled"))
			return l->lines[k];
	return NULL;
}

static int setup(void)
{
	char path[] = "/tmp/pagemap-readers-XXXXXX";
	size_t off, j;
	int i;

	ctx = pm_ctx_new(NULL);
	if (!ctx || !(feat = pm_ctx_features(ctx)))
		return -ENOMEM;
	ps = feat->page_size;
	pmd = feat->pmd_size ? feat->pmd_size : 2 << 20;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (ftruncate(fd, (off_t)region_len[R_FILE]) < 0)
		return -errno;
	for (i = 0; i < NR; i++)
		total += region_len[i] + 2 * pmd;
	base = mmap(NULL, total + pmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	off = pmd - ((uintptr_t)base & (pmd - 1));
	for (i = 0; i < NR; i++) {	/* PMD-aligned, a PROT_NONE PMD between any two */
		reg[i] = base + off;
		if (i == R_FILE && mmap(reg[i], region_len[i], PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
			return -errno;
		if (i != R_FILE && mprotect(reg[i], region_len[i], PROT_READ | PROT_WRITE) != 0)
			return -errno;
		if (i != R_FILE)
			madvise(reg[i], region_len[i], i == R_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		off += region_len[i] + 2 * pmd;
	}
	/* Each written page its own content: where KSM is on for every process, alike pages would merge. */
	for (j = 0; j < region_len[R_S16]; j += 16 * ps)
		*(volatile uint64_t *)(reg[R_S16] + j) = j + 1;
	/* In the first 4 MiB, page 8 of every 16 read only (the zero page); in the next 4 MiB, page 4 a guard. */
	for (j = 8 * ps; j < (4 << 20); j += 16 * ps)
		zero_pages |= *(volatile char *)(reg[R_S16] + j) == 0;
	for (j = (4 << 20) + 4 * ps; j < (8 << 20); j += 16 * ps)
		guards = madvise(reg[R_S16] + j, ps, MADV_GUARD_INSTALL) == 0;
	for (j = 0; j < region_len[R_FILE]; j += 16 * ps)
		(void)*(volatile char *)(reg[R_FILE] + j);
	for (j = 0; j < region_len[R_THP]; j += ps)
		*(volatile uint64_t *)(reg[R_THP] + j) = j + 1;
	for (j = 0; j < 3; j++)
		*(volatile uint64_t *)(reg[R_EMPTY] + j * ((region_len[R_EMPTY] / 3) & ~(ps - 1))) = j + 1;
	return 0;
}

static void teardown(void)
{
	if (base && base != MAP_FAILED)
		munmap(base, total + pmd);
	if (fd >= 0)
		close(fd);
	pm_ctx_free(ctx);
}

/* The regions, once, for every case; 0 or -errno (the cases then skip). */
static int ready(void)
{
	static int err = 1;

	if (err == 1) {
		atexit(teardown);
		err = setup();
	}
	return err;
}

/* Bytes by flag and the known flags of each region, from one pm_mapstat walk with back end @b. */
static int sums(struct pm_target *t, enum pm_backend b, unsigned wflags, struct pm_flag_bytes *by, uint32_t *known)
{
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_mapstat *it;
	int rc, i, found = 0;

	pm_ctx_set_backend(ctx, b);
	it = pm_mapstat_open(t, wflags);
	if (!it)
		return -errno;
	while ((rc = pm_mapstat_next(it, &m, &u)) == 0)
		for (i = 0; i < NR; i++)
			if (m->start == (uint64_t)(uintptr_t)reg[i] && m->end == m->start + region_len[i]) {
				by[i] = *pm_mapstat_bytes(it);
				known[i] = pm_mapstat_known(it);
				found++;
			}
	pm_mapstat_close(it);
	pm_ctx_set_backend(ctx, PM_BACKEND_AUTO);
	return rc < 0 ? rc : found == NR ? 0 : -ENOENT;
}

/* Has this process a mapping of RUNS_HUGE_MAPPING or more (a sanitizer's reservations)? */
static bool huge_reservations(void)
{
	unsigned long long a, b;
	bool huge = false;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && b - a >= RUNS_HUGE_MAPPING)
			huge = true;
	if (f)
		fclose(f);
	return huge;
}

/* Are @a and @b's bytes the same under every flag of @mask? Prints the first difference. */
static bool same_bytes(const struct pm_flag_bytes *a, const struct pm_flag_bytes *b, uint32_t mask, const char *what)
{
	unsigned k;

	for (k = 0; k < 32; k++)
		if ((mask >> k & 1) && a->by_flag[k] != b->by_flag[k]) {
			printf("  %s: flag %#x: %llu bytes against %llu\n", what, 1u << k,
			       (unsigned long long)a->by_flag[k], (unsigned long long)b->by_flag[k]);
			return false;
		}
	return true;
}

/*
 * pm_mapstat (what `maps` reads), with entries (default columns) and without (columns a scan answers):
 * auto's sums are the scan back end's under every flag it knows, and pread's under every flag both know.
 * The one-in-16 region's reader is chosen by costs (the log says which and why); with entries it is pread,
 * whatever the costs: the scan's way would read every entry too (the gaps are read through).
 */
static int sums_agree(void)
{
	static const unsigned wf[] = { PM_WALK_ENTRIES, 0 };
	struct pm_flag_bytes a[NR], s[NR], p[NR];
	uint32_t ka[NR], ks[NR], kp[NR];
	struct pm_target *t;
	struct log log = { .n = 0 };
	char what[64];
	bool huge;
	int rc, i, f;

	if (ready() < 0)
		return t_skip("cannot set the regions up: %s", strerror(-ready()));
	if (!feat->scan)
		return t_skip("no PAGEMAP_SCAN (Linux 6.7+): auto is the pread back end");
	if (!feat->privileged || feat->pfn_view != PM_PFN_VISIBLE)
		return t_skip("frames hidden from this reader: the auto back end keeps the scan (huge pages need it)");
	t = pm_target_open(ctx, getpid());
	CHECK(t != NULL);
	if (!t)
		return T_FAIL;
	/* A whole-process walk by pread reads every entry of them: minutes (runs_agree compares pread on the region). */
	if ((huge = huge_reservations()))
		printf("  mappings of %llu GiB or more (a sanitizer's): the pread back end's sums are not taken\n",
		       RUNS_HUGE_MAPPING >> 30);
	if (!zero_pages)
		printf("  no zero page here (read faults allocate): the region holds no zero-page entries\n");
	if (!guards)
		printf("  no guard regions (MADV_GUARD_INSTALL, Linux 6.13+): the region holds no guard markers\n");
	for (f = 0; f < 2; f++) {
		const char *c;

		log.n = 0;
		pm_ctx_set_log(ctx, log_line, &log);
		rc = sums(t, PM_BACKEND_AUTO, wf[f], a, ka);
		pm_ctx_set_log(ctx, NULL, NULL);
		CHECK_EQ_U64(-rc, 0);
		CHECK_EQ_U64(-sums(t, PM_BACKEND_SCAN, wf[f], s, ks), 0);
		if (!huge)
			CHECK_EQ_U64(-sums(t, PM_BACKEND_PREAD, wf[f], p, kp), 0);
		for (i = 0; i < NR; i++) {
			snprintf(what, sizeof(what), "region %d, %s, auto/scan", i, wf[f] ? "entries" : "no entries");
			CHECK_EQ_U64(ka[i], ks[i]);
			CHECK(same_bytes(&a[i], &s[i], ks[i], what));
			snprintf(what, sizeof(what), "region %d, %s, auto/pread", i, wf[f] ? "entries" : "no entries");
			CHECK(huge || same_bytes(&a[i], &p[i], ka[i] & kp[i], what));
		}
		CHECK_EQ_U64(a[R_S16].by_flag[__builtin_ctz(PM_PAGE_PRESENT)],
			     region_len[R_S16] / 16 + (zero_pages ? (4 << 20) / 16 : 0));
		/* Chosen by measured costs; the choice follows the costs logged. */
		c = choice(&log, R_S16);
		printf("  %s: %s\n", wf[f] ? "entries" : "no entries", c ? c : "(no choice logged)");
		CHECK(c != NULL);
		if (c && wf[f])
			CHECK(strstr(c, "rest by pread") != NULL);
		if (c) {
			const char *sc = strstr(c, "scan "), *pr = strstr(c, "pread ");
			double x = sc ? strtod(sc + 5, NULL) : 0, y = pr ? strtod(pr + 6, NULL) : 0;

			CHECK(sc && pr);
			CHECK((y < x) == (strstr(c, "rest by pread") != NULL));
		}
	}
	pm_target_close(t);
	return T_PASS;
}

/* The runs of the one-in-16 region (what `pages` prints): auto's are pread's and the scan's, with entries. */
static int runs_agree(void)
{
	static const enum pm_backend bs[] = { PM_BACKEND_AUTO, PM_BACKEND_PREAD, PM_BACKEND_SCAN };
	uint64_t s = (uintptr_t)reg[R_S16], e = s + region_len[R_S16];
	struct runs r[3] = { { 0 } };
	struct pm_target *t;
	size_t i, k;

	if (ready() < 0)
		return t_skip("cannot set the regions up: %s", strerror(-ready()));
	if (!feat->scan)
		return t_skip("no PAGEMAP_SCAN (Linux 6.7+): auto is the pread back end");
	if (!feat->privileged || feat->pfn_view != PM_PFN_VISIBLE)
		return t_skip("frames hidden from this reader: the auto back end keeps the scan (huge pages need it)");
	t = pm_target_open(ctx, getpid());
	CHECK(t != NULL);
	if (!t)
		return T_FAIL;
	for (k = 0; k < 3; k++)
		CHECK_EQ_U64(-runs_collect(t, ctx, bs[k], PM_WALK_ENTRIES, s, e, &r[k]), 0);
	pm_ctx_set_backend(ctx, PM_BACKEND_AUTO);
	for (k = 1; k < 3; k++) {
		CHECK_EQ_U64(r[0].n, r[k].n);
		CHECK_EQ_U64(r[0].known, r[k].known);
		for (i = 0; i < r[0].n && i < r[k].n; i++)
			if (r[0].v[i].start != r[k].v[i].start || r[0].v[i].end != r[k].v[i].end ||
			    r[0].v[i].flags != r[k].v[i].flags || r[0].v[i].pfn != r[k].v[i].pfn) {
				printf("  run %zu: auto %#llx-%#llx flags %#x, %s %#llx-%#llx flags %#x\n", i,
				       (unsigned long long)r[0].v[i].start, (unsigned long long)r[0].v[i].end,
				       r[0].v[i].flags, pm_backend_name(bs[k]), (unsigned long long)r[k].v[i].start,
				       (unsigned long long)r[k].v[i].end, r[k].v[i].flags);
				CHECK(false);
				break;
			}
	}
	printf("  %zu runs in the one-in-16 region\n", r[0].n);
	for (k = 0; k < 3; k++)
		runs_free(&r[k]);
	pm_target_close(t);
	return T_PASS;
}

T_MAIN(T(sums_agree), T(runs_agree))
