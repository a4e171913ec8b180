/* snapshot_build.h - snapshots built by hand, section by section, for the unit tests: they write what no writer
 * would (hostile claims, damaged sections). Included by test_snapshot*.c, which link the library's objects. */
#ifndef PM_TEST_SNAPSHOT_BUILD_H
#define PM_TEST_SNAPSHOT_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "snapshot.h"
#include "snapshot_reader.h"

/* A snapshot built by hand, section by section, so tests can write what no writer would. */
struct build {
	unsigned char *p;
	size_t len, cap;
	uint32_t type[256];
	uint64_t off[256];
	size_t n;
	uint32_t version;	/* b_head's: the INDEX layout b_finish writes */
};

static inline void b_put(struct build *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static inline void b_head(struct build *b, uint32_t version)
{
	unsigned char h[SNAP_HEAD_SIZE];

	memcpy(h, SNAP_MAGIC, 8);
	snap_put32(h + 8, version);
	snap_put32(h + 12, (uint32_t)pmi_snap_hash(h, 12));
	b_put(b, h, sizeof(h));
	b->version = version;
}

/* A section whose header claims @length (normally @n, the payload's real size). */
static inline void b_sec_len(struct build *b, uint32_t type, const void *pay, size_t n, uint64_t length)
{
	unsigned char h[SNAP_SEC_SIZE];
	uint64_t hash = pmi_snap_hash(pay, n);

	b->type[b->n] = type;
	b->off[b->n++] = b->len;
	snap_put32(h, type);
	snap_put32(h + 4, pmi_snap_header_check(type, length, hash));
	snap_put64(h + 8, length);
	snap_put64(h + 16, hash);
	b_put(b, h, sizeof(h));
	b_put(b, pay, n);
}

static inline void b_sec(struct build *b, uint32_t type, const void *pay, size_t n)
{
	b_sec_len(b, type, pay, n, n);
}

static inline void b_file(struct build *b, uint32_t id, uint32_t kind, uint64_t size, const char *path)
{
	unsigned char p[SNAP_FILE_FIXED + 256];
	size_t n = strlen(path);

	snap_put32(p, id);
	snap_put32(p + 4, kind);
	snap_put64(p + 8, size);
	snap_put32(p + 16, (uint32_t)n);
	memcpy(p + SNAP_FILE_FIXED, path, n);
	b_sec(b, PM_SNAPSHOT_FILE, p, SNAP_FILE_FIXED + n);
}

/* A chunk: the 16 fixed bytes then @raw compressed. */
static inline void b_chunk(struct build *b, uint32_t type, uint32_t id, uint32_t mid, uint64_t off, const void *raw,
		    size_t n)
{
	size_t bound = ZSTD_compressBound(n);
	unsigned char *p = malloc(SNAP_CHUNK_FIXED + bound);
	size_t z = ZSTD_compress(p + SNAP_CHUNK_FIXED, bound, raw, n, 3);

	snap_put32(p, id);
	snap_put32(p + 4, mid);
	snap_put64(p + 8, off);
	b_sec(b, type, p, SNAP_CHUNK_FIXED + z);
	free(p);
}

/* The INDEX payload of the sections so far into @idx (10 + 20 per section): version 3's varints, else 16-byte entries. */
static inline size_t b_index(const struct build *b, unsigned char *idx)
{
	size_t n = b->n, i, len;

	if (b->version >= 3) {
		len = pmi_snap_put_varint(idx, n);
		for (i = 0; i < n; i++) {
			len += pmi_snap_put_varint(idx + len, b->type[i]);
			len += pmi_snap_put_varint(idx + len, (i + 1 < n ? b->off[i + 1] : b->len) - b->off[i] - SNAP_SEC_SIZE);
		}
		return len;
	}
	snap_put64(idx, n);
	for (i = 0; i < n; i++) {
		snap_put32(idx + 8 + i * 16, b->type[i]);
		snap_put32(idx + 12 + i * 16, 0);
		snap_put64(idx + 16 + i * 16, b->off[i]);
	}
	return 8 + n * 16;
}

static inline void b_finish(struct build *b)
{
	unsigned char t[SNAP_TRAILER_SIZE];
	unsigned char *idx = malloc(10 + b->n * 20);
	uint64_t at = b->len;

	b_sec(b, PM_SNAPSHOT_INDEX, idx, b_index(b, idx));
	free(idx);
	snap_put64(t, at);
	memcpy(t + 8, SNAP_END_MAGIC, 8);
	b_put(b, t, sizeof(t));
}

#endif
