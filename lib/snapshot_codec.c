/* snapshot_codec.c - the columnar word encoding of snapshot WORDS chunks (pure; snapshot.h describes it). */
#include <errno.h>
#include <string.h>
#include "internal.h"
#include "snapshot.h"

#define LOW_MASK	((1ULL << 55) - 1)
#define LOW_SET		(1u << 9)	/* in the 2-byte column: bits 0-54 are not zero */

size_t pmi_snap_encode_bound(size_t nwords, size_t next)
{
	return 10 + next * 20 + nwords * (2 + 10);
}

size_t pmi_snap_put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

int pmi_snap_get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;

	while (*p < end) {
		unsigned char b = *(*p)++;
		if (shift == 63 && b > 1)
			return -1;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

size_t pmi_snap_encode_extents(const struct snap_extent *ext, size_t next, unsigned char *out)
{
	size_t n = 0, i;
	uint64_t prev_end = 0;

	n += pmi_snap_put_varint(out + n, next);
	for (i = 0; i < next; i++) {
		n += pmi_snap_put_varint(out + n, ext[i].start - prev_end);
		n += pmi_snap_put_varint(out + n, ext[i].count);
		prev_end = ext[i].start + ext[i].count;
	}
	return n;
}

size_t pmi_snap_encode_columns(const uint64_t *words, size_t total, unsigned char *out)
{
	size_t n = 0, i;
	uint64_t prev_low = 0;

	for (i = 0; i < total; i++) {
		unsigned col = (unsigned)(words[i] >> 55) | ((words[i] & LOW_MASK) ? LOW_SET : 0);
		out[n++] = (unsigned char)col;
		out[n++] = (unsigned char)(col >> 8);
	}
	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & LOW_MASK;
		if (!low)
			continue;
		n += pmi_snap_put_varint(out + n, zigzag(low - prev_low));
		prev_low = low;
	}
	return n;
}

size_t pmi_snap_encode(const struct snap_extent *ext, size_t next, const uint64_t *words, unsigned char *out)
{
	size_t n = pmi_snap_encode_extents(ext, next, out), total = 0, i;

	for (i = 0; i < next; i++)
		total += ext[i].count;
	return n + pmi_snap_encode_columns(words, total, out + n);
}

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -EBADMSG;
}

static int decode_extents(const unsigned char **p, const unsigned char *end, struct snap_extent *ext, size_t max_ext,
			  size_t max_words, size_t *nwords, const char **why)
{
	uint64_t next, gap, count, pos = 0, total = 0, i;

	if (pmi_snap_get_varint(p, end, &next))
		return bad(why, "truncated extent count");
	if (next > max_ext)
		return bad(why, "absurd extent count");
	for (i = 0; i < next; i++) {
		if (pmi_snap_get_varint(p, end, &gap) || pmi_snap_get_varint(p, end, &count))
			return bad(why, "truncated extent");
		if (!count || count > max_words - total)
			return bad(why, "absurd word count");
		if ((i && !gap) || gap > SNAP_MAX_FILE_SIZE / 8 || pos + gap > SNAP_MAX_FILE_SIZE / 8 - count)
			return bad(why, "extent out of order or out of range");
		ext[i].start = pos + gap;
		ext[i].count = (uint32_t)count;
		pos = ext[i].start + count;
		total += count;
	}
	*nwords = (size_t)total;
	return (int)next;
}

int pmi_snap_decode_extents(const unsigned char *raw, size_t len, struct snap_extent *ext, size_t max_ext,
			    size_t max_words, size_t *nwords, size_t *used, const char **why)
{
	const unsigned char *p = raw;
	int next = decode_extents(&p, raw + len, ext, max_ext, max_words, nwords, why);

	*used = (size_t)(p - raw);
	return next;
}

int pmi_snap_decode_columns(const unsigned char *raw, size_t len, uint64_t *words, size_t total, const char **why)
{
	const unsigned char *p = raw, *end = raw + len;
	uint64_t prev_low = 0, z;
	size_t i;

	if ((size_t)(end - p) < total * 2)
		return bad(why, "truncated flag column");
	for (i = 0; i < total; i++, p += 2) {
		unsigned col = p[0] | (unsigned)p[1] << 8;
		if (col >> 10)
			return bad(why, "unknown bits in the flag column");
		words[i] = (uint64_t)(col & 0x1ff) << 55 | ((col & LOW_SET) ? 1 : 0);
	}
	for (i = 0; i < total; i++) {
		if (!(words[i] & 1))
			continue;
		if (pmi_snap_get_varint(&p, end, &z))
			return bad(why, "truncated frame column");
		prev_low = (prev_low + unzigzag(z)) & LOW_MASK;
		if (!prev_low)
			return bad(why, "a zero in the frame column");
		words[i] = (words[i] & ~LOW_MASK) | prev_low;
	}
	if (p != end)
		return bad(why, "trailing bytes after the columns");
	return 0;
}

int pmi_snap_decode(const unsigned char *raw, size_t len, struct snap_extent *ext, size_t max_ext, uint64_t *words,
		   size_t max_words, size_t *nwords, const char **why)
{
	size_t total, used;
	int next = pmi_snap_decode_extents(raw, len, ext, max_ext, max_words, &total, &used, why), r;

	if (next < 0)
		return next;
	if ((r = pmi_snap_decode_columns(raw + used, len - used, words, total, why)))
		return r;
	*nwords = total;
	return next;
}
