/* cache_set.c - files in the page cache joined to the processes that map them or hold them open. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pages.h"
#include "cache.h"

/* Per process: maps (dev, ino) -> file index, so a file mapped five times is opened once. */
struct map_key {
	uint64_t mdev, ino;
	size_t file;
};

struct proc_scan {
	struct pm_cache *c;
	pid_t pid;
	struct map_key *keys;
	size_t nkeys, cap_keys;
	size_t first_use;
};

struct pm_cache *pm_cache_new(struct pm_ctx *ctx)
{
	struct pm_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ctx = ctx;
	return c;
}

void pm_cache_free(struct pm_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	free(c->slots);
	free(c->uses);
	free(c->frames);
	free(c->frame_use);
	free(c);
}

size_t pm_cache_nfiles(const struct pm_cache *c)
{
	return c->nfiles;
}

const struct pm_cache_file *pm_cache_file_at(const struct pm_cache *c, size_t i)
{
	return i < c->nfiles ? &c->files[i].pub : NULL;
}

size_t pm_cache_nuses(const struct pm_cache *c)
{
	return c->nuses;
}

const struct pm_cache_use *pm_cache_use_at(const struct pm_cache *c, size_t i)
{
	return i < c->nuses ? &c->uses[i] : NULL;
}

static size_t hash_key(uint64_t dev, uint64_t ino, size_t nslots)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ULL) ^ (ino * 0xc2b2ae3d27d4eb4fULL);

	return (size_t)((h ^ (h >> 29)) & (nslots - 1));
}

/* The index of the file (dev, ino), or (size_t)-1. */
static size_t find_file(const struct pm_cache *c, uint64_t dev, uint64_t ino)
{
	size_t h;

	if (!c->nslots)
		return (size_t)-1;
	for (h = hash_key(dev, ino, c->nslots); c->slots[h]; h = (h + 1) & (c->nslots - 1)) {
		const struct pm_cache_stat *s = &c->files[c->slots[h] - 1].pub.stat;
		if (s->dev == dev && s->ino == ino)
			return c->slots[h] - 1;
	}
	return (size_t)-1;
}

static void slot_insert(struct pm_cache *c, size_t idx)
{
	const struct pm_cache_stat *s = &c->files[idx].pub.stat;
	size_t h = hash_key(s->dev, s->ino, c->nslots);

	while (c->slots[h])
		h = (h + 1) & (c->nslots - 1);
	c->slots[h] = idx + 1;
}

/* Keep the table under half full. */
static int grow_slots(struct pm_cache *c)
{
	size_t n = c->nslots ? c->nslots * 2 : 1024, i;
	size_t *s;

	if ((c->nfiles + 1) * 2 <= c->nslots)
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(c->slots);
	c->slots = s;
	c->nslots = n;
	for (i = 0; i < c->nfiles; i++)
		slot_insert(c, i);
	return 0;
}

/* Add a measured file (its stat.dev/ino set); returns its index or -ENOMEM. */
static long add_file(struct pm_cache *c, const struct pm_cache_stat *st, const char *path, size_t path_len,
		     bool deleted)
{
	struct file_rec *f;

	if (grow_slots(c) < 0 || pmi_grow(&c->files, &c->cap_files, c->nfiles + 1, sizeof(*c->files)) < 0)
		return -ENOMEM;
	f = &c->files[c->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strndup(path, path_len);
	if (!f->path)
		return -ENOMEM;
	f->pub.path = f->path;
	f->pub.stat = *st;
	f->pub.deleted = deleted;
	slot_insert(c, c->nfiles);
	return (long)c->nfiles++;
}

int pm_cache_add_at(struct pm_cache *c, int dirfd, const char *name, const char *path)
{
	struct pm_cache_stat st;
	struct stat sb;
	size_t i;
	long r;

	/* Look the inode up before opening: a hard link or bind mount seen before costs one stat. */
	if (fstatat(dirfd, name, &sb, 0) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	i = find_file(c, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
	if (i == (size_t)-1) {
		r = pmi_cache_measure_at(c->ctx, dirfd, name, &sb, &st);
		if (r == -ENOENT || r == -EINVAL || r == -ENOMEM)
			return (int)r;
		if (!st.dev && !st.ino) {	/* fstat of the opened file failed */
			st.dev = (uint64_t)sb.st_dev;
			st.ino = (uint64_t)sb.st_ino;
		}
		r = add_file(c, &st, path, strlen(path), false);
		if (r < 0)
			return (int)r;
		i = (size_t)r;
	}
	c->files[i].pub.via |= PM_CACHE_VIA_ARG;
	return 0;
}

int pm_cache_add_path(struct pm_cache *c, const char *path)
{
	return pm_cache_add_at(c, AT_FDCWD, path, path);
}

int pmi_map_files_name(uint64_t start, uint64_t end, char *buf, size_t size)
{
	int n = snprintf(buf, size, "map_files/%llx-%llx", (unsigned long long)start, (unsigned long long)end);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Open a process's file through ROOT/proc/PID/@rel, for cachestat only: never read. */
static int open_proc_file(const struct pm_ctx *ctx, pid_t pid, const char *rel)
{
	char path[4096];
	int fd, r = pmi_pid_path(ctx, path, sizeof(path), pid, rel);

	if (r < 0)
		return r;
	fd = pmi_open(ctx, path, O_RDONLY | O_NOATIME | O_NONBLOCK | O_NOCTTY);
	if (fd == -EPERM)
		fd = pmi_open(ctx, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	return fd;
}

/*
 * Measure and add the file behind @fd (-errno: not opened), or find it
 * when its (dev, ino) is known already. @mdev/@ino are what maps or the
 * link said, the key when the file cannot be opened.
 */
static long file_from_fd(struct pm_cache *c, int fd, uint64_t mdev, uint64_t ino, const char *path, size_t len,
			 bool deleted)
{
	struct pm_cache_stat st = { .dev = mdev, .ino = ino, .error = fd < 0 ? fd : 0 };
	struct stat sb;
	size_t i;

	if (fd >= 0 && fstat(fd, &sb) == 0) {
		st.dev = (uint64_t)sb.st_dev;
		st.ino = (uint64_t)sb.st_ino;
	}
	i = find_file(c, st.dev, st.ino);
	if (i != (size_t)-1)
		return (long)i;
	if (fd >= 0 && !c->ctx->live)
		st.error = -EOPNOTSUPP;	/* a replayed capture holds no page cache */
	else if (fd >= 0)
		pm_cache_stat_fd(c->ctx, fd, &st);
	if (st.error)
		st.method = PM_CACHE_UNKNOWN;
	return add_file(c, &st, path, len, deleted);
}

/* The use of file @fi by the current process, made on first sight. NULL on ENOMEM. */
static struct pm_cache_use *use_of(struct proc_scan *ps, size_t fi, unsigned via)
{
	struct pm_cache *c = ps->c;
	struct file_rec *f = &c->files[fi];
	struct pm_cache_use *u;

	if (f->last_proc != c->proc_seq) {
		if (pmi_grow(&c->uses, &c->cap_uses, c->nuses + 1, sizeof(*c->uses)) < 0)
			return NULL;
		u = &c->uses[c->nuses];
		memset(u, 0, sizeof(*u));
		u->pid = ps->pid;
		u->file = fi;
		u->mapped_only_known = true;	/* held open only: nothing mapped, known */
		u->charged_known = c->kpage != NULL;
		f->last_proc = c->proc_seq;
		f->last_use = c->nuses++;
		f->pub.nprocs++;
	}
	u = &c->uses[f->last_use];
	u->via |= via;
	f->pub.via |= via;
	return u;
}

/* The file of mapping @m: looked up per process by maps (dev, ino), else opened and measured. */
static long map_file(struct proc_scan *ps, const struct pm_mapping *m)
{
	uint64_t mdev = ((uint64_t)m->dev_major << 20) | m->dev_minor;
	char rel[128], path[4096];
	size_t i, len = m->path_len;
	int fd;
	long r;

	for (i = 0; i < ps->nkeys; i++)
		if (ps->keys[i].mdev == mdev && ps->keys[i].ino == m->inode)
			return (long)ps->keys[i].file;
	if (pmi_map_files_name(m->start, m->end, rel, sizeof(rel)) < 0)
		return -ENAMETOOLONG;
	fd = open_proc_file(ps->c->ctx, ps->pid, rel);
	/* map_files needs CAP_SYS_ADMIN; a file not deleted is reachable through the process's root. */
	if (fd < 0 && !m->deleted && len && m->path[0] == '/' && len < 4000) {
		snprintf(path, sizeof(path), "root%.*s", (int)len, m->path);
		fd = open_proc_file(ps->c->ctx, ps->pid, path);
	}
	if (m->deleted && len >= 10)
		len -= 10;	/* " (deleted)" */
	r = file_from_fd(ps->c, fd, mdev, m->inode, m->path, len, m->deleted);
	if (fd >= 0)
		close(fd);
	if (r < 0 || pmi_grow(&ps->keys, &ps->cap_keys, ps->nkeys + 1, sizeof(*ps->keys)) < 0)
		return r < 0 ? r : -ENOMEM;
	ps->keys[ps->nkeys++] = (struct map_key){ mdev, m->inode, (size_t)r };
	return r;
}

/* One pagemap walk: every file mapping becomes a use; its present file pages its mapped bytes. */
static int scan_maps(struct proc_scan *ps, struct pm_target *t)
{
	struct pm_cache *c = ps->c;
	uint64_t memcg = c->kpage ? pmi_cache_proc_memcg(c, ps->pid) : 0;
	/* Frames are needed only to ask kpagecgroup who pays. */
	struct pm_walk *w = pmi_walk_open(t, 0, UINT64_MAX, PM_WALK_ENTRIES, c->kpage ? 0 : PMI_IWALK_NOFRAMES);
	uint64_t last_start = 0, last_end = 0;	/* the walker may reuse its mapping record */
	struct pm_cache_use *u = NULL;
	const struct pm_run *run;
	bool excl_known;
	int r;

	if (!w)
		return -errno;
	excl_known = pm_walk_known(w) & PM_PAGE_EXCLUSIVE;
	while ((r = pm_walk_next(w, &run)) == 0) {
		const struct pm_mapping *m = run->map;
		if (m->start != last_start || m->end != last_end) {
			long fi;
			last_start = m->start;
			last_end = m->end;
			u = NULL;
			if (m->kind != PM_MAP_FILE || !m->inode)
				continue;
			fi = map_file(ps, m);
			if (fi < 0 || !(u = use_of(ps, (size_t)fi, PM_CACHE_VIA_MAP))) {
				r = fi < 0 ? (int)fi : -ENOMEM;
				break;
			}
			u->mapped_only_known = excl_known;
			u->charged_known = c->kpage != NULL;
			u->memcg = memcg;
		}
		if (!u || (run->flags & (PM_PAGE_PRESENT | PM_PAGE_FILE)) != (PM_PAGE_PRESENT | PM_PAGE_FILE))
			continue;
		u->mapped += run->end - run->start;
		if (run->flags & PM_PAGE_EXCLUSIVE)
			u->mapped_only += run->end - run->start;
		if (c->kpage && (run->flags & PM_PAGE_FRAME)) {
			int e = pmi_cache_push_frames(c, (size_t)(u - c->uses), run->pfn,
						     (run->end - run->start) / pm_ctx_features(c->ctx)->page_size);
			if (e < 0) {
				r = e;
				break;
			}
		} else if (c->kpage)
			u->charged_known = false;	/* frames hidden: who pays is unknown */
	}
	pm_walk_free(w);
	if (r >= 0 && c->kpage)
		r = pmi_cache_flush_frames(c);
	else
		c->nframes = 0;
	return r < 0 ? r : 0;
}

/*
 * Files held open through descriptors. stat() through the magic link gives
 * the inode without opening anything; only a regular file not seen before
 * is opened (reopened through the link: the process's own open mode does
 * not matter) and measured.
 */
static int scan_fds(struct proc_scan *ps)
{
	struct pm_cache *c = ps->c;
	char dir[4096], rel[64], link[4096];
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int r = pmi_ctx_tree(c->ctx);	/* first: it names the root */

	if (r < 0 || (r = pmi_pid_path(c->ctx, dir, sizeof(dir), ps->pid, "fd")) < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char full[4200];
		size_t fi;
		ssize_t n;

		if (de->d_name[0] == '.' || strlen(de->d_name) > 20)
			continue;
		snprintf(rel, sizeof(rel), "fd/%s", de->d_name);
		snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
		if (stat(full, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;	/* closed meanwhile, or a pipe, socket, device */
		fi = find_file(c, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
		if (fi == (size_t)-1) {
			int fd = open_proc_file(c->ctx, ps->pid, rel);
			long x;
			bool deleted;

			n = readlink(full, link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			deleted = n > 10 && !strcmp(link + n - 10, " (deleted)");
			if (deleted)
				link[n - 10] = '\0';
			x = file_from_fd(c, fd, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino, link, strlen(link), deleted);
			if (fd >= 0)
				close(fd);
			if (x < 0) {
				r = (int)x;
				break;
			}
			fi = (size_t)x;
		}
		if (!use_of(ps, fi, PM_CACHE_VIA_FD)) {
			r = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return r;
}

/* Forget the uses of a process that failed half way (its files stay: they were measured). */
static void drop_uses(struct pm_cache *c, size_t first)
{
	size_t i;

	for (i = first; i < c->nuses; i++)
		c->files[c->uses[i].file].pub.nprocs--;
	c->nuses = first;
}

int pm_cache_add_process(struct pm_cache *c, pid_t pid)
{
	struct proc_scan ps = { .c = c, .pid = pid, .first_use = c->nuses };
	struct pm_target *t = pm_target_open(c->ctx, pid);
	int r;

	if (!t)
		return -errno;
	c->proc_seq++;
	r = scan_maps(&ps, t);
	pm_target_close(t);
	/* A process whose descriptors we may not list still shows what it maps. */
	if (r == 0) {
		int e = scan_fds(&ps);
		if (e == -ENOMEM)
			r = e;
		else if (e < 0)
			pmi_dbg(c->ctx, "cache: %d: cannot list fd: %s", (int)pid, pmi_strerror(-e));
	}
	free(ps.keys);
	if (r < 0)
		drop_uses(c, ps.first_use);
	return r;
}
