/*
 * source.h - where a context's files come from, as a back end. A live
 * context reads /proc and /sys, a replayed tree reads the files under its
 * root: both are the default (no ops). A source that holds some files
 * elsewhere (a replayed snapshot keeps its word and text files in its
 * chunks) installs an ops table on the context; the base calls it before
 * every open and word read of the context's files and never knows what is
 * behind it. So the base includes nothing above itself: a source's code
 * lives in its own folder and includes this header.
 */
#ifndef PMI_SOURCE_H
#define PMI_SOURCE_H

#include <stdint.h>
#include <sys/types.h>
#include "base.h"

/* An op's answer for a file that is not its own: the base opens or reads it as the tree's file. */
#define PMI_SOURCE_NOT_MINE	(-0x10000)

/*
 * Each op gets the context (its source_data is the source's state) and
 * answers for one file. A failure a damaged source explains returns
 * -EBADMSG after saying why with pmi_tree_error(), as the base does for a
 * damaged tree (pm_ctx_tree_error); any other failure returns -errno. An
 * op left NULL answers NOT_MINE for every file.
 */
struct pmi_source_ops {
	/* Open @rel (relative to the root, no leading '/') to read: an fd, -errno or NOT_MINE. */
	int (*open)(const struct pm_ctx *ctx, const char *rel);
	/* pmi_pread_words on @fd (opened by pmi_open): words read, -errno or NOT_MINE. */
	ssize_t (*pread_words)(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count,
			       uint64_t index);
	/* The first word from @index on that @fd has data for, in *@next: 0, -errno or NOT_MINE. */
	int (*next_data)(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next);
	/*
	 * Make the context's root a directory whose names are the source's
	 * files, for a caller that reads the root itself (lists a directory,
	 * stat()s a file) rather than through open: 0 once made, or -errno. A
	 * source that serves every file itself makes nothing until asked.
	 */
	int (*tree)(const struct pm_ctx *ctx);
	/* pm_ctx_free: release @data (the ctx's source_data) and what it made on disk. Required. */
	void (*free)(void *data);
};

/* Install @ops with @data on @ctx (new, with no source yet); pm_ctx_free calls ops->free(data). */
void pmi_ctx_set_source(struct pm_ctx *ctx, const struct pmi_source_ops *ops, void *data);
/*
 * A replay context over @ops with @data whose @root (a directory name that
 * need not exist yet: ops->tree makes it) is not looked at: every file the
 * context reads first asks the source. NULL with errno; ops->free(data)
 * has run then.
 */
struct pm_ctx *pmi_ctx_new_source(const char *root, const struct pmi_source_ops *ops, void *data);

#endif
