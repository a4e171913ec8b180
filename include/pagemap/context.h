/* pagemap/context.h - Context: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_CONTEXT_H
#define PAGEMAP_CONTEXT_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/context.h> with what it needs"
#endif

struct pm_ctx;

/*
 * pm_ctx_new - create a context.
 * @root: directory that stands for "/" for every kernel path (/proc, /sys),
 *        or NULL for the live system. A captured tree may hold FILE.errno
 *        files: opening FILE then fails with that recorded errno (a name
 *        such as "EPERM" or a number), so refused opens replay too.
 * Returns the context, or NULL with errno set (ENOMEM; ENOTDIR or ENOENT if
 * @root is not a directory). Free with pm_ctx_free().
 * The environment variable PAGEMAP_BACKEND=pread|scan forces the walker's
 * back end (see pm_ctx_set_backend); PAGEMAP_DEBUG=1 sends debug lines to
 * the log callback.
 */
PM_API struct pm_ctx *pm_ctx_new(const char *root);

/* pm_ctx_free - free a context and its probed features. NULL is fine. */
PM_API void pm_ctx_free(struct pm_ctx *ctx);

/* pm_ctx_root - the root prefix ("/" for the live system). Borrowed. */
PM_API const char *pm_ctx_root(const struct pm_ctx *ctx);

/*
 * pm_ctx_tree_error - what was wrong with the replayed tree, or NULL.
 * A captured tree is untrusted input: a file that is not a regular file (a
 * FIFO would block, a device would be read), a truncated pagemap, a maps line
 * out of order or not page-aligned, a recorded page or PMD size out of range.
 * The call that met it failed with -EBADMSG (or, where the library goes on
 * without the file, nothing failed); this gives one line naming the file and
 * the reason, for the first such problem. Always NULL for the live system.
 * Borrowed, valid until pm_ctx_free().
 */
PM_API const char *pm_ctx_tree_error(const struct pm_ctx *ctx);

/*
 * pm_strerror - what errno @err (or -@err) means when this library returns
 * it, in words for a user: the errors with a meaning of their own (ESRCH,
 * ENOENT, EACCES, EPERM, EOPNOTSUPP, EBADMSG, EDEADLK) as the library means
 * them, any other as strerror() says it. A static string, or for an errno
 * without a meaning of its own a buffer of the calling thread, valid until
 * its next call of pm_strerror(). Thread-safe.
 */
PM_API const char *pm_strerror(int err);

/* Walker back ends. */
enum pm_backend {
	PM_BACKEND_AUTO = 0,	/* PAGEMAP_SCAN when the kernel has it, else pread */
	PM_BACKEND_PREAD,	/* batched pread of /proc/PID/pagemap */
	PM_BACKEND_SCAN,	/* PAGEMAP_SCAN ioctl (Linux 6.7+) */
};

/*
 * pm_ctx_set_backend - choose the walker back end for walks created later.
 * Returns 0, or -EINVAL for an unknown value. Choosing PM_BACKEND_SCAN on a
 * kernel without PAGEMAP_SCAN makes pm_walk_new() fail with -EOPNOTSUPP.
 */
PM_API int pm_ctx_set_backend(struct pm_ctx *ctx, enum pm_backend backend);

/* pm_backend_name - "auto", "pread" or "scan". Static string. */
PM_API const char *pm_backend_name(enum pm_backend backend);

/*
 * pm_ctx_set_log - receive debug lines through @fn (NULL: back to stderr,
 * and only while PAGEMAP_DEBUG is set). @line has no trailing newline.
 */
typedef void (*pm_log_fn)(void *data, const char *line);
PM_API void pm_ctx_set_log(struct pm_ctx *ctx, pm_log_fn fn, void *data);

/*
 * pm_ctx_set_check - have long calls on @ctx ask @fn whether to go on:
 * before each pagemap read of a walk or of pm_target_read() of more than
 * one entry (a one-word read is a liveness probe) and before each
 * PAGEMAP_SCAN step, so a caller can stop a walk of a huge address space
 * (e.g. when its user pressed Ctrl-C) without waiting for its end. A
 * negative return of @fn stops the call, which fails with that value
 * (-EINTR is the natural one). @fn runs in the calling thread, possibly in
 * several threads at once; it must be cheap. NULL (the default): never stop.
 */
typedef int (*pm_check_fn)(void *data);
PM_API void pm_ctx_set_check(struct pm_ctx *ctx, pm_check_fn fn, void *data);

#endif /* PAGEMAP_CONTEXT_H */
