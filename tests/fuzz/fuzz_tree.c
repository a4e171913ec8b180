/* fuzz_tree.c - libFuzzer target: a whole replayed tree built from the input, then every read-only command's library path on it. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"

#define PM_FUZZ_NAME "fuzz_tree"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: records of [tag: 1 byte][length: 2 bytes, little-endian][bytes].
 * The low 5 bits of the tag pick a file below; bit 7 makes it a FIFO and
 * bit 6 a directory instead (the library must refuse both, never block).
 * A pagemap or kpage* record starts with a 4-byte little-endian word index
 * (below 2^16) where its bytes go: the file is sparse, holes read 0.
 * Two processes, 42 and 43, so `shared` has pairs to find. The tree lives
 * in one private temporary directory, reused: each run removes what the
 * last one wrote. Nothing here forks; the library probes nothing live
 * under a root.
 */
static const struct {
	const char *rel;
	bool offset;	/* the record starts with a word index */
} files[] = {
	{ "pagemap-features", false },
	{ "proc/42/maps", false },
	{ "proc/42/pagemap", true },
	{ "proc/42/stat", false },
	{ "proc/sys/kernel/osrelease", false },
	{ "sys/kernel/mm/transparent_hugepage/hpage_pmd_size", false },
	{ "proc/kpageflags", true },
	{ "proc/kpagecount", true },
	{ "proc/kpagecgroup", true },
	{ "proc/swaps", false },
	{ "proc/42/status", false },
	{ "proc/42/smaps_rollup", false },
	{ "proc/42/pagemap.errno", false },
	{ "proc/kpageflags.errno", false },
	{ "proc/43/maps", false },
	{ "proc/43/pagemap", true },
	{ "proc/43/stat", false },
	{ "proc/43/status", false },
	{ "proc/42/maps.errno", false },
	{ "proc/kpagecount.errno", false },
	{ "proc/42/cgroup", false },
};
#define NFILES (sizeof(files) / sizeof(files[0]))
#define MAX_OFFSET (1u << 16)	/* words: a pagemap file stays under 1 MiB + the record */
#define MAX_RUNS 4096		/* per walk: a mapping of 2^35 pages is legitimate work, not a finding */

static char root[256];
static uint32_t written;	/* files the last run made: only those are removed */

static const char *const dirs[] = { "proc", "proc/42", "proc/43", "proc/sys", "proc/sys/kernel", "sys", "sys/kernel",
				    "sys/kernel/mm", "sys/kernel/mm/transparent_hugepage" };

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char p[512];
	size_t i;

	snprintf(root, sizeof(root), "%s/pm-fuzz-tree-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		return -1;
	atexit(cleanup);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

static void clear_tree(void)
{
	char p[512];
	size_t i;

	for (i = 0; i < NFILES; i++) {
		if (!(written & (1u << i)))
			continue;
		snprintf(p, sizeof(p), "%s/%s", root, files[i].rel);
		if (unlink(p) < 0 && (errno == EISDIR || errno == EPERM))
			rmdir(p);
	}
	written = 0;
}

static void put_file(unsigned tag, const uint8_t *b, size_t n)
{
	const unsigned idx = (tag & 0x1f) % NFILES;
	uint64_t off = 0;
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, files[idx].rel);
	if ((written & (1u << idx)) && unlink(p) < 0 && errno == EISDIR)
		rmdir(p);
	written |= 1u << idx;
	if (tag & 0x80) {
		mkfifo(p, 0600);
		return;
	}
	if (tag & 0x40) {
		mkdir(p, 0700);
		return;
	}
	if (files[idx].offset && n >= 4) {
		off = ((uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24) % MAX_OFFSET;
		b += 4;
		n -= 4;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (n && pwrite(fd, b, n, (off_t)(off * 8)) < 0)
		(void)0;
	close(fd);
}

/* A walk of @t over [start, end) with @flags; frames go to @fr (up to @cap) for a kpage lookup. */
static size_t walk(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags, struct pm_frame *fr, size_t cap)
{
	struct pm_walk *w = pm_walk_new(t, start, end, flags);
	const struct pm_run *r;
	struct pm_usage u = { 0 };
	size_t runs = 0, nf = 0;

	if (!w)
		return 0;
	(void)pm_walk_known(w);
	while (runs++ < MAX_RUNS && pm_walk_next(w, &r) == 0) {
		if (r->start >= r->end || !r->map || r->start < r->map->start || r->end > r->map->end)
			abort();	/* a run is never empty and lies inside its mapping */
		pm_usage_add(&u, r);
		if ((r->flags & PM_PAGE_PRESENT) && (r->flags & PM_PAGE_FRAME) && nf < cap)
			fr[nf++].pfn = r->pfn;
	}
	pm_walk_free(w);
	return nf;
}

static void maps_cmd(struct pm_target *t)
{
	struct pm_mapstat *it = pm_mapstat_open(t, PM_WALK_ENTRIES);
	const struct pm_mapping *m;
	const struct pm_usage *u;
	int n = 0;

	while (it && n++ < MAX_RUNS && pm_mapstat_next(it, &m, &u) == 0)
		if (m->start > m->end || u->present > m->end - m->start)
			abort();
	pm_mapstat_close(it);
}

static void phys_cmd(struct pm_kpage *k)
{
	uint64_t end = 0, flags[64], counts[64], cg[64];

	if (!k)
		return;
	(void)pm_kpage_status(k, PM_KPAGE_FLAGS);
	if (pm_kpage_end(k, &end) == 0)
		(void)pm_kpage_read(k, end > 32 ? end - 32 : 0, 64, flags, counts, cg);
	(void)pm_kpage_read(k, 0, 64, flags, counts, cg);
}

static void ps_cmd(struct pm_ctx *ctx, struct pm_kpage *k)
{
	struct pm_procs *it = pm_procs_open(ctx);
	const struct pm_proc *p;
	int n = 0;

	while (it && n++ < 8 && pm_procs_next(it, &p) == 0) {
		struct pm_target *t = p->state == PM_PROC_RUNNING ? pm_target_open(ctx, p->pid) : NULL;
		struct pm_account a;
		char cg[256];

		(void)pm_memcg_of(ctx, p->pid, cg, sizeof(cg));	/* proc/42/cgroup */

		if (t)
			(void)pm_account_process(t, k, &a);
		pm_target_close(t);
	}
	pm_procs_close(it);
}

static void shared_cmd(struct pm_ctx *ctx, struct pm_kpage *k)
{
	struct pm_share *s = pm_share_new(ctx, k);
	const struct pm_share_map *m;
	const struct pm_share_pair *pr;
	struct pm_share_sum sum;
	pid_t pids[2] = { 42, 43 };
	int i, n = 0;

	if (!s)
		return;
	for (i = 0; i < 2; i++) {
		struct pm_target *t = pm_target_open(ctx, pids[i]);
		if (t)
			(void)pm_share_add(s, t);
		pm_target_close(t);
	}
	if (pm_share_finish(s) == 0) {
		while (n++ < MAX_RUNS && pm_share_next_map(s, &m) == 0)
			;
		while (n++ < 2 * MAX_RUNS && pm_share_next_pair(s, &pr) == 0)
			;
		(void)pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &sum);
		if (pm_share_ntargets(s) == 2)
			(void)pm_share_sum(s, 0, 1, &sum);
	}
	pm_share_free(s);
}

static void run_commands(void)
{
	struct pm_ctx *ctx = pm_ctx_new(root);
	const struct pm_features *f;
	struct pm_frame fr[64];
	struct pm_target *t;
	struct pm_kpage *k;
	size_t nf;

	if (!ctx)
		abort();
	pm_ctx_set_backend(ctx, PM_BACKEND_AUTO);
	f = pm_ctx_features(ctx);	/* features */
	if (f->page_size < 4096 || (f->page_size & (f->page_size - 1)) || f->pmd_size <= f->page_size ||
	    f->pmd_size > (1ULL << 30) || (f->pmd_size & (f->pmd_size - 1)) || (1ULL << f->page_shift) != f->page_size)
		abort();	/* sizes that size reads and allocations are sane */
	(void)pm_proc_state(ctx, 42);
	k = pm_kpage_open(ctx);
	t = pm_target_open(ctx, 42);
	if (t) {
		maps_cmd(t);					/* maps, mapstat */
		walk(t, 0, UINT64_MAX, 0, fr, 0);		/* pages */
		nf = walk(t, 0, UINT64_MAX, PM_WALK_ENTRIES, fr, 64);
		walk(t, 0x400000, 0x480000, PM_WALK_EACH | PM_WALK_ENTRIES, fr, 0);
		memset(fr, 0, sizeof(fr));
		nf = walk(t, 0x400000, 0x401000, PM_WALK_ENTRIES, fr, 64);	/* v2p: one page, then its frame */
		if (k && nf)
			(void)pm_kpage_lookup(k, fr, nf);
		pm_target_close(t);
	}
	phys_cmd(k);						/* phys */
	ps_cmd(ctx, k);						/* ps, accounting */
	shared_cmd(ctx, k);					/* shared */
	(void)pm_ctx_tree_error(ctx);
	pm_kpage_close(k);
	pm_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	size_t i = 0;

	if (!ready) {
		if (setup() < 0) {
			perror("fuzz_tree: cannot make its temporary tree");
			abort();
		}
		ready = 1;
	}
	clear_tree();
	while (i + 3 <= size) {
		unsigned tag = data[i];
		size_t n = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;

		i += 3;
		if (n > size - i)
			n = size - i;
		put_file(tag, data + i, n);
		i += n;
	}
	run_commands();
	return 0;
}
