/*
 * snapshot_codec_ref.h - the version 3 column encoder as it was written a word at a time (lib/snapshot/snapshot_codec.c
 * before it took words by runs), kept for tests/unit/test_snapshot.c to check that the run-wise encoder
 * writes the same bytes. Not built into the library.
 */
#ifndef PM_SNAPSHOT_CODEC_REF_H
#define PM_SNAPSHOT_CODEC_REF_H

#include <stdint.h>
#include <string.h>
#include "snapshot.h"

#define REF_LOW_MASK	((1ULL << 55) - 1)
#define REF_LOW_SET	(1u << 9)
#define REF_PAL_MAX	16u
#define REF_TOK_SMALL	16u
#define REF_TOK_ABS	127u

struct ref_bitw {
	unsigned char *out;
	size_t n;
	uint64_t acc;
	unsigned nacc;
};

static uint64_t ref_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static unsigned ref_flag_key(uint64_t word)
{
	return (unsigned)(word >> 55) | ((word & REF_LOW_MASK) ? REF_LOW_SET : 0);
}

static void ref_bits_put(struct ref_bitw *b, uint64_t v, unsigned nbits)
{
	b->acc |= (v & ((1ULL << nbits) - 1)) << b->nacc;
	b->nacc += nbits;
	while (b->nacc >= 8) {
		b->out[b->n++] = (unsigned char)b->acc;
		b->acc >>= 8;
		b->nacc -= 8;
	}
}

static size_t ref_bits_end(struct ref_bitw *b)
{
	if (b->nacc)
		b->out[b->n++] = (unsigned char)b->acc;
	b->acc = 0;
	b->nacc = 0;
	return b->n;
}

static unsigned ref_bit_length(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

static int ref_frame_mode(const uint64_t *words, size_t total)
{
	uint64_t prev = 0, recent[8] = { 0 };
	size_t m = 0, big = 0, rep = 0, i;
	unsigned r = 0, k;

	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & REF_LOW_MASK, q;
		if (!low)
			continue;
		q = ref_zigzag(low - prev);
		prev = low;
		m++;
		if (q < (1u << 15))
			continue;
		big++;
		for (k = 0; k < 8 && recent[k] != q; k++)
			;
		if (k < 8)
			rep++;
		else
			recent[r++ % 8] = q;
	}
	return big * 32 >= m && big && rep * 4 < big ? 1 : 0;
}

static unsigned ref_low_palette(const uint64_t *words, size_t total, uint64_t *vals)
{
	unsigned k = 0, j, a, b;
	uint64_t last = 0;
	size_t i;

	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & REF_LOW_MASK;
		if (!low || low == last)
			continue;
		last = low;
		for (j = 0; j < k && vals[j] != low; j++)
			;
		if (j < k)
			continue;
		if (k == REF_PAL_MAX)
			return 0;
		vals[k++] = low;
	}
	for (a = 1; a < k; a++)
		for (b = a; b > 0 && vals[b - 1] > vals[b]; b--) {
			uint64_t t = vals[b];
			vals[b] = vals[b - 1];
			vals[b - 1] = t;
		}
	return k;
}

static size_t ref_encode_columns(const uint64_t *words, size_t total, unsigned char *out)
{
	uint16_t idx[1024];
	unsigned pal = 0, width, c, k;
	uint64_t prev = 0, lo = REF_LOW_MASK, hi = 0, vals[REF_PAL_MAX];
	size_t n, i, m = 0;
	struct ref_bitw b;
	int mode;

	memset(idx, 0xff, sizeof(idx));
	for (i = 0; i < total; i++)
		idx[ref_flag_key(words[i])] = 0;
	n = 0;
	for (c = 0; c < 1024; c++)
		if (!idx[c])
			idx[c] = (uint16_t)pal++;
	n += pmi_snap_put_varint(out + n, pal);
	for (c = 0; c < 1024; c++) {
		if (idx[c] == 0xffff)
			continue;
		out[n++] = (unsigned char)c;
		out[n++] = (unsigned char)(c >> 8);
	}
	width = pal ? ref_bit_length(pal - 1) : 0;
	b = (struct ref_bitw){ .out = out, .n = n };
	for (i = 0; width && i < total; i++)
		ref_bits_put(&b, idx[ref_flag_key(words[i])], width);
	n = ref_bits_end(&b);
	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & REF_LOW_MASK;
		if (!low)
			continue;
		m++;
		lo = low < lo ? low : lo;
		hi = low > hi ? low : hi;
	}
	if (!m)
		return n;
	if ((k = ref_low_palette(words, total, vals)) > 0) {
		out[n++] = 2;
		n += pmi_snap_put_varint(out + n, k);
		for (c = 0, prev = 0; c < k; prev = vals[c++])
			n += pmi_snap_put_varint(out + n, vals[c] - prev);
		width = ref_bit_length(k - 1);
		b = (struct ref_bitw){ .out = out, .n = n };
		for (i = 0; width && i < total; i++) {
			uint64_t low = words[i] & REF_LOW_MASK;
			unsigned j;
			if (!low)
				continue;
			for (j = 0; vals[j] != low; j++)
				;
			ref_bits_put(&b, j, width);
		}
		return ref_bits_end(&b);
	}
	mode = ref_frame_mode(words, total);
	out[n++] = (unsigned char)mode;
	if (mode == 0) {
		for (i = 0; i < total; i++) {
			uint64_t low = words[i] & REF_LOW_MASK;
			if (!low)
				continue;
			n += pmi_snap_put_varint(out + n, ref_zigzag(low - prev));
			prev = low;
		}
		return n;
	}
	width = ref_bit_length(hi - lo);
	n += pmi_snap_put_varint(out + n, lo);
	out[n++] = (unsigned char)width;
	b = (struct ref_bitw){ .out = out, .n = n + m };
	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & REF_LOW_MASK, q;
		unsigned bl;
		if (!low)
			continue;
		q = ref_zigzag(low - prev);
		prev = low;
		bl = ref_bit_length(q);
		if (q < REF_TOK_SMALL) {
			out[n++] = (unsigned char)q;
		} else if (bl - 1 >= width) {
			out[n++] = REF_TOK_ABS;
			ref_bits_put(&b, low - lo, width);
		} else {
			out[n++] = (unsigned char)(REF_TOK_SMALL + bl);
			ref_bits_put(&b, q & ~(1ULL << (bl - 1)), bl - 1);
		}
	}
	return ref_bits_end(&b);
}

#endif
