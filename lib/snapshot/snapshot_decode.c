/* snapshot_decode.c - decoding snapshot WORDS chunks (pure; snapshot.h describes the encoding):
 * extent lists and every column mode of every format version, each length and value checked against
 * its bounds. */
#include <errno.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"
#include "snapshot_codec.h"

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

/* The varint frame column into the low bits of the words marked by bit 0, to exactly @end. */
static int decode_frames_varint(const unsigned char *p, const unsigned char *end, uint64_t *words, size_t total,
				const char **why)
{
	uint64_t prev = 0, z;
	size_t i;

	for (i = 0; i < total; i++) {
		if (!(words[i] & 1))
			continue;
		if (pmi_snap_get_varint(&p, end, &z))
			return bad(why, "truncated frame column");
		prev = (prev + unzigzag(z)) & LOW_MASK;
		if (!prev)
			return bad(why, "a zero in the frame column");
		words[i] = (words[i] & ~LOW_MASK) | prev;
	}
	return p == end ? 0 : bad(why, "trailing bytes after the columns");
}

static int decode_columns_v2(const unsigned char *raw, size_t len, uint64_t *words, size_t total, const char **why)
{
	const unsigned char *p = raw, *end = raw + len;
	size_t i;

	if ((size_t)(end - p) < total * 2)
		return bad(why, "truncated flag column");
	for (i = 0; i < total; i++, p += 2) {
		unsigned col = p[0] | (unsigned)p[1] << 8;
		if (col >> 10)
			return bad(why, "unknown bits in the flag column");
		words[i] = flag_word(col);
	}
	return decode_frames_varint(p, end, words, total, why);
}

/* Packed bits read LSB first from [p, end): the bytes they take are checked by the caller up front. */
struct bitr {
	const unsigned char *p;
	uint64_t acc;
	unsigned nacc;
};

static uint64_t bits_get(struct bitr *b, unsigned nbits)	/* @nbits at most 56 */
{
	uint64_t v;

	while (b->nacc < nbits) {	/* at most 55 bits held before a byte more */
		b->acc |= (uint64_t)*b->p++ << b->nacc;
		b->nacc += 8;
	}
	v = b->acc & ((1ULL << nbits) - 1);
	b->acc = nbits < 64 ? b->acc >> nbits : 0;
	b->nacc -= nbits;
	return v;
}

/* The low bits of the @m words with bit 0 set (the flag column's mark), mode 1: tokens then packed bits. */
static int decode_frames_packed(const unsigned char *p, const unsigned char *end, uint64_t *words, size_t total,
				size_t m, const char **why)
{
	const unsigned char *tok;
	uint64_t base, prev = 0, nbits = 0, v;
	unsigned width;
	struct bitr b;
	size_t i, j;

	if (pmi_snap_get_varint(&p, end, &base) || p >= end)
		return bad(why, "truncated frame column");
	width = *p++;
	if (!base || base > LOW_MASK || width > 55)
		return bad(why, "frame column base or width out of range");
	if ((size_t)(end - p) < m)
		return bad(why, "truncated frame column");
	tok = p;
	for (j = 0; j < m; j++) {	/* the bits the tokens take, so the reads below stay within the payload */
		unsigned t = tok[j];
		if (t < TOK_SMALL)
			continue;
		if (t == TOK_ABS)
			nbits += width;
		else if (t >= TOK_SMALL + 5 && t <= TOK_SMALL + 56)
			nbits += t - TOK_SMALL - 1;
		else
			return bad(why, "unknown token in the frame column");
	}
	if ((uint64_t)(end - tok) - m != (nbits + 7) / 8)
		return bad(why, "frame column bits truncated or followed by bytes");
	b = (struct bitr){ .p = tok + m };
	for (i = 0, j = 0; i < total; i++) {
		unsigned t;
		if (!(words[i] & 1))
			continue;
		t = tok[j++];
		if (t < TOK_SMALL) {
			v = (prev + unzigzag(t)) & LOW_MASK;
		} else if (t == TOK_ABS) {
			v = base + bits_get(&b, width);
			if (v > LOW_MASK)
				return bad(why, "a frame past 55 bits");
		} else {
			unsigned bl = t - TOK_SMALL;
			v = (prev + unzigzag(1ULL << (bl - 1) | bits_get(&b, bl - 1))) & LOW_MASK;
		}
		if (!v)
			return bad(why, "a zero in the frame column");
		words[i] = (words[i] & ~LOW_MASK) | v;
		prev = v;
	}
	if (b.nacc && (b.acc & ((1u << b.nacc) - 1)))
		return bad(why, "padding bits set in the frame column");
	return 0;
}

/* Mode 2: varint count (1 to LOW_PAL_MAX), the values as varint steps from 0 (each > 0), packed indices. */
static int decode_frames_palette(const unsigned char *p, const unsigned char *end, uint64_t *words, size_t total,
				 size_t m, const char **why)
{
	uint64_t k, vals[LOW_PAL_MAX], step, v = 0, j;
	unsigned width;
	struct bitr b;
	size_t i;

	if (pmi_snap_get_varint(&p, end, &k))
		return bad(why, "truncated frame column");
	if (!k || k > LOW_PAL_MAX)
		return bad(why, "absurd frame palette");
	for (j = 0; j < k; j++) {
		if (pmi_snap_get_varint(&p, end, &step))
			return bad(why, "truncated frame column");
		if (!step || step > LOW_MASK - v)
			return bad(why, "frame palette out of order or range");
		vals[j] = v += step;
	}
	width = bit_length(k - 1);
	if ((uint64_t)(end - p) != ((uint64_t)m * width + 7) / 8)
		return bad(why, "frame column bits truncated or followed by bytes");
	b = (struct bitr){ .p = p };
	for (i = 0; i < total; i++) {
		if (!(words[i] & 1))
			continue;
		j = width ? bits_get(&b, width) : 0;
		if (j >= k)
			return bad(why, "frame index past the palette");
		words[i] = (words[i] & ~LOW_MASK) | vals[j];
	}
	if (b.nacc && (b.acc & ((1u << b.nacc) - 1)))
		return bad(why, "padding bits set in the frame column");
	return 0;
}

int pmi_snap_decode_columns(const unsigned char *raw, size_t len, uint64_t *words, size_t total, uint32_t version,
			    const char **why)
{
	const unsigned char *p = raw, *end = raw + len;
	uint16_t pal[1024];
	uint64_t npal;
	unsigned width, c, last = 0;
	size_t i, m = 0;
	struct bitr b;

	if (version < 3)
		return decode_columns_v2(raw, len, words, total, why);
	if (pmi_snap_get_varint(&p, end, &npal))
		return bad(why, "truncated flag column");
	if (total ? (!npal || npal > 1024) : npal)
		return bad(why, "absurd flag palette");
	if ((uint64_t)(end - p) < npal * 2)
		return bad(why, "truncated flag column");
	for (c = 0; c < npal; c++, p += 2) {
		pal[c] = (uint16_t)(p[0] | (unsigned)p[1] << 8);
		if (pal[c] >> 10)
			return bad(why, "unknown bits in the flag column");
		if (c && pal[c] <= last)
			return bad(why, "flag palette out of order");
		last = pal[c];
	}
	width = npal ? bit_length(npal - 1) : 0;
	if ((uint64_t)(end - p) < ((uint64_t)total * width + 7) / 8)
		return bad(why, "truncated flag column");
	b = (struct bitr){ .p = p };
	for (i = 0; i < total; i++) {
		uint64_t k = width ? bits_get(&b, width) : 0;
		if (k >= npal)
			return bad(why, "flag index past the palette");
		words[i] = flag_word(pal[k]);
		m += pal[k] & LOW_SET ? 1 : 0;
	}
	if (b.nacc && (b.acc & ((1u << b.nacc) - 1)))
		return bad(why, "padding bits set in the flag column");
	p = b.p;
	if (!m)
		return p == end ? 0 : bad(why, "trailing bytes after the columns");
	if (p >= end)
		return bad(why, "truncated frame column");
	switch (*p++) {
	case 0:
		return decode_frames_varint(p, end, words, total, why);
	case 1:
		return decode_frames_packed(p, end, words, total, m, why);
	case 2:
		return decode_frames_palette(p, end, words, total, m, why);
	default:
		return bad(why, "unknown frame column mode");
	}
}

int pmi_snap_decode(const unsigned char *raw, size_t len, struct snap_extent *ext, size_t max_ext, uint64_t *words,
		   size_t max_words, size_t *nwords, uint32_t version, const char **why)
{
	size_t total, used;
	int next = pmi_snap_decode_extents(raw, len, ext, max_ext, max_words, &total, &used, why), r;

	if (next < 0)
		return next;
	if ((r = pmi_snap_decode_columns(raw + used, len - used, words, total, version, why)))
		return r;
	*nwords = total;
	return next;
}
