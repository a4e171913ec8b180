/* cache.h - internal pieces of the page cache view (cache_file.c, cache_set.c), apart for unit tests. */
#ifndef PMI_PAGECACHE_H
#define PMI_PAGECACHE_H

#include <stdint.h>
#include "pages.h"

/* Open @path (@name under @dirfd) for cachestat without reading it (O_NOATIME where allowed, O_NONBLOCK). fd or -errno. */
int pmi_cache_open(const char *path);
int pmi_cache_open_at(int dirfd, const char *name);
/* pm_cache_stat_path on @name under @dirfd, with its stat @sb taken by the caller (one stat per file, not two). */
struct stat;
int pmi_cache_measure_at(struct pm_ctx *ctx, int dirfd, const char *name, const struct stat *sb,
			struct pm_cache_stat *out);
/* The value of "@name:" in meminfo-style @text, in bytes (the text says kB). Pure. 0, -ENOENT or -EINVAL. */
int pmi_meminfo_field(const char *text, const char *name, uint64_t *bytes);
/* "@name:" of ROOT/proc/meminfo in bytes: 0, -EBADMSG (no valid line: tree error), -errno. */
int pmi_meminfo_read(struct pm_ctx *ctx, const char *name, uint64_t *bytes);
/* "START-END" of a map_files name for a mapping (lower-case hex, no 0x), into @buf. Pure. 0 or -ENAMETOOLONG. */
int pmi_map_files_name(uint64_t start, uint64_t end, char *buf, size_t size);


struct file_rec {
	struct pm_cache_file pub;
	char *path;
	size_t last_proc;		/* the process (1-based sequence) that last used it */
	size_t last_use;		/* its pm_cache_use index for that process */
};

struct pm_cache {
	struct pm_ctx *ctx;
	struct file_rec *files;
	size_t nfiles, cap_files;
	size_t *slots;			/* open addressing on (dev, ino): file index + 1, 0 empty */
	size_t nslots;
	struct pm_cache_use *uses;
	size_t nuses, cap_uses;
	size_t proc_seq;
	/* Who pays (cache_cgroup.c): frames of mapped file pages waiting for one kpagecgroup lookup. */
	struct pm_kpage *kpage;
	struct pm_frame *frames;
	size_t *frame_use;		/* the pm_cache_use each frame belongs to */
	size_t nframes;
};


/* cache_cgroup.c: the memory cgroup of @pid, as the inode kpagecgroup gives (0 unknown). */
uint64_t pmi_cache_proc_memcg(struct pm_cache *c, pid_t pid);
/* cache_cgroup.c: @npages frames from @pfn, mapped by use @use: charged where? Flushes when the batch is full. */
int pmi_cache_push_frames(struct pm_cache *c, size_t use, uint64_t pfn, uint64_t npages);
/* cache_cgroup.c: look the batched frames up and add their bytes to their uses. 0 or -errno. */
int pmi_cache_flush_frames(struct pm_cache *c);

#endif
