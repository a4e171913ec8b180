/* test_facts.c - unit tests of the flag facts (pm_flag_facts, pm_flag_lack), pm_kernel_at_least and pm_flag_bytes_add. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"

static const struct pm_read_how pread_vis = { .layout = PM_LAYOUT_CURRENT, .frames = true };
static const struct pm_read_how pread_hid = { .layout = PM_LAYOUT_CURRENT };

/* A kernel @maj.@min whose probes said nothing. */
static struct pm_features kernel(unsigned maj, unsigned min)
{
	struct pm_features f;

	memset(&f, 0, sizeof(f));
	f.kernel_major = maj;
	f.kernel_minor = min;
	f.layout = PM_LAYOUT_CURRENT;
	f.soft_dirty = f.guard_regions = f.zero_page = PM_UNKNOWN;
	return f;
}

/* The facts are the flag table's rows in its order, then PM_PAGE_FRAME; each raw bit decodes to its flag. */
static int facts_follow_table(void)
{
	const struct pm_decode_info info = { .layout = PM_LAYOUT_CURRENT, .page_shift = 12, .frame_visible = true };
	const struct pm_flag_info *t = pm_flag_table(NULL);
	const struct pm_flag_fact *x;
	struct pm_entry e;
	size_t i, n, nt;

	pm_flag_table(&nt);
	x = pm_flag_facts(&n);
	CHECK(pm_flag_facts(NULL) == x);
	CHECK_EQ_U64(n, nt + 1);
	for (i = 0; i < nt && i < n; i++)
		CHECK_EQ_U64(x[i].bit, t[i].bit);
	CHECK_EQ_U64(x[n - 1].bit, PM_PAGE_FRAME);
	for (i = 0; i < n; i++) {
		CHECK(x[i].raw_bit >= -1 && x[i].raw_bit < 64);
		CHECK(x[i].since_major < 100 && x[i].since_minor < 100);
		if (x[i].raw_bit < 0)
			continue;
		/* Bits 0-54 are the frame: a flag bit lies above them. */
		CHECK(x[i].raw_bit >= 55);
		CHECK_EQ_U64(pm_entry_decode(1ULL << x[i].raw_bit, &info, &e), 0);
		CHECK(e.flags & x[i].bit);
	}
	return T_PASS;
}

/* The sums are the flag table's rows in its order; columns 0, 1, ... once each, with help. */
static int sums_follow_table(void)
{
	const struct pm_flag_info *t = pm_flag_table(NULL);
	const struct pm_flag_sum *s = pm_flag_sums(NULL);
	unsigned seen = 0;
	size_t i, n, nt;
	int max = -1;

	pm_flag_table(&nt);
	pm_flag_sums(&n);
	CHECK_EQ_U64(n, nt);
	for (i = 0; i < n && i < nt; i++) {
		CHECK_EQ_U64(s[i].bit, t[i].bit);
		CHECK(s[i].column >= -1 && s[i].column < 32);
		CHECK((s[i].column >= 0) == (s[i].bytes != NULL));
		if (s[i].column < 0 || s[i].column >= 32)
			continue;
		CHECK(!(seen & (1u << s[i].column)));
		seen |= 1u << s[i].column;
		max = s[i].column > max ? s[i].column : max;
	}
	CHECK_EQ_U64(seen, (1ULL << (max + 1)) - 1);
	CHECK(max >= 8);	/* struct pm_usage's nine fields */
	return T_PASS;
}

static int kernel_at_least(void)
{
	struct pm_features f = kernel(0, 0);

	CHECK(pm_kernel_at_least(&f, 99, 0));	/* unknown: assume a current kernel */
	f = kernel(4, 2);
	CHECK(pm_kernel_at_least(&f, 4, 2));
	CHECK(pm_kernel_at_least(&f, 4, 1));
	CHECK(pm_kernel_at_least(&f, 3, 11));
	CHECK(!pm_kernel_at_least(&f, 4, 3));
	CHECK(!pm_kernel_at_least(&f, 5, 0));
	f = kernel(5, 0);
	CHECK(pm_kernel_at_least(&f, 4, 18));	/* the minor counts only within one major */
	f = kernel(4, 18);
	CHECK(!pm_kernel_at_least(&f, 5, 0));
	return T_PASS;
}

/* The pread back end: kernel, layout, probed config, frames, zero page, in that order. */
static int lack_pread(void)
{
	struct pm_features f = kernel(5, 10);
	struct pm_read_how v2 = pread_vis;

	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_EXCLUSIVE), PM_LACK_NONE);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_UFFD_WP), PM_LACK_KERNEL);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_GUARD), PM_LACK_KERNEL);
	f.guard_regions = PM_YES;	/* a probe that saw it work outranks the version */
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_GUARD), PM_LACK_NONE);
	f = kernel(6, 15);
	f.guard_regions = PM_NO;
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_GUARD), PM_LACK_CONFIG);
	f.soft_dirty = PM_NO;
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_SOFTDIRTY), PM_LACK_CONFIG);
	f = kernel(3, 12);
	v2.layout = PM_LAYOUT_V2;
	CHECK_EQ_U64(pm_flag_lack(&f, &v2, PM_PAGE_SOFTDIRTY), PM_LACK_NONE);
	CHECK_EQ_U64(pm_flag_lack(&f, &v2, PM_PAGE_EXCLUSIVE), PM_LACK_KERNEL);
	v2.layout = PM_LAYOUT_PSHIFT;
	CHECK_EQ_U64(pm_flag_lack(&f, &v2, PM_PAGE_SOFTDIRTY), PM_LACK_LAYOUT);
	f = kernel(3, 4);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_FILE), PM_LACK_KERNEL);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_SOFTDIRTY), PM_LACK_KERNEL);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_PRESENT), PM_LACK_NONE);
	return T_PASS;
}

static int lack_frames(void)
{
	struct pm_features f = kernel(6, 1);

	CHECK_EQ_U64(pm_flag_lack(&f, &pread_hid, PM_PAGE_THP), PM_LACK_FRAMES);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_hid, PM_PAGE_NONSWAP), PM_LACK_FRAMES);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_hid, PM_PAGE_FRAME), PM_LACK_FRAMES);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_hid, PM_PAGE_PRESENT), PM_LACK_NONE);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_THP), PM_LACK_NONE);
	/* The zero page: its frame must be known, unless the probe found there is none. */
	f.zero_page = PM_YES;
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_ZERO), PM_LACK_ZERO_PFN);
	f.zero_pfn = 0x1234;
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_ZERO), PM_LACK_NONE);
	f.zero_pfn = 0;
	f.zero_page = PM_NO;
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_ZERO), PM_LACK_NONE);
	return T_PASS;
}

/* PAGEMAP_SCAN: an accepted category answers alone; other flags need entries read. */
static int lack_scan(void)
{
	struct pm_features f = kernel(6, 7);
	struct pm_read_how how = { .layout = PM_LAYOUT_CURRENT, .scan = true };

	f.scan = true;
	f.scan_categories = PM_CAT_PRESENT | PM_CAT_SWAPPED | PM_CAT_FILE | PM_CAT_PFNZERO | PM_CAT_HUGE |
			    PM_CAT_SOFT_DIRTY;
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_THP), PM_LACK_NONE);	/* no frames needed */
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_GUARD), PM_LACK_SCAN);
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_EXCLUSIVE), PM_LACK_ENTRIES);
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_UFFD_WP), PM_LACK_ENTRIES);
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_SOFTDIRTY), PM_LACK_NONE);
	f.soft_dirty = PM_NO;	/* the category is accepted without CONFIG_MEM_SOFT_DIRTY */
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_SOFTDIRTY), PM_LACK_CONFIG);
	how.entries = true;
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_EXCLUSIVE), PM_LACK_NONE);
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_UFFD_WP), PM_LACK_NONE);
	CHECK_EQ_U64(pm_flag_lack(&f, &how, PM_PAGE_NONSWAP), PM_LACK_FRAMES);
	return T_PASS;
}

/* Hostile arguments: not one known flag. */
static int lack_bad_flag(void)
{
	struct pm_features f = kernel(6, 1);
	int i;

	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, PM_PAGE_PRESENT | PM_PAGE_FILE), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, UINT32_MAX), (uint64_t)-EINVAL);
	for (i = PM_PAGE_NFLAGS; i < 32; i++)
		CHECK_EQ_U64(pm_flag_lack(&f, &pread_vis, 1u << i), (uint64_t)-EINVAL);
	return T_PASS;
}

static int flag_bytes(void)
{
	struct pm_run r = { .start = 0x1000, .end = 0x3000, .flags = PM_PAGE_PRESENT | PM_PAGE_THP | (1u << 31) };
	struct pm_flag_bytes b;
	struct pm_usage u;
	int i;

	memset(&b, 0, sizeof(b));
	memset(&u, 0, sizeof(u));
	pm_flag_bytes_add(&b, &r);
	pm_flag_bytes_add(&b, &r);
	r.flags = 0;
	pm_flag_bytes_add(&b, &r);
	for (i = 0; i < 32; i++)
		CHECK_EQ_U64(b.by_flag[i], i == 0 || i == 9 || i == 31 ? 0x4000 : 0);
	/* struct pm_usage is the same sums, field by field. */
	r.flags = (1u << 12) - 1;
	memset(&b, 0, sizeof(b));
	pm_flag_bytes_add(&b, &r);
	pm_usage_add(&u, &r);
	CHECK_EQ_U64(u.present, b.by_flag[0]);
	CHECK_EQ_U64(u.swapped, b.by_flag[1]);
	CHECK_EQ_U64(u.file, b.by_flag[2]);
	CHECK_EQ_U64(u.exclusive, b.by_flag[3]);
	CHECK_EQ_U64(u.softdirty, b.by_flag[4]);
	CHECK_EQ_U64(u.uffdwp, b.by_flag[5]);
	CHECK_EQ_U64(u.guard, b.by_flag[6]);
	CHECK_EQ_U64(u.thp, b.by_flag[9]);
	CHECK_EQ_U64(u.zero, b.by_flag[10]);
	CHECK_EQ_U64(u.present, 0x2000);
	return T_PASS;
}

/* The kernel's words: the huge zero page is in neither RSS nor THP; a MAP_HUGETLB mapping has no RSS. */
static int usage_rss(void)
{
	static const char anon_huge[] = "/anon_hugepage (deleted)", file[] = "/usr/lib/libc.so.6";
	struct pm_mapping m = { .start = 0x200000, .end = 0x800000, .path = anon_huge,
				.path_len = sizeof(anon_huge) - 1 };
	struct pm_run r = { .start = 0x200000, .end = 0x400000,
			    .flags = PM_PAGE_PRESENT | PM_PAGE_THP | PM_PAGE_ZERO | PM_PAGE_FILE };
	struct pm_flag_bytes b;
	struct pm_usage u;

	memset(&u, 0, sizeof(u));
	memset(&b, 0, sizeof(b));
	pm_usage_add(&u, &r);		/* the huge zero page */
	pm_flag_bytes_add(&b, &r);
	r = (struct pm_run){ .start = 0x400000, .end = 0x600000, .flags = PM_PAGE_PRESENT | PM_PAGE_THP };
	pm_usage_add(&u, &r);		/* a huge page of its own */
	pm_flag_bytes_add(&b, &r);
	r = (struct pm_run){ .start = 0x600000, .end = 0x603000, .flags = PM_PAGE_PRESENT };
	pm_usage_add(&u, &r);
	r = (struct pm_run){ .start = 0x603000, .end = 0x604000, .flags = PM_PAGE_PRESENT | PM_PAGE_ZERO };
	pm_usage_add(&u, &r);		/* the 4 KiB zero page */
	CHECK_EQ_U64(u.present, 0x404000);
	CHECK_EQ_U64(u.zero, 0x201000);
	CHECK_EQ_U64(u.thp, 0x200000);
	CHECK_EQ_U64(b.by_flag[__builtin_ctz(PM_PAGE_THP)], 0x200000);
	CHECK_EQ_U64(pm_usage_rss(&u, NULL), 0x203000);
	CHECK_EQ_U64(pm_usage_rss(&u, &m), 0);
	m.path = file;
	m.path_len = sizeof(file) - 1;
	CHECK_EQ_U64(pm_usage_rss(&u, &m), 0x203000);
	return T_PASS;
}

T_MAIN(T(facts_follow_table), T(sums_follow_table),
       T(kernel_at_least), T(lack_pread), T(lack_frames), T(lack_scan), T(lack_bad_flag),
       T(flag_bytes), T(usage_rss))
