/* pagemap/entry.h - Entries and page flags: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_ENTRY_H
#define PAGEMAP_ENTRY_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/entry.h> with what it needs"
#endif

/* Decoded page state, the same bits whatever the layout or back end. */
#define PM_PAGE_PRESENT		(1u << 0)	/* in RAM (bit 63) */
#define PM_PAGE_SWAPPED		(1u << 1)	/* a swap entry (bit 62, not a marker) */
#define PM_PAGE_FILE		(1u << 2)	/* page cache or shmem (bit 61) */
#define PM_PAGE_EXCLUSIVE	(1u << 3)	/* mapped only here (bit 56, 4.2+) */
#define PM_PAGE_SOFTDIRTY	(1u << 4)	/* soft-dirty (bit 55, 3.11+) */
#define PM_PAGE_UFFD_WP		(1u << 5)	/* userfaultfd write-protected (bit 57, 5.13+) */
#define PM_PAGE_GUARD		(1u << 6)	/* guard region marker (bit 58, 6.15+) */
#define PM_PAGE_MARKER		(1u << 7)	/* bit 62 set by a PTE marker, not swap */
#define PM_PAGE_NONSWAP		(1u << 8)	/* bit 62 set by migration/hwpoison/device entry */
/*
 * PM_PAGE_THP: PMD-mapped transparent or hugetlb page. PAGEMAP_SCAN says so
 * directly; the pread back end infers it from 2 MiB-aligned contiguous frames
 * (confirmed by kpageflags when readable), so a huge page whose PMD was split
 * but whose frames stayed together still reads THP there.
 */
#define PM_PAGE_THP		(1u << 9)
#define PM_PAGE_ZERO		(1u << 10)	/* the zero page or huge zero page (walker) */
#define PM_PAGE_FRAME		(1u << 11)	/* pfn or swap type/offset fields are real */
#define PM_PAGE_NFLAGS		12

/* One row of the flag table. */
struct pm_flag_info {
	uint32_t bit;		/* PM_PAGE_* value */
	const char *name;	/* lower-case column name, "present" */
	char letter;		/* one-letter code for compact flag strings */
	const char *meaning;	/* one line for help */
};

/* pm_flag_table - the table of PM_PAGE_* flags; *@n gets its length. Static. */
PM_API const struct pm_flag_info *pm_flag_table(size_t *n);

/*
 * How a flag is summed as bytes per mapping (pm_flag_sums): struct
 * pm_usage's fields are the flags of columns 0-8 in that order, and `pagemap
 * maps` shows one size column per summed flag in column order.
 */
struct pm_flag_sum {
	uint32_t bit;		/* PM_PAGE_* value */
	int column;		/* its place among the sums; -1: not summed */
	const char *bytes;	/* one line for help: what its bytes are; NULL when not summed */
};

/*
 * pm_flag_sums - the rows of pm_flag_table() in its order, each with its
 * per-mapping sum; *@n gets the length. Static.
 */
PM_API const struct pm_flag_sum *pm_flag_sums(size_t *n);

/*
 * pm_flags_letters - write @flags as one letter per flag in table order,
 * '-' where clear, into @buf of @size bytes (PM_PAGE_NFLAGS + 1 suffices).
 * Returns @buf.
 */
PM_API char *pm_flags_letters(uint32_t flags, char *buf, size_t size);

/*
 * What a flag needs besides a kernel that reports it (pm_flag_fact.needs).
 * PM_NEED_SOFT_DIRTY and PM_NEED_GUARD name a probed answer in struct
 * pm_features: PM_NO makes the flag unknown, PM_YES makes the kernel version
 * irrelevant. Under PAGEMAP_SCAN an accepted category proves the kernel
 * support (guard regions), but not the kernel config (soft-dirty).
 */
#define PM_NEED_FRAMES		(1u << 0)	/* the reader sees frame numbers (pm_decode_info.frame_visible) */
#define PM_NEED_ENTRIES		(1u << 1)	/* entries are read: under PAGEMAP_SCAN only with PM_WALK_ENTRIES */
#define PM_NEED_SOFT_DIRTY	(1u << 2)	/* CONFIG_MEM_SOFT_DIRTY (pm_features.soft_dirty) */
#define PM_NEED_GUARD		(1u << 3)	/* MADV_GUARD_INSTALL guard regions (pm_features.guard_regions) */
#define PM_NEED_ZERO_PFN	(1u << 4)	/* the zero page's frame is known (pm_features.zero_pfn), or there is none */

/* One row of the kernel facts behind a PM_PAGE_* flag. */
struct pm_flag_fact {
	uint32_t bit;			/* PM_PAGE_* value */
	int raw_bit;			/* the pagemap entry bit that is this flag; -1 when it is derived
					   (from the frame field, the swap type, or frames side by side) */
	unsigned since_major, since_minor;	/* first kernel that reports it; 0.0: every kernel */
	uint32_t needs;			/* PM_NEED_* */
	uint64_t scan_category;		/* PM_CAT_* that gives it under PAGEMAP_SCAN without reading
					   entries; 0 when entries must be read */
};

/*
 * pm_flag_facts - the kernel facts of each PM_PAGE_* flag: the rows of
 * pm_flag_table() in its order, then PM_PAGE_FRAME (which has no letter);
 * *@n gets the length. Static.
 */
PM_API const struct pm_flag_fact *pm_flag_facts(size_t *n);

/* How pages are read, for pm_flag_lack(). */
struct pm_read_how {
	enum pm_layout layout;		/* of the entries (pm_target_decode_info) */
	bool frames;			/* the reader sees frame numbers */
	bool scan;			/* the PAGEMAP_SCAN back end (else pread) */
	bool entries;			/* PM_WALK_ENTRIES: the scan back end reads entries too */
};

/* Why a flag cannot be told: pm_flag_lack()'s answer. */
enum pm_lack {
	PM_LACK_NONE = 0,	/* it can be told: clear means clear */
	PM_LACK_KERNEL,		/* the kernel is older than the flag (since_major.since_minor) */
	PM_LACK_LAYOUT,		/* this entry layout has no such bit (bits 55-60 before 4.2) */
	PM_LACK_CONFIG,		/* the probe says the kernel lacks what it needs (PM_NEED_SOFT_DIRTY, _GUARD) */
	PM_LACK_FRAMES,		/* frame numbers are hidden from this reader */
	PM_LACK_ZERO_PFN,	/* the zero page's frame is not known */
	PM_LACK_ENTRIES,	/* the scan back end does not read entries (no PM_WALK_ENTRIES) */
	PM_LACK_SCAN,		/* PAGEMAP_SCAN here does not accept the flag's category */
};

/*
 * pm_flag_lack - can flag @flag (one PM_PAGE_* bit) be told on the kernel of
 * @f, read as @how says? The one rule behind pm_walk_known() and the tool's
 * "shown as -" notes, from pm_flag_facts(). Pure.
 * Returns PM_LACK_NONE (0), the first reason it cannot (enum pm_lack, in the
 * order listed there), or -EINVAL for a value that is not one known flag.
 */
PM_API int pm_flag_lack(const struct pm_features *f, const struct pm_read_how *how, uint32_t flag);

/*
 * pm_flag_lack_str - pm_flag_lack()'s answer @lack for flag @flag, read as
 * @how says (NULL: pread), in words for a user: "soft-dirty came with Linux
 * 3.11", "PFNs are hidden and the pread back end needs them". Written into
 * @buf of @size bytes (truncated to fit; 128 always suffice). Pure.
 * Returns @buf, or NULL with errno EINVAL for a @flag that is not one known
 * flag, a @lack that is no enum pm_lack value, or no room.
 */
PM_API char *pm_flag_lack_str(uint32_t flag, int lack, const struct pm_read_how *how, char *buf, size_t size);

/*
 * pm_kernel_at_least - is the kernel of @f at least @major.@minor? True
 * when its version is unknown (a replayed tree without one): the library
 * then assumes a current kernel. The one version check of the library and
 * the tool. Pure.
 */
PM_API bool pm_kernel_at_least(const struct pm_features *f, unsigned major, unsigned minor);

/* How to read raw entries. */
struct pm_decode_info {
	enum pm_layout layout;
	unsigned page_shift;		/* for the page-shift layout's sanity check */
	bool frame_visible;		/* PFN/swap fields are shown to this reader */
	bool swap_active;		/* some swap area is on (helps tell uffd-wp markers apart when frames are hidden) */
};

struct pm_entry {
	uint64_t raw;
	uint32_t flags;			/* PM_PAGE_* (never THP or ZERO: those need the walker) */
	uint8_t page_shift;		/* PM_LAYOUT_PSHIFT only: bits 55-60 */
	uint8_t swap_type;		/* with PM_PAGE_FRAME and SWAPPED or NONSWAP (a marker: 0) */
	uint64_t swap_offset;
	uint64_t pfn;			/* with PM_PAGE_FRAME and PM_PAGE_PRESENT */
};

/* Swap type the kernel uses for PTE markers (uffd-wp, guard, poison). */
#define PM_SWAP_TYPE_MARKER	31

/*
 * pm_entry_decode - decode raw entry @raw as read under @info (pure).
 * Returns 0, or -EINVAL if @raw is impossible in that layout (e.g. present
 * and swapped at once, or a page-shift field that is not @info->page_shift);
 * @out is filled either way.
 */
PM_API int pm_entry_decode(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out);

/*
 * pm_target_decode_info - how the entries pm_target_read() returns for @t
 * decode: the layout found when @t was opened, the page shift, whether
 * frames are visible, whether swap is on. With pm_entry_decode() it reads
 * single pages without a walk (no maps). Pure.
 */
PM_API void pm_target_decode_info(const struct pm_target *t, struct pm_decode_info *out);

#endif /* PAGEMAP_ENTRY_H */
