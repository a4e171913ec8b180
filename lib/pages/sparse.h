/* sparse.h - sorted sparse reads and writes of files of 64-bit words (frame files, the idle bitmap) (internal). */
#ifndef PMI_SPARSE_H
#define PMI_SPARSE_H

#include <stddef.h>
#include <stdint.h>

struct pm_ctx;

/*
 * How one caller batches: @span words of @buf at most per pread or pwrite,
 * gaps of up to @gap words read or written through rather than split.
 * @nio counts the system calls' batches issued (tests check that I/O batches).
 */
struct pmi_sparse {
	const struct pm_ctx *ctx;	/* whose files (a replayed snapshot's word files read from its chunks); NULL: any */
	uint64_t *buf;
	size_t span;
	uint64_t gap;
	uint64_t nio;
};

/*
 * pmi_sparse_read - out[k] = word idx[k] of @fd for ascending @idx (repeats
 * allowed); words past the file's end read as @fill. 0 or -errno.
 */
int pmi_sparse_read(struct pmi_sparse *s, int fd, const uint64_t *idx, size_t n, uint64_t *out, uint64_t fill);

/*
 * pmi_sparse_write - word idx[k] of @fd = val[k] for ascending unique @idx;
 * the words of a gap written through are 0 (for the idle bitmap: no change).
 * 0 or -errno.
 */
int pmi_sparse_write(struct pmi_sparse *s, int fd, const uint64_t *idx, const uint64_t *val, size_t n);

#endif
