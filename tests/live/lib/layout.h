/* layout.h - fork a child process with a known memory layout for the live tests, and tear it down. */
#ifndef PM_LIVE_LAYOUT_H
#define PM_LIVE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What the child maps. A count of 0 leaves the region out. Every anonymous
 * region except THP and KSM is MADV_NOHUGEPAGE, so its pages are 4 KiB ones
 * whatever the THP settings.
 */
struct layout_opts {
	unsigned anon_pages;		/* private anonymous, every page written */
	unsigned file_pages;		/* private mapping of a temp file, every page read, one page written (COW) */
	unsigned memfd_pages;		/* MAP_SHARED memfd, every page written */
	unsigned thp_count;		/* PMD-size THPs: PMD-aligned, MADV_HUGEPAGE, fully written */
	unsigned cow_pages;		/* written, then shared with a forked grandchild ... */
	unsigned cow_written;		/* ... which writes pages [0, cow_written): exclusive again here */
	unsigned guard_pages;		/* written, then MADV_GUARD_INSTALL on pages 1, 3, 5, ... */
	unsigned guard_count;		/* ... this many of them (guard_pages >= 2 * guard_count) */
	unsigned uffd_pages;		/* registered uffd-wp async; pages [0, uffd_populated) written, */
	unsigned uffd_populated;	/* all write-protected, then page 0 written again */
	unsigned protnone_pages;	/* written, then mprotect(PROT_NONE) */
	unsigned zero_pages;		/* read-faulted only: the zero page (error EOPNOTSUPP, detail the Rss it added,
					   where read faults allocate pages: no zero page on this kernel) */
	unsigned sparse_pages;		/* every other page written (pages 0, 2, 4, ...) */
	unsigned ksm_pages;		/* two MADV_MERGEABLE regions of this many pages with equal content */
	unsigned swap_pages;		/* written, then MADV_PAGEOUT until every page is swapped (or 20 tries) */
	uint64_t big_bytes;		/* private anonymous, populated by MADV_POPULATE_WRITE */
	unsigned hzero_count;		/* PMD-aligned MADV_HUGEPAGE blocks only read: the huge zero page
					   (error EOPNOTSUPP, detail the Rss it added, as for zero_pages) */
	bool thp_split;			/* one THP whose PMD is split (uffd-wp on its second half, then
					   written): PTE-mapped, its folio whole */
	/*
	 * Memory shared with a peer process (struct layout's peer), forked by the
	 * child last of all, so it shares every other region too. LR_SHARE is
	 * private anonymous: pages [0, share_pages) written before the fork and
	 * not touched after it by either (COW-shared), then share_broken pages
	 * written before the fork and written again by the child after it (COW
	 * broken: nobody shares them), then share_fresh pages first written after
	 * the fork, by both. LR_SHARE_MEMFD: a MAP_SHARED memfd of
	 * share_memfd_pages pages written before the fork, mapped by both at the
	 * same address, and once more by the peer at LR_PEER_MEMFD (every page
	 * written). LR_SHARE_PRIV (the child's) and LR_PEER_PRIV (the peer's):
	 * share_private_pages of a private anonymous mapping each one makes and
	 * writes after the fork. All of it MADV_NOHUGEPAGE: 4 KiB pages.
	 */
	unsigned share_pages;
	unsigned share_broken;
	unsigned share_fresh;
	unsigned share_memfd_pages;
	unsigned share_private_pages;
};

enum lay_id {
	LR_ANON, LR_FILE, LR_MEMFD, LR_THP, LR_COW, LR_GUARD, LR_UFFD, LR_PROTNONE,
	LR_ZERO, LR_SPARSE, LR_KSM_A, LR_KSM_B, LR_SWAP, LR_BIG, LR_THP_SPLIT, LR_HZERO,
	LR_SHARE, LR_SHARE_MEMFD, LR_SHARE_PRIV, LR_PEER_MEMFD, LR_PEER_PRIV, LR_COUNT
};

struct lay_region {
	uint64_t start, end;		/* [start, end); 0, 0 when not asked for or not set up */
	int error;			/* errno when the region could not be set up as asked (THP: EAGAIN if smaps
					   shows other AnonHugePages than meant) */
	uint64_t detail;		/* FILE: index of the written page; SWAP: pages seen swapped by the child;
					   ZERO, HZERO with error EOPNOTSUPP: the smaps Rss (bytes) their read faults added */
};

struct layout {
	pid_t pid;			/* the child, or 0 */
	pid_t grandchild;		/* holds the COW region, or 0 */
	pid_t peer;			/* shares the LR_SHARE* regions, or 0 */
	int sock;			/* SOCK_SEQPACKET to the child, or -1 */
	bool reaper;			/* we are a child subreaper: the grandchild comes back to us */
	unsigned page_size;
	uint64_t pmd_size;
	struct lay_region r[LR_COUNT];
};

/*
 * layout_start - fork the child, let it map @o and wait (up to 60 s) until
 * it reports the regions. Returns 0, or -errno (the child's setup failed
 * fatally, or it died); a region that is merely unsupported (no guard
 * regions, THP off, ...) has its error set instead. On failure nothing is
 * left running. The child dies with us (PR_SET_PDEATHSIG).
 */
int layout_start(const struct layout_opts *o, struct layout *l);

/*
 * layout_exec - make the child exec @path with argument @arg; returns once
 * the exec happened (0) or failed (-errno). The region addresses then
 * belong to the old, gone memory.
 */
int layout_exec(struct layout *l, const char *path, const char *arg);

/* layout_kill_nowait - SIGKILL the child and wait until it is a zombie, without reaping it. */
int layout_kill_nowait(struct layout *l);

/* layout_stop - kill and reap the child and the grandchild. Idempotent. */
void layout_stop(struct layout *l);

/* layout_region_name - "anon", "file", ... */
const char *layout_region_name(enum lay_id r);

/* layout_region_why - why region @r of @l is missing or unusable, for a skip reason (a static buffer). */
const char *layout_region_why(const struct layout *l, enum lay_id r);

/*
 * zero_page_on_read - does a read fault on fresh private anonymous memory
 * map the shared zero page on this machine? Probed by effect in the calling
 * process: reading 16 fresh pages adds no smaps Rss when it does. Some
 * kernels never map it (s390 KVM guests: mm_forbids_zeropage; hypervisor
 * guests booted without it): each read fault allocates a page. Returns 1,
 * 0, or -errno when smaps is unreadable.
 */
int zero_page_on_read(void);

/* thp_enabled - /sys/kernel/mm/transparent_hugepage/enabled is not [never]. */
bool thp_enabled(void);

/*
 * kernel_at_least - the running kernel (uname) is @maj.@min or later. Tests
 * take what a kernel must have from its version, not from the probe under test.
 */
bool kernel_at_least(unsigned maj, unsigned min);

/* kernel_has_scan - PAGEMAP_SCAN is there: Linux 6.7+. */
bool kernel_has_scan(void);

#endif
