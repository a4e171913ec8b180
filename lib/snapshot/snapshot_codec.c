/* snapshot_codec.c - the columnar word encoding of snapshot WORDS chunks (pure; snapshot.h
 * describes it): varints, extent lists and the encoder. The decoder: snapshot_decode.c. */
#include <errno.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"
#include "snapshot_codec.h"

size_t pmi_snap_encode_bound(size_t nwords, size_t next)
{
	return 10 + next * 20 + nwords * (2 + 10) + 2100;	/* version 3: a palette of up to 1024 u16, a mode */
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

/* The frame column as zig-zag varint deltas of the non-zero low bits (versions 1-2, and version 3's mode 0). */
static size_t encode_frames_varint(const uint64_t *words, size_t total, unsigned char *out)
{
	uint64_t prev = 0;
	size_t n = 0, i;

	for (i = 0; i < total; i++) {
		uint64_t low = words[i] & LOW_MASK;
		if (!low)
			continue;
		n += pmi_snap_put_varint(out + n, zigzag(low - prev));
		prev = low;
	}
	return n;
}

/* Versions 1 and 2: a u16 column per word, then the frame column as varints. */
static size_t encode_columns_v2(const uint64_t *words, size_t total, unsigned char *out)
{
	size_t n = 0, i;

	for (i = 0; i < total; i++) {
		unsigned col = flag_key(words[i]);
		out[n++] = (unsigned char)col;
		out[n++] = (unsigned char)(col >> 8);
	}
	return n + encode_frames_varint(words, total, out + n);
}

/* Bits appended LSB first to a byte stream (version 3's packed columns). */
struct bitw {
	unsigned char *out;
	size_t n;		/* bytes written */
	uint64_t acc;
	unsigned nacc;		/* bits in acc, < 8 between calls */
};

static inline void bits_put(struct bitw *b, uint64_t v, unsigned nbits)	/* @nbits at most 56 */
{
	b->acc |= (v & ((1ULL << nbits) - 1)) << b->nacc;	/* fewer than 8 bits held: at most 63 */
	b->nacc += nbits;
	while (b->nacc >= 8) {
		b->out[b->n++] = (unsigned char)b->acc;
		b->acc >>= 8;
		b->nacc -= 8;
	}
}

/* @v in @nbits, @n times: a run of equal words. One bit a word goes a byte at a time. */
static void bits_rep(struct bitw *b, uint64_t v, unsigned nbits, size_t n)
{
	if (nbits == 1 && n >= 16) {
		for (; b->nacc; n--)
			bits_put(b, v, 1);
		memset(b->out + b->n, v & 1 ? 0xff : 0, n / 8);
		b->n += n / 8;
		n %= 8;
	}
	for (; n; n--)
		bits_put(b, v, nbits);
}

static size_t bits_end(struct bitw *b)
{
	if (b->nacc)
		b->out[b->n++] = (unsigned char)b->acc;
	b->acc = 0;
	b->nacc = 0;
	return b->n;
}

/*
 * The encoder takes the words by runs: equal words (step 0), or words each
 * one more than the one before with bits 0-54 not zero (step 1: a pagemap's
 * contiguous frames; bits 55-63 stay the same). A huge page's 512 kpage
 * words are two runs (head, tails), its pagemap words one: each pass over
 * a chunk costs a compare a word, and the work of a word once a run. What
 * it writes is what a word at a time wrote (tests/unit/test_snapshot.c
 * keeps that encoder to compare).
 */
static inline size_t run_at(const uint64_t *w, size_t i, size_t total, unsigned *step)
{
	size_t j = i + 1;
	uint64_t x = w[i];

	*step = 0;
	if (j < total && w[j] == x) {
		while (++j < total && w[j] == x)
			;
	} else if (j < total && w[j] == x + 1 && (x & LOW_MASK) && (w[j] & LOW_MASK)) {
		*step = 1;
		while (++j < total && w[j] == w[j - 1] + 1 && (w[j] & LOW_MASK))
			;
	}
	return j - i;
}

struct col_stats {
	size_t m;			/* words with bits 0-54 not zero */
	uint64_t lo, hi;		/* their least and greatest */
	uint64_t vals[LOW_PAL_MAX];	/* their distinct values, while at most LOW_PAL_MAX */
	unsigned k;			/* how many */
	bool many;			/* more than LOW_PAL_MAX: vals no longer kept */
	size_t big, rep;		/* deltas of 3 varint bytes or more, and those repeating one of the last 8 */
	uint64_t recent[8], prev;
	unsigned r;
};

static void stats_low(struct col_stats *st, uint64_t low, size_t n, unsigned step)
{
	uint64_t q = zigzag(low - st->prev), last = low + (step ? n - 1 : 0);
	unsigned j, t;

	st->m += n;
	st->lo = low < st->lo ? low : st->lo;
	st->hi = last > st->hi ? last : st->hi;
	if (step && n > LOW_PAL_MAX)	/* as many distinct values as words */
		st->many = true;
	for (t = 0; !st->many && t < (step ? n : 1); t++) {	/* the palette, while it lasts */
		for (j = 0; j < st->k && st->vals[j] != low + t; j++)
			;
		if (j < st->k)
			continue;
		if (st->k == LOW_PAL_MAX)
			st->many = true;
		else
			st->vals[st->k++] = low + t;
	}
	st->prev = last;	/* the run's later deltas are 0 or +1: small */
	if (q < (1u << 15))
		return;
	st->big++;
	for (j = 0; j < 8 && st->recent[j] != q; j++)
		;
	if (j < 8)
		st->rep++;
	else
		st->recent[st->r++ % 8] = q;
}

/* The flag column's values (@seen) and the frame column's statistics, a run at a time. */
static void col_scan(const uint64_t *words, size_t total, unsigned char *seen, struct col_stats *st)
{
	unsigned key, last = ~0u, step;
	size_t i, n;

	*st = (struct col_stats){ .lo = LOW_MASK };
	for (i = 0; i < total; i += n) {
		uint64_t low = words[i] & LOW_MASK;
		n = run_at(words, i, total, &step);
		key = flag_key(words[i]);
		if (key != last)
			seen[last = key] = 1;
		if (low)
			stats_low(st, low, n, step);
	}
}

/* Mode 2: each non-zero word's index among the @k values @vals (ascending). */
static size_t put_frames_palette(const uint64_t *words, size_t total, const uint64_t *vals, unsigned k,
				 unsigned char *out)
{
	unsigned width = bit_length(k - 1), j, step;
	struct bitw b = { .out = out };
	size_t i, n, t;

	for (i = 0; width && i < total; i += n) {
		uint64_t low = words[i] & LOW_MASK;
		n = run_at(words, i, total, &step);
		if (!low)
			continue;
		for (t = 0; t < (step ? n : 1); t++) {
			for (j = 0; vals[j] != low + t; j++)
				;
			bits_rep(&b, j, width, step ? 1 : n);
		}
	}
	return bits_end(&b);
}

/* Mode 0: a zig-zag varint delta a non-zero word; a run's later ones are 0 (0x00) or +1 (0x02). */
static size_t put_frames_varint(const uint64_t *words, size_t total, unsigned char *out)
{
	uint64_t prev = 0;
	unsigned step;
	size_t n = 0, i, r;

	for (i = 0; i < total; i += r) {
		uint64_t low = words[i] & LOW_MASK;
		r = run_at(words, i, total, &step);
		if (!low)
			continue;
		n += pmi_snap_put_varint(out + n, zigzag(low - prev));
		memset(out + n, step ? 2 : 0, r - 1);
		n += r - 1;
		prev = low + (step ? r - 1 : 0);
	}
	return n;
}

/* Mode 1: base and width, a token a non-zero word, then the tokens' packed bits. */
static size_t put_frames_packed(const uint64_t *words, size_t total, const struct col_stats *st, unsigned char *out)
{
	unsigned width = bit_length(st->hi - st->lo), bl, step;
	uint64_t prev = 0, q;
	struct bitw b;
	size_t n = 0, i, r;

	n += pmi_snap_put_varint(out + n, st->lo);
	out[n++] = (unsigned char)width;
	b = (struct bitw){ .out = out, .n = n + st->m };	/* the bits after the m tokens */
	for (i = 0; i < total; i += r) {
		uint64_t low = words[i] & LOW_MASK;
		r = run_at(words, i, total, &step);
		if (!low)
			continue;
		q = zigzag(low - prev);
		bl = bit_length(q);
		if (q < TOK_SMALL) {
			out[n++] = (unsigned char)q;
		} else if (bl - 1 >= width) {
			out[n++] = TOK_ABS;
			bits_put(&b, low - st->lo, width);
		} else {
			out[n++] = (unsigned char)(TOK_SMALL + bl);
			bits_put(&b, q & ~(1ULL << (bl - 1)), bl - 1);
		}
		memset(out + n, step ? 2 : 0, r - 1);	/* tokens of deltas 0 or +1 */
		n += r - 1;
		prev = low + (step ? r - 1 : 0);
	}
	return bits_end(&b);
}

size_t pmi_snap_encode_columns(const uint64_t *words, size_t total, unsigned char *out, uint32_t version)
{
	unsigned char seen[1024] = { 0 };
	uint16_t idx[1024];
	unsigned pal = 0, width, c, a, step;
	struct col_stats st;
	struct bitw b;
	size_t n, i, r;

	if (version < 3)
		return encode_columns_v2(words, total, out);
	col_scan(words, total, seen, &st);
	/* The flag column: its distinct values ascending, then each word's index among them in packed bits. */
	n = 0;
	for (c = 0; c < 1024; c++)
		if (seen[c])
			idx[c] = (uint16_t)pal++;
	n += pmi_snap_put_varint(out + n, pal);
	for (c = 0; c < 1024; c++) {
		if (!seen[c])
			continue;
		out[n++] = (unsigned char)c;
		out[n++] = (unsigned char)(c >> 8);
	}
	width = pal ? bit_length(pal - 1) : 0;
	b = (struct bitw){ .out = out, .n = n };
	for (i = 0; width && i < total; i += r) {
		r = run_at(words, i, total, &step);
		bits_rep(&b, idx[flag_key(words[i])], width, r);
	}
	n = bits_end(&b);
	/* The frame column. */
	if (!st.m)
		return n;
	if (!st.many) {	/* mode 2: a few distinct values, packed indices */
		for (a = 1; a < st.k; a++)	/* insertion sort: at most 16 */
			for (c = a; c > 0 && st.vals[c - 1] > st.vals[c]; c--) {
				uint64_t t = st.vals[c];
				st.vals[c] = st.vals[c - 1];
				st.vals[c - 1] = t;
			}
		out[n++] = 2;
		n += pmi_snap_put_varint(out + n, st.k);
		for (c = 0; c < st.k; c++)
			n += pmi_snap_put_varint(out + n, st.vals[c] - (c ? st.vals[c - 1] : 0));
		return n + put_frames_palette(words, total, st.vals, st.k, out + n);
	}
	if (st.big * 32 >= st.m && st.big && st.rep * 4 < st.big) {
		out[n++] = 1;
		return n + put_frames_packed(words, total, &st, out + n);
	}
	out[n++] = 0;
	return n + put_frames_varint(words, total, out + n);
}

size_t pmi_snap_encode(const struct snap_extent *ext, size_t next, const uint64_t *words, unsigned char *out,
		       uint32_t version)
{
	size_t n = pmi_snap_encode_extents(ext, next, out), total = 0, i;

	for (i = 0; i < next; i++)
		total += ext[i].count;
	return n + pmi_snap_encode_columns(words, total, out + n, version);
}
