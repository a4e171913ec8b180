/* snapshot_open_files.c - checking the declared files as a snapshot opens: FILE and FILES sections
 * (each path safe to replay, each length one a reader can hold), META, and the frame files' claims.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot_reader.h"
#include "zstd_load.h"

/*
 * A path in the tree: relative, components neither empty, "." nor "..",
 * printable ASCII (unsigned: where char is signed a byte over 0x7f was
 * refused as negative, where unsigned (arm64) a C1 control such as 0x9b got
 * through), no NUL, at most SNAP_MAX_DEPTH components (what a replay's
 * keeper removes after a kill).
 */
static bool path_ok(const char *p, size_t n)
{
	size_t i, start = 0, parts = 0;

	if (!n || n > SNAP_MAX_PATH)
		return false;
	for (i = 0; i <= n; i++) {
		unsigned char c = i < n ? (unsigned char)p[i] : '/';

		if (c < 0x20 || c >= 0x7f)
			return false;
		if (c != '/')
			continue;
		if (++parts > SNAP_MAX_DEPTH)
			return false;
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}

/* Declare the next file from a FILE section or a FILES record: every field checked, the path copied. */
static int add_file(struct pm_snapshot *s, uint32_t kind, uint64_t size, const char *path, uint32_t plen,
		    const char *where)
{
	struct snap_file *f;
	const char *why;

	if (s->nfiles >= SNAP_MAX_FILES ||
	    pmi_grow(&s->files, &s->fcap, s->nfiles + 1, sizeof(*f)))
		return pmi_snap_fail(s, -ENOMEM, "%s: too many files", where);
	if (kind != PM_SNAPSHOT_BYTES && kind != PM_SNAPSHOT_WORDS)
		return pmi_snap_fail(s, -EBADMSG, "%s: unknown file kind %u", where, kind);
	if (size > SNAP_MAX_FILE_SIZE || (kind == PM_SNAPSHOT_WORDS && size % 8))
		return pmi_snap_fail(s, -EBADMSG, "%s: absurd file length %llu", where, (unsigned long long)size);
	if (!plen || plen > SNAP_MAX_PATH || !path_ok(path, plen) || memchr(path, '\0', plen))
		return pmi_snap_fail(s, -EBADMSG, "%s: unsafe path in the tree", where);
	f = &s->files[s->nfiles];
	if (!(f->path = malloc(plen + 1)))
		return -ENOMEM;
	memcpy(f->path, path, plen);
	f->path[plen] = '\0';
	f->kind = kind;
	f->size = size;
	f->sec = s->nsecs - 1;
	s->nfiles++;
	/* frame files wait for META (where their frames start): check_claims */
	if (snap_claim_check(f->path, kind, size, UINT64_MAX, &why))
		return pmi_snap_fail(s, -EFBIG, "%s: %s claims %llu bytes, %s", where, f->path, (unsigned long long)size,
				     why);
	return 0;
}

/* Every frame file's claim, now that META says where the frames start (add_file checked the others). */
int pmi_snap_check_claims(struct pm_snapshot *s)
{
	uint64_t start = pmi_snap_frame_start(s);
	const char *why;
	char where[SNAP_ERR_MAX / 2];
	size_t i;

	for (i = 0; i < s->nfiles; i++) {
		const struct snap_file *f = &s->files[i];
		if (snap_claim_check(f->path, f->kind, f->size, start, &why))
			return pmi_snap_fail(s, -EFBIG, "%s: %s claims %llu bytes, %s", pmi_snap_sec_name(s, f->sec, where,
					     sizeof(where)), f->path, (unsigned long long)f->size, why);
	}
	return 0;
}

int pmi_snap_load_file_sec(struct pm_snapshot *s, size_t i, const char *where)
{
	const struct snap_sec *c = &s->secs[i];
	unsigned char fixed[SNAP_FILE_FIXED];
	char path[SNAP_MAX_PATH];
	uint32_t plen;
	int r;

	if (c->length < SNAP_FILE_FIXED || c->length > SNAP_FILE_FIXED + SNAP_MAX_PATH)
		return pmi_snap_fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if ((r = pmi_snap_read_at(s, fixed, sizeof(fixed), c->offset + SNAP_SEC_SIZE)))
		return r;
	plen = snap_get32(fixed + 16);
	if (snap_get32(fixed) != s->nfiles)
		return pmi_snap_fail(s, -EBADMSG, "%s: file id %u out of order (expected %zu)", where, snap_get32(fixed),
			    s->nfiles);
	if (plen != c->length - SNAP_FILE_FIXED)
		return pmi_snap_fail(s, -EBADMSG, "%s: path length %u does not fit the section", where, plen);
	if ((r = pmi_snap_read_at(s, path, plen, c->offset + SNAP_SEC_SIZE + SNAP_FILE_FIXED)))
		return r;
	s->secs[i].file = (uint32_t)s->nfiles;
	s->secs[i].nfiles = 1;
	return add_file(s, snap_get32(fixed + 4), snap_get64(fixed + 8), path, plen, where);
}

/* FILES (version 2): u32 count, u32 first id, a zstd frame of count records (man/pagemap-snapshot.5). */
int pmi_snap_load_files_sec(struct pm_snapshot *s, size_t i, const char *where)
{
	struct snap_sec *c = &s->secs[i];
	size_t zlen = (size_t)(c->length - 8), got, pos = 0;
	unsigned long long want;
	uint32_t count, n;
	const struct pmi_zstd *z = pmi_zstd(NULL, 0);
	int r;

	if (c->length < 8 || c->length - 8 > ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
		return pmi_snap_fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if (pmi_snap_chunk_buffers(s, (size_t)c->length, 0, 0))
		return -ENOMEM;
	if ((r = pmi_snap_read_at(s, s->zbuf, c->length, c->offset + SNAP_SEC_SIZE)))
		return r;
	count = snap_get32(s->zbuf);
	if (snap_get32(s->zbuf + 4) != s->nfiles)
		return pmi_snap_fail(s, -EBADMSG, "%s: file id %u out of order (expected %zu)", where, snap_get32(s->zbuf + 4),
			    s->nfiles);
	if (!count || count > SNAP_MAX_FILES - s->nfiles)
		return pmi_snap_fail(s, -EBADMSG, "%s: absurd file count %u", where, count);
	if (!z)
		return pmi_snap_fail(s, -ELIBACC, "%s: libzstd is not loaded", where);
	want = z->frame_content_size(s->zbuf + 8, zlen);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return pmi_snap_fail(s, -EBADMSG, "%s: not a zstd frame of at most %u bytes", where, SNAP_MAX_RAW);
	if (pmi_snap_chunk_buffers(s, 0, want ? (size_t)want : 1, 0))
		return -ENOMEM;
	got = z->decompress(s->raw, (size_t)want, s->zbuf + 8, zlen);
	if (z->is_error(got) || got != want)
		return pmi_snap_fail(s, -EBADMSG, "%s: zstd: %s", where,
			    z->is_error(got) ? z->error_name(got) : "content size mismatch");
	c->file = (uint32_t)s->nfiles;
	c->nfiles = count;
	for (n = 0; n < count; n++) {
		uint32_t plen;
		if (got - pos < SNAP_FILES_FIXED || (plen = snap_get32(s->raw + pos + 12)) > got - pos - SNAP_FILES_FIXED)
			return pmi_snap_fail(s, -EBADMSG, "%s: record %u truncated", where, n);
		if ((r = add_file(s, snap_get32(s->raw + pos), snap_get64(s->raw + pos + 4),
				  (const char *)s->raw + pos + SNAP_FILES_FIXED, plen, where)))
			return r;
		pos += SNAP_FILES_FIXED + plen;
	}
	if (pos != got)
		return pmi_snap_fail(s, -EBADMSG, "%s: trailing bytes after %u records", where, count);
	return 0;
}

int pmi_snap_load_meta_sec(struct pm_snapshot *s, const struct snap_sec *c, const char *where)
{
	char *m;

	if (c->length > SNAP_MAX_META || s->meta_len + c->length > SNAP_MAX_META)
		return pmi_snap_fail(s, -EBADMSG, "%s: metadata over %u bytes", where, SNAP_MAX_META);
	if (!(m = realloc(s->meta, s->meta_len + c->length + 1)))
		return -ENOMEM;
	s->meta = m;
	if (pmi_snap_read_at(s, m + s->meta_len, c->length, c->offset + SNAP_SEC_SIZE))
		return pmi_snap_fail(s, -EBADMSG, "%s: truncated", where);
	if (memchr(m + s->meta_len, '\0', c->length))
		return pmi_snap_fail(s, -EBADMSG, "%s: NUL byte in metadata", where);
	for (size_t i = s->meta_len; i < s->meta_len + c->length; i++)
		if (m[i] == '\n')
			m[i] = '\0';	/* lines become strings: pm_snapshot_meta hands out values */
	s->meta_len += c->length;
	m[s->meta_len] = '\0';
	return 0;
}
