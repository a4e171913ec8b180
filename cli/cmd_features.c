/* cmd_features.c - `pagemap features`: what this kernel and this privilege level allow, and why not. */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_FEATURE, COL_STATUS, COL_DETAIL };

static const struct out_col columns[] = {
	[COL_FEATURE] = { "FEATURE", 0.2, 0, OUT_STR, "what is probed" },
	[COL_STATUS] = { "STATUS", 0.1, 0, OUT_STR, "yes, no, unknown, or the value" },
	[COL_DETAIL] = { "DETAIL", 0.7, 0, OUT_STR, "why, and what would enable it" },
};

static void row(struct out *out, const char *feature, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void row(struct out *out, const char *feature, const char *status, const char *fmt, ...)
{
	struct libscols_line *ln = out_line(out);
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	out_str(out, ln, COL_FEATURE, feature);
	out_str(out, ln, COL_STATUS, status);
	out_str(out, ln, COL_DETAIL, detail);
}

static const char *tri(enum pm_tristate t)
{
	return t == PM_YES ? "yes" : t == PM_NO ? "no" : "unknown";
}

static void rows_kernel(struct out *out, const struct pm_features *f, bool live)
{
	char v[32];

	row(out, "kernel", f->kernel_release[0] ? f->kernel_release : "unknown", "%s",
	    live ? "probed by effect on the running kernel" : "replayed tree: recorded at capture");
	snprintf(v, sizeof(v), "%u", f->page_size);
	row(out, "page-size", v, "bytes per page");
	snprintf(v, sizeof(v), "%llu", (unsigned long long)f->pmd_size);
	row(out, "pmd-size", v, "bytes one PMD maps: the size of a PMD-mapped huge page");
	row(out, "privileged", f->privileged ? "yes" : "no", "%s",
	    f->privileged ? "CAP_SYS_ADMIN in the initial user namespace" :
	    !pm_kernel_at_least(f, 4, 0) ? "no CAP_SYS_ADMIN: before 4.0 PFNs are shown anyway" :
	    !pm_kernel_at_least(f, 4, 2) ? "no CAP_SYS_ADMIN: Linux 4.0-4.1 refuse to open pagemap" :
	    !pm_kernel_at_least(f, 4, 18) ? "no CAP_SYS_ADMIN: PFNs are hidden (4.2-4.17 still show swap slots)" :
						    "no CAP_SYS_ADMIN in the initial user namespace: PFNs and swap slots are hidden");
}

/* Whether read faults map the shared zero page (some guest kernels never do). */
static void rows_zero(struct out *out, const struct pm_features *f)
{
	char pfn[64] = "";

	if (f->zero_pfn)
		snprintf(pfn, sizeof(pfn), " at frame %#llx", (unsigned long long)f->zero_pfn);
	row(out, "zero-page", tri(f->zero_page), "%s%s",
	    f->zero_page == PM_YES ? "a read fault on fresh anonymous memory maps the shared zero page" :
	    f->zero_page == PM_NO ? "read faults allocate a page of their own (the kernel forbids the zero page: "
				    "s390 KVM guests, some hypervisor guests); no page is the zero page" :
	    !f->by_effect ? "not recorded by the capture" : "could not be probed",
	    pfn);
	row(out, "huge-zero-page", tri(f->huge_zero_page), "%s",
	    f->huge_zero_page == PM_YES ? "a read fault in a THP-enabled region may map the huge zero page" :
	    f->huge_zero_page == PM_NO ? (f->zero_page == PM_NO ? "no zero page on this kernel" :
				    "transparent_hugepage/use_zero_page is 0") :
	    !f->by_effect ? "not recorded by the capture" : "transparent_hugepage/use_zero_page could not be read");
}

static void rows_pagemap(struct out *out, const struct pm_features *f)
{
	static const char *layout_detail[] = {
		[PM_LAYOUT_UNKNOWN] = "could not be determined",
		[PM_LAYOUT_PSHIFT] = "2.6.25-4.1: bits 55-60 hold the page shift; only present, swap and file flags",
		[PM_LAYOUT_V2] = "3.11-4.1 after a clear_refs 4: bit 55 soft-dirty; no exclusive bit",
		[PM_LAYOUT_CURRENT] = "4.2+: bit 55 soft-dirty, 56 exclusive, 57 uffd-wp (5.13+), 58 guard (6.15+)",
	};

	if (f->pagemap_error)
		row(out, "pagemap", "no", "opening /proc/self/pagemap failed: %s%s", strerror(f->pagemap_error),
		    f->pagemap_error == EPERM ? " (Linux 4.0-4.1 need CAP_SYS_ADMIN)" : "");
	else
		row(out, "pagemap", "yes", "/proc/PID/pagemap can be opened");
	row(out, "layout", pm_layout_name(f->layout), "%s%s", layout_detail[f->layout],
	    f->layout_by_effect ? " (confirmed by reading an unmapped entry)" : "");
	row(out, "pfn", pm_pfn_view_name(f->pfn_view), "%s",
	    f->pfn_view == PM_PFN_VISIBLE ? "physical frame numbers and swap slots are shown" :
	    /* Hidden from a privileged capture: only a snapshot written with --pfn drop records that. */
	    f->pfn_view == PM_PFN_HIDDEN && f->privileged && !f->by_effect ?
		    "PFNs hidden: the capture dropped them (snapshot --pfn drop)" :
	    f->pfn_view == PM_PFN_HIDDEN ? "PFNs hidden: the reader lacks CAP_SYS_ADMIN (Linux 4.2+ shows 0); run as root" :
	    f->pfn_view == PM_PFN_REFUSED ? "Linux 4.0-4.1 refuse pagemap without CAP_SYS_ADMIN; run as root" :
					   "not probed");
	row(out, "unprivileged-pfn", tri(f->unpriv_pfn), "%s",
	    f->unpriv_pfn == PM_YES ? "before 4.0 any user who may read a process sees its physical addresses (rowhammer exposure)" :
	    f->unpriv_pfn == PM_NO ? (f->kernel_major && pm_kernel_at_least(f, 4, 2) ? "4.2+ zero PFNs for readers without CAP_SYS_ADMIN: no exposure through pagemap" :
						       "4.0-4.1 refuse pagemap to readers without CAP_SYS_ADMIN: no exposure") :
				     "kernel version unknown");
	row(out, "exclusive-bit", f->layout == PM_LAYOUT_CURRENT ? "yes" : "no", "%s",
	    f->layout == PM_LAYOUT_CURRENT ? "bit 56: page mapped only by this process" : "needs Linux 4.2+");
	row(out, "uffd-wp-bit", !f->kernel_major ? "unknown" : pm_kernel_at_least(f, 5, 13) ? "yes" : "no", "%s",
	    f->kernel_major && pm_kernel_at_least(f, 5, 13) ? "bit 57: userfaultfd write-protected" : "needs Linux 5.13+");
	row(out, "guard-regions", tri(f->guard_regions), "%s",
	    f->guard_regions == PM_YES ? "bit 58 marks MADV_GUARD_INSTALL pages" :
	    f->guard_regions == PM_NO ? "needs Linux 6.15+ (bit 58)" : "not recorded by the capture");
	rows_zero(out, f);
}

/* The name of the flag PAGEMAP_SCAN category @cat gives (pm_flag_facts), or NULL. */
static const char *category_flag(uint64_t cat)
{
	const struct pm_flag_info *t = pm_flag_table(NULL);
	const struct pm_flag_fact *x;
	size_t i, n, nt;

	pm_flag_table(&nt);
	for (x = pm_flag_facts(&n), i = 0; i < n && i < nt; i++)
		if (x[i].scan_category == cat)
			return t[i].name;
	return NULL;
}

static void categories(uint64_t cats, char *buf, size_t size)
{
	/* The kernel's names of the categories up to 6.15; a later one by the flag it gives. */
	static const char *names[] = { "wpallowed", "written", "file", "present", "swapped",
				       "pfnzero", "huge", "soft-dirty", "guard" };
	size_t i, n = 0;
	const char *name;

	buf[0] = '\0';
	for (i = 0; i < 64 && n < size; i++) {
		if (!(cats & (1ULL << i)))
			continue;
		name = i < sizeof(names) / sizeof(names[0]) ? names[i] : category_flag(1ULL << i);
		if (name)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", name);
	}
}

static void rows_tracking(struct out *out, const struct pm_features *f)
{
	char cats[256];

	categories(f->scan_categories, cats, sizeof(cats));
	if (f->scan)
		row(out, "pagemap-scan", "yes", "PAGEMAP_SCAN ioctl; categories: %s%s", cats,
		    f->by_effect ? "" : " (a replayed tree is walked with pread)");
	else
		row(out, "pagemap-scan", "no", "needs Linux 6.7+; walks use batched pread");
	if (f->uffd_wp_async == PM_YES)
		row(out, "uffd-wp-async", "yes", "userfaultfd write-protect without fault messages (write tracking)");
	else if (f->uffd_error)
		row(out, "uffd-wp-async", "no", "userfaultfd: %s%s", strerror(f->uffd_error),
		    f->uffd_error == EPERM ? " (set vm.unprivileged_userfaultfd=1 or run with CAP_SYS_PTRACE)" : "");
	else
		row(out, "uffd-wp-async", tri(f->uffd_wp_async), "%s",
		    f->uffd_wp_async == PM_NO ? "needs Linux 6.7+ (UFFD_FEATURE_WP_ASYNC)" : "not probed");
	row(out, "soft-dirty", tri(f->soft_dirty), "%s",
	    f->soft_dirty == PM_YES ? (f->by_effect && f->kernel_major && pm_kernel_at_least(f, 4, 2) ?
				       "clear_refs 4 then bit 55 tracks written pages (verified by a round trip)" :
				       "clear_refs 4 then bit 55 tracks written pages") :
	    f->soft_dirty == PM_NO ? (!pm_kernel_at_least(f, 3, 11) ? "needs Linux 3.11+" :
				      "kernel built without CONFIG_MEM_SOFT_DIRTY: clear_refs 4 is accepted but does nothing") :
	    f->layout == PM_LAYOUT_PSHIFT ? "page-shift layout: only a clear_refs 4, which switches every reader to v2, would tell" :
					    "not probed");
}

static void row_kfile(struct out *out, const char *name, const struct pm_kfile *k, const char *what)
{
	if (k->readable)
		row(out, name, "yes", "%s", what);
	else if (k->error == ENODATA)
		row(out, name, "unknown", "not in the captured tree");
	else if (k->error == ENOENT)
		row(out, name, "no", "missing: kernel built without %s",
		    !strcmp(name, "idle-page-tracking") ? "CONFIG_IDLE_PAGE_TRACKING" :
		    !strcmp(name, "kpagecgroup") ? "CONFIG_MEMCG" : "CONFIG_PROC_PAGE_MONITOR");
	else
		row(out, name, "no", "%s%s", strerror(k->error), k->error == EACCES ? " (root only)" : "");
}

/* Per-page or averaged map counts of large folios (CONFIG_NO_PAGE_MAPCOUNT). */
static void row_mapcount(struct out *out, const struct pm_features *f)
{
	if (f->page_mapcount == PM_YES)
		row(out, "page-mapcount", "yes", "%s",
		    !pm_kernel_at_least(f, 6, 15) ?
			    "each page of a large folio has its own map count in kpagecount and smaps (every kernel before 6.15)" :
			    "each page of a large folio has its own map count in kpagecount and smaps (CONFIG_PAGE_MAPCOUNT)");
	else if (f->page_mapcount == PM_NO)
		row(out, "page-mapcount", "no", "CONFIG_NO_PAGE_MAPCOUNT: large folios report their average map count; "
		    "USS, SHARED and PSS of processes mapping them are estimates");
	else
		row(out, "page-mapcount", "unknown", "%s",
		    !f->by_effect ? "not recorded by the capture" :
		    f->pfn_view != PM_PFN_VISIBLE || !f->kpagecount.readable ?
			    "the probe needs frame numbers and /proc/kpagecount (run as root)" :
			    "the probe could not get a transparent huge page (transparent_hugepage disabled or memory fragmented)");
}

/* The key=value form a captured tree keeps in ROOT/pagemap-features (read back by the library). */
static int export_features(const struct pm_features *f)
{
	char buf[2048];

	if (pm_features_export(f, buf, sizeof(buf)) < 0) {
		cli_error(ENOSPC, "cannot export the features");
		return EXIT_RUNTIME;
	}
	fputs(buf, stdout);
	return EXIT_OK;
}

#define OPT_EXPORT 0x2000

int cmd_features(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "export", no_argument, NULL, OPT_EXPORT },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	bool export = false;
	const struct pm_features *f;
	struct out_opts o = { 0 };
	struct out *out;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == OPT_EXPORT) {
			export = true;
			continue;
		}
		if (c == 'h') {
			printf("Usage: pagemap features [options]\n\n"
			       "What this kernel and this privilege level allow: pagemap layout, PFN\n"
			       "visibility, PAGEMAP_SCAN, userfaultfd write-protect, soft-dirty, the\n"
			       "physical-frame files and per-page map counts of large folios; for each\n"
			       "missing thing, why and what would enable it.\n\n"
			       "Options:\n"
			       "     --export           print the probe as key=value lines, the form a captured\n"
			       "                        tree keeps in ROOT/pagemap-features\n");
			out_help(stdout, columns, sizeof(columns) / sizeof(columns[0]));
			return EXIT_OK;
		}
		return cli_bad_option(argv);
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	f = pm_ctx_probe(ctx, PM_PROBE_ALL);	/* every answer, the costlier probes too */
	if (!f) {
		cli_error(errno, "cannot probe the kernel");
		return EXIT_RUNTIME;
	}
	if (export)
		return export_features(f);
	out = out_new("features", columns, sizeof(columns) / sizeof(columns[0]), "FEATURE,STATUS,DETAIL", &o);
	if (!out)
		return EXIT_USAGE;
	rows_kernel(out, f, !strcmp(pm_ctx_root(ctx), "/"));
	rows_pagemap(out, f);
	rows_tracking(out, f);
	row_kfile(out, "kpageflags", &f->kpageflags, "/proc/kpageflags: flags of each physical frame");
	row_kfile(out, "kpagecount", &f->kpagecount, "/proc/kpagecount: mapcount of each frame");
	row_kfile(out, "kpagecgroup", &f->kpagecgroup, "/proc/kpagecgroup: memory cgroup of each frame");
	row_kfile(out, "idle-page-tracking", &f->page_idle, "/sys/kernel/mm/page_idle/bitmap");
	row_mapcount(out, f);
	r = out_print(out);
	out_free(out);
	return r ? EXIT_RUNTIME : EXIT_OK;
}
