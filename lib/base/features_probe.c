/* features_probe.c - the by-effect probes on our own process: zero page, layout and PFN view, PAGEMAP_SCAN, uffd, soft-dirty, guard regions, page map counts. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "compat.h"
#include "features_probe.h"
#include "pme.h"

/* Read our own entry for @addr through @fd. */
static int self_entry(int fd, const void *addr, unsigned page_shift, uint64_t *e)
{
	ssize_t n = pmi_pread_words(fd, e, 1, (uint64_t)(uintptr_t)addr >> page_shift);
	return n == 1 ? 0 : (n < 0 ? (int)n : -EIO);
}

void pmi_probe_self_open(struct pmi_probe_self *s, size_t page_size)
{
	void *p = mmap(NULL, PROBE_SCRATCH_PAGES * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	s->page_size = page_size;
	s->scratch = p == MAP_FAILED ? NULL : p;
	s->fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	s->err = s->fd < 0 ? errno : 0;
}

void pmi_probe_self_close(struct pmi_probe_self *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->scratch)
		munmap(s->scratch, PROBE_SCRATCH_PAGES * s->page_size);
	s->fd = -1;
	s->scratch = NULL;
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
static void probe_zero_page(int fd, struct pm_features *f, const struct pmi_probe_self *s)
{
	size_t ps = f->page_size;
	volatile char *p = s->scratch;	/* pages 0 and 1: read, never written */
	uint64_t e[2] = { 0, 0 }, pfn;

	f->zero_page = PM_UNKNOWN;
	if (!p)
		return;
	(void)p[0];
	(void)p[ps];
	if (self_entry(fd, (const void *)p, f->page_shift, &e[0]) < 0 ||
	    self_entry(fd, (const void *)(p + ps), f->page_shift, &e[1]) < 0 || !(e[0] & PME_PRESENT) || !(e[1] & PME_PRESENT))
		return;
	pfn = e[0] & PME_PFRAME_MASK;
	if (f->layout == PM_LAYOUT_CURRENT && ((e[0] | e[1]) & PME_MMAP_EXCLUSIVE))
		f->zero_page = PM_NO;
	else if (f->pfn_view == PM_PFN_VISIBLE)
		f->zero_page = pfn && pfn == (e[1] & PME_PFRAME_MASK) && kpf_zero(pfn) != PM_NO ? PM_YES : PM_NO;
	else if (f->layout == PM_LAYOUT_CURRENT)
		f->zero_page = PM_YES;	/* present and not exclusive: mapped by no one, the zero page */
	if (f->zero_page == PM_YES && f->pfn_view == PM_PFN_VISIBLE)
		f->zero_pfn = pfn;
}

/*
 * The huge zero page exists where the zero page does and THP may use it
 * (transparent_hugepage/use_zero_page); the kernels that forbid the zero
 * page forbid both.
 */
void pmi_probe_huge_zero(struct pm_ctx *ctx, struct pm_features *f)
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
void pmi_probe_self_pagemap(struct pm_features *f, const struct pmi_probe_self *s)
{
	volatile char page_probe[64];
	uint64_t e0 = 0, e = 0;
	int fd = s->fd;

	if (fd < 0) {
		f->pagemap_error = s->err;
		f->pfn_view = s->err == EPERM ? PM_PFN_REFUSED : PM_PFN_UNKNOWN;
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
	probe_zero_page(fd, f, s);
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
void pmi_probe_scan(struct pm_features *f, const struct pmi_probe_self *s)
{
	struct pm_scan_arg arg = { .size = sizeof(arg) };
	int fd = s->fd;

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
}

void pmi_probe_uffd(struct pm_features *f)
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

void pmi_probe_soft_dirty(struct pm_features *f, const struct pmi_probe_self *s)
{
	char *p = s->scratch ? s->scratch + 2 * f->page_size : NULL;	/* page 2, written */
	int fd = s->fd;
	uint64_t e = 0;

	f->soft_dirty = PM_UNKNOWN;
	if (!p || fd < 0)
		return;
	p[0] = 1;
	/*
	 * A fresh VMA carries VM_SOFTDIRTY iff CONFIG_MEM_SOFT_DIRTY. Before
	 * 3.11 there is no soft-dirty; in the page-shift layout of 3.11-4.1
	 * bit 55 is part of the page shift, and only a clear_refs 4 (which
	 * switches the whole system to v2) could tell: leave it unknown.
	 */
	if (!pm_kernel_at_least(f, 3, 11))
		f->soft_dirty = PM_NO;
	else if (f->layout != PM_LAYOUT_PSHIFT && self_entry(fd, p, f->page_shift, &e) == 0)
		f->soft_dirty = (e & PME_SOFT_DIRTY) ? PM_YES : PM_NO;
}

/* The round trip in a forked child, where the fresh-page check said yes (PM_PROBE_SOFT_DIRTY). */
void pmi_probe_soft_dirty_trip(struct pm_features *f)
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

void pmi_probe_guard(struct pm_features *f, const struct pmi_probe_self *s)
{
	size_t ps = f->page_size;

	if (!s->scratch)
		return;
	/* Page 3: a guard region splits no VMA and goes with the scratch mapping's munmap. */
	f->guard_regions = madvise(s->scratch + 3 * ps, ps, MADV_GUARD_INSTALL) == 0 ? PM_YES : PM_NO;
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

enum pm_tristate pmi_probe_page_mapcount(struct pm_ctx *ctx, const struct pm_features *f)
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
