/* pme.h - the raw bits of a /proc/PID/pagemap entry, as the kernel defines them (private; page-types and CRIU keep the same list). */
#ifndef PMI_PME_H
#define PMI_PME_H

#include <stdbool.h>
#include <stdint.h>

/*
 * fs/proc/task_mmu.c names, with CRIU's PME_ prefix so they cannot be taken
 * for the library's decoded PM_PAGE_* flags. Which kernel reports each bit,
 * and what it needs, is in the flag facts table (entry.c), not here.
 */
#define PME_BIT_SOFT_DIRTY	55	/* PM_SOFT_DIRTY: 3.11 (v2 layout), every layout since 4.2 */
#define PME_BIT_MMAP_EXCLUSIVE	56	/* PM_MMAP_EXCLUSIVE: 4.2 */
#define PME_BIT_UFFD_WP		57	/* PM_UFFD_WP: 5.13 */
#define PME_BIT_GUARD_REGION	58	/* PM_GUARD_REGION: 6.15 */
#define PME_BIT_FILE		61	/* PM_FILE: 3.5 (reserved before) */
#define PME_BIT_SWAP		62	/* PM_SWAP: 2.6.25 */
#define PME_BIT_PRESENT		63	/* PM_PRESENT: 2.6.25 */

#define PME_SOFT_DIRTY		(1ULL << PME_BIT_SOFT_DIRTY)
#define PME_MMAP_EXCLUSIVE	(1ULL << PME_BIT_MMAP_EXCLUSIVE)
#define PME_UFFD_WP		(1ULL << PME_BIT_UFFD_WP)
#define PME_GUARD_REGION	(1ULL << PME_BIT_GUARD_REGION)
#define PME_FILE		(1ULL << PME_BIT_FILE)
#define PME_SWAP		(1ULL << PME_BIT_SWAP)
#define PME_PRESENT		(1ULL << PME_BIT_PRESENT)

/* Bits 0-54: the page frame number, or a swap entry's type (bits 0-4) and offset (5-54). */
#define PME_PFRAME_BITS		55
#define PME_PFRAME_MASK		((1ULL << PME_PFRAME_BITS) - 1)
#define PME_SWAP_TYPE_BITS	5
#define PME_SWAP_TYPE_MASK	((1ULL << PME_SWAP_TYPE_BITS) - 1)

/*
 * Bits 55-60: before 4.2 (and on 3.11-4.1 until a clear_refs 4) the page
 * shift, which an unmapped entry carries too (PM_NOT_PRESENT); since 4.2
 * one flag per bit, bits 59-60 unused. The 3.11-4.1 v2 layout has only bit
 * 55 (soft-dirty) there.
 */
#define PME_HIGH_SHIFT		55
#define PME_HIGH_MASK		(0x3fULL << PME_HIGH_SHIFT)
#define PME_PSHIFT(e)		((unsigned)(((e) & PME_HIGH_MASK) >> PME_HIGH_SHIFT))
#define PME_PSHIFT_NOT_PRESENT(shift)	((uint64_t)(shift) << PME_HIGH_SHIFT)

/* Could entry @e start a huge page of @n pages (a power of two): present, with a nonzero frame aligned to @n? */
static inline bool pme_huge_head(uint64_t e, uint64_t n)
{
	uint64_t pfn = e & PME_PFRAME_MASK;

	return (e & PME_PRESENT) && pfn && !(pfn & (n - 1));
}

/*
 * The @n entries at @e, a PMD block's: one aligned run of contiguous frames,
 * what a huge page shows (the buddy allocator may give one too: a walk
 * confirms with kpageflags, walk_entries.c huge_block).
 */
static inline bool pme_huge_candidate(const uint64_t *e, uint64_t n)
{
	uint64_t diff = 0, j;

	if (!pme_huge_head(e[0], n))
		return false;
	for (j = 1; j < n; j++)	/* no early exit: a branch-free loop the compiler can vectorise */
		diff |= e[j] ^ (e[0] + j);
	return !diff;
}

#endif
