/* entry.c - pure decoding of one pagemap entry, every layout since 2.6.25 (docs/kernel-interface.md §1). */
#include <errno.h>
#include <string.h>
#include "internal.h"

#define E_PRESENT	(1ULL << 63)
#define E_SWAP		(1ULL << 62)
#define E_FILE		(1ULL << 61)
#define E_GUARD		(1ULL << 58)	/* 6.15 */
#define E_UFFD_WP	(1ULL << 57)	/* 5.13 */
#define E_EXCLUSIVE	(1ULL << 56)	/* 4.2 */
#define E_SOFT_DIRTY	(1ULL << 55)	/* 3.11 (v2), 4.2 */
#define E_FRAME_MASK	((1ULL << 55) - 1)
#define E_PSHIFT(e)	((unsigned)(((e) >> 55) & 0x3f))
#define E_RESERVED_4_2	(3ULL << 59)	/* bits 59-60: always 0 since 4.2 */
#define E_RESERVED_V2	(0x1fULL << 56)	/* bits 56-60 in the 3.11-4.1 v2 layout */

#define SWAP_TYPE_BITS	5
/*
 * Swap types at or above this are not swap areas: migration, hwpoison and
 * device entries (MAX_SWAPFILES is 32 minus those, 23 on Debian's 6.x
 * configs; 29 on 2.6.x-4.x kernels with migration and hwpoison only).
 */
#define NONSWAP_TYPE_CURRENT	23
#define NONSWAP_TYPE_OLD	29

static const struct pm_flag_info flag_table[] = {
	{ PM_PAGE_PRESENT,   "present",   'P', "page is in RAM" },
	{ PM_PAGE_SWAPPED,   "swapped",   'S', "page is in a swap area" },
	{ PM_PAGE_FILE,      "file",      'F', "page cache or shared memory, not anonymous" },
	{ PM_PAGE_EXCLUSIVE, "exclusive", 'E', "mapped only by this process (4.2+)" },
	{ PM_PAGE_SOFTDIRTY, "softdirty", 'D', "written since the last clear_refs 4 (3.11+, CONFIG_MEM_SOFT_DIRTY)" },
	{ PM_PAGE_UFFD_WP,   "uffdwp",    'W', "userfaultfd write-protected (5.13+)" },
	{ PM_PAGE_GUARD,     "guard",     'G', "guard region installed by MADV_GUARD_INSTALL (6.15+)" },
	{ PM_PAGE_MARKER,    "marker",    'M', "swap-format PTE marker, not swap (uffd-wp or guard)" },
	{ PM_PAGE_NONSWAP,   "migration", 'N', "migration, hwpoison or device entry, not swap" },
	{ PM_PAGE_THP,       "thp",       'H', "PMD-mapped huge page (THP or hugetlb)" },
	{ PM_PAGE_ZERO,      "zero",      'Z', "the shared zero page or huge zero page" },
};

const struct pm_flag_info *pm_flag_table(size_t *n)
{
	if (n)
		*n = PM_ARRAY_SIZE(flag_table);
	return flag_table;
}

char *pm_flags_letters(uint32_t flags, char *buf, size_t size)
{
	size_t i, n = 0;

	if (!size)
		return buf;
	for (i = 0; i < PM_ARRAY_SIZE(flag_table) && n + 1 < size; i++)
		buf[n++] = (flags & flag_table[i].bit) ? flag_table[i].letter : '-';
	buf[n] = '\0';
	return buf;
}

/* Bit 62 set: a real swap slot, a marker, or a PFN-carrying non-swap entry. */
static void decode_swap(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out)
{
	uint64_t frame = raw & E_FRAME_MASK;
	bool current = info->layout == PM_LAYOUT_CURRENT;
	unsigned type = (unsigned)(frame & ((1u << SWAP_TYPE_BITS) - 1));

	/*
	 * 4.2-4.17 zeroed PFNs for unprivileged readers but still showed swap
	 * entries; slot 0 is the swap header, so a zero frame means hidden.
	 */
	bool shown = info->frame_visible || frame != 0;

	if (shown) {
		out->swap_type = (uint8_t)type;
		out->swap_offset = frame >> SWAP_TYPE_BITS;
		out->flags |= PM_PAGE_FRAME;
	}
	if (current && (raw & E_GUARD)) {
		out->flags |= PM_PAGE_MARKER | PM_PAGE_GUARD;
	} else if (!shown) {
		/* Hidden frame (4.18+): uffd-wp on a swap entry is a marker unless swap is on. */
		if (current && (raw & E_UFFD_WP) && !info->swap_active)
			out->flags |= PM_PAGE_MARKER;
		else
			out->flags |= PM_PAGE_SWAPPED;
	} else if (current && type == PM_SWAP_TYPE_MARKER && (raw & E_UFFD_WP)) {
		out->flags |= PM_PAGE_MARKER;
	} else if (type >= (current ? NONSWAP_TYPE_CURRENT : NONSWAP_TYPE_OLD)) {
		out->flags |= PM_PAGE_NONSWAP;
	} else {
		out->flags |= PM_PAGE_SWAPPED;
	}
}

/* Bits 55-60 by layout; returns -EINVAL where they cannot be what we read. */
static int decode_high_bits(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out)
{
	switch (info->layout) {
	case PM_LAYOUT_PSHIFT:
		out->page_shift = (uint8_t)E_PSHIFT(raw);
		return out->page_shift == info->page_shift ? 0 : -EINVAL;
	case PM_LAYOUT_V2:
		if (raw & E_SOFT_DIRTY)
			out->flags |= PM_PAGE_SOFTDIRTY;
		return (raw & E_RESERVED_V2) ? -EINVAL : 0;
	case PM_LAYOUT_CURRENT:
	case PM_LAYOUT_UNKNOWN:
	default:
		if (raw & E_SOFT_DIRTY)
			out->flags |= PM_PAGE_SOFTDIRTY;
		if (raw & E_EXCLUSIVE)
			out->flags |= PM_PAGE_EXCLUSIVE;
		if (raw & E_UFFD_WP)
			out->flags |= PM_PAGE_UFFD_WP;
		if (raw & E_GUARD)
			out->flags |= PM_PAGE_GUARD;
		return (raw & E_RESERVED_4_2) ? -EINVAL : 0;
	}
}

int pm_entry_decode(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out)
{
	struct pm_decode_info cur = { .layout = PM_LAYOUT_CURRENT };
	int r;

	if (!info)
		info = &cur;
	memset(out, 0, sizeof(*out));
	out->raw = raw;
	r = decode_high_bits(raw, info, out);
	if (raw & E_FILE)
		out->flags |= PM_PAGE_FILE;
	if ((raw & E_PRESENT) && (raw & E_SWAP))
		r = -EINVAL;
	if (raw & E_PRESENT) {
		out->flags |= PM_PAGE_PRESENT;
		if (info->frame_visible) {
			out->pfn = raw & E_FRAME_MASK;
			out->flags |= PM_PAGE_FRAME;
		}
	} else if (raw & E_SWAP) {
		decode_swap(raw, info, out);
	} else if (raw & E_FRAME_MASK) {
		r = -EINVAL;	/* a frame number on an empty entry */
	}
	return r;
}
