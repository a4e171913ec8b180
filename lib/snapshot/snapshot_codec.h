/* snapshot_codec.h - what the WORDS chunk encoder (snapshot_codec.c) and decoder
 * (snapshot_decode.c) share: the column layout's constants and the small transforms both sides
 * apply. Inside libpagemap only. */
#ifndef PMI_SNAPSHOT_CODEC_H
#define PMI_SNAPSHOT_CODEC_H

#include <stdint.h>

#define LOW_MASK	((1ULL << 55) - 1)
#define LOW_SET		(1u << 9)	/* in the 2-byte column: bits 0-54 are not zero */

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* A word's flag column value: bits 55-63, and LOW_SET when bits 0-54 are not all zero. */
static inline unsigned flag_key(uint64_t word)
{
	return (unsigned)(word >> 55) | ((word & LOW_MASK) ? LOW_SET : 0);
}

/* The word a flag column value stands for until its frame column fills bits 0-54 (bit 0 marks those it will). */
static inline uint64_t flag_word(unsigned key)
{
	return (uint64_t)(key & 0x1ff) << 55 | ((key & LOW_SET) ? 1 : 0);
}

static inline unsigned bit_length(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/*
 * Version 3's frame column picks its mode from these: up to LOW_PAL_MAX
 * distinct non-zero low bits (mode 2: kpageflags words of anonymous pages
 * mix two or three values at random, which cost zstd several bits a word as
 * varint deltas; an index costs 1 or 2), else mode 1 (tokens and packed
 * bits) when many deltas take 3 varint bytes or more and few of those
 * repeat one of the last few (frame numbers of scattered memory: about
 * log2 of the frame range bits each, which zstd cannot fold when they come
 * as varint bytes), else 0 (varints: repeating deltas, as flag words
 * alternating between a few values, fold in zstd's matches).
 */
#define LOW_PAL_MAX	16u

#define TOK_SMALL	16u	/* tokens below: the zig-zag delta itself */
#define TOK_ABS		127u	/* the value minus the base, in the column's width */

#endif
