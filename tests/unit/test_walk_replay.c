/* test_walk_replay.c - the page walker over replayed roots with sparse synthetic pagemaps, at 4, 16 and 64 KiB pages. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"
#include "replay.h"

#define B_PRESENT	(1ULL << 63)
#define B_SWAP		(1ULL << 62)
#define B_FILE		(1ULL << 61)
#define B_EXCL		(1ULL << 56)
#define B_SD		(1ULL << 55)
#define SWP(type, off)	(B_SWAP | ((uint64_t)(off) << 5) | (uint64_t)(type))
#define UFFD_MARKER	0x420000000000003fULL	/* docs/kernel-interface.md §1.5 */
#define GUARD_MARKER	0x440000000000009fULL
#define ZERO_PFN	0x3b30
#define PME_PFRAME_MASK_T	((1ULL << 55) - 1)

#define F_P	PM_PAGE_PRESENT
#define F_S	PM_PAGE_SWAPPED
#define F_F	PM_PAGE_FILE
#define F_E	PM_PAGE_EXCLUSIVE
#define F_FR	PM_PAGE_FRAME

#define PAGEMAP	"proc/self/pagemap"

struct want {
	uint64_t start, end;	/* in pages */
	uint32_t flags;
	uint64_t pfn;
	unsigned type;
	uint64_t off;
	uint64_t map_start;	/* in pages */
};

struct fixture {
	char *root;
	struct pm_ctx *ctx;
	struct pm_target *t;
	uint64_t psize;
};

static void fx_close(struct fixture *fx)
{
	pm_target_close(fx->t);
	pm_ctx_free(fx->ctx);
	rp_free_root(fx->root);
	memset(fx, 0, sizeof(*fx));
}

/* A root with the recorded features, a running self, and @maps. Returns 0 or -1. */
static int fx_root(struct fixture *fx, uint64_t psize, const char *view, const char *extra_features)
{
	char feat[512];

	memset(fx, 0, sizeof(*fx));
	fx->psize = psize;
	fx->root = rp_new_root();
	if (!fx->root)
		return -1;
	snprintf(feat, sizeof(feat), "page_size=%llu\nlayout=current\npfn_view=%s\n%s", (unsigned long long)psize,
		 view, extra_features ? extra_features : "");
	if (rp_write_str(fx->root, "pagemap-features", feat) ||
	    rp_write_str(fx->root, "proc/sys/kernel/osrelease", "6.18.0\n") ||
	    rp_write_stat(fx->root, "proc/self/stat", 'S', 4194560))
		return -1;
	return 0;
}

/* Open the context and target after the files are in place. */
static int fx_open(struct fixture *fx)
{
	fx->ctx = pm_ctx_new(fx->root);
	if (!fx->ctx)
		return -1;
	pm_ctx_set_backend(fx->ctx, PM_BACKEND_AUTO);	/* whatever PAGEMAP_BACKEND says */
	fx->t = pm_target_open(fx->ctx, 0);
	return fx->t ? 0 : -1;
}

static int fx_entries(struct fixture *fx, uint64_t vpn, const uint64_t *e, size_t n)
{
	return rp_put_entries(fx->root, PAGEMAP, vpn, e, n);
}

static int fx_entry(struct fixture *fx, uint64_t vpn, uint64_t e)
{
	return rp_put_entry(fx->root, PAGEMAP, vpn, e);
}

/* Entries raw(i) = base + i for @n pages at @vpn. */
static int fx_seq(struct fixture *fx, uint64_t vpn, uint64_t base, size_t n)
{
	uint64_t *e = malloc(n * sizeof(*e));
	size_t i;
	int r;

	if (!e)
		return -1;
	for (i = 0; i < n; i++)
		e[i] = base + i;
	r = fx_entries(fx, vpn, e, n);
	free(e);
	return r;
}

/* Walk [@start, @end) and compare every run with @w[0..@n). */
static void check_walk(struct fixture *fx, uint64_t start, uint64_t end, unsigned flags, const struct want *w,
		       size_t n, struct pm_usage *u)
{
	struct pm_walk *walk = pm_walk_new(fx->t, start, end, flags);
	const struct pm_run *run;
	uint64_t ps = fx->psize;
	size_t i = 0;
	int r;

	CHECK(walk != NULL);
	if (!walk)
		return;
	CHECK_EQ_U64(pm_walk_backend(walk), PM_BACKEND_PREAD);
	while ((r = pm_walk_next(walk, &run)) == 0) {
		if (u)
			pm_usage_add(u, run);
		CHECK(run->map != NULL);
		if (run->map)
			CHECK(run->start >= run->map->start && run->end <= run->map->end);
		if (i >= n) {
			printf("  extra run %#llx-%#llx flags %#x\n", (unsigned long long)run->start,
			       (unsigned long long)run->end, run->flags);
			CHECK(i < n);
			i++;
			continue;
		}
		if (run->start != w[i].start * ps || run->end != w[i].end * ps || run->flags != w[i].flags ||
		    run->pfn != w[i].pfn || run->swap_type != w[i].type || run->swap_offset != w[i].off ||
		    (run->map && run->map->start != w[i].map_start * ps)) {
			printf("  run %zu differs:\n", i);
			CHECK_EQ_U64(run->start, w[i].start * ps);
			CHECK_EQ_U64(run->end, w[i].end * ps);
			CHECK_EQ_U64(run->flags, w[i].flags);
			CHECK_EQ_U64(run->pfn, w[i].pfn);
			CHECK_EQ_U64(run->swap_type, w[i].type);
			CHECK_EQ_U64(run->swap_offset, w[i].off);
			if (run->map)
				CHECK_EQ_U64(run->map->start, w[i].map_start * ps);
		}
		i++;
	}
	if (r != 1)
		printf("  walk ended with %d: %s\n", r, pm_ctx_tree_error(fx->ctx) ? pm_ctx_tree_error(fx->ctx) : "");
	CHECK_EQ_U64(r, 1);
	CHECK_EQ_U64(i, n);
	CHECK_EQ_U64(pm_walk_next(walk, &run), 1);
	pm_walk_free(walk);
}

static uint32_t guard_flags(void)
{
	struct pm_decode_info info = { PM_LAYOUT_CURRENT, 12, true, false };
	struct pm_entry e;

	pm_entry_decode(GUARD_MARKER, &info, &e);
	return e.flags;
}

/*
 * The main layout, in pages (ps = page size, pp = pages per PMD = ps / 8):
 *   A  0x400 +10       r--p file: two PFN runs then 4 unpopulated pages
 *   -  hole            junk entries that must not show
 *   B  0x500 +16       rw-p anon: swap, markers, migration, present
 *   C  0x510 +2        rw-p anon right after B: its run must not join B's
 *   D  0x600 +4        [vvar]: skipped
 *   E  0x700 +4        rw-p anon: huge-zero-rule page, zero page, normal, soft-dirty hole
 *   S  0x800 +2        rw-s /dev/zero (deleted): shmem, FILE stays
 *   G  ps    +3*pp     rw-p anon: THP, unaligned PFN, unaligned address
 *   H  ps+4pp +pp      rw-p anon: huge zero page
 *   J  131022 +100     rw-p anon: one run across the 65536-page batch boundary
 *   [vsyscall]
 */
static int walk_layout(uint64_t ps, const char *pmd_file)
{
	const uint64_t pp = ps / 8, a = 0x400, b = 0x500, c = 0x510, d = 0x600, e = 0x700, s = 0x800;
	const uint64_t g = ps, h = ps + 4 * pp, j = 131022;
	const uint64_t thp_pfn = 64 * pp, unal_pfn = 128 * pp + 1, al_pfn = 256 * pp, hz_pfn = 512 * pp;
	const uint32_t gf = guard_flags();
	struct fixture fx;
	struct pm_usage u;
	char maps[4096];
	int n = 0;

	if (fx_root(&fx, ps, "visible", "zero_pfn=0x3b30\n") < 0)
		return t_skip("cannot create a replay root");
	if (pmd_file)
		rp_write_str(fx.root, "sys/kernel/mm/transparent_hugepage/hpage_pmd_size", pmd_file);
#define L(s_, e_, rest) n += snprintf(maps + n, sizeof(maps) - n, "%08llx-%08llx %s\n", \
				     (unsigned long long)((s_) * ps), (unsigned long long)((e_) * ps), rest)
	L(a, a + 10, "r--p 00000000 fe:00 332835                     /usr/bin/prog");
	L(b, b + 16, "rw-p 00000000 00:00 0 ");
	L(c, c + 2, "rw-p 00000000 00:00 0 ");
	L(d, d + 4, "r--p 00000000 00:00 0                          [vvar]");
	L(e, e + 4, "rw-p 00000000 00:00 0                          [anon:buf]");
	L(s, s + 2, "rw-s 00000000 00:01 25                         /dev/zero (deleted)");
	L(g, g + 3 * pp, "rw-p 00000000 00:00 0 ");
	L(h, h + pp, "rw-p 00000000 00:00 0 ");
	L(j, j + 100, "rw-p 00000000 00:00 0 ");
#undef L
	n += snprintf(maps + n, sizeof(maps) - n,
		      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n");
	CHECK_EQ_U64(rp_write_str(fx.root, "proc/self/maps", maps), 0);

	/* A */
	fx_seq(&fx, a, B_PRESENT | B_FILE | 0x1000, 4);
	fx_seq(&fx, a + 4, B_PRESENT | B_FILE | 0x2000, 2);
	/* hole */
	fx_seq(&fx, a + 12, B_PRESENT | 0xdead, 8);
	/* B */
	fx_entry(&fx, b + 0, SWP(1, 100));
	fx_entry(&fx, b + 1, SWP(1, 101));
	fx_entry(&fx, b + 2, SWP(1, 200));
	fx_entry(&fx, b + 3, SWP(2, 201));
	fx_entry(&fx, b + 4, UFFD_MARKER);
	fx_entry(&fx, b + 5, UFFD_MARKER);
	fx_entry(&fx, b + 6, GUARD_MARKER);
	fx_entry(&fx, b + 7, SWP(24, 0x777));
	fx_seq(&fx, b + 8, B_PRESENT | B_EXCL | 0x3000, 8);
	/* C continues B's PFNs */
	fx_seq(&fx, c, B_PRESENT | B_EXCL | 0x3008, 2);
	/* D: present entries in [vvar] never show */
	fx_seq(&fx, d, B_PRESENT | 0x4000, 4);
	/* E */
	fx_entry(&fx, e + 0, B_PRESENT | B_FILE | 0x5555);
	fx_entry(&fx, e + 1, B_PRESENT | ZERO_PFN);
	fx_entry(&fx, e + 2, B_PRESENT | B_EXCL | 0x9000);
	fx_entry(&fx, e + 3, B_SD);
	/* S */
	fx_seq(&fx, s, B_PRESENT | B_FILE | 0x6000, 2);
	/* G: aligned THP, unaligned PFN, unaligned address */
	fx_seq(&fx, g, B_PRESENT | B_EXCL | thp_pfn, pp);
	fx_seq(&fx, g + pp, B_PRESENT | B_EXCL | unal_pfn, pp);
	fx_seq(&fx, g + 2 * pp + 1, B_PRESENT | B_EXCL | al_pfn, pp - 1);
	/* H: huge zero page (PM_FILE set by 6.x) */
	fx_seq(&fx, h, B_PRESENT | B_FILE | hz_pfn, pp);
	/* J */
	fx_seq(&fx, j, B_PRESENT | B_EXCL | 0x70000, 100);

	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target: %s", strerror(errno));
	}
	CHECK_EQ_U64(pm_ctx_features(fx.ctx)->page_size, ps);
	CHECK_EQ_U64(1ULL << pm_ctx_features(fx.ctx)->page_shift, ps);
	CHECK_EQ_U64(pm_ctx_features(fx.ctx)->pmd_size, pp * ps);
	CHECK_EQ_U64(pm_target_pfn_view(fx.t), PM_PFN_VISIBLE);

	{
		const struct want w[] = {
			{ a, a + 4, F_P | F_F | F_FR, 0x1000, 0, 0, a },
			{ a + 4, a + 6, F_P | F_F | F_FR, 0x2000, 0, 0, a },
			{ a + 6, a + 10, 0, 0, 0, 0, a },
			{ b, b + 2, F_S | F_FR, 0, 1, 100, b },
			{ b + 2, b + 3, F_S | F_FR, 0, 1, 200, b },
			{ b + 3, b + 4, F_S | F_FR, 0, 2, 201, b },
			/* Markers: no swap slot, so no frame flag, type or offset. */
			{ b + 4, b + 6, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0, b },
			{ b + 6, b + 7, gf, 0, 0, 0, b },
			{ b + 7, b + 8, PM_PAGE_NONSWAP | F_FR, 0, 24, 0x777, b },
			{ b + 8, b + 16, F_P | F_E | F_FR, 0x3000, 0, 0, b },
			{ c, c + 2, F_P | F_E | F_FR, 0x3008, 0, 0, c },
			{ e, e + 1, F_P | F_FR | PM_PAGE_ZERO, 0x5555, 0, 0, e },
			{ e + 1, e + 2, F_P | F_FR | PM_PAGE_ZERO, ZERO_PFN, 0, 0, e },
			{ e + 2, e + 3, F_P | F_E | F_FR, 0x9000, 0, 0, e },
			{ e + 3, e + 4, PM_PAGE_SOFTDIRTY, 0, 0, 0, e },
			{ s, s + 2, F_P | F_F | F_FR, 0x6000, 0, 0, s },
			{ g, g + pp, F_P | F_E | F_FR | PM_PAGE_THP, thp_pfn, 0, 0, g },
			{ g + pp, g + 2 * pp, F_P | F_E | F_FR, unal_pfn, 0, 0, g },
			{ g + 2 * pp, g + 2 * pp + 1, 0, 0, 0, 0, g },
			{ g + 2 * pp + 1, g + 3 * pp, F_P | F_E | F_FR, al_pfn, 0, 0, g },
			{ h, h + pp, F_P | F_FR | PM_PAGE_THP | PM_PAGE_ZERO, hz_pfn, 0, 0, h },
			{ j, j + 100, F_P | F_E | F_FR, 0x70000, 0, 0, j },
		};
		memset(&u, 0, sizeof(u));
		check_walk(&fx, 0, UINT64_MAX, PM_WALK_ENTRIES, w, sizeof(w) / sizeof(w[0]), &u);
		CHECK_EQ_U64(u.present, (6 + 8 + 2 + 3 + 2 + 3 * pp - 1 + pp + 100) * ps);
		CHECK_EQ_U64(u.swapped, 4 * ps);
		CHECK_EQ_U64(u.file, 8 * ps);
		CHECK_EQ_U64(u.exclusive, (8 + 2 + 1 + 3 * pp - 1 + 100) * ps);
		/* the huge zero page at h is THP in its runs' flags, but no huge page of the process's in the sums */
		CHECK_EQ_U64(u.thp, pp * ps);
		CHECK_EQ_U64(u.softdirty, 1 * ps);
		CHECK_EQ_U64(u.uffdwp, 2 * ps);
		CHECK_EQ_U64(u.guard, 1 * ps);
		CHECK_EQ_U64(u.zero, (2 + pp) * ps);
	}
	{
		/* PM_WALK_EACH: one run per page. */
		const struct want w[] = {
			{ a, a + 1, F_P | F_F | F_FR, 0x1000, 0, 0, a },
			{ a + 1, a + 2, F_P | F_F | F_FR, 0x1001, 0, 0, a },
			{ a + 2, a + 3, F_P | F_F | F_FR, 0x1002, 0, 0, a },
			{ a + 3, a + 4, F_P | F_F | F_FR, 0x1003, 0, 0, a },
			{ a + 4, a + 5, F_P | F_F | F_FR, 0x2000, 0, 0, a },
			{ a + 5, a + 6, F_P | F_F | F_FR, 0x2001, 0, 0, a },
			{ a + 6, a + 7, 0, 0, 0, 0, a },
			{ a + 7, a + 8, 0, 0, 0, 0, a },
			{ a + 8, a + 9, 0, 0, 0, 0, a },
			{ a + 9, a + 10, 0, 0, 0, 0, a },
			{ b, b + 1, F_S | F_FR, 0, 1, 100, b },
			{ b + 1, b + 2, F_S | F_FR, 0, 1, 101, b },
		};
		check_walk(&fx, a * ps, (b + 2) * ps, PM_WALK_ENTRIES | PM_WALK_EACH, w, sizeof(w) / sizeof(w[0]),
			   NULL);
	}
	{
		/*
		 * A sub-range: clamped to its pages, the first PFN is the first
		 * page's; run->map is still the whole mapping.
		 */
		const struct want w[] = {
			{ a + 2, a + 4, F_P | F_F | F_FR, 0x1002, 0, 0, a },
			{ a + 4, a + 5, F_P | F_F | F_FR, 0x2000, 0, 0, a },
		};
		check_walk(&fx, (a + 2) * ps, (a + 5) * ps, PM_WALK_ENTRIES, w, 2, NULL);
		/* Nothing mapped there. */
		check_walk(&fx, (a + 10) * ps, b * ps, PM_WALK_ENTRIES, w, 0, NULL);
		check_walk(&fx, 5 * ps, 5 * ps, PM_WALK_ENTRIES, w, 0, NULL);
	}
	{
		/* THP in PM_WALK_EACH: every page of the block. */
		struct pm_walk *walk = pm_walk_new(fx.t, g * ps, (g + pp) * ps, PM_WALK_EACH);
		const struct pm_run *run;
		uint64_t k = 0;
		int r;

		CHECK(walk != NULL);
		while (walk && (r = pm_walk_next(walk, &run)) == 0) {
			if (!(run->flags & PM_PAGE_THP) || run->pfn != thp_pfn + k ||
			    run->end - run->start != ps) {
				CHECK(run->flags & PM_PAGE_THP);
				CHECK_EQ_U64(run->pfn, thp_pfn + k);
				break;
			}
			k++;
		}
		CHECK_EQ_U64(k, pp);
		pm_walk_free(walk);
	}
	fx_close(&fx);
	return T_PASS;
}

static int walk_4k(void)
{
	return walk_layout(4096, NULL);
}

static int walk_16k(void)
{
	return walk_layout(16384, NULL);
}

static int walk_64k(void)
{
	return walk_layout(65536, NULL);
}

static int walk_64k_pmd_file(void)
{
	/* The THP size comes from sysfs when the capture has it (here the same as the default). */
	return walk_layout(65536, "536870912\n");
}

/* hpage_pmd_size that differs from page_size / 8 * page_size is what counts. */
static int walk_pmd_size_override(void)
{
	const uint64_t ps = 65536, pp = 32;	/* a 2 MiB "PMD" */
	struct fixture fx;
	char maps[256];

	if (fx_root(&fx, ps, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
	snprintf(maps, sizeof(maps), "%08llx-%08llx rw-p 00000000 00:00 0 \n", (unsigned long long)(pp * ps),
		 (unsigned long long)(3 * pp * ps));
	rp_write_str(fx.root, "proc/self/maps", maps);
	fx_seq(&fx, pp, B_PRESENT | 64 * pp, pp);
	fx_seq(&fx, 2 * pp, B_PRESENT | (128 * pp + 1), pp);
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	CHECK_EQ_U64(pm_ctx_features(fx.ctx)->pmd_size, 2097152);
	{
		const struct want w[] = {
			{ pp, 2 * pp, F_P | F_FR | PM_PAGE_THP, 64 * pp, 0, 0, pp },
			{ 2 * pp, 3 * pp, F_P | F_FR, 128 * pp + 1, 0, 0, pp },
		};
		check_walk(&fx, 0, UINT64_MAX, 0, w, 2, NULL);
	}
	fx_close(&fx);
	return T_PASS;
}

/* With /proc/kpageflags in the capture, a contiguous block counts only if its head is THP or hugetlb. */
static int walk_thp_kpageflags(void)
{
	const uint64_t ps = 4096, pp = 512, p1 = 0x40000, p2 = 0x80000, p3 = 0xc0000;
	struct fixture fx;
	char maps[256];

	if (fx_root(&fx, ps, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	snprintf(maps, sizeof(maps), "00200000-00800000 rw-p 00000000 00:00 0 \n");
	rp_write_str(fx.root, "proc/self/maps", maps);
	fx_seq(&fx, pp, B_PRESENT | p1, pp);
	fx_seq(&fx, 2 * pp, B_PRESENT | p2, pp);
	fx_seq(&fx, 3 * pp, B_PRESENT | p3, pp);
	rp_put_entry(fx.root, "proc/kpageflags", p1, 1ULL << 22);	/* KPF_THP */
	rp_put_entry(fx.root, "proc/kpageflags", p2, 1ULL << 5);	/* KPF_LRU only */
	rp_put_entry(fx.root, "proc/kpageflags", p3, 1ULL << 17);	/* KPF_HUGE (hugetlb) */
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	{
		const struct want w[] = {
			{ pp, 2 * pp, F_P | F_FR | PM_PAGE_THP, p1, 0, 0, pp },
			{ 2 * pp, 3 * pp, F_P | F_FR, p2, 0, 0, pp },
			{ 3 * pp, 4 * pp, F_P | F_FR | PM_PAGE_THP, p3, 0, 0, pp },
		};
		check_walk(&fx, 0, UINT64_MAX, 0, w, 3, NULL);
	}
	fx_close(&fx);
	return T_PASS;
}

/* Hidden PFNs: runs merge on flags alone, no frame fields, no THP guess. */
static int walk_hidden(void)
{
	const uint64_t ps = 4096, pp = 512;
	struct pm_walk *walk;
	struct fixture fx;

	if (fx_root(&fx, ps, "hidden", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps", "00200000-00800000 rw-p 00000000 00:00 0 \n");
	{
		uint64_t *ent = calloc(pp, sizeof(*ent));
		size_t i;
		for (i = 0; ent && i < pp; i++)
			ent[i] = B_PRESENT | B_EXCL;
		if (ent)
			fx_entries(&fx, pp, ent, pp);
		free(ent);
	}
	fx_entry(&fx, 2 * pp, B_SWAP);
	fx_entry(&fx, 2 * pp + 1, B_SWAP);
	fx_entry(&fx, 2 * pp + 2, B_SWAP | (1ULL << 57));	/* uffd-wp, no swap on: a marker */
	rp_truncate(fx.root, PAGEMAP, 4 * pp * 8);	/* the file covers the whole mapping */
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	CHECK_EQ_U64(pm_target_pfn_view(fx.t), PM_PFN_HIDDEN);
	{
		const struct want w[] = {
			{ pp, 2 * pp, F_P | F_E, 0, 0, 0, pp },
			{ 2 * pp, 2 * pp + 2, F_S, 0, 0, 0, pp },
			{ 2 * pp + 2, 2 * pp + 3, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0, pp },
			{ 2 * pp + 3, 4 * pp, 0, 0, 0, 0, pp },
		};
		check_walk(&fx, 0, UINT64_MAX, PM_WALK_ENTRIES, w, 4, NULL);
	}
	walk = pm_walk_new(fx.t, 0, UINT64_MAX, 0);
	CHECK(walk != NULL);
	if (walk) {
		uint32_t k = pm_walk_known(walk);
		CHECK(!(k & (PM_PAGE_FRAME | PM_PAGE_THP | PM_PAGE_NONSWAP | PM_PAGE_ZERO)));
		CHECK_EQ_U64(k & (F_P | F_S | F_F | F_E), F_P | F_S | F_F | F_E);
	}
	pm_walk_free(walk);
	fx_close(&fx);
	return T_PASS;
}

static int walk_known_visible(void)
{
	struct pm_walk *walk;
	struct fixture fx;

	if (fx_root(&fx, 4096, "visible", "zero_pfn=0x3b30\n") < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps", "");
	rp_write_str(fx.root, PAGEMAP, "");
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	walk = pm_walk_new(fx.t, 0, UINT64_MAX, PM_WALK_ENTRIES);
	CHECK(walk != NULL);
	if (walk) {
		CHECK_EQ_U64(pm_walk_backend(walk), PM_BACKEND_PREAD);
		CHECK_EQ_U64(pm_walk_known(walk), ((1u << PM_PAGE_NFLAGS) - 1));
	}
	pm_walk_free(walk);
	/* start > end */
	errno = 0;
	CHECK(pm_walk_new(fx.t, 2, 1, 0) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	/* Flag bits the API does not define (the library's own walk flags among them) are refused. */
	for (unsigned bit = 2; bit < 32; bit++) {
		errno = 0;
		CHECK(pm_walk_new(fx.t, 0, UINT64_MAX, PM_WALK_ENTRIES | (1u << bit)) == NULL);
		CHECK_EQ_U64(errno, EINVAL);
	}
	errno = 0;
	CHECK(pm_mapstat_open(fx.t, 1u << 31) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	/* The scan back end cannot read plain files. */
	CHECK_EQ_U64(pm_ctx_set_backend(fx.ctx, PM_BACKEND_SCAN), 0);
	errno = 0;
	CHECK(pm_walk_new(fx.t, 0, UINT64_MAX, 0) == NULL);
	CHECK_EQ_U64(errno, EOPNOTSUPP);
	CHECK_EQ_U64(pm_ctx_set_backend(fx.ctx, (enum pm_backend)7), -EINVAL);
	CHECK_EQ_U64(pm_ctx_set_backend(fx.ctx, PM_BACKEND_PREAD), 0);
	walk = pm_walk_new(fx.t, 0, UINT64_MAX, 0);
	CHECK(walk != NULL);
	if (walk)
		CHECK_EQ_U64(pm_walk_backend(walk), PM_BACKEND_PREAD);
	pm_walk_free(walk);
	pm_walk_free(NULL);
	fx_close(&fx);
	return T_PASS;
}

/* The walk's error and the tree's message, which must hold @want. */
static void check_walk_fails(struct fixture *fx, int want_rc, const char *want)
{
	struct pm_walk *walk = pm_walk_new(fx->t, 0, UINT64_MAX, 0);
	const struct pm_run *run;
	const char *msg;
	int r;

	CHECK(walk != NULL);
	if (!walk)
		return;
	while ((r = pm_walk_next(walk, &run)) == 0)
		;
	CHECK_EQ_U64(r, want_rc);
	msg = pm_ctx_tree_error(fx->ctx);
	CHECK(msg && strstr(msg, want));
	if (msg && !strstr(msg, want))
		printf("  message \"%s\" lacks \"%s\"\n", msg, want);
	pm_walk_free(walk);
}

/*
 * A capture whose pagemap ends inside a mapping was cut short: the walk
 * fails and says where, rather than drop the mappings past the cut (it
 * used to stop there without an error: 29 of 32 mappings vanished).
 */
static int walk_short_pagemap(void)
{
	const uint64_t ps = 4096;
	struct fixture fx;
	uint64_t buf[16];
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (fx_root(&fx, ps, "visible", NULL) < 0)
			return t_skip("cannot create a replay root");
		rp_write_str(fx.root, "proc/self/maps",
			     "00400000-00410000 rw-p 00000000 00:00 0 \n"
			     "00500000-00510000 rw-p 00000000 00:00 0 \n");
		fx_seq(&fx, 0x400, B_PRESENT | 0x100, 10);
		/* Pass 1: a partial trailing word is dropped. */
		if (pass)
			rp_truncate(fx.root, PAGEMAP, (0x400 + 10) * 8 + 3);
		if (fx_open(&fx) < 0) {
			fx_close(&fx);
			return t_skip("cannot open the replayed target");
		}
		check_walk_fails(&fx, -EBADMSG, "/proc/self/pagemap is truncated: it ends at byte");
		check_walk_fails(&fx, -EBADMSG, "the entry of 0x40a000 (mapping 0x400000-0x410000) is at byte 0x2050");
		/* pm_target_read: short at the end, 0 past it, the target stays alive. */
		CHECK_EQ_U64(pm_target_read(fx.t, 0x400 + 5, buf, 16), 5);
		CHECK_EQ_U64(buf[0], B_PRESENT | 0x105);
		CHECK_EQ_U64(buf[4], B_PRESENT | 0x109);
		CHECK_EQ_U64(pm_target_read(fx.t, 0x400 + 10, buf, 16), 0);
		CHECK_EQ_U64(pm_target_read(fx.t, 0x100000, buf, 4), 0);
		CHECK_EQ_U64(pm_target_read(fx.t, 0x400, buf, 0), 0);
		CHECK_EQ_U64(pm_target_read(fx.t, 0, buf, 2), 2);
		CHECK_EQ_U64(buf[0], 0);
		fx_close(&fx);
	}
	return T_PASS;
}

/* A file cut before the second mapping: that mapping is named, the first one's runs came out. */
static int walk_truncated_between(void)
{
	struct fixture fx;

	if (fx_root(&fx, 4096, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps",
		     "00400000-00402000 rw-p 00000000 00:00 0 \n"
		     "00500000-00502000 rw-p 00000000 00:00 0 \n");
	fx_seq(&fx, 0x400, B_PRESENT | 0x100, 2);
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	check_walk_fails(&fx, -EBADMSG, "ends at byte 8208 (0x2010), but the entry of 0x500000 (mapping 0x500000-0x502000)");
	fx_close(&fx);
	return T_PASS;
}

/* A replayed pagemap of fewer than 8 bytes is truncated: a file never loses its mm (no -ESRCH). */
static int walk_empty_pagemap(void)
{
	static const char *const sizes[] = { "", "12345" };
	struct fixture fx;
	uint64_t buf[4];
	size_t i;

	for (i = 0; i < 2; i++) {
		if (fx_root(&fx, 4096, "visible", NULL) < 0)
			return t_skip("cannot create a replay root");
		rp_write_str(fx.root, "proc/self/maps", "00400000-00410000 rw-p 00000000 00:00 0 \n");
		rp_write_str(fx.root, PAGEMAP, sizes[i]);
		if (fx_open(&fx) < 0) {
			fx_close(&fx);
			return t_skip("cannot open the replayed target");
		}
		CHECK_EQ_U64(pm_target_read(fx.t, 0x400, buf, 4), 0);
		CHECK_EQ_U64(pm_target_read(fx.t, 0, buf, 1), 0);
		check_walk_fails(&fx, -EBADMSG, "pagemap is truncated");
		fx_close(&fx);
	}
	return T_PASS;
}

static int always_stop(void *data)
{
	(*(int *)data)++;
	return -EINTR;
}

/*
 * pm_ctx_set_check stops a walk at its first read and a pm_target_read of
 * more than one entry, but not a one-word read: a liveness probe (wss's
 * "the target has no memory: Interrupted system call" before).
 */
static int walk_check_stops(void)
{
	struct fixture fx;
	const struct pm_run *run;
	struct pm_walk *w;
	uint64_t buf[4];
	int asked = 0;

	if (fx_root(&fx, 4096, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps", "00400000-00404000 rw-p 00000000 00:00 0 \n");
	if (fx_seq(&fx, 0x400, 0x8000000000000001ULL, 4) < 0 || fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	pm_ctx_set_check(fx.ctx, always_stop, &asked);
	CHECK_EQ_U64(pm_target_read(fx.t, 0x400, buf, 1), 1);	/* a probe: never asked */
	CHECK_EQ_U64(asked, 0);
	CHECK(pm_target_read(fx.t, 0x400, buf, 4) == -EINTR);
	w = pm_walk_new(fx.t, 0x400000, 0x404000, 0);
	CHECK(w != NULL);
	if (w)
		CHECK(pm_walk_next(w, &run) == -EINTR);
	pm_walk_free(w);
	CHECK(asked >= 2);
	fx_close(&fx);
	return T_PASS;
}

/*
 * A walk over part of a file mapping: whatever run->map says about where the
 * mapping starts, its offset must agree, so that run->map->offset +
 * (run->start - run->map->start) is the file offset of the run's first page.
 */
static int walk_sub_range_map_offset(void)
{
	const uint64_t ps = 4096;
	const struct pm_run *run;
	struct pm_walk *walk;
	struct fixture fx;

	if (fx_root(&fx, ps, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps",
		     "00400000-00410000 r--p 00010000 fe:00 332835                     /usr/bin/prog\n");
	fx_seq(&fx, 0x400, B_PRESENT | B_FILE | 0x100, 16);
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	walk = pm_walk_new(fx.t, 0x404000, 0x408000, 0);
	CHECK(walk != NULL);
	if (walk && pm_walk_next(walk, &run) == 0) {
		CHECK_EQ_U64(run->start, 0x404000);
		CHECK_EQ_U64(run->end, 0x408000);
		CHECK_EQ_U64(run->pfn, 0x104);
		CHECK_EQ_U64(run->map->inode, 332835);
		CHECK_EQ_U64(run->map->kind, PM_MAP_FILE);
		/* The page at 0x404000 is file offset 0x10000 + 0x4000. */
		CHECK_EQ_U64(run->map->offset + (run->start - run->map->start), 0x14000);
		CHECK_EQ_U64(pm_walk_next(walk, &run), 1);
	} else {
		CHECK(!"no run");
	}
	pm_walk_free(walk);
	fx_close(&fx);
	return T_PASS;
}

/* A malformed maps line ends the walk with -EBADMSG, naming the line, after the good mappings before it. */
static int walk_bad_maps_line(void)
{
	const uint64_t ps = 4096;
	const struct pm_run *run;
	struct pm_walk *walk;
	struct fixture fx;

	if (fx_root(&fx, ps, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps",
		     "00400000-00402000 rw-p 00000000 00:00 0 \n"
		     "00500000-00502000 rw-p 00000000 00:00 0x\n"
		     "00600000-00602000 rw-p 00000000 00:00 0 \n");
	fx_seq(&fx, 0x400, B_PRESENT | 0x100, 2);
	rp_truncate(fx.root, PAGEMAP, 0x602 * 8);
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	walk = pm_walk_new(fx.t, 0, UINT64_MAX, 0);
	CHECK(walk != NULL);
	if (walk) {
		CHECK_EQ_U64(pm_walk_next(walk, &run), 0);
		CHECK_EQ_U64(run->start, 0x400000);
		CHECK_EQ_U64(run->end, 0x402000);
		CHECK_EQ_U64(pm_walk_next(walk, &run), -EBADMSG);
		CHECK(pm_ctx_tree_error(fx.ctx) && strstr(pm_ctx_tree_error(fx.ctx), "/proc/self/maps line 2: is not a maps line"));
	}
	pm_walk_free(walk);
	fx_close(&fx);
	return T_PASS;
}

/* A row's known flags: the walk's, and none for [vvar] and [vsyscall], which are never read. */
static int mapstat_known(void)
{
	static const enum pm_map_kind want[] = { PM_MAP_ANON, PM_MAP_VVAR, PM_MAP_VSYSCALL };
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_mapstat *it;
	struct fixture fx;
	uint32_t walk_known = 0;
	int i = 0, r;

	if (fx_root(&fx, 4096, "visible", NULL) < 0)
		return t_skip("cannot create a replay root");
	rp_write_str(fx.root, "proc/self/maps",
		     "00400000-00402000 rw-p 00000000 00:00 0 \n"
		     "7ffd00000000-7ffd00004000 r--p 00000000 00:00 0                          [vvar]\n"
		     "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n");
	fx_seq(&fx, 0x400, B_PRESENT | B_EXCL | 0x100, 2);
	if (fx_open(&fx) < 0) {
		fx_close(&fx);
		return t_skip("cannot open the replayed target");
	}
	it = pm_mapstat_open(fx.t, PM_WALK_ENTRIES);
	CHECK(it != NULL);
	if (!it) {
		fx_close(&fx);
		return T_FAIL;
	}
	walk_known = pm_walk_known(pm_mapstat_walk(it));
	CHECK(walk_known & PM_PAGE_EXCLUSIVE);
	CHECK_EQ_U64(pm_mapstat_known(it), 0);	/* no row yet */
	while ((r = pm_mapstat_next(it, &m, &u)) == 0 && i < 3) {
		CHECK_EQ_U64(m->kind, want[i]);
		CHECK_EQ_U64(pm_mapstat_known(it), (i ? 0 : walk_known));
		if (!i)
			CHECK_EQ_U64(u->exclusive, 0x2000);
		i++;
	}
	CHECK_EQ_U64(r, 1);
	CHECK_EQ_U64(i, 3);
	CHECK_EQ_U64(pm_mapstat_known(it), 0);	/* after the last row */
	pm_mapstat_close(it);
	fx_close(&fx);
	return T_PASS;
}

/*
 * The sums of a mapping read by pread, block by block (pmi_walk_sum_plain): two kinds in a PMD block (one page
 * in 16 present), the zero page and swap entries among them (a third kind, and entries that are not plain),
 * present pages neither exclusive nor file (a kind the zero page's may be) with zero pages among them; blocks
 * cut by the mapping's start and end. Each sum against the entries written.
 */
static int mapstat_mixed_blocks(void)
{
	const uint64_t start = 0x10000 - 3, n = 3 + 2 * 512 + 100;
	const struct pm_mapping *m;
	const struct pm_usage *u;
	uint64_t *e, present = 0, zero = 0, swapped = 0, excl = 0, i;
	struct pm_mapstat *it;
	struct fixture fx;
	char maps[128];
	int r;

	if (fx_root(&fx, 4096, "visible", "zero_pfn=0x3b30\n") < 0)
		return t_skip("cannot create a replay root");
	e = calloc(n, sizeof(*e));
	if (!e) {
		fx_close(&fx);
		return t_skip("no memory");
	}
	for (i = 0; i < n; i++) {
		if (i < 3 + 512)	/* one in 16 present: two kinds */
			e[i] = i % 16 == 0 ? B_PRESENT | B_EXCL | (0x100000 + i) : 0;
		else if (i < 3 + 1024)	/* and the zero page and swap among them */
			e[i] = i % 16 == 0 ? B_PRESENT | B_EXCL | (0x100000 + i) : i % 16 == 8 ? B_PRESENT | ZERO_PFN :
			       i % 16 == 4 ? SWP(1, i) : 0;
		else	/* shared anon (present, not exclusive) with the zero page among it */
			e[i] = i % 7 == 1 ? B_PRESENT | ZERO_PFN : i % 2 == 0 ? B_PRESENT | (0x200000 + i) : 0;
		present += (e[i] & B_PRESENT) != 0;
		zero += (e[i] & B_PRESENT) && (e[i] & PME_PFRAME_MASK_T) == ZERO_PFN;
		swapped += (e[i] & B_SWAP) != 0;
		excl += (e[i] & B_EXCL) != 0;
	}
	snprintf(maps, sizeof(maps), "%llx-%llx rw-p 00000000 00:00 0 \n", (unsigned long long)(start << 12),
		 (unsigned long long)((start + n) << 12));
	if (rp_write_str(fx.root, "proc/self/maps", maps) || fx_entries(&fx, start, e, n) || fx_open(&fx) < 0) {
		free(e);
		fx_close(&fx);
		return t_skip("cannot write the replayed target");
	}
	free(e);
	it = pm_mapstat_open(fx.t, PM_WALK_ENTRIES);
	CHECK(it != NULL);
	r = it ? pm_mapstat_next(it, &m, &u) : -1;
	CHECK_EQ_U64(r, 0);
	if (r == 0) {
		CHECK_EQ_U64(u->present, present * 4096);
		CHECK_EQ_U64(u->zero, zero * 4096);
		CHECK_EQ_U64(u->swapped, swapped * 4096);
		CHECK_EQ_U64(u->exclusive, excl * 4096);
		CHECK_EQ_U64(u->file, 0);
		CHECK_EQ_U64(pm_mapstat_next(it, &m, &u), 1);
	}
	pm_mapstat_close(it);
	fx_close(&fx);
	return T_PASS;
}

static int usage_add(void)
{
	struct pm_usage u;
	struct pm_run r = { .start = 0x1000, .end = 0x3000 };

	memset(&u, 0, sizeof(u));
	r.flags = F_P | F_E | PM_PAGE_SOFTDIRTY | PM_PAGE_THP | F_FR;
	pm_usage_add(&u, &r);
	CHECK_EQ_U64(u.present, 0x2000);
	CHECK_EQ_U64(u.exclusive, 0x2000);
	CHECK_EQ_U64(u.softdirty, 0x2000);
	CHECK_EQ_U64(u.thp, 0x2000);
	CHECK_EQ_U64(u.swapped + u.file + u.uffdwp + u.guard + u.zero, 0);
	r.start = 0x10000;
	r.end = 0x11000;
	r.flags = F_S | PM_PAGE_UFFD_WP;
	pm_usage_add(&u, &r);
	r.flags = PM_PAGE_MARKER | PM_PAGE_GUARD;
	pm_usage_add(&u, &r);
	r.flags = F_P | F_F;
	pm_usage_add(&u, &r);
	r.flags = F_P | PM_PAGE_ZERO;
	pm_usage_add(&u, &r);
	r.flags = PM_PAGE_NONSWAP | PM_PAGE_MARKER | F_FR;	/* counted nowhere */
	pm_usage_add(&u, &r);
	r.flags = 0;
	pm_usage_add(&u, &r);
	CHECK_EQ_U64(u.present, 0x4000);
	CHECK_EQ_U64(u.swapped, 0x1000);
	CHECK_EQ_U64(u.file, 0x1000);
	CHECK_EQ_U64(u.exclusive, 0x2000);
	CHECK_EQ_U64(u.thp, 0x2000);
	CHECK_EQ_U64(u.softdirty, 0x2000);
	CHECK_EQ_U64(u.uffdwp, 0x1000);
	CHECK_EQ_U64(u.guard, 0x1000);
	CHECK_EQ_U64(u.zero, 0x1000);
	/* Big runs do not overflow 32 bits. */
	memset(&u, 0, sizeof(u));
	r.start = 0;
	r.end = 0x7ffffffff000ULL;
	r.flags = F_P;
	pm_usage_add(&u, &r);
	pm_usage_add(&u, &r);
	CHECK_EQ_U64(u.present, 2 * 0x7ffffffff000ULL);
	return T_PASS;
}

T_MAIN(T(walk_4k), T(walk_16k), T(walk_64k), T(walk_64k_pmd_file), T(walk_pmd_size_override),
       T(walk_thp_kpageflags), T(walk_hidden), T(walk_known_visible), T(walk_short_pagemap), T(walk_truncated_between),
       T(walk_empty_pagemap),
       T(walk_sub_range_map_offset), T(walk_bad_maps_line), T(mapstat_known), T(usage_add), T(mapstat_mixed_blocks), T(walk_check_stops))
