/* features.c - probe once what the kernel and this privilege level allow: version, layout and file facts, replayed captures (by-effect probes: features_probe.c; the record: features_record.c). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "compat.h"
#include "base.h"
#include "features_probe.h"


const char *pm_layout_name(enum pm_layout layout)
{
	switch (layout) {
	case PM_LAYOUT_PSHIFT:
		return "pshift";
	case PM_LAYOUT_V2:
		return "v2";
	case PM_LAYOUT_CURRENT:
		return "current";
	case PM_LAYOUT_UNKNOWN:
	default:
		return "unknown";
	}
}

const char *pm_pfn_view_name(enum pm_pfn_view view)
{
	switch (view) {
	case PM_PFN_VISIBLE:
		return "visible";
	case PM_PFN_HIDDEN:
		return "hidden";
	case PM_PFN_REFUSED:
		return "refused";
	case PM_PFN_UNKNOWN:
	default:
		return "unknown";
	}
}

bool pm_kernel_at_least(const struct pm_features *f, unsigned major, unsigned minor)
{
	return !f->kernel_major || f->kernel_major > major || (f->kernel_major == major && f->kernel_minor >= minor);
}

static void probe_release(struct pm_ctx *ctx, struct pm_features *f)
{
	char path[4096], buf[128];
	size_t n;

	if (pmi_path(ctx, path, sizeof(path), "/proc/sys/kernel/osrelease") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) <= 0)
		return;
	n = strcspn(buf, "\n");
	if (n >= sizeof(f->kernel_release))
		n = sizeof(f->kernel_release) - 1;
	memcpy(f->kernel_release, buf, n);
	f->kernel_release[n] = '\0';
	if (sscanf(buf, "%u.%u.%u", &f->kernel_major, &f->kernel_minor, &f->kernel_patch) < 2)
		f->kernel_major = f->kernel_minor = f->kernel_patch = 0;
}

static unsigned log2u(uint64_t v)
{
	unsigned s = 0;
	while (v > 1) {
		v >>= 1;
		s++;
	}
	return s;
}

static void probe_kfile(struct pm_ctx *ctx, const char *name, struct pm_kfile *k)
{
	char path[4096];
	int fd;

	if (pmi_path(ctx, path, sizeof(path), "%s", name) < 0) {
		k->error = ENAMETOOLONG;
		return;
	}
	fd = pmi_open(ctx, path, O_RDONLY);
	k->readable = fd >= 0;
	k->error = fd >= 0 ? 0 : -fd;
	if (fd >= 0)
		close(fd);
}

static uint64_t read_u64_file(struct pm_ctx *ctx, const char *name)
{
	char path[4096], buf[64];

	if (pmi_path(ctx, path, sizeof(path), "%s", name) < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* CAP_SYS_ADMIN in the effective set, and the initial user namespace. */
static bool probe_privileged(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	char buf[128];
	FILE *f;
	bool init_ns = false;

	if (syscall(SYS_capget, &hdr, data) < 0 || !(data[0].effective & (1u << CAP_SYS_ADMIN)))
		return false;
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		unsigned long a, b, c;
		init_ns = sscanf(buf, "%lu %lu %lu", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295UL;
	}
	fclose(f);
	return init_ns;
}

static void probe_live(struct pm_features *f)
{
	struct pmi_probe_self s;

	f->page_size = (unsigned)sysconf(_SC_PAGESIZE);
	f->page_shift = log2u(f->page_size);
	f->privileged = probe_privileged();
	f->uffd_wp_async = f->page_mapcount = PM_UNKNOWN;	/* pm_ctx_probe() asks */
	pmi_probe_self_open(&s, f->page_size);
	pmi_probe_self_pagemap(f, &s);
	pmi_probe_scan(f, &s);
	pmi_probe_soft_dirty(f, &s);
	pmi_probe_guard(f, &s);
	pmi_probe_self_close(&s);
	f->by_effect = true;
}

/* A replayed tree cannot be probed by effect: take what its capture recorded. */
static void probe_recorded(struct pm_ctx *ctx, struct pm_features *f)
{
	char path[4096], buf[4096];

	f->page_size = 4096;
	f->soft_dirty = f->uffd_wp_async = f->guard_regions = f->page_mapcount = PM_UNKNOWN;
	f->zero_page = f->huge_zero_page = PM_UNKNOWN;
	if (pmi_path(ctx, path, sizeof(path), "/pagemap-features") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) < 0)
		return;
	pmi_features_record_read(f, buf);
	/* Sizes from a tree size reads and allocations: powers of two, 4 KiB to 1 MiB (hexagon's 256 KiB, with room). */
	if (f->page_size < 4096 || f->page_size > (1u << 20) || (f->page_size & (f->page_size - 1))) {
		pmi_tree_error(ctx, "%s: page_size=%u is out of range: a page is a power of two from 4096 to 1048576 bytes",
			      path, f->page_size);
		ctx->features_bad = true;
		f->page_size = 4096;
	}
	/* Captures older than the zero-page probe recorded a frame only when there was one. */
	if (f->zero_page == PM_UNKNOWN && f->zero_pfn)
		f->zero_page = PM_YES;
	if (f->zero_page != PM_YES)
		f->zero_pfn = 0;
}

/*
 * Bytes one PMD maps: what the kernel says (4.10+), else a page of 8-byte
 * entries. It sizes reads and an allocation, so a value from a replayed tree
 * must be a power of two above the page size, at most a page of entries
 * (fewer on ppc64 hash: 256) and at most 1 GiB.
 */
static uint64_t pmd_size(struct pm_ctx *ctx, const struct pm_features *f)
{
	static const char file[] = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";
	uint64_t ps = f->page_size, fallback = ps / 8 * ps, v = read_u64_file(ctx, file);

	if (fallback > (1ULL << 30))
		fallback = 1ULL << 30;
	if (!v)
		return fallback;
	if (v <= ps || v > ps / 8 * ps || v > (1ULL << 30) || (v & (v - 1))) {
		pmi_tree_error(ctx, "%s%s: %llu is out of range: a PMD maps a power of two from %llu to %llu bytes",
			      ctx->live ? "" : ctx->root,
			      file, (unsigned long long)v, (unsigned long long)ps * 2,
			      (unsigned long long)(ps / 8 * ps < (1ULL << 30) ? ps / 8 * ps : 1ULL << 30));
		ctx->features_bad = !ctx->live;
		return fallback;
	}
	return v;
}

/* Can an unprivileged user see physical addresses here (the rowhammer exposure)? */
static enum pm_tristate unpriv_pfn(const struct pm_features *f)
{
	if (!f->kernel_major)
		return PM_UNKNOWN;
	if (!pm_kernel_at_least(f, 4, 0))
		return PM_YES;	/* before 4.0 anyone who may ptrace-read the task sees PFNs */
	return PM_NO;		/* 4.0-4.1 refuse the open; 4.2+ zero the PFNs */
}

static void default_layout(struct pm_features *f)
{
	if (f->layout != PM_LAYOUT_UNKNOWN || !f->kernel_major)
		return;
	if (pm_kernel_at_least(f, 4, 2))
		f->layout = PM_LAYOUT_CURRENT;
	else
		f->layout = PM_LAYOUT_PSHIFT;	/* 3.11-4.1 turn v2 after a clear_refs 4: targets re-check */
}

const struct pm_features *pm_ctx_features(struct pm_ctx *ctx)
{
	struct pm_features *f = &ctx->features;

	if (ctx->probed)
		return f;
	memset(f, 0, sizeof(*f));
	probe_release(ctx, f);
	if (ctx->live)
		probe_live(f);
	else
		probe_recorded(ctx, f);
	f->page_shift = log2u(f->page_size);
	default_layout(f);
	if (ctx->live && f->layout == PM_LAYOUT_UNKNOWN)
		f->layout = PM_LAYOUT_CURRENT;
	f->pmd_size = pmd_size(ctx, f);
	f->unpriv_pfn = unpriv_pfn(f);
	probe_kfile(ctx, "/proc/kpageflags", &f->kpageflags);
	probe_kfile(ctx, "/proc/kpagecount", &f->kpagecount);
	probe_kfile(ctx, "/proc/kpagecgroup", &f->kpagecgroup);
	probe_kfile(ctx, "/sys/kernel/mm/page_idle/bitmap", &f->page_idle);
	if (ctx->live)
		pmi_probe_huge_zero(ctx, f);
	/* CONFIG_NO_PAGE_MAPCOUNT came in 6.15: every older kernel counts per page. */
	if (f->page_mapcount == PM_UNKNOWN && !pm_kernel_at_least(f, 6, 15))
		f->page_mapcount = PM_YES;
	f->page_mapcount_not_needed &= f->page_mapcount == PM_UNKNOWN;	/* a why only for what is unknown */
	/* A replayed tree has nothing more to probe; a live one does it when asked (pm_ctx_probe). */
	ctx->probes_done = ctx->live ? 0 : PM_PROBE_ALL;
	if (f->page_mapcount != PM_UNKNOWN)
		ctx->probes_done |= PM_PROBE_MAPCOUNT;
	ctx->probed = true;
	pmi_dbg(ctx, "features: kernel %s layout %s pfn %s scan %d cats %#llx sd %d page_mapcount %d",
	       f->kernel_release, pm_layout_name(f->layout), pm_pfn_view_name(f->pfn_view), f->scan,
	       (unsigned long long)f->scan_categories, f->soft_dirty, f->page_mapcount);
	return f;
}

const struct pm_features *pm_ctx_probe(struct pm_ctx *ctx, unsigned what)
{
	struct pm_features *f = (struct pm_features *)pm_ctx_features(ctx);
	unsigned todo;

	if (!f)
		return NULL;
	todo = what & PM_PROBE_ALL & ~ctx->probes_done;
	if (todo & PM_PROBE_UFFD)
		pmi_probe_uffd(f);
	if (todo & PM_PROBE_SOFT_DIRTY)
		pmi_probe_soft_dirty_trip(f);
	if (todo & PM_PROBE_MAPCOUNT)
		f->page_mapcount = pmi_probe_page_mapcount(ctx, f);
	ctx->probes_done |= todo;
	return f;
}

bool pmi_swap_active(struct pm_ctx *ctx)
{
	char path[4096], buf[512];

	if (ctx->swap_active < 0) {
		ctx->swap_active = 0;
		if (pmi_path(ctx, path, sizeof(path), "/proc/swaps") == 0 &&
		    pmi_read_small_file(ctx, path, buf, sizeof(buf)) > 0) {
			char *nl = strchr(buf, '\n');	/* a header line, then one line per area */
			ctx->swap_active = nl && nl[1] != '\0';
		}
	}
	return ctx->swap_active;
}
