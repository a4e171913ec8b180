/* snapshot_source.h - a replayed snapshot as its context's source of files (lib/base/source.h). */
#ifndef PMI_SNAPSHOT_SOURCE_H
#define PMI_SNAPSHOT_SOURCE_H

#include "snapshot.h"
#include "source.h"

/* A file of the snapshot's tree, as its FILE section declares it. */
struct pmi_snap_name {
	char *path;		/* relative, checked by pm_snapshot_open (path_ok) */
	uint64_t offset;	/* its FILE section's, for messages */
	uint64_t size;
	uint32_t kind;		/* PM_SNAPSHOT_BYTES or PM_SNAPSHOT_WORDS */
	uint32_t id;		/* the file's id (its FILE section's order) */
	int fd;			/* a word file opened: an empty memfd of @size bytes the word reader knows; else -1 */
};

/*
 * Word files served from memfds at most: each holds a descriptor for the
 * replay's life (its inode is how reads find the file). Past them, as when
 * a descriptor cannot be had, word files are the tree's sparse files.
 */
#define PMI_SNAP_MEMFDS	64

/*
 * What a replay context holds (pm_ctx_new_snapshot): the readers that serve
 * its word and text files from the snapshot's chunks and the names of its
 * files, sorted. Every open of the context's files is answered from them,
 * so no file system is touched; a call that reads the root itself (lists
 * /proc, stat()s a cgroup directory) makes the tree of names under $TMPDIR
 * first (the source's tree op), with a keeper that removes it if we die.
 */
struct pmi_snap_source {
	struct pmi_snap_words *words;	/* its word files (snapshot_words.c) */
	struct pmi_snap_text *text;	/* its text files (snapshot_text.c) */
	struct pmi_snap_name *names;	/* every FILE, sorted by path */
	size_t nnames, cap;
	size_t nmemfds;			/* word files served from memfds so far */
	char frame_start[24];		/* pagemap-frame-start's text ("" for none) */
	char *dir;			/* the tree, once made, else NULL */
	int tree_err;			/* making it failed: that -errno again */
	struct pmi_snap_keeper *keeper;	/* snapshot_keeper.c, with the tree */
};

extern const struct pmi_source_ops pmi_snap_source_ops;

/* The source of snapshot @s: every section read, no chunk decompressed. NULL with errno (EBADMSG: @s says why). */
struct pmi_snap_source *pmi_snap_source_new(struct pm_snapshot *s);
/* Remove the tree, end the keeper, free the readers and @data (a pmi_snap_source). NULL is fine. */
void pmi_snap_source_free(void *data);
/* The word reader of @ctx if it replays a snapshot, else NULL. */
struct pmi_snap_words *pmi_snap_source_words(const struct pm_ctx *ctx);
/*
 * snapshot_tree.c: the names (directories, empty files, the word files of
 * their size) made under @dirfd; a word file with no memfd is bound to its
 * tree file in @words. 0 or -errno.
 */
int pmi_snap_make_names(int dirfd, const struct pmi_snap_name *names, size_t n, const char *frame_start,
			struct pmi_snap_words *words);

#endif
