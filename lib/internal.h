/*
 * internal.h - declarations shared inside libpagemap, never installed.
 * Functions one file of lib/ calls in another are named pmi_*: pm_* is the
 * public ABI of include/pagemap.h only (tests/abi/check-abi.py holds it).
 */
#ifndef PM_INTERNAL_H
#define PM_INTERNAL_H

#include <limits.h>
#include <stdarg.h>
#include <time.h>
#include "pagemap.h"

#define PM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct pm_ctx {
	char *root;			/* "/" or the replay directory, no trailing slash unless "/" */
	bool live;			/* root is "/" */
	enum pm_backend backend;
	pm_log_fn log;
	void *log_data;
	pm_check_fn check;		/* pm_ctx_set_check: asked before each read of a long call */
	void *check_data;
	bool debug;
	bool probed;
	unsigned probes_done;		/* PM_PROBE_* run (or with nothing to run) */
	struct pm_features features;
	int swap_active;		/* -1 unknown, else 0/1 */
	char *tree_error;		/* replay: the first problem found in the tree ("" if none); NULL when live */
	bool features_bad;		/* replay: a recorded page or PMD size was refused (pm_target_open fails) */
	char *snapshot_dir;		/* pm_ctx_new_snapshot: the extracted tree, removed by pm_ctx_free */
	struct pmi_snap_words *snap_words; /* pm_ctx_new_snapshot: where its word files are read (snapshot_words.c) */
	struct pmi_snap_text *snap_text;   /* pm_ctx_new_snapshot: where its text files are read (snapshot_text.c) */
	struct pmi_snap_keeper *snap_keeper; /* pm_ctx_new_snapshot: removes the tree if we die (snapshot_keeper.c) */
	uint64_t frame_start;		/* pm_kpage_start: a keyed snapshot's META key_lift, else 0 */
};

struct pm_target {
	struct pm_ctx *ctx;
	pid_t pid;
	int pagemap_fd;
	enum pm_pfn_view pfn_view;
	struct pm_decode_info decode;
};

/* procfs.c: every kernel path goes through the context's root. */
int pmi_path(const struct pm_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int pmi_open(const struct pm_ctx *ctx, const char *path, int flags);
int pmi_pid_path(const struct pm_ctx *ctx, char *buf, size_t size, pid_t pid, const char *file);
ssize_t pmi_pread_words(int fd, uint64_t *buf, size_t count, uint64_t word_index);
/* All @n bytes at @off, retrying EINTR and short transfers: 0, -ENODATA (the file ends first) or -errno. */
int pmi_pread_all(int fd, void *buf, size_t n, uint64_t off);
int pmi_pwrite_all(int fd, const void *buf, size_t n, uint64_t off);
/* The directory of @path opened ("/name": "/"; "name": ".") and its last component in @name: fd or -errno. */
int pmi_open_parent(const char *path, char name[NAME_MAX + 1]);
/* The same for a file of @ctx's (NULL: any file): a replayed snapshot's word files are read from its chunks. */
ssize_t pmi_ctx_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count, uint64_t word_index);
/* The first word at or after @index a replayed snapshot's word file open on @fd holds (@index: live, a tree). 0 or -errno. */
int pmi_ctx_next_data(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next);
int pmi_read_small_file(const struct pm_ctx *ctx, const char *path, char *buf, size_t size);
/* procfs.c: clock @c (CLOCK_REALTIME, CLOCK_MONOTONIC, ...) in nanoseconds. */
uint64_t pmi_clock_ns(clockid_t c);
enum pm_proc_state pmi_stat_state(const char *buf);	/* target.c: from the text of /proc/PID/stat */
int pmi_errno_from_name(const char *s);
#define PM_TREE_ERROR_MAX 512
/* Record the first problem of a replayed tree (a hostile or damaged capture); returns -EBADMSG. */
int pmi_tree_error(const struct pm_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* snapshot_tree.c: remove an extracted snapshot tree (never following symlinks). NULL is fine. */
void pmi_snap_remove_tree(const char *dir);

/* features.c (the kernel version check is public: pm_kernel_at_least) */
void pmi_dbg(const struct pm_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool pmi_swap_active(struct pm_ctx *ctx);

/*
 * walk.c: pm_walk_new with flags for callers inside the library (@iflags), kept out of the public
 * PM_WALK_* word, which pm_walk_new checks.
 */
struct pm_walk *pmi_walk_open(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags, unsigned iflags);
/* Only sums are wanted (mapstat): runs need not have continuing frames. */
#define PM_IWALK_NOFRAMES	(1u << 0)
/* Also yield [vvar] and [vsyscall], unread, as one run with no flags (mapstat lists every mapping). */
#define PM_IWALK_ALLMAPS	(1u << 1)
/* walk.c, for pm_mapstat: walk the next mapping whole, adding its bytes by flag to *@sums, no run built.
 * Returns 0 with *@map (valid until the next call), 1 at the end, <0 on error. */
int pmi_walk_sum_mapping(struct pm_walk *w, struct pm_flag_bytes *sums, const struct pm_mapping **map);
/* mapstat.c: add @len bytes to @b under each flag of @flags (pm_flag_bytes_add of a run's parts). */
void pmi_flag_bytes_add_len(struct pm_flag_bytes *b, uint32_t flags, uint64_t len);

/* compat.h carries the kernel uapi bits old headers lack. */

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

/* account.c: PSS in fixed point, summed without per-page truncation and rounded once (unit tests check it). */
#define PM_PSS_SHIFT 32
struct pm_pss {
	unsigned __int128 sum;	/* bytes << PM_PSS_SHIFT */
};
/* Add @bytes mapped @count times (@count 0 adds nothing). Pure. */
void pmi_pss_add(struct pm_pss *p, uint64_t bytes, uint64_t count);
/* The sum in bytes, rounded to the nearest byte. Pure. */
uint64_t pmi_pss_bytes(const struct pm_pss *p);

/* share.c: the counting step apart from walking and kpagecount, so unit tests can feed it synthetic pages. */
#define PM_SHARE_KEY_SWAP	(1ULL << 63)	/* a page key with this bit is a swap slot: type << 50 | offset */
/* Look up @n frames (distinct, ascending PFNs) as pm_kpage_lookup does; 0 or -errno. */
typedef int (*pm_share_lookup_fn)(void *data, struct pm_frame *frames, size_t n);
/* A handle without context or pm_kpage (pm_share_add refuses it); NULL with errno. */
struct pm_share *pmi_share_alloc(uint64_t page_size);
/* Start the next process; the maps pushed next are its. 0 or -errno. */
int pmi_share_push_target(struct pm_share *s, pid_t pid);
/* A mapping of the last process (its path is copied); the pages pushed next are its. 0 or -errno. */
int pmi_share_push_map(struct pm_share *s, const struct pm_mapping *m);
/* One page of the last mapping: a PFN, or PM_SHARE_KEY_SWAP | type << 50 | offset. 0 or -errno. */
int pmi_share_push_page(struct pm_share *s, uint64_t key);
/* @n pages of the last mapping from @key on (frames or slots of one swap type, +1 each). 0 or -errno. */
int pmi_share_push_pages(struct pm_share *s, uint64_t key, uint64_t n);
/* Spill the page records to a temporary file each time @records runs are held (tests: small; default 262144). */
void pmi_share_set_spill(struct pm_share *s, size_t records);
/* pm_share_finish with @fn for the lookups: called with at most 16384 distinct frames at a time, ascending. */
int pmi_share_tally(struct pm_share *s, pm_share_lookup_fn fn, void *data);

/* target.c: pm_target_read without asking the caller's check (a read whose failure would be misread). */
ssize_t pmi_target_read_nocheck(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t count);

/* outfile.c: a pm_outfile that writes to a dup of @fd as it is (never reopened nor truncated); NULL with errno. */
struct pm_outfile *pmi_outfile_on_fd(int fd);

#endif
