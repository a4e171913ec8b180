/* pagemap/kpf.h - Physical page flags (KPF): part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_KPF_H
#define PAGEMAP_KPF_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/kpf.h> with what it needs"
#endif

/*
 * Bits of a /proc/kpageflags word (the kernel's KPF_* numbers). Bits 0-26
 * are the stable uapi; 32-42 are kernel-internal ("subject to change");
 * 47-63 are page-types' overloaded pseudo-bits, never reported by the
 * kernel: pm_kpf_cook() and the caller fill them.
 */
#define PM_KPF_COMPOUND_HEAD	15
#define PM_KPF_COMPOUND_TAIL	16
#define PM_KPF_HUGE		17
#define PM_KPF_NOPAGE		20
#define PM_KPF_THP		22
#define PM_KPF_ZERO_PAGE	24
#define PM_KPF_ANON		12
#define PM_KPF_SOFTDIRTY	40
#define PM_KPF_ANON_EXCLUSIVE	47
#define PM_KPF_FILE		61	/* pseudo: the pagemap entry's file bit */
#define PM_KPF_SWAP		62	/* pseudo: the pagemap entry's swap bit */
#define PM_KPF_MMAP_EXCLUSIVE	63	/* pseudo: the pagemap entry's exclusive bit */
#define PM_KPF_INTERNAL_MASK	0xffffffff00000000ULL	/* bits shown only in raw mode */

/* One row of the KPF table. */
struct pm_kpf_info {
	uint32_t bit;		/* bit number, 0-63 */
	const char *name;	/* page-types' long name, "anonymous" */
	char letter;		/* page-types' letter, 'a'; some raw-only letters repeat stable ones */
	const char *meaning;	/* one line for help */
	bool internal;		/* kernel-internal (32+) or pseudo-bit: raw mode only */
};

/*
 * pm_kpf_table - the KPF table in bit order, stable bits first; *@n gets
 * its length. Static, never freed.
 */
PM_API const struct pm_kpf_info *pm_kpf_table(size_t *n);

/*
 * pm_kpf_cook - the flags page-types shows for kpageflags word @flags.
 * @raw false: hide kernel-internal bits 32-63 and compound head/tail of
 * pages that are not hugetlb. @raw true: unfold the overloaded bits
 * (owner_2 on an anon page is anon_exclusive, reclaim without writeback is
 * readahead, active/error on a slab page are slub_frozen/slub_debug).
 * Pure; returns the cooked word.
 */
PM_API uint64_t pm_kpf_cook(uint64_t flags, bool raw);

/*
 * pm_kpf_describe - write the names of the bits of @flags, comma separated
 * in bit order, into @buf of @size bytes; a bit without a name is written
 * "bitN". Always NUL-terminates when @size > 0.
 * Returns the length written, or -ENOSPC if @buf was too small (it then
 * holds a truncated list). Pure.
 */
PM_API int pm_kpf_describe(uint64_t flags, char *buf, size_t size);

/*
 * pm_kpf_letters - page-types' symbolic form of @flags: one letter per
 * table row in table order, '_' where clear; stable bits only unless @raw.
 * @buf of @size bytes (64 suffices). Returns @buf, truncated to fit.
 */
PM_API char *pm_kpf_letters(uint64_t flags, bool raw, char *buf, size_t size);

/* One -b term: flags match when (flags & mask) == value, or, with @any, when (flags & mask) != 0. */
struct pm_kpf_term {
	uint64_t mask, value;
	bool any;
};

#define PM_KPF_MAX_TERMS 64

/* A conjunction of terms (repeat -b to narrow); zero-initialise before use. */
struct pm_kpf_filter {
	unsigned n;
	struct pm_kpf_term term[PM_KPF_MAX_TERMS];
};

/*
 * pm_kpf_parse - add one page-types -b expression to @f (pure). Forms:
 *   a,b      any of the bits set
 *   a,~b     a set and b clear (every ~ term clear, every other set)
 *   =a,b     exactly these bits, all others clear
 *   a,b=a    under the mask a,b the flags equal a
 * Every expression the kernel's tools/mm/page-types accepts means what it
 * means there. A bit is, in this order: a prefix of "compound" (head and
 * tail: "c"), a prefix of a long name, the first in bit order winning
 * ("anon" is anonymous, "u" uptodate, "a" active), or a number (0x1000: a
 * mask of bits). Empty terms add nothing, ~terms of the =-forms are ignored,
 * and text after a second '=' too, as there. Beyond page-types: a single
 * table letter that is no prefix ('L' locked, 'x' ksm; stable bits first).
 * Returns 0, -EINVAL for an unknown name or a malformed number (f is
 * unchanged), -E2BIG when @f already holds PM_KPF_MAX_TERMS terms.
 */
PM_API int pm_kpf_parse(struct pm_kpf_filter *f, const char *expr);

/* pm_kpf_match - do @flags pass every term of @f? An empty filter passes everything. Pure. */
PM_API bool pm_kpf_match(const struct pm_kpf_filter *f, uint64_t flags);

#endif /* PAGEMAP_KPF_H */
