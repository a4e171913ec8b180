/* snapshot_pfnkey.c - SipHash-2-4 and the keyed Feistel permutation that scrambles frame numbers in snapshots. */
#include <errno.h>
#include <string.h>
#include "snapshot_pfnkey.h"

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define FEISTEL_ROUNDS	8u
#define PME_FRAME_MASK	((1ULL << PMI_FRAME_BITS) - 1)

static uint64_t load64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void sipround(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

uint64_t pmi_siphash24(const unsigned char key[16], const void *in, size_t len)
{
	const unsigned char *m = in;
	uint64_t k0 = load64(key), k1 = load64(key + 8), b = (uint64_t)len << 56, w;
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
			  k1 ^ 0x7465646279746573ULL };
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = load64(m + i);
		v[3] ^= w;
		sipround(v);
		sipround(v);
		v[0] ^= w;
	}
	for (; i < len; i++)	/* the last 0-7 bytes, little-endian, under the length byte */
		b |= (uint64_t)m[i] << (8 * (i & 7));
	v[3] ^= b;
	sipround(v);
	sipround(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/*
 * The 128-bit round key from the 32-byte key file: SipHash keyed with the
 * first half over the second half (and a tag per output word), so all 32
 * bytes matter and no two halves cancel (an XOR of the halves made every
 * key whose halves are equal the same, all-zero, key).
 */
static void round_key(const unsigned char key[PMI_KEY_SIZE], unsigned char out[16])
{
	unsigned char in[17];
	int i, w;

	memcpy(in, key + 16, 16);
	for (w = 0; w < 2; w++) {
		uint64_t v;
		in[16] = (unsigned char)(w + 1);
		v = pmi_siphash24(key, in, sizeof(in));
		for (i = 0; i < 8; i++)
			out[8 * w + i] = (unsigned char)(v >> (8 * i));
	}
}

void pmi_perm_init(struct pmi_perm *p, const unsigned char key[PMI_KEY_SIZE], uint64_t tweak, uint64_t max,
		   unsigned block_shift)
{
	uint64_t blocks;
	unsigned bits = 0;

	memset(p, 0, sizeof(*p));
	round_key(key, p->key);
	p->tweak = tweak;
	p->max = max;
	p->block_shift = block_shift;
	blocks = block_shift ? (max + (1ULL << block_shift) - 1) >> block_shift : max;
	while (bits < 64 && blocks > 1 && (blocks - 1) >> bits)
		bits++;
	p->half = bits < 2 ? 1 : (bits + 1) / 2;
}

static uint64_t round_fn(const struct pmi_perm *p, unsigned r, uint64_t x)
{
	unsigned char in[16];
	uint64_t t = p->tweak ^ (uint64_t)r << 56, mask = (1ULL << p->half) - 1;
	int i;

	for (i = 0; i < 8; i++) {
		in[i] = (unsigned char)(x >> (8 * i));
		in[8 + i] = (unsigned char)(t >> (8 * i));
	}
	return pmi_siphash24(p->key, in, sizeof(in)) & mask;
}

/* One pass of the network over 2 * half bits; inverse runs the rounds backwards. */
static uint64_t feistel(const struct pmi_perm *p, uint64_t x, int inverse)
{
	uint64_t mask = (1ULL << p->half) - 1, l = x >> p->half, rr = x & mask, t;
	unsigned i;

	for (i = 0; i < FEISTEL_ROUNDS; i++) {
		if (!inverse) {
			t = l ^ round_fn(p, i, rr);
			l = rr;
			rr = t;
		} else {
			t = rr ^ round_fn(p, FEISTEL_ROUNDS - 1 - i, l);
			rr = l;
			l = t;
		}
	}
	return l << p->half | rr;
}

/* Cycle walking: the network permutes [0, 4^half); repeat until the value is back in [0, n). */
static uint64_t walk(const struct pmi_perm *p, uint64_t x, uint64_t n, int inverse)
{
	if (n <= 1 || x >= n)
		return x;
	do
		x = feistel(p, x, inverse);
	while (x >= n);
	return x;
}

static uint64_t apply(const struct pmi_perm *p, uint64_t x, int inverse)
{
	uint64_t low, blocks;

	if (!p->block_shift)
		return walk(p, x, p->max, inverse);
	/* The domain is whole blocks: a frame of the partial last block may move to any block and back. */
	blocks = (p->max + (1ULL << p->block_shift) - 1) >> p->block_shift;
	low = x & ((1ULL << p->block_shift) - 1);
	return walk(p, x >> p->block_shift, blocks, inverse) << p->block_shift | low;
}

uint64_t pmi_perm_span(const struct pmi_perm *p)
{
	uint64_t b = p->block_shift ? 1ULL << p->block_shift : 1;

	return p->max > UINT64_MAX - (b - 1) ? p->max : (p->max + b - 1) / b * b;
}

int pmi_perm_lift(struct pmi_perm *p, uint64_t lift)
{
	uint64_t span = pmi_perm_span(p);

	if (lift > PME_FRAME_MASK || (lift && (span > PME_FRAME_MASK + 1 - lift)))
		return -ERANGE;
	p->lift = lift;
	return 0;
}

/* Lifted: a rotation of the 55-bit field after the permutation, so the two stay one bijection. */
uint64_t pmi_perm_fwd(const struct pmi_perm *p, uint64_t x)
{
	return p->lift ? (apply(p, x, 0) + p->lift) & PME_FRAME_MASK : apply(p, x, 0);
}

uint64_t pmi_perm_inv(const struct pmi_perm *p, uint64_t x)
{
	return apply(p, p->lift ? (x - p->lift) & PME_FRAME_MASK : x, 1);
}

uint64_t pmi_key_id(const unsigned char key[PMI_KEY_SIZE])
{
	static const char what[] = "pagemap snapshot key id";
	unsigned char k[16];

	round_key(key, k);
	return pmi_siphash24(k, what, sizeof(what) - 1);
}

uint64_t pmi_scramble_word(const struct pmi_scramble *s, uint64_t word)
{
	uint64_t flags = word & ~PME_FRAME_MASK, low = word & PME_FRAME_MASK, v;
	const struct pmi_perm *p;

	if (word >> 63) {		/* present: bits 0-54 the frame number */
		p = s->frames;
		v = !p ? 0 : s->inverse ? pmi_perm_inv(p, low) : pmi_perm_fwd(p, low);
		return flags | (v & PME_FRAME_MASK);
	}
	if (word >> 62 & 1) {		/* swapped: type bits 0-4, offset bits 5-54 */
		p = s->swap;
		v = low >> 5;
		v = !p ? 0 : s->inverse ? pmi_perm_inv(p, v) : pmi_perm_fwd(p, v);
		return flags | (low & 31) | (v << 5 & PME_FRAME_MASK);
	}
	return word;
}
