/*
 * base.h - the base of libpagemap (lib/base/): the context, the target, kernel paths and reads, the probe's
 * helpers. Private to the library, never installed; every folder of lib/ may include it (docs/internals.md).
 * Functions one file of lib/ calls in another are named pmi_*: pm_* is the
 * public ABI of include/pagemap.h only (tests/abi/check-abi.py holds it).
 */
#ifndef PMI_BASE_H
#define PMI_BASE_H

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <time.h>
#include "pagemap.h"

#define PMI_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* grow.c: grow the array *@pp (of @size-byte items, capacity *@cap) to hold @need items. 0 or -ENOMEM. */
int pmi_grow(void *pp, size_t *cap, size_t need, size_t size);
/* procs.c: the real UID of a /proc/PID/status text of @len bytes (pm_proc_uid, snapshots). 0 or -EBADMSG. */
int pmi_status_uid(const char *status, size_t len, uid_t *uid);

struct pmi_source_ops;

/*
 * lib/pages/hugetlb_devs.c: the anonymous devices (major 0) learned to be a
 * hugetlbfs superblock or not; a device number is global, so one learned
 * anywhere holds for every process of the context.
 */
struct pmi_hugetlb_dev {
	uint32_t minor;
	bool huge;
};
struct pmi_hugetlb_devs {
	bool probed;			/* live: the kernel's own hugetlbfs mounts were asked */
	bool mounts_read;		/* live: our mountinfo's anonymous devices are known */
	uint64_t min_size;		/* live: the smallest huge page size (0: none) */
	struct pmi_hugetlb_dev *v;
	size_t n, cap;
};

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
	/* Where its files come from (source.h): NULL, the files under root; the state is freed by
	   source->free from pm_ctx_free. */
	const struct pmi_source_ops *source;
	void *source_data;
	uint64_t frame_start;		/* pm_kpage_start: ROOT/pagemap-frame-start, else 0 */
	struct pmi_hugetlb_devs hugetlb;	/* learned on a first mapping that may be hugetlb */
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
/* The same for a file of @ctx's (NULL: any file), through the context's source (source.h). */
ssize_t pmi_ctx_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count, uint64_t word_index);
/* The first word at or after @index @fd holds data for (@index: live, a tree). 0 or -errno. */
int pmi_ctx_next_data(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next);
/*
 * Before reading @ctx's root other than by pmi_open (opendir, stat, readlink
 * of a file under it): a source that keeps its files elsewhere makes their
 * names there now (source.h). 0 or -errno.
 */
int pmi_ctx_tree(const struct pm_ctx *ctx);
int pmi_read_small_file(const struct pm_ctx *ctx, const char *path, char *buf, size_t size);
/* procfs.c: clock @c (CLOCK_REALTIME, CLOCK_MONOTONIC, ...) in nanoseconds. */
uint64_t pmi_clock_ns(clockid_t c);
/*
 * stat_line.c: the fields of one /proc/PID/stat line of @len bytes (need not be NUL-terminated) into
 * @out, the command name (between "PID (" and the LAST ')', so one that holds ") R 1 " is still one
 * name) into @comm (truncated, NUL-terminated; NULL or @comm_size 0: not wanted). Returns 0, or
 * -EINVAL for a line that is not the kernel's: anything before "PID (", no ')' followed by a letter,
 * a field missing up to rss, two spaces, a sign where the kernel prints none. Pure.
 */
int pmi_stat_line_parse(const char *buf, size_t len, struct pm_proc_stat *out, char *comm, size_t comm_size);
/* stat_line.c: what @st says the process is (never PM_PROC_GONE). */
enum pm_proc_state pmi_stat_state(const struct pm_proc_stat *st);
/*
 * procs.c, the one walk of ROOT/proc: open it as a listing (pmi_ctx_tree first: a snapshot's names must
 * be there), 0 or -errno; then each process's PID (the kernel's names only: a decimal from 1 to
 * INT_MAX without a leading zero), 0, 1 at the end, or -errno. The caller closes @dir.
 */
int pmi_proc_dir_open(struct pm_ctx *ctx, DIR **dir);
int pmi_proc_dir_next(DIR *dir, pid_t *pid);
int pmi_errno_from_name(const char *s);
/* error_words.c: strerror's words, thread-safe (a buffer per thread, valid until its next call). */
const char *pmi_strerror(int err);
#define PMI_TREE_ERROR_MAX 512
/* Record the first problem of a replayed tree (a hostile or damaged capture); returns -EBADMSG. */
int pmi_tree_error(const struct pm_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* features.c (the kernel version check is public: pm_kernel_at_least) */
void pmi_dbg(const struct pm_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool pmi_swap_active(struct pm_ctx *ctx);
/* features_record.c: set @f from the key=value lines of a pagemap-features record (@text is cut up). */
void pmi_features_record_read(struct pm_features *f, char *text);

/* target.c: pm_target_read without asking the caller's check (a read whose failure would be misread). */
ssize_t pmi_target_read_nocheck(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t count);

/* outfile.c: a pm_outfile that writes to a dup of @fd as it is (never reopened nor truncated); NULL with errno. */
struct pm_outfile *pmi_outfile_on_fd(int fd);

#endif
