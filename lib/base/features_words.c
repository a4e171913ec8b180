/*
 * features_words.c - the probe's answers in words: what each feature is, its value, and why it
 * is missing and what would enable it. The rows of `pagemap features` and of Python's
 * Features.rows, written once here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base.h"

typedef void row_fn(const struct pm_features *f, bool live, struct pm_feature_row *r);

static void say(struct pm_feature_row *r, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct pm_feature_row *r, const char *value, const char *fmt, ...)
{
	va_list ap;

	snprintf(r->value, sizeof(r->value), "%s", value);
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static const char *tri(enum pm_tristate t)
{
	return t == PM_YES ? "yes" : t == PM_NO ? "no" : "unknown";
}

static void row_kernel(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	say(r, f->kernel_release[0] ? f->kernel_release : "unknown", "%s",
	    live ? "probed by effect on the running kernel" : "replayed tree: recorded at capture");
}

static void row_page_size(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", f->page_size);
	say(r, v, "bytes per page");
}

static void row_pmd_size(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	char v[32];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)f->pmd_size);
	say(r, v, "bytes one PMD maps: the size of a PMD-mapped huge page");
}

/* What a reader without CAP_SYS_ADMIN sees, by kernel version. */
static void row_privileged(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	const char *why;

	if (f->privileged)
		why = "CAP_SYS_ADMIN in the initial user namespace";
	else if (!pm_kernel_at_least(f, 4, 0))
		why = "no CAP_SYS_ADMIN: before 4.0 PFNs are shown anyway";
	else if (!pm_kernel_at_least(f, 4, 2))
		why = "no CAP_SYS_ADMIN: Linux 4.0-4.1 refuse to open pagemap";
	else if (!pm_kernel_at_least(f, 4, 18))
		why = "no CAP_SYS_ADMIN: PFNs are hidden (4.2-4.17 still show swap slots)";
	else
		why = "no CAP_SYS_ADMIN in the initial user namespace: "
		      "PFNs and swap slots are hidden";
	say(r, f->privileged ? "yes" : "no", "%s", why);
}

static void row_pagemap(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	if (f->pagemap_error)
		say(r, "no", "opening /proc/self/pagemap failed: %s%s", pmi_strerror(f->pagemap_error),
		    f->pagemap_error == EPERM ? " (Linux 4.0-4.1 need CAP_SYS_ADMIN)" : "");
	else
		say(r, "yes", "/proc/PID/pagemap can be opened");
}

static void row_layout(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	static const char *detail[] = {
		[PM_LAYOUT_UNKNOWN] = "could not be determined",
		[PM_LAYOUT_PSHIFT] = "2.6.25-4.1: bits 55-60 hold the page shift; "
				     "only present, swap and file flags",
		[PM_LAYOUT_V2] = "3.11-4.1 after a clear_refs 4: bit 55 soft-dirty; "
				 "no exclusive bit",
		[PM_LAYOUT_CURRENT] = "4.2+: bit 55 soft-dirty, 56 exclusive, 57 uffd-wp (5.13+), "
				      "58 guard (6.15+)",
	};
	enum pm_layout l = (unsigned)f->layout < PMI_ARRAY_SIZE(detail) ? f->layout : 0;

	say(r, pm_layout_name(f->layout), "%s%s", detail[l],
	    f->layout_by_effect ? " (confirmed by reading an unmapped entry)" : "");
}

static void row_pfn(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	const char *why = "not probed";

	if (f->pfn_view == PM_PFN_VISIBLE)
		why = "physical frame numbers and swap slots are shown";
	/* Hidden from a privileged capture: only a snapshot written with --pfn drop says so. */
	else if (f->pfn_view == PM_PFN_HIDDEN && f->privileged && !f->by_effect)
		why = "PFNs hidden: the capture dropped them (snapshot --pfn drop)";
	else if (f->pfn_view == PM_PFN_HIDDEN)
		why = "PFNs hidden: the reader lacks CAP_SYS_ADMIN (Linux 4.2+ shows 0); "
		      "run as root";
	else if (f->pfn_view == PM_PFN_REFUSED)
		why = "Linux 4.0-4.1 refuse pagemap without CAP_SYS_ADMIN; run as root";
	say(r, pm_pfn_view_name(f->pfn_view), "%s", why);
}

static void row_unpriv_pfn(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	const char *why = "kernel version unknown";

	if (f->unpriv_pfn == PM_YES)
		why = "before 4.0 any user who may read a process sees its physical addresses "
		      "(rowhammer exposure)";
	else if (f->unpriv_pfn == PM_NO && f->kernel_major && pm_kernel_at_least(f, 4, 2))
		why = "4.2+ zero PFNs for readers without CAP_SYS_ADMIN: "
		      "no exposure through pagemap";
	else if (f->unpriv_pfn == PM_NO)
		why = "4.0-4.1 refuse pagemap to readers without CAP_SYS_ADMIN: no exposure";
	say(r, tri(f->unpriv_pfn), "%s", why);
}

static void row_exclusive_bit(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	bool yes = f->layout == PM_LAYOUT_CURRENT;

	say(r, yes ? "yes" : "no", "%s",
	    yes ? "bit 56: page mapped only by this process" : "needs Linux 4.2+");
}

static void row_uffd_wp_bit(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	bool yes = f->kernel_major && pm_kernel_at_least(f, 5, 13);

	say(r, !f->kernel_major ? "unknown" : yes ? "yes" : "no", "%s",
	    yes ? "bit 57: userfaultfd write-protected" : "needs Linux 5.13+");
}

static void row_guard_regions(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	say(r, tri(f->guard_regions), "%s",
	    f->guard_regions == PM_YES ? "bit 58 marks MADV_GUARD_INSTALL pages" :
	    f->guard_regions == PM_NO ? "needs Linux 6.15+ (bit 58)" :
	    "not recorded by the capture");
}

/* Whether read faults map the shared zero page (some guest kernels never do). */
static void row_zero_page(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	const char *why = f->by_effect ? "could not be probed" : "not recorded by the capture";
	char at[64] = "";

	if (f->zero_page == PM_YES)
		why = "a read fault on fresh anonymous memory maps the shared zero page";
	else if (f->zero_page == PM_NO)
		why = "read faults allocate a page of their own (the kernel forbids the zero page: "
		      "s390 KVM guests, some hypervisor guests); no page is the zero page";
	if (f->zero_pfn)
		snprintf(at, sizeof(at), " at frame %#llx", (unsigned long long)f->zero_pfn);
	say(r, tri(f->zero_page), "%s%s", why, at);
}

static void row_huge_zero_page(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	const char *why = f->by_effect ? "transparent_hugepage/use_zero_page could not be read" :
					 "not recorded by the capture";

	if (f->huge_zero_page == PM_YES)
		why = "a read fault in a THP-enabled region may map the huge zero page";
	else if (f->huge_zero_page == PM_NO)
		why = f->zero_page == PM_NO ? "no zero page on this kernel" :
					      "transparent_hugepage/use_zero_page is 0";
	say(r, tri(f->huge_zero_page), "%s", why);
}

/* The PM_CAT_* bits by name, in bit order (the kernel's PAGE_IS_* names, lower case). */
static void categories(uint64_t cats, char *buf, size_t size)
{
	static const char *names[] = { "wpallowed", "written", "file", "present", "swapped",
				       "pfnzero", "huge", "soft-dirty", "guard" };
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < PMI_ARRAY_SIZE(names) && n < size; i++)
		if (cats & (1ULL << i))
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", names[i]);
}

static void row_pagemap_scan(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	char cats[256];

	categories(f->scan_categories, cats, sizeof(cats));
	if (f->scan)
		say(r, "yes", "PAGEMAP_SCAN ioctl; categories: %s%s", cats,
		    f->by_effect ? "" : " (a replayed tree is walked with pread)");
	else
		say(r, "no", "needs Linux 6.7+; walks use batched pread");
}

static void row_uffd_wp_async(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	if (f->uffd_wp_async == PM_YES)
		say(r, "yes", "userfaultfd write-protect without fault messages (write tracking)");
	else if (f->uffd_error)
		say(r, "no", "userfaultfd: %s%s", pmi_strerror(f->uffd_error),
		    f->uffd_error != EPERM ? "" :
		    " (set vm.unprivileged_userfaultfd=1 or run with CAP_SYS_PTRACE)");
	else
		say(r, tri(f->uffd_wp_async), "%s",
		    f->uffd_wp_async == PM_NO ? "needs Linux 6.7+ (UFFD_FEATURE_WP_ASYNC)" :
		    "not probed");
}

static void row_soft_dirty(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	bool round_trip = f->by_effect && f->kernel_major && pm_kernel_at_least(f, 4, 2);
	const char *why = "not probed";

	if (f->soft_dirty == PM_YES && round_trip)
		why = "clear_refs 4 then bit 55 tracks written pages (verified by a round trip)";
	else if (f->soft_dirty == PM_YES)
		why = "clear_refs 4 then bit 55 tracks written pages";
	else if (f->soft_dirty == PM_NO && !pm_kernel_at_least(f, 3, 11))
		why = "needs Linux 3.11+";
	else if (f->soft_dirty == PM_NO)
		why = "kernel built without CONFIG_MEM_SOFT_DIRTY: "
		      "clear_refs 4 is accepted but does nothing";
	else if (f->layout == PM_LAYOUT_PSHIFT)
		why = "page-shift layout: only a clear_refs 4, which switches every reader to v2, "
		      "would tell";
	say(r, tri(f->soft_dirty), "%s", why);
}

/* A file of the physical-frame family: @what it is, and the kernel option it is missing without. */
static void kfile(struct pm_feature_row *r, const struct pm_kfile *k, const char *what,
		  const char *config)
{
	if (k->readable)
		say(r, "yes", "%s", what);
	else if (k->error == ENODATA)
		say(r, "unknown", "not in the captured tree");
	else if (k->error == ENOENT)
		say(r, "no", "missing: kernel built without %s", config);
	else
		say(r, "no", "%s%s", pmi_strerror(k->error), k->error == EACCES ? " (root only)" : "");
}

static void row_kpageflags(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	kfile(r, &f->kpageflags, "/proc/kpageflags: flags of each physical frame",
	      "CONFIG_PROC_PAGE_MONITOR");
}

static void row_kpagecount(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	kfile(r, &f->kpagecount, "/proc/kpagecount: mapcount of each frame",
	      "CONFIG_PROC_PAGE_MONITOR");
}

static void row_kpagecgroup(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	kfile(r, &f->kpagecgroup, "/proc/kpagecgroup: memory cgroup of each frame", "CONFIG_MEMCG");
}

static void row_page_idle(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	kfile(r, &f->page_idle, "/sys/kernel/mm/page_idle/bitmap", "CONFIG_IDLE_PAGE_TRACKING");
}

/* Per-page or averaged map counts of large folios (CONFIG_NO_PAGE_MAPCOUNT). */
static void row_page_mapcount(const struct pm_features *f, bool live, struct pm_feature_row *r)
{
	if (f->page_mapcount == PM_YES)
		say(r, "yes", "each page of a large folio has its own map count in kpagecount "
		    "and smaps (%s)",
		    !pm_kernel_at_least(f, 6, 15) ? "every kernel before 6.15" :
						    "CONFIG_PAGE_MAPCOUNT");
	else if (f->page_mapcount == PM_NO)
		say(r, "no", "CONFIG_NO_PAGE_MAPCOUNT: "
		    "large folios report their average map count; "
		    "USS, SHARED and PSS of processes mapping them are estimates");
	else
		say(r, "unknown", "%s",
		    !f->by_effect && f->page_mapcount_not_needed ?
			    "not probed: the snapshot holds no page of a large folio (THP, mTHP, "
			    "large page cache), so none of its counts depends on the answer" :
		    !f->by_effect ? "not recorded by the capture" :
		    f->pfn_view != PM_PFN_VISIBLE || !f->kpagecount.readable ?
			    "the probe needs frame numbers and /proc/kpagecount (run as root)" :
			    "the probe could not get a transparent huge page "
			    "(transparent_hugepage disabled or memory fragmented)");
}

/* The rows in the order `pagemap features` prints them: a new feature is a function and a line. */
static const struct {
	const char *key;
	row_fn *fill;
} rows[] = {
	{ "kernel", row_kernel },
	{ "page-size", row_page_size },
	{ "pmd-size", row_pmd_size },
	{ "privileged", row_privileged },
	{ "pagemap", row_pagemap },
	{ "layout", row_layout },
	{ "pfn", row_pfn },
	{ "unprivileged-pfn", row_unpriv_pfn },
	{ "exclusive-bit", row_exclusive_bit },
	{ "uffd-wp-bit", row_uffd_wp_bit },
	{ "guard-regions", row_guard_regions },
	{ "zero-page", row_zero_page },
	{ "huge-zero-page", row_huge_zero_page },
	{ "pagemap-scan", row_pagemap_scan },
	{ "uffd-wp-async", row_uffd_wp_async },
	{ "soft-dirty", row_soft_dirty },
	{ "kpageflags", row_kpageflags },
	{ "kpagecount", row_kpagecount },
	{ "kpagecgroup", row_kpagecgroup },
	{ "idle-page-tracking", row_page_idle },
	{ "page-mapcount", row_page_mapcount },
};

int pm_features_row(const struct pm_features *f, unsigned flags, size_t i,
		    struct pm_feature_row *row)
{
	if (!f || !row || (flags & ~PM_FEATURES_LIVE))
		return -EINVAL;
	if (i >= PMI_ARRAY_SIZE(rows))
		return 1;
	row->key = rows[i].key;
	rows[i].fill(f, flags & PM_FEATURES_LIVE, row);
	return 0;
}
