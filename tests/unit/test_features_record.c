/* test_features_record.c - the pagemap-features record: its bytes; write -> read -> write. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base.h"
#include "../harness.h"

/* Every recorded field away from its zero value, and each tristate on a different answer. */
static struct pm_features sample(void)
{
	struct pm_features f;

	memset(&f, 0, sizeof(f));
	strcpy(f.kernel_release, "6.18.44-test");
	f.page_size = 16384;
	f.privileged = true;
	f.layout = PM_LAYOUT_V2;
	f.pfn_view = PM_PFN_HIDDEN;
	f.pagemap_error = EPERM;
	f.zero_pfn = 0x3928;
	f.scan = true;
	f.scan_categories = 0x1ff;
	f.uffd_wp_async = PM_YES;
	f.uffd_features = 0x1ffff;
	f.soft_dirty = PM_UNKNOWN;
	f.guard_regions = PM_NO;
	f.page_mapcount = PM_YES;
	f.zero_page = PM_UNKNOWN;
	f.huge_zero_page = PM_NO;
	return f;
}

/* The bytes `pagemap features --export` and snapshots have always written. */
static int record_text(void)
{
	static const char want[] =
		"# pagemap-features: recorded by 'pagemap features --export'\n"
		"kernel=6.18.44-test\npage_size=16384\nprivileged=yes\nlayout=v2\npfn_view=hidden\n"
		"pagemap_error=EPERM\nzero_pfn=0x3928\nscan=yes\nscan_categories=0x1ff\n"
		"uffd_wp_async=yes\nuffd_features=0x1ffff\nsoft_dirty=unknown\nguard_regions=no\n"
		"page_mapcount=yes\nzero_page=unknown\nhuge_zero_page=no\n";
	struct pm_features f = sample();
	char buf[2048];

	CHECK_EQ_U64(pm_features_export(&f, buf, sizeof(buf)), strlen(want));
	CHECK_STR(buf, want);
	f.pagemap_error = 0;	/* no line at all */
	CHECK(pm_features_export(&f, buf, sizeof(buf)) > 0);
	CHECK(!strstr(buf, "pagemap_error"));
	f.pagemap_error = 4000;	/* no name: its number */
	CHECK(pm_features_export(&f, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\npagemap_error=4000\n") != NULL);
	CHECK_EQ_U64(pm_features_export(&f, buf, 64), -ENOSPC);
	CHECK(strlen(buf) < 64);	/* NUL-terminated within @size */
	return T_PASS;
}

/* Read @text into a struct that knew nothing; "kernel" is not read (the tree's osrelease is). */
static struct pm_features read_back(const char *text, const char *kernel)
{
	struct pm_features g;
	char copy[2048];

	memset(&g, 0, sizeof(g));
	snprintf(g.kernel_release, sizeof(g.kernel_release), "%s", kernel);
	snprintf(copy, sizeof(copy), "%s", text);
	pmi_features_record_read(&g, copy);
	return g;
}

static int same_recorded(const struct pm_features *a, const struct pm_features *b)
{
	CHECK_EQ_U64(a->page_size, b->page_size);
	CHECK_EQ_U64(a->privileged, b->privileged);
	CHECK_EQ_U64(a->layout, b->layout);
	CHECK_EQ_U64(a->pfn_view, b->pfn_view);
	CHECK_EQ_U64(a->pagemap_error, b->pagemap_error);
	CHECK_EQ_U64(a->zero_pfn, b->zero_pfn);
	CHECK_EQ_U64(a->scan, b->scan);
	CHECK_EQ_U64(a->scan_categories, b->scan_categories);
	CHECK_EQ_U64(a->uffd_wp_async, b->uffd_wp_async);
	CHECK_EQ_U64(a->uffd_features, b->uffd_features);
	CHECK_EQ_U64(a->soft_dirty, b->soft_dirty);
	CHECK_EQ_U64(a->guard_regions, b->guard_regions);
	CHECK_EQ_U64(a->page_mapcount, b->page_mapcount);
	CHECK_EQ_U64(a->page_mapcount_not_needed, b->page_mapcount_not_needed);
	CHECK_EQ_U64(a->zero_page, b->zero_page);
	CHECK_EQ_U64(a->huge_zero_page, b->huge_zero_page);
	return T_PASS;
}

/* write -> read gives every recorded field back, and -> write the same bytes. */
static int round_trip_one(const struct pm_features *f)
{
	char one[2048], two[2048];
	struct pm_features g;

	CHECK(pm_features_export(f, one, sizeof(one)) > 0);
	g = read_back(one, f->kernel_release);
	if (same_recorded(f, &g) != T_PASS)
		return T_FAIL;
	CHECK(pm_features_export(&g, two, sizeof(two)) > 0);
	CHECK_STR(two, one);
	return T_PASS;
}

static int round_trip(void)
{
	struct pm_features f = sample();
	int layout, view, t;

	CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	f.pagemap_error = 4000;
	CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	for (layout = PM_LAYOUT_UNKNOWN; layout <= PM_LAYOUT_CURRENT; layout++) {
		f.layout = (enum pm_layout)layout;
		CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	}
	for (view = PM_PFN_UNKNOWN; view <= PM_PFN_REFUSED; view++) {
		f.pfn_view = (enum pm_pfn_view)view;
		CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	}
	for (t = PM_NO; t <= PM_UNKNOWN; t++) {	/* each answer, the bools flipped */
		f.uffd_wp_async = f.soft_dirty = f.guard_regions = (enum pm_tristate)t;
		f.page_mapcount = f.zero_page = f.huge_zero_page = (enum pm_tristate)t;
		f.privileged = f.scan = t == PM_NO;
		CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	}
	memset(&f, 0, sizeof(f));
	CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	return T_PASS;
}

/* What older and hand-written records hold reads as it always did. */
static int reader_rules(void)
{
	static const char text[] =
		"# comment=yes\nno equals sign\nsoft_dirty=1\nguard_regions=0\nzero_page=maybe\n"
		"page_size=0x100001000\nlayout=bogus\npfn_view=refused\nunknown_key=1\n"
		"pagemap_error=ENOENT\nzero_pfn=12\nscan=no\nscan=yes\nkernel=9.9\n";
	struct pm_features g = read_back(text, "6.1.0");

	CHECK_EQ_U64(g.soft_dirty, PM_YES);
	CHECK_EQ_U64(g.guard_regions, PM_NO);
	CHECK_EQ_U64(g.zero_page, PM_UNKNOWN);
	CHECK_EQ_U64(g.page_size, 0);	/* 2^32 + 4096 is not 4096 */
	CHECK_EQ_U64(g.layout, PM_LAYOUT_UNKNOWN);
	CHECK_EQ_U64(g.pfn_view, PM_PFN_REFUSED);
	CHECK_EQ_U64(g.pagemap_error, ENOENT);
	CHECK_EQ_U64(g.zero_pfn, 12);
	CHECK(g.scan);	/* the last line of a key wins */
	CHECK_STR(g.kernel_release, "6.1.0");
	g = read_back("pagemap_error=13\npage_size=4096\n", "");
	CHECK_EQ_U64(g.pagemap_error, EACCES);
	CHECK_EQ_U64(g.page_size, 4096);
	return T_PASS;
}

/* The row of @key in @f's words (a replayed root's unless @live). */
static struct pm_feature_row row_of(const struct pm_features *f, bool live, const char *key)
{
	struct pm_feature_row r;
	size_t i;

	memset(&r, 0, sizeof(r));
	for (i = 0; pm_features_row(f, live ? PM_FEATURES_LIVE : 0, i, &r) == 0; i++)
		if (!strcmp(r.key, key))
			return r;
	memset(&r, 0, sizeof(r));
	return r;
}

/*
 * A snapshot that recorded no frame of a large folio did not probe page_mapcount:
 * page_mapcount=not-needed, read back as unknown with its why, said in words; an
 * answer wins over the why, and a reader older than it reads unknown (its parse
 * of any other word), never yes or no.
 */
static int mapcount_not_needed(void)
{
	struct pm_features f = sample(), g;
	struct pm_feature_row r;
	char buf[2048];

	f.page_mapcount = PM_UNKNOWN;
	f.page_mapcount_not_needed = true;
	CHECK(pm_features_export(&f, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\npage_mapcount=not-needed\n") != NULL);
	CHECK_EQ_U64(round_trip_one(&f), T_PASS);
	g = read_back(buf, "6.18.44");
	CHECK_EQ_U64(g.page_mapcount, PM_UNKNOWN);
	CHECK(g.page_mapcount_not_needed);
	r = row_of(&g, false, "page-mapcount");
	CHECK_STR(r.value, "unknown");
	CHECK(strstr(r.why, "not probed") != NULL && strstr(r.why, "large folio") != NULL);
	g.page_mapcount_not_needed = false;	/* an older snapshot's unknown keeps its words */
	r = row_of(&g, false, "page-mapcount");
	CHECK_STR(r.why, "not recorded by the capture");
	f.page_mapcount = PM_YES;	/* an answer is written as one, whatever the flag */
	CHECK(pm_features_export(&f, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\npage_mapcount=yes\n") != NULL);
	/* hostile and near spellings: unknown without a why; the last line of the key decides */
	g = read_back("page_mapcount=not-needed\npage_mapcount=no\n", "6.18");
	CHECK_EQ_U64(g.page_mapcount, PM_NO);
	CHECK(!g.page_mapcount_not_needed);
	g = read_back("page_mapcount=no\npage_mapcount=not-needed\n", "6.18");
	CHECK_EQ_U64(g.page_mapcount, PM_UNKNOWN);
	CHECK(g.page_mapcount_not_needed);
	g = read_back("page_mapcount=not-needed \npage_mapcount_not_needed=yes\n", "6.18");
	CHECK_EQ_U64(g.page_mapcount, PM_UNKNOWN);
	CHECK(!g.page_mapcount_not_needed);
	g = read_back("page_mapcount=NOT-NEEDED\n", "6.18");
	CHECK(!g.page_mapcount_not_needed);
	g = read_back("page_mapcount=not-neede\n", "6.18");
	CHECK(!g.page_mapcount_not_needed);
	/* ABI: the field sits in the tail padding of 0.11's struct (8-byte aligned: LP64), whose size it keeps */
	if (_Alignof(struct pm_features) == 8)
		CHECK_EQ_U64(sizeof(struct pm_features),
			     (offsetof(struct pm_features, huge_zero_page) + sizeof(enum pm_tristate) + 7) / 8 * 8);
	/* live answers never carry it: a live unknown says why the probe could not run */
	f.page_mapcount = PM_UNKNOWN;
	f.by_effect = true;
	f.pfn_view = PM_PFN_VISIBLE;
	r = row_of(&f, true, "page-mapcount");
	CHECK(!strstr(r.why, "not probed"));
	return T_PASS;
}

T_MAIN(T(record_text), T(round_trip), T(reader_rules), T(mapcount_not_needed))
