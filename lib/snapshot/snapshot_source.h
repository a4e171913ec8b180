/* snapshot_source.h - a replayed snapshot as its context's source of files (lib/base/source.h). */
#ifndef PMI_SNAPSHOT_SOURCE_H
#define PMI_SNAPSHOT_SOURCE_H

#include "source.h"

/*
 * What a replay context holds (pm_ctx_new_snapshot): a tree of names under
 * $TMPDIR whose word and text files are empty, the readers that serve those
 * files from the snapshot's chunks, and the keeper that removes the tree if
 * we die. A member is NULL until it is made.
 */
struct pmi_snap_source {
	char *dir;			/* the extracted tree */
	struct pmi_snap_words *words;	/* its word files (snapshot_words.c) */
	struct pmi_snap_text *text;	/* its text files (snapshot_text.c) */
	struct pmi_snap_keeper *keeper;	/* snapshot_keeper.c */
};

extern const struct pmi_source_ops pmi_snap_source_ops;

/* Remove the tree, end the keeper, free the readers and @data (a pmi_snap_source). NULL is fine. */
void pmi_snap_source_free(void *data);
/* The word reader of @ctx if it replays a snapshot, else NULL. */
struct pmi_snap_words *pmi_snap_source_words(const struct pm_ctx *ctx);

#endif
