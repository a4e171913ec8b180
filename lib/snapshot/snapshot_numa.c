/*
 * snapshot_numa.c - the NUMA topology a snapshot keeps: the sysfs files
 * lib/analysis/numa_topo.c reads (nodes, their memory blocks, memory tiers), so that
 * `pagemap numa`, `maps -o +NODES` and `pages -o +NODE` replay as they ran; gathered
 * with the machine's other files (snapshot_sys.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"

#define NODE_DIR "sys/devices/system/node"
#define TIER_DIR "sys/devices/virtual/memory_tiering"

/* Is @name @prefix followed by digits only ("node3", "memory120")? */
static bool numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) && name[n] && strspn(name + n, "0123456789") == strlen(name + n);
}

/* Read ROOT/@rel for the snapshot at @rel; a file that cannot be opened is left out, as the reader expects. */
static int copy(struct snap_sys *s, const struct pm_ctx *ctx, const char *rel)
{
	char live[512];
	int r;

	if ((r = pmi_path(ctx, live, sizeof(live), "/%s", rel)) < 0)
		return r;
	return pmi_snap_sys_read(s, ctx, live, rel, false);
}

/* The entries of ROOT/@rel named @prefix + digits, each given to @fn; a missing directory has none. */
static int each_numbered(struct snap_sys *s, const struct pm_ctx *ctx, const char *rel, const char *prefix,
			 int (*fn)(struct snap_sys *, const struct pm_ctx *, const char *))
{
	char live[512], child[512];
	struct dirent *e;
	DIR *d;
	int r = 0;

	if ((r = pmi_path(ctx, live, sizeof(live), "/%s", rel)) < 0)
		return r;
	if (!(d = opendir(live)))
		return 0;
	while (!r && (e = readdir(d)))
		if (numbered(e->d_name, prefix) &&
		    (size_t)snprintf(child, sizeof(child), "%s/%s", rel, e->d_name) < sizeof(child))
			r = fn(s, ctx, child);
	closedir(d);
	return r;
}

/* A memory block of a node: only its name is read (a symlink on a live system), so an empty file. */
static int add_block(struct snap_sys *s, const struct pm_ctx *ctx, const char *rel)
{
	(void)ctx;
	return pmi_snap_sys_name(s, rel);
}

static int add_node(struct snap_sys *s, const struct pm_ctx *ctx, const char *rel)
{
	static const char *const files[] = { "cpulist", "distance", "meminfo", "vmstat" };
	char path[512];
	size_t i;
	int r = 0;

	for (i = 0; i < PMI_ARRAY_SIZE(files) && !r; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", rel, files[i]) < sizeof(path))
			r = copy(s, ctx, path);
	return r ? r : each_numbered(s, ctx, rel, "memory", add_block);
}

static int add_tier(struct snap_sys *s, const struct pm_ctx *ctx, const char *rel)
{
	char path[512];

	if ((size_t)snprintf(path, sizeof(path), "%s/nodelist", rel) >= sizeof(path))
		return 0;
	return copy(s, ctx, path);
}

int pmi_snap_numa_gather(struct snap_sys *s, const struct pm_ctx *ctx)
{
	int r = copy(s, ctx, "sys/devices/system/memory/block_size_bytes");

	if (!r)
		r = each_numbered(s, ctx, NODE_DIR, "node", add_node);
	return r ? r : each_numbered(s, ctx, TIER_DIR, "memory_tier", add_tier);
}
