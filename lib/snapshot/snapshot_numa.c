/*
 * snapshot_numa.c - the NUMA topology a snapshot keeps: the sysfs files
 * lib/analysis/numa_topo.c reads (nodes, their memory blocks, memory tiers), so that
 * `pagemap numa`, `maps -o +NODES` and `pages -o +NODE` replay as they ran.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

/* Copy ROOT/@rel into the snapshot at @rel; a file that cannot be opened is left out, as the reader expects. */
static int copy(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *rel)
{
	char live[512];
	int fd, r;

	if ((r = pmi_path(ctx, live, sizeof(live), "/%s", rel)) < 0)
		return r;
	fd = pmi_open(ctx, live, O_RDONLY);
	if (fd < 0)
		return 0;
	r = pmi_snap_w_stream(w, rel, fd);
	close(fd);
	return r;
}

/* The entries of ROOT/@rel named @prefix + digits, each given to @fn; a missing directory has none. */
static int each_numbered(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *rel, const char *prefix,
			 int (*fn)(struct pm_snapshot_writer *, struct pm_ctx *, const char *))
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
			r = fn(w, ctx, child);
	closedir(d);
	return r;
}

/* A memory block of a node: only its name is read (a symlink on a live system), so an empty file. */
static int add_block(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *rel)
{
	int id = pmi_snap_w_file(w, rel, PM_SNAPSHOT_BYTES, 0);

	(void)ctx;
	return id < 0 ? id : 0;
}

static int add_node(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *rel)
{
	static const char *const files[] = { "cpulist", "distance", "meminfo", "vmstat" };
	char path[512];
	size_t i;
	int r = 0;

	for (i = 0; i < PMI_ARRAY_SIZE(files) && !r; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", rel, files[i]) < sizeof(path))
			r = copy(w, ctx, path);
	return r ? r : each_numbered(w, ctx, rel, "memory", add_block);
}

static int add_tier(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *rel)
{
	char path[512];

	if ((size_t)snprintf(path, sizeof(path), "%s/nodelist", rel) >= sizeof(path))
		return 0;
	return copy(w, ctx, path);
}

int pmi_snap_add_numa(struct pm_snapshot_writer *w, struct pm_ctx *ctx)
{
	int r = copy(w, ctx, "sys/devices/system/memory/block_size_bytes");

	if (!r)
		r = each_numbered(w, ctx, NODE_DIR, "node", add_node);
	return r ? r : each_numbered(w, ctx, TIER_DIR, "memory_tier", add_tier);
}
