/*
 * pages.h - what lib/pages/ (decoders, maps, the walker, frames) offers the folders above it beyond the
 * public API: walker flags for callers inside the library, and kpage internals. Private, never installed.
 */
#ifndef PMI_PAGES_H
#define PMI_PAGES_H

#include "base.h"

/*
 * walk.c: pm_walk_new with flags for callers inside the library (@iflags), kept out of the public
 * PM_WALK_* word, which pm_walk_new checks.
 */
struct pm_walk *pmi_walk_open(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags, unsigned iflags);
/* Only sums are wanted (mapstat): runs need not have continuing frames. */
#define PMI_IWALK_NOFRAMES	(1u << 0)
/* Also yield [vvar] and [vsyscall], unread, as one run with no flags (mapstat lists every mapping). */
#define PMI_IWALK_ALLMAPS	(1u << 1)
/* walk.c, for pm_mapstat: walk the next mapping whole, adding its bytes by flag to *@sums, no run built.
 * Returns 0 with *@map (valid until the next call), 1 at the end, <0 on error. */
int pmi_walk_sum_mapping(struct pm_walk *w, struct pm_flag_bytes *sums, const struct pm_mapping **map);
/* walk.c, for pm_mapstat: the flags the mapping pmi_walk_sum_mapping gave last can tell (none: never read). */
uint32_t pmi_walk_map_known(const struct pm_walk *w);
/* walk_mapstat.c: add @len bytes to @b under each flag of @flags (pm_flag_bytes_add of a run's parts). */
void pmi_flag_bytes_add_len(struct pm_flag_bytes *b, uint32_t flags, uint64_t len);

/*
 * maps.c: is @m hugetlb: m->hugetlb (pm_maps_next told it by effect), or its path /anon_hugepage (MAP_HUGETLB,
 * for a mapping parsed alone or built by hand). Pure.
 */
bool pmi_map_hugetlb(const struct pm_mapping *m);

/*
 * hugetlb_devs.c: is @m (from @t's maps) on a hugetlbfs superblock, told by its device through
 * t->ctx->hugetlb, learned on the first mapping that may be (live: the kernel's own mounts by an
 * empty memfd per huge page size, a user's from mountinfo; replay: the recorded smaps, read once
 * per iterator, *@smaps_read). False when it cannot be told.
 */
bool pmi_hugetlb_by_effect(struct pm_target *t, const struct pm_mapping *m, bool *smaps_read);
/* The pure parts: @minor's verdict in @d (1 hugetlbfs, 0 not, -1 unknown; a major other than 0: 0). */
int pmi_hugetlb_devs_lookup(const struct pmi_hugetlb_devs *d, uint32_t major, uint32_t minor);
/* Record @minor's verdict (replacing any): 0 or -ENOMEM. */
int pmi_hugetlb_devs_add(struct pmi_hugetlb_devs *d, uint32_t minor, bool huge);
/* Can @m be hugetlb of page size @align (a power of two): a file on major 0, both ends aligned? */
bool pmi_hugetlb_candidate(const struct pm_mapping *m, uint64_t align);
/* One /proc/PID/mountinfo line (@len bytes, no newline needed): its device, and whether it is hugetlbfs. */
int pmi_mountinfo_dev(const char *line, size_t len, uint32_t *major, uint32_t *minor, bool *hugetlbfs);

/* kpage.c: preads issued so far on a pm_kpage's files (tests check that lookups batch). */
uint64_t pmi_kpage_nreads(const struct pm_kpage *k);
/*
 * kpage.c: words of @file for ascending @pfns (repeats allowed) into @out, reads
 * coalesced; past the end kpageflags reads KPF_NOPAGE, the others 0. 0 or -errno.
 */
int pmi_kpage_read_sorted(struct pm_kpage *k, enum pm_kpage_file file, const uint64_t *pfns, size_t n,
			 uint64_t *out);
/* kpage.c: the word of @file at @pfn into *@w: 1, or 0 past the file's end, or -errno. */
int pmi_kpage_word(struct pm_kpage *k, enum pm_kpage_file file, uint64_t pfn, uint64_t *w);
/* kpage.c: the files lookups read now (pm_kpage_select), to restore after a temporary choice. */
unsigned pmi_kpage_selected(const struct pm_kpage *k);

#endif
