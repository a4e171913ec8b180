/* test_fleet.c - the exporter's pure parts: frame classes, the cheap tier's run sums, groups and their cap,
 * the metrics writer's escaping and negotiation, the rules parser with hostile input. */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../harness.h"
#include "pages.h"
/* The CLI's writer and rules parser are compiled in: they are pure, and unit tests link no CLI objects. */
#include "../../cli/base/textsafe.c"
#include "../../cli/export/metrics.c"
#include "../../cli/export/export_fleet.c"

#define B(n) (1ULL << (n))

static int classes(void)
{
	CHECK(pm_class_of(B(PM_KPF_NOPAGE)) == PM_CLASS_COUNT);
	CHECK(pm_class_of(B(23)) == PM_CLASS_COUNT);			/* offline */
	CHECK(pm_class_of(B(10)) == PM_CLASS_BUDDY);
	CHECK(pm_class_of(B(7) | B(5)) == PM_CLASS_SLAB);
	CHECK(pm_class_of(B(26)) == PM_CLASS_PAGETABLE);
	CHECK(pm_class_of(B(PM_KPF_ZERO_PAGE) | B(PM_KPF_ANON)) == PM_CLASS_ZERO);
	CHECK(pm_class_of(B(PM_KPF_HUGE) | B(PM_KPF_COMPOUND_HEAD)) == PM_CLASS_HUGETLB);
	CHECK(pm_class_of(B(21) | B(PM_KPF_ANON)) == PM_CLASS_KSM);
	CHECK(pm_class_of(B(PM_KPF_ANON) | B(PM_KPF_THP) | B(5)) == PM_CLASS_ANON_THP);
	CHECK(pm_class_of(B(PM_KPF_ANON) | B(14) | B(5)) == PM_CLASS_ANON);
	CHECK(pm_class_of(B(14) | B(5)) == PM_CLASS_SHMEM);
	CHECK(pm_class_of(B(5) | B(3)) == PM_CLASS_FILE);
	CHECK(pm_class_of(0) == PM_CLASS_OTHER);
	CHECK_STR(pm_class_name(PM_CLASS_ANON_THP), "anon_thp");
	CHECK_STR(pm_class_name(PM_CLASS_COUNT), "unknown");
	return T_PASS;
}

/* A replayed root holding only proc/meminfo with MemFree @kb (or none when @kb is NULL). */
static struct pm_ctx *meminfo_root(char *root, const char *kb)
{
	char path[128];
	FILE *f;

	if (!mkdtemp(root))
		return NULL;
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/meminfo", root);
	if (kb && (f = fopen(path, "w"))) {
		fprintf(f, "MemTotal:       16777216 kB\nMemFree:        %s kB\n"
			"MemAvailable:   9 kB\n", kb);
		fclose(f);
	}
	return pm_ctx_new(root);
}

static void meminfo_root_free(struct pm_ctx *ctx, const char *root)
{
	char path[128];

	pm_ctx_free(ctx);
	snprintf(path, sizeof(path), "%s/proc/meminfo", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
}

/*
 * Free memory is MemFree, apart from buddy and other: a kernel before 4.10, which flags only a
 * free block's first page, left the rest in other (16 GiB of "other" on an idle machine); one
 * that flags every page had it all in buddy. Neither keeps it in other now; other stays >= 0.
 */
static int classes_free(void)
{
	const uint64_t GiB = 1ULL << 30, MiB = 1ULL << 20;
	char root[] = "/tmp/pm-fleet-free.XXXXXX";
	struct pm_ctx *ctx = meminfo_root(root, "15728640");	/* 15 GiB */
	struct pm_classes c, before;
	uint64_t free_bytes = 0;
	struct mw w;

	if (!ctx)
		return t_skip("cannot make a tree in /tmp: %s", strerror(errno));
	memset(&c, 0, sizeof(c));
	c.bytes[PM_CLASS_BUDDY] = 8 * MiB;	/* heads only: the rest of 15 GiB in other */
	c.bytes[PM_CLASS_OTHER] = 16 * GiB;
	c.bytes[PM_CLASS_FILE] = GiB;
	CHECK_EQ_U64(pm_classes_free(ctx, &c, &free_bytes), 0);
	CHECK_EQ_U64(free_bytes, 15 * GiB);
	CHECK_EQ_U64(c.bytes[PM_CLASS_BUDDY], 0);
	CHECK_EQ_U64(c.bytes[PM_CLASS_OTHER], GiB + 8 * MiB);
	CHECK_EQ_U64(c.bytes[PM_CLASS_FILE], GiB);
	memset(&c, 0, sizeof(c));
	/* Every page flagged, and a little freed meanwhile. */
	c.bytes[PM_CLASS_BUDDY] = 15 * GiB + 4 * MiB;
	c.bytes[PM_CLASS_OTHER] = GiB;
	CHECK_EQ_U64(pm_classes_free(ctx, &c, &free_bytes), 0);
	CHECK_EQ_U64(c.bytes[PM_CLASS_OTHER], GiB);
	memset(&c, 0, sizeof(c));
	c.bytes[PM_CLASS_OTHER] = 2 * GiB;	/* allocated meanwhile: other gives what it holds */
	CHECK_EQ_U64(pm_classes_free(ctx, &c, &free_bytes), 0);
	CHECK_EQ_U64(c.bytes[PM_CLASS_OTHER], 0);
	/* The exporter writes it as class "free", where "buddy" was. */
	{
		struct fleet_exact ex = { .have_classes = true, .have_free = true,
					  .free_bytes = 15 * GiB };

		ex.classes = c;
		mw_init(&w, MW_PROMETHEUS);
		write_classes(&w, &ex);
		mw_finish(&w);
		CHECK(strstr(w.buf, "pagemap_physical_bytes{class=\"free\"} 16106127360\n"));
		CHECK(strstr(w.buf, "class=\"buddy\"") == NULL);
		CHECK(strstr(w.buf, "pagemap_physical_bytes{class=\"other\"} 0\n") != NULL);
		mw_free(&w);
	}
	meminfo_root_free(ctx, root);
	/* No MemFree: an error, the classes as they were. */
	strcpy(root, "/tmp/pm-fleet-free.XXXXXX");
	if (!(ctx = meminfo_root(root, NULL)))
		return t_skip("cannot make a tree in /tmp: %s", strerror(errno));
	memset(&c, 0, sizeof(c));
	c.bytes[PM_CLASS_BUDDY] = MiB;
	c.bytes[PM_CLASS_OTHER] = GiB;
	before = c;
	CHECK(pm_classes_free(ctx, &c, &free_bytes) < 0);
	CHECK(!memcmp(&c, &before, sizeof(c)));
	meminfo_root_free(ctx, root);
	return T_PASS;
}

static struct pm_mapping map_of(const char *path, uint32_t prot)
{
	struct pm_mapping m = { 0 };

	m.path = path;
	m.path_len = strlen(path);
	m.prot = prot;
	return m;
}

static int quick_sums(void)
{
	struct pm_mapping anon = map_of("", 0), lib = map_of("/usr/lib/libc.so.6", 0),
			  shm = map_of("/dev/zero (deleted)", PM_MAP_SHARED), memfd = map_of("/memfd:x (deleted)", PM_MAP_SHARED),
			  huge = map_of("/anon_hugepage (deleted)", PM_MAP_SHARED);
	struct pm_run r = { 0, 8192, PM_PAGE_PRESENT | PM_PAGE_EXCLUSIVE, 0, 0, 0, &anon };
	struct pm_quick q = { 0 };

	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096, PM_PAGE_PRESENT | PM_PAGE_FILE, 0, 0, 0, &lib };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096 * 3, PM_PAGE_PRESENT | PM_PAGE_FILE | PM_PAGE_EXCLUSIVE, 0, 0, 0, &shm };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096, PM_PAGE_PRESENT | PM_PAGE_FILE, 0, 0, 0, &memfd };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 2 << 20, PM_PAGE_PRESENT | PM_PAGE_THP, 0, 0, 0, &huge };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 2 << 20, PM_PAGE_PRESENT | PM_PAGE_THP | PM_PAGE_EXCLUSIVE, 0, 0, 0, &anon };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096 * 5, PM_PAGE_SWAPPED, 0, 0, 0, &anon };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096 * 7, PM_PAGE_PRESENT | PM_PAGE_ZERO, 0, 0, 0, &anon };
	pm_quick_add(&q, &r);
	r = (struct pm_run){ 0, 4096 * 9, 0, 0, 0, 0, NULL };	/* not present, no mapping */
	pm_quick_add(&q, &r);
	CHECK_EQ_U64(q.anon, 8192 + (2 << 20));
	CHECK_EQ_U64(q.file, 4096);
	CHECK_EQ_U64(q.shmem, 4096 * 4);
	CHECK_EQ_U64(q.rss, q.anon + q.file + q.shmem);
	CHECK_EQ_U64(q.uss, 8192 + 4096 * 3 + (2 << 20));
	CHECK_EQ_U64(q.thp, 2 << 20);
	CHECK_EQ_U64(q.hugetlb, 2 << 20);
	CHECK_EQ_U64(q.swap, 4096 * 5);
	return T_PASS;
}

static int groups_cap(void)
{
	struct pm_groups *g = pm_groups_new();
	struct pm_account a = { .pss = 100, .shared = 7, .estimate = true, .source = PM_ACCOUNT_PAGEMAP };
	struct pm_quick q = { 0 };
	size_t folded = 0, i;
	char key[16];

	CHECK(g != NULL);
	for (i = 0; i < 10; i++) {	/* groups g0..g9 of i pages, g5 twice */
		q.rss = i * 4096;
		snprintf(key, sizeof(key), "g%zu", i);
		CHECK(pm_groups_add(g, key, &q) == 0);
	}
	q.rss = 4096;
	CHECK(pm_groups_add(g, "g5", &q) == 0);
	CHECK(pm_groups_add(g, "other", &q) == 0);	/* a real group named like the fold: folded too */
	CHECK(pm_groups_add_exact(g, "g1", &a) == 0);
	CHECK_EQ_U64(pm_groups_count(g), 11);
	CHECK(pm_groups_cap(g, 0, "other", &folded) == -EINVAL);
	CHECK(pm_groups_cap(g, 4, "other", &folded) == 0);
	CHECK_EQ_U64(pm_groups_count(g), 4);
	CHECK_EQ_U64(folded, 8);
	CHECK_STR(pm_groups_at(g, 0)->key, "g9");
	CHECK_STR(pm_groups_at(g, 1)->key, "g8");
	CHECK_STR(pm_groups_at(g, 2)->key, "g7");
	CHECK_STR(pm_groups_at(g, 3)->key, "other");
	CHECK_EQ_U64(pm_groups_at(g, 2)->procs, 1);
	/* other: g0..g6 (0+1+2+3+4+5+6 pages, g5 once more 1 page) and the old "other" (1 page) */
	CHECK_EQ_U64(pm_groups_at(g, 3)->quick.rss, (21 + 1 + 1) * 4096);
	CHECK_EQ_U64(pm_groups_at(g, 3)->procs, 9);
	CHECK_EQ_U64(pm_groups_at(g, 3)->exact.pss, 100);
	CHECK(pm_groups_at(g, 3)->exact.estimate);
	CHECK(pm_groups_at(g, 4) == NULL);
	/* Adding after the cap finds the kept groups again. */
	CHECK(pm_groups_add(g, "g8", &q) == 0);
	CHECK_EQ_U64(pm_groups_count(g), 4);
	pm_groups_free(g);
	pm_groups_free(NULL);
	return T_PASS;
}

/* Frames of groups: shared across groups counted once per group, a group's own repeats never. */
static int xshare_pure(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_xshare *x = ctx ? pm_xshare_new(ctx) : NULL;
	uint64_t page, bytes[3] = { 0 }, none[1] = { 0 };
	size_t i;

	CHECK(x != NULL);
	if (!x)
		return T_FAIL;
	page = pm_ctx_features(ctx)->page_size;
	CHECK(pm_xshare_finish(x, bytes, 3) == 0);	/* empty */
	CHECK_EQ_U64(bytes[0] + bytes[1] + bytes[2], 0);
	/* 100: groups 0 (three times) and 1; 200: group 2 alone (twice); 300: 0, 1, 2; 400: group 1 alone. */
	static const uint32_t add[][2] = { { 300, 2 }, { 100, 0 }, { 200, 2 }, { 100, 1 }, { 100, 0 },
					   { 300, 0 }, { 400, 1 }, { 200, 2 }, { 300, 1 }, { 100, 0 } };
	for (i = 0; i < sizeof(add) / sizeof(add[0]); i++)
		CHECK(pm_xshare_add_pfn(x, add[i][0], add[i][1]) == 0);
	CHECK(pm_xshare_finish(x, bytes, 3) == 0);
	CHECK_EQ_U64(bytes[0], 2 * page);
	CHECK_EQ_U64(bytes[1], 2 * page);
	CHECK_EQ_U64(bytes[2], 1 * page);
	/* Hostile: a group number past the array is refused, not written. */
	CHECK(pm_xshare_add_pfn(x, 500, 7) == 0 && pm_xshare_add_pfn(x, 500, 0) == 0);
	CHECK(pm_xshare_finish(x, none, 1) == -EINVAL);
	pm_xshare_free(x);
	pm_xshare_free(NULL);
	/* Many frames: the array grows past its first allocation. */
	x = pm_xshare_new(ctx);
	for (i = 0; x && i < 100000; i++)
		CHECK(pm_xshare_add_pfn(x, i / 2, (uint32_t)(i % 2)) == 0);
	memset(bytes, 0, sizeof(bytes));
	CHECK(x && pm_xshare_finish(x, bytes, 2) == 0);
	CHECK_EQ_U64(bytes[0], 50000 * page);
	CHECK_EQ_U64(bytes[1], 50000 * page);
	pm_xshare_free(x);
	pm_ctx_free(ctx);
	return T_PASS;
}

/* A reproducible generator for xshare_model. */
static uint64_t xs_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Runs of frames of random groups (overlapping, adjacent, repeated, in any
 * order) against a per-frame model: the bytes per group are what counting
 * frame by frame gives. 300,000 single frames in 1,000-frame strides first
 * push the set past its 262,144 records in memory, so the spill file and the
 * merge are in the count; a second finish counts only what came after.
 */
#define XS_FRAMES	4096
#define XS_GROUPS	5
static int xshare_model(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_xshare *x = ctx ? pm_xshare_new(ctx) : NULL;
	static uint8_t have[XS_FRAMES][XS_GROUPS];
	uint64_t page, seed = 0x9e3779b97f4a7c15ULL, got[XS_GROUPS], want[XS_GROUPS];
	unsigned round, i, f, g;

	CHECK(x != NULL);
	if (!x) {
		pm_ctx_free(ctx);
		return T_FAIL;
	}
	page = pm_ctx_features(ctx)->page_size;
	for (round = 0; round < 40; round++) {
		memset(have, 0, sizeof(have));
		memset(got, 0, sizeof(got));
		memset(want, 0, sizeof(want));
		for (i = 0; i < 200; i++) {
			uint64_t start = xs_rnd(&seed) % XS_FRAMES, len = 1 + xs_rnd(&seed) % 300;

			g = (unsigned)(xs_rnd(&seed) % XS_GROUPS);
			for (f = 0; f < len && start + f < XS_FRAMES; f++) {
				CHECK(pm_xshare_add_pfn(x, start + f, g) == 0);
				have[start + f][g] = 1;
			}
		}
		if (round == 0)	/* the spill: frames far above the model's, one group each (never shared) */
			for (i = 0; i < 300000; i++)
				CHECK(pm_xshare_add_pfn(x, (1ULL << 30) + 1000ULL * i, i % XS_GROUPS) == 0);
		for (f = 0; f < XS_FRAMES; f++) {
			unsigned n = 0;

			for (g = 0; g < XS_GROUPS; g++)
				n += have[f][g];
			for (g = 0; n >= 2 && g < XS_GROUPS; g++)
				want[g] += have[f][g] * page;
		}
		CHECK(pm_xshare_finish(x, got, XS_GROUPS) == 0);
		for (g = 0; g < XS_GROUPS; g++)
			CHECK_EQ_U64(got[g], want[g]);
		if (t_failed_checks)
			break;
	}
	printf("  40 random sets of 200 runs (and a spill of 300000 frames) counted as frame by frame\n");
	pm_xshare_free(x);
	pm_ctx_free(ctx);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* pm_groups_find and pm_groups_add_xshared, and xshared summed when groups fold into "other". */
static int groups_xshared(void)
{
	struct pm_groups *g = pm_groups_new();
	struct pm_quick q = { .rss = 4096 };
	size_t folded = 0;

	CHECK(g != NULL);
	CHECK(pm_groups_find(g, "a") == -ENOENT);
	CHECK(pm_groups_add(g, "a", &q) == 0);
	q.rss = 8192;
	CHECK(pm_groups_add(g, "b", &q) == 0);
	CHECK(pm_groups_add(g, "c", &q) == 0);
	CHECK(pm_groups_find(g, "a") == 0);
	CHECK(pm_groups_find(g, "c") == 2);
	CHECK(pm_groups_add_xshared(g, "a", 10) == 0);
	CHECK(pm_groups_add_xshared(g, "c", 5) == 0);
	CHECK(pm_groups_add_xshared(g, "c", 1) == 0);
	CHECK_EQ_U64(pm_groups_at(g, 2)->xshared, 6);
	CHECK(pm_groups_cap(g, 2, "other", &folded) == 0);	/* b kept (ties by key), a and c folded */
	CHECK_STR(pm_groups_at(g, 0)->key, "b");
	CHECK_STR(pm_groups_at(g, 1)->key, "other");
	CHECK_EQ_U64(pm_groups_at(g, 1)->xshared, 16);
	CHECK(pm_groups_find(g, "other") == 1);
	pm_groups_free(g);
	return T_PASS;
}

/* Live, root: a MAP_SHARED region that a child maps too is shared between the parent's group and the child's. */
static int xshare_live(void)
{
	const size_t len = 64 * 4096;
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_target *me = ctx ? pm_target_open(ctx, getpid()) : NULL, *kid = NULL;
	struct pm_xshare *x = NULL;
	uint64_t bytes[2] = { 0 }, same[1] = { 0 };
	int fds[2] = { -1, -1 }, rc = T_PASS;
	char *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid = -1;
	char c;

	if (!me || s == MAP_FAILED || pm_target_pfn_view(me) != PM_PFN_VISIBLE) {
		rc = t_skip("frame numbers are not visible (run as root)");
		goto out;
	}
	memset(s, 1, len);
	CHECK(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		pause();	/* keeps the shared region mapped and present */
		_exit(0);
	}
	CHECK(pid > 0 && read(fds[0], &c, 1) == 1);
	kid = pm_target_open(ctx, pid);
	x = pm_xshare_new(ctx);
	CHECK(kid && x);
	if (!kid || !x)
		goto out;
	CHECK(pm_xshare_add(x, me, 0) == 0);
	CHECK(pm_xshare_add(x, kid, 1) == 0);
	CHECK(pm_xshare_finish(x, bytes, 2) == 0);
	CHECK(bytes[0] >= len && bytes[1] >= len);
	pm_xshare_free(x);
	/* The same process twice in one group: nothing is shared with another group. */
	x = pm_xshare_new(ctx);
	CHECK(x && pm_xshare_add(x, me, 0) == 0 && pm_xshare_add(x, me, 0) == 0);
	CHECK(x && pm_xshare_finish(x, same, 1) == 0);
	CHECK_EQ_U64(same[0], 0);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	pm_xshare_free(x);
	pm_target_close(kid);
	pm_target_close(me);
	pm_ctx_free(ctx);
	if (s != MAP_FAILED)
		munmap(s, len);
	return rc;
}

/* Live: the cheap tier of this process sees a touched region, and the scan back end reads fewer entries than pread. */
static int quick_live(void)
{
	const size_t page = 4096, len = 256 * page;
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_quick q[2] = { { 0 }, { 0 } };
	enum pm_backend b[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pm_target *t;
	int i, n = 0;

	CHECK(ctx && p != MAP_FAILED);
	if (!ctx || p == MAP_FAILED)
		return T_FAIL;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len / 4);	/* a quarter present, the rest never touched */
	for (i = 0; i < 2; i++) {
		if (pm_ctx_set_backend(ctx, b[i]) < 0 || !(t = pm_target_open(ctx, getpid())))
			continue;
		if (pm_quick_process(t, &q[i]) == 0)
			n = i + 1;
		pm_target_close(t);
	}
	CHECK(n >= 1);
	CHECK(q[0].anon >= len / 4);
	CHECK(q[0].rss == q[0].anon + q[0].file + q[0].shmem);
	CHECK(q[0].entries >= len / page);	/* pread reads the untouched pages' entries too */
	if (n == 2) {	/* the kernel has PAGEMAP_SCAN */
		CHECK(q[1].anon >= len / 4);
		CHECK(q[1].entries < q[0].entries);
	}
	munmap(p, len);
	pm_ctx_free(ctx);
	return n == 2 ? T_PASS : t_skip("no PAGEMAP_SCAN: the scan back end was not compared");
}

static int writer(void)
{
	struct mw_label l[2] = { { "group", "a\"b\\c\nd" }, { "kind", "" } };
	struct mw w;

	mw_init(&w, MW_PROMETHEUS);
	mw_family(&w, "x_bytes", MW_GAUGE, "bytes", "help with \"quotes\" and \\ and\nnewline");
	mw_sample_u64(&w, l, 2, 18446744073709551615ULL);
	mw_family(&w, "y", MW_COUNTER, NULL, "h");
	mw_sample(&w, NULL, 0, 0.5);
	mw_finish(&w);
	CHECK(!w.oom);
	CHECK_STR(w.buf, "# HELP x_bytes help with \"quotes\" and \\\\ and\\nnewline\n# TYPE x_bytes gauge\n"
			 "x_bytes{group=\"a\\\"b\\\\c\\nd\",kind=\"\"} 18446744073709551615\n"
			 "# HELP y_total h\n# TYPE y_total counter\ny_total 0.5\n");
	CHECK_EQ_U64(w.series, 2);
	mw_free(&w);
	mw_init(&w, MW_OPENMETRICS);
	mw_family(&w, "x_bytes", MW_GAUGE, "bytes", "q\"");
	mw_family(&w, "y", MW_COUNTER, NULL, "h");
	mw_sample_u64(&w, NULL, 0, 3);
	mw_finish(&w);
	CHECK_STR(w.buf, "# HELP x_bytes q\\\"\n# TYPE x_bytes gauge\n# UNIT x_bytes bytes\n"
			 "# HELP y h\n# TYPE y counter\ny_total 3\n# EOF\n");
	mw_free(&w);
	return T_PASS;
}

static int negotiate(void)
{
	CHECK(mw_negotiate(NULL) == MW_PROMETHEUS);
	CHECK(mw_negotiate("*/*") == MW_PROMETHEUS);
	CHECK(mw_negotiate("text/plain;version=0.0.4") == MW_PROMETHEUS);
	CHECK(mw_negotiate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5") ==
	      MW_OPENMETRICS);
	CHECK(mw_negotiate("Application/OpenMetrics-Text") == MW_OPENMETRICS);
	return T_PASS;
}

static int rules_hostile(void)
{
	static const char *const bad[] = {
		"", "# only a comment\n", "name\n", "a b c\n", "a b\nc\n", "\t \n",
	};
	struct fleet_opts o = { 0 };
	char err[128], big[600];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(fleet_rules_parse(bad[i], &o, err, sizeof(err)) < 0);
		CHECK(err[0] != '\0');
		fleet_rules_free(&o);
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[1] = ' ';
	CHECK(fleet_rules_parse(big, &o, err, sizeof(err)) < 0);	/* a 598-byte pattern */
	fleet_rules_free(&o);
	CHECK(fleet_rules_parse("web nginx* # the front\n\r\ndb postgres\r\n", &o, err, sizeof(err)) == 0);
	CHECK_EQ_U64(o.nrules, 2);
	CHECK_STR(o.rules[0].name, "web");
	CHECK_STR(o.rules[0].pattern, "nginx*");
	CHECK_STR(o.rules[1].pattern, "postgres");
	fleet_rules_free(&o);
	return T_PASS;
}

T_MAIN(T(classes), T(classes_free), T(quick_sums), T(groups_cap), T(xshare_pure), T(xshare_model), T(groups_xshared), T(xshare_live), T(quick_live), T(writer), T(negotiate), T(rules_hostile))
