/* test_phys.c - live physical frames: lookup and v2p PFNs vs the walker's, kpagecount of private and fork-shared pages, anon flags, and phys totals vs a straight read. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define NPAGES 64
#define KPF(n) (1ULL << (n))

static struct pm_ctx *ctx;
static struct pm_target *self;
static struct pm_kpage *kp;
static uint64_t ps;
static char build[PATH_MAX], src[PATH_MAX];

/* Context, own target with visible frames, and kpageflags; 0, or T_SKIP with a reason. */
static int need_frames(void)
{
	if (!ctx && !(ctx = pm_ctx_new(NULL)))
		return t_skip("no context: %s", strerror(errno));
	ps = pm_ctx_features(ctx)->page_size;
	if (!self && !(self = pm_target_open(ctx, 0)))
		return t_skip("cannot open own pagemap: %s", strerror(errno));
	if (pm_target_pfn_view(self) != PM_PFN_VISIBLE)
		return t_skip("PFNs hidden from this reader (needs CAP_SYS_ADMIN)");
	if (!kp && !(kp = pm_kpage_open(ctx)))
		return t_skip("cannot open /proc/kpageflags: %s (root only)", strerror(errno));
	if (pm_kpage_status(kp, PM_KPAGE_FLAGS) < 0 || pm_kpage_status(kp, PM_KPAGE_COUNT) < 0)
		return t_skip("kpageflags or kpagecount not readable");
	return 0;
}

/* @n written private anonymous pages. */
static char *anon_pages(size_t n)
{
	char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * ps, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++)
		p[i * ps] = (char)(i + 1);
	return p;
}

/* The walker's PFN of each page of [p, p + n pages); 0 for a page with none. */
static int walk_pfns(const char *p, size_t n, uint64_t *pfn)
{
	struct pm_walk *w = pm_walk_new(self, (uintptr_t)p, (uintptr_t)p + n * ps, PM_WALK_ENTRIES | PM_WALK_EACH);
	const struct pm_run *r;
	int rc;

	memset(pfn, 0, n * sizeof(*pfn));
	if (!w)
		return -errno;
	while ((rc = pm_walk_next(w, &r)) == 0)
		if ((r->flags & PM_PAGE_FRAME) && (r->flags & PM_PAGE_PRESENT))
			pfn[(r->start - (uintptr_t)p) / ps] = r->pfn;
	pm_walk_free(w);
	return rc < 0 ? rc : 0;
}

/* Run `pagemap v2p` on ourselves; fill @pfn per address. Returns 0, or -1 if the tool is not there. */
static int cli_v2p(const char *p, size_t n, uint64_t *pfn)
{
	char cmd[8192];
	size_t len, i;
	FILE *f;

	len = (size_t)snprintf(cmd, sizeof(cmd), "%s/pagemap v2p -r -n -o PFN %d", build, (int)getpid());
	for (i = 0; i < n && len < sizeof(cmd) - 32; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " %#lx", (unsigned long)(uintptr_t)(p + i * ps + 7));
	if (access(build, X_OK) < 0 || !(f = popen(cmd, "r")))
		return -1;
	for (i = 0; i < n; i++)
		if (fscanf(f, "%" SCNx64, &pfn[i]) != 1)
			pfn[i] = UINT64_MAX;
	return pclose(f) == 0 ? 0 : -1;
}

static int lookup_matches_walker(void)
{
	uint64_t pfn[NPAGES], via_cli[NPAGES] = { 0 };
	struct pm_frame fr[NPAGES];
	char *p;
	size_t i, j;
	int r = need_frames();

	if (r)
		return r;
	p = anon_pages(NPAGES);
	CHECK(p != NULL);
	if (!p)
		return T_FAIL;
	for (j = 0; j < 3; j++) {	/* a page may migrate between reads: retry */
		CHECK_EQ_U64(walk_pfns(p, NPAGES, pfn), 0);
		for (i = 0; i < NPAGES; i++)
			fr[i].pfn = pfn[NPAGES - 1 - i];	/* any order */
		if (pm_kpage_lookup(kp, fr, NPAGES) == 0 && cli_v2p(p, NPAGES, via_cli) <= 0 &&
		    !memcmp(via_cli, pfn, sizeof(pfn)))
			break;
	}
	for (i = 0; i < NPAGES; i++) {
		const struct pm_frame *f = &fr[NPAGES - 1 - i];
		CHECK(pfn[i] != 0);
		CHECK(f->flags & KPF(PM_KPF_ANON));
		CHECK(!(f->flags & KPF(PM_KPF_ZERO_PAGE)));
		CHECK_EQ_U64(f->count, 1);
	}
	if (access(build, X_OK) == 0)
		for (i = 0; i < NPAGES; i++)
			CHECK_EQ_U64(via_cli[i], pfn[i]);
	munmap(p, NPAGES * ps);
	return T_PASS;
}

static int fork_shared_count(void)
{
	uint64_t pfn[2];
	struct pm_frame fr[2];
	int pipefd[2], status;
	pid_t child;
	char *p;
	int r = need_frames();

	if (r)
		return r;
	p = anon_pages(2);
	if (!p || pipe(pipefd) < 0)
		return T_FAIL;
	child = fork();
	if (child == 0) {
		char c;
		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1);	/* touch nothing: both pages stay shared */
		_exit(0);
	}
	close(pipefd[0]);
	p[ps] = 42;	/* page 1: copy on write, private again */
	CHECK_EQ_U64(walk_pfns(p, 2, pfn), 0);
	fr[0].pfn = pfn[0];
	fr[1].pfn = pfn[1];
	CHECK_EQ_U64(pm_kpage_lookup(kp, fr, 2), 0);
	CHECK_EQ_U64(fr[0].count, 2);
	CHECK_EQ_U64(fr[1].count, 1);
	CHECK(fr[0].flags & KPF(PM_KPF_ANON));
	close(pipefd[1]);
	waitpid(child, &status, 0);
	munmap(p, 2 * ps);
	return T_PASS;
}

/* Counts of cooked flag words over a kpageflags file, read with large preads. */
struct tally {
	uint64_t total, nopage, anon, buddy, zero;
};

static int straight_read(const char *path, struct tally *t)
{
	size_t batch = 1 << 20, i;
	uint64_t *w = malloc(batch * 8), off = 0;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	memset(t, 0, sizeof(*t));
	if (fd < 0 || !w) {
		free(w);
		return -1;
	}
	while ((n = pread(fd, w, batch * 8, (off_t)off)) > 0) {
		for (i = 0; i < (size_t)n / 8; i++) {
			uint64_t f = pm_kpf_cook(w[i], false);
			t->total++;
			t->nopage += f == KPF(PM_KPF_NOPAGE);
			t->anon += !!(f & KPF(PM_KPF_ANON));
			t->buddy += f == KPF(10);
			t->zero += !!(f & KPF(PM_KPF_ZERO_PAGE));
		}
		off += (uint64_t)n;
	}
	close(fd);
	free(w);
	return n < 0 ? -1 : 0;
}

/* `pagemap [--root ROOT] phys -r -n -o PAGES ARGS`: the sum of the PAGES column. */
static int64_t cli_pages(const char *root, const char *args)
{
	char cmd[PATH_MAX * 3];
	uint64_t v, sum = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/pagemap %s%s phys -r -n -o PAGES %s", build, root ? "--root " : "",
		 root ? root : "", args);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (fscanf(f, "%" SCNu64, &v) == 1)
		sum += v;
	return pclose(f) == 0 ? (int64_t)sum : -1;
}

/* On a replayed tree the frames stand still: every count is exact. */
static int phys_totals_fixture(void)
{
	char tree[PATH_MAX], cmd[PATH_MAX * 5], path[PATH_MAX + 32];
	struct tally t;

	if (access(build, X_OK) < 0)
		return t_skip("no %s/pagemap", build);
	snprintf(path, sizeof(path), "%s/tests/fixtures/phys-synth", src);
	if (access(path, R_OK) < 0)	/* the QEMU guests carry binaries, not the source tree */
		return t_skip("kernel-independent fixture check: needs the source tree (%s), run on the host", path);
	snprintf(tree, sizeof(tree), "%s/pm-phys-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tree))
		return T_FAIL;
	snprintf(cmd, sizeof(cmd), "PAGEMAP_BUILD=%s %s/tests/fixtures/unpack %s/tests/fixtures/phys-synth %s/t",
		 build, src, src, tree);
	CHECK(system(cmd) == 0);
	strcat(tree, "/t");
	snprintf(path, sizeof(path), "%s/proc/kpageflags", tree);
	CHECK_EQ_U64(straight_read(path, &t), 0);
	CHECK_EQ_U64(t.total, 4096);
	CHECK_EQ_U64(cli_pages(tree, ""), t.total);
	CHECK_EQ_U64(cli_pages(tree, "-b =nopage"), t.nopage);
	CHECK_EQ_U64(cli_pages(tree, "-b anon"), t.anon);
	CHECK_EQ_U64(cli_pages(tree, "-b =buddy"), t.buddy);
	CHECK_EQ_U64(cli_pages(tree, "-b z"), t.zero);
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(tree) - 2), tree);
	CHECK(system(cmd) == 0);
	return T_PASS;
}

/*
 * Live memory moves while it is read: the frame count and holes are exact,
 * the anonymous pages near. Other processes (builds, a QEMU guest faulting
 * in its RAM, other tests) can move hundreds of MiB between two readings:
 * the CLI's count is taken between two straight ones and counts only when
 * those two agree within 2%; up to 5 tries, else nothing to compare.
 */
static int phys_totals_live(void)
{
	struct tally t, u;
	int64_t total, nopage, anon = -1;
	int tries;

	if (access("/proc/kpageflags", R_OK) < 0)
		return t_skip("/proc/kpageflags not readable (root only)");
	if (access(build, X_OK) < 0)
		return t_skip("no %s/pagemap", build);
	CHECK_EQ_U64(straight_read("/proc/kpageflags", &t), 0);
	total = cli_pages(NULL, "");
	nopage = cli_pages(NULL, "-b =nopage");
	CHECK_EQ_U64(total, t.total);
	CHECK_EQ_U64(nopage, t.nopage);
	for (tries = 1; tries <= 5; tries++) {
		CHECK_EQ_U64(straight_read("/proc/kpageflags", &t), 0);
		anon = cli_pages(NULL, "-b anon");
		CHECK_EQ_U64(straight_read("/proc/kpageflags", &u), 0);
		printf("  try %d: anon %" PRIu64 " (straight) vs %" PRId64 " (phys) vs %" PRIu64 " (straight)\n", tries,
		       t.anon, anon, u.anon);
		if (llabs((int64_t)u.anon - (int64_t)t.anon) <= (int64_t)t.anon / 50 + 1024)
			break;
	}
	printf("  %" PRIu64 " frames, %" PRIu64 " holes\n", t.total, t.nopage);
	if (tries > 5)
		return t_skip("the machine's anonymous memory moved by more than 2%% between two straight readings, 5 times over: the CLI's count had nothing still to compare with");
	CHECK(anon > 0 && t.anon > 0);
	CHECK(llabs(anon - (int64_t)t.anon) <= (int64_t)t.anon / 10 + 4096);
	return T_PASS;
}

/* The build directory is two levels above this binary (BUILD/tests/live/test_phys); the source above that. */
static void find_dirs(void)
{
	char exe[PATH_MAX], *s;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int k;

	exe[n > 0 ? n : 0] = '\0';
	for (k = 0; k < 3 && (s = strrchr(exe, '/')); k++)
		*s = '\0';
	snprintf(build, sizeof(build), "%s", getenv("PAGEMAP_BUILD") ? getenv("PAGEMAP_BUILD") : exe);
	if ((s = strrchr(exe, '/')))
		*s = '\0';
	snprintf(src, sizeof(src), "%s", getenv("PAGEMAP_SRC") ? getenv("PAGEMAP_SRC") : exe);
}

static const struct t_case cases[] = {
	T(lookup_matches_walker), T(fork_shared_count), T(phys_totals_fixture), T(phys_totals_live),
};

int main(int argc, char **argv)
{
	int r;

	find_dirs();
	r = t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	pm_kpage_close(kp);
	pm_target_close(self);
	pm_ctx_free(ctx);
	return r;
}
