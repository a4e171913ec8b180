/* pagetypes_join.c - benchmark baseline: a process's pages joined with their frames' flags one pread per page, as page-types -p. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TASK_SIZE	0x7ffffffff000ULL	/* x86-64 4-level: nothing at or above reads (docs/kernel-interface.md §3) */
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PT_BATCH	65536u		/* page-types' PAGEMAP_BATCH: entries per pagemap pread in batch mode */
#define KPF_HEAD	15
#define KPF_TAIL	16
#define KPF_HUGE	17
#define KPF_INTERNAL	0xffffffff00000000ULL	/* bits shown only in raw mode, as pm_kpf_cook() */
#define BIT(n)		(1ULL << (n))

/* A histogram of cooked flag words: open addressing, doubling. */
struct slot {
	uint64_t flags, pages;	/* pages == 0: empty */
};

struct join {
	int pagemap, kflags, kcount, kcgroup;	/* kcgroup < 0: not read */
	struct slot *slot;
	size_t cap, used;
	uint64_t pages, mapcount, preads;
	uint64_t *pfns;				/* --bulk: every present page's PFN, joined at the end */
	size_t npfns, cap_pfns;			/* cap_pfns > 0: --bulk */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One 8-byte word at index @idx of @fd; 0 past the end. Returns 0 or -errno. */
static int read_word(struct join *j, int fd, uint64_t idx, uint64_t *w)
{
	ssize_t n;

	do
		n = pread(fd, w, 8, (off_t)(idx * 8));
	while (n < 0 && errno == EINTR);
	j->preads++;
	if (n < 0)
		return -errno;
	if (n != 8)
		*w = 0;
	return 0;
}

/* pm_kpf_cook(flags, false): hide the kernel-internal bits, and head/tail unless hugetlb (page-types' rule). */
static uint64_t cook(uint64_t f)
{
	f &= ~KPF_INTERNAL;
	if ((f & (BIT(KPF_HEAD) | BIT(KPF_TAIL))) && !(f & BIT(KPF_HUGE)))
		f &= ~(BIT(KPF_HEAD) | BIT(KPF_TAIL));
	return f;
}

static size_t pos(const struct join *j, uint64_t flags)
{
	size_t i = (size_t)((flags * 0x9e3779b97f4a7c15ULL) >> 20) & (j->cap - 1);

	while (j->slot[i].pages && j->slot[i].flags != flags)
		i = (i + 1) & (j->cap - 1);
	return i;
}

static int hist_add(struct join *j, uint64_t flags)
{
	size_t i;

	if (2 * (j->used + 1) > j->cap) {
		struct join n = { .cap = j->cap ? 2 * j->cap : 256 };

		if (!(n.slot = calloc(n.cap, sizeof(*n.slot))))
			return -ENOMEM;
		for (i = 0; i < j->cap; i++)
			if (j->slot[i].pages)
				n.slot[pos(&n, j->slot[i].flags)] = j->slot[i];
		free(j->slot);
		j->slot = n.slot;
		j->cap = n.cap;
	}
	i = pos(j, flags);
	if (!j->slot[i].pages) {
		j->slot[i].flags = flags;
		j->used++;
	}
	j->slot[i].pages++;
	return 0;
}

/* page-types' walk_pfn(..., count = 1): one pread per file for this frame, then account it. */
static int join_page(struct join *j, uint64_t entry)
{
	uint64_t pfn = entry & PM_PFN_MASK, flags, count, cgroup;
	int r;

	if (!(entry & PM_PRESENT) || !pfn)	/* page-types: pagemap_pfn() == 0 is skipped */
		return 0;
	if (j->cap_pfns) {	/* --bulk: collect now, join sorted at the end */
		if (j->npfns == j->cap_pfns) {
			uint64_t *more = realloc(j->pfns, 2 * j->cap_pfns * sizeof(*more));

			if (!more)
				return -ENOMEM;
			j->pfns = more;
			j->cap_pfns *= 2;
		}
		j->pfns[j->npfns++] = pfn;
		return 0;
	}
	if ((r = read_word(j, j->kflags, pfn, &flags)) < 0 || (r = read_word(j, j->kcount, pfn, &count)) < 0)
		return r;
	if (j->kcgroup >= 0 && (r = read_word(j, j->kcgroup, pfn, &cgroup)) < 0)
		return r;
	j->pages++;
	j->mapcount += count;
	return hist_add(j, cook(flags));
}

/* Every page of [start, end): one pread per entry, or (@batch) page-types' 64Ki entries per pread. */
static int walk_range(struct join *j, uint64_t start, uint64_t end, uint64_t *buf, int batch)
{
	uint64_t vpn = start >> 12, end_vpn = end >> 12, i;
	int r;

	while (vpn < end_vpn) {
		size_t want = batch ? (end_vpn - vpn < PT_BATCH ? (size_t)(end_vpn - vpn) : PT_BATCH) : 1;
		ssize_t n;

		do
			n = pread(j->pagemap, buf, want * 8, (off_t)(vpn * 8));
		while (n < 0 && errno == EINTR);
		j->preads++;
		if (n < 0)
			return -errno;
		if (n < 8)
			return -ESRCH;	/* below task_size a 0 means the mm is gone */
		for (i = 0; i < (uint64_t)n / 8; i++)
			if ((r = join_page(j, buf[i])) < 0)
				return r;
		vpn += (uint64_t)n / 8;
	}
	return 0;
}

/* The mappings pagemap phys walks: all but [vvar*] (VM_PFNMAP) and [vsyscall] (above task_size). */
static int walk_process(struct join *j, long pid, int batch)
{
	char path[64], line[4096];
	unsigned long long start, end;
	uint64_t *buf = malloc(PT_BATCH * 8);
	FILE *maps;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	maps = fopen(path, "re");
	if (!buf || !maps) {
		r = -errno;
		goto out;
	}
	while (r == 0 && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || strstr(line, "[vvar") || start >= TASK_SIZE)
			continue;
		r = walk_range(j, start, end < TASK_SIZE ? end : TASK_SIZE, buf, batch);
	}
out:
	if (maps)
		fclose(maps);
	free(buf);
	return r;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Words [first, first + n) of @fd into @buf with one pread (n <= PT_BATCH); zeros past the end. */
static int read_span(struct join *j, int fd, uint64_t first, size_t n, uint64_t *buf)
{
	ssize_t got;

	do
		got = pread(fd, buf, n * 8, (off_t)(first * 8));
	while (got < 0 && errno == EINTR);
	j->preads++;
	if (got < 0)
		return -errno;
	memset((char *)buf + got, 0, n * 8 - (size_t)got);
	return 0;
}

/*
 * --bulk: the floor of any join, not page-types. Sort the collected PFNs, read kpageflags and
 * kpagecount (and kpagecgroup) once per span of sorted PFNs (gaps of up to 32 frames read
 * through, at most PT_BATCH words), and account each page from the span buffers.
 */
static int join_bulk(struct join *j)
{
	uint64_t *fl = malloc(PT_BATCH * 8), *co = malloc(PT_BATCH * 8), *cg = malloc(PT_BATCH * 8);
	size_t i = 0, k, n;
	int r = fl && co && cg ? 0 : -ENOMEM;

	qsort(j->pfns, j->npfns, sizeof(*j->pfns), u64_cmp);
	while (r == 0 && i < j->npfns) {
		uint64_t first = j->pfns[i];

		for (k = i + 1; k < j->npfns && j->pfns[k] - j->pfns[k - 1] <= 32 && j->pfns[k] - first < PT_BATCH; k++)
			;
		n = (size_t)(j->pfns[k - 1] - first + 1);
		if ((r = read_span(j, j->kflags, first, n, fl)) < 0 || (r = read_span(j, j->kcount, first, n, co)) < 0 ||
		    (j->kcgroup >= 0 && (r = read_span(j, j->kcgroup, first, n, cg)) < 0))
			break;
		for (; r == 0 && i < k; i++) {
			j->pages++;
			j->mapcount += co[j->pfns[i] - first];
			r = hist_add(j, cook(fl[j->pfns[i] - first]));
		}
	}
	free(fl);
	free(co);
	free(cg);
	return r;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->flags < y->flags ? -1 : x->flags > y->flags;
}

/* The summary as `pagemap phys -s -r -n -o FLAGS,PAGES`, then a total line and the counts. */
static void print_summary(struct join *j, double seconds, const char *mode)
{
	size_t i, k = 0;

	for (i = 0; i < j->cap; i++)
		if (j->slot[i].pages)
			j->slot[k++] = j->slot[i];
	if (k)
		qsort(j->slot, k, sizeof(*j->slot), slot_cmp);
	for (i = 0; i < k; i++)
		printf("0x%016llx %llu\n", (unsigned long long)j->slot[i].flags, (unsigned long long)j->slot[i].pages);
	printf("total %llu\n", (unsigned long long)j->pages);
	printf("mode=%s seconds=%.6f pages=%llu mapcount_sum=%llu preads=%llu\n", mode, seconds,
	       (unsigned long long)j->pages, (unsigned long long)j->mapcount, (unsigned long long)j->preads);
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "pagetypes_join: cannot open %s: %s\n", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	struct join j = { .kcgroup = -1 };
	int batch = 0, cgroup = 0, a, r;
	char path[64], *end;
	double t0;
	long pid;

	for (a = 1; a < argc - 1; a++) {
		if (!strcmp(argv[a], "--batch"))
			batch = 1;
		else if (!strcmp(argv[a], "--bulk"))
			batch = 2;
		else if (!strcmp(argv[a], "--cgroup"))
			cgroup = 1;
		else
			break;
	}
	if (a != argc - 1) {
		fprintf(stderr, "Usage: pagetypes_join [--batch|--bulk] [--cgroup] PID\n"
				"Join PID's present pages with their frames as page-types -p does: per page, one\n"
				"8-byte pread of /proc/kpageflags and /proc/kpagecount (and /proc/kpagecgroup with\n"
				"--cgroup) at its PFN. The pagemap entry is one pread per page too, or with --batch\n"
				"read 64Ki entries per pread as page-types does. Prints the summary by cooked flags\n"
				"(as pagemap phys -s), the total and the sum of map counts. Needs root.\n"
				"--bulk is not page-types but the floor of any join: pagemap in 64Ki batches,\n"
				"then the PFNs sorted and the frame files read once per span of nearby PFNs.\n");
		return 2;
	}
	pid = strtol(argv[a], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "pagetypes_join: invalid PID '%s'\n", argv[a]);
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%ld/pagemap", pid);
	t0 = now();
	if ((j.pagemap = open_ro(path)) < 0 || (j.kflags = open_ro("/proc/kpageflags")) < 0 ||
	    (j.kcount = open_ro("/proc/kpagecount")) < 0 || (cgroup && (j.kcgroup = open_ro("/proc/kpagecgroup")) < 0))
		return 1;
	if (batch == 2 && !(j.pfns = malloc(65536 * sizeof(*j.pfns)))) {
		fprintf(stderr, "pagetypes_join: %s\n", strerror(ENOMEM));
		return 1;
	}
	j.cap_pfns = batch == 2 ? 65536 : 0;
	r = walk_process(&j, pid, batch);
	if (r == 0 && batch == 2)
		r = join_bulk(&j);
	t0 = now() - t0;
	if (r < 0) {
		fprintf(stderr, "pagetypes_join: process %ld: %s\n", pid, strerror(-r));
		return 1;
	}
	print_summary(&j, t0, batch == 2 ? "bulk" : batch ? "batch" : "per-page");
	free(j.slot);
	free(j.pfns);
	return 0;
}
