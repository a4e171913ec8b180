/* cache_cgroup.c - who pays for mapped page cache: the memory cgroup kpagecgroup names against the mapping process's. */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cache.h"

/* Frames per kpagecgroup lookup: 16384 * 40 bytes of batch. */
#define CG_BATCH 16384

int pm_cache_set_kpage(struct pm_cache *c, struct pm_kpage *k)
{
	int r = k ? pm_kpage_status(k, PM_KPAGE_CGROUP) : 0;

	if (r < 0)
		return r;
	if (k && !c->frames) {
		c->frames = malloc(CG_BATCH * sizeof(*c->frames));
		c->frame_use = malloc(CG_BATCH * sizeof(*c->frame_use));
		if (!c->frames || !c->frame_use)
			return -ENOMEM;
	}
	c->kpage = k;
	return 0;
}

/*
 * The inode of @pid's memory cgroup directory (kpagecgroup's number), 0
 * unknown: the path pm_memcg_of() reads, under the v1 memory hierarchy if
 * there is one, else the v2 tree. A path that is not absolute is ignored.
 */
uint64_t pmi_cache_proc_memcg(struct pm_cache *c, pid_t pid)
{
	static const char *const base[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup" };
	char path[4096], cg[4096];
	struct stat st;
	size_t i;

	if (pm_memcg_of(c->ctx, pid, cg, sizeof(cg)) < 0 || cg[0] != '/' || pmi_ctx_tree(c->ctx) < 0)
		return 0;
	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if (pmi_path(c->ctx, path, sizeof(path), "%s%s", base[i], cg) == 0 && stat(path, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			return (uint64_t)st.st_ino;
	return 0;
}

int pmi_cache_push_frames(struct pm_cache *c, size_t use, uint64_t pfn, uint64_t npages)
{
	uint64_t i;
	int r;

	for (i = 0; i < npages; i++) {
		if (c->nframes == CG_BATCH && (r = pmi_cache_flush_frames(c)) < 0)
			return r;
		c->frames[c->nframes].pfn = pfn + i;
		c->frame_use[c->nframes++] = use;
	}
	return 0;
}

/* Majority vote (Boyer-Moore) per use: the other cgroup charged for most of its pages when one has most. */
static void charge(struct pm_cache_use *u, uint64_t memcg, uint64_t page, uint64_t *votes)
{
	if (memcg && memcg == u->memcg) {
		u->charged_own += page;
		return;
	}
	u->charged_other += page;
	if (u->other_memcg == memcg)
		(*votes)++;
	else if (*votes == 0) {
		u->other_memcg = memcg;
		*votes = 1;
	} else
		(*votes)--;
}

int pmi_cache_flush_frames(struct pm_cache *c)
{
	uint64_t page = pm_ctx_features(c->ctx)->page_size, votes = 0;
	unsigned saved = pmi_kpage_selected(c->kpage);
	size_t i;
	int r;

	if (!c->nframes)
		return 0;
	pm_kpage_select(c->kpage, PM_KPAGE_BIT(PM_KPAGE_CGROUP));
	r = pm_kpage_lookup(c->kpage, c->frames, c->nframes);
	pm_kpage_select(c->kpage, saved);
	for (i = 0; r == 0 && i < c->nframes; i++) {
		struct pm_cache_use *u = &c->uses[c->frame_use[i]];
		if (i && c->frame_use[i] != c->frame_use[i - 1])
			votes = 0;
		charge(u, c->frames[i].cgroup, page, &votes);
	}
	c->nframes = 0;
	return r;
}

/* Depth-first search of @dir (@len bytes used of @size) for a directory with inode @ino; 1 found, 0 not, <0. */
static int find_dir(char *dir, size_t len, size_t size, uint64_t ino, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = 0;

	if (depth > 64 || !(d = opendir(dir)))
		return 0;
	while (r == 0 && (de = readdir(d))) {
		int n;
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n = snprintf(dir + len, size - len, "/%s", de->d_name);
		if (n < 0 || (size_t)n >= size - len)
			continue;
		if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (uint64_t)st.st_ino == ino)
			r = 1;
		else
			r = find_dir(dir, len + (size_t)n, size, ino, depth + 1);
		if (r == 0)
			dir[len] = '\0';
	}
	closedir(d);
	return r;
}

int pm_cache_cgroup_path(struct pm_cache *c, uint64_t ino, char *buf, size_t size)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup" };
	char dir[4096];
	struct stat st;
	size_t i, base;

	for (i = 0; ino && i < PMI_ARRAY_SIZE(mounts) && pmi_ctx_tree(c->ctx) == 0; i++) {
		if (pmi_path(c->ctx, dir, sizeof(dir), "%s", mounts[i]) < 0 || stat(dir, &st) < 0)
			continue;
		base = strlen(dir);
		if ((uint64_t)st.st_ino != ino && find_dir(dir, base, sizeof(dir), ino, 0) != 1)
			continue;
		if (snprintf(buf, size, "%s", dir[base] ? dir + base : "/") >= (int)size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}
