/* watch_uffd.h - the uffd write watch's state, shared by its front (watch_uffd.c) and its scans below it (watch_uffd_scan.c) (internal). */
#ifndef PM_WATCH_UFFD_H
#define PM_WATCH_UFFD_H

#include <stdbool.h>
#include <stdint.h>
#include "compat.h"
#include "watch.h"

#define VEC_LEN 1024u	/* regions per PAGEMAP_SCAN call (24 KiB) */
/* Bytes of address space per PAGEMAP_SCAN call that re-arms: the process's mmap lock is let go between calls. */
#define SCAN_CHUNK (64ULL << 20)

/*
 * One registered mapping (or the part of it inside a watched range). Arming
 * write-protects empty entries too, with markers: that needs page tables,
 * 4 KiB per 2 MiB of address space nobody touched. A big mapping that is
 * mostly empty (a sanitizer's shadow, a reserved heap) would cost gigabytes,
 * so there only populated pages are armed and reported ("sparse"): a write
 * to an empty page still populates it and is seen; MADV_DONTNEED there is not.
 */
struct piece {
	uint64_t start, end;
	uint64_t map_start;	/* the mapping's first address (its smaps record) */
	bool sparse;
	int hugetlb;		/* -1 not asked yet (asked only where a huge page shows), 0, 1 */
};

/*
 * A PMD-mapped transparent huge page left whole. With async uffd-wp the
 * first write to a write-protected huge PMD splits it (wp_huge_pmd, 6.7-6.18:
 * seen here, AnonHugePages 4096 -> 2048 kB after one byte), and tracking must
 * leave the target's huge pages as it found them. So unless PM_WATCH_NOTHP,
 * huge pages are not armed: each collect compares their contents (read with
 * process_vm_readv, hashed) and reports a changed one whole, marked huge.
 */
struct hblock {
	uint64_t start;
	uint64_t hash;
};

struct uffd_state {
	int fd;
	struct piece *pieces;
	size_t npieces, cap;
	struct hblock *hb;		/* sorted by start */
	size_t nhb, caphb;
	void *hbuf;			/* one PMD of contents */
	struct page_region vec[VEC_LEN];
};

/* What to do with each batch of regions one PAGEMAP_SCAN call returned. */
typedef int (*regions_fn)(struct pm_watch *w, const struct page_region *v, int n, void *data);

/* watch_uffd.c: a userfaultfd of the calling process with @features (the syscall, else /dev/userfaultfd); fd or -errno. */
int pmi_uffd_self(uint64_t features);

/* watch_uffd_scan.c */
int pmi_uffd_scan_each(struct pm_watch *w, struct pm_scan_arg arg, regions_fn fn, void *data);
int pmi_uffd_scan_written(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse);
int pmi_uffd_scan_range(struct pm_watch *w, const struct pm_watch_range *r, bool report, bool rearm, bool huge,
		       bool discover);
size_t pmi_uffd_piece_lower(const struct uffd_state *s, uint64_t a);
size_t pmi_uffd_hb_lower(const struct uffd_state *s, uint64_t a);

#endif
