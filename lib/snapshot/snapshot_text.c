/*
 * snapshot_text.c - the text files of a replayed snapshot (maps, smaps, status, sys files...) read from their
 * BYTES chunks when a command opens them. pm_ctx_new_snapshot used to write every text file into a tree under
 * $TMPDIR first, even those the command never reads: a snapshot of a few hundred KiB whose smaps claimed
 * 2 GiB wrote 2 GiB per replay, and a replay killed on the way left it there. Now the tree holds empty names
 * (directories and stat() still work) and an open gets an anonymous memory file (memfd) of that one file's
 * bytes, gone with its last descriptor: nothing of the contents reaches $TMPDIR, and a file a command does not
 * open is never decompressed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "base.h"
#include "snapshot.h"
#include "snapshot_text.h"
#include "zstd_load.h"

struct tchunk {
	uint64_t offset, length;	/* the BYTES section: header offset, payload length */
};

struct tfile {
	uint32_t id;
	char *path;
	uint64_t size;			/* as declared: no chunk reaches past it */
	struct tchunk *c;
	size_t n, cap;
};

struct pmi_snap_text {
	int fd;
	struct tfile *f;		/* by id */
	size_t nf, fcap;
	struct tfile **by_path;		/* sorted by path (pmi_snap_text_seal) */
	pthread_mutex_t lock;		/* err: opens may come from several threads */
	char err[256];
};

struct pmi_snap_text *pmi_snap_text_new(int fd)
{
	struct pmi_snap_text *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if ((t->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

void pmi_snap_text_free(struct pmi_snap_text *t)
{
	size_t i;

	if (!t)
		return;
	close(t->fd);
	for (i = 0; i < t->nf; i++) {
		free(t->f[i].path);
		free(t->f[i].c);
	}
	free(t->f);
	free(t->by_path);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

const char *pmi_snap_text_error(struct pmi_snap_text *t)
{
	return t && t->err[0] ? t->err : NULL;
}

int pmi_snap_text_add_file(struct pmi_snap_text *t, uint32_t id, const char *path, uint64_t size)
{
	struct tfile *f;

	if (t->nf && t->f[t->nf - 1].id >= id)
		return -EINVAL;
	if (t->nf == t->fcap) {
		size_t nc = t->fcap ? t->fcap * 2 : 64;
		struct tfile *nf = realloc(t->f, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		t->f = nf;
		t->fcap = nc;
	}
	f = &t->f[t->nf];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return -ENOMEM;
	f->id = id;
	f->size = size;
	t->nf++;
	return 0;
}

static struct tfile *find_id(struct pmi_snap_text *t, uint32_t id)
{
	size_t lo = 0, hi = t->nf;

	while (lo < hi) {	/* ids are added in ascending order */
		size_t mid = lo + (hi - lo) / 2;
		if (t->f[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nf && t->f[lo].id == id ? &t->f[lo] : NULL;
}

int pmi_snap_text_add_chunk(struct pmi_snap_text *t, uint32_t id, uint64_t offset, uint64_t length)
{
	struct tfile *f = find_id(t, id);

	if (!f)
		return -EINVAL;
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 4;
		struct tchunk *c = realloc(f->c, nc * sizeof(*c));
		if (!c)
			return -ENOMEM;
		f->c = c;
		f->cap = nc;
	}
	f->c[f->n++] = (struct tchunk){ .offset = offset, .length = length };
	return 0;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp((*(struct tfile *const *)a)->path, (*(struct tfile *const *)b)->path);
}

int pmi_snap_text_seal(struct pmi_snap_text *t)
{
	size_t i;

	free(t->by_path);
	if (!(t->by_path = malloc((t->nf ? t->nf : 1) * sizeof(*t->by_path))))
		return -ENOMEM;
	for (i = 0; i < t->nf; i++)
		t->by_path[i] = &t->f[i];
	qsort(t->by_path, t->nf, sizeof(*t->by_path), path_cmp);
	return 0;
}

static struct tfile *find_path(const struct pmi_snap_text *t, const char *path)
{
	size_t lo = 0, hi = t->by_path ? t->nf : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->by_path[mid]->path, path);
		if (!c)
			return t->by_path[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int bad(struct pmi_snap_text *t, const struct tfile *f, const struct tchunk *c, const char *why)
{
	pthread_mutex_lock(&t->lock);
	if (!t->err[0])
		snprintf(t->err, sizeof(t->err), "BYTES section at byte %llu (of %s): %s", (unsigned long long)c->offset,
			 f->path, why);
	pthread_mutex_unlock(&t->lock);
	return -EBADMSG;
}



/*
 * Chunk @c of @f decompressed into @out at its offset; @zbuf holds a
 * chunk's payload at most, @raw SNAP_MAX_RAW bytes. The checks of
 * pm_snapshot_read (the file may have changed since it was opened).
 */
static int put_chunk(struct pmi_snap_text *t, const struct tfile *f, const struct tchunk *c, unsigned char *zbuf,
		     unsigned char *raw, int out, uint64_t *total)
{
	const struct pmi_zstd *z = pmi_zstd(NULL, 0);
	size_t zlen = (size_t)(c->length - SNAP_CHUNK_FIXED), got;
	unsigned long long want;
	uint64_t off;
	int r;

	if (!z)
		return bad(t, f, c, "libzstd is not loaded");
	if ((r = pmi_pread_all(t->fd, zbuf, (size_t)c->length, c->offset + SNAP_SEC_SIZE)))
		return r == -ENODATA ? bad(t, f, c, "truncated") : r;
	off = snap_get64(zbuf + 8);
	want = z->frame_content_size(zbuf + SNAP_CHUNK_FIXED, zlen);
	if (snap_get32(zbuf) != f->id)
		return bad(t, f, c, "not a chunk of this file");
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return bad(t, f, c, "not a zstd frame of at most 1 MiB");
	if (off > f->size || want > f->size - off)
		return bad(t, f, c, "bytes past the file's length");
	/*
	 * A writer's chunks tile the file once; chunks that overlap could make
	 * an open decompress the same bytes without end (a MiB per 40 bytes).
	 */
	if (want > f->size - *total)
		return bad(t, f, c, "its chunks hold more bytes than the file's length");
	*total += want;
	got = z->decompress(raw, (size_t)want, zbuf + SNAP_CHUNK_FIXED, zlen);
	if (z->is_error(got) || got != want)
		return bad(t, f, c, "zstd frame damaged");
	return pmi_pwrite_all(out, raw, got, off);
}

static int fill(struct pmi_snap_text *t, const struct tfile *f, int out)
{
	unsigned char *zbuf = NULL, *raw = NULL;
	size_t i, zmax = 0;
	uint64_t total = 0;
	int r = 0;

	for (i = 0; i < f->n; i++) {
		if (f->c[i].length < SNAP_CHUNK_FIXED ||
		    f->c[i].length - SNAP_CHUNK_FIXED > ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
			return bad(t, f, &f->c[i], "chunk length over the limit");
		if (f->c[i].length > zmax)
			zmax = (size_t)f->c[i].length;
	}
	if (f->n && (!(zbuf = malloc(zmax)) || !(raw = malloc(SNAP_MAX_RAW))))
		r = -ENOMEM;
	for (i = 0; !r && i < f->n; i++)
		r = put_chunk(t, f, &f->c[i], zbuf, raw, out, &total);
	free(zbuf);
	free(raw);
	return r;
}

int pmi_snap_text_open(struct pmi_snap_text *t, const char *path)
{
	const struct tfile *f = find_path(t, path);
	int fd, r;

	if (!f)
		return PMI_SNAP_TEXT_NOT_MINE;
	if ((fd = memfd_create("pagemap-snapshot", MFD_CLOEXEC)) < 0)
		return -errno;
	if (!(r = fill(t, f, fd)) && lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}
