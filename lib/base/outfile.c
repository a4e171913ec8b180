/* outfile.c - the one way pagemap writes an output file: never through, nor over, what someone else planted. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Temporary names tried before giving up: 64 random bits each, so a second collision means someone plants them. */
#define OUT_TRIES 16

struct pm_outfile {
	int fd;			/* where the content goes */
	int dirfd;		/* the target's directory */
	char name[NAME_MAX + 1];	/* the target's name in dirfd */
	char tmp[32];		/* the named temporary in dirfd, "" when none (O_TMPFILE, or in place) */
	unsigned flags;
	bool replace;		/* a file was there that publishing replaces (rename); else nothing may be there */
	bool in_place;		/* a device, FIFO or what one of our symlinks names: written as it is */
	bool committed;
};

/* The caller's umask without changing it (threads share it): /proc/self/status says it since Linux 4.7. */
static mode_t read_umask(void)
{
	char line[128];
	unsigned m;
	mode_t old;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1) {
			fclose(f);
			return (mode_t)m & 0777;
		}
	if (f)
		fclose(f);
	old = umask(022);
	umask(old);
	return old;
}

/* A name no one can guess: 64 bits from getrandom(), which never fails for 8 bytes once the pool is up. */
static int random_name(char *buf, size_t size)
{
	unsigned long long v;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		return errno ? -errno : -EIO;
	snprintf(buf, size, ".pagemap-%016llx", v);
	return 0;
}

/* The directory (opened) and the last component of @path, which must name an entry. */
static int split_path(struct pm_outfile *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	o->dirfd = pmi_open_parent(path, o->name);
	return o->dirfd < 0 ? o->dirfd : 0;
}

/*
 * Write into what is at the path as it is: a character device or FIFO, or
 * what a symlink of ours (or root's) names, as the shell's ">" would. Never
 * created (no O_CREAT: a dangling symlink is an error), never a block device,
 * socket or directory. A device or FIFO is opened O_NOFOLLOW and the
 * descriptor itself checked against what was looked at (the name may be
 * swapped for a symlink and back between the look and the open). Through a
 * symlink only a device or FIFO is written (/dev/stdout on a pipe or a
 * terminal): a regular file there, even one reached by our own link, is
 * EEXIST, never truncated nor written over (`>> out` would lose what it
 * held); write to the descriptor instead (pm_snapshot_create_fd()).
 */
static int open_in_place(struct pm_outfile *o, const struct stat *was)
{
	int nofollow = S_ISLNK(was->st_mode) ? 0 : O_NOFOLLOW;
	struct stat st, now;

	o->fd = openat(o->dirfd, o->name, O_WRONLY | O_NOCTTY | O_CLOEXEC | nofollow);
	if (o->fd < 0)
		return errno == ELOOP && nofollow ? -EAGAIN : -errno;	/* a symlink came in its place */
	if (fstat(o->fd, &st) < 0)
		return -errno;
	if (nofollow && (st.st_dev != was->st_dev || st.st_ino != was->st_ino))
		return -EAGAIN;	/* the entry was swapped between the look and the open */
	if (!nofollow && (fstatat(o->dirfd, o->name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
			  now.st_dev != was->st_dev || now.st_ino != was->st_ino))
		return -EAGAIN;	/* the link itself was swapped (a swap and back is caught by the S_ISREG refusal) */
	if (S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EPERM;
	if (S_ISREG(st.st_mode))
		return -EEXIST;
	o->in_place = true;
	return 0;
}

static int set_mode(struct pm_outfile *o)
{
	mode_t mode = (o->flags & PM_OUTFILE_PRIVATE) ? 0600 : 0644 & ~read_umask();

	return fchmod(o->fd, mode) < 0 ? -errno : 0;
}

/* A temporary in the target's directory: O_TMPFILE (never visible), else a random name made O_EXCL. */
static int open_temp(struct pm_outfile *o)
{
	int r;

	if (!getenv("PAGEMAP_NO_TMPFILE")) {
		o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			return set_mode(o);
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)	/* EISDIR: a kernel before 3.11 */
			return -errno;
	}
	for (int i = 0; i < OUT_TRIES; i++) {
		if ((r = random_name(o->tmp, sizeof(o->tmp))))
			break;
		o->fd = openat(o->dirfd, o->tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			return set_mode(o);
		r = -errno;
		if (r != -EEXIST)
			break;
	}
	o->tmp[0] = '\0';	/* never ours: never unlinked */
	return r;
}

/*
 * What is at the path decides: nothing, or a regular file, gets a temporary
 * published at commit; a symlink or FIFO is written through only
 * when it is ours or root's (a symlink someone else planted is never
 * followed, whatever the directory); a character device is written in place
 * whoever owns it (a terminal belongs to its user; no one else can make one);
 * a block device or socket never;
 * with PM_OUTFILE_ENTRY anything but a directory is replaced, never written;
 * with PM_OUTFILE_CREATE anything there is EEXIST.
 */
static int classify(struct pm_outfile *o)
{
	struct stat st;
	int r;

	if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (o->flags & PM_OUTFILE_CREATE)
		return -EEXIST;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) || (o->flags & PM_OUTFILE_ENTRY)) {
		o->replace = true;
		return 0;
	}
	if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))	/* open() of a socket is ENXIO anyway */
		return -EPERM;
	if (!S_ISCHR(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)	/* only CAP_MKNOD makes devices */
		return S_ISLNK(st.st_mode) ? -ELOOP : -EPERM;
	r = open_in_place(o, &st);
	return r ? r : 1;
}

struct pm_outfile *pm_outfile_open(const char *path, unsigned flags)
{
	struct pm_outfile *o = calloc(1, sizeof(*o));
	int r = -ENOMEM;

	if (!o)
		goto fail;
	o->fd = o->dirfd = -1;
	o->flags = flags;
	if (flags & ~(PM_OUTFILE_PRIVATE | PM_OUTFILE_ENTRY | PM_OUTFILE_CREATE))
		r = -EINVAL;
	else if (!(r = split_path(o, path)) && !(r = classify(o)))
		r = open_temp(o);	/* classify() 1: written in place */
	if (r >= 0)
		return o;
fail:
	pm_outfile_free(o);
	errno = -r;
	return NULL;
}

/* Write to @fd as it is (standard output): never reopened, truncated nor closed; the writes go where its offset is. */
struct pm_outfile *pmi_outfile_on_fd(int fd)
{
	struct pm_outfile *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->dirfd = -1;
	o->flags = PM_OUTFILE_PRIVATE;
	o->in_place = true;
	o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);	/* ours to close; the same open file, offset and O_APPEND */
	if (o->fd < 0) {
		int e = errno;

		free(o);
		errno = e;
		return NULL;
	}
	return o;
}

int pm_outfile_fd(const struct pm_outfile *o)
{
	return o->fd;
}

bool pm_outfile_in_place(const struct pm_outfile *o)
{
	return o->in_place;
}

/* Link the O_TMPFILE at @name: AT_EMPTY_PATH where allowed, else through /proc (any user). */
static int link_fd(struct pm_outfile *o, const char *name)
{
	char proc[64];

	if (linkat(o->fd, "", o->dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM && errno != EINVAL)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	return linkat(AT_FDCWD, proc, o->dirfd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* A name only we have for the O_TMPFILE, to rename from: an error, never someone else's name, when none is free. */
static int link_temp(struct pm_outfile *o)
{
	int r = -EEXIST;

	for (int i = 0; i < OUT_TRIES; i++) {
		if ((r = random_name(o->tmp, sizeof(o->tmp))))
			break;
		if (!(r = link_fd(o, o->tmp)))
			return 0;
		if (r != -EEXIST)
			break;
	}
	o->tmp[0] = '\0';
	return r;
}

/* Put the temporary at the name: over the file that was there, or only where nothing is (no replacing). */
static int publish(struct pm_outfile *o)
{
	int r;

	if (!o->tmp[0] && !o->replace)	/* O_TMPFILE, nothing there: link fails with EEXIST if something came */
		return link_fd(o, o->name);
	if (!o->tmp[0] && (r = link_temp(o)))
		return r;
	if (o->replace)
		return renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0 ? -errno : 0;
	if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(o->dirfd, o->tmp, o->dirfd, o->name, 0) < 0)	/* a file system without RENAME_NOREPLACE */
		return -errno;
	unlinkat(o->dirfd, o->tmp, 0);
	o->tmp[0] = '\0';
	return 0;
}

int pm_outfile_commit(struct pm_outfile *o)
{
	struct stat st;
	int r;

	if (o->committed)
		return -EINVAL;
	if (o->in_place) {	/* fsync of a device or pipe fails EINVAL: only a regular file is synced */
		if (fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(o->fd) < 0)
			return -errno;
		o->committed = true;
		return 0;
	}
	if (fsync(o->fd) < 0)
		return -errno;
	if ((r = publish(o)))
		return r;
	if (o->tmp[0])
		o->tmp[0] = '\0';	/* renamed: the name is the output's now */
	o->committed = true;
	fsync(o->dirfd);	/* the new name durable too; a failure here loses nothing written */
	return 0;
}

void pm_outfile_free(struct pm_outfile *o)
{
	if (!o)
		return;
	if (o->tmp[0] && !o->committed)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o);
}

int pm_outfile_write(const char *path, const void *buf, size_t len, unsigned flags)
{
	struct pm_outfile *o = pm_outfile_open(path, flags);
	size_t done = 0;
	int r = 0;

	if (!o)
		return -errno;
	while (!r && done < len) {
		ssize_t n = write(o->fd, (const char *)buf + done, len - done);

		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n == 0)
			r = -EIO;	/* no progress and no error: never spin */
		else if (n > 0)
			done += (size_t)n;
	}
	if (!r)
		r = pm_outfile_commit(o);
	pm_outfile_free(o);
	return r;
}
