/* snapshot_pfnkey.h - keyed permutations of frame numbers and swap offsets for scrambled snapshots (pure). */
#ifndef PMI_PFNKEY_H
#define PMI_PFNKEY_H

#include <stddef.h>
#include <stdint.h>

#define PMI_KEY_SIZE	32u
#define PMI_FRAME_BITS	55u	/* a pagemap word's frame field (and the lift's modulus) */

/* SipHash-2-4 of @len bytes at @in under the 16-byte @key (Aumasson and Bernstein's reference). */
uint64_t pmi_siphash24(const unsigned char key[16], const void *in, size_t len);

/*
 * An invertible keyed permutation of [0, @max): a balanced Feistel network
 * over the even bit width holding max - 1, SipHash-2-4 as the round
 * function, and cycle walking back into range. @block_shift > 0 permutes
 * blocks of 2^block_shift values (the range of blocks: max rounded up to a
 * block) and keeps the offset inside a block. Values outside the domain
 * are left alone.
 *
 * A lift (pmi_perm_lift) then adds lift to every value, modulo 2^55 (the
 * frame field): with lift = pmi_perm_span, the domain lands on
 * [span, 2 * span), which no value of the domain (a real frame) can equal,
 * and values at or past span move to v + span, above every lifted one. Still
 * a bijection of the 55-bit field; lift 0 is the permutation alone (what
 * snapshots without META key_lift were written with).
 */
struct pmi_perm {
	unsigned char key[16];	/* round function key */
	uint64_t tweak;		/* separates the domains (frames, swap offsets) */
	uint64_t max;		/* values are permuted inside [0, max); others are left alone */
	uint64_t lift;		/* added after the permutation (mod 2^55), subtracted before its inverse */
	unsigned block_shift;
	unsigned half;		/* bits of one Feistel half */
};

void pmi_perm_init(struct pmi_perm *p, const unsigned char key[PMI_KEY_SIZE], uint64_t tweak, uint64_t max,
		   unsigned block_shift);
/* The values the permutation moves: [0, span), max rounded up to whole blocks. */
uint64_t pmi_perm_span(const struct pmi_perm *p);
/* Lift every image by @lift (< 2^55; 0: none). -ERANGE if span + lift would not fit the 55-bit field. */
int pmi_perm_lift(struct pmi_perm *p, uint64_t lift);
uint64_t pmi_perm_fwd(const struct pmi_perm *p, uint64_t x);
uint64_t pmi_perm_inv(const struct pmi_perm *p, uint64_t x);

/* The key id META records: the first 8 bytes of SipHash of a fixed string under the key. */
uint64_t pmi_key_id(const unsigned char key[PMI_KEY_SIZE]);

/*
 * What a pagemap word becomes: frame number (present) or swap offset
 * (swapped) zeroed (@perm NULL) or moved through @frames / @swap, forward
 * or (@inverse) back. The flag bits 55-63 and the swap type stay.
 */
struct pmi_scramble {
	const struct pmi_perm *frames, *swap;	/* both NULL: drop */
	int inverse;
};
uint64_t pmi_scramble_word(const struct pmi_scramble *s, uint64_t word);

#endif
