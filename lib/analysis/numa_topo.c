/* numa_topo.c - the machine's NUMA nodes from sysfs: CPUs, memory blocks (frame ranges), distances, tiers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "numa.h"

#define NODE_DIR "/sys/devices/system/node"
#define MEMORY_DIR "/sys/devices/system/memory"
#define TIER_DIR "/sys/devices/virtual/memory_tiering"

/* The directory entries of ROOT/@dir named PREFIX<number>, as numbers, sorted. */
static int list_numbered(const struct pm_ctx *ctx, const char *dir, const char *prefix, long **out, size_t *n)
{
	char path[4096];
	size_t cap = 0, len = strlen(prefix);
	struct dirent *de;
	DIR *d;
	int r = pmi_ctx_tree(ctx);	/* first: it names the root */

	*out = NULL;
	*n = 0;
	if (r < 0 || (r = pmi_path(ctx, path, sizeof(path), "%s", dir)) < 0)
		return r;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long v;

		if (strncmp(de->d_name, prefix, len) || !de->d_name[len])
			continue;
		errno = 0;
		v = strtol(de->d_name + len, &end, 10);
		if (*end || errno || v < 0 || v > PMI_NUMA_MAX_ID)
			continue;
		if (*n == cap) {
			long *more = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof(*more));

			if (!more) {
				closedir(d);
				free(*out);
				*out = NULL;
				return -ENOMEM;
			}
			*out = more;
		}
		(*out)[(*n)++] = v;
	}
	closedir(d);
	qsort(*out, *n, sizeof(**out), pmi_numa_cmp_long);
	return 0;
}

int pmi_numa_cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/*
 * Parse a sysfs list ("0-3,8,10-11", empty, or with a newline) and call
 * @fn for each number in it. Returns 0, or -EINVAL for anything else
 * (numbers over PMI_NUMA_MAX_CPU refused: a hostile tree cannot make us loop).
 */
int pmi_numa_parse_list(const char *s, void (*fn)(long v, void *data), void *data)
{
	while (*s && *s != '\n') {
		char *end;
		long a, b;

		a = strtol(s, &end, 10);
		if (end == s || a < 0 || a > PMI_NUMA_MAX_CPU)
			return -EINVAL;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b > PMI_NUMA_MAX_CPU)
				return -EINVAL;
			s = end;
		}
		for (; a <= b; a++)
			fn(a, data);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

struct cpu_add {
	struct pm_numa *n;
	int index;
};

static void add_cpu(long cpu, void *data)
{
	struct cpu_add *a = data;

	if ((size_t)cpu < PMI_ARRAY_SIZE(a->n->cpu_node))
		a->n->cpu_node[cpu] = (int16_t)a->index;
	a->n->nodes[a->index].ncpus++;
}

/* A small text file under ROOT into @buf; "" where it cannot be read. */
static void read_text(const struct pm_ctx *ctx, char *buf, size_t size, const char *fmt, long id)
{
	char path[4096];

	buf[0] = '\0';
	if (pmi_path(ctx, path, sizeof(path), fmt, id) < 0 || pmi_read_small_file(ctx, path, buf, size) < 0)
		buf[0] = '\0';
}

/* "Node 0 MemTotal:  24571212 kB" lines of nodeN/meminfo. */
static uint64_t meminfo_bytes(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	unsigned long long kb;

	if (!p || sscanf(p + strlen(key), " %llu", &kb) != 1 || kb > UINT64_MAX / 1024)
		return 0;
	return kb * 1024;
}

/* The sum of the counters named in @keys (NULL-terminated) in a vmstat text. */
static uint64_t vmstat_sum(const char *text, const char *const *keys)
{
	uint64_t sum = 0;

	for (; *keys; keys++) {
		size_t len = strlen(*keys);
		const char *p = text;
		unsigned long long v;

		while ((p = strstr(p, *keys))) {
			if ((p == text || p[-1] == '\n') && p[len] == ' ' && sscanf(p + len, " %llu", &v) == 1) {
				sum += v;
				break;
			}
			p += len;
		}
	}
	return sum;
}

static int read_node(struct pm_numa *n, int i, long id)
{
	static const char *const promoted[] = { "pgpromote_success", NULL };
	static const char *const demoted[] = { "pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged",
					       "pgdemote_proactive", NULL };
	struct pm_numa_node *node = &n->nodes[i];
	struct cpu_add a = { n, i };
	char *text = malloc(PMI_NUMA_TEXT_MAX);

	if (!text)
		return -ENOMEM;
	node->id = (int)id;
	node->tier = -1;
	read_text(n->ctx, node->cpulist, sizeof(node->cpulist), NODE_DIR "/node%ld/cpulist", id);
	node->cpulist[strcspn(node->cpulist, "\n")] = '\0';
	if (pmi_numa_parse_list(node->cpulist, add_cpu, &a) < 0)
		node->ncpus = 0;
	read_text(n->ctx, text, PMI_NUMA_TEXT_MAX, NODE_DIR "/node%ld/meminfo", id);
	node->mem_total = meminfo_bytes(text, "MemTotal:");
	node->mem_free = meminfo_bytes(text, "MemFree:");
	read_text(n->ctx, text, PMI_NUMA_TEXT_MAX, NODE_DIR "/node%ld/vmstat", id);
	node->promoted = vmstat_sum(text, promoted);
	node->demoted = vmstat_sum(text, demoted);
	read_text(n->ctx, text, PMI_NUMA_TEXT_MAX, NODE_DIR "/node%ld/distance", id);
	pmi_numa_parse_distances(n, i, text);
	free(text);
	return 0;
}

/* nodeN/distance: one number per online node, in node order. */
void pmi_numa_parse_distances(struct pm_numa *n, int i, const char *text)
{
	const char *s = text;
	size_t j;

	for (j = 0; j < n->count; j++) {
		char *end;
		long d = strtol(s, &end, 10);

		if (end == s || d < 0 || d > 255)
			break;
		n->distance[(size_t)i * n->count + j] = (int16_t)d;
		s = end;
	}
}

/* The frame ranges of node @i: its memoryM entries, each block_size bytes. */
static int read_blocks(struct pm_numa *n, int i, uint64_t block_pages)
{
	char dir[64];
	long *blocks;
	size_t nb, b;
	int r;

	snprintf(dir, sizeof(dir), NODE_DIR "/node%d", n->nodes[i].id);
	r = list_numbered(n->ctx, dir, "memory", &blocks, &nb);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	for (b = 0; b < nb; b++) {
		uint64_t start = (uint64_t)blocks[b] * block_pages;

		if (n->nranges && n->ranges[n->nranges - 1].index == i && n->ranges[n->nranges - 1].end == start) {
			n->ranges[n->nranges - 1].end += block_pages;
			continue;
		}
		if (n->nranges == n->range_cap) {
			size_t cap = n->range_cap ? 2 * n->range_cap : 16;
			struct pmi_numa_range *more = realloc(n->ranges, cap * sizeof(*more));

			if (!more) {
				free(blocks);
				return -ENOMEM;
			}
			n->ranges = more;
			n->range_cap = cap;
		}
		n->ranges[n->nranges++] = (struct pmi_numa_range){ start, start + block_pages, i };
	}
	free(blocks);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct pmi_numa_range *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Memory block size in pages, 0 where sysfs has no memory blocks (no memory hotplug). */
static uint64_t block_pages(struct pm_numa *n)
{
	char path[4096], buf[64];
	unsigned long long bytes;
	unsigned ps = pm_ctx_features(n->ctx)->page_size;

	if (!ps || pmi_path(n->ctx, path, sizeof(path), MEMORY_DIR "/block_size_bytes") < 0 ||
	    pmi_read_small_file(n->ctx, path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%llx", &bytes) != 1 ||
	    bytes < ps || bytes % ps)
		return 0;
	return bytes / ps;
}

struct tier_set {
	struct pm_numa *n;
	int tier;
};

static void set_tier(long id, void *data)
{
	struct tier_set *t = data;
	int i = pm_numa_index_of_id(t->n, (int)id);

	if (i >= 0)
		t->n->nodes[i].tier = t->tier;
}

/* memory_tierN/nodelist (6.1+): the tier of each node; lower N is faster memory. */
static int read_tiers(struct pm_numa *n)
{
	long *tiers;
	size_t nt, i;
	int r = list_numbered(n->ctx, TIER_DIR, "memory_tier", &tiers, &nt);

	if (r < 0)
		return r == -ENOMEM ? r : 0;
	for (i = 0; i < nt; i++) {
		struct tier_set t = { n, (int)tiers[i] };
		char buf[256];

		read_text(n->ctx, buf, sizeof(buf), TIER_DIR "/memory_tier%ld/nodelist", tiers[i]);
		pmi_numa_parse_list(buf, set_tier, &t);
	}
	free(tiers);
	return 0;
}

static int load(struct pm_numa *n)
{
	long *ids;
	size_t i;
	uint64_t bp;
	int r = list_numbered(n->ctx, NODE_DIR, "node", &ids, &n->count);

	if (r < 0)
		return r == -ENOENT ? -EOPNOTSUPP : r;
	if (!n->count) {
		free(ids);
		return -EOPNOTSUPP;
	}
	n->nodes = calloc(n->count, sizeof(*n->nodes));
	n->distance = calloc(n->count * n->count, sizeof(*n->distance));
	if (!n->nodes || !n->distance) {
		free(ids);
		return -ENOMEM;
	}
	memset(n->distance, 0xff, n->count * n->count * sizeof(*n->distance));
	for (i = 0; i < n->count && !r; i++)
		r = read_node(n, (int)i, ids[i]);
	free(ids);
	bp = block_pages(n);
	for (i = 0; bp && i < n->count && !r; i++)
		r = read_blocks(n, (int)i, bp);
	if (r < 0)
		return r;
	qsort(n->ranges, n->nranges, sizeof(*n->ranges), cmp_range);
	for (i = 0; i < n->count; i++)
		n->nodes[i].has_memory = n->nodes[i].mem_total > 0;
	return read_tiers(n);
}

struct pm_numa *pm_numa_open(struct pm_ctx *ctx)
{
	struct pm_numa *n = calloc(1, sizeof(*n));
	int r;

	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	n->ctx = ctx;
	memset(n->cpu_node, 0xff, sizeof(n->cpu_node));
	r = load(n);
	if (r < 0) {
		pm_numa_close(n);
		errno = -r;
		return NULL;
	}
	return n;
}

void pm_numa_close(struct pm_numa *n)
{
	if (!n)
		return;
	free(n->nodes);
	free(n->distance);
	free(n->ranges);
	free(n);
}

size_t pm_numa_count(const struct pm_numa *n)
{
	return n->count;
}

const struct pm_numa_node *pm_numa_node(const struct pm_numa *n, size_t i)
{
	return i < n->count ? &n->nodes[i] : NULL;
}

int pm_numa_distance(const struct pm_numa *n, size_t i, size_t j)
{
	return i < n->count && j < n->count ? n->distance[i * n->count + j] : -1;
}

int pm_numa_index_of_id(const struct pm_numa *n, int id)
{
	size_t i;

	for (i = 0; i < n->count; i++)
		if (n->nodes[i].id == id)
			return (int)i;
	return -1;
}

int pm_numa_index_of_cpu(const struct pm_numa *n, unsigned cpu)
{
	return cpu < PMI_ARRAY_SIZE(n->cpu_node) ? n->cpu_node[cpu] : -1;
}

/*
 * One node machine: every frame is on it. Otherwise a binary search of the
 * memory-block ranges; *@next is where the answer may change, so a caller
 * walking a run of frames asks once per range, not once per frame.
 */
int pm_numa_index_of_pfn(const struct pm_numa *n, uint64_t pfn, uint64_t *next)
{
	size_t lo = 0, hi = n->nranges;

	if (n->count == 1) {
		*next = UINT64_MAX;
		return 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->ranges[mid].end <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n->nranges && n->ranges[lo].start <= pfn) {
		*next = n->ranges[lo].end;
		return n->ranges[lo].index;
	}
	*next = lo < n->nranges ? n->ranges[lo].start : UINT64_MAX;
	return -1;
}
