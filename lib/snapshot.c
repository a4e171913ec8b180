/* snapshot.c - the snapshot reader: check a whole file, iterate its sections, decode chunks (man/pagemap-snapshot.5). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#define XXH_INLINE_ALL	/* header-only: no link dependency */
#include <xxhash.h>
#include "internal.h"
#include "snapshot.h"

/* Fuzzers cannot forge checksums: their builds read past a mismatch (every other check stays). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define SNAP_VERIFY 0
#else
#define SNAP_VERIFY 1
#endif

#define SNAP_ERR_MAX 256

struct snap_sec {
	uint32_t type, file;	/* FILES: its first file */
	uint32_t nfiles;	/* FILES: how many */
	uint64_t offset, length;
};

struct snap_file {
	char *path;
	uint32_t kind;
	uint64_t size;
};

struct pm_snapshot {
	int fd;
	bool own_fd;
	uint64_t fsize;
	struct snap_sec *secs;
	size_t nsecs, cap, pos;
	uint32_t sub;			/* pm_snapshot_next inside a FILES section: its next file */
	struct snap_file *files;
	size_t nfiles, fcap;
	char *meta;			/* the META payloads, NUL-terminated lines */
	size_t meta_len;
	unsigned char *zbuf, *raw;	/* one chunk's payload and its decompressed bytes */
	uint64_t *words;
	struct snap_extent *ext;
	size_t zcap, rawcap, wcap;	/* their sizes: grown to what the chunks read need (chunk_buffers) */
	char err[SNAP_ERR_MAX];
};

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

static const char *type_name(uint32_t t)
{
	static const char *names[] = { "?", "META", "FILE", "BYTES", "WORDS", "INDEX", "FILES" };

	return t < PM_ARRAY_SIZE(names) ? names[t] : "unknown type";
}

static int fail(struct pm_snapshot *s, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct pm_snapshot *s, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return e;
}

/* "section 7 (WORDS of proc/42/pagemap)" for error messages. */
static const char *sec_name(const struct pm_snapshot *s, size_t i, char *buf, size_t size)
{
	const struct snap_sec *c = &s->secs[i];
	bool has_file = (c->type == PM_SNAPSHOT_BYTES || c->type == PM_SNAPSHOT_WORDS) && c->file < s->nfiles;

	snprintf(buf, size, "section %zu (%s%s%s, at byte %llu)", i, type_name(c->type), has_file ? " of " : "",
		 has_file ? s->files[c->file].path : "", (unsigned long long)c->offset);
	return buf;
}

static int read_at(struct pm_snapshot *s, void *buf, size_t n, uint64_t off)
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
		int r = read_at(s, buf, n, off);
		if (r)
			return r;
		XXH64_update(&st, buf, n);
		off += n;
		len -= n;
	}
	*out = XXH64_digest(&st);
	return 0;
}

/* A path in the tree: relative, components neither empty, "." nor "..", printable, no NUL. */
static bool path_ok(const char *p, size_t n)
{
	size_t i, start = 0;

	if (!n || n > SNAP_MAX_PATH)
		return false;
	for (i = 0; i <= n; i++) {
		if (i < n && (p[i] < 0x20 || p[i] == 0x7f))
			return false;
		if (i < n && p[i] != '/')
			continue;
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

	if (s->nfiles >= SNAP_MAX_FILES || grow((void **)&s->files, &s->fcap, s->nfiles, sizeof(*f)))
		return fail(s, -ENOMEM, "%s: too many files", where);
	if (kind != PM_SNAPSHOT_BYTES && kind != PM_SNAPSHOT_WORDS)
		return fail(s, -EBADMSG, "%s: unknown file kind %u", where, kind);
	if (size > SNAP_MAX_FILE_SIZE || (kind == PM_SNAPSHOT_WORDS && size % 8))
		return fail(s, -EBADMSG, "%s: absurd file length %llu", where, (unsigned long long)size);
	if (!plen || plen > SNAP_MAX_PATH || !path_ok(path, plen) || memchr(path, '\0', plen))
		return fail(s, -EBADMSG, "%s: unsafe path in the tree", where);
	f = &s->files[s->nfiles];
	if (!(f->path = malloc(plen + 1)))
		return -ENOMEM;
	memcpy(f->path, path, plen);
	f->path[plen] = '\0';
	f->kind = kind;
	f->size = size;
	s->nfiles++;
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
		return fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if ((r = read_at(s, fixed, sizeof(fixed), c->offset + SNAP_SEC_SIZE)))
		return r;
	plen = snap_get32(fixed + 16);
	if (snap_get32(fixed) != s->nfiles)
		return fail(s, -EBADMSG, "%s: file id %u out of order (expected %zu)", where, snap_get32(fixed),
			    s->nfiles);
	if (plen != c->length - SNAP_FILE_FIXED)
		return fail(s, -EBADMSG, "%s: path length %u does not fit the section", where, plen);
	if ((r = read_at(s, path, plen, c->offset + SNAP_SEC_SIZE + SNAP_FILE_FIXED)))
		return r;
	s->secs[i].file = (uint32_t)s->nfiles;
	s->secs[i].nfiles = 1;
	return add_file(s, snap_get32(fixed + 4), snap_get64(fixed + 8), path, plen, where);
}

/*
 * Grow the chunk buffers to @zlen payload bytes, @rawlen decompressed bytes
 * and @nwords words (0: leave as is; callers keep them within the SNAP_MAX_*
 * limits). Sized to need rather than to the limits at open: an open costs
 * no 3.5 MiB then (an audit opens every snapshot it finds; a fuzzer opens
 * one per input, and ASan poisons every large block).
 */
static int chunk_buffers(struct pm_snapshot *s, size_t zlen, size_t rawlen, size_t nwords)
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
	if (nwords > s->wcap) {
		if (!(p = realloc(s->words, nwords * sizeof(*s->words))))
			return -ENOMEM;
		s->words = p;
		if (!(p = realloc(s->ext, nwords * sizeof(*s->ext))))
			return -ENOMEM;
		s->ext = p;
		s->wcap = nwords;
	}
	return 0;
}

/* FILES (version 2): u32 count, u32 first id, a zstd frame of count records (man/pagemap-snapshot.5). */
static int load_files_sec(struct pm_snapshot *s, size_t i, const char *where)
{
	struct snap_sec *c = &s->secs[i];
	size_t zlen = (size_t)(c->length - 8), got, pos = 0;
	unsigned long long want;
	uint32_t count, n;
	int r;

	if (c->length < 8 || c->length - 8 > ZSTD_compressBound(SNAP_MAX_RAW))
		return fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if (chunk_buffers(s, (size_t)c->length, 0, 0))
		return -ENOMEM;
	if ((r = read_at(s, s->zbuf, c->length, c->offset + SNAP_SEC_SIZE)))
		return r;
	count = snap_get32(s->zbuf);
	if (snap_get32(s->zbuf + 4) != s->nfiles)
		return fail(s, -EBADMSG, "%s: file id %u out of order (expected %zu)", where, snap_get32(s->zbuf + 4),
			    s->nfiles);
	if (!count || count > SNAP_MAX_FILES - s->nfiles)
		return fail(s, -EBADMSG, "%s: absurd file count %u", where, count);
	want = ZSTD_getFrameContentSize(s->zbuf + 8, zlen);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return fail(s, -EBADMSG, "%s: not a zstd frame of at most %u bytes", where, SNAP_MAX_RAW);
	if (chunk_buffers(s, 0, want ? (size_t)want : 1, 0))
		return -ENOMEM;
	got = ZSTD_decompress(s->raw, (size_t)want, s->zbuf + 8, zlen);
	if (ZSTD_isError(got) || got != want)
		return fail(s, -EBADMSG, "%s: zstd: %s", where,
			    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "content size mismatch");
	c->file = (uint32_t)s->nfiles;
	c->nfiles = count;
	for (n = 0; n < count; n++) {
		uint32_t plen;
		if (got - pos < SNAP_FILES_FIXED || (plen = snap_get32(s->raw + pos + 12)) > got - pos - SNAP_FILES_FIXED)
			return fail(s, -EBADMSG, "%s: record %u truncated", where, n);
		if ((r = add_file(s, snap_get32(s->raw + pos), snap_get64(s->raw + pos + 4),
				  (const char *)s->raw + pos + SNAP_FILES_FIXED, plen, where)))
			return r;
		pos += SNAP_FILES_FIXED + plen;
	}
	if (pos != got)
		return fail(s, -EBADMSG, "%s: trailing bytes after %u records", where, count);
	return 0;
}

static int load_meta_sec(struct pm_snapshot *s, const struct snap_sec *c, const char *where)
{
	char *m;

	if (c->length > SNAP_MAX_META || s->meta_len + c->length > SNAP_MAX_META)
		return fail(s, -EBADMSG, "%s: metadata over %u bytes", where, SNAP_MAX_META);
	if (!(m = realloc(s->meta, s->meta_len + c->length + 1)))
		return -ENOMEM;
	s->meta = m;
	if (read_at(s, m + s->meta_len, c->length, c->offset + SNAP_SEC_SIZE))
		return fail(s, -EBADMSG, "%s: truncated", where);
	if (memchr(m + s->meta_len, '\0', c->length))
		return fail(s, -EBADMSG, "%s: NUL byte in metadata", where);
	for (size_t i = s->meta_len; i < s->meta_len + c->length; i++)
		if (m[i] == '\n')
			m[i] = '\0';	/* lines become strings: pm_snapshot_meta hands out values */
	s->meta_len += c->length;
	m[s->meta_len] = '\0';
	return 0;
}

/* A chunk names a file declared before it, of the chunk's kind. */
static int check_chunk_sec(struct pm_snapshot *s, struct snap_sec *c, const char *where)
{
	unsigned char fixed[SNAP_CHUNK_FIXED];
	int r;

	if (c->length < SNAP_CHUNK_FIXED)
		return fail(s, -EBADMSG, "%s: bad length %llu", where, (unsigned long long)c->length);
	if ((r = read_at(s, fixed, sizeof(fixed), c->offset + SNAP_SEC_SIZE)))
		return r;
	c->file = snap_get32(fixed);
	if (c->file >= s->nfiles)
		return fail(s, -EBADMSG, "%s: file id %u not declared", where, c->file);
	if (s->files[c->file].kind != c->type)
		return fail(s, -EBADMSG, "%s: chunk kind does not match its file %s", where, s->files[c->file].path);
	return 0;
}

static int check_header(struct pm_snapshot *s)
{
	unsigned char h[SNAP_HEAD_SIZE];
	uint32_t version;

	if (s->fsize < SNAP_HEAD_SIZE + SNAP_SEC_SIZE + SNAP_TRAILER_SIZE || read_at(s, h, sizeof(h), 0) ||
	    memcmp(h, SNAP_MAGIC, 8))
		return fail(s, -EBADMSG, "not a pagemap snapshot (no magic)");
	version = snap_get32(h + 8);
	if (SNAP_VERIFY && snap_get32(h + 12) != (uint32_t)pmi_snap_hash(h, 12))
		return fail(s, -EBADMSG, "file header: checksum mismatch");
	if (version < 1 || version > PM_SNAPSHOT_VERSION)	/* 2 only adds to 1: a version 1 file reads as one */
		return fail(s, -EPROTONOSUPPORT, "file header: format version %u (this reader knows 1 to %u)", version,
			    PM_SNAPSHOT_VERSION);
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
	snprintf(where, sizeof(where), "section %zu (at byte %llu)", s->nsecs, (unsigned long long)off);
	if (end - off < SNAP_SEC_SIZE || read_at(s, h, sizeof(h), off))
		return fail(s, -EBADMSG, "%s: truncated header", where);
	c->type = snap_get32(h);
	c->length = snap_get64(h + 8);
	hash = snap_get64(h + 16);
	if (SNAP_VERIFY && snap_get32(h + 4) != pmi_snap_header_check(c->type, c->length, hash))
		return fail(s, -EBADMSG, "%s: header checksum mismatch", where);
	if (c->length > end - off - SNAP_SEC_SIZE)
		return fail(s, -EBADMSG, "%s: length %llu runs past the end", where, (unsigned long long)c->length);
	s->nsecs++;
	sec_name(s, s->nsecs - 1, where, sizeof(where));
	if ((r = hash_payload(s, off + SNAP_SEC_SIZE, c->length, &got)))
		return r == -EBADMSG ? fail(s, r, "%s: truncated", where) : r;
	if (SNAP_VERIFY && got != hash)
		return fail(s, -EBADMSG, "%s: payload checksum mismatch", where);
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
	default:	/* INDEX is checked after the scan; unknown types are skipped */
		return 0;
	}
}

/* The INDEX lists every section before it, in order; the trailer points at it. */
static int check_index(struct pm_snapshot *s, uint64_t index_off)
{
	const struct snap_sec *c = &s->secs[s->nsecs - 1];
	unsigned char e[16];
	uint64_t n, i;
	char where[SNAP_ERR_MAX / 2];

	sec_name(s, s->nsecs - 1, where, sizeof(where));
	if (c->type != PM_SNAPSHOT_INDEX || c->offset != index_off)
		return fail(s, -EBADMSG, "trailer: does not point at the index");
	if (c->length < 8 || read_at(s, e, 8, c->offset + SNAP_SEC_SIZE))
		return fail(s, -EBADMSG, "%s: too short", where);
	n = snap_get64(e);
	if (n != s->nsecs - 1 || c->length != 8 + n * 16)
		return fail(s, -EBADMSG, "%s: lists %llu sections, the file has %zu", where, (unsigned long long)n,
			    s->nsecs - 1);
	for (i = 0; i < n; i++) {
		if (read_at(s, e, 16, c->offset + SNAP_SEC_SIZE + 8 + i * 16))
			return fail(s, -EBADMSG, "%s: truncated", where);
		if (snap_get32(e) != s->secs[i].type || snap_get64(e + 8) != s->secs[i].offset)
			return fail(s, -EBADMSG, "%s: entry %llu does not match the section", where,
				    (unsigned long long)i);
	}
	return 0;
}

static int scan(struct pm_snapshot *s)
{
	unsigned char t[SNAP_TRAILER_SIZE];
	uint64_t off = SNAP_HEAD_SIZE, end, index_off;
	int r;

	if ((r = check_header(s)))
		return r;
	end = s->fsize - SNAP_TRAILER_SIZE;
	if (read_at(s, t, sizeof(t), end) || memcmp(t + 8, SNAP_END_MAGIC, 8))
		return fail(s, -EBADMSG, "trailer: missing (the file is truncated, or its writing did not finish)");
	index_off = snap_get64(t);
	if (index_off < SNAP_HEAD_SIZE || index_off >= end)
		return fail(s, -EBADMSG, "trailer: index offset %llu out of the file", (unsigned long long)index_off);
	while (off < end) {
		if ((r = add_section(s, off, end)))
			return r;
		off += SNAP_SEC_SIZE + s->secs[s->nsecs - 1].length;
		if (s->secs[s->nsecs - 1].type == PM_SNAPSHOT_INDEX)
			break;
	}
	if (off != end || !s->nsecs)
		return fail(s, -EBADMSG, "index: not the last section");
	return check_index(s, index_off);
}

static struct pm_snapshot *open_common(int fd, bool own, char *err, size_t errsize)
{
	struct pm_snapshot *s = calloc(1, sizeof(*s));
	struct stat st;
	int r = -ENOMEM;

	if (!s)
		goto out;
	s->fd = fd;
	s->own_fd = own;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = fail(s, -EBADMSG, "not a regular file");
		goto out;
	}
	s->fsize = (uint64_t)st.st_size;
	r = scan(s);
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
	return open_common(fd, false, err, errsize);
}

struct pm_snapshot *pm_snapshot_open(const char *path, char *err, size_t errsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		int e = errno;
		if (err && errsize)
			snprintf(err, errsize, "%s", strerror(e));
		errno = e;
		return NULL;
	}
	return open_common(fd, true, err, errsize);
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
	free(s);
}

const char *pm_snapshot_error(const struct pm_snapshot *s)
{
	return s->err[0] ? s->err : NULL;
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

const char *pmi_snap_meta_next(const struct pm_snapshot *s, const char *prev)
{
	const char *p = prev ? prev + strlen(prev) + 1 : s->meta;

	return p && p < s->meta + s->meta_len ? p : NULL;
}

/* Read and decompress the chunk of section @i into s->raw; *@rawlen its length. */
static int load_chunk(struct pm_snapshot *s, size_t i, size_t *rawlen, const char *where)
{
	const struct snap_sec *c = &s->secs[i];
	size_t zlen = (size_t)(c->length - SNAP_CHUNK_FIXED);
	unsigned long long want;
	size_t got;

	if (c->length - SNAP_CHUNK_FIXED > ZSTD_compressBound(SNAP_MAX_RAW))
		return fail(s, -EBADMSG, "%s: chunk of %llu bytes is over the limit", where,
			    (unsigned long long)c->length);
	if (chunk_buffers(s, zlen + SNAP_CHUNK_FIXED, 0, 0))
		return -ENOMEM;
	if (read_at(s, s->zbuf, zlen + SNAP_CHUNK_FIXED, c->offset + SNAP_SEC_SIZE))
		return fail(s, -EBADMSG, "%s: truncated", where);
	want = ZSTD_getFrameContentSize(s->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return fail(s, -EBADMSG, "%s: not a zstd frame of at most %u bytes", where, SNAP_MAX_RAW);
	if (chunk_buffers(s, 0, want ? (size_t)want : 1, 0))
		return -ENOMEM;
	got = ZSTD_decompress(s->raw, (size_t)want, s->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (ZSTD_isError(got) || got != want)
		return fail(s, -EBADMSG, "%s: zstd: %s", where,
			    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "content size mismatch");
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
		return fail(s, -EBADMSG, "%s: bytes %llu+%zu past the file's length %llu", where,
			    (unsigned long long)off, len, (unsigned long long)f->size);
	return len ? fn(data, off, s->raw, len) : 0;
}

static int read_words(struct pm_snapshot *s, size_t i, pm_snapshot_extent_fn fn, void *data, const char *where)
{
	const struct snap_file *f = &s->files[s->secs[i].file];
	size_t len, nwords, max, done = 0;
	const char *why = NULL;
	int next, r, e;

	if ((r = load_chunk(s, i, &len, where)))
		return r;
	/* The header's word count sizes the buffers (a chunk that holds more fails to decode: absurd count). */
	max = snap_get32(s->zbuf + 4) < SNAP_MAX_WORDS ? snap_get32(s->zbuf + 4) : SNAP_MAX_WORDS;
	if (chunk_buffers(s, 0, 0, max ? max : 1))
		return -ENOMEM;
	next = pmi_snap_decode(s->raw, len, s->ext, max, s->words, max, &nwords, &why);
	if (next < 0)
		return fail(s, -EBADMSG, "%s: %s", where, why);
	if (nwords != snap_get32(s->zbuf + 4))
		return fail(s, -EBADMSG, "%s: %zu words, the header says %u", where, nwords, snap_get32(s->zbuf + 4));
	for (e = 0; e < next; e++) {
		if (s->ext[e].start + s->ext[e].count > f->size / 8)
			return fail(s, -EBADMSG, "%s: words past the file's length %llu", where,
				    (unsigned long long)f->size);
	}
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
	    (sec->type != PM_SNAPSHOT_BYTES && sec->type != PM_SNAPSHOT_WORDS) || s->secs[i].type != sec->type)
		return -EINVAL;
	sec_name(s, i, where, sizeof(where));
	if (sec->type == PM_SNAPSHOT_BYTES)
		return read_bytes(s, i, fn, data, where);
	return read_words(s, i, fn, data, where);
}

void pmi_snap_fail_io(struct pm_snapshot *s, const struct pm_snapshot_section *sec, int r)
{
	fail(s, r, "section at byte %llu (%s of %s): %s", (unsigned long long)sec->offset, type_name(sec->type),
	     sec->path ? sec->path : "?", r == -EEXIST ? "the path is in the snapshot twice" : strerror(-r));
}
