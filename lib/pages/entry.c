/* entry.c - pure decoding of one pagemap entry, every layout since 2.6.25 (docs/kernel-interface.md §1). */
#include <errno.h>
#include <string.h>
#include "compat.h"
#include "pages.h"
#include "pme.h"

/*
 * Swap types at or above this are not swap areas: migration, hwpoison and
 * device entries (MAX_SWAPFILES is 32 minus those, 23 on Debian's 6.x
 * configs; 29 on 2.6.x-4.x kernels with migration and hwpoison only).
 */
#define NONSWAP_TYPE_CURRENT	23
#define NONSWAP_TYPE_OLD	29

/*
 * The one flag table: per flag its bit, name, letter and meaning
 * (pm_flag_table), then its kernel facts (pm_flag_facts): the raw entry bit
 * (-1: derived), the first kernel that reports it, what it needs, and the
 * PAGEMAP_SCAN category that gives it without reading entries (the kernel's
 * PAGE_IS_* name; 0: entries must be read), then its per-mapping sum
 * (pm_flag_sums): its place among struct pm_usage's fields and `pagemap
 * maps`' size columns (-1: not summed) and what its bytes are, for help.
 * A new pagemap bit is one row here, its PME_ bit in pme.h, its PM_PAGE_
 * value in pagemap/entry.h and, for a new category, its PAGE_IS_ in compat.h.
 */
#define FLAG_ROWS(X)                                                                           \
	X(PM_PAGE_PRESENT, "present", 'P', "mapped to a page in RAM, the zero page included",   \
	  PME_BIT_PRESENT, 0, 0, 0, PAGE_IS_PRESENT,                                           \
	  0, "bytes mapped to pages in RAM: RSS, ZERO (the zero page) and hugetlb")             \
	X(PM_PAGE_SWAPPED, "swapped", 'S', "page is in a swap area",                           \
	  PME_BIT_SWAP, 0, 0, 0, PAGE_IS_SWAPPED,                                              \
	  1, "bytes in swap (smaps Swap for private memory)")                                  \
	X(PM_PAGE_FILE, "file", 'F', "page cache or shared memory, not anonymous",             \
	  PME_BIT_FILE, 3, 5, 0, PAGE_IS_FILE,                                                 \
	  2, "bytes of page cache or shared memory")                                           \
	X(PM_PAGE_EXCLUSIVE, "exclusive", 'E', "mapped only by this process (4.2+)",           \
	  PME_BIT_MMAP_EXCLUSIVE, 4, 2, PM_NEED_ENTRIES, 0,                                    \
	  3, "bytes mapped only by this process")                                              \
	X(PM_PAGE_SOFTDIRTY, "softdirty", 'D',                                                 \
	  "written since the last clear_refs 4 (3.11+, CONFIG_MEM_SOFT_DIRTY)",                \
	  PME_BIT_SOFT_DIRTY, 3, 11, PM_NEED_SOFT_DIRTY, PAGE_IS_SOFT_DIRTY,                   \
	  5, "soft-dirty bytes (written since clear_refs 4)")                                  \
	X(PM_PAGE_UFFD_WP, "uffdwp", 'W', "userfaultfd write-protected (5.13+)",               \
	  PME_BIT_UFFD_WP, 5, 13, PM_NEED_ENTRIES, 0,                                          \
	  6, "userfaultfd write-protected bytes")                                              \
	X(PM_PAGE_GUARD, "guard", 'G', "guard region installed by MADV_GUARD_INSTALL (6.15+)", \
	  PME_BIT_GUARD_REGION, 6, 15, PM_NEED_GUARD, PAGE_IS_GUARD,                           \
	  7, "bytes of guard regions")                                                         \
	X(PM_PAGE_MARKER, "marker", 'M', "swap-format PTE marker, not swap (uffd-wp or guard)", \
	  -1, 0, 0, 0, 0,                                                                      \
	  -1, NULL)                                                                            \
	X(PM_PAGE_NONSWAP, "migration", 'N', "migration, hwpoison or device entry, not swap",  \
	  -1, 0, 0, PM_NEED_FRAMES, 0,                                                         \
	  -1, NULL)                                                                            \
	X(PM_PAGE_THP, "thp", 'H', "PMD-mapped huge page (THP, hugetlb or the huge zero page)", \
	  -1, 0, 0, PM_NEED_FRAMES, PAGE_IS_HUGE,                                              \
	  4, "bytes in PMD-mapped huge pages of its own (THP or hugetlb), not the huge zero page") \
	X(PM_PAGE_ZERO, "zero", 'Z', "the shared zero page or huge zero page",                 \
	  -1, 0, 0, PM_NEED_FRAMES | PM_NEED_ZERO_PFN, PAGE_IS_PFNZERO,                        \
	  8, "bytes mapped to the zero page or huge zero page (in PRESENT, not in RSS)")

#define INFO_ROW(bit, name, letter, meaning, raw, maj, min, needs, cat, col, bytes) \
	{ bit, name, letter, meaning },
#define FACT_ROW(bit, name, letter, meaning, raw, maj, min, needs, cat, col, bytes) \
	{ bit, raw, maj, min, needs, cat },
#define SUM_ROW(bit, name, letter, meaning, raw, maj, min, needs, cat, col, bytes) \
	{ bit, col, bytes },

/*
 * The library names the kernel's PAGEMAP_SCAN categories as the kernel does
 * (PAGE_IS_*, compat.h); PM_CAT_* spell the same bits for callers, whose
 * headers may predate them.
 */
_Static_assert(PM_CAT_WPALLOWED == PAGE_IS_WPALLOWED && PM_CAT_WRITTEN == PAGE_IS_WRITTEN &&
	       PM_CAT_FILE == PAGE_IS_FILE && PM_CAT_PRESENT == PAGE_IS_PRESENT &&
	       PM_CAT_SWAPPED == PAGE_IS_SWAPPED && PM_CAT_PFNZERO == PAGE_IS_PFNZERO &&
	       PM_CAT_HUGE == PAGE_IS_HUGE && PM_CAT_SOFT_DIRTY == PAGE_IS_SOFT_DIRTY &&
	       PM_CAT_GUARD == PAGE_IS_GUARD, "PM_CAT_* are the kernel's PAGE_IS_* bits");

static const struct pm_flag_info flag_table[] = { FLAG_ROWS(INFO_ROW) };
/* PM_PAGE_FRAME says the other fields are real: no letter or column of its own, only facts. */
static const struct pm_flag_fact fact_table[] = {
	FLAG_ROWS(FACT_ROW)
	{ PM_PAGE_FRAME, -1, 0, 0, PM_NEED_FRAMES | PM_NEED_ENTRIES, 0 },
};

/* The per-mapping sums: pm_flag_table()'s rows in its order, with their place among the sums. */
static const struct pm_flag_sum sum_table[] = { FLAG_ROWS(SUM_ROW) };

const struct pm_flag_sum *pm_flag_sums(size_t *n)
{
	if (n)
		*n = PMI_ARRAY_SIZE(sum_table);
	return sum_table;
}

const struct pm_flag_info *pm_flag_table(size_t *n)
{
	if (n)
		*n = PMI_ARRAY_SIZE(flag_table);
	return flag_table;
}

const struct pm_flag_fact *pm_flag_facts(size_t *n)
{
	if (n)
		*n = PMI_ARRAY_SIZE(fact_table);
	return fact_table;
}

char *pm_flags_letters(uint32_t flags, char *buf, size_t size)
{
	size_t i, n = 0;

	if (!size)
		return buf;
	for (i = 0; i < PMI_ARRAY_SIZE(flag_table) && n + 1 < size; i++)
		buf[n++] = (flags & flag_table[i].bit) ? flag_table[i].letter : '-';
	buf[n] = '\0';
	return buf;
}

/* Bit 62 set: a real swap slot, a marker, or a PFN-carrying non-swap entry. */
static void decode_swap(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out)
{
	uint64_t frame = raw & PME_PFRAME_MASK;
	bool current = info->layout == PM_LAYOUT_CURRENT;
	unsigned type = (unsigned)(frame & ((1u << PME_SWAP_TYPE_BITS) - 1));

	/*
	 * 4.2-4.17 zeroed PFNs for unprivileged readers but still showed swap
	 * entries; slot 0 is the swap header, so a zero frame means hidden.
	 */
	bool shown = info->frame_visible || frame != 0;

	if (current && (raw & PME_GUARD_REGION)) {
		out->flags |= PM_PAGE_MARKER | PM_PAGE_GUARD;
	} else if (!shown) {
		/* Hidden frame (4.18+): uffd-wp on a swap entry is a marker unless swap is on. */
		if (current && (raw & PME_UFFD_WP) && !info->swap_active)
			out->flags |= PM_PAGE_MARKER;
		else
			out->flags |= PM_PAGE_SWAPPED;
	} else if (current && type == PM_SWAP_TYPE_MARKER && (raw & PME_UFFD_WP)) {
		out->flags |= PM_PAGE_MARKER;
	} else if (type >= (current ? NONSWAP_TYPE_CURRENT : NONSWAP_TYPE_OLD)) {
		out->flags |= PM_PAGE_NONSWAP;
	} else {
		out->flags |= PM_PAGE_SWAPPED;
	}
	/*
	 * A marker's type (31) and offset (its kind: 1 uffd-wp, 4 guard on 6.x) name no swap
	 * slot: the fields stay 0 and PM_PAGE_FRAME unset, so no caller shows them as one
	 * (the raw word keeps them).
	 */
	if (shown && !(out->flags & PM_PAGE_MARKER)) {
		out->swap_type = (uint8_t)type;
		out->swap_offset = frame >> PME_SWAP_TYPE_BITS;
		out->flags |= PM_PAGE_FRAME;
	}
}

/*
 * Does an entry of @layout carry raw bit @raw as a flag? Bits 61-63 always;
 * bits 55-60 held the page shift before 4.2, and the 3.11-4.1 v2 layout
 * has only bit 55 (soft-dirty) there. An unknown layout has none of them.
 */
static bool layout_has(enum pm_layout layout, int raw)
{
	if (raw > 60)
		return true;
	if (raw < PME_HIGH_SHIFT)
		return false;
	return layout == PM_LAYOUT_CURRENT || (layout == PM_LAYOUT_V2 && raw == PME_BIT_SOFT_DIRTY);
}

/* Bits 55-60 by layout, from the flag table; returns -EINVAL where they cannot be what we read. */
static int decode_high_bits(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out)
{
	enum pm_layout l = info->layout == PM_LAYOUT_UNKNOWN ? PM_LAYOUT_CURRENT : info->layout;
	uint64_t flag_bits = 0, b;
	size_t i;

	if (l == PM_LAYOUT_PSHIFT) {
		out->page_shift = (uint8_t)PME_PSHIFT(raw);
		return out->page_shift == info->page_shift ? 0 : -EINVAL;
	}
	for (i = 0; i < PMI_ARRAY_SIZE(fact_table); i++) {
		if (!layout_has(l, fact_table[i].raw_bit) || fact_table[i].raw_bit > 60)
			continue;
		b = 1ULL << fact_table[i].raw_bit;
		flag_bits |= b;
		if (raw & b)
			out->flags |= fact_table[i].bit;
	}
	/* Bits of the field that no flag of this layout uses are always 0. */
	return (raw & PME_HIGH_MASK & ~flag_bits) ? -EINVAL : 0;
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
	if (raw & PME_FILE)
		out->flags |= PM_PAGE_FILE;
	if ((raw & PME_PRESENT) && (raw & PME_SWAP))
		r = -EINVAL;
	if (raw & PME_PRESENT) {
		out->flags |= PM_PAGE_PRESENT;
		if (info->frame_visible) {
			out->pfn = raw & PME_PFRAME_MASK;
			out->flags |= PM_PAGE_FRAME;
		}
	} else if (raw & PME_SWAP) {
		decode_swap(raw, info, out);
	} else if (raw & PME_PFRAME_MASK) {
		r = -EINVAL;	/* a frame number on an empty entry */
	}
	return r;
}

static const struct pm_flag_fact *find_fact(uint32_t flag)
{
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(fact_table); i++)
		if (fact_table[i].bit == flag)
			return &fact_table[i];
	return NULL;
}

/* The probed answer a need names (PM_NEED_SOFT_DIRTY, PM_NEED_GUARD), PM_UNKNOWN for none. */
static enum pm_tristate probed(const struct pm_features *f, uint32_t needs)
{
	if (needs & PM_NEED_SOFT_DIRTY)
		return f->soft_dirty;
	if (needs & PM_NEED_GUARD)
		return f->guard_regions;
	return PM_UNKNOWN;
}

/* Read from entries (pread, or the scan back end's entry reads): kernel, layout, probe, reader. */
static int entry_lack(const struct pm_features *f, const struct pm_read_how *how, const struct pm_flag_fact *x)
{
	enum pm_tristate p = probed(f, x->needs);

	if (p != PM_YES && !pm_kernel_at_least(f, x->since_major, x->since_minor))
		return PM_LACK_KERNEL;
	if (x->raw_bit >= 0 && !layout_has(how->layout, x->raw_bit))
		return PM_LACK_LAYOUT;
	if (p == PM_NO)
		return PM_LACK_CONFIG;
	if ((x->needs & PM_NEED_FRAMES) && !how->frames)
		return PM_LACK_FRAMES;
	if ((x->needs & PM_NEED_ZERO_PFN) && !f->zero_pfn && f->zero_page != PM_NO)
		return PM_LACK_ZERO_PFN;
	return PM_LACK_NONE;
}

int pm_flag_lack(const struct pm_features *f, const struct pm_read_how *how, uint32_t flag)
{
	const struct pm_flag_fact *x = find_fact(flag);

	if (!x)
		return -EINVAL;
	if (!how->scan)
		return entry_lack(f, how, x);
	if (x->scan_category) {
		/* An accepted category proves the kernel has it; soft-dirty categories are accepted without the config. */
		if (!(f->scan_categories & x->scan_category))
			return PM_LACK_SCAN;
		return (x->needs & PM_NEED_SOFT_DIRTY) && f->soft_dirty == PM_NO ? PM_LACK_CONFIG : PM_LACK_NONE;
	}
	if ((x->needs & PM_NEED_ENTRIES) && !how->entries)
		return PM_LACK_ENTRIES;
	return entry_lack(f, how, x);
}
