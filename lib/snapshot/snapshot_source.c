/*
 * snapshot_source.c - a replayed snapshot as its context's source of files
 * (lib/base/source.h): the base opens and reads the context's files through
 * these ops, which serve the word and text files from the snapshot's chunks
 * and leave every other file of the tree to the base.
 */
#include <errno.h>
#include <stdlib.h>
#include "snapshot_keeper.h"
#include "snapshot_source.h"
#include "snapshot_text.h"
#include "snapshot_words.h"

static int source_open(const struct pm_ctx *ctx, const char *rel)
{
	struct pmi_snap_source *src = ctx->source_data;
	int fd = pmi_snap_text_open(src->text, rel);

	if (fd == PMI_SNAP_TEXT_NOT_MINE)
		return PMI_SOURCE_NOT_MINE;
	if (fd == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_text_error(src->text));
	return fd;
}

static ssize_t source_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count,
				  uint64_t index)
{
	struct pmi_snap_source *src = ctx->source_data;
	ssize_t n = pmi_snap_words_pread(src->words, fd, buf, count, index);

	if (n == PMI_SNAP_WORDS_NOT_MINE)
		return PMI_SOURCE_NOT_MINE;
	if (n == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_words_error(src->words));
	return n;
}

static int source_next_data(const struct pm_ctx *ctx, int fd, uint64_t index, uint64_t *next)
{
	struct pmi_snap_source *src = ctx->source_data;
	int r = pmi_snap_words_next_data(src->words, fd, index, next);

	if (r == (int)PMI_SNAP_WORDS_NOT_MINE)
		return PMI_SOURCE_NOT_MINE;
	if (r == -EBADMSG)
		pmi_tree_error(ctx, "%s", pmi_snap_words_error(src->words));
	return r;
}

void pmi_snap_source_free(void *data)
{
	struct pmi_snap_source *src = data;

	if (!src)
		return;
	pmi_snap_remove_tree(src->dir);
	pmi_snap_keeper_end(src->keeper);	/* the tree is gone: the keeper leaves it alone */
	free(src->dir);
	pmi_snap_words_free(src->words);
	pmi_snap_text_free(src->text);
	free(src);
}

const struct pmi_source_ops pmi_snap_source_ops = {
	.open = source_open,
	.pread_words = source_pread_words,
	.next_data = source_next_data,
	.free = pmi_snap_source_free,
};

struct pmi_snap_words *pmi_snap_source_words(const struct pm_ctx *ctx)
{
	if (ctx->source != &pmi_snap_source_ops)
		return NULL;
	return ((const struct pmi_snap_source *)ctx->source_data)->words;
}
