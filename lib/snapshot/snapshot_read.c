/* snapshot_read.c - an open snapshot read: its sections in file order, its META lines, its chunks decoded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "snapshot_reader.h"
#include "zstd_load.h"

void *pmi_snap_big_alloc(size_t n)
{
	const size_t huge = 2u << 20;
	size_t len = (n + huge - 1) & ~(huge - 1);
	void *p;

	if (n < huge / 2)
		return malloc(n);
	if ((p = aligned_alloc(huge, len)))
		madvise(p, len, MADV_HUGEPAGE);	/* a hint: without THP the pages stay small */
	return p;
}

/*
 * A growing buffer's new block: @ncol columns of @keep bytes each, @old_stride
 * apart in @old, moved @stride apart into a block of @ncol * @stride bytes
 * (pmi_snap_big_alloc), and @old freed. The one way the writer's buffers grow
 * (frame runs, a chunk's slices, a stream's columns); each keeps its own pace.
 * NULL with @old left as it was when there is no memory.
 */
void *pmi_snap_regrow(void *old, size_t old_stride, size_t keep, size_t stride, unsigned ncol)
{
	unsigned char *p = pmi_snap_big_alloc((size_t)ncol * stride);
	unsigned c;

	if (!p)
		return NULL;
	for (c = 0; c < ncol && keep; c++)
		memcpy(p + c * stride, (unsigned char *)old + c * old_stride, keep);
	free(old);
	return p;
}

/*
 * A block written all over at once (a read's buffer, a bitmap cleared whole):
 * from 256 KiB a huge page, as pmi_snap_big_alloc gives from a MiB; its small
 * pages' faults cost more than clearing one huge page.
 */
void *pmi_snap_dense_alloc(size_t n)
{
	return pmi_snap_big_alloc(n >= (256u << 10) && n < (1u << 20) ? 1u << 20 : n);
}

/*
 * Grow the chunk buffers to @zlen payload bytes, @rawlen decompressed bytes
 * and @nwords words, with room for as many extents up to SNAP_MAX_EXTENTS
 * (0: leave as is; callers keep them within the SNAP_MAX_* limits). Sized to need rather than to the limits at open: an open costs
 * no 3.5 MiB then (an audit opens every snapshot it finds; a fuzzer opens
 * one per input, and ASan poisons every large block).
 */
int pmi_snap_chunk_buffers(struct pm_snapshot *s, size_t zlen, size_t rawlen, size_t nwords)
{
	void *p;

	if (zlen > s->zcap) {
		if (!(p = realloc(s->zbuf, zlen)))
			return -ENOMEM;
		s->zbuf = p;
		s->zcap = zlen;
	}
	if (rawlen > s->rawcap) {
		if (!(p = realloc(s->raw, rawlen)))
			return -ENOMEM;
		s->raw = p;
		s->rawcap = rawlen;
	}
	if (nwords > s->wcap) {	/* what they held is not kept: chunks are decoded into them afresh */
		free(s->words);
		s->wcap = 0;
		if (!(s->words = pmi_snap_big_alloc(nwords * sizeof(*s->words))))
			return -ENOMEM;
		s->wcap = nwords;
	}
	return 0;
}

/* Room for @n extents in s->ext (at most SNAP_MAX_EXTENTS: callers bound it). 0 or -ENOMEM. */
static int ext_buffer(struct pm_snapshot *s, size_t n)
{
	if (n <= s->xcap)
		return 0;
	free(s->ext);
	s->xcap = 0;
	if (!(s->ext = pmi_snap_big_alloc(n * sizeof(*s->ext))))
		return -ENOMEM;
	s->xcap = n;
	return 0;
}

size_t pmi_snap_extent_room(const unsigned char *raw, size_t len, size_t max_words)
{
	const unsigned char *p = raw;
	uint64_t n = 0;

	pmi_snap_get_varint(&p, raw + len, &n);	/* a bad one decodes as an error later */
	if (n > max_words)
		n = max_words;
	return n > SNAP_MAX_EXTENTS ? SNAP_MAX_EXTENTS : n ? (size_t)n : 1;
}

void pm_snapshot_rewind(struct pm_snapshot *s)
{
	s->pos = 0;
	s->sub = 0;
}

int pm_snapshot_next(struct pm_snapshot *s, struct pm_snapshot_section *out)
{
	const struct snap_sec *c;

	if (s->pos >= s->nsecs)
		return 1;
	c = &s->secs[s->pos];
	memset(out, 0, sizeof(*out));
	out->type = c->type;
	out->offset = c->offset;
	out->length = c->length;
	out->file = c->file;
	if (c->type == PM_SNAPSHOT_REUSE && s->version >= SNAP_SERIES_VERSION) {	/* a chunk of an earlier member */
		out->type = PM_SNAPSHOT_WORDS;
		out->length = c->data_len;
	}
	if (c->type == PM_SNAPSHOT_FILES) {	/* one FILE per file it declares */
		out->type = PM_SNAPSHOT_FILE;
		out->file = c->file + s->sub;
	}
	if (out->type >= PM_SNAPSHOT_FILE && out->type <= PM_SNAPSHOT_WORDS) {
		out->path = s->files[out->file].path;
		out->kind = s->files[out->file].kind;
		out->size = s->files[out->file].size;
	}
	if (c->type != PM_SNAPSHOT_FILES || ++s->sub == c->nfiles) {
		s->pos++;
		s->sub = 0;
	}
	return 0;
}

const char *pm_snapshot_meta(const struct pm_snapshot *s, const char *key)
{
	size_t n = strlen(key);
	const char *p = s->meta, *end = s->meta + s->meta_len;

	for (; p && p < end; p += strlen(p) + 1) {	/* the lines, each NUL-terminated when loaded */
		if (!strncmp(p, key, n) && p[n] == '=')
			return p + n + 1;
	}
	return NULL;
}

/*
 * Walks over all frames skip the indices below key_lift, which no frame moved to. A replay's tree keeps it in
 * pagemap-frame-start, which pm_ctx_new reads back (lib/base/ctx.c); the reader bounds frame files from it.
 */
uint64_t pmi_snap_frame_start(const struct pm_snapshot *s)
{
	const char *v = pm_snapshot_meta(s, "key_lift"), *frames = pm_snapshot_meta(s, "frames");
	unsigned long long n;
	char *end;

	if (!v || !frames || strncmp(frames, "keyed", 5) || *v < '0' || *v > '9')
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || *end ? 0 : n;
}

const char *pmi_snap_meta_next(const struct pm_snapshot *s, const char *prev)
{
	const char *p = prev ? prev + strlen(prev) + 1 : s->meta;

	return p && p < s->meta + s->meta_len ? p : NULL;
}

/* Read and decompress the chunk of section @i into s->raw; *@rawlen its length. */
static int load_chunk(struct pm_snapshot *s, size_t i, size_t *rawlen, const char *where)
{
	const struct snap_sec *c = &s->secs[i];
	size_t zlen = (size_t)(c->data_len - SNAP_CHUNK_FIXED);	/* a REUSE: the chunk it names */
	unsigned long long want;
	size_t got;
	const struct pmi_zstd *z = pmi_zstd(NULL, 0);

	if (!z)
		return pmi_snap_fail(s, -ELIBACC, "%s: libzstd is not loaded", where);
	if (c->data_len - SNAP_CHUNK_FIXED > ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
		return pmi_snap_fail(s, -EBADMSG, "%s: chunk of %llu bytes is over the limit", where,
			    (unsigned long long)c->data_len);
	if (pmi_snap_chunk_buffers(s, zlen + SNAP_CHUNK_FIXED, 0, 0))
		return -ENOMEM;
	if (pmi_snap_read_at(s, s->zbuf, zlen + SNAP_CHUNK_FIXED, c->data_off + SNAP_SEC_SIZE))
		return pmi_snap_fail(s, -EBADMSG, "%s: truncated", where);
	want = z->frame_content_size(s->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return pmi_snap_fail(s, -EBADMSG, "%s: not a zstd frame of at most %u bytes", where, SNAP_MAX_RAW);
	if (pmi_snap_chunk_buffers(s, 0, want ? (size_t)want : 1, 0))
		return -ENOMEM;
	got = z->decompress(s->raw, (size_t)want, s->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (z->is_error(got) || got != want)
		return pmi_snap_fail(s, -EBADMSG, "%s: zstd: %s", where,
			    z->is_error(got) ? z->error_name(got) : "content size mismatch");
	*rawlen = got;
	return 0;
}

static int read_bytes(struct pm_snapshot *s, size_t i, pm_snapshot_extent_fn fn, void *data, const char *where)
{
	const struct snap_file *f = &s->files[s->secs[i].file];
	uint64_t off;
	size_t len;
	int r;

	if ((r = load_chunk(s, i, &len, where)))
		return r;
	off = snap_get64(s->zbuf + 8);
	if (off > f->size || len > f->size - off)
		return pmi_snap_fail(s, -EBADMSG, "%s: bytes %llu+%zu past the file's length %llu", where,
			    (unsigned long long)off, len, (unsigned long long)f->size);
	return len ? fn(data, off, s->raw, len) : 0;
}

/*
 * The extents of chunk section @i into s->ext: its own list, or (version 3)
 * the list of the section it refers to, checked within @f's length. The
 * number of extents, *@nwords the words they hold, *@used the bytes of the
 * list in s->raw and *@len those of s->raw, or -errno.
 */
static int chunk_extents(struct pm_snapshot *s, size_t i, const struct snap_file *f, size_t *nwords, size_t *used,
			 size_t *len, const char *where)
{
	size_t j = s->secs[i].ref ? s->secs[i].ref - 1 : i, max = s->secs[i].nwords, xmax;
	char rwhere[SNAP_ERR_MAX / 2];
	const char *why = NULL;
	int next, r, e;

	if (j != i)
		where = pmi_snap_sec_name(s, j, rwhere, sizeof(rwhere));
	if ((r = load_chunk(s, j, len, where)))
		return r;
	/*
	 * The header's word count bounds the words, within the limit of the
	 * file's version (a chunk that holds more fails to decode: absurd
	 * count); the buffers are sized by what the chunk holds (the extent
	 * count it gives, then the words of its extents), not by what its
	 * header claims.
	 */
	max = max < snap_max_words(s->version) ? max : snap_max_words(s->version);
	xmax = pmi_snap_extent_room(s->raw, *len, max);
	if (ext_buffer(s, xmax))
		return -ENOMEM;
	next = pmi_snap_decode_extents(s->raw, *len, s->ext, xmax, max, nwords, used, &why);
	if (next < 0)
		return pmi_snap_fail(s, -EBADMSG, "%s: %s", where, why);
	if (*nwords != s->secs[j].nwords)
		return pmi_snap_fail(s, -EBADMSG, "%s: %zu words, the header says %u", where, *nwords, s->secs[j].nwords);
	for (e = 0; e < next; e++) {
		if (s->ext[e].start + s->ext[e].count > f->size / 8)
			return pmi_snap_fail(s, -EBADMSG, "%s: words past the file's length %llu", where,
				    (unsigned long long)f->size);
	}
	return next;
}

static int read_words(struct pm_snapshot *s, size_t i, pm_snapshot_extent_fn fn, void *data, const char *where)
{
	const struct snap_file *f = &s->files[s->secs[i].file];
	size_t len, nwords, used, done = 0;
	const char *why = NULL;
	int next, r, e;

	if ((next = chunk_extents(s, i, f, &nwords, &used, &len, where)) < 0)
		return next;
	if (s->secs[i].ref) {	/* its own payload: the columns alone */
		if ((r = load_chunk(s, i, &len, where)))
			return r;
		used = 0;
	}
	if (pmi_snap_chunk_buffers(s, 0, 0, nwords ? nwords : 1))
		return -ENOMEM;
	if ((r = pmi_snap_decode_columns(s->raw + used, len - used, s->words, nwords, s->version, &why)))
		return pmi_snap_fail(s, -EBADMSG, "%s: %s", where, why);
	for (e = 0; e < next; e++) {
		if ((r = fn(data, s->ext[e].start * 8, s->words + done, s->ext[e].count * 8ul)))
			return r;
		done += s->ext[e].count;
	}
	return 0;
}

int pm_snapshot_read(struct pm_snapshot *s, const struct pm_snapshot_section *sec, pm_snapshot_extent_fn fn,
		     void *data)
{
	char where[SNAP_ERR_MAX / 2];
	size_t i;

	size_t lo = 0, hi = s->nsecs;

	while (hi - lo > 1) {	/* sections lie in offset order */
		size_t mid = lo + (hi - lo) / 2;
		if (s->secs[mid].offset <= sec->offset)
			lo = mid;
		else
			hi = mid;
	}
	i = lo;
	if (!s->nsecs || s->secs[i].offset != sec->offset ||
	    (sec->type != PM_SNAPSHOT_BYTES && sec->type != PM_SNAPSHOT_WORDS) ||
	    (s->secs[i].type != sec->type && !(s->secs[i].type == PM_SNAPSHOT_REUSE && sec->type == PM_SNAPSHOT_WORDS &&
					       s->version >= SNAP_SERIES_VERSION)))
		return -EINVAL;
	pmi_snap_sec_name(s, i, where, sizeof(where));
	if (sec->type == PM_SNAPSHOT_BYTES)
		return read_bytes(s, i, fn, data, where);
	return read_words(s, i, fn, data, where);
}

void pmi_snap_fail_io(struct pm_snapshot *s, const struct pm_snapshot_section *sec, int r)
{
	pmi_snap_fail(s, r, "section at byte %llu (%s of %s): %s", (unsigned long long)sec->offset, pmi_snap_type_name(sec->type),
	     sec->path ? sec->path : "?", r == -EEXIST ? "the path is in the snapshot twice" : pmi_strerror(-r));
}
