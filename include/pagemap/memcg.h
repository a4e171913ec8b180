/* pagemap/memcg.h - Memory cgroups: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_MEMCG_H
#define PAGEMAP_MEMCG_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/memcg.h> with what it needs"
#endif

/*
 * pm_memcg_parse - pure: the memory cgroup path in the text of a
 * /proc/PID/cgroup file (@len bytes at @text, NUL bytes allowed). A cgroup
 * v1 line "ID:CONTROLLERS:PATH" whose controllers include "memory" wins;
 * otherwise the cgroup v2 line "0::PATH". Malformed lines are skipped.
 * Copies PATH, NUL-terminated, into @buf of @size bytes.
 * Returns 0, -ENODATA (no such line), -ERANGE (@buf too small) or
 * -EBADMSG (the line's path is empty).
 */
PM_API int pm_memcg_parse(const char *text, size_t len, char *buf, size_t size);

/*
 * pm_memcg_of - the memory cgroup of process @pid, read from
 * ROOT/proc/PID/cgroup through the context's root prefix (a replayed tree's
 * recorded errors apply; a FIFO or directory there is refused, never read).
 * Fills @buf as pm_memcg_parse() does.
 * Returns 0, -EINVAL (@pid <= 0 or no buffer), -ENOENT or -ESRCH (no such
 * process, or it exited), -EACCES, -EBADMSG (see pm_ctx_tree_error; or an
 * empty path), -ENODATA, -ERANGE, -ENOMEM.
 */
PM_API int pm_memcg_of(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size);

/*
 * pm_memcg_within - pure: is cgroup @cg the cgroup @path or below it, by
 * whole path components? @path starts with '/'; trailing slashes are
 * ignored, so "/" holds every cgroup and "/a/" holds "/a/b" but not "/ab".
 * False when either is NULL or @path is relative.
 */
PM_API bool pm_memcg_within(const char *cg, const char *path);

/*
 * pm_memcg_exists - does memory cgroup @path (absolute, as pm_memcg_of()
 * gives it) exist as a directory of ROOT/sys/fs/cgroup (cgroup v2) or
 * ROOT/sys/fs/cgroup/memory (v1)? Only stat()s, never opens.
 */
PM_API bool pm_memcg_exists(struct pm_ctx *ctx, const char *path);

#endif /* PAGEMAP_MEMCG_H */
