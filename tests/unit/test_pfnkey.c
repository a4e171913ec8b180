/* test_pfnkey.c - SipHash-2-4 reference vector, and the keyed frame permutations are bijections in range (and lifted: onto [span, 2 span)). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "snapshot_pfnkey.h"

static void test_key(unsigned char key[PMI_KEY_SIZE], unsigned seed)
{
	for (unsigned i = 0; i < PMI_KEY_SIZE; i++)
		key[i] = (unsigned char)(seed * 131 + i * 7 + 1);
}

/* The reference: key 00..0f, message 00..0e (15 bytes), SipHash-2-4 = a129ca6149be45e5 (paper, appendix A). */
static int siphash_reference(void)
{
	unsigned char key[16], msg[64];
	int i;

	for (i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	for (i = 0; i < 64; i++)
		msg[i] = (unsigned char)i;
	CHECK_EQ_U64(pmi_siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
	CHECK_EQ_U64(pmi_siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);	/* vectors.h, first entry */
	CHECK_EQ_U64(pmi_siphash24(key, msg, 8), 0x93f5f5799a932462ULL);
	return T_PASS;
}

/* Every value of [0, max) maps into [0, max), no two the same, and back. */
static int check_bijection(uint64_t max, unsigned shift, unsigned seed)
{
	uint64_t dom = shift ? ((max + (1ULL << shift) - 1) >> shift) << shift : max;	/* whole blocks */
	unsigned char key[PMI_KEY_SIZE], *seen = calloc(dom ? dom : 1, 1);
	struct pmi_perm p;
	int bad = 0;

	test_key(key, seed);
	pmi_perm_init(&p, key, 1, max, shift);
	for (uint64_t x = 0; x < dom && !bad; x++) {
		uint64_t y = pmi_perm_fwd(&p, x);
		bad = y >= dom || seen[y] || pmi_perm_inv(&p, y) != x;
		if (!bad)
			seen[y] = 1;
	}
	free(seen);
	if (bad)
		printf("  not a bijection: max %llu shift %u seed %u\n", (unsigned long long)max, shift, seed);
	return bad;
}

static int bijection_small(void)
{
	static const uint64_t max[] = { 1, 2, 3, 4, 5, 7, 16, 17, 255, 256, 257, 1000, 1023, 1024, 4095, 4999, 5000 };
	int bad = 0;

	for (size_t i = 0; i < sizeof(max) / sizeof(max[0]); i++)
		bad += check_bijection(max[i], 0, (unsigned)i);
	for (uint64_t m = 1; m <= 300; m++)
		bad += check_bijection(m, 0, 99);
	CHECK(bad == 0);
	return T_PASS;
}

/* A real-sized range (16 GiB of 4 KiB frames, plus an odd tail): sampled. */
static int bijection_sampled(void)
{
	const uint64_t max = (1ULL << 22) + 17;
	unsigned char key[PMI_KEY_SIZE];
	struct pmi_perm p;
	uint64_t x = 12345, moved = 0;
	int bad = 0;

	test_key(key, 3);
	pmi_perm_init(&p, key, 1, max, 0);
	for (int i = 0; i < 100000; i++) {
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL);
		uint64_t v = (x >> 20) % max, y = pmi_perm_fwd(&p, v);
		bad += y >= max || pmi_perm_inv(&p, y) != v;
		moved += y != v;
	}
	CHECK(bad == 0);
	CHECK(moved > 99000);
	CHECK_EQ_U64(pmi_perm_fwd(&p, max), max);	/* out of range: left alone */
	CHECK_EQ_U64(pmi_perm_fwd(&p, max + 5), max + 5);
	return T_PASS;
}

/* keyed-block: the offset inside a 2 MiB block stays, blocks are permuted among themselves. */
static int block_keeps_offsets(void)
{
	const uint64_t max = 5000 * 512 + 100;	/* a partial last block */
	const uint64_t nblocks = (max + 511) / 512;
	unsigned char key[PMI_KEY_SIZE], *seen = calloc(nblocks, 1);
	struct pmi_perm p;
	int bad = 0, moved = 0;

	test_key(key, 5);
	pmi_perm_init(&p, key, 1, max, 9);
	for (uint64_t b = 0; b < nblocks; b++) {
		uint64_t y = pmi_perm_fwd(&p, b << 9);
		bad += (y & 511) || (y >> 9) >= nblocks || seen[y >> 9];
		seen[y >> 9 < nblocks ? y >> 9 : 0] = 1;
		moved += y != b << 9;
		for (uint64_t o = 1; o < 512; o += 37) {
			uint64_t z = pmi_perm_fwd(&p, b << 9 | o);
			bad += z != (y | o) || pmi_perm_inv(&p, z) != (b << 9 | o);
		}
	}
	free(seen);
	CHECK(bad == 0);
	CHECK(moved > 4900);
	bad = check_bijection(3 * 512 + 1, 9, 1) + check_bijection(64 * 512, 9, 2);
	CHECK(bad == 0);
	return T_PASS;
}

static int keys_differ(void)
{
	unsigned char a[PMI_KEY_SIZE], b[PMI_KEY_SIZE];
	struct pmi_perm pa, pb, ps;
	uint64_t x;
	int same = 0;

	test_key(a, 1);
	test_key(b, 1);
	b[31] ^= 1;	/* the second half of the key counts too */
	pmi_perm_init(&pa, a, 1, 1 << 20, 0);
	pmi_perm_init(&pb, b, 1, 1 << 20, 0);
	pmi_perm_init(&ps, a, 2, 1 << 20, 0);
	for (x = 0; x < 1000; x++)
		same += pmi_perm_fwd(&pa, x) == pmi_perm_fwd(&pb, x) || pmi_perm_fwd(&pa, x) == pmi_perm_fwd(&ps, x);
	CHECK(same < 10);
	CHECK(pmi_key_id(a) != pmi_key_id(b));
	/* Keys whose two halves are equal are different keys too (an XOR of the halves made them all one). */
	memset(a, 'W', sizeof(a));
	memset(b, 'K', sizeof(b));
	pmi_perm_init(&pa, a, 1, 1 << 20, 0);
	pmi_perm_init(&pb, b, 1, 1 << 20, 0);
	for (same = 0, x = 0; x < 1000; x++)
		same += pmi_perm_fwd(&pa, x) == pmi_perm_fwd(&pb, x);
	CHECK(same < 10);
	CHECK(pmi_key_id(a) != pmi_key_id(b));
	return T_PASS;
}

/* Pagemap words: flags and swap type stay, frame and swap offset move or are zeroed. */
static int scramble_words(void)
{
	unsigned char key[PMI_KEY_SIZE];
	struct pmi_perm f, s;
	struct pmi_scramble fwd = { &f, &s, 0 }, inv = { &f, &s, 1 }, drop = { NULL, NULL, 0 };
	uint64_t present = 1ULL << 63 | 1ULL << 56 | 1ULL << 55 | 0x12345, swapped = 1ULL << 62 | 0x1234ULL << 5 | 3;
	uint64_t none = 1ULL << 55, w;

	test_key(key, 9);
	pmi_perm_init(&f, key, 1, 1 << 20, 0);
	pmi_perm_init(&s, key, 2, 1 << 16, 0);
	w = pmi_scramble_word(&fwd, present);
	CHECK_EQ_U64(w >> 55, present >> 55);
	CHECK((w & ((1ULL << 55) - 1)) < (1 << 20));
	CHECK(w != present);
	CHECK_EQ_U64(pmi_scramble_word(&inv, w), present);
	w = pmi_scramble_word(&fwd, swapped);
	CHECK_EQ_U64(w >> 55, swapped >> 55);
	CHECK_EQ_U64(w & 31, 3);
	CHECK(w != swapped);
	CHECK_EQ_U64(pmi_scramble_word(&inv, w), swapped);
	CHECK_EQ_U64(pmi_scramble_word(&fwd, none), none);
	CHECK_EQ_U64(pmi_scramble_word(&drop, present), present & ~((1ULL << 55) - 1));
	CHECK_EQ_U64(pmi_scramble_word(&drop, swapped), (swapped & ~((1ULL << 55) - 1)) | 3);
	return T_PASS;
}

#define FIELD	(1ULL << 55)	/* the frame field the lift wraps in */

/*
 * Lifted by its span: every value of [0, span) maps into [span, 2 span), no
 * two the same, and back; values at or past span move to v + span (above
 * every lifted image) and back; numbers below span are no image of a
 * frame, and their inverse lies outside the domain.
 */
static int check_lifted(uint64_t max, unsigned shift, unsigned seed)
{
	unsigned char key[PMI_KEY_SIZE], *seen;
	struct pmi_perm p, plain;
	uint64_t span;
	int bad = 0;

	test_key(key, seed);
	pmi_perm_init(&p, key, 1, max, shift);
	pmi_perm_init(&plain, key, 1, max, shift);
	span = pmi_perm_span(&p);
	if (pmi_perm_lift(&p, span) || !(seen = calloc(span, 1)))
		return 1;
	for (uint64_t x = 0; x < span && !bad; x++) {
		uint64_t y = pmi_perm_fwd(&p, x);
		bad = y < span || y >= 2 * span || seen[y - span] || pmi_perm_inv(&p, y) != x ||
		      y - span != pmi_perm_fwd(&plain, x);	/* the permutation itself is unchanged */
		if (!bad)
			seen[y - span] = 1;
	}
	for (uint64_t x = span; x < span + 64 && !bad; x++)	/* out of the domain: x + span, never a lifted image */
		bad = pmi_perm_fwd(&p, x) != x + span || pmi_perm_inv(&p, x + span) != x;
	for (uint64_t y = 0; y < span && y < 64 && !bad; y++)	/* no frame moves below the lift */
		bad = pmi_perm_inv(&p, y) < span;
	free(seen);
	if (bad)
		printf("  lifted: not a bijection onto [span, 2 span): max %llu shift %u seed %u\n",
		       (unsigned long long)max, shift, seed);
	return bad;
}

static int lifted_bijection(void)
{
	static const uint64_t max[] = { 1, 2, 3, 5, 16, 17, 257, 1000, 4999, 5000, 3 * 512 + 1, 64 * 512 };
	int bad = 0;

	for (size_t i = 0; i < sizeof(max) / sizeof(max[0]); i++)
		bad += check_lifted(max[i], 0, (unsigned)i) + check_lifted(max[i], 9, (unsigned)i);
	for (uint64_t m = 1; m <= 200; m++)
		bad += check_lifted(m, 0, 77);
	CHECK(bad == 0);
	return T_PASS;
}

/* Spans and lifts at the edge of the 55-bit field: the lift wraps there, so it stays one bijection. */
static int lifted_edges(void)
{
	unsigned char key[PMI_KEY_SIZE];
	struct pmi_perm p;
	const uint64_t half = FIELD / 2;

	test_key(key, 11);
	pmi_perm_init(&p, key, 1, 5000 * 512 + 100, 9);
	CHECK_EQ_U64(pmi_perm_span(&p), 5001 * 512);	/* whole blocks: the lift keeps 2 MiB alignment */
	CHECK(pmi_perm_lift(&p, pmi_perm_span(&p)) == 0);
	CHECK_EQ_U64(pmi_perm_fwd(&p, 77) & 511, 77);
	CHECK(pmi_perm_lift(&p, FIELD) < 0);			/* a lift past the field */
	CHECK(pmi_perm_lift(&p, FIELD - 5001 * 512 + 1) < 0);	/* span + lift past the field */
	CHECK(pmi_perm_lift(&p, FIELD - 5001 * 512) == 0);		/* just fits */
	CHECK_EQ_U64(pmi_perm_inv(&p, pmi_perm_fwd(&p, 12345)), 12345);
	pmi_perm_init(&p, key, 1, half, 0);	/* what an unknown max_pfn gets: half the field, lifted by half */
	CHECK(pmi_perm_lift(&p, half) == 0);
	CHECK(pmi_perm_fwd(&p, 0) >= half && pmi_perm_fwd(&p, half - 1) >= half);
	CHECK_EQ_U64(pmi_perm_fwd(&p, half), 0);			/* no real frame: wraps (a bijection) */
	CHECK_EQ_U64(pmi_perm_fwd(&p, FIELD - 1), half - 1);
	CHECK_EQ_U64(pmi_perm_inv(&p, 0), half);
	for (uint64_t x = 1; x < (1ULL << 40); x = x * 3 + 1)	/* every frame a kernel can have */
		CHECK(pmi_perm_fwd(&p, x) >= half && pmi_perm_inv(&p, pmi_perm_fwd(&p, x)) == x);
	pmi_perm_init(&p, key, 1, half + 1, 0);
	CHECK(pmi_perm_lift(&p, half + 1) < 0);			/* no room */
	CHECK_EQ_U64(p.lift, 0);
	return T_PASS;
}

/* Pagemap words of a lifted permutation: the frame lands past the domain, flags stay, and comes back. */
static int lifted_words(void)
{
	unsigned char key[PMI_KEY_SIZE];
	struct pmi_perm f, s;
	struct pmi_scramble fwd = { &f, &s, 0 }, inv = { &f, &s, 1 };
	const uint64_t present = 0x8100000000000000ULL | 0x12345, outside = 0x8000000000000000ULL | (1 << 20) | 7;
	uint64_t w;

	test_key(key, 13);
	pmi_perm_init(&f, key, 1, 1 << 20, 0);
	CHECK(pmi_perm_lift(&f, 1 << 20) == 0);
	pmi_perm_init(&s, key, 2, 1 << 16, 0);
	w = pmi_scramble_word(&fwd, present);
	CHECK_EQ_U64(w >> 55, present >> 55);
	CHECK((w & (FIELD - 1)) >= (1 << 20) && (w & (FIELD - 1)) < (2 << 20));
	CHECK_EQ_U64(pmi_scramble_word(&inv, w), present);
	w = pmi_scramble_word(&fwd, outside);	/* memory past max_pfn: moved by the lift, not hidden */
	CHECK_EQ_U64(w, outside + (1 << 20));
	CHECK_EQ_U64(pmi_scramble_word(&inv, w), outside);
	return T_PASS;
}

T_MAIN(T(siphash_reference), T(bijection_small), T(bijection_sampled), T(block_keeps_offsets), T(keys_differ),
       T(scramble_words), T(lifted_bijection), T(lifted_edges), T(lifted_words))
