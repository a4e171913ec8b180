/* watch_uffd.h - the uffd write watch's state, shared by its front (watch_uffd.c) and its scans below it (watch_uffd_scan.c) (internal). */
#ifndef PMI_WATCH_UFFD_H
#define PMI_WATCH_UFFD_H

#include <stdbool.h>
#include <stdint.h>
#include "compat.h"
#include "watch.h"

#define VEC_LEN 1024u	/* regions per PAGEMAP_SCAN call (24 KiB) */
/*
 * Bytes of address space per PAGEMAP_SCAN call that re-arms: the process's mmap lock is let go between calls
 * (its mmap, munmap and mprotect wait for one call at most; its page faults take per-VMA locks on 6.4+).
 * A watch's first call takes SCAN_CHUNK; the later ones, in this collect and the next, grow (to at most
 * SCAN_CHUNK_MAX) while a call holds the lock under HOLD_GOAL / 2, and shrink (to SCAN_CHUNK_MIN) when one
 * holds it over HOLD_GOAL. Each call has a fixed cost too (its TLB flush and mmu notifiers, 0.25-0.5 ms on
 * this project's VM where they go through the hypervisor): in fixed 64 MiB calls a collect of 1 GiB at
 * 0.1 % written took 1.7x one raw PAGEMAP_SCAN call over it, in 1 GiB calls 1.0x (bench/README.md).
 */
#define SCAN_CHUNK (64ULL << 20)
#define SCAN_CHUNK_MIN (16ULL << 20)
#define SCAN_CHUNK_MAX (1ULL << 30)
#define HOLD_GOAL 4e-3	/* seconds */

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
 * huge pages are not armed. Where the kernel keeps soft-dirty bits, a huge
 * PMD's bit says whether it was written (clear_refs 4 write-protects the PMD
 * and the write fault keeps it whole: do_huge_pmd_wp_page reuses the page);
 * elsewhere each collect compares their contents (read with
 * process_vm_readv, hashed). A written one is reported whole, marked huge.
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
	bool sd;			/* huge blocks told written by their soft-dirty bits (watch_uffd_huge.c) */
	int refs_fd;			/* with sd: the target's clear_refs; else -1 */
	uint64_t chunk;			/* bytes of the next re-arming call (SCAN_CHUNK_MIN..SCAN_CHUNK_MAX); 0 before the first */
	struct page_region vec[VEC_LEN];
};

/* What to do with each batch of regions one PAGEMAP_SCAN call returned. */
typedef int (*regions_fn)(struct pm_watch *w, const struct page_region *v, int n, void *data);

/* watch_uffd.c: a userfaultfd of the calling process with @features (the syscall, else /dev/userfaultfd); fd or -errno. */
int pmi_uffd_self(uint64_t features);

/* watch_uffd_scan.c */
int pmi_uffd_scan_each(struct pm_watch *w, struct pm_scan_arg arg, regions_fn fn, void *data);
int pmi_uffd_scan_written(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse);
uint64_t pmi_uffd_next_chunk(uint64_t chunk, double hold);
int pmi_uffd_scan_range(struct pm_watch *w, const struct pmi_watch_range *r, bool report, bool rearm, bool huge,
		       bool discover);
size_t pmi_uffd_piece_lower(const struct uffd_state *s, uint64_t a);

/* watch_uffd_huge.c */
size_t pmi_uffd_hb_lower(const struct uffd_state *s, uint64_t a);
int pmi_uffd_huge_pass(struct pm_watch *w, struct piece *p, bool report, bool reset, bool discover);
int pmi_uffd_huge_range(struct pm_watch *w, const struct pmi_watch_range *r, bool report, bool reset);
void pmi_uffd_sd_start(struct pm_watch *w);
int pmi_uffd_sd_clear(struct pm_watch *w, bool keep, const struct pmi_watch_range *fresh);

#endif
