/*
 * snapshot_source.c - a replayed snapshot as its context's source of files
 * (lib/base/source.h): the base opens and reads the context's files through
 * these ops, which serve the word and text files from the snapshot's chunks
 * and answer for every other name from the snapshot's list of files, so a
 * replay that only opens files never touches a file system. The tree of
 * names is made under $TMPDIR only when a call reads the root itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "snapshot_keeper.h"
#include "snapshot_reader.h"
#include "snapshot_source.h"
#include "snapshot_text.h"
#include "snapshot_words.h"

static int name_cmp(const void *a, const void *b)
{
	const struct pmi_snap_name *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

/* The first name at or after @path in sort order (nnames: none). */
static size_t lower_bound(const struct pmi_snap_source *src, const char *path)
{
	size_t lo = 0, hi = src->nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(src->names[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first name below directory @path ("a" for "a/b"), from @i (lower_bound of @path) on; nnames: none. */
static size_t first_below(const struct pmi_snap_source *src, const char *path, size_t i)
{
	size_t n = strlen(path);

	for (; i < src->nnames && !strncmp(src->names[i].path, path, n); i++)
		if (src->names[i].path[n] == '/')
			return i;
	return src->nnames;
}

static int add_name(struct pmi_snap_source *src, const struct pm_snapshot_section *sec)
{
	struct pmi_snap_name *nm;
	int r;

	if ((r = pmi_grow(&src->names, &src->cap, src->nnames + 1, sizeof(*nm))))
		return r;
	nm = &src->names[src->nnames];
	*nm = (struct pmi_snap_name){ .offset = sec->offset, .size = sec->size, .kind = sec->kind, .id = sec->file,
				      .fd = -1 };
	if (!(nm->path = strdup(sec->path)))
		return -ENOMEM;
	src->nnames++;
	if (sec->kind == PM_SNAPSHOT_BYTES)
		return pmi_snap_text_add_file(src->text, sec->file, sec->path, sec->size);
	return pmi_snap_words_add_file(src->words, sec->file, sec->size, sec->path);
}

static int add_section(struct pmi_snap_source *src, struct pm_snapshot *s, const struct pm_snapshot_section *sec)
{
	uint64_t ref_off = 0, ref_len = 0, off = sec->offset, len = sec->length;

	if (sec->type == PM_SNAPSHOT_FILE)
		return add_name(src, sec);
	if (sec->type == PM_SNAPSHOT_BYTES)
		return pmi_snap_text_add_chunk(src->text, sec->file, sec->offset, sec->length);
	if (sec->type != PM_SNAPSHOT_WORDS)
		return 0;	/* META, INDEX and types of later versions hold no file bytes */
	pmi_snap_chunk_ref(s, sec->offset, &ref_off, &ref_len);
	pmi_snap_chunk_data(s, sec->offset, &off, &len);	/* a REUSE: the chunk an earlier member stored */
	return pmi_snap_words_add_chunk(src->words, sec->file, off, len, ref_off, ref_len);
}

/*
 * A name the tree could not hold, as making the tree said it: the same path
 * twice, or a file's path as another's directory ("a" and "a/b": the one
 * declared later fails). The first such FILE section in file order, or NULL.
 */
static const struct pmi_snap_name *clash(const struct pmi_snap_source *src, int *err)
{
	const struct pmi_snap_name *worst = NULL, *a, *b;
	size_t i, j;

	for (i = 0; i < src->nnames; i++) {
		a = &src->names[i];
		if (i + 1 < src->nnames && !strcmp(a->path, src->names[i + 1].path)) {
			b = &src->names[i + 1];	/* sorted by offset within one path: b came later */
			if (!worst || b->offset < worst->offset)
				worst = b, *err = -EEXIST;
			continue;
		}
		if ((j = first_below(src, a->path, i + 1)) == src->nnames)
			continue;
		b = &src->names[j];
		if (a->offset < b->offset && (!worst || b->offset < worst->offset))
			worst = b, *err = -ENOTDIR;	/* a/b's directory a is a file */
		else if (b->offset < a->offset && (!worst || a->offset < worst->offset))
			worst = a, *err = -EEXIST;	/* file a over directory a */
	}
	return worst;
}

static int index_sections(struct pmi_snap_source *src, struct pm_snapshot *s)
{
	struct pm_snapshot_section sec = { 0 };
	const struct pmi_snap_name *bad;
	uint64_t start = pmi_snap_frame_start(s);
	int r = 0;

	pm_snapshot_rewind(s);
	while (!r && pm_snapshot_next(s, &sec) == 0)
		r = add_section(src, s, &sec);
	if (r) {
		if (r != -EBADMSG)	/* EBADMSG already says which section */
			pmi_snap_fail_io(s, &sec, r);
		return r;
	}
	qsort(src->names, src->nnames, sizeof(*src->names), name_cmp);
	if ((bad = clash(src, &r))) {
		sec = (struct pm_snapshot_section){ .type = PM_SNAPSHOT_FILE, .offset = bad->offset, .path = bad->path };
		pmi_snap_fail_io(s, &sec, r);
		return r;
	}
	if (start)
		snprintf(src->frame_start, sizeof(src->frame_start), "%llu\n", (unsigned long long)start);
	return pmi_snap_text_seal(src->text);
}

struct pmi_snap_source *pmi_snap_source_new(struct pm_snapshot *s)
{
	struct pmi_snap_source *src = calloc(1, sizeof(*src));
	int r;

	if (!src)
		return NULL;
	src->words = pmi_snap_words_new(s->fd, s->version);
	if (src->words)
		src->text = pmi_snap_text_new(s->fd);
	r = src->text ? index_sections(src, s) : -errno;
	if (r) {
		pmi_snap_source_free(src);
		errno = -r;
		return NULL;
	}
	return src;
}

/* An anonymous file holding @text (a memfd, at offset 0): fd or -errno. */
static int memory_file(const char *text)
{
	int fd = memfd_create("pagemap-snapshot", MFD_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	if ((r = pmi_pwrite_all(fd, text, strlen(text), 0))) {
		close(fd);
		return r;
	}
	return fd;
}

/* A path the tree would resolve in some other way than the names do ("a//b", "./a", "a/.."): not ours. */
static bool plain_path(const char *rel)
{
	const char *p = rel;

	while (*p) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p && !*++p)
			return false;	/* a trailing slash */
	}
	return p != rel;
}

static int source_tree(const struct pm_ctx *ctx);

/*
 * A word file opened: its memfd, made on the first open (the file's length
 * for fstat, no page behind it: its words are read from the chunks, found
 * by the memfd's inode). Past PMI_SNAP_MEMFDS, or with no descriptor to
 * spare, the tree's sparse file instead (NOT_MINE), as a replay always had.
 */
static int open_words(const struct pm_ctx *ctx, struct pmi_snap_name *nm)
{
	struct pmi_snap_source *src = ctx->source_data;
	int fd, r;

	if (nm->fd < 0 && !src->dir && src->nmemfds < PMI_SNAP_MEMFDS) {
		if ((fd = memfd_create("pagemap-snapshot", MFD_CLOEXEC)) < 0 && errno != EMFILE && errno != ENFILE)
			return -errno;
		if (fd >= 0 && (r = ftruncate(fd, (off_t)nm->size) < 0 ? -errno :
					 pmi_snap_words_bind(src->words, nm->id, fd))) {
			close(fd);
			return r;
		}
		if (fd >= 0) {
			nm->fd = fd;
			src->nmemfds++;
		}
	}
	if (nm->fd < 0)
		return (r = source_tree(ctx)) ? r : PMI_SOURCE_NOT_MINE;
	return (fd = fcntl(nm->fd, F_DUPFD_CLOEXEC, 0)) < 0 ? -errno : fd;
}

static int source_open(const struct pm_ctx *ctx, const char *rel)
{
	struct pmi_snap_source *src = ctx->source_data;
	int fd = pmi_snap_text_open(src->text, rel), r;
	size_t i;

	if (fd == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_text_error(src->text));
	if (fd != PMI_SNAP_TEXT_NOT_MINE)
		return fd;
	if (src->frame_start[0] && !strcmp(rel, "pagemap-frame-start"))
		return memory_file(src->frame_start);
	i = plain_path(rel) ? lower_bound(src, rel) : src->nnames;
	if (i < src->nnames && !strcmp(src->names[i].path, rel))
		return src->names[i].kind == PM_SNAPSHOT_WORDS ? open_words(ctx, &src->names[i]) : memory_file("");
	/* A directory, or a path spelled oddly: the tree says what it is, as it always did. */
	if (!plain_path(rel) || first_below(src, rel, i) < src->nnames)
		return (r = source_tree(ctx)) ? r : PMI_SOURCE_NOT_MINE;
	return -ENOENT;
}

/*
 * The tree of names, for a call that reads the root itself: the root's name,
 * drawn when the context was made (pm_ctx_new_snapshot: as mkdtemp would,
 * and it never changes, so paths made before stay right), becomes a
 * directory of ours, mode 0700 (the names may carry PIDs); a name someone
 * else took meanwhile is an error, never used. Its keeper starts before the
 * first name is in it: a SIGKILL from here on leaves no tree. Without a
 * keeper (no process to spare: RLIMIT_NPROC, a pids cgroup) the replay
 * still runs, and the tree is removed at the end.
 */
static int source_tree(const struct pm_ctx *ctx)
{
	struct pmi_snap_source *src = ctx->source_data;
	int dirfd, r;

	if (src->dir || src->tree_err)
		return src->tree_err;
	if (mkdir(ctx->root, 0700) < 0)
		return src->tree_err = -errno;
	if (!(src->dir = strdup(ctx->root))) {
		rmdir(ctx->root);
		return src->tree_err = -ENOMEM;
	}
	src->keeper = pmi_snap_keeper_start(src->dir);
	if ((dirfd = open(src->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return src->tree_err = -errno;
	r = pmi_snap_make_names(dirfd, src->names, src->nnames, src->frame_start, src->words);
	close(dirfd);
	return src->tree_err = r;
}

static ssize_t source_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count,
				  uint64_t index)
{
	struct pmi_snap_source *src = ctx->source_data;
	ssize_t n = pmi_snap_words_pread(src->words, fd, buf, count, index);

	if (n == PMI_SNAP_WORDS_NOT_MINE)
		return PMI_SOURCE_NOT_MINE;
	if (n == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_words_error(src->words));
	return n;
}

static int source_next_data(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next)
{
	struct pmi_snap_source *src = ctx->source_data;
	int r = pmi_snap_words_next_data(src->words, fd, index, next);

	if (r == (int)PMI_SNAP_WORDS_NOT_MINE)
		return PMI_SOURCE_NOT_MINE;
	if (r == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_words_error(src->words));
	return r;
}

void pmi_snap_source_free(void *data)
{
	struct pmi_snap_source *src = data;
	size_t i;

	if (!src)
		return;
	if (src->dir) {
		pmi_snap_remove_tree(src->dir);
		pmi_snap_keeper_end(src->keeper);	/* the tree is gone: the keeper leaves it alone */
		free(src->dir);
	}
	for (i = 0; i < src->nnames; i++) {
		free(src->names[i].path);
		if (src->names[i].fd >= 0)
			close(src->names[i].fd);
	}
	free(src->names);
	pmi_snap_words_free(src->words);
	pmi_snap_text_free(src->text);
	free(src);
}

const struct pmi_source_ops pmi_snap_source_ops = {
	.open = source_open,
	.pread_words = source_pread_words,
	.next_data = source_next_data,
	.tree = source_tree,
	.free = pmi_snap_source_free,
};

struct pmi_snap_words *pmi_snap_source_words(const struct pm_ctx *ctx)
{
	if (ctx->source != &pmi_snap_source_ops)
		return NULL;
	return ((const struct pmi_snap_source *)ctx->source_data)->words;
}
