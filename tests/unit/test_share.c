/* test_share.c - the pairing step of pm_share on synthetic pages: pairs, sums, skipped frames, batched lookups, runs and spills against a per-frame reference. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../harness.h"
#include "pages.h"
#include "share.h"

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

#define SWAP1 (PMI_SHARE_KEY_SWAP | (1ULL << 50) | 77)

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

static struct pm_share *build(size_t spill)
{
	struct pm_share *s = pmi_share_alloc(PS);

	CHECK(s != NULL);
	if (!s)
		return NULL;
	if (spill)
		pmi_share_set_spill(s, spill);
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

/* Every mapping pair, mapping, process, process pair and the total, by hand; @spill: records held before spilling (0: default). */
static int check_pairs_and_sums(size_t spill)
{
	static const struct {
		unsigned a, b, shared, outside, swap;
	} want[] = { { 0, 3, 2, 1, 0 }, { 0, 4, 1, 0, 0 }, { 0, 5, 1, 1, 0 },
		     { 1, 3, 1, 0, 0 }, { 1, 4, 1, 0, 1 }, { 3, 5, 1, 1, 0 } };
	struct fake f = { tab, sizeof(tab) / sizeof(tab[0]), 0, 0, 0, false, 0, 0 };
	struct pm_share *s = build(spill);
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

static int pairs_and_sums(void)
{
	return check_pairs_and_sums(0);
}

/* The same with the records spilled to a file after every 1 and every 3 runs, and merged back. */
static int pairs_and_sums_spilled(void)
{
	int r = check_pairs_and_sums(1);

	return r == T_PASS ? check_pairs_and_sums(3) : r;
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

/* ---- random runs against a per-frame reference ---- */

#define U	96			/* frames 0..U-1 */
#define NSW	16			/* swap slots SWAPK(0..NSW-1) */
#define SWAPK(i) (PMI_SHARE_KEY_SWAP | (2ULL << 50) | (1000 + (i)))
#define NT	4			/* processes */
#define MPT	2			/* mappings each */
#define NM	(NT * MPT)
#define NRUN	6			/* runs per mapping */

struct rrun {
	uint64_t key, len;
};

struct world {
	struct rrun run[NM][NRUN];
	uint64_t ftab[U][3];
};

struct ref {
	struct pm_share_sum map[NM], t[NT], total;
	struct { uint64_t shared, outside, swap; } mp[NM][NM], tp[NT][NT];
};

static uint64_t rnd(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

static void make_world(struct world *w, uint64_t seed)
{
	size_t m, i;

	for (i = 0; i < U; i++) {
		uint64_t r = rnd(&seed) % 20;
		w->ftab[i][0] = i;
		w->ftab[i][1] = rnd(&seed) % 5;
		w->ftab[i][2] = r == 0 ? HUGE_FLAG : r == 1 ? 1ULL << PM_KPF_NOPAGE : 0;
	}
	for (m = 0; m < NM; m++)
		for (i = 0; i < NRUN; i++) {
			struct rrun *r = &w->run[m][i];
			if (rnd(&seed) % 5 == 0) {
				uint64_t o = rnd(&seed) % NSW;
				r->key = SWAPK(o);
				r->len = 1 + rnd(&seed) % (NSW - o);
			} else {
				r->key = rnd(&seed) % U;
				r->len = 1 + rnd(&seed) % 12;
				r->len = r->key + r->len > U ? U - r->key : r->len;
			}
		}
}

static void ref_add(struct pm_share_sum *u, bool swap, bool huge, bool multi, bool outside)
{
	if (huge) {
		u->hugetlb += PS;
	} else if (swap) {
		u->swap += PS;
		u->swap_shared += multi ? PS : 0;
	} else {
		u->resident += PS;
		u->shared += multi ? PS : 0;
		u->outside += outside ? PS : 0;
	}
}

/* The old join, one key at a time: which maps (with repeats) have it, then the rules of pm_share. */
static void ref_key(const struct world *w, struct ref *rf, uint64_t key, uint64_t count, uint64_t flags)
{
	const uint64_t none = (1ULL << PM_KPF_NOPAGE) | (1ULL << PM_KPF_ZERO_PAGE);
	bool swap = key & PMI_SHARE_KEY_SWAP, inm[NM] = { 0 }, int_[NT] = { 0 }, huge, multi, outside;
	size_t m, i, j, n = 0, nt = 0;

	for (m = 0; m < NM; m++)
		for (i = 0; i < NRUN; i++)
			if (key >= w->run[m][i].key && key < w->run[m][i].key + w->run[m][i].len) {
				n++;
				inm[m] = true;
			}
	for (m = 0; m < NM; m++)
		if (inm[m] && !int_[m / MPT]) {
			int_[m / MPT] = true;
			nt++;
		}
	if (!n || (!swap && ((flags & none) || count == 0)))
		return;
	huge = !swap && (flags & HUGE_FLAG);
	multi = nt > 1 && !huge;
	outside = !swap && !huge && count > n;
	for (m = 0; m < NM; m++)
		if (inm[m])
			ref_add(&rf->map[m], swap, huge, multi, outside);
	for (i = 0; i < NT; i++)
		if (int_[i])
			ref_add(&rf->t[i], swap, huge, multi, outside);
	ref_add(&rf->total, swap, huge, multi, outside);
	for (i = 0; multi && i < NM; i++)
		for (j = i + 1; j < NM; j++)
			if (inm[i] && inm[j] && i / MPT != j / MPT) {
				rf->mp[i][j].shared += swap ? 0 : PS;
				rf->mp[i][j].outside += outside ? PS : 0;
				rf->mp[i][j].swap += swap ? PS : 0;
			}
	for (i = 0; multi && i < NT; i++)
		for (j = i + 1; j < NT; j++)
			if (int_[i] && int_[j]) {
				rf->tp[i][j].shared += swap ? 0 : PS;
				rf->tp[i][j].outside += outside ? PS : 0;
				rf->tp[i][j].swap += swap ? PS : 0;
			}
}

static void push_world_map(struct pm_share *s, const struct world *w, size_t m, bool by_page)
{
	size_t i, k;

	push_map(s, 0x100000 * (m + 1), "");
	for (i = 0; i < NRUN; i++) {
		if (!by_page) {
			CHECK_EQ_U64(pmi_share_push_pages(s, w->run[m][i].key, w->run[m][i].len), 0);
			continue;
		}
		for (k = 0; k < w->run[m][i].len; k++)
			CHECK_EQ_U64(pmi_share_push_page(s, w->run[m][i].key + k), 0);
	}
}

#define CHECK_SAME_SUM(a, b)                                   \
	do {                                                   \
		CHECK_EQ_U64((a).resident, (b).resident);      \
		CHECK_EQ_U64((a).shared, (b).shared);          \
		CHECK_EQ_U64((a).outside, (b).outside);        \
		CHECK_EQ_U64((a).swap, (b).swap);              \
		CHECK_EQ_U64((a).swap_shared, (b).swap_shared); \
		CHECK_EQ_U64((a).hugetlb, (b).hugetlb);        \
	} while (0)

/* Compare a finished handle with the reference: every map, process, pair of maps and of processes, the total. */
static void compare(struct pm_share *s, const struct ref *rf)
{
	const struct pm_share_map *m, *first = NULL;
	const struct pm_share_pair *p;
	struct pm_share_sum u;
	size_t i = 0, j, npairs = 0;

	while (pm_share_next_map(s, &m) == 0) {
		first = first ? first : m;
		if (i < NM)
			CHECK_SAME_SUM(m->sum, rf->map[i]);
		i++;
	}
	CHECK_EQ_U64(i, NM);
	for (i = 0; i < NM; i++)
		for (j = i + 1; j < NM; j++)
			npairs += rf->mp[i][j].shared || rf->mp[i][j].swap;
	i = 0;
	while (pm_share_next_pair(s, &p) == 0 && first) {
		size_t a = (size_t)(p->a - first), b = (size_t)(p->b - first);
		CHECK(a < b && b < NM);
		if (a < b && b < NM) {
			CHECK_EQ_U64(p->shared, rf->mp[a][b].shared);
			CHECK_EQ_U64(p->outside, rf->mp[a][b].outside);
			CHECK_EQ_U64(p->swap, rf->mp[a][b].swap);
		}
		i++;
	}
	CHECK_EQ_U64(i, npairs);
	for (i = 0; i < NT; i++) {
		CHECK_EQ_U64(pm_share_sum(s, (int)i, PM_SHARE_ALL, &u), 0);
		CHECK_SAME_SUM(u, rf->t[i]);
		for (j = i + 1; j < NT; j++) {
			CHECK_EQ_U64(pm_share_sum(s, (int)i, (int)j, &u), 0);
			CHECK_EQ_U64(u.shared, rf->tp[i][j].shared);
			CHECK_EQ_U64(u.outside, rf->tp[i][j].outside);
			CHECK_EQ_U64(u.swap, rf->tp[i][j].swap);
		}
	}
	CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
	CHECK_SAME_SUM(u, rf->total);
}

/*
 * One world three ways: page by page in memory; as runs spilled every 2
 * records; as runs spilled every record with a process that fails half-way
 * (its records in the spill file are skipped). Each against the reference.
 */
static void check_world(const struct world *w, const struct ref *rf, int how)
{
	struct fake f = { &w->ftab[0], U, 0, 0, 0, false, 0, 0 };
	struct pm_share *s = pmi_share_alloc(PS);
	size_t t, m;

	if (!s)
		return;
	if (how)
		pmi_share_set_spill(s, how == 1 ? 2 : 1);
	for (t = 0; t < NT; t++) {
		if (how == 2 && t == 2) {	/* a process that fails after its first mapping */
			size_t nmaps = s->nmaps, nrecs = s->st.n, nchunks = s->st.nchunks;
			CHECK_EQ_U64(pmi_share_push_target(s, 999), 0);
			push_world_map(s, w, 0, false);
			push_world_map(s, w, 5, false);
			pmi_share_pop_target(s, nmaps, nrecs, nchunks);
		}
		CHECK_EQ_U64(pmi_share_push_target(s, (pid_t)(100 + t)), 0);
		for (m = t * MPT; m < (t + 1) * MPT; m++)
			push_world_map(s, w, m, how == 0);
	}
	CHECK(how == 0 || s->st.nchunks > 0);
	CHECK(how != 2 || s->any_dead);
	CHECK_EQ_U64(pmi_share_tally(s, fake_lookup, &f), 0);
	CHECK(!f.unsorted);
	CHECK(f.max_n <= SHARE_BATCH);
	CHECK(f.frames <= U);
	compare(s, rf);
	pm_share_free(s);
}

static int random_runs(void)
{
	static struct world w;
	static struct ref rf;
	uint64_t seed, k;
	int how;

	for (seed = 1; seed <= 200 && !t_failed_checks; seed++) {
		make_world(&w, seed);
		memset(&rf, 0, sizeof(rf));
		for (k = 0; k < U; k++)
			ref_key(&w, &rf, k, w.ftab[k][1], w.ftab[k][2]);
		for (k = 0; k < NSW; k++)
			ref_key(&w, &rf, SWAPK(k), 0, 0);
		for (how = 0; how < 3; how++)
			check_world(&w, &rf, how);
	}
	return T_PASS;
}

/* A run longer than a record holds, and runs that reach a swap type's end, are split and still join. */
static int long_runs(void)
{
	struct fake f = { NULL, 0, 0, 0, 0, false, 0, 1 };
	struct pm_share *s = pmi_share_alloc(PS);
	const uint64_t big = (1ULL << 32) + 5, edge = PMI_SHARE_KEY_SWAP | (3ULL << 50) | ((1ULL << 50) - 2);
	struct pm_share_sum u;

	if (!s)
		return T_FAIL;
	CHECK_EQ_U64(pmi_share_push_target(s, 1), 0);
	push_map(s, 0x1000, "");
	CHECK_EQ_U64(pmi_share_push_pages(s, edge, 2), 0);
	CHECK_EQ_U64(pmi_share_push_target(s, 2), 0);
	push_map(s, 0x1000, "");
	CHECK_EQ_U64(pmi_share_push_page(s, edge + 1), 0);
	CHECK_EQ_U64(pmi_share_push_page(s, edge + 2), 0);	/* type 4's first slot: not joined to type 3's run */
	CHECK_EQ_U64(s->st.n, 3);
	CHECK_EQ_U64(pmi_share_push_pages(s, 0, big), 0);	/* frames: two records */
	CHECK_EQ_U64(s->st.n, 5);
	pm_share_free(s);	/* not tallied: 4 G frames to look up */

	/* Slots across the type boundary, spilled one record at a time: joined only within a type. */
	s = pmi_share_alloc(PS);
	if (!s)
		return T_FAIL;
	pmi_share_set_spill(s, 1);
	CHECK_EQ_U64(pmi_share_push_target(s, 1), 0);
	push_map(s, 0x1000, "");
	CHECK_EQ_U64(pmi_share_push_pages(s, edge, 3), 0);
	CHECK_EQ_U64(pmi_share_push_target(s, 2), 0);
	push_map(s, 0x1000, "");
	CHECK_EQ_U64(pmi_share_push_pages(s, edge + 1, 2), 0);
	CHECK_EQ_U64(pmi_share_tally(s, fake_lookup, &f), 0);
	CHECK_EQ_U64(f.calls, 0);
	CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
	CHECK_SUM(u, 0, 0, 0, 3, 2, 0);
	pm_share_free(s);
	return T_PASS;
}

T_MAIN(T(pairs_and_sums), T(pairs_and_sums_spilled), T(batched), T(misuse), T(random_runs), T(long_runs))
