/* cache_file.c - the page cache state of one file: cachestat(2), or mincore(2) only where it tells the truth. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pages.h"
#include "cache.h"

/*
 * cachestat(2), Linux 6.5 (include/uapi/linux/mman.h). Debian 12's headers
 * (6.1) and glibc 2.36 have neither the number nor a wrapper; 451 is the
 * number on every architecture (the unified syscall table).
 */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct pmi_cachestat_range {
	uint64_t off, len;		/* len 0: to the end of the file */
};
struct pmi_cachestat_raw {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* mincore's window: its vector is one byte per page (256 KiB per GiB of file). */
#define MINCORE_WINDOW (1ULL << 30)

const char *pm_cache_method_name(enum pm_cache_method m)
{
	switch (m) {
	case PM_CACHE_CACHESTAT:
		return "cachestat";
	case PM_CACHE_MINCORE:
		return "mincore";
	case PM_CACHE_UNKNOWN:
		break;
	}
	return "unknown";
}

/* PAGEMAP_CACHE=cachestat|mincore forces a method, so tests cover both on one kernel. */
static enum pm_cache_method forced_method(void)
{
	const char *s = getenv("PAGEMAP_CACHE");

	if (s && !strcmp(s, "cachestat"))
		return PM_CACHE_CACHESTAT;
	if (s && !strcmp(s, "mincore"))
		return PM_CACHE_MINCORE;
	return PM_CACHE_UNKNOWN;
}

static int by_cachestat(int fd, uint64_t page, struct pm_cache_stat *out)
{
	struct pmi_cachestat_range r = { 0, 0 };
	struct pmi_cachestat_raw cs = { 0 };

	if (syscall(__NR_cachestat, fd, &r, &cs, 0) < 0)
		return -errno;
	out->cached = cs.nr_cache * page;
	out->dirty = cs.nr_dirty * page;
	out->writeback = cs.nr_writeback * page;
	out->evicted = cs.nr_evicted * page;
	out->recently_evicted = cs.nr_recently_evicted * page;
	out->known = PM_CACHE_ALL;
	out->method = PM_CACHE_CACHESTAT;
	return 0;
}

/*
 * mincore() on a file mapping reports every page resident unless the
 * caller owns the file, may write it, or is privileged (the kernel's
 * can_do_mincore(), Linux 5.0; util-linux#3602): only then is its answer
 * an answer. The same test in user space, erring towards "not trusted".
 */
static bool mincore_trusted(int fd, const struct stat *st)
{
	char self[64];

	if (geteuid() == 0 || st->st_uid == geteuid())
		return true;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return faccessat(AT_FDCWD, self, W_OK, AT_EACCESS) == 0;
}

/*
 * Count resident pages through a PROT_NONE shared mapping, one window at a
 * time: no page is read, faulted in or given a page table (mincore looks
 * the page cache up by offset), so nothing is perturbed.
 */
static int by_mincore(int fd, const struct stat *st, uint64_t page, struct pm_cache_stat *out)
{
	uint64_t size = (uint64_t)st->st_size, off, n = 0;
	unsigned char *vec;

	if (!mincore_trusted(fd, st))
		return -EPERM;
	vec = malloc(MINCORE_WINDOW / page);
	if (!vec)
		return -ENOMEM;
	for (off = 0; off < size; off += MINCORE_WINDOW) {
		size_t len = (size_t)(size - off < MINCORE_WINDOW ? size - off : MINCORE_WINDOW), i;
		void *p = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, (off_t)off);

		if (p == MAP_FAILED || mincore(p, len, vec) < 0) {
			int e = -errno;
			if (p != MAP_FAILED)
				munmap(p, len);
			free(vec);
			return e;
		}
		munmap(p, len);
		for (i = 0; i < (len + page - 1) / page; i++)
			n += vec[i] & 1;
	}
	free(vec);
	out->cached = n * page;
	out->known = PM_CACHE_CACHED;
	out->method = PM_CACHE_MINCORE;
	return 0;
}

int pm_cache_stat_fd(struct pm_ctx *ctx, int fd, struct pm_cache_stat *out)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	enum pm_cache_method force = forced_method();
	struct stat st;
	int r = -ENOSYS;

	(void)ctx;
	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) < 0)
		return out->error = -errno;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->size = (uint64_t)st.st_size;
	if (!S_ISREG(st.st_mode))
		return out->error = -EINVAL;
	if (force != PM_CACHE_MINCORE) {
		r = by_cachestat(fd, page, out);
		/* Only a kernel without cachestat (before 6.5) falls back; a refusal is the answer. */
		if (r != -ENOSYS || force == PM_CACHE_CACHESTAT)
			return out->error = r;
		pmi_dbg(ctx, "cachestat: ENOSYS, trying mincore");
	}
	r = by_mincore(fd, &st, page, out);
	/* -EPERM here: mincore would have said "all resident"; the reason to give is the missing cachestat. */
	if (r == -EPERM && force != PM_CACHE_MINCORE)
		r = -ENOSYS;
	out->error = r;
	return r;
}

/*
 * Open without reading: O_NOATIME where we own the file (else the open
 * fails with EPERM), O_NONBLOCK so a FIFO or device node swapped in after
 * the stat cannot block us.
 */
int pmi_cache_open_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOATIME | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pmi_cache_open(const char *path)
{
	return pmi_cache_open_at(AT_FDCWD, path);
}

/* Measure @name under @dirfd, whose stat @sb the caller took (a regular file is opened, nothing else). */
int pmi_cache_measure_at(struct pm_ctx *ctx, int dirfd, const char *name, const struct stat *sb,
			struct pm_cache_stat *out)
{
	int fd, r;

	memset(out, 0, sizeof(*out));
	out->dev = (uint64_t)sb->st_dev;
	out->ino = (uint64_t)sb->st_ino;
	out->size = (uint64_t)sb->st_size;
	/* Never open what is not a regular file: opening a device can have effects (a tape rewinds). */
	if (!S_ISREG(sb->st_mode))
		return out->error = -EINVAL;
	fd = pmi_cache_open_at(dirfd, name);
	if (fd < 0)
		return out->error = fd;
	r = pm_cache_stat_fd(ctx, fd, out);
	close(fd);
	return r;
}

int pm_cache_stat_path(struct pm_ctx *ctx, const char *path, struct pm_cache_stat *out)
{
	struct stat sb;

	if (stat(path, &sb) < 0) {
		memset(out, 0, sizeof(*out));
		return out->error = -errno;
	}
	return pmi_cache_measure_at(ctx, AT_FDCWD, path, &sb, out);
}

/*
 * Find "@name:" at the start of a line of meminfo-style @text and give its
 * value in bytes (the file says kB). Pure. Returns 0, -ENOENT if absent,
 * -EINVAL if the value is not a number or overflows.
 */
int pmi_meminfo_field(const char *text, const char *name, uint64_t *bytes)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, name, n) && p[n] == ':') {
			const char *s = p + n + 1;
			uint64_t v = 0;
			bool digits = false;

			while (*s == ' ' || *s == '\t')
				s++;
			for (; *s >= '0' && *s <= '9'; s++, digits = true) {
				uint64_t d = (uint64_t)(*s - '0');
				if (v > (UINT64_MAX / 1024 - d) / 10)
					return -EINVAL;	/* the bytes would not fit */
				v = v * 10 + d;
			}
			if (!digits)
				return -EINVAL;
			*bytes = v * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int pmi_meminfo_read(struct pm_ctx *ctx, const char *name, uint64_t *bytes)
{
	char path[4096], buf[16384];
	int r = pmi_path(ctx, path, sizeof(path), "/proc/meminfo");

	if (r < 0)
		return r;
	r = pmi_read_small_file(ctx, path, buf, sizeof(buf));
	if (r < 0)
		return r;
	r = pmi_meminfo_field(buf, name, bytes);
	if (r == -ENOENT || r == -EINVAL)
		return pmi_tree_error(ctx, "%s: no valid \"%s:\" line", path, name);
	return r;
}

int pm_cache_meminfo(struct pm_ctx *ctx, uint64_t *cached)
{
	return pmi_meminfo_read(ctx, "Cached", cached);
}
