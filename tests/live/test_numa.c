/* test_numa.c - bytes per node against the kernel's numa_maps, by every node source, and placed pages on two nodes. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pagemap.h"
#include "../harness.h"
#include "layout.h"

#define MPOL_BIND	2
#define BIND_PAGES	256

/*
 * What numa_maps says of the mapping at @start: bytes on node @id (Nx=
 * times kernelpagesize_kB). UINT64_MAX when it lists no such mapping.
 */
static uint64_t kernel_bytes(pid_t pid, uint64_t start, int id)
{
	char path[64], line[4096], key[32];
	uint64_t bytes = UINT64_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	snprintf(key, sizeof(key), " N%d=", id);
	f = fopen(path, "re");
	if (!f)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		char *n = strstr(line, key), *k = strstr(line, "kernelpagesize_kB=");

		if (strtoull(line, NULL, 16) != start)
			continue;
		bytes = 0;
		if (n && k)
			bytes = strtoull(n + strlen(key), NULL, 10) * strtoull(k + 18, NULL, 10) * 1024;
		break;
	}
	fclose(f);
	return bytes;
}

static uint64_t node_total(const struct pm_numa_map *m, size_t i)
{
	const uint64_t *b = m->bytes[i];

	return b[PM_NUMA_ANON] + b[PM_NUMA_FILE] + b[PM_NUMA_SHMEM] + b[PM_NUMA_HUGETLB];
}

/*
 * Every mapping's bytes on every node equal numa_maps' (the process is
 * stopped: nothing moves), and nothing is on an unknown node. Returns the
 * number of mappings that differ; @check (may be NULL) sees each mapping.
 */
static int compare(struct pm_ctx *ctx, pid_t pid, struct pm_numa *n, enum pm_numa_source src,
		   void (*check)(const struct pm_numa_map *m, void *data), void *data, enum pm_numa_source *used)
{
	struct pm_target *t = pm_target_open(ctx, pid);
	struct pm_numa_proc *p = t ? pm_numa_proc_open(t, n, src) : NULL;
	const struct pm_numa_map *m;
	int bad = 0, r;
	size_t i;

	if (!p) {
		printf("  %s: cannot open: %s\n", pm_numa_source_name(src), strerror(errno));
		pm_target_close(t);
		return -1;
	}
	*used = pm_numa_proc_source(p);
	while ((r = pm_numa_proc_next(p, &m)) == 0) {
		/* numa_maps counts no page of [vdso] (not a "normal" page); pagemap shows it present */
		for (i = 0; m->map->kind != PM_MAP_VDSO && i < pm_numa_count(n); i++) {
			uint64_t want = kernel_bytes(pid, m->map->start, pm_numa_node(n, i)->id);

			if (want != UINT64_MAX && node_total(m, i) != want) {
				printf("  %s: mapping 0x%llx (%.*s) node %d: %llu bytes, numa_maps %llu\n",
				       pm_numa_source_name(*used), (unsigned long long)m->map->start, (int)m->map->path_len, m->map->path,
				       pm_numa_node(n, i)->id, (unsigned long long)node_total(m, i),
				       (unsigned long long)want);
				bad++;
			}
		}
		if (node_total(m, pm_numa_count(n))) {
			printf("  %s: mapping 0x%llx: %llu bytes on no known node\n", pm_numa_source_name(*used),
			       (unsigned long long)m->map->start, (unsigned long long)node_total(m, pm_numa_count(n)));
			bad++;
		}
		if (check)
			check(m, data);
	}
	pm_numa_proc_close(p);
	pm_target_close(t);
	return r < 0 ? -1 : bad;
}

/* Classes of the layout's regions: what each must hold, summed over nodes. */
struct classes {
	const struct layout *l;
	enum pm_numa_source src;
	int bad;
};

static uint64_t class_sum(const struct pm_numa_map *m, enum pm_numa_class c)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < m->nnodes; i++)
		s += m->bytes[i][c];
	return s;
}

static uint64_t thp_sum(const struct pm_numa_map *m)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < m->nnodes; i++)
		s += m->thp[i];
	return s;
}

static void expect(struct classes *c, const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return;
	printf("  %s: %s: %llu bytes, %llu expected\n", pm_numa_source_name(c->src), what, (unsigned long long)got,
	       (unsigned long long)want);
	c->bad++;
}

/* Is the (unlinked) file of this mapping on tmpfs? Its directory tells: then its pages are shmem. */
static bool file_on_tmpfs(const struct pm_mapping *m)
{
	char dir[4096], *slash;
	struct statfs sf;

	snprintf(dir, sizeof(dir), "%.*s", (int)m->path_len, m->path);
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return statfs(dir[0] ? dir : "/", &sf) == 0 && sf.f_type == 0x01021994;
}

static void check_classes(const struct pm_numa_map *m, void *data)
{
	struct classes *c = data;
	const struct layout *l = c->l;
	uint64_t ps = l->page_size;

	if (m->map->start == l->r[LR_ANON].start)
		expect(c, "anon region, ANON", class_sum(m, PM_NUMA_ANON), 64 * ps);
	if (m->map->start == l->r[LR_MEMFD].start)
		expect(c, "memfd region, SHMEM", class_sum(m, PM_NUMA_SHMEM), 32 * ps);
	/* numa_maps cannot tell a file mapping's copied pages from its page cache: the others can */
	if (m->map->start == l->r[LR_FILE].start && c->src != PM_NUMA_MAPS) {
		/* a deleted file's name cannot say tmpfs: only frames (kpageflags) tell its pages are shmem */
		if (file_on_tmpfs(m->map) && c->src == PM_NUMA_FRAMES)
			expect(c, "file region on tmpfs, SHMEM", class_sum(m, PM_NUMA_SHMEM), 15 * ps);
		else if (!file_on_tmpfs(m->map))
			expect(c, "file region, FILE", class_sum(m, PM_NUMA_FILE), 15 * ps);
		expect(c, "file region, ANON (the written page)", class_sum(m, PM_NUMA_ANON), ps);
	}
	if (l->r[LR_THP].start && !l->r[LR_THP].error && m->map->start <= l->r[LR_THP].start &&
	    m->map->end >= l->r[LR_THP].end && c->src != PM_NUMA_MAPS)
		expect(c, "THP region, THP", thp_sum(m), l->pmd_size);
}

static int layout_sources(bool root_only_frames)
{
	/* zero pages too: the shared zero page is no one's memory, which numa_maps and move_pages both say */
	struct layout_opts o = { .anon_pages = 64, .file_pages = 16, .memfd_pages = 32, .thp_count = 1, .zero_pages = 16,
				 .hzero_count = 1 };
	static const enum pm_numa_source srcs[] = { PM_NUMA_FRAMES, PM_NUMA_MOVE_PAGES, PM_NUMA_MAPS };
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_numa *n = ctx ? pm_numa_open(ctx) : NULL;
	struct layout l;
	size_t s;
	int rc = T_PASS;

	if (!n) {
		pm_ctx_free(ctx);
		return errno == EOPNOTSUPP ? t_skip("no NUMA nodes in sysfs (CONFIG_NUMA off)") : T_FAIL;
	}
	if (layout_start(&o, &l) < 0) {
		pm_numa_close(n);
		pm_ctx_free(ctx);
		return T_FAIL;
	}
	for (s = 0; s < sizeof(srcs) / sizeof(srcs[0]); s++) {
		struct classes c = { &l, srcs[s], 0 };
		enum pm_numa_source used;
		int bad;

		if (srcs[s] == PM_NUMA_FRAMES && (root_only_frames ? geteuid() != 0 : false))
			continue;
		bad = compare(ctx, l.pid, n, srcs[s], check_classes, &c, &used);
		printf("  %s: %d mappings differ from numa_maps, %d class checks failed\n", pm_numa_source_name(used),
		       bad, c.bad);
		if (bad != 0 || c.bad)
			rc = T_FAIL;
	}
	layout_stop(&l);
	pm_numa_close(n);
	pm_ctx_free(ctx);
	return rc;
}

/* Root: frames, move_pages and numa_maps each agree with numa_maps, and with the layout's classes. */
static int sources_agree(void)
{
	return layout_sources(true);
}

/*
 * Without privilege, the process's own child: frames are hidden, AUTO
 * picks move_pages, and its answer is exact.
 */
static int unpriv_move_pages(void)
{
	char exe[PATH_MAX];
	pid_t p;
	int st = 0;

	if (geteuid() != 0)
		return t_skip("needs root to switch user");
	if (!realpath("/proc/self/exe", exe))
		return t_skip("cannot resolve /proc/self/exe: %s", strerror(errno));
	fflush(NULL);
	p = fork();
	if (p == 0) {
		struct layout_opts o = { .anon_pages = 64, .memfd_pages = 32 };
		struct pm_ctx *ctx;
		struct pm_numa *n;
		struct layout l;
		enum pm_numa_source used = PM_NUMA_AUTO;
		int bad;

		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(10);
		/* The layout child re-executes this program: the user must reach it (not a clone under 0700). */
		if (access(exe, X_OK) < 0)
			_exit(14);
		prctl(PR_SET_DUMPABLE, 1);
		if (!(ctx = pm_ctx_new(NULL)) || !(n = pm_numa_open(ctx)) || layout_start(&o, &l) < 0)
			_exit(11);
		bad = compare(ctx, l.pid, n, PM_NUMA_AUTO, NULL, NULL, &used);
		printf("  unprivileged: source %s, %d mappings differ from numa_maps\n", pm_numa_source_name(used), bad);
		fflush(stdout);
		layout_stop(&l);
		_exit(used != PM_NUMA_MOVE_PAGES ? 12 : bad != 0 ? 13 : 0);
	}
	CHECK(p > 0);
	while (p > 0 && waitpid(p, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 14)
		return t_skip("uid 65534 cannot reach %s (a directory on the way is closed to others)", exe);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		printf("  child status %#x (10 setuid, 11 setup, 12 not move_pages, 13 differs)\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return T_PASS;
}

/* The last node with memory other than the first: where placed pages go. */
static int far_node(struct pm_numa *n)
{
	size_t i;

	for (i = pm_numa_count(n); i-- > 1;)
		if (pm_numa_node(n, i)->has_memory)
			return (int)i;
	return -1;
}

/* A child that binds BIND_PAGES pages to node @id, writes them, says where, and waits. */
static pid_t bound_child(int id, uint64_t *addr, int *to)
{
	int up[2], down[2];
	pid_t p;

	if (pipe(up) < 0 || pipe(down) < 0)
		return -1;
	p = fork();
	if (p == 0) {
		size_t len = BIND_PAGES * (size_t)sysconf(_SC_PAGESIZE);
		unsigned long mask = 1UL << id;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a = (uint64_t)(uintptr_t)m;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (m == MAP_FAILED || madvise(m, len, MADV_NOHUGEPAGE) < 0 ||
		    syscall(SYS_mbind, m, len, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0)
			a = 0;
		else
			memset(m, 1, len);
		if (write(up[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		if (read(down[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	*to = down[1];
	if (p > 0 && read(up[0], addr, sizeof(*addr)) != sizeof(*addr))
		*addr = 0;
	close(up[0]);
	return p;
}

struct placed {
	uint64_t addr, want;
	int index;
	bool seen;
	bool ok;
};

static void check_placed(const struct pm_numa_map *m, void *data)
{
	struct placed *pl = data;

	if (m->map->start != pl->addr)
		return;
	pl->seen = true;
	pl->ok = node_total(m, (size_t)pl->index) == pl->want && m->bytes[pl->index][PM_NUMA_ANON] == pl->want;
	if (!pl->ok)
		printf("  bound mapping: %llu anonymous bytes on the bound node, %llu expected\n",
		       (unsigned long long)m->bytes[pl->index][PM_NUMA_ANON], (unsigned long long)pl->want);
}

/* Two nodes (kernel-matrix -N 2): pages bound to the far node are there, exactly, by every source. */
static int bound_pages(void)
{
	static const enum pm_numa_source srcs[] = { PM_NUMA_FRAMES, PM_NUMA_MOVE_PAGES, PM_NUMA_MAPS };
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_numa *n = ctx ? pm_numa_open(ctx) : NULL;
	struct placed pl = { 0 };
	int to = -1, st, rc = T_PASS, far;
	size_t s;
	pid_t p;

	if (!n) {
		pm_ctx_free(ctx);
		return t_skip("no NUMA nodes in sysfs");
	}
	far = far_node(n);
	if (far < 0) {
		pm_numa_close(n);
		pm_ctx_free(ctx);
		return t_skip("one node with memory: placing pages needs two (kernel-matrix -N 2)");
	}
	p = bound_child(pm_numa_node(n, (size_t)far)->id, &pl.addr, &to);
	CHECK(p > 0 && pl.addr);
	pl.index = far;
	pl.want = BIND_PAGES * (uint64_t)sysconf(_SC_PAGESIZE);
	for (s = 0; p > 0 && pl.addr && s < sizeof(srcs) / sizeof(srcs[0]); s++) {
		enum pm_numa_source used;
		int bad;

		pl.seen = pl.ok = false;
		bad = compare(ctx, p, n, srcs[s], check_placed, &pl, &used);
		printf("  %s: node %d holds the bound mapping: %s; %d mappings differ from numa_maps\n",
		       pm_numa_source_name(used), pm_numa_node(n, (size_t)far)->id, pl.ok ? "yes" : "no", bad);
		if (bad || !pl.seen || !pl.ok)
			rc = T_FAIL;
	}
	if (to >= 0)
		close(to);
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
	}
	pm_numa_close(n);
	pm_ctx_free(ctx);
	return rc;
}

/* The node table: every CPU of the machine on some node, node ids ascending, local distance 10. */
static int topology(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_numa *n = ctx ? pm_numa_open(ctx) : NULL;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), c, placed = 0;
	size_t i;

	if (!n) {
		pm_ctx_free(ctx);
		return t_skip("no NUMA nodes in sysfs");
	}
	for (c = 0; c < cpus; c++)
		placed += pm_numa_index_of_cpu(n, (unsigned)c) >= 0;
	CHECK(placed == cpus);
	for (i = 0; i < pm_numa_count(n); i++) {
		CHECK(i == 0 || pm_numa_node(n, i)->id > pm_numa_node(n, i - 1)->id);
		CHECK(pm_numa_distance(n, i, i) == 10);
	}
	printf("  %zu node(s), %ld CPU(s) placed\n", pm_numa_count(n), placed);
	pm_numa_close(n);
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(topology), T(sources_agree), T(unpriv_move_pages), T(bound_pages))
