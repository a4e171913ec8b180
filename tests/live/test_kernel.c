/* test_kernel.c - the feature probe and soft-dirty walks against what this very kernel must give (host and QEMU guests). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <pagemap.h>
#include "harness.h"

#define NPAGES 64
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1	/* Linux 5.11 */
#endif

static unsigned kmaj, kmin;

static bool at_least(unsigned maj, unsigned min)
{
	return kmaj > maj || (kmaj == maj && kmin >= min);
}

/* An oracle apart from our probe: the selftests' softdirty_supported(), "sd" in a fresh VMA's VmFlags. */
static bool smaps_sd_flag(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[512], want[64];
	bool in = false, sd = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f || p == MAP_FAILED)
		return false;
	p[0] = 1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		if (in && !strncmp(line, "VmFlags:", 8))
			sd = strstr(line, " sd") != NULL;
	}
	fclose(f);
	munmap(p, 4096);
	return sd;
}

/* 0 if this process may create a userfaultfd (user-mode faults only, as the library asks), else the errno. */
static int userfaultfd_refused(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)	/* before 5.11 */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int test_features_match_kernel(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_ALL);
	bool sd = smaps_sd_flag();
	int uffd_err = userfaultfd_refused();

	printf("  kernel %s: scan %d cats %#llx uffd-wp-async %d soft-dirty %d (smaps sd %d) guard %d\n",
	       f->kernel_release, f->scan, (unsigned long long)f->scan_categories, f->uffd_wp_async, f->soft_dirty, sd,
	       f->guard_regions);
	CHECK_EQ_U64(f->kernel_major, kmaj);
	CHECK_EQ_U64(f->kernel_minor, kmin);
	CHECK_EQ_U64(f->layout, PM_LAYOUT_CURRENT);
	CHECK_EQ_U64(f->page_size, (unsigned)sysconf(_SC_PAGESIZE));
	/* PAGEMAP_SCAN came in 6.7 with the first eight categories; PAGE_IS_GUARD in 6.15. */
	CHECK_EQ_U64(f->scan, at_least(6, 7));
	if (at_least(6, 7))
		CHECK_EQ_U64(f->scan_categories, at_least(6, 15) ? 0x1ff : 0xff);
	/* By version only where userfaultfd(2) itself is allowed: seccomp (container defaults) may refuse it. */
	if (uffd_err)
		CHECK(f->uffd_wp_async != PM_YES);
	else
		CHECK_EQ_U64(f->uffd_wp_async == PM_YES, at_least(6, 7));
	CHECK_EQ_U64(f->guard_regions == PM_YES, at_least(6, 15));
	CHECK_EQ_U64(f->soft_dirty == PM_YES, sd);
	CHECK_EQ_U64(f->unpriv_pfn, PM_NO);
	if (geteuid() == 0)
		CHECK_EQ_U64(f->pfn_view, PM_PFN_VISIBLE);
	pm_ctx_free(ctx);
	if (uffd_err)
		return t_skip("userfaultfd(2) fails here with %s (a seccomp filter, or vm.unprivileged_userfaultfd): uffd-wp async not checked against Linux %u.%u, the rest was",
			      strerror(uffd_err), kmaj, kmin);
	return T_PASS;
}

static int test_backend_choice(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_target *t = pm_target_open(ctx, 0);
	struct pm_walk *w = t ? pm_walk_new(t, 0, UINT64_MAX, 0) : NULL;

	CHECK(w != NULL);
	if (w)	/* before 6.7 the walker must take its pread path */
		CHECK_EQ_U64(pm_walk_backend(w), at_least(6, 7) ? PM_BACKEND_SCAN : PM_BACKEND_PREAD);
	pm_walk_free(w);
	CHECK_EQ_U64(pm_ctx_set_backend(ctx, PM_BACKEND_SCAN), 0);
	w = t ? pm_walk_new(t, 0, UINT64_MAX, 0) : NULL;
	CHECK_EQ_U64(w != NULL, at_least(6, 7));
	if (!w)
		CHECK_EQ_U64(errno, EOPNOTSUPP);
	pm_walk_free(w);
	pm_target_close(t);
	pm_ctx_free(ctx);
	return T_PASS;
}

static int clear_soft_dirty(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, "4", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Soft-dirty pages of [p, p + NPAGES) through back end @b, as a bitmap. */
static uint64_t soft_dirty_map(struct pm_ctx *ctx, enum pm_backend b, char *p, size_t ps)
{
	struct pm_target *t;
	struct pm_walk *w;
	const struct pm_run *r;
	uint64_t map = 0, a;

	pm_ctx_set_backend(ctx, b);
	t = pm_target_open(ctx, 0);
	w = t ? pm_walk_new(t, (uintptr_t)p, (uintptr_t)p + NPAGES * ps, 0) : NULL;
	CHECK(w != NULL);
	while (w && pm_walk_next(w, &r) == 0) {
		CHECK(pm_walk_known(w) & PM_PAGE_SOFTDIRTY);
		if (r->flags & PM_PAGE_SOFTDIRTY)
			for (a = r->start; a < r->end; a += ps)
				map |= 1ULL << ((a - (uintptr_t)p) / ps);
	}
	pm_walk_free(w);
	pm_target_close(t);
	return map;
}

static int test_soft_dirty_exact(void)
{
	struct pm_ctx *ctx;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), i;
	uint64_t written = 0x8000000100000001ULL, seed = 0x9e3779b97f4a7c15ULL;
	char *p;
	int round;

	if (!smaps_sd_flag())
		return t_skip("kernel without CONFIG_MEM_SOFT_DIRTY (no \"sd\" in VmFlags)");
	ctx = pm_ctx_new(NULL);
	p = mmap(NULL, NPAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	madvise(p, NPAGES * ps, MADV_NOHUGEPAGE);
	memset(p, 1, NPAGES * ps);
	for (round = 0; round < 4; round++) {
		CHECK_EQ_U64(clear_soft_dirty(), 0);
		CHECK_EQ_U64(soft_dirty_map(ctx, PM_BACKEND_PREAD, p, ps), 0);
		for (i = 0; i < NPAGES; i++)
			if (written & (1ULL << i))
				p[i * ps]++;
		/* Exactly the written pages, through every back end this kernel has. */
		CHECK_EQ_U64(soft_dirty_map(ctx, PM_BACKEND_PREAD, p, ps), written);
		if (at_least(6, 7))
			CHECK_EQ_U64(soft_dirty_map(ctx, PM_BACKEND_SCAN, p, ps), written);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		written = seed ^ (seed >> 29);
	}
	munmap(p, NPAGES * ps);
	pm_ctx_free(ctx);
	return T_PASS;
}

static unsigned forks;	/* fork() calls in this process (pthread_atfork) */

static void count_fork(void)
{
	forks++;
}

/*
 * A debugger or a GC that embeds the library pays no fork, no huge page and
 * no userfaultfd for opening a context and walking: the costlier probes run
 * only when asked for (pm_ctx_probe), or by a call that needs them.
 */
static int test_cheap_probe(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	const struct pm_features *f = pm_ctx_features(ctx);
	struct pm_target *t = f ? pm_target_open(ctx, getpid()) : NULL;
	struct pm_walk *w = t ? pm_walk_new(t, 0, UINT64_MAX, 0) : NULL;
	const struct pm_run *r;
	unsigned before;

	CHECK(w != NULL);
	while (w && pm_walk_next(w, &r) == 0)
		;
	printf("  forks by features + open + walk: %u\n", forks);
	CHECK_EQ_U64(forks, 0);
	CHECK_EQ_U64(f->uffd_wp_async, PM_UNKNOWN);	/* no userfaultfd made yet */
	before = forks;
	f = pm_ctx_probe(ctx, PM_PROBE_ALL);
	printf("  forks by pm_ctx_probe(ALL): %u; uffd_wp_async %d\n", forks - before, f->uffd_wp_async);
	CHECK(f->uffd_wp_async != PM_UNKNOWN);
	before = forks;
	pm_ctx_probe(ctx, PM_PROBE_ALL);
	CHECK_EQ_U64(forks, before);	/* once per context */
	pm_walk_free(w);
	pm_target_close(t);
	pm_ctx_free(ctx);
	return T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = { T(test_cheap_probe), T(test_features_match_kernel), T(test_backend_choice),
					       T(test_soft_dirty_exact) };
	struct utsname u;

	pthread_atfork(count_fork, NULL, NULL);
	uname(&u);
	if (sscanf(u.release, "%u.%u", &kmaj, &kmin) != 2)
		return 1;
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
