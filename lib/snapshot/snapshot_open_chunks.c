/* snapshot_open_chunks.c - checking the chunks as a snapshot opens: BYTES and WORDS sections (their
 * file, their shared extents), REUSE sections and the earlier member's chunk each names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot_reader.h"
#include "zstd_load.h"

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
int pmi_snap_check_chunk_sec(struct pm_snapshot *s, struct snap_sec *c, const char *where)
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
int pmi_snap_check_reuse(struct pm_snapshot *s, struct snap_sec *c, const char *where)
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
	if ((r = pmi_snap_hash_payload(s, t + SNAP_SEC_SIZE, len, &got)))
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
