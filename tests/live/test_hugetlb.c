/* test_hugetlb.c - hugetlb pages are accounted apart from RSS, as smaps does; tests/live/hugetlb.sh reserves the pages and restores vm.nr_hugepages. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "smaps.h"

#define PRIVATE_HUGE 2	/* MAP_PRIVATE | MAP_HUGETLB, written */
#define SHARED_HUGE 1	/* MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, written */
#define HELPER_ENV "PM_HUGETLB_HELPER"

struct report {
	int error;
	uint64_t huge;			/* bytes of one huge page */
	uint64_t priv, priv_end;	/* the private mapping */
	uint64_t shared, shared_end;	/* the shared one */
};

static uint64_t huge_page_size(void)
{
	long long kb = proc_field_kb("/proc/meminfo", "Hugepagesize");

	return kb > 0 ? (uint64_t)kb * 1024 : 0;
}

static int helper_setup(struct report *rep)
{
	size_t i, len;
	char *p;

	if (!(rep->huge = huge_page_size()))
		return ENOENT;
	len = PRIVATE_HUGE * rep->huge;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		return errno;
	for (i = 0; i < len; i += 4096)
		p[i] = (char)(i >> 12);
	rep->priv = (uintptr_t)p;
	rep->priv_end = (uintptr_t)p + len;
	len = SHARED_HUGE * rep->huge;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		return errno;
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	rep->shared = (uintptr_t)p;
	rep->shared_end = (uintptr_t)p + len;
	return 0;
}

/* The helper: the test binary re-executed (its memory its own), mapping hugetlb and waiting to die. */
__attribute__((constructor)) static void helper_entry(void)
{
	const char *v = getenv(HELPER_ENV);
	struct report rep = { 0 };
	int fd;

	if (!v || sscanf(v, "%d", &fd) != 1)
		return;
	unsetenv(HELPER_ENV);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rep.error = helper_setup(&rep);
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(1);
	close(fd);
	for (;;)
		pause();
}

static pid_t helper_start(struct report *rep)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		char env[32], *argv[] = { (char *)"pm-hugetlb-helper", NULL };
		snprintf(env, sizeof(env), "%d", p[1]);
		if (setenv(HELPER_ENV, env, 1) == 0 && fcntl(p[1], F_SETFD, 0) == 0)
			execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], rep, sizeof(*rep)) != (ssize_t)sizeof(*rep))
		rep->error = ECHILD;
	close(p[0]);
	return pid;
}

static long long rollup_of(pid_t pid, const char *field)
{
	char path[64];
	long long v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	v = proc_field_kb(path, field);
	return v < 0 ? -1 : v * 1024;
}

static bool near(uint64_t a, long long b)
{
	return b >= 0 && (a > (uint64_t)b ? a - (uint64_t)b : (uint64_t)b - a) <= 4096;	/* rollup is in kB */
}

/* smaps_rollup's Rss, Pss, Private_*, Shared_*, Private_Hugetlb, Shared_Hugetlb */
static void read_rollup(pid_t pid, long long v[6])
{
	v[0] = rollup_of(pid, "Rss");
	v[1] = rollup_of(pid, "Pss");
	v[2] = rollup_of(pid, "Private_Clean") + rollup_of(pid, "Private_Dirty");
	v[3] = rollup_of(pid, "Shared_Clean") + rollup_of(pid, "Shared_Dirty");
	v[4] = rollup_of(pid, "Private_Hugetlb");
	v[5] = rollup_of(pid, "Shared_Hugetlb");
}

static void check(struct pm_target *t, struct pm_kpage *k, pid_t pid, const struct report *rep)
{
	uint64_t want = (PRIVATE_HUGE + SHARED_HUGE) * rep->huge;
	long long v[6], w[6], rss, pss, uss, sh, hp, hs;
	struct pm_account a;
	int r, tries = 0;

	/* other processes starting or exiting change shared library pages' counts: read until the rollup holds still */
	do {
		read_rollup(pid, v);
		r = pm_account_process(t, k, &a);
		read_rollup(pid, w);
	} while (++tries < 10 && memcmp(v, w, sizeof(v)));
	rss = w[0], pss = w[1], uss = w[2], sh = w[3], hp = w[4], hs = w[5];
	CHECK_EQ_U64(r, 0);
	printf("  %s: rss %llu/%lld pss %llu/%lld uss %llu/%lld shared %llu/%lld hugetlb %llu/%lld+%lld "
	       "(pm_account/smaps_rollup)\n", pm_account_source_name(a.source), (unsigned long long)a.rss, rss,
	       (unsigned long long)a.pss, pss, (unsigned long long)a.uss, uss, (unsigned long long)a.shared, sh,
	       (unsigned long long)a.hugetlb, hp, hs);
	CHECK(near(a.rss, rss));
	CHECK(near(a.pss, pss));
	CHECK(near(a.uss, uss));
	CHECK(near(a.shared, sh));
	CHECK_EQ_U64(a.hugetlb, want);
	CHECK_EQ_U64(hp + hs, want);
	/* hugetlb is in no other figure: smaps' Rss leaves it out (and RSS matched it above) */
	CHECK(rss >= 0 && a.rss < (uint64_t)rss + want / 2);
}

/* Each process's hugetlb pages: apart from RSS, equal to smaps' Private_Hugetlb + Shared_Hugetlb, from both sources. */
static int hugetlb_apart(void)
{
	struct pm_ctx *ctx;
	struct pm_target *t = NULL;
	struct pm_kpage *k = NULL;
	struct report rep = { 0 };
	struct smaps s;
	pid_t pid;

	if (!getenv("PAGEMAP_HUGETLB_READY"))
		return t_skip("run through tests/live/hugetlb.sh, which reserves hugetlb pages and restores vm.nr_hugepages");
	if (!(ctx = pm_ctx_new(NULL)))
		return T_FAIL;
	pid = helper_start(&rep);
	CHECK(pid > 0);
	if (pid > 0 && rep.error) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pm_ctx_free(ctx);
		return t_skip("cannot map hugetlb pages: %s", strerror(rep.error));
	}
	if (pid > 0 && (t = pm_target_open(ctx, pid))) {
		k = pm_kpage_open(ctx);	/* NULL for non-root: smaps_rollup only */
		if (k && pm_kpage_status(k, PM_KPAGE_COUNT) == 0 && pm_target_pfn_view(t) == PM_PFN_VISIBLE)
			check(t, k, pid, &rep);
		else
			printf("  PFNs or /proc/kpagecount not readable: smaps_rollup source only\n");
		check(t, NULL, pid, &rep);
		if (smaps_read(pid, &s) == 0) {
			const struct smaps_entry *e = smaps_find(&s, rep.priv);
			CHECK(e != NULL);
			if (e)
				CHECK_EQ_U64(e->private_hugetlb + e->shared_hugetlb, PRIVATE_HUGE * rep.huge);
			smaps_free(&s);
		}
	}
	CHECK(t != NULL);
	pm_kpage_close(k);
	pm_target_close(t);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(hugetlb_apart))
