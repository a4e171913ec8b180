/* features.c - probe once what the kernel and this privilege level allow, by effect where possible. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "compat.h"
#include "internal.h"
#include "pme.h"


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

/* Read our own entry for @addr through @fd. */
static int self_entry(int fd, const void *addr, unsigned page_shift, uint64_t *e)
{
	ssize_t n = pmi_pread_words(fd, e, 1, (uint64_t)(uintptr_t)addr >> page_shift);
	return n == 1 ? 0 : (n < 0 ? (int)n : -EIO);
}

#define KPF_ZERO_PAGE_BIT 24

/* Does /proc/kpageflags say @pfn is the zero page? PM_UNKNOWN when it cannot be read. */
static enum pm_tristate kpf_zero(uint64_t pfn)
{
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint64_t flags;
	ssize_t n;

	if (fd < 0)
		return PM_UNKNOWN;
	n = pmi_pread_words(fd, &flags, 1, pfn);
	close(fd);
	if (n != 1)
		return PM_UNKNOWN;
	return (flags >> KPF_ZERO_PAGE_BIT) & 1 ? PM_YES : PM_NO;
}

/*
 * Does a read fault on fresh anonymous memory map the shared zero page? Not
 * on every kernel: s390 KVM guests (mm_forbids_zeropage) and some hypervisor
 * guest kernels allocate a real page instead. By effect, on two separately
 * read-faulted pages: the zero page is never exclusive (bit 56, 4.2+, map
 * count 0) and both pages carry the same frame; a real page is exclusive and
 * has a frame of its own. Where kpageflags is readable, KPF_ZERO_PAGE must
 * confirm the frame. A frame is recorded only when all of that holds: a
 * freed real page's frame is reused by the next allocation, and would then
 * flag a written page as zero.
 */
static void probe_zero_page(int fd, struct pm_features *f)
{
	size_t ps = f->page_size;
	volatile char *p = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e[2] = { 0, 0 }, pfn;

	f->zero_page = PM_UNKNOWN;
	if (p == MAP_FAILED)
		return;
	(void)p[0];
	(void)p[ps];
	if (self_entry(fd, (const void *)p, f->page_shift, &e[0]) < 0 ||
	    self_entry(fd, (const void *)(p + ps), f->page_shift, &e[1]) < 0 || !(e[0] & PME_PRESENT) || !(e[1] & PME_PRESENT))
		goto out;
	pfn = e[0] & PME_PFRAME_MASK;
	if (f->layout == PM_LAYOUT_CURRENT && ((e[0] | e[1]) & PME_MMAP_EXCLUSIVE))
		f->zero_page = PM_NO;
	else if (f->pfn_view == PM_PFN_VISIBLE)
		f->zero_page = pfn && pfn == (e[1] & PME_PFRAME_MASK) && kpf_zero(pfn) != PM_NO ? PM_YES : PM_NO;
	else if (f->layout == PM_LAYOUT_CURRENT)
		f->zero_page = PM_YES;	/* present and not exclusive: mapped by no one, the zero page */
	if (f->zero_page == PM_YES && f->pfn_view == PM_PFN_VISIBLE)
		f->zero_pfn = pfn;
out:
	munmap((void *)p, 2 * ps);
}

/*
 * The huge zero page exists where the zero page does and THP may use it
 * (transparent_hugepage/use_zero_page); the kernels that forbid the zero
 * page forbid both.
 */
static void probe_huge_zero(struct pm_ctx *ctx, struct pm_features *f)
{
	char path[4096], buf[16];

	if (f->zero_page == PM_NO) {
		f->huge_zero_page = PM_NO;
		return;
	}
	f->huge_zero_page = PM_UNKNOWN;
	if (f->zero_page != PM_YES || pmi_path(ctx, path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/use_zero_page") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) <= 0)
		return;
	f->huge_zero_page = buf[0] == '1' ? PM_YES : PM_NO;
}

/* Layout and PFN view by effect, on our own pagemap. */
static void probe_self_pagemap(struct pm_features *f)
{
	volatile char page_probe[64];
	uint64_t e0 = 0, e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		f->pagemap_error = errno;
		f->pfn_view = errno == EPERM ? PM_PFN_REFUSED : PM_PFN_UNKNOWN;
		return;
	}
	page_probe[0] = 1;	/* our stack page is present */
	/* Virtual page 0 is below mmap_min_addr: never mapped. */
	if (self_entry(fd, NULL, f->page_shift, &e0) == 0) {
		f->layout_by_effect = true;
		if (e0 == PME_PSHIFT_NOT_PRESENT(f->page_shift))
			f->layout = PM_LAYOUT_PSHIFT;
		else if (f->layout == PM_LAYOUT_PSHIFT || f->layout == PM_LAYOUT_UNKNOWN)
			f->layout = pm_kernel_at_least(f, 4, 2) ? PM_LAYOUT_CURRENT : PM_LAYOUT_V2;
	}
	if (self_entry(fd, (const void *)page_probe, f->page_shift, &e) == 0 && (e & PME_PRESENT))
		f->pfn_view = (e & PME_PFRAME_MASK) ? PM_PFN_VISIBLE : PM_PFN_HIDDEN;
	probe_zero_page(fd, f);
	close(fd);
}

static bool scan_accepts(int fd, uint64_t categories)
{
	struct pm_scan_arg a = { .size = sizeof(a), .return_mask = categories };

	return ioctl(fd, PAGEMAP_SCAN, &a) == 0;	/* unknown categories give EINVAL */
}

/*
 * The categories PAGEMAP_SCAN accepts. They were added in order (6.7: bits
 * 0-7, 6.15: bit 8), so try the known sets whole, then later bits one by one.
 */
static uint64_t probe_categories(int fd)
{
	uint64_t cats = 0;
	unsigned bit;

	if (scan_accepts(fd, 0x1ff)) {
		cats = 0x1ff;
		for (bit = 9; bit < 16 && scan_accepts(fd, 1ULL << bit); bit++)
			cats |= 1ULL << bit;
		return cats;
	}
	if (scan_accepts(fd, 0xff))
		return 0xff;
	for (bit = 0; bit < 8; bit++)
		if (scan_accepts(fd, 1ULL << bit))
			cats |= 1ULL << bit;
	return cats;
}

/* PAGEMAP_SCAN: EFAULT on a bad vec means the ioctl exists (selftests' vm_util.c). */
static void probe_scan(struct pm_features *f)
{
	struct pm_scan_arg arg = { .size = sizeof(arg) };
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	arg.start = 0;
	arg.end = (uint64_t)f->page_size;
	arg.vec = ~0ULL;
	arg.vec_len = 1;
	arg.return_mask = PAGE_IS_PRESENT;
	f->scan = ioctl(fd, PAGEMAP_SCAN, &arg) < 0 && errno == EFAULT;
	if (f->scan)
		f->scan_categories = probe_categories(fd);
	close(fd);
}

static void probe_uffd(struct pm_features *f)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)	/* UFFD_USER_MODE_ONLY is 5.11+ */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		f->uffd_error = errno;
		f->uffd_wp_async = PM_NO;
		return;
	}
	if (ioctl(fd, UFFDIO_API, &api) == 0) {
		f->uffd_features = api.features;
		f->uffd_wp_async = (api.features & UFFD_FEATURE_WP_ASYNC) ? PM_YES : PM_NO;
	} else {
		f->uffd_error = errno;
		f->uffd_wp_async = PM_NO;
	}
	close(fd);
}

/*
 * Soft-dirty round trip in a child, so the caller's own soft-dirty bits are
 * not cleared: fresh page dirty, clean after clear_refs 4, dirty after a
 * write. Only on 4.2+: on 3.11-4.1 clear_refs 4 switches every reader on the
 * system to the v2 layout.
 */
static int soft_dirty_child(unsigned page_shift)
{
	size_t ps = (size_t)1 << page_shift;
	char *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int cfd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	uint64_t e;

	if (p == MAP_FAILED || fd < 0 || cfd < 0)
		return 2;
	p[0] = 1;
	if (self_entry(fd, p, page_shift, &e) || !(e & PME_SOFT_DIRTY))
		return 1;
	if (write(cfd, "4", 1) != 1 || self_entry(fd, p, page_shift, &e) || (e & PME_SOFT_DIRTY))
		return 1;
	p[0] = 2;
	if (self_entry(fd, p, page_shift, &e) || !(e & PME_SOFT_DIRTY))
		return 1;
	return 0;
}

static void probe_soft_dirty(struct pm_features *f)
{
	size_t ps = f->page_size;
	char *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e = 0;

	f->soft_dirty = PM_UNKNOWN;
	if (p == MAP_FAILED || fd < 0)
		goto out;
	p[0] = 1;
	/*
	 * A fresh VMA carries VM_SOFTDIRTY iff CONFIG_MEM_SOFT_DIRTY. Before
	 * 3.11 there is no soft-dirty; in the page-shift layout of 3.11-4.1
	 * bit 55 is part of the page shift, and only a clear_refs 4 (which
	 * switches the whole system to v2) could tell: leave it unknown.
	 */
	if (!pm_kernel_at_least(f, 3, 11))
		f->soft_dirty = PM_NO;
	else if (f->layout == PM_LAYOUT_PSHIFT)
		goto out;
	else if (self_entry(fd, p, f->page_shift, &e) == 0)
		f->soft_dirty = (e & PME_SOFT_DIRTY) ? PM_YES : PM_NO;
out:
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		munmap(p, ps);
}

/* The round trip in a forked child, where the fresh-page check said yes (PM_PROBE_SOFT_DIRTY). */
static void probe_soft_dirty_trip(struct pm_features *f)
{
	int status;
	pid_t pid;

	if (f->soft_dirty != PM_YES || !f->kernel_major || !pm_kernel_at_least(f, 4, 2))
		return;
	pid = fork();
	if (pid == 0)
		_exit(soft_dirty_child(f->page_shift));
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		f->soft_dirty = WEXITSTATUS(status) == 0 ? PM_YES : (WEXITSTATUS(status) == 1 ? PM_NO : PM_UNKNOWN);
}

static void probe_guard(struct pm_features *f)
{
	size_t ps = f->page_size;
	char *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	f->guard_regions = madvise(p, ps, MADV_GUARD_INSTALL) == 0 ? PM_YES : PM_NO;
	munmap(p, ps);
}

/*
 * Does kpagecount give each page of a large folio its own map count? With
 * CONFIG_NO_PAGE_MAPCOUNT (6.15+) it gives the folio's average instead, and
 * smaps uses that average too. By effect: a PMD THP here, a fork child
 * unmaps its second half (the child's PMD splits into PTEs) and reads
 * kpagecount around the middle: per-page counts are 2 (mapped here and in
 * the child) then 1 (here only); an average is the same on both sides.
 * The child's exit status: 0 per-page, 1 averaged, 2 cannot tell.
 */
#define MAPCOUNT_SAMPLES 4

static int mapcount_child(char *p, uint64_t len, uint64_t head_pfn, uint64_t nr)
{
	uint64_t lo[MAPCOUNT_SAMPLES], hi[MAPCOUNT_SAMPLES];
	bool split = true, same = true;
	int fd, i;

	if (madvise(p + len / 2, len / 2, MADV_DONTNEED) < 0)
		return 2;
	fd = open("/proc/kpagecount", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pmi_pread_words(fd, lo, MAPCOUNT_SAMPLES, head_pfn + nr / 2 - MAPCOUNT_SAMPLES) != MAPCOUNT_SAMPLES ||
	    pmi_pread_words(fd, hi, MAPCOUNT_SAMPLES, head_pfn + nr / 2) != MAPCOUNT_SAMPLES)
		return 2;
	for (i = 0; i < MAPCOUNT_SAMPLES; i++) {
		split &= lo[i] == 2 && hi[i] == 1;
		same &= lo[i] == lo[0] && hi[i] == lo[0] && lo[0] >= 1;
	}
	return split ? 0 : same ? 1 : 2;
}

/* One PMD THP at a PMD-aligned @p, faulted in by one write: are its first and last pages one aligned run of frames? */
static bool thp_here(const struct pm_features *f, char *p, uint64_t nr, uint64_t *head_pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t first = 0, last = 0;
	bool ok;

	if (fd < 0)
		return false;
	p[0] = 1;
	ok = self_entry(fd, p, f->page_shift, &first) == 0 &&
	     self_entry(fd, p + (nr - 1) * f->page_size, f->page_shift, &last) == 0;
	close(fd);
	*head_pfn = first & PME_PFRAME_MASK;
	return ok && (first & PME_PRESENT) && (last & PME_PRESENT) && *head_pfn && *head_pfn % nr == 0 &&
	       (last & PME_PFRAME_MASK) == *head_pfn + nr - 1;
}

static enum pm_tristate probe_page_mapcount(struct pm_ctx *ctx, const struct pm_features *f)
{
	uint64_t len = f->pmd_size, nr = f->page_size ? len / f->page_size : 0, head_pfn;
	enum pm_tristate r = PM_UNKNOWN;
	char *raw, *p;
	int status;
	pid_t pid;

	/* Frames and kpagecount are root's; a PMD larger than 32 MiB (arm64 64K pages) is not cheap. */
	if (f->pfn_view != PM_PFN_VISIBLE || !f->kpagecount.readable || nr < 4 * MAPCOUNT_SAMPLES || len > (32u << 20))
		return PM_UNKNOWN;
	raw = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return PM_UNKNOWN;
	p = (char *)(((uintptr_t)raw + len - 1) & ~(uintptr_t)(len - 1));
	if (madvise(p, len, MADV_HUGEPAGE) == 0 && thp_here(f, p, nr, &head_pfn)) {
		pid = fork();
		if (pid == 0)
			_exit(mapcount_child(p, len, head_pfn, nr));
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) < 2)
			r = WEXITSTATUS(status) == 0 ? PM_YES : PM_NO;
		pmi_dbg(ctx, "page_mapcount probe: %s", r == PM_YES ? "per-page" : r == PM_NO ? "averaged" : "no answer");
	} else {
		pmi_dbg(ctx, "page_mapcount probe: no THP to probe with");
	}
	munmap(raw, 2 * len);
	return r;
}

static void probe_live(struct pm_features *f)
{
	f->page_size = (unsigned)sysconf(_SC_PAGESIZE);
	f->page_shift = log2u(f->page_size);
	f->privileged = probe_privileged();
	f->uffd_wp_async = f->page_mapcount = PM_UNKNOWN;	/* pm_ctx_probe() asks */
	probe_self_pagemap(f);
	probe_scan(f);
	probe_soft_dirty(f);
	probe_guard(f);
	f->by_effect = true;
}

static enum pm_tristate parse_tristate(const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "1"))
		return PM_YES;
	if (!strcmp(v, "no") || !strcmp(v, "0"))
		return PM_NO;
	return PM_UNKNOWN;
}

/*
 * A recorded errno: a number, or any name 'pagemap features --export'
 * writes (glibc's strerrorname_np), not only the few pmi_errno_from_name knows.
 */
static int recorded_errno(const char *v)
{
	int e = pmi_errno_from_name(v), i;

	for (i = 1; !e && i < 4096; i++) {
		const char *n = strerrorname_np(i);

		if (n && !strcmp(n, v))
			e = i;
	}
	return e;
}

/* One "key=value" line of a capture's pagemap-features file. */
static void apply_recorded(struct pm_features *f, const char *k, const char *v)
{
	if (!strcmp(k, "page_size")) {
		unsigned long long ps = strtoull(v, NULL, 0);
		f->page_size = ps > UINT32_MAX ? 0 : (unsigned)ps;	/* 2^32 + 4096 is not 4096 */
	}
	else if (!strcmp(k, "privileged"))
		f->privileged = parse_tristate(v) == PM_YES;
	else if (!strcmp(k, "layout"))
		f->layout = !strcmp(v, "pshift") ? PM_LAYOUT_PSHIFT : !strcmp(v, "v2") ? PM_LAYOUT_V2 :
			    !strcmp(v, "current") ? PM_LAYOUT_CURRENT : PM_LAYOUT_UNKNOWN;
	else if (!strcmp(k, "pfn_view"))
		f->pfn_view = !strcmp(v, "visible") ? PM_PFN_VISIBLE : !strcmp(v, "hidden") ? PM_PFN_HIDDEN :
			      !strcmp(v, "refused") ? PM_PFN_REFUSED : PM_PFN_UNKNOWN;
	else if (!strcmp(k, "scan"))
		f->scan = parse_tristate(v) == PM_YES;
	else if (!strcmp(k, "scan_categories"))
		f->scan_categories = strtoull(v, NULL, 0);
	else if (!strcmp(k, "uffd_wp_async"))
		f->uffd_wp_async = parse_tristate(v);
	else if (!strcmp(k, "uffd_features"))
		f->uffd_features = strtoull(v, NULL, 0);
	else if (!strcmp(k, "soft_dirty"))
		f->soft_dirty = parse_tristate(v);
	else if (!strcmp(k, "pagemap_error"))
		f->pagemap_error = recorded_errno(v);
	else if (!strcmp(k, "zero_pfn"))
		f->zero_pfn = strtoull(v, NULL, 0);
	else if (!strcmp(k, "zero_page"))
		f->zero_page = parse_tristate(v);
	else if (!strcmp(k, "huge_zero_page"))
		f->huge_zero_page = parse_tristate(v);
	else if (!strcmp(k, "guard_regions"))
		f->guard_regions = parse_tristate(v);
	else if (!strcmp(k, "page_mapcount"))
		f->page_mapcount = parse_tristate(v);
}

/* A replayed tree cannot be probed by effect: take what its capture recorded. */
static void probe_recorded(struct pm_ctx *ctx, struct pm_features *f)
{
	char path[4096], buf[4096], *line, *save = NULL;

	f->page_size = 4096;
	f->soft_dirty = f->uffd_wp_async = f->guard_regions = f->page_mapcount = PM_UNKNOWN;
	f->zero_page = f->huge_zero_page = PM_UNKNOWN;
	if (pmi_path(ctx, path, sizeof(path), "/pagemap-features") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		if (line[0] == '#' || !eq)
			continue;
		*eq = '\0';
		apply_recorded(f, line, eq + 1);
	}
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
		probe_huge_zero(ctx, f);
	/* CONFIG_NO_PAGE_MAPCOUNT came in 6.15: every older kernel counts per page. */
	if (f->page_mapcount == PM_UNKNOWN && !pm_kernel_at_least(f, 6, 15))
		f->page_mapcount = PM_YES;
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
		probe_uffd(f);
	if (todo & PM_PROBE_SOFT_DIRTY)
		probe_soft_dirty_trip(f);
	if (todo & PM_PROBE_MAPCOUNT)
		f->page_mapcount = probe_page_mapcount(ctx, f);
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
