/* snapshot_open_index.c - checking the indexes as a snapshot opens: the INDEX against the sections
 * found (every format version), a series' SERIES index of its members. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot_reader.h"

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
int pmi_snap_check_index(struct pm_snapshot *s, uint64_t index_off)
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
int pmi_snap_load_series(struct pm_snapshot *s, uint64_t off, uint64_t end)
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
