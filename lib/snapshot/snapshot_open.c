/* snapshot_open.c - open a snapshot and check it whole: header, the section table and its
 * checksums, the member of a series (man/pagemap-snapshot.5). The checks by section:
 * snapshot_open_files.c (FILE, FILES, META), snapshot_open_chunks.c (BYTES, WORDS, REUSE),
 * snapshot_open_index.c (INDEX, SERIES). Iterating and decoding: snapshot_read.c. */
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

	return t < PMI_ARRAY_SIZE(names) ? names[t] : "unknown type";
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
int pmi_snap_hash_payload(struct pm_snapshot *s, uint64_t off, uint64_t len, uint64_t *out)
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

	if (pmi_grow(&s->secs, &s->cap, s->nsecs + 1, sizeof(*c)))
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
	if ((r = pmi_snap_hash_payload(s, off + SNAP_SEC_SIZE, c->length, &got)))
		return r == -EBADMSG ? pmi_snap_fail(s, r, "%s: truncated", where) : r;
	if (SNAP_VERIFY && got != hash)
		return pmi_snap_fail(s, -EBADMSG, "%s: payload checksum mismatch", where);
	switch (c->type) {
	case PM_SNAPSHOT_META:
		return pmi_snap_load_meta_sec(s, c, where);
	case PM_SNAPSHOT_FILE:
		return pmi_snap_load_file_sec(s, s->nsecs - 1, where);
	case PM_SNAPSHOT_FILES:
		return pmi_snap_load_files_sec(s, s->nsecs - 1, where);
	case PM_SNAPSHOT_BYTES:
	case PM_SNAPSHOT_WORDS:
		return pmi_snap_check_chunk_sec(s, c, where);
	case PM_SNAPSHOT_REUSE:
		return pmi_snap_check_reuse(s, c, where);
	default:	/* INDEX is checked after the scan; unknown types are skipped */
		return 0;
	}
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
		if ((r = pmi_snap_load_series(s, index_off, end)) || (r = pick_member(s, want)))
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
	return pmi_snap_check_index(s, index_off);
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
		r = pmi_snap_check_claims(s);
	if (!r)
		return s;
out:
	if (err && errsize)
		snprintf(err, errsize, "%s", s && s->err[0] ? s->err : pmi_strerror(-r));
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
			snprintf(err, errsize, "%s", pmi_strerror(e));
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
