/* snapshot_text.h - a replayed snapshot's text files read from their BYTES chunks when opened (snapshot_text.c). */
#ifndef PMI_SNAPSHOT_TEXT_H
#define PMI_SNAPSHOT_TEXT_H

#include <stdint.h>

/* pmi_snap_text_open's answer for a path that is none of its files (the caller opens it as a file). */
#define PMI_SNAP_TEXT_NOT_MINE	(-0x10000)

struct pmi_snap_text;

/* A reader of the snapshot open on @fd (duplicated: the snapshot handle may close). NULL with errno. */
struct pmi_snap_text *pmi_snap_text_new(int fd);
void pmi_snap_text_free(struct pmi_snap_text *t);
/* Text file @id (ids ascending) at @path in the tree, of @size bytes as declared. 0 or -errno. */
int pmi_snap_text_add_file(struct pmi_snap_text *t, uint32_t id, const char *path, uint64_t size);
/* A BYTES section of file @id: its header at @offset, @length payload bytes (checked by pm_snapshot_open). */
int pmi_snap_text_add_chunk(struct pmi_snap_text *t, uint32_t id, uint64_t offset, uint64_t length);
/* Every file added: ready for pmi_snap_text_open. 0 or -ENOMEM. */
int pmi_snap_text_seal(struct pmi_snap_text *t);
/*
 * Open @path (relative to the tree's root) for reading: a descriptor of an
 * anonymous file (memfd) holding the bytes its chunks hold, at offset 0; no
 * longer than its declared size, and no longer than its chunks reach (a claim
 * past them reads as what is there). -EBADMSG for a damaged chunk
 * (pmi_snap_text_error says which), -errno, or PMI_SNAP_TEXT_NOT_MINE.
 */
int pmi_snap_text_open(struct pmi_snap_text *t, const char *path);
const char *pmi_snap_text_error(struct pmi_snap_text *t);

#endif
