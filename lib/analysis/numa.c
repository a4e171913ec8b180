/* numa.c - a process's bytes per NUMA node and mapping: from frame numbers, move_pages(2) or numa_maps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pages.h"
#include "numa.h"

#define KPF_SWAPBACKED	14
#define TMPFS_MAGIC	0x01021994	/* tmpfs: its files' pages are shmem */	/* kpageflags: backed by swap (anonymous or shmem) */
#define MOVE_BATCH	1024	/* addresses per move_pages(2) call */

struct pm_numa_proc {
	struct pm_target *t;
	struct pm_numa *n;
	enum pm_numa_source source;
	struct pm_walk *walk;		/* frames, move_pages */
	struct pm_maps *maps;		/* numa_maps source: the mappings' ends */
	struct pm_run pending;		/* a run read ahead: the first of the next mapping */
	bool have_pending, done;
	FILE *numa_maps;		/* NULL: none (no CONFIG_NUMA, or refused) */
	struct pmi_numa_maps_line nm;	/* the numa_maps line last read */
	uint64_t *nm_pages;		/* its Nx= counts, per node index (+ unknown) */
	bool nm_valid;
	struct pm_kpage *kpage;		/* frames source: file or shmem, from one frame per mapping */
	struct pm_mapping map;		/* the mapping being summed (path copied) */
	char *path;
	size_t path_cap;
	int shmem;			/* this mapping: -1 not decided yet, 0 file, 1 shmem */
	bool hugetlb;
	uint64_t (*bytes)[PM_NUMA_NCLASSES];
	uint64_t *thp;
	void **batch;			/* move_pages: addresses, their bytes, class and THP-ness */
	uint64_t *batch_bytes;
	uint8_t *batch_class;
	int *status;
	size_t nbatch;
	struct pm_numa_map out;
};

const char *pm_numa_source_name(enum pm_numa_source source)
{
	switch (source) {
	case PM_NUMA_FRAMES:
		return "frames";
	case PM_NUMA_MOVE_PAGES:
		return "move_pages";
	case PM_NUMA_MAPS:
		return "numa_maps";
	default:
		return "auto";
	}
}

/* Shared memory by the mapping's name, where no frame can tell: memfd, SysV, /dev/shm, shared anonymous. */
static bool looks_shmem(const struct pm_mapping *m)
{
	static const char *const prefixes[] = { "/memfd:", "/SYSV", "/dev/shm/", "/dev/zero", "[anon_shmem:" };
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(prefixes); i++) {
		size_t len = strlen(prefixes[i]);

		if (m->path_len >= len && !memcmp(m->path, prefixes[i], len))
			return true;
	}
	return (m->prot & PM_MAP_SHARED) && m->kind == PM_MAP_ANON;
}

/*
 * A file on tmpfs (initramfs, /run, /tmp on many machines) is shared
 * memory. Asked of the path in our own mount namespace, live only; the
 * frames source checks again by kpageflags.
 */
static bool on_tmpfs(const struct pm_numa_proc *p)
{
	struct statfs sf;

	return p->t->ctx->live && p->map.kind == PM_MAP_FILE && !p->map.deleted && p->path &&
	       p->map.path == p->path && statfs(p->path, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* numa_maps: move the cursor to the line of the mapping starting at @start, if there is one. */
static void numa_maps_seek(struct pm_numa_proc *p, uint64_t start)
{
	char line[4096];

	while (p->numa_maps && (!p->nm_valid || p->nm.start < start)) {
		if (!fgets(line, sizeof(line), p->numa_maps)) {
			fclose(p->numa_maps);
			p->numa_maps = NULL;
			p->nm_valid = false;
			return;
		}
		if (!strchr(line, '\n') && !feof(p->numa_maps)) {
			int c;	/* a line longer than any the kernel writes: skip the rest */

			while ((c = fgetc(p->numa_maps)) != EOF && c != '\n')
				;
		}
		p->nm_valid = pmi_numa_maps_parse(line, p->n, &p->nm, p->nm_pages) == 0;
		if (p->nm_valid && !p->nm.page_size)
			p->nm.page_size = pm_ctx_features(p->t->ctx)->page_size;
	}
}

static void begin_mapping(struct pm_numa_proc *p, const struct pm_mapping *m)
{
	size_t nn = p->n->count + 1;

	p->map = *m;
	if (m->path_len + 1 > p->path_cap) {
		char *more = realloc(p->path, m->path_len + 1);

		if (more) {
			p->path = more;
			p->path_cap = m->path_len + 1;
		}
	}
	if (p->path && p->path_cap > m->path_len) {
		memcpy(p->path, m->path, m->path_len);
		p->path[m->path_len] = '\0';
		p->map.path = p->path;
	} else {
		p->map.path_len = 0;
	}
	memset(p->bytes, 0, nn * sizeof(*p->bytes));
	memset(p->thp, 0, nn * sizeof(*p->thp));
	p->shmem = looks_shmem(m) || on_tmpfs(p) ? 1 : -1;
	numa_maps_seek(p, m->start);
	p->hugetlb = p->nm_valid && p->nm.start == m->start && p->nm.huge;
	p->out.policy = p->nm_valid && p->nm.start == m->start ? p->nm.policy : "";
	p->out.page_size = p->nm_valid && p->nm.start == m->start ? p->nm.page_size : 0;
}

/* The class of a run's pages. With frames visible, one kpageflags word per file mapping says file or shmem. */
static enum pm_numa_class run_class(struct pm_numa_proc *p, const struct pm_run *r)
{
	if (p->hugetlb)
		return PM_NUMA_HUGETLB;
	if (!(r->flags & PM_PAGE_FILE))
		return PM_NUMA_ANON;
	if (p->shmem < 0 && p->kpage && (r->flags & PM_PAGE_FRAME) && (r->flags & PM_PAGE_PRESENT)) {
		uint64_t kf;

		if (pm_kpage_read(p->kpage, r->pfn, 1, &kf, NULL, NULL) == 0 && !(kf & (1ULL << PM_KPF_NOPAGE)))
			p->shmem = (kf & (1ULL << KPF_SWAPBACKED)) && !(kf & (1ULL << PM_KPF_ANON));
	}
	return p->shmem > 0 ? PM_NUMA_SHMEM : PM_NUMA_FILE;
}

/* Frames source: split the run's frames at node boundaries. */
static void add_frames(struct pm_numa_proc *p, const struct pm_run *r, enum pm_numa_class c)
{
	uint64_t ps = pm_ctx_features(p->t->ctx)->page_size;
	uint64_t pfn = r->pfn, left = (r->end - r->start) / ps;

	/*
	 * The shared zero page (or huge zero page) is no one's memory: numa_maps
	 * leaves it out (vm_normal_page) and move_pages(2) answers -EFAULT, so
	 * the three sources agree (tests/live/test_numa.c, sources_agree).
	 */
	if (r->flags & PM_PAGE_ZERO)
		return;
	while (left) {
		uint64_t next, n;
		int i = pm_numa_index_of_pfn(p->n, pfn, &next);
		size_t slot = i < 0 ? p->n->count : (size_t)i;

		n = next - pfn >= left ? left : next - pfn;
		p->bytes[slot][c] += n * ps;
		if (r->flags & PM_PAGE_THP)
			p->thp[slot] += n * ps;
		left -= n;
		pfn += n;
	}
}

static int flush_batch(struct pm_numa_proc *p)
{
	size_t i;
	long r;

	if (!p->nbatch)
		return 0;
	r = syscall(SYS_move_pages, pm_target_pid(p->t), (unsigned long)p->nbatch, p->batch, NULL, p->status, 0);
	if (r < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	for (i = 0; i < p->nbatch; i++) {
		int idx = p->status[i] >= 0 ? pm_numa_index_of_id(p->n, p->status[i]) : -1;
		size_t slot = idx < 0 ? p->n->count : (size_t)idx;

		if (p->status[i] == -ENOENT || p->status[i] == -EFAULT)
			continue;	/* gone from RAM (or unmapped) since the walk saw it */
		p->bytes[slot][p->batch_class[i] & 0x7f] += p->batch_bytes[i];
		if (p->batch_class[i] & 0x80)
			p->thp[slot] += p->batch_bytes[i];
	}
	p->nbatch = 0;
	return 0;
}

/* move_pages source: one address per page, per huge page for THP and hugetlb (one folio, one node). */
static int add_addresses(struct pm_numa_proc *p, const struct pm_run *r, enum pm_numa_class c)
{
	const struct pm_features *f = pm_ctx_features(p->t->ctx);
	uint64_t step = f->page_size, a;
	int e;

	if (c == PM_NUMA_HUGETLB && p->out.page_size > step)
		step = p->out.page_size;
	else if ((r->flags & PM_PAGE_THP) && f->pmd_size > step)
		step = f->pmd_size;
	for (a = r->start; a < r->end; a = (a & ~(step - 1)) + step) {
		uint64_t end = (a & ~(step - 1)) + step;

		if (end > r->end)
			end = r->end;
		p->batch[p->nbatch] = (void *)(uintptr_t)a;
		p->batch_bytes[p->nbatch] = end - a;
		p->batch_class[p->nbatch] = (uint8_t)(c | (r->flags & PM_PAGE_THP ? 0x80 : 0));
		if (++p->nbatch == MOVE_BATCH && (e = flush_batch(p)) < 0)
			return e;
	}
	return 0;
}

static int add_run(struct pm_numa_proc *p, const struct pm_run *r)
{
	enum pm_numa_class c;

	if (!(r->flags & PM_PAGE_PRESENT))
		return 0;
	c = run_class(p, r);
	if (p->source == PM_NUMA_FRAMES) {
		if (!(r->flags & PM_PAGE_FRAME)) {
			p->bytes[p->n->count][c] += r->end - r->start;
			return 0;
		}
		add_frames(p, r, c);
		return 0;
	}
	return add_addresses(p, r, c);
}

static void emit(struct pm_numa_proc *p, const struct pm_numa_map **out)
{
	p->out.map = &p->map;
	p->out.nnodes = p->n->count + 1;
	p->out.bytes = (const uint64_t(*)[PM_NUMA_NCLASSES])p->bytes;
	p->out.thp = p->thp;
	*out = &p->out;
}

/* Frames and move_pages: the walk's runs summed until the mapping changes. */
static int next_walked(struct pm_numa_proc *p, const struct pm_numa_map **out)
{
	const struct pm_run *r;
	int e;

	if (p->done)
		return 1;
	if (!p->have_pending) {
		e = pm_walk_next(p->walk, &r);
		if (e)
			return e;
		p->pending = *r;
	}
	begin_mapping(p, p->pending.map);
	p->have_pending = false;
	if ((e = add_run(p, &p->pending)) < 0)
		return e;
	while ((e = pm_walk_next(p->walk, &r)) == 0) {
		if (r->map->start != p->map.start || r->map->end != p->map.end) {
			p->pending = *r;
			p->have_pending = true;
			break;
		}
		if ((e = add_run(p, r)) < 0)
			return e;
	}
	if (e < 0)
		return e;
	if (e == 1)
		p->done = true;
	if ((e = flush_batch(p)) < 0)
		return e;
	emit(p, out);
	return 0;
}

/* numa_maps source: each mapping's Nx= page counts, the class from the mapping's kind. */
static int next_counted(struct pm_numa_proc *p, const struct pm_numa_map **out)
{
	const struct pm_mapping *m;
	enum pm_numa_class c;
	size_t i;
	int e = pm_maps_next(p->maps, &m);

	if (e)
		return e;
	begin_mapping(p, m);
	if (!p->nm_valid || p->nm.start != m->start) {
		emit(p, out);
		return 0;
	}
	c = p->hugetlb ? PM_NUMA_HUGETLB : m->kind != PM_MAP_FILE || p->nm.anon >= p->nm.pages ? PM_NUMA_ANON :
			    p->shmem > 0 ? PM_NUMA_SHMEM : PM_NUMA_FILE;
	if (c == PM_NUMA_ANON && p->shmem > 0)
		c = PM_NUMA_SHMEM;
	for (i = 0; i <= p->n->count; i++)
		p->bytes[i][c] += p->nm_pages[i] * p->nm.page_size;
	emit(p, out);
	return 0;
}

int pm_numa_proc_next(struct pm_numa_proc *p, const struct pm_numa_map **out)
{
	return p->source == PM_NUMA_MAPS ? next_counted(p, out) : next_walked(p, out);
}

enum pm_numa_source pm_numa_proc_source(const struct pm_numa_proc *p)
{
	return p->source;
}

static FILE *open_numa_maps(struct pm_target *t)
{
	char path[4096];
	FILE *f;
	int fd;

	if (pmi_pid_path(t->ctx, path, sizeof(path), pm_target_pid(t), "numa_maps") < 0)
		return NULL;
	fd = pmi_open(t->ctx, path, O_RDONLY);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* Can this reader move (here: ask about) the target's pages? A zero-length call answers. */
static int move_pages_usable(struct pm_target *t)
{
	if (!t->ctx->live)
		return -EOPNOTSUPP;
	if (syscall(SYS_move_pages, pm_target_pid(t), 0UL, NULL, NULL, NULL, 0) < 0)
		return -errno;
	return 0;
}

static enum pm_numa_source choose(struct pm_numa_proc *p, enum pm_numa_source want, int *err)
{
	bool frames = pm_target_pfn_view(p->t) == PM_PFN_VISIBLE;

	*err = 0;
	if (want == PM_NUMA_FRAMES && !frames)
		*err = -EACCES;
	else if (want == PM_NUMA_MOVE_PAGES)
		*err = move_pages_usable(p->t);
	else if (want == PM_NUMA_MAPS && !p->numa_maps)
		*err = -ENOENT;
	if (want != PM_NUMA_AUTO)
		return want;
	if (frames)
		return PM_NUMA_FRAMES;
	if (move_pages_usable(p->t) == 0)
		return PM_NUMA_MOVE_PAGES;
	if (!p->numa_maps)
		*err = -ENOENT;
	return PM_NUMA_MAPS;
}

static int alloc_arrays(struct pm_numa_proc *p)
{
	size_t nn = p->n->count + 1;

	p->bytes = calloc(nn, sizeof(*p->bytes));
	p->thp = calloc(nn, sizeof(*p->thp));
	p->nm_pages = calloc(nn, sizeof(*p->nm_pages));
	if (!p->bytes || !p->thp || !p->nm_pages)
		return -ENOMEM;
	if (p->source != PM_NUMA_MOVE_PAGES)
		return 0;
	p->batch = calloc(MOVE_BATCH, sizeof(*p->batch));
	p->batch_bytes = calloc(MOVE_BATCH, sizeof(*p->batch_bytes));
	p->batch_class = calloc(MOVE_BATCH, sizeof(*p->batch_class));
	p->status = calloc(MOVE_BATCH, sizeof(*p->status));
	return p->batch && p->batch_bytes && p->batch_class && p->status ? 0 : -ENOMEM;
}

static int start(struct pm_numa_proc *p, enum pm_numa_source want)
{
	int e;

	p->numa_maps = open_numa_maps(p->t);
	p->source = choose(p, want, &e);
	if (e < 0)
		return e;
	if ((e = alloc_arrays(p)) < 0)
		return e;
	if (p->source == PM_NUMA_MAPS) {
		p->maps = pm_maps_open(p->t);
		return p->maps ? 0 : -errno;
	}
	if (p->source == PM_NUMA_FRAMES)
		p->kpage = pm_kpage_open(p->t->ctx);	/* optional: without it, file or shmem by name */
	p->walk = pm_walk_new(p->t, 0, UINT64_MAX, p->source == PM_NUMA_FRAMES ? PM_WALK_ENTRIES : 0);
	return p->walk ? 0 : -errno;
}

struct pm_numa_proc *pm_numa_proc_open(struct pm_target *t, struct pm_numa *n, enum pm_numa_source source)
{
	struct pm_numa_proc *p = calloc(1, sizeof(*p));
	int e;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->t = t;
	p->n = n;
	e = start(p, source);
	if (e < 0) {
		pm_numa_proc_close(p);
		errno = -e;
		return NULL;
	}
	return p;
}

void pm_numa_proc_close(struct pm_numa_proc *p)
{
	if (!p)
		return;
	pm_walk_free(p->walk);
	if (p->maps)
		pm_maps_close(p->maps);
	if (p->numa_maps)
		fclose(p->numa_maps);
	pm_kpage_close(p->kpage);
	free(p->path);
	free(p->bytes);
	free(p->thp);
	free(p->nm_pages);
	free(p->batch);
	free(p->batch_bytes);
	free(p->batch_class);
	free(p->status);
	free(p);
}
