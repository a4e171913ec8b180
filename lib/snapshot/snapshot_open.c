/* snapshot_open.c - open a snapshot and check it whole: header, sections and checksums, declared files, META, index
 * (man/pagemap-snapshot.5). Iterating and decoding: snapshot_read.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL	/* header-only: no link dependency */
#include <xxhash.h>
#include "snapshot_reader.h"
#include "zstd_load.h"

/* Fuzzers cannot forge checksums: their builds read past a mismatch (every other check stays). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define SNAP_VERIFY 0
#else
#define SNAP_VERIFY 1
#endif

uint64_t pmi_snap_hash(const void *p, size_t n)
{
	return XXH64(p, n, 0);
}

uint32_t pmi_snap_header_check(uint32_t type, uint64_t length, uint64_t hash)
{
	unsigned char b[20];

	snap_put32(b, type);
	snap_put64(b + 4, length);
	snap_put64(b + 12, hash);
	return (uint32_t)XXH64(b, sizeof(b), 0);
}

const char *pmi_snap_type_name(uint32_t t)
{
	static const char *names[] = { "?", "META", "FILE", "BYTES", "WORDS", "INDEX", "FILES", "REUSE", "SERIES" };

	return t < PM_ARRAY_SIZE(names) ? names[t] : "unknown type";
}

int pmi_snap_fail(struct pm_snapshot *s, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return e;
}

/* "section 7 (WORDS of proc/42/pagemap)" for error messages. */
const char *pmi_snap_sec_name(const struct pm_snapshot *s, size_t i, char *buf, size_t size)
{
	const struct snap_sec *c = &s->secs[i];
	bool has_file = (c->type == PM_SNAPSHOT_BYTES || c->type == PM_SNAPSHOT_WORDS ||
			 (c->type == PM_SNAPSHOT_REUSE && s->version >= SNAP_SERIES_VERSION)) && c->file < s->nfiles;

	snprintf(buf, size, "section %zu (%s%s%s, at byte %llu)", i, pmi_snap_type_name(c->type), has_file ? " of " : "",
		 has_file ? s->files[c->file].path : "", (unsigned long long)c->offset);
	return buf;
}

int pmi_snap_read_at(struct pm_snapshot *s, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EBADMSG;
		got += (size_t)r;
	}
	return 0;
}

/* Hash a payload in bounded steps (a section may be large: its length is checked against the file). */
static int hash_payload(struct pm_snapshot *s, uint64_t off, uint64_t len, uint64_t *out)
{
	XXH64_state_t st;
	unsigned char buf[65536];

	XXH64_reset(&st, 0);
	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		int r = pmi_snap_read_at(s, buf, n, off);
		if (r)
			return r;
		XXH64_update(&st, buf, n);
		off += n;
		len -= n;
	}
	*out = XXH64_digest(&st);
	return 0;
}

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

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	void *np;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	np = realloc(*p, nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* Declare the next file from a FILE section or a FILES record: every field checked, the path copied. */
static int add_file(struct pm_snapshot *s, uint32_t kind, uint64_t size, const char *path, uint32_t plen,
		    const char *where)
{
	struct snap_file *f;
	const char *why;

	if (s->nfiles >= SNAP_MAX_FILES || grow((void **)&s->files, &s->fcap, s->nfiles, sizeof(*f)))
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
static int check_claims(struct pm_snapshot *s)
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

static int load_file_sec(struct pm_snapshot *s, size_t i, const char *where)
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
static int load_files_sec(struct pm_snapshot *s, size_t i, const char *where)
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

static int load_meta_sec(struct pm_snapshot *s, const struct snap_sec *c, const char *where)
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

/* The section whose header is at @offset among the first @n, or @n. */
static size_t find_sec(const struct pm_snapshot *s, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {	/* sections lie in offset order */
		size_t mid = lo + (hi - lo) / 2;
		if (s->secs[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && s->secs[lo].offset == offset ? lo : n;
}

/*
 * A version 3 WORDS chunk's ref: the offset of an earlier WORDS section
 * whose extent list it shares, one with its own list and as many words.
 * Earlier versions wrote 0 there and their readers ignored the field: so
 * does this one for their files.
 */
static int check_ref(struct pm_snapshot *s, struct snap_sec *c, uint64_t ref, const char *where)
{
	size_t i = s->nsecs - 1, j;

	if (!ref || s->version < 3)
		return 0;
	j = find_sec(s, i, ref);
	if (j == i)
		return pmi_snap_fail(s, -EBADMSG, "%s: its extents are at byte %llu, where no section before it starts",
				     where, (unsigned long long)ref);
	if (s->secs[j].type != PM_SNAPSHOT_WORDS || s->secs[j].ref)
		return pmi_snap_fail(s, -EBADMSG, "%s: its extents are in section %zu, not a WORDS chunk with its own",
				     where, j);
	if (s->secs[j].nwords != c->nwords)
		return pmi_snap_fail(s, -EBADMSG, "%s: %u words, the chunk whose extents it shares (section %zu) %u",
				     where, c->nwords, j, s->secs[j].nwords);
	c->ref = j + 1;
	return 0;
}

bool pmi_snap_chunk_ref(const struct pm_snapshot *s, uint64_t offset, uint64_t *ref_offset, uint64_t *ref_length)
{
	size_t i = find_sec(s, s->nsecs, offset);

	if (i == s->nsecs || !s->secs[i].ref)
		return false;
	*ref_offset = s->secs[s->secs[i].ref - 1].offset;
	*ref_length = s->secs[s->secs[i].ref - 1].length;
	return true;
}

void pmi_snap_chunk_data(const struct pm_snapshot *s, uint64_t offset, uint64_t *data_off, uint64_t *data_len)
{
	size_t i = find_sec(s, s->nsecs, offset);

	if (i < s->nsecs) {
		*data_off = s->secs[i].data_off;
		*data_len = s->secs[i].data_len;
	}
}

/* A chunk names a file declared before it, of the chunk's kind. */
static int check_chunk_sec(struct pm_snapshot *s, struct snap_sec *c, const char *where)
{
	unsigned char fixed[SNAP_CHUNK_FIXED];
	char named[SNAP_ERR_MAX / 2];
	int r;

	if (c->length < SNAP_CHUNK_FIXED)
		return pmi_snap_fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if ((r = pmi_snap_read_at(s, fixed, sizeof(fixed), c->offset + SNAP_SEC_SIZE)))
		return r;
	c->file = snap_get32(fixed);
	if (c->file >= s->nfiles)
		return pmi_snap_fail(s, -EBADMSG, "%s: file id %u not declared", where, c->file);
	if (s->files[c->file].kind != c->type)
		return pmi_snap_fail(s, -EBADMSG, "%s: chunk kind does not match its file %s", where, s->files[c->file].path);
	where = pmi_snap_sec_name(s, (size_t)(c - s->secs), named, sizeof(named));	/* now with its file's path */
	if (c->type != PM_SNAPSHOT_WORDS)
		return 0;
	c->nwords = snap_get32(fixed + 4);
	return check_ref(s, c, snap_get64(fixed + 8), where);
}

/*
 * REUSE (version 4): a WORDS chunk stored by an earlier member of the
 * series, named by the offset of its header. It must lie wholly before this
 * member, be a WORDS section with its own extent list and the word count
 * given here, and pass its checksums; its words are this member's file's.
 */
static int check_reuse(struct pm_snapshot *s, struct snap_sec *c, const char *where)
{
	unsigned char fixed[SNAP_REUSE_LEN], h[SNAP_SEC_SIZE], tf[SNAP_CHUNK_FIXED];
	char named[SNAP_ERR_MAX / 2];
	uint64_t t, len, got;
	int r;

	if (s->version < SNAP_SERIES_VERSION)
		return 0;	/* a type of a later version in an earlier file: skipped, as any unknown type */
	if (c->length != SNAP_REUSE_LEN)
		return pmi_snap_fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if ((r = pmi_snap_read_at(s, fixed, sizeof(fixed), c->offset + SNAP_SEC_SIZE)))
		return r;
	c->file = snap_get32(fixed);
	c->nwords = snap_get32(fixed + 4);
	t = snap_get64(fixed + 8);
	if (c->file >= s->nfiles)
		return pmi_snap_fail(s, -EBADMSG, "%s: file id %u not declared", where, c->file);
	if (s->files[c->file].kind != PM_SNAPSHOT_WORDS)
		return pmi_snap_fail(s, -EBADMSG, "%s: chunk kind does not match its file %s", where, s->files[c->file].path);
	where = pmi_snap_sec_name(s, (size_t)(c - s->secs), named, sizeof(named));
	if (t < SNAP_HEAD_SIZE || t >= s->base || s->base - t < SNAP_SEC_SIZE + SNAP_CHUNK_FIXED)
		return pmi_snap_fail(s, -EBADMSG, "%s: refers to byte %llu, not a chunk of an earlier member", where,
				     (unsigned long long)t);
	if ((r = pmi_snap_read_at(s, h, sizeof(h), t)))
		return r;
	len = snap_get64(h + 8);
	if (snap_get32(h) != PM_SNAPSHOT_WORDS ||
	    (SNAP_VERIFY && snap_get32(h + 4) != pmi_snap_header_check(PM_SNAPSHOT_WORDS, len, snap_get64(h + 16))))
		return pmi_snap_fail(s, -EBADMSG, "%s: refers to byte %llu, where no WORDS section starts", where,
				     (unsigned long long)t);
	if (len < SNAP_CHUNK_FIXED || len > s->base - t - SNAP_SEC_SIZE ||
	    len - SNAP_CHUNK_FIXED > ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
		return pmi_snap_fail(s, -EBADMSG, "%s: the chunk it refers to (at byte %llu) has a bad length %llu", where,
				     (unsigned long long)t, (unsigned long long)len);
	if ((r = hash_payload(s, t + SNAP_SEC_SIZE, len, &got)))
		return r;
	if (SNAP_VERIFY && got != snap_get64(h + 16))
		return pmi_snap_fail(s, -EBADMSG, "%s: the chunk it refers to (at byte %llu): payload checksum mismatch",
				     where, (unsigned long long)t);
	if ((r = pmi_snap_read_at(s, tf, sizeof(tf), t + SNAP_SEC_SIZE)))
		return r;
	if (snap_get32(tf + 4) != c->nwords || snap_get64(tf + 8) || c->nwords > snap_max_words(s->version))
		return pmi_snap_fail(s, -EBADMSG, "%s: the chunk it refers to (at byte %llu) is not one of %u words "
				     "with its own extents", where, (unsigned long long)t, c->nwords);
	c->data_off = t;
	c->data_len = len;
	return 0;
}

static int check_header(struct pm_snapshot *s)
{
	unsigned char h[SNAP_HEAD_SIZE];
	uint32_t version;

	if (s->fsize < SNAP_HEAD_SIZE + SNAP_SEC_SIZE + SNAP_TRAILER_SIZE || pmi_snap_read_at(s, h, sizeof(h), 0) ||
	    memcmp(h, SNAP_MAGIC, 8))
		return pmi_snap_fail(s, -EBADMSG, "not a pagemap snapshot (no magic)");
	version = snap_get32(h + 8);
	if (SNAP_VERIFY && snap_get32(h + 12) != (uint32_t)pmi_snap_hash(h, 12))
		return pmi_snap_fail(s, -EBADMSG, "file header: checksum mismatch");
	if (version < 1 || version > SNAP_SERIES_VERSION)	/* each version only adds to the one before */
		return pmi_snap_fail(s, -EPROTONOSUPPORT, "file header: format version %u (this reader knows 1 to %u)", version,
			    SNAP_SERIES_VERSION);
	s->version = version;
	return 0;
}

/* Read the header of the section at @off into a new table entry; its payload must lie before @end. */
static int add_section(struct pm_snapshot *s, uint64_t off, uint64_t end)
{
	unsigned char h[SNAP_SEC_SIZE];
	struct snap_sec *c;
	uint64_t hash, got;
	char where[SNAP_ERR_MAX / 2];
	int r;

	if (grow((void **)&s->secs, &s->cap, s->nsecs, sizeof(*c)))
		return -ENOMEM;
	c = &s->secs[s->nsecs];
	memset(c, 0, sizeof(*c));
	c->offset = off;
	c->data_off = off;
	snprintf(where, sizeof(where), "section %zu (at byte %llu)", s->nsecs, (unsigned long long)off);
	if (end - off < SNAP_SEC_SIZE || pmi_snap_read_at(s, h, sizeof(h), off))
		return pmi_snap_fail(s, -EBADMSG, "%s: truncated header", where);
	c->type = snap_get32(h);
	c->length = snap_get64(h + 8);
	hash = snap_get64(h + 16);
	if (SNAP_VERIFY && snap_get32(h + 4) != pmi_snap_header_check(c->type, c->length, hash))
		return pmi_snap_fail(s, -EBADMSG, "%s: header checksum mismatch", where);
	if (c->length > end - off - SNAP_SEC_SIZE)
		return pmi_snap_fail(s, -EBADMSG, "%s: length %llu runs past the end", where, (unsigned long long)c->length);
	c->data_len = c->length;
	s->nsecs++;
	pmi_snap_sec_name(s, s->nsecs - 1, where, sizeof(where));
	if ((r = hash_payload(s, off + SNAP_SEC_SIZE, c->length, &got)))
		return r == -EBADMSG ? pmi_snap_fail(s, r, "%s: truncated", where) : r;
	if (SNAP_VERIFY && got != hash)
		return pmi_snap_fail(s, -EBADMSG, "%s: payload checksum mismatch", where);
	switch (c->type) {
	case PM_SNAPSHOT_META:
		return load_meta_sec(s, c, where);
	case PM_SNAPSHOT_FILE:
		return load_file_sec(s, s->nsecs - 1, where);
	case PM_SNAPSHOT_FILES:
		return load_files_sec(s, s->nsecs - 1, where);
	case PM_SNAPSHOT_BYTES:
	case PM_SNAPSHOT_WORDS:
		return check_chunk_sec(s, c, where);
	case PM_SNAPSHOT_REUSE:
		return check_reuse(s, c, where);
	default:	/* INDEX is checked after the scan; unknown types are skipped */
		return 0;
	}
}

/* A varint read from the payload [off, end) of a section through a small buffer (bounded memory). */
struct vin {
	struct pm_snapshot *s;
	uint64_t off, end;
	unsigned char buf[4096];
	size_t pos, len;
};

/* 0 with *@v; 1 at the end of the payload; -1 for a varint cut short or over 64 bits; -errno. */
static int vin_get(struct vin *v, uint64_t *out)
{
	unsigned char b[10];
	const unsigned char *p = b;
	size_t n = 0;
	int r;

	for (; n < sizeof(b); n++) {
		if (v->pos == v->len) {
			size_t want = v->end - v->off < sizeof(v->buf) ? (size_t)(v->end - v->off) : sizeof(v->buf);
			if (!want)
				break;
			if ((r = pmi_snap_read_at(v->s, v->buf, want, v->off)))
				return r;
			v->off += want;
			v->pos = 0;
			v->len = want;
		}
		b[n] = v->buf[v->pos++];
		if (!(b[n] & 0x80)) {
			n++;
			break;
		}
	}
	if (!n)
		return 1;
	return pmi_snap_get_varint(&p, b + n, out) ? -1 : 0;
}

/*
 * Version 3's INDEX: varint count, then per section varint type and varint
 * payload length, each matching the section found in its place.
 */
static int check_index_v3(struct pm_snapshot *s, const struct snap_sec *c, const char *where)
{
	struct vin *v = calloc(1, sizeof(*v));
	uint64_t n, i, type, len;
	int r;

	if (!v)
		return -ENOMEM;
	*v = (struct vin){ .s = s, .off = c->offset + SNAP_SEC_SIZE, .end = c->offset + SNAP_SEC_SIZE + c->length };
	if ((r = vin_get(v, &n))) {
		r = r < -1 ? r : pmi_snap_fail(s, -EBADMSG, "%s: too short", where);
		goto out;
	}
	if (n != s->nsecs - 1) {
		r = pmi_snap_fail(s, -EBADMSG, "%s: lists %llu sections, the file has %zu", where, (unsigned long long)n,
				  s->nsecs - 1);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((r = vin_get(v, &type)) || (r = vin_get(v, &len))) {
			r = r < -1 ? r : pmi_snap_fail(s, -EBADMSG, "%s: entry %llu truncated", where, (unsigned long long)i);
			goto out;
		}
		if (type != s->secs[i].type || len != s->secs[i].length) {
			r = pmi_snap_fail(s, -EBADMSG, "%s: entry %llu does not match the section", where,
					  (unsigned long long)i);
			goto out;
		}
	}
	if (vin_get(v, &len) != 1)
		r = pmi_snap_fail(s, -EBADMSG, "%s: trailing bytes after %llu entries", where, (unsigned long long)n);
out:
	free(v);
	return r;
}

/* The INDEX lists every section before it, in order; the trailer points at it. */
static int check_index(struct pm_snapshot *s, uint64_t index_off)
{
	const struct snap_sec *c = &s->secs[s->nsecs - 1];
	unsigned char e[16];
	uint64_t n, i;
	char where[SNAP_ERR_MAX / 2];

	pmi_snap_sec_name(s, s->nsecs - 1, where, sizeof(where));
	if (c->type != PM_SNAPSHOT_INDEX || (s->members ? c->offset + SNAP_SEC_SIZE + c->length != s->limit
							: c->offset != index_off))
		return pmi_snap_fail(s, -EBADMSG, "%s: does not point at the index", s->members ? "series index" : "trailer");
	if (s->version >= 3)
		return check_index_v3(s, c, where);
	if (c->length < 8 || pmi_snap_read_at(s, e, 8, c->offset + SNAP_SEC_SIZE))
		return pmi_snap_fail(s, -EBADMSG, "%s: too short", where);
	n = snap_get64(e);
	if (n != s->nsecs - 1 || c->length != 8 + n * 16)
		return pmi_snap_fail(s, -EBADMSG, "%s: lists %llu sections, the file has %zu", where, (unsigned long long)n,
			    s->nsecs - 1);
	for (i = 0; i < n; i++) {
		if (pmi_snap_read_at(s, e, 16, c->offset + SNAP_SEC_SIZE + 8 + i * 16))
			return pmi_snap_fail(s, -EBADMSG, "%s: truncated", where);
		if (snap_get32(e) != s->secs[i].type || snap_get64(e + 8) != s->secs[i].offset)
			return pmi_snap_fail(s, -EBADMSG, "%s: entry %llu does not match the section", where,
				    (unsigned long long)i);
	}
	return 0;
}

/* One varint of the SERIES payload [*p, end): 0, or -1 cut short. */
static int series_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	return pmi_snap_get_varint(p, end, v);
}

/* The members of the SERIES payload @buf of @len bytes, checked to tile [16, @series_off). */
static int parse_series(struct pm_snapshot *s, const unsigned char *buf, size_t len, uint64_t series_off,
			const char *where)
{
	const unsigned char *p = buf, *end = buf + len;
	uint64_t n, at = SNAP_HEAD_SIZE, v[8];
	size_t i, k, npid = 0;

	if (series_get(&p, end, &n) || !n || n > SNAP_MAX_MEMBERS || n > len / 8)
		return pmi_snap_fail(s, -EBADMSG, "%s: absurd member count", where);
	/* each listed PID takes a byte at least, and a member lists at most SNAP_MAX_MEMBER_PIDS */
	if (!(s->members = calloc((size_t)n, sizeof(*s->members))) ||
	    !(s->pids = calloc(len < n * SNAP_MAX_MEMBER_PIDS ? len : (size_t)n * SNAP_MAX_MEMBER_PIDS, sizeof(*s->pids))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct snap_member *m = &s->members[i];
		for (k = 0; k < 8; k++)
			if (series_get(&p, end, &v[k]))
				return pmi_snap_fail(s, -EBADMSG, "%s: member %zu truncated", where, i + 1);
		*m = (struct snap_member){ .offset = v[0], .length = v[1], .time = v[2], .words_bytes = v[3],
					   .reused = v[4], .reused_bytes = v[5] };
		if (v[6] > UINT32_MAX || v[7] > SNAP_MAX_MEMBER_PIDS || v[7] > v[6])
			return pmi_snap_fail(s, -EBADMSG, "%s: member %zu: absurd PID count", where, i + 1);
		m->pids_total = (uint32_t)v[6];
		m->npids = (uint32_t)v[7];
		m->pid_at = (uint32_t)npid;
		if (m->offset != at || m->length < SNAP_SEC_SIZE + 1 || m->length > series_off - at)
			return pmi_snap_fail(s, -EBADMSG, "%s: member %zu at byte %llu, length %llu: not where the one "
					     "before ends, or past the index", where, i + 1,
					     (unsigned long long)m->offset, (unsigned long long)m->length);
		at += m->length;
		for (k = 0; k < m->npids; k++) {
			uint64_t pid;
			if (series_get(&p, end, &pid))
				return pmi_snap_fail(s, -EBADMSG, "%s: member %zu truncated", where, i + 1);
			if (!pid || pid > INT32_MAX || npid >= len || npid >= n * SNAP_MAX_MEMBER_PIDS)
				return pmi_snap_fail(s, -EBADMSG, "%s: member %zu: bad PID", where, i + 1);
			s->pids[npid++] = (int32_t)pid;
		}
	}
	if (at != series_off)
		return pmi_snap_fail(s, -EBADMSG, "%s: the members end at byte %llu, the index starts at %llu", where,
				     (unsigned long long)at, (unsigned long long)series_off);
	if (p != end)
		return pmi_snap_fail(s, -EBADMSG, "%s: trailing bytes after %llu members", where, (unsigned long long)n);
	s->nmembers = (size_t)n;
	return 0;
}

/* A series' SERIES section at @off, the last before the trailer at @end: header, checksums, the members. */
static int load_series(struct pm_snapshot *s, uint64_t off, uint64_t end)
{
	unsigned char h[SNAP_SEC_SIZE], *buf;
	char where[SNAP_ERR_MAX / 2];
	uint64_t len;
	int r;

	snprintf(where, sizeof(where), "series index (SERIES section at byte %llu)", (unsigned long long)off);
	if (end - off < SNAP_SEC_SIZE || pmi_snap_read_at(s, h, sizeof(h), off))
		return pmi_snap_fail(s, -EBADMSG, "%s: truncated header", where);
	len = snap_get64(h + 8);
	if (snap_get32(h) != PM_SNAPSHOT_SERIES)
		return pmi_snap_fail(s, -EBADMSG, "%s: type %u, not SERIES", where, snap_get32(h));
	if (SNAP_VERIFY && snap_get32(h + 4) != pmi_snap_header_check(PM_SNAPSHOT_SERIES, len, snap_get64(h + 16)))
		return pmi_snap_fail(s, -EBADMSG, "%s: header checksum mismatch", where);
	if (len != end - off - SNAP_SEC_SIZE || len > SNAP_MAX_SERIES)
		return pmi_snap_fail(s, -EBADMSG, "%s: length %llu does not end at the trailer", where,
				     (unsigned long long)len);
	if (!(buf = malloc(len ? (size_t)len : 1)))
		return -ENOMEM;
	if ((r = pmi_snap_read_at(s, buf, (size_t)len, off + SNAP_SEC_SIZE)))
		r = pmi_snap_fail(s, -EBADMSG, "%s: truncated", where);
	else if (SNAP_VERIFY && pmi_snap_hash(buf, (size_t)len) != snap_get64(h + 16))
		r = pmi_snap_fail(s, -EBADMSG, "%s: payload checksum mismatch", where);
	else
		r = parse_series(s, buf, (size_t)len, off, where);
	free(buf);
	return r;
}

/* Member @want (1.., or -1.. from the end, 0 the last) of a series: its bytes become the file read. */
static int pick_member(struct pm_snapshot *s, int want)
{
	long long i = want > 0 ? (long long)want - 1 : (long long)s->nmembers + (want ? want : -1);

	if (i < 0 || i >= (long long)s->nmembers)
		return pmi_snap_fail(s, -ERANGE, "no member %d: the series has %zu", want, s->nmembers);
	s->member = (size_t)i;
	s->base = s->members[i].offset;
	s->limit = s->base + s->members[i].length;
	return 0;
}

unsigned pm_snapshot_members(const struct pm_snapshot *s, unsigned *open)
{
	if (open)
		*open = s->members ? (unsigned)s->member + 1 : 1;
	return (unsigned)s->nmembers;
}

int pm_snapshot_member_info(const struct pm_snapshot *s, unsigned number, struct pm_snapshot_member *out)
{
	const struct snap_member *m;

	if (!s->members)
		return -EINVAL;
	if (!number || number > s->nmembers)
		return -ERANGE;
	m = &s->members[number - 1];
	*out = (struct pm_snapshot_member){ .number = number, .offset = m->offset, .length = m->length,
					    .time = (int64_t)m->time, .words_bytes = m->words_bytes,
					    .reused = m->reused, .reused_bytes = m->reused_bytes,
					    .npids = m->pids_total, .listed = m->npids, .pids = s->pids + m->pid_at };
	return 0;
}

static int scan(struct pm_snapshot *s, int want)
{
	unsigned char t[SNAP_TRAILER_SIZE];
	uint64_t off = SNAP_HEAD_SIZE, end, index_off;
	int r;

	if ((r = check_header(s)))
		return r;
	if (s->version < SNAP_SERIES_VERSION && want != 0 && want != 1 && want != -1)
		return pmi_snap_fail(s, -ERANGE, "no member %d: a plain snapshot is one", want);
	end = s->fsize - SNAP_TRAILER_SIZE;
	if (pmi_snap_read_at(s, t, sizeof(t), end) || memcmp(t + 8, SNAP_END_MAGIC, 8))
		return pmi_snap_fail(s, -EBADMSG, "trailer: missing (the file is truncated, or its writing did not finish)");
	index_off = snap_get64(t);
	if (index_off < SNAP_HEAD_SIZE || index_off >= end)
		return pmi_snap_fail(s, -EBADMSG, "trailer: index offset %llu out of the file", (unsigned long long)index_off);
	if (s->version >= SNAP_SERIES_VERSION) {	/* the trailer points at the SERIES index: one member's bytes */
		if ((r = load_series(s, index_off, end)) || (r = pick_member(s, want)))
			return r;
		off = s->base;
		end = s->limit;
	}
	s->base = off;
	s->limit = end;
	while (off < end) {
		if ((r = add_section(s, off, end)))
			return r;
		off += SNAP_SEC_SIZE + s->secs[s->nsecs - 1].length;
		if (s->secs[s->nsecs - 1].type == PM_SNAPSHOT_INDEX)
			break;
	}
	if (off != end || !s->nsecs)
		return pmi_snap_fail(s, -EBADMSG, "index: not the last section");
	return check_index(s, index_off);
}

static struct pm_snapshot *open_common(int fd, bool own, int want, char *err, size_t errsize)
{
	struct pm_snapshot *s = calloc(1, sizeof(*s));
	struct stat st;
	int r = -ENOMEM;

	if (!s)
		goto out;
	s->fd = fd;
	s->own_fd = own;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = pmi_snap_fail(s, -EBADMSG, "not a regular file");
		goto out;
	}
	s->fsize = (uint64_t)st.st_size;
	if (!pmi_zstd(s->err, sizeof(s->err))) {
		r = -ELIBACC;
		goto out;
	}
	r = scan(s, want);
	if (!r)
		r = check_claims(s);
	if (!r)
		return s;
out:
	if (err && errsize)
		snprintf(err, errsize, "%s", s && s->err[0] ? s->err : strerror(-r));
	if (s)
		s->own_fd = own;
	else if (own)
		close(fd);
	pm_snapshot_close(s);
	errno = -r;
	return NULL;
}

struct pm_snapshot *pm_snapshot_open_fd(int fd, char *err, size_t errsize)
{
	return open_common(fd, false, 0, err, errsize);
}

struct pm_snapshot *pm_snapshot_open_member_fd(int fd, int member, char *err, size_t errsize)
{
	return open_common(fd, false, member, err, errsize);
}

struct pm_snapshot *pm_snapshot_open_member(const char *path, int member, char *err, size_t errsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		int e = errno;
		if (err && errsize)
			snprintf(err, errsize, "%s", strerror(e));
		errno = e;
		return NULL;
	}
	return open_common(fd, true, member, err, errsize);
}

/* "FILE@N" (N an int, maybe negative) when no file has that name: the path's length before '@' and N. */
static bool member_suffix(const char *path, size_t *len, int *member)
{
	const char *at = strrchr(path, '@');
	char *end;
	long n;

	if (!at || at == path || !at[1] || access(path, F_OK) == 0)
		return false;
	errno = 0;
	n = strtol(at + 1, &end, 10);
	if (errno || *end || n < INT_MIN || n > INT_MAX || !(at[1] == '-' || (at[1] >= '0' && at[1] <= '9')))
		return false;
	*len = (size_t)(at - path);
	*member = (int)n;
	return true;
}

struct pm_snapshot *pm_snapshot_open(const char *path, char *err, size_t errsize)
{
	struct pm_snapshot *s;
	size_t len;
	int member, e;
	char *base;

	if (!member_suffix(path, &len, &member))
		return pm_snapshot_open_member(path, 0, err, errsize);
	if (!(base = strndup(path, len)))
		return NULL;
	s = pm_snapshot_open_member(base, member, err, errsize);
	e = errno;
	free(base);
	errno = e;
	return s;
}

void pm_snapshot_close(struct pm_snapshot *s)
{
	size_t i;

	if (!s)
		return;
	if (s->own_fd)
		close(s->fd);
	for (i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	free(s->secs);
	free(s->meta);
	free(s->zbuf);
	free(s->raw);
	free(s->words);
	free(s->ext);
	free(s->members);
	free(s->pids);
	free(s);
}

const char *pm_snapshot_error(const struct pm_snapshot *s)
{
	return s->err[0] ? s->err : NULL;
}

