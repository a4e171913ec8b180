/* replay.h - build throw-away replayed roots (a fake "/" with proc and sys files) for the unit tests. */
#ifndef PM_TEST_REPLAY_H
#define PM_TEST_REPLAY_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Make a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path or NULL. */
static inline char *rp_new_root(void)
{
	const char *tmp = getenv("TMPDIR");
	char *p;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (asprintf(&p, "%s/pm-unit-XXXXXX", tmp) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* mkdir -p of the directory part of ROOT/REL (REL without a leading slash is fine too). */
static inline int rp_mkdirs(const char *root, const char *rel)
{
	char path[PATH_MAX];
	char *s;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* Write @len bytes to ROOT/REL, creating directories; returns 0 or -errno. */
static inline int rp_write(const char *root, const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	int fd, r = rp_mkdirs(root, rel);

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (len && write(fd, data, len) != (ssize_t)len) {
		r = -EIO;
	}
	close(fd);
	return r;
}

static inline int rp_write_str(const char *root, const char *rel, const char *s)
{
	return rp_write(root, rel, s, strlen(s));
}

/* Store @n raw entries at virtual page @vpn of ROOT/REL (holes read as zero). */
static inline int rp_put_entries(const char *root, const char *rel, uint64_t vpn, const uint64_t *e, size_t n)
{
	char path[PATH_MAX];
	int fd, r = rp_mkdirs(root, rel);
	ssize_t w;

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	w = pwrite(fd, e, n * sizeof(*e), (off_t)(vpn * sizeof(*e)));
	close(fd);
	return w == (ssize_t)(n * sizeof(*e)) ? 0 : -EIO;
}

static inline int rp_put_entry(const char *root, const char *rel, uint64_t vpn, uint64_t e)
{
	return rp_put_entries(root, rel, vpn, &e, 1);
}

/* Truncate (or extend with zeros) ROOT/REL to @size bytes. */
static inline int rp_truncate(const char *root, const char *rel, off_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return truncate(path, size) < 0 ? -errno : 0;
}

static inline int rp_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* rm -rf ROOT and free the string (PM_TEST_KEEP=1 keeps it for debugging). NULL is fine. */
static inline void rp_free_root(char *root)
{
	const char *keep = getenv("PM_TEST_KEEP");

	if (!root)
		return;
	if (keep && *keep && strcmp(keep, "0"))
		printf("  kept %s\n", root);
	else
		nftw(root, rp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

/* A stat line for pid 1234 with state @state and flags @flags (the 9th field). */
static inline int rp_write_stat(const char *root, const char *rel, char state, unsigned long flags)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "1234 (cmd (x) y) %c 1 1234 1234 0 -1 %lu 101 0 0 0 0 0 0 0 20 0 1 0 80422 3133440 387 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 state, flags);
	return rp_write_str(root, rel, buf);
}

#endif
