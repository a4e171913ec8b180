/*
 * zstd_load.h - the few libzstd calls snapshots make, through a table that the shared library fills
 * with dlopen() on first use (zstd_load.c).
 */
#ifndef PAGEMAP_ZSTD_LOAD_H
#define PAGEMAP_ZSTD_LOAD_H

#include <stddef.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_customMem, ZSTD_createCCtx_advanced */
#include <zstd.h>

struct pmi_zstd {
	size_t (*decompress)(void *dst, size_t cap, const void *src, size_t len);
	unsigned long long (*frame_content_size)(const void *src, size_t len);
	unsigned (*is_error)(size_t code);
	const char *(*error_name)(size_t code);
	ZSTD_CCtx *(*create_cctx)(void);
	size_t (*free_cctx)(ZSTD_CCtx *cctx);
	size_t (*compress_cctx)(ZSTD_CCtx *cctx, void *dst, size_t cap, const void *src, size_t len, int level);
	/* a context whose memory comes from the caller's allocator (exported since 1.0, static API): NULL
	   when the library lacks it */
	ZSTD_CCtx *(*create_cctx_advanced)(ZSTD_customMem mem);
};

/*
 * pmi_zstd - libzstd's calls, loaded on the first call of the process (thread-safe), or NULL with the reason
 * in @why (@size bytes; may be 0) when the library cannot be loaded. Later calls give the same answer.
 */
const struct pmi_zstd *pmi_zstd(char *why, size_t size);

#endif
