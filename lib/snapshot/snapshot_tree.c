/* snapshot_tree.c - snapshots to and from captured /proc trees, and the replay context over a tree of names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "snapshot_keeper.h"
#include "snapshot_reader.h"
#include "snapshot_source.h"
#include "snapshot_text.h"
#include "snapshot_words.h"

/* Open (creating with @create) the parent directory of @path below @dirfd, never through a symlink. */
static int open_parent(int dirfd, const char *path, const char **base, bool create)
{
	char part[SNAP_MAX_PATH + 1];
	const char *p = path, *slash;
	int fd = dup(dirfd), nfd;

	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		memcpy(part, p, n);
		part[n] = '\0';
		if (create && mkdirat(fd, part, 0700) < 0 && errno != EEXIST)
			nfd = -errno;
		else if ((nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			nfd = -errno;
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
		p = slash + 1;
	}
	*base = p;
	return fd;
}

/*
 * Extraction writes through one buffer per open file: a chunk's extents
 * (thousands for the kpage words of scattered frames) become a few large
 * writes, and the file stays open across its consecutive chunks. A short
 * gap between two extents is written too: as zeros where the file was
 * never written (a hole reads 0 as well), else as what an earlier chunk
 * wrote there, read back (the kpage words of a second process's frames
 * fall between the first's).
 */
#define EXTRACT_BUF	(1u << 20)
#define EXTRACT_GAP	(64u << 10)	/* a gap up to this long is written as zeros rather than left a hole */

struct extract {
	struct pm_snapshot *s;
	int dirfd, fd;
	uint32_t file;		/* the file fd holds */
	char *buf;
	uint64_t buf_off;	/* file offset of buf[0] */
	size_t buf_len;
	uint64_t *written;	/* per file id: the end of what was written to it so far */
	size_t nwritten;
	int pfd;		/* the directory of the last file opened (consecutive files share it), or -1 */
	size_t plen;		/* and its path's length: the first plen bytes of ppath */
	char ppath[SNAP_MAX_PATH + 1];
};

/* The directory holding @path (opened or created once for the files in it that follow each other). */
static int parent_of(struct extract *x, const char *path, const char **base, bool create)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (x->pfd >= 0 && n == x->plen && !memcmp(path, x->ppath, n)) {
		*base = slash ? slash + 1 : path;
		return x->pfd;
	}
	if ((fd = open_parent(x->dirfd, path, base, create)) < 0)
		return fd;
	if (x->pfd >= 0)
		close(x->pfd);
	x->pfd = fd;
	x->plen = n;
	memcpy(x->ppath, path, n);
	return fd;
}


static int flush_buf(struct extract *x)
{
	int r = x->buf_len ? pmi_pwrite_all(x->fd, x->buf, x->buf_len, x->buf_off) : 0;

	if (x->buf_len && x->buf_off + x->buf_len > x->written[x->file])
		x->written[x->file] = x->buf_off + x->buf_len;
	x->buf_len = 0;
	return r;
}

/* Fill the gap [@from, @to) after the buffered bytes with what the file holds there (see above). */
static int fill_gap(struct extract *x, uint64_t from, uint64_t to)
{
	char *p = x->buf + (from - x->buf_off);
	uint64_t wm = x->written[x->file], upto = to < wm ? to : wm;
	size_t got = 0;

	while (from + got < upto) {
		ssize_t n = pread(x->fd, p + got, (size_t)(upto - from - got), (off_t)(from + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;	/* past the end (cannot be: the file has its full length); zeros below */
		got += (size_t)n;
	}
	memset(p + got, 0, (size_t)(to - from - got));
	return 0;
}

static int write_extent(void *data, uint64_t off, const void *buf, size_t len)
{
	struct extract *x = data;
	uint64_t end = x->buf_off + x->buf_len;
	int r;

	if (x->buf_len && off >= end && off - end <= EXTRACT_GAP && off + len - x->buf_off <= EXTRACT_BUF) {
		if ((r = fill_gap(x, end, off)))
			return r;
		memcpy(x->buf + (off - x->buf_off), buf, len);
		x->buf_len = (size_t)(off + len - x->buf_off);
		return 0;
	}
	if ((r = flush_buf(x)))
		return r;
	if (len >= EXTRACT_BUF) {
		if (off + len > x->written[x->file])
			x->written[x->file] = off + len;
		return pmi_pwrite_all(x->fd, buf, len, off);
	}
	memcpy(x->buf, buf, len);
	x->buf_off = off;
	x->buf_len = len;
	return 0;
}

/* Finish the open file: its buffered bytes written, its descriptor closed. */
static int close_file(struct extract *x)
{
	int r;

	if (x->fd < 0)
		return 0;
	r = flush_buf(x);
	close(x->fd);
	x->fd = -1;
	return r;
}

static int open_file(struct extract *x, const struct pm_snapshot_section *sec)
{
	const char *base = NULL;
	bool create = sec->type == PM_SNAPSHOT_FILE;
	int pfd, r = 0;

	if (!create && x->fd >= 0 && x->file == sec->file)
		return 0;
	if ((r = close_file(x)))
		return r;
	if (sec->file >= x->nwritten) {	/* ids come in order: grow by doubling */
		size_t n = x->nwritten ? x->nwritten * 2 : 64;
		uint64_t *nw = realloc(x->written, n * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		memset(nw + x->nwritten, 0, (n - x->nwritten) * sizeof(*nw));
		x->written = nw;
		x->nwritten = n;
	}
	pfd = parent_of(x, sec->path, &base, create);
	if (pfd < 0)
		return pfd;
	if (create)
		x->fd = openat(pfd, base, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
	else
		x->fd = openat(pfd, base, O_RDWR | O_NOFOLLOW | O_CLOEXEC);	/* read too: see fill_gap */
	if (x->fd < 0)
		r = -errno;
	else if (create && ftruncate(x->fd, (off_t)sec->size) < 0)
		r = -errno;
	x->file = sec->file;
	return r;
}

static int extract_section(struct extract *x, const struct pm_snapshot_section *sec)
{
	int r;

	if (sec->type != PM_SNAPSHOT_FILE && sec->type != PM_SNAPSHOT_BYTES && sec->type != PM_SNAPSHOT_WORDS)
		return 0;	/* META, INDEX and types of later versions hold no file bytes */
	if ((r = open_file(x, sec)))
		return r;
	if (sec->type == PM_SNAPSHOT_FILE)
		return 0;
	return pm_snapshot_read(x->s, sec, write_extent, x);
}

/* DIR/pagemap-frame-start, for a keyed snapshot's tree (0600, as the tree's other files): @text, "" none. */
static int write_frame_start(int dirfd, const char *text)
{
	int fd, r = 0;

	if (!*text)
		return 0;
	fd = openat(dirfd, "pagemap-frame-start", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = pmi_pwrite_all(fd, text, strlen(text), 0);
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

int pm_snapshot_extract(struct pm_snapshot *s, const char *dir)
{
	struct pm_snapshot_section sec = { 0 };
	struct extract x = { .s = s, .fd = -1, .pfd = -1 };
	uint64_t start = pmi_snap_frame_start(s);
	char text[24] = "";
	int r = 0;

	if (!(x.buf = malloc(EXTRACT_BUF)))
		return -ENOMEM;
	x.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x.dirfd < 0) {
		free(x.buf);
		return -errno;
	}
	pm_snapshot_rewind(s);
	while (!r && pm_snapshot_next(s, &sec) == 0)
		r = extract_section(&x, &sec);
	if (!r)
		r = close_file(&x);
	else
		close_file(&x);
	if (r && r != -EBADMSG)	/* EBADMSG already says which section */
		pmi_snap_fail_io(s, &sec, r);
	if (start)
		snprintf(text, sizeof(text), "%llu\n", (unsigned long long)start);
	if (!r && (r = write_frame_start(x.dirfd, text)))
		pmi_snap_fail(s, r, "pagemap-frame-start: %s", pmi_strerror(-r));
	close(x.dirfd);
	if (x.pfd >= 0)
		close(x.pfd);
	free(x.buf);
	free(x.written);
	return r;
}

/*
 * The names of a replay's tree, for calls that read its root rather than
 * open its files (snapshot_source.c): directories, the text files empty, the
 * word files sparse of their length. Their contents stay in the chunks.
 */
int pmi_snap_make_names(int dirfd, const struct pmi_snap_name *names, size_t n, const char *frame_start,
			struct pmi_snap_words *words)
{
	struct extract x = { .dirfd = dirfd, .fd = -1, .pfd = -1 };
	const char *base;
	size_t i;
	int pfd, fd, r = 0;

	for (i = 0; !r && i < n; i++) {
		if ((pfd = parent_of(&x, names[i].path, &base, true)) < 0) {
			r = pfd;
			break;
		}
		fd = openat(pfd, base, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			r = -errno;
		else if (names[i].kind == PM_SNAPSHOT_WORDS && ftruncate(fd, (off_t)names[i].size) < 0)
			r = -errno;
		else if (names[i].kind == PM_SNAPSHOT_WORDS && names[i].fd < 0)
			r = pmi_snap_words_bind(words, names[i].id, fd);	/* read by its inode, as before */
		if (fd >= 0)
			close(fd);
	}
	if (x.pfd >= 0)
		close(x.pfd);
	return r ? r : write_frame_start(dirfd, frame_start);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void pmi_snap_remove_tree(const char *dir)
{
	if (dir)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Six random letters or digits, as mkdtemp's XXXXXX: nobody can guess the tree's name to take it first. */
static const char *tree_suffix(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6] = { 0 };
	size_t i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {	/* no entropy yet: the clock and pid */
		uint64_t v = pmi_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
		memcpy(r, &v, sizeof(r));
	}
	for (i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
	return out;
}

struct pm_ctx *pm_ctx_new_snapshot(struct pm_snapshot *s)
{
	const char *tmp = getenv("TMPDIR");
	char suffix[7];
	struct pmi_snap_source *src = pmi_snap_source_new(s);
	struct pm_ctx *ctx;
	char *root;

	if (!src)
		return NULL;
	/* A name only, drawn as mkdtemp draws one: the source's tree op makes it if a call reads the root. */
	if (asprintf(&root, "%s/pagemap-snapshot.%s", tmp && *tmp ? tmp : "/tmp", tree_suffix(suffix)) < 0) {
		pmi_snap_source_free(src);
		errno = ENOMEM;
		return NULL;
	}
	ctx = pmi_ctx_new_source(root, &pmi_snap_source_ops, src);
	free(root);
	return ctx;
}

static bool is_word_file(const char *name, off_t size)
{
	return size % 8 == 0 && (!strcmp(name, "pagemap") || !strcmp(name, "kpageflags") ||
				 !strcmp(name, "kpagecount") || !strcmp(name, "kpagecgroup"));
}

/* A word file's data ranges (SEEK_DATA/SEEK_HOLE: holes read 0 and stay holes). */
static int add_words(struct pm_snapshot_writer *w, const char *path, int fd, off_t size)
{
	static const size_t batch = 8192;
	uint64_t *buf = malloc(batch * 8);
	struct snap_ws *ws = NULL;
	off_t data = 0, hole;
	int id, r = 0;

	if (!buf || (id = pmi_snap_w_file(w, path, PM_SNAPSHOT_WORDS, (uint64_t)size)) < 0 ||
	    !(ws = pmi_snap_ws_new(w, (uint32_t)id))) {
		free(buf);
		return !buf || !ws ? -ENOMEM : id;
	}
	while (!r && data < size && (data = lseek(fd, data, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			hole = size;
		data &= ~(off_t)7;
		while (!r && data < hole) {
			ssize_t n = pmi_pread_words(fd, buf, batch, (uint64_t)data / 8);
			if (n <= 0) {
				r = n < 0 ? (int)n : -EIO;
				break;
			}
			r = pmi_snap_ws_add(ws, (uint64_t)data / 8, buf, (size_t)n);
			data += n * 8;
		}
	}
	free(buf);
	r = r ? r : (data < 0 && errno != ENXIO ? -errno : 0);
	return pmi_snap_ws_close(ws) ?: r;
}

static int add_entry(struct pm_snapshot_writer *w, int dirfd, const char *rel, const char *name);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_dir(struct pm_snapshot_writer *w, int fd, const char *rel)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int r = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*nn));
			if (!nn) {
				r = -ENOMEM;
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), name_cmp);	/* the same tree gives the same file */
	for (i = 0; i < n; i++) {
		if (!r)
			r = add_entry(w, dirfd(d), rel, names[i]);
		free(names[i]);
	}
	free(names);
	closedir(d);
	return r;
}

static int add_entry(struct pm_snapshot_writer *w, int dirfd, const char *rel, const char *name)
{
	char path[SNAP_MAX_PATH + 1];
	struct stat st;
	int fd, r;

	if (snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;	/* a symlink: a tree holds none */
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (S_ISDIR(st.st_mode))
		return add_dir(w, fd, path);
	if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (is_word_file(name, st.st_size))
		r = add_words(w, path, fd, st.st_size);
	else
		r = pmi_snap_w_stream(w, path, fd);
	close(fd);
	return r;
}

int pm_snapshot_add_tree(struct pm_snapshot_writer *w, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return add_dir(w, fd, "");
}
