/* snapshot_write_words.c - the writer's word streams (pmi_snap_ws_*): pagemap, kpagecount,
 * kpageflags and kpagecgroup words gathered into WORDS chunks of one or several columns, zero runs
 * left out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot_writer.h"

#define SNAP_ZERO_RUN	16		/* a run of this many zero words is left out of a chunk (it reads 0) */

struct snap_ws {
	struct pm_snapshot_writer *w;
	uint32_t id[3];			/* the files, one column each; the first chunk of a flush holds the extents */
	unsigned ncol;
	struct snap_extent ext[SNAP_MAX_EXTENTS];
	uint64_t *col[3];		/* room words each, in one block */
	uint64_t *any;			/* ncol > 1: the OR of the columns of what is being added (zero runs) */
	size_t room, any_room;		/* words a column holds, and the OR buffer: grown as words come */
	size_t next, nwords;
	size_t cap;			/* words a chunk takes before it is written: lowered when one encodes past SNAP_MAX_RAW */
	size_t enc[3];			/* the encoded length of each column of the chunk being written */
	int error;
};

struct snap_ws *pmi_snap_ws_new_cols(struct pm_snapshot_writer *w, const uint32_t *id, unsigned ncol)
{
	struct snap_ws *ws = ncol >= 1 && ncol <= 3 ? calloc(1, sizeof(*ws)) : NULL;
	unsigned c;

	if (!ws)
		return NULL;
	ws->w = w;
	ws->ncol = ncol;
	ws->cap = SNAP_MAX_WORDS;
	for (c = 0; c < ncol; c++)
		ws->id[c] = id[c];
	return ws;
}

/*
 * The columns hold @need words at least (need <= SNAP_MAX_WORDS), their
 * pending words kept. Sized by what comes: at the limit a stream's block
 * took 2 MiB a column, cleared as a huge page on first touch, for the few
 * hundred words of a small process. It grows eightfold, 4096 words to
 * 32,768 to the limit: a large process's stream moves its words twice, and
 * faults in 72 small pages a column before its huge ones (blocks of a MiB
 * or more are huge-page backed as before).
 */
static int ws_room(struct snap_ws *ws, size_t need)
{
	size_t room = ws->room ? ws->room : 4096;
	uint64_t *b;
	unsigned c;

	if (need <= ws->room)
		return 0;
	while (room < need)
		room *= 8;
	room = room < SNAP_MAX_WORDS ? room : SNAP_MAX_WORDS;
	/* col[0] is the block of every column, ws->room words apart */
	if (!(b = pmi_snap_regrow(ws->col[0], ws->room * 8, ws->nwords * 8, room * 8, ws->ncol)))
		return ws->error = -ENOMEM;
	for (c = 0; c < ws->ncol; c++)
		ws->col[c] = b + c * room;
	ws->room = room;
	return 0;
}

struct snap_ws *pmi_snap_ws_new(struct pm_snapshot_writer *w, uint32_t id)
{
	return pmi_snap_ws_new_cols(w, &id, 1);
}

/*
 * Encode the first @k pending words, each column into its slice of w->raw
 * (the first with the extent list, cut at @k words), their lengths into
 * ws->enc. Returns the longest.
 */
static size_t ws_encode(struct snap_ws *ws, size_t k)
{
	unsigned char *out = ws->w->raw;
	size_t ne = 0, done = 0, longest = 0, slice = ws->w->raw_slice;
	uint32_t whole;
	unsigned c;

	while (done + ws->ext[ne].count < k)
		done += ws->ext[ne++].count;
	whole = ws->ext[ne].count;
	ws->ext[ne].count = (uint32_t)(k - done);	/* the extent @k ends in, cut there for the while */
	ws->enc[0] = pmi_snap_encode(ws->ext, ne + 1, ws->col[0], out, PM_SNAPSHOT_VERSION);
	ws->ext[ne].count = whole;
	for (c = 1; c < ws->ncol; c++)
		ws->enc[c] = pmi_snap_encode_columns(ws->col[c], k, out + c * slice, PM_SNAPSHOT_VERSION);
	for (c = 0; c < ws->ncol; c++)
		longest = ws->enc[c] > longest ? ws->enc[c] : longest;
	return longest;
}

/* Drop the first @k pending words (written): the rest move to the front. */
static void ws_shift(struct snap_ws *ws, size_t k)
{
	size_t ne = 0, done = 0;
	unsigned c;

	while (done + ws->ext[ne].count <= k)
		done += ws->ext[ne++].count;
	ws->ext[ne].start += k - done;
	ws->ext[ne].count -= (uint32_t)(k - done);
	memmove(ws->ext, ws->ext + ne, (ws->next - ne) * sizeof(*ws->ext));
	ws->next -= ne;
	for (c = 0; c < ws->ncol; c++)
		memmove(ws->col[c], ws->col[c] + k, (ws->nwords - k) * 8);
	ws->nwords -= k;
}

/*
 * The pending words as one chunk per file: the first holds the extent list
 * and its columns, the others their columns alone and, in the header's
 * third field, the offset of the first (format version 3): the files of a
 * multi-column stream hold words at the same indices, and an extent list
 * of scattered frames costs more than their constant kpagecount or
 * kpagecgroup columns. A chunk takes up to SNAP_MAX_WORDS words (version
 * 3; 65536 before): each chunk costs about 60 bytes of section header,
 * index entry and zstd frame, most of a THP process's kpagecount file. One
 * whose columns encode past SNAP_MAX_RAW (scattered frames, about 4 bytes
 * a word) is written in pieces that fit, and the stream's chunks are kept
 * that short until one encodes to less than half the limit.
 */
static int ws_flush(struct snap_ws *ws)
{
	unsigned char fixed[SNAP_CHUNK_FIXED];
	uint64_t ref;
	unsigned c;
	size_t k, len;

	/* room for the longest encoding of what is pending: the pieces written after are shorter */
	if (ws->nwords && !ws->error)
		ws->error = pmi_snap_w_raw_room(ws->w, pmi_snap_encode_bound(ws->nwords, ws->next), ws->ncol);
	while (ws->nwords && !ws->error) {
		k = ws->nwords;
		while ((len = ws_encode(ws, k)) > SNAP_MAX_RAW && k > 1) {	/* 9/10 of the share that fits */
			size_t fit = (size_t)((double)k * SNAP_MAX_RAW / (double)len * 0.9);
			k = fit ? fit : 1;
		}
		if (k < ws->nwords)
			ws->cap = k;
		else if (len < SNAP_MAX_RAW / 2 && ws->cap < SNAP_MAX_WORDS)
			ws->cap = ws->cap * 2 < SNAP_MAX_WORDS ? ws->cap * 2 : SNAP_MAX_WORDS;
		for (c = 0, ref = 0; c < ws->ncol && !ws->error; c++) {
			snap_put32(fixed, ws->id[c]);
			snap_put32(fixed + 4, (uint32_t)k);
			snap_put64(fixed + 8, ref);
			/* a file's FILES section comes before its chunks */
			if ((ws->error = pmi_snap_w_flush_files(ws->w)))
				break;
			ws->w->shared_extents = ws->ncol > 1;
			ws->error = pmi_snap_w_chunk_now(ws->w, PM_SNAPSHOT_WORDS, fixed,
							 ws->w->raw + c * ws->w->raw_slice,
							 ws->enc[c]);
			ws->w->shared_extents = false;
			if (!ws->error && c == 0)
				ref = ws->w->idx[ws->w->nidx - 1].offset;
		}
		if (k == ws->nwords) {
			ws->next = ws->nwords = 0;
			break;
		}
		ws_shift(ws, k);
	}
	return ws->error;
}

/* Append @n words of each column at @index (after what is pending), starting a new extent where they do not continue one. */
static int ws_put(struct snap_ws *ws, uint64_t index, const uint64_t *const *cols, size_t n)
{
	size_t done = 0;
	unsigned c;

	while (done < n) {
		struct snap_extent *e = ws->next ? &ws->ext[ws->next - 1] : NULL;
		bool slot = ws->w->series && ws->ncol == 1 && e && index / SNAP_SLOT_WORDS != ws->ext[0].start / SNAP_SLOT_WORDS;
		size_t k;
		if (ws->nwords >= ws->cap || (e && index < e->start + e->count) || slot ||
		    (ws->next == SNAP_MAX_EXTENTS && index != e->start + e->count)) {
			if (ws_flush(ws))
				return ws->error;
			if (slot)	/* a series: each slot's chunks alike whatever came before (pm_snapshot_append) */
				ws->cap = SNAP_MAX_WORDS;
			e = NULL;
		}
		if (!e || index != e->start + e->count) {
			e = &ws->ext[ws->next++];
			e->start = index;
			e->count = 0;
		}
		k = n - done < ws->cap - ws->nwords ? n - done : ws->cap - ws->nwords;
		if (ws->w->series && ws->ncol == 1 && k > SNAP_SLOT_WORDS - index % SNAP_SLOT_WORDS)
			k = SNAP_SLOT_WORDS - index % SNAP_SLOT_WORDS;
		if (ws_room(ws, ws->nwords + k))
			return ws->error;
		for (c = 0; c < ws->ncol; c++)
			memcpy(ws->col[c] + ws->nwords, cols[c] + done, k * 8);
		e->count += (uint32_t)k;
		ws->nwords += k;
		index += k;
		done += k;
	}
	return 0;
}

/*
 * From the non-zero word @i of @words (@n), the end of what goes into the
 * chunk along: up to where a run of SNAP_ZERO_RUN zero words starts, or
 * past the last non-zero word.
 */
static size_t ws_span(const uint64_t *words, size_t i, size_t n)
{
	size_t end = i, z;

	while (i < n) {
		for (; i < n && words[i]; i++)
			;
		end = i;
		for (z = i; z < n && !words[z]; z++)
			;
		if (z - i >= SNAP_ZERO_RUN || z == n)
			break;
		i = z;
	}
	return end;
}

/* Add @n words of each column at @index but for runs of zeros, @zero telling where (0 where every column is). */
static int ws_add_nonzero(struct snap_ws *ws, uint64_t index, const uint64_t *const *cols, const uint64_t *zero,
			  size_t n)
{
	const uint64_t *at[3];
	size_t i = 0, z, e;
	unsigned c;
	int r;

	while (i < n) {
		for (z = i; z < n && !zero[z]; z++)
			;
		if (z - i >= SNAP_ZERO_RUN || z == n) {	/* holes read 0: zero runs are left out */
			i = z;
			continue;
		}
		e = ws_span(zero, z, n);	/* a short zero run before a word goes along */
		for (c = 0; c < ws->ncol; c++)
			at[c] = cols[c] + i;
		if ((r = ws_put(ws, index + i, at, e - i)))
			return r;
		i = e;
	}
	return ws->error;
}

int pmi_snap_ws_add(struct snap_ws *ws, uint64_t index, const uint64_t *words, size_t n)
{
	if (ws->ncol != 1)
		return -EINVAL;
	return ws_add_nonzero(ws, index, &words, words, n);
}

int pmi_snap_ws_add_cols(struct snap_ws *ws, uint64_t index, const uint64_t *const *cols, size_t n)
{
	const uint64_t *at[3];
	size_t done, k, i;
	unsigned c;
	int r;

	if (ws->ncol == 1)
		return ws_add_nonzero(ws, index, cols, cols[0], n);
	if (ws->any_room < n && ws->any_room < SNAP_READ_WORDS) {	/* as long as the longest added, up to a read's */
		free(ws->any);
		ws->any_room = n < SNAP_READ_WORDS ? n : SNAP_READ_WORDS;
		if (!(ws->any = malloc(ws->any_room * 8))) {
			ws->any_room = 0;
			return ws->error = -ENOMEM;
		}
	}
	for (done = 0; done < n; done += k) {	/* in pieces of the OR buffer's length */
		k = n - done < ws->any_room ? n - done : ws->any_room;
		for (i = 0; i < k; i++)
			ws->any[i] = cols[0][done + i] | cols[1][done + i] | (ws->ncol > 2 ? cols[2][done + i] : 0);
		for (c = 0; c < ws->ncol; c++)
			at[c] = cols[c] + done;
		if ((r = ws_add_nonzero(ws, index + done, at, ws->any, k)))
			return r;
	}
	return 0;
}

int pmi_snap_ws_close(struct snap_ws *ws)
{
	int r;

	if (!ws)
		return 0;
	r = ws_flush(ws);
	free(ws->col[0]);	/* the block of every column */
	free(ws->any);
	free(ws);
	return r;
}
