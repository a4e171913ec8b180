/* share_store.c - pm_share's page records: runs of keys, held in memory up to a limit, then spilled in sorted chunks and merged back. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "share.h"

#define SWAP_TYPE_SHIFT	50		/* a swap key: PMI_SHARE_KEY_SWAP | type << 50 | offset */
#define MERGE_BYTES	(8u << 20)	/* read-back buffers of all chunks together */
#define MERGE_MIN	256		/* records per chunk buffer, however many chunks */
#define MERGE_MAX	16384

void pmi_store_init(struct share_store *st, size_t limit)
{
	memset(st, 0, sizeof(*st));
	st->limit = limit ? limit : 1;
	st->fd = -1;
}

void pmi_store_free(struct share_store *st)
{
	if (st->fd >= 0)
		close(st->fd);
	free(st->recs);
	free(st->chunks);
	free(st->src);
	free(st->heap);
	free(st->bufs);
	pmi_store_init(st, st->limit);
}

static int rec_cmp(const void *x, const void *y)
{
	const struct share_rec *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->map > b->map) - (a->map < b->map);
}

static bool rec_less(const struct share_rec *a, const struct share_rec *b)
{
	return a->key < b->key || (a->key == b->key && a->map < b->map);
}

/* ---- spilling ---- */

/* An unlinked file in $TMPDIR (or /tmp): O_TMPFILE, else mkstemp and unlink. -1 with errno. */
static int spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/pagemap-share.XXXXXX", dir) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}



/*
 * Sort the records in memory and append them to the spill file as a chunk.
 * When no file can be made at all, the records stay in memory (unbounded, as
 * before spilling existed) rather than fail.
 */
static int spill(struct share_store *st)
{
	size_t bytes = st->n * sizeof(*st->recs);
	int r;

	if (st->fd < 0 && (st->fd = spill_open()) < 0) {
		st->limit = SIZE_MAX;
		return 0;
	}
	if (pmi_grow(&st->chunks, &st->cap_chunks, st->nchunks + 1, sizeof(*st->chunks)) < 0)
		return -ENOMEM;
	qsort(st->recs, st->n, sizeof(*st->recs), rec_cmp);
	if ((r = pmi_pwrite_all(st->fd, st->recs, bytes, (uint64_t)st->end)) < 0)
		return r;
	st->chunks[st->nchunks++] = (struct share_chunk){ st->end, st->n };
	st->end += (off_t)bytes;
	st->n = 0;
	return 0;
}

/* Does @key .. + @len continue @last (same mapping, next key, one swap type, length fits)? */
static bool continues(const struct share_rec *last, uint64_t key, uint64_t len, uint32_t map)
{
	return last->map == map && last->key + last->len == key && (last->key >> SWAP_TYPE_SHIFT) == (key >> SWAP_TYPE_SHIFT) &&
	       len <= UINT32_MAX - last->len;
}

static int push_one(struct share_store *st, uint64_t key, uint32_t len, uint32_t map)
{
	int r;

	if (st->n && continues(&st->recs[st->n - 1], key, len, map)) {
		st->recs[st->n - 1].len += len;
		return 0;
	}
	if (st->n >= st->limit && (r = spill(st)) < 0)
		return r;
	if (st->n == st->cap && pmi_grow(&st->recs, &st->cap, st->n + 1, sizeof(*st->recs)) < 0)
		return -ENOMEM;
	st->recs[st->n++] = (struct share_rec){ key, len, map };
	return 0;
}

int pmi_store_push(struct share_store *st, uint64_t key, uint64_t len, uint32_t map)
{
	int r = 0;

	if (st->src)
		return -EINVAL;
	/* A run never crosses a swap type (nor from frames into swap keys): split it where it would. */
	while (len && r == 0) {
		uint64_t room = ((key >> SWAP_TYPE_SHIFT) + 1) << SWAP_TYPE_SHIFT;
		uint64_t n = len < UINT32_MAX ? len : UINT32_MAX;

		if (room > key && room - key < n)
			n = room - key;
		r = push_one(st, key, (uint32_t)n, map);
		key += n;
		len -= n;
	}
	return r;
}

/* ---- merging ---- */

static bool src_less(const struct share_store *st, uint32_t x, uint32_t y)
{
	return rec_less(&st->src[x].buf[st->src[x].i], &st->src[y].buf[st->src[y].i]);
}

static void sift_down(struct share_store *st, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t t;

		if (l < st->nheap && src_less(st, st->heap[l], st->heap[m]))
			m = l;
		if (l + 1 < st->nheap && src_less(st, st->heap[l + 1], st->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = st->heap[i];
		st->heap[i] = st->heap[m];
		st->heap[m] = t;
		i = m;
	}
}

/* Make sure source @c has a record at c->i: 0, 1 when it has no more, or -errno. */
static int src_fill(struct share_store *st, struct share_src *c)
{
	size_t n;
	int r;

	if (c->i < c->n)
		return 0;
	if (!c->left)
		return 1;
	n = c->left < c->cap ? c->left : c->cap;
	if ((r = pmi_pread_all(st->fd, c->buf, n * sizeof(*c->buf), (uint64_t)c->off)) < 0)
		return r;
	c->off += (off_t)(n * sizeof(*c->buf));
	c->left -= n;
	c->n = n;
	c->i = 0;
	return 0;
}

int pmi_store_rewind(struct share_store *st)
{
	size_t nsrc = st->nchunks + 1, per = MERGE_BYTES / sizeof(struct share_rec) / nsrc, i;
	int r;

	if (st->src)
		return -EINVAL;
	per = per < MERGE_MIN ? MERGE_MIN : per > MERGE_MAX ? MERGE_MAX : per;
	if (!(st->src = calloc(nsrc, sizeof(*st->src))) || !(st->heap = calloc(nsrc, sizeof(*st->heap))) ||
	    (st->nchunks && !(st->bufs = malloc(st->nchunks * per * sizeof(*st->bufs)))))
		return -ENOMEM;
	if (st->n)	/* qsort of a NULL array is undefined even for 0 elements */
		qsort(st->recs, st->n, sizeof(*st->recs), rec_cmp);
	for (i = 0; i < st->nchunks; i++)
		st->src[i] = (struct share_src){ st->bufs + i * per, 0, 0, per, st->chunks[i].off, st->chunks[i].n };
	st->src[i] = (struct share_src){ st->recs, 0, st->n, st->n, 0, 0 };
	for (i = 0; i < nsrc; i++) {
		if ((r = src_fill(st, &st->src[i])) < 0)
			return r;
		if (r == 0)
			st->heap[st->nheap++] = (uint32_t)i;
	}
	for (i = st->nheap / 2; i-- > 0;)
		sift_down(st, i);
	return 0;
}

int pmi_store_next(struct share_store *st, struct share_rec *out)
{
	struct share_src *c;
	int r;

	if (!st->src)
		return -EINVAL;
	if (!st->nheap)
		return 1;
	c = &st->src[st->heap[0]];
	*out = c->buf[c->i++];
	if ((r = src_fill(st, c)) < 0)
		return r;
	if (r == 1)
		st->heap[0] = st->heap[--st->nheap];
	sift_down(st, 0);
	return 0;
}
