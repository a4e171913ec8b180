/* test_share.c - the pairing step of pm_share on synthetic pages: pairs, sums, skipped frames, batched lookups. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../harness.h"
#include "internal.h"

#define PS 4096
#define HUGE_FLAG (1ULL << PM_KPF_HUGE)

/* The fake kpagecount/kpageflags: a table of PFN -> (count, flags); unknown PFNs count 1. */
struct fake {
	const uint64_t (*tab)[3];	/* pfn, count, flags */
	size_t ntab;
	size_t calls, frames, max_n;
	bool unsorted;			/* a call had PFNs not strictly ascending */
	int fail;			/* return this from the first call */
	uint64_t count_all;		/* if not 0: every PFN's count */
};

static int fake_lookup(void *data, struct pm_frame *fr, size_t n)
{
	struct fake *f = data;
	size_t i, j;

	f->calls++;
	f->frames += n;
	if (n > f->max_n)
		f->max_n = n;
	if (f->fail)
		return f->fail;
	for (i = 0; i < n; i++) {
		if (i && fr[i].pfn <= fr[i - 1].pfn)
			f->unsorted = true;
		fr[i].count = f->count_all ? f->count_all : 1;
		fr[i].flags = 0;
		for (j = 0; j < f->ntab; j++)
			if (f->tab[j][0] == fr[i].pfn) {
				fr[i].count = f->tab[j][1];
				fr[i].flags = f->tab[j][2];
			}
	}
	return 0;
}

static void push_map(struct pm_share *s, uint64_t start, const char *path)
{
	struct pm_mapping m = { .start = start, .end = start + 0x10000, .perms = "rw-p" };

	m.path = path;
	m.path_len = strlen(path);
	CHECK_EQ_U64(pmi_share_push_map(s, &m), 0);
}

static void push_pages(struct pm_share *s, const uint64_t *keys, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK_EQ_U64(pmi_share_push_page(s, keys[i]), 0);
}

#define PAGES(s, ...)                                                              \
	do {                                                                       \
		static const uint64_t _k[] = { __VA_ARGS__ };                       \
		push_pages((s), _k, sizeof(_k) / sizeof(_k[0]));                    \
	} while (0)

#define SWAP1 (PM_SHARE_KEY_SWAP | (1ULL << 50) | 77)

/*
 * Three processes: 100 (maps 0, 1, 2), 200 (maps 3, 4), 300 (map 5).
 * Frames: 1 in maps 0, 3; 2 in 0, 3, 5 and once outside (count 4); 3 in
 * 0, 4; 4 in 0 only; 10 in 1, 3 and 4; 11 in 1; 20 hugetlb in 2 and 4;
 * 0x30 with map count 0 in 2; 50 in 5. Swap slot SWAP1 in 1 and 4.
 */
static const uint64_t tab[][3] = {
	{ 1, 2, 0 }, { 2, 4, 0 }, { 3, 2, 0 }, { 4, 1, 0 }, { 10, 3, 0 },
	{ 11, 1, 0 }, { 20, 2, HUGE_FLAG }, { 0x30, 0, 0 }, { 50, 1, 0 },
};

static struct pm_share *build(void)
{
	struct pm_share *s = pmi_share_alloc(PS);

	CHECK(s != NULL);
	if (!s)
		return NULL;
	CHECK_EQ_U64(pmi_share_push_target(s, 100), 0);
	push_map(s, 0x10000, "");
	PAGES(s, 1, 2, 3, 4);
	push_map(s, 0x30000, "/lib/x.so");
	PAGES(s, 10, 11, SWAP1);
	push_map(s, 0x50000, "[anon:z]");
	PAGES(s, 20, 0x30);
	CHECK_EQ_U64(pmi_share_push_target(s, 200), 0);
	push_map(s, 0x10000, "");
	PAGES(s, 2, 1, 10);
	push_map(s, 0x70000, "/memfd:m (deleted)");
	PAGES(s, 3, 10, SWAP1, 20);
	CHECK_EQ_U64(pmi_share_push_target(s, 300), 0);
	push_map(s, 0x90000, "");
	PAGES(s, 50, 2);
	return s;
}

#define CHECK_SUM(u, res, sh, out, sw, swsh, hug)        \
	do {                                             \
		CHECK_EQ_U64((u).resident, (res) * PS);  \
		CHECK_EQ_U64((u).shared, (sh) * PS);     \
		CHECK_EQ_U64((u).outside, (out) * PS);   \
		CHECK_EQ_U64((u).swap, (sw) * PS);       \
		CHECK_EQ_U64((u).swap_shared, (swsh) * PS); \
		CHECK_EQ_U64((u).hugetlb, (hug) * PS);   \
	} while (0)

/* Every mapping pair, mapping, process, process pair and the total, by hand. */
static int pairs_and_sums(void)
{
	static const struct {
		unsigned a, b, shared, outside, swap;
	} want[] = { { 0, 3, 2, 1, 0 }, { 0, 4, 1, 0, 0 }, { 0, 5, 1, 1, 0 },
		     { 1, 3, 1, 0, 0 }, { 1, 4, 1, 0, 1 }, { 3, 5, 1, 1, 0 } };
	struct fake f = { tab, sizeof(tab) / sizeof(tab[0]), 0, 0, 0, false, 0, 0 };
	struct pm_share *s = build();
	const struct pm_share_map *m, *maps[6];
	const struct pm_share_pair *p;
	struct pm_share_sum u;
	size_t i = 0;
	int r;

	if (!s)
		return T_FAIL;
	CHECK_EQ_U64(pmi_share_tally(s, fake_lookup, &f), 0);
	CHECK_EQ_U64(f.calls, 1);
	CHECK_EQ_U64(f.frames, 9);	/* each distinct frame once; the swap slot not at all */
	CHECK(!f.unsorted);
	while ((r = pm_share_next_map(s, &m)) == 0 && i < 6)
		maps[i++] = m;
	CHECK_EQ_U64(i, 6);
	CHECK_EQ_U64(r, 1);
	if (i != 6) {
		pm_share_free(s);
		return T_FAIL;
	}
	CHECK_EQ_U64(maps[0]->pid, 100);
	CHECK_EQ_U64(maps[4]->pid, 200);
	CHECK_EQ_U64(maps[4]->target, 1);
	CHECK_EQ_U64(maps[5]->target, 2);
	CHECK_STR(maps[1]->map.path, "/lib/x.so");
	CHECK_STR(maps[4]->map.path, "/memfd:m (deleted)");
	CHECK_EQ_U64(maps[4]->map.path_len, strlen("/memfd:m (deleted)"));
	CHECK_SUM(maps[0]->sum, 4, 3, 1, 0, 0, 0);
	CHECK_SUM(maps[1]->sum, 2, 1, 0, 1, 1, 0);
	CHECK_SUM(maps[2]->sum, 0, 0, 0, 0, 0, 1);
	CHECK_SUM(maps[3]->sum, 3, 3, 1, 0, 0, 0);
	CHECK_SUM(maps[4]->sum, 2, 2, 0, 1, 1, 1);
	CHECK_SUM(maps[5]->sum, 2, 1, 1, 0, 0, 0);
	i = 0;
	while ((r = pm_share_next_pair(s, &p)) == 0) {
		if (i < sizeof(want) / sizeof(want[0])) {
			CHECK(p->a == maps[want[i].a]);
			CHECK(p->b == maps[want[i].b]);
			CHECK_EQ_U64(p->shared, want[i].shared * PS);
			CHECK_EQ_U64(p->outside, want[i].outside * PS);
			CHECK_EQ_U64(p->swap, want[i].swap * PS);
		}
		i++;
	}
	CHECK_EQ_U64(r, 1);
	CHECK_EQ_U64(i, sizeof(want) / sizeof(want[0]));	/* none within a process (maps 3 and 4) */
	CHECK_EQ_U64(pm_share_next_pair(s, &p), 0);	/* starts over after the end */
	CHECK_EQ_U64(pm_share_ntargets(s), 3);
	CHECK_EQ_U64(pm_share_sum(s, 0, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 6, 4, 1, 1, 1, 1);
	CHECK_EQ_U64(pm_share_sum(s, 1, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 4, 4, 1, 1, 1, 1);	/* frame 10 twice in process 200: once */
	CHECK_EQ_U64(pm_share_sum(s, 2, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 2, 1, 1, 0, 0, 0);
	CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 7, 4, 1, 1, 1, 1);
	CHECK_EQ_U64(pm_share_sum(s, 1, 0, &u), 0);
	CHECK_SUM(u, 4, 4, 1, 1, 1, 0);
	CHECK_EQ_U64(pm_share_sum(s, 0, 2, &u), 0);
	CHECK_SUM(u, 1, 1, 1, 0, 0, 0);
	CHECK_EQ_U64(pm_share_sum(s, 2, 1, &u), 0);
	CHECK_SUM(u, 1, 1, 1, 0, 0, 0);
	CHECK(pm_share_sum(s, 1, 1, &u) == -EINVAL);
	CHECK(pm_share_sum(s, 3, PM_SHARE_ALL, &u) == -EINVAL);
	CHECK(pm_share_sum(s, PM_SHARE_ALL, 0, &u) == -EINVAL);
	CHECK_EQ_U64(u.resident, 0);
	pm_share_free(s);
	return T_PASS;
}

/* 40000 frames mapped by two processes in opposite orders: looked up once each, sorted, in batches. */
static int batched(void)
{
	struct fake f = { NULL, 0, 0, 0, 0, false, 0, 2 };
	struct pm_share *s = pmi_share_alloc(PS);
	const struct pm_share_pair *p;
	struct pm_share_sum u;
	uint64_t i, n = 40000;

	if (!s)
		return T_FAIL;
	CHECK_EQ_U64(pmi_share_push_target(s, 1), 0);
	push_map(s, 0x100000, "");
	for (i = 0; i < n; i++)
		CHECK_EQ_U64(pmi_share_push_page(s, 1000 + i * 3), 0);
	CHECK_EQ_U64(pmi_share_push_target(s, 2), 0);
	push_map(s, 0x100000, "");
	for (i = n; i-- > 0;)
		CHECK_EQ_U64(pmi_share_push_page(s, 1000 + i * 3), 0);
	CHECK_EQ_U64(pmi_share_tally(s, fake_lookup, &f), 0);
	CHECK_EQ_U64(f.frames, n);
	CHECK_EQ_U64(f.calls, 3);
	CHECK_EQ_U64(f.max_n, 16384);
	CHECK(!f.unsorted);
	CHECK_EQ_U64(pm_share_next_pair(s, &p), 0);
	CHECK_EQ_U64(p->shared, n * PS);
	CHECK_EQ_U64(p->outside, 0);
	CHECK_EQ_U64(pm_share_next_pair(s, &p), 1);
	CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, n, n, 0, 0, 0, 0);
	pm_share_free(s);
	return T_PASS;
}

/* Misuse and failures: results only after finishing, nothing pushed after, a lookup error comes back. */
static int misuse(void)
{
	struct fake f = { NULL, 0, 0, 0, 0, false, -EIO, 0 };
	struct pm_share *s = pmi_share_alloc(PS);
	const struct pm_share_map *m;
	const struct pm_share_pair *p;
	struct pm_share_sum u;

	if (!s)
		return T_FAIL;
	CHECK(pmi_share_push_page(s, 1) == -EINVAL);	/* no mapping yet */
	CHECK(pm_share_next_map(s, &m) == -EINVAL);
	CHECK(pm_share_next_pair(s, &p) == -EINVAL);
	CHECK(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u) == -EINVAL);
	CHECK(pm_share_add(s, NULL) == -EINVAL);
	CHECK(pm_share_finish(NULL) == -EINVAL);
	CHECK_EQ_U64(pmi_share_push_target(s, 7), 0);
	push_map(s, 0x1000, "");
	CHECK_EQ_U64(pmi_share_push_page(s, 5), 0);
	CHECK(pmi_share_tally(s, fake_lookup, &f) == -EIO);
	pm_share_free(s);

	/* An empty set finishes with nothing in it. */
	f.fail = 0;
	f.calls = 0;
	s = pmi_share_alloc(PS);
	if (!s)
		return T_FAIL;
	CHECK_EQ_U64(pmi_share_tally(s, fake_lookup, &f), 0);
	CHECK_EQ_U64(f.calls, 0);
	CHECK_EQ_U64(pm_share_next_pair(s, &p), 1);
	CHECK_EQ_U64(pm_share_next_map(s, &m), 1);
	CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 0, 0, 0, 0, 0, 0);
	CHECK(pmi_share_tally(s, fake_lookup, &f) == -EINVAL);	/* twice */
	CHECK(pmi_share_push_target(s, 8) == -EINVAL);		/* after finishing */
	pm_share_free(s);
	pm_share_free(NULL);
	return T_PASS;
}

T_MAIN(T(pairs_and_sums), T(batched), T(misuse))
