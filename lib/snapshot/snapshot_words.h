/* snapshot_words.h - a replayed snapshot's word files read straight from their chunks (snapshot_words.c). */
#ifndef PMI_SNAPSHOT_WORDS_H
#define PMI_SNAPSHOT_WORDS_H

#include <sys/types.h>
#include "base.h"
#include "snapshot.h"

/* pmi_snap_words_pread's answer for a descriptor that is none of its files (the caller reads it as a file). */
#define PMI_SNAP_WORDS_NOT_MINE	((ssize_t)-0x10000)

struct pmi_snap_words;

/*
 * A reader of the snapshot open on @fd (duplicated: the snapshot handle may close), of format @version (its
 * limit on the words of a chunk). NULL with errno.
 */
struct pmi_snap_words *pmi_snap_words_new(int fd, uint32_t version);
void pmi_snap_words_free(struct pmi_snap_words *w);
/* Word file @id (ids ascending) of @size bytes at @path. 0 or -errno. */
int pmi_snap_words_add_file(struct pmi_snap_words *w, uint32_t id, uint64_t size, const char *path);
/*
 * Word file @id is the empty file open on @fd (a memfd, or the tree's sparse
 * file): reads of a descriptor of its inode read the file's words. 0 or -errno.
 */
int pmi_snap_words_bind(struct pmi_snap_words *w, uint32_t id, int fd);
/*
 * A WORDS section of file @id: its header at @offset, @length payload bytes (checked by pm_snapshot_open);
 * @ref_offset and @ref_length those of the section holding its extents (version 3), @ref_length 0 if none.
 */
int pmi_snap_words_add_chunk(struct pmi_snap_words *w, uint32_t id, uint64_t offset, uint64_t length,
			     uint64_t ref_offset, uint64_t ref_length);
/*
 * pread of @count words at word @index of the extracted file open on @fd:
 * words read (short at the file's end), -EBADMSG for a damaged chunk
 * (pmi_snap_words_error says which), -errno, or PMI_SNAP_WORDS_NOT_MINE.
 */
ssize_t pmi_snap_words_pread(struct pmi_snap_words *w, int fd, uint64_t *buf, size_t count, uint64_t index);
const char *pmi_snap_words_error(const struct pmi_snap_words *w);
/*
 * The first word index at or after @index that a chunk of the file open on
 * @fd holds (its length in words when none does): words before it read 0.
 * 0 with *@next, -EBADMSG for a damaged chunk, -errno, or
 * PMI_SNAP_WORDS_NOT_MINE.
 */
int pmi_snap_words_next_data(struct pmi_snap_words *w, int fd, uint64_t index, uint64_t *next);
/*
 * Are words [@index, *@upto) of the pagemaps open on @fda (of @a) and @fdb
 * (of @b) the same, by construction? Two members of one series
 * (pm_snapshot_append) whose chunks there are one stored chunk (a REUSE), or
 * a hole in both, are; no column is decoded to tell. But a walk confirms a
 * huge page (@block words, a PMD's) with the kpageflags word of its first
 * frame: where the readers' kpageflags files are not the same chunks, a
 * shared chunk is decoded once to see that it holds no huge page candidate.
 * Returns 1 (same), 0 (not known: compare the words), or -errno (-EBADMSG:
 * a damaged chunk); *@upto (at most @end) is where the answer may change.
 * NULL readers: 0, *@upto @end.
 */
int pmi_snap_words_same(struct pmi_snap_words *a, int fda, struct pmi_snap_words *b, int fdb, uint64_t index,
			uint64_t end, uint64_t block, uint64_t *upto);

#endif
