/* procfs.c - root-prefixed kernel paths, recorded-errno replay, and the one pread helper. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base.h"
#include "source.h"

static const struct { const char *name; int value; } errno_names[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "ESRCH", ESRCH },
	{ "EINTR", EINTR }, { "EIO", EIO }, { "EACCES", EACCES },
	{ "EINVAL", EINVAL }, { "ENOTTY", ENOTTY }, { "ENOSYS", ENOSYS },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ENODEV", ENODEV }, { "EFAULT", EFAULT },
	{ "ENODATA", ENODATA },
};

/* Map "EPERM" or "1" to 1; returns 0 for anything else. */
int pmi_errno_from_name(const char *s)
{
	size_t i;
	char *end;
	long v;

	while (*s == ' ' || *s == '\t')
		s++;
	for (i = 0; i < PMI_ARRAY_SIZE(errno_names); i++) {
		size_t n = strlen(errno_names[i].name);
		if (!strncmp(s, errno_names[i].name, n) &&
		    (s[n] == '\0' || s[n] == '\n' || s[n] == ' '))
			return errno_names[i].value;
	}
	v = strtol(s, &end, 10);
	if (end != s && v > 0 && v < 4096)
		return (int)v;
	return 0;
}

int pmi_path(const struct pm_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n = 0;
	int r;

	if (!ctx->live) {
		r = snprintf(buf, size, "%s", ctx->root);
		if (r < 0 || (size_t)r >= size)
			return -ENAMETOOLONG;
		n = (size_t)r;
	}
	va_start(ap, fmt);
	r = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= size - n)
		return -ENAMETOOLONG;
	return 0;
}

int pmi_pid_path(const struct pm_ctx *ctx, char *buf, size_t size, pid_t pid, const char *file)
{
	if (pid == 0)
		return pmi_path(ctx, buf, size, "/proc/self/%s", file);
	return pmi_path(ctx, buf, size, "/proc/%d/%s", (int)pid, file);
}

int pmi_tree_error(const struct pm_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->tree_error && !ctx->tree_error[0]) {
		va_start(ap, fmt);
		vsnprintf(ctx->tree_error, PMI_TREE_ERROR_MAX, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static const char *file_type(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a plain file";
}

/*
 * A file of a context whose source holds files of its own (source.h): the
 * source opens the ones it holds, read only; NOT_MINE for any other.
 */
static int open_from_source(const struct pm_ctx *ctx, const char *path, int flags)
{
	size_t n = strlen(ctx->root);

	if (!ctx->source || !ctx->source->open || (flags & O_ACCMODE) != O_RDONLY ||
	    strncmp(path, ctx->root, n) || path[n] != '/')
		return PMI_SOURCE_NOT_MINE;
	return ctx->source->open(ctx, path + n + 1);
}

/*
 * Open a file of a replayed tree. The tree is untrusted (captures travel in
 * bug reports): a FIFO would block open() and read() forever, a device would
 * be read for real. O_NONBLOCK makes open return at once; anything that is
 * not a regular file is refused, and the flag is cleared again.
 */
static int open_replayed(const struct pm_ctx *ctx, const char *path, int flags)
{
	struct stat st;
	int fd = open_from_source(ctx, path, flags), fl;

	if (fd != PMI_SOURCE_NOT_MINE)
		return fd;
	if ((fd = pmi_ctx_tree(ctx)) < 0)	/* a file the source left to the tree: the tree must be there */
		return fd;
	fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		int e = errno;
		/* A FIFO opened for writing with no reader gives ENXIO. */
		if (e == ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return pmi_tree_error(ctx, "cannot open %s: it is %s, not a regular file", path,
					     file_type(st.st_mode));
		return -e;
	}
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return pmi_tree_error(ctx, "cannot open %s: it is %s, not a regular file", path, file_type(st.st_mode));
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto fail;
	return fd;
fail:
	fl = -errno;
	close(fd);
	return fl;
}

/*
 * A replayed tree records a refused open as FILE.errno: the capture could
 * not copy FILE, so opening it must fail the way the kernel did. Returns
 * the errno to fail with (positive), or 0.
 */
static int recorded_errno(const struct pm_ctx *ctx, const char *path)
{
	char name[4096], buf[64];
	ssize_t n;
	int fd;

	if (ctx->live || snprintf(name, sizeof(name), "%s.errno", path) >= (int)sizeof(name))
		return 0;
	fd = open_replayed(ctx, name, O_RDONLY);
	if (fd == -EBADMSG)
		return EBADMSG;
	if (fd < 0)
		return 0;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return pmi_errno_from_name(buf);
}

/* Open a path made by pmi_path(); returns an fd or -errno (-EBADMSG: see pm_ctx_tree_error). */
int pmi_open(const struct pm_ctx *ctx, const char *path, int flags)
{
	int e = recorded_errno(ctx, path);
	int fd;

	if (e)
		return -e;
	if (!ctx->live)
		return open_replayed(ctx, path, flags);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Read @count 64-bit words starting at word @word_index. Retries EINTR and
 * short reads; a read that returns 0 ends the data (task_size, or the mm is
 * gone: the caller tells which). A partial trailing word cannot come from
 * the kernel (counts are multiples of 8) but a replayed file may end in one:
 * it is dropped. Returns words read or -errno.
 */
ssize_t pmi_pread_words(int fd, uint64_t *buf, size_t count, uint64_t word_index)
{
	size_t want = count * sizeof(uint64_t), got = 0;
	off_t off = (off_t)(word_index * sizeof(uint64_t));

	if (word_index > (uint64_t)INT64_MAX / sizeof(uint64_t))
		return 0;
	while (got < want) {
		ssize_t n = pread(fd, (char *)buf + got, want - got, off + (off_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)(got / sizeof(uint64_t));
}

ssize_t pmi_ctx_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count, uint64_t word_index)
{
	ssize_t n;

	if (ctx && ctx->source && ctx->source->pread_words) {
		n = ctx->source->pread_words(ctx, fd, buf, count, word_index);
		if (n != PMI_SOURCE_NOT_MINE)
			return n;
	}
	return pmi_pread_words(fd, buf, count, word_index);
}

int pmi_ctx_next_data(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next)
{
	int r;

	*next = index;
	if (!ctx || !ctx->source || !ctx->source->next_data)
		return 0;
	r = ctx->source->next_data(ctx, fd, index, next);
	if (r == PMI_SOURCE_NOT_MINE) {
		*next = index;
		return 0;
	}
	return r;
}

/* Read a small text file into @buf, NUL-terminated. Returns length or -errno. */
int pmi_read_small_file(const struct pm_ctx *ctx, const char *path, char *buf, size_t size)
{
	size_t got = 0;
	int fd = pmi_open(ctx, path, O_RDONLY);

	if (fd < 0)
		return fd;
	while (got + 1 < size) {
		ssize_t n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

uint64_t pmi_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pmi_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ENODATA;
		got += (size_t)r;
	}
	return 0;
}

int pmi_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)	/* 0: nothing more will go (a regular file gives ENOSPC or EFBIG instead) */
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

int pmi_open_parent(const char *path, char name[NAME_MAX + 1])
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir;
	int fd;

	if (strlen(base) > NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(name, base);
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd < 0 ? -errno : fd;
}
