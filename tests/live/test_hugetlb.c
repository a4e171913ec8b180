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
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "smaps.h"

#define PRIVATE_HUGE 2	/* MAP_PRIVATE | MAP_HUGETLB, written */
#define SHARED_HUGE 1	/* MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, written */
#define HELPER_ENV "PM_HUGETLB_HELPER"
#define FS_ENV "PM_HUGETLBFS_DIR"	/* hugetlb.sh's hugetlbfs mount, when it could make one */

/*
 * The hugetlb mappings whose line does not say /anon_hugepage, one huge page
 * each, shared and written: an MFD_HUGETLB memfd, a file on a hugetlbfs
 * mount, a SHM_HUGETLB segment. Each is told only by its device.
 */
enum { BY_MEMFD, BY_FS, BY_SHM, NBY };
static const char *const by_name[NBY] = { "MFD_HUGETLB memfd", "hugetlbfs file", "SHM_HUGETLB segment" };

struct report {
	int error;
	uint64_t huge;			/* bytes of one huge page */
	uint64_t priv, priv_end;	/* the private mapping */
	uint64_t shared, shared_end;	/* the shared one */
	uint64_t by[NBY];		/* where each other kind is mapped, 0 if it could not be */
	int by_error[NBY];		/* why not (errno; ENOENT: no hugetlbfs mount was given) */
};

static void *map_write(struct report *rep, int kind, void *p)
{
	size_t i;

	if (p == MAP_FAILED || !p) {
		rep->by_error[kind] = errno ? errno : EINVAL;
		return NULL;
	}
	for (i = 0; i < rep->huge; i += 4096)
		((char *)p)[i] = 1;
	rep->by[kind] = (uintptr_t)p;
	return p;
}

/* The three other kinds, each best effort: what cannot be made is said, and skipped. */
static void helper_setup_others(struct report *rep)
{
	const char *dir = getenv(FS_ENV);
	char path[4096];
	void *p;
	int fd, id;

	fd = memfd_create("pm-hugetlb", MFD_HUGETLB);
	if (fd >= 0 && ftruncate(fd, (off_t)rep->huge) == 0)
		map_write(rep, BY_MEMFD, mmap(NULL, rep->huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	else
		rep->by_error[BY_MEMFD] = errno;
	if (fd >= 0)
		close(fd);
	rep->by_error[BY_FS] = ENOENT;
	snprintf(path, sizeof(path), "%s/pm-hugetlb-file", dir ? dir : "");
	fd = dir ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (fd >= 0 && ftruncate(fd, (off_t)rep->huge) == 0) {
		rep->by_error[BY_FS] = 0;
		map_write(rep, BY_FS, mmap(NULL, rep->huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	} else if (dir) {
		rep->by_error[BY_FS] = errno;
	}
	if (fd >= 0)
		close(fd);
	id = shmget(IPC_PRIVATE, rep->huge, IPC_CREAT | SHM_HUGETLB | 0600);
	if (id < 0) {
		rep->by_error[BY_SHM] = errno;
		return;
	}
	p = shmat(id, NULL, 0);
	/* removed at once, in every path: the segment lives as long as it is attached, no longer */
	shmctl(id, IPC_RMID, NULL);
	map_write(rep, BY_SHM, p == (void *)-1 ? MAP_FAILED : p);
}

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
	helper_setup_others(rep);
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

/* Bytes of every hugetlb page the helper mapped. */
static uint64_t hugetlb_bytes(const struct report *rep)
{
	uint64_t n = PRIVATE_HUGE + SHARED_HUGE;
	int i;

	for (i = 0; i < NBY; i++)
		n += rep->by[i] != 0;
	return n * rep->huge;
}

static void check(struct pm_target *t, struct pm_kpage *k, pid_t pid, const struct report *rep)
{
	uint64_t want = hugetlb_bytes(rep);
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

/* Is @start one of the helper's hugetlb mappings: its name, or NULL. */
static const char *ours(const struct report *rep, uint64_t start)
{
	int i;

	if (start == rep->priv)
		return "MAP_HUGETLB private";
	if (start == rep->shared)
		return "MAP_HUGETLB shared";
	for (i = 0; i < NBY; i++)
		if (rep->by[i] && start == rep->by[i])
			return by_name[i];
	return NULL;
}

/*
 * `maps` per mapping (pm_mapstat, pm_usage_rss) against smaps: RSS is Rss,
 * and PRESENT less RSS and ZERO is Private_Hugetlb + Shared_Hugetlb, for
 * every kind of hugetlb mapping (@t live or replayed; @s read live).
 */
static void maps_vs_smaps(struct pm_target *t, const struct smaps *s, const struct report *rep, const char *how)
{
	struct pm_mapstat *it = pm_mapstat_open(t, 0);
	const struct pm_mapping *m;
	const struct pm_usage *u;
	int seen = 0, want = 2;
	int i;

	for (i = 0; i < NBY; i++)
		want += rep->by[i] != 0;
	CHECK(it != NULL);
	while (it && pm_mapstat_next(it, &m, &u) == 0) {
		const char *name = ours(rep, m->start);
		const struct smaps_entry *e = name ? smaps_find(s, m->start) : NULL;
		uint64_t rss = pm_usage_rss(u, m), huge = u->present - u->zero - rss;

		if (!name)
			continue;
		seen++;
		CHECK(e != NULL);
		if (!e)
			continue;
		printf("  %s %s (%02x:%02x %llu): maps RSS %llu PRESENT %llu hugetlb %llu, smaps Rss %llu Hugetlb %llu\n",
		       how, name, m->dev_major, m->dev_minor, (unsigned long long)m->inode, (unsigned long long)rss, (unsigned long long)u->present, (unsigned long long)huge,
		       (unsigned long long)e->rss, (unsigned long long)(e->private_hugetlb + e->shared_hugetlb));
		CHECK_EQ_U64(rss, e->rss);
		CHECK_EQ_U64(huge, e->private_hugetlb + e->shared_hugetlb);
		CHECK(m->hugetlb);
	}
	pm_mapstat_close(it);
	CHECK_EQ_U64(seen, want);
}

/* pm_quick_process (export, the fleet) against smaps_rollup: Rss apart from hugetlb. */
static void quick_vs_rollup(struct pm_target *t, pid_t pid, const struct report *rep, const char *how)
{
	long long v[6], w[6];
	struct pm_quick q;
	int r, tries = 0;

	do {
		read_rollup(pid, v);
		r = pm_quick_process(t, &q);
		read_rollup(pid, w);
	} while (++tries < 10 && memcmp(v, w, sizeof(v)));
	CHECK_EQ_U64(r, 0);
	printf("  %s pm_quick: rss %llu/%lld hugetlb %llu/%lld (smaps_rollup)\n", how, (unsigned long long)q.rss,
	       w[0], (unsigned long long)q.hugetlb, w[4] + w[5]);
	CHECK(near(q.rss, w[0]));
	CHECK_EQ_U64(q.hugetlb, hugetlb_bytes(rep));
	CHECK_EQ_U64(w[4] + w[5], hugetlb_bytes(rep));
}

/* A snapshot of the helper, replayed: the same figures, told by the recorded smaps, not this machine. */
static void replayed(struct pm_ctx *live, pid_t pid, const struct smaps *s, const struct report *rep)
{
	char dir[] = "/tmp/pm-hugetlb-XXXXXX", path[64], err[256];
	struct pm_snapshot_writer *w;
	struct pm_snapshot *snap = NULL;
	struct pm_ctx *ctx = NULL;
	struct pm_target *t = NULL;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/snap", dir);
	w = pm_snapshot_create(path);
	CHECK(w != NULL);
	if (w) {
		CHECK_EQ_U64(pm_snapshot_add_process(w, live, pid, 0), 0);
		CHECK_EQ_U64(pm_snapshot_add_system(w, live, 0), 0);
		CHECK_EQ_U64(pm_snapshot_commit(w), 0);
		pm_snapshot_writer_free(w);
		snap = pm_snapshot_open(path, err, sizeof(err));
	}
	CHECK(snap != NULL);
	if (snap && (ctx = pm_ctx_new_snapshot(snap)))
		t = pm_target_open(ctx, pid);
	pm_snapshot_close(snap);
	CHECK(t != NULL);
	if (t) {
		maps_vs_smaps(t, s, rep, "replayed");
		quick_vs_rollup(t, pid, rep, "replayed");
	}
	pm_target_close(t);
	pm_ctx_free(ctx);
	unlink(path);
	rmdir(dir);
}

/* Each process's hugetlb pages: apart from RSS, equal to smaps' Private_Hugetlb + Shared_Hugetlb, from both sources. */
static int hugetlb_apart(void)
{
	struct pm_ctx *ctx;
	struct pm_target *t = NULL;
	struct pm_kpage *k = NULL;
	struct report rep = { 0 };
	struct smaps s = { 0 };
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
		for (int i = 0; i < NBY; i++)
			if (!rep.by[i])
				printf("  %s not tested: %s\n", by_name[i],
				       i == BY_FS && rep.by_error[i] == ENOENT ? "no hugetlbfs mount (hugetlb.sh makes one)"
									    : strerror(rep.by_error[i]));
		CHECK(smaps_read(pid, &s) == 0);
		if (s.v) {
			const struct smaps_entry *e = smaps_find(&s, rep.priv);
			CHECK(e != NULL);
			if (e)
				CHECK_EQ_U64(e->private_hugetlb + e->shared_hugetlb, PRIVATE_HUGE * rep.huge);
			maps_vs_smaps(t, &s, &rep, "live");
			quick_vs_rollup(t, pid, &rep, "live");
			replayed(ctx, pid, &s, &rep);
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
