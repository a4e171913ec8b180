/* snapshot_write.c - the snapshot writer: sections, chunks, word streams, atomic creation (man/pagemap-snapshot.5). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "snapshot_reader.h"
#include "zstd_load.h"

#define SNAP_LEVEL	3		/* zstd level: sized by bench/run-snapshot.sh */
#define SNAP_TEXT_CHUNK	(256u << 10)
#define SNAP_STREAM_HELD	(8u << 20)	/* a /proc text file up to this is read once and held */
#define SNAP_ZERO_RUN	16		/* a run of this many zero words is left out of a chunk (it reads 0) */
#define SNAP_FILES_RAW	(64u << 10)	/* FILE records gathered into one FILES section at most */
#define SNAP_HELD_RAW	(64u << 10)	/* bytes of small text chunks held back until their FILES section is written */
#define SNAP_HELD_MAX	(16u << 10)	/* a chunk up to this may be held back */
#define SNAP_META_HELD	8192u		/* META lines gathered into one section at most */

struct idx {
	uint32_t type;
	uint64_t offset;
};

/* A WORDS chunk of the last member of the series appended to, that a new chunk may refer to (REUSE). */
struct prev_chunk {
	uint64_t key;		/* xxh64 of its file's path, plus that of its zstd frame */
	uint64_t off, len;	/* its section: header offset, payload length */
	uint32_t nwords;
};

/* pm_snapshot_append: the series being extended and what the new member stores. */
struct snap_series {
	struct pm_snapshot *old;	/* the series as it was (NULL: a new one); its bytes are copied first */
	int lockfd;			/* flock()ed until the writer is freed: the series (-1: none yet) */
	struct prev_chunk *prev;	/* its last member's chunks with their own extents, sorted by key */
	size_t nprev;
	char **path;			/* the new member's files by id (word files only; else NULL) */
	size_t npath;
	uint64_t base;			/* where the new member starts */
	uint64_t words_bytes, reused, reused_bytes;
	int32_t pids[SNAP_MAX_MEMBER_PIDS];
	uint32_t npids;
	unsigned char *cmp;		/* a frame read back to compare */
};

/* A process's read window (pmi_snap_w_window). */
struct snap_window {
	pid_t pid;
	uint64_t start, end;
};

struct pm_snapshot_writer {
	struct pm_outfile *out;	/* the file being written (outfile.c: its rules for the path) */
	int fd;			/* out's */
	uint64_t off;
	struct idx *idx;
	size_t nidx, cap;
	uint32_t nfiles;
	const struct pmi_zstd *z;
	ZSTD_CCtx *cctx;
	void *cctx_mem;		/* the context's workspace when it is static (then no free_cctx) */
	unsigned char *pay;	/* one section's payload */
	unsigned char *raw;	/* one chunk before compression */
	struct snap_frames frames;
	unsigned char *files;	/* FILE records not written yet: one FILES section for them all */
	size_t files_len;
	uint32_t files_count, files_first;
	unsigned char *held;	/* BYTES chunks of files declared in the pending FILES: fixed, u32 length, bytes */
	size_t held_len;
	char meta[SNAP_META_HELD];	/* META lines not written yet: one section for those added in a row */
	size_t meta_len;
	size_t meta_total;	/* META bytes of the whole file: a reader refuses more than SNAP_MAX_META */
	struct snap_window *windows;	/* of the processes added, written as META at commit */
	size_t nwindows, windows_cap;
	int error;		/* the first write error: every later call fails with it */
	struct snap_series *series;	/* pm_snapshot_append; NULL for a plain snapshot */
	bool shared_extents;	/* a multi-column flush: its first chunk is referred to, never a REUSE itself */
};

static int put_series(struct pm_snapshot_writer *w, uint64_t end);

struct snap_ws {
	struct pm_snapshot_writer *w;
	uint32_t id[3];			/* the files, one column each; the first chunk of a flush holds the extents */
	unsigned ncol;
	struct snap_extent ext[SNAP_MAX_EXTENTS];
	uint64_t *col[3];		/* SNAP_MAX_WORDS words each */
	uint64_t *any;			/* ncol > 1: the OR of the columns of what is being added (zero runs) */
	size_t next, nwords;
	size_t cap;			/* words a chunk takes before it is written: lowered when one encodes past SNAP_MAX_RAW */
	size_t enc[3];			/* the encoded length of each column of the chunk being written */
	int error;
};

/* Bytes of w->raw a column of a WORDS chunk may take while encoded (w->raw holds three). */
#define SNAP_RAW_SLICE	pmi_snap_encode_bound(SNAP_MAX_WORDS, SNAP_MAX_EXTENTS)

static int write_all(struct pm_snapshot_writer *w, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(w->fd, (const char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	w->off += n;
	return 0;
}

/* Append one section: header then @len bytes of payload. */
static int put_section(struct pm_snapshot_writer *w, uint32_t type, const void *payload, size_t len)
{
	unsigned char h[SNAP_SEC_SIZE];
	uint64_t hash = pmi_snap_hash(payload, len);
	int r;

	if (w->error)
		return w->error;
	if (type != PM_SNAPSHOT_META && w->meta_len) {	/* the META lines added before it, in one section */
		size_t n = w->meta_len;
		w->meta_len = 0;
		if ((r = put_section(w, PM_SNAPSHOT_META, w->meta, n)))
			return r;
	}
	if (w->nidx == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 256;
		struct idx *ni = realloc(w->idx, nc * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		w->idx = ni;
		w->cap = nc;
	}
	w->idx[w->nidx].type = type;
	w->idx[w->nidx].offset = w->off;
	snap_put32(h, type);
	snap_put32(h + 4, pmi_snap_header_check(type, len, hash));
	snap_put64(h + 8, len);
	snap_put64(h + 16, hash);
	if ((r = write_all(w, h, sizeof(h))) || (r = write_all(w, payload, len)))
		return w->error = r;
	w->nidx++;
	return 0;
}

/*
 * The files declared since the last section as one FILES section (format
 * version 2): u32 count, u32 first id, a zstd frame of the records. A FILE
 * section each cost 40 bytes of header and index entry before its path, and
 * a snapshot declares hundreds of small or empty files (the NUMA topology's
 * memory blocks, per process text files), more than the pagemap of a
 * process with contiguous frames takes.
 */
static void series_free(struct snap_series *sr)
{
	if (!sr)
		return;
	pm_snapshot_close(sr->old);
	if (sr->lockfd >= 0)
		close(sr->lockfd);	/* the lock goes with it: the next append reads what this one wrote */
	for (size_t i = 0; i < sr->npath; i++)
		free(sr->path[i]);
	free(sr->path);
	free(sr->prev);
	free(sr->cmp);
	free(sr);
}

static int prev_cmp(const void *a, const void *b)
{
	const struct prev_chunk *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * A series member's WORDS chunk with its own extents (@fixed, then the
 * zstd frame of @z bytes in w->pay): when the last member stored a chunk
 * of the same file path, words and frame, byte for byte (the hash finds
 * the candidate, the bytes decide), a REUSE section naming it instead.
 * 1 if written so, 0 if not, -errno.
 */
static int put_reuse(struct pm_snapshot_writer *w, const unsigned char *fixed, size_t z)
{
	struct snap_series *sr = w->series;
	uint32_t id = snap_get32(fixed), nw = snap_get32(fixed + 4);
	struct prev_chunk key;
	unsigned char ref[SNAP_REUSE_LEN];
	size_t lo = 0, hi = sr->nprev;
	int r;

	if (!sr->nprev || snap_get64(fixed + 8) || id >= sr->npath || !sr->path[id])
		return 0;
	key.key = pmi_snap_hash(sr->path[id], strlen(sr->path[id])) + pmi_snap_hash(w->pay + SNAP_CHUNK_FIXED, z);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (prev_cmp(&sr->prev[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < sr->nprev && sr->prev[lo].key == key.key; lo++) {
		const struct prev_chunk *c = &sr->prev[lo];
		if (c->nwords != nw || c->len != SNAP_CHUNK_FIXED + z)
			continue;
		if (pmi_snap_read_at(sr->old, sr->cmp, z, c->off + SNAP_SEC_SIZE + SNAP_CHUNK_FIXED))
			continue;
		if (memcmp(sr->cmp, w->pay + SNAP_CHUNK_FIXED, z))
			continue;	/* the same hash, other bytes: stored again */
		snap_put32(ref, id);
		snap_put32(ref + 4, nw);
		snap_put64(ref + 8, c->off);
		sr->reused++;
		sr->reused_bytes += c->len;
		r = put_section(w, PM_SNAPSHOT_REUSE, ref, sizeof(ref));
		return r ? r : 1;
	}
	return 0;
}

/* A chunk: @fixed (16 bytes) then @rawlen bytes of @raw, compressed, written now. */
static int put_chunk_now(struct pm_snapshot_writer *w, uint32_t type, const unsigned char *fixed,
			 const unsigned char *raw, size_t rawlen)
{
	size_t z;
	int r;

	memcpy(w->pay, fixed, SNAP_CHUNK_FIXED);
	z = w->z->compress_cctx(w->cctx, w->pay + SNAP_CHUNK_FIXED, ZSTD_COMPRESSBOUND(SNAP_MAX_RAW), raw, rawlen,
				SNAP_LEVEL);
	if (w->z->is_error(z))
		return -EIO;
	if (type == PM_SNAPSHOT_WORDS && w->series) {
		if (!w->shared_extents && (r = put_reuse(w, fixed, z)))
			return r < 0 ? r : 0;
		w->series->words_bytes += SNAP_CHUNK_FIXED + z;
	}
	return put_section(w, type, w->pay, SNAP_CHUNK_FIXED + z);
}

/* The BYTES chunks held back (pmi_snap_w_bytes), in the order they came. */
static int flush_held(struct pm_snapshot_writer *w)
{
	size_t pos = 0, n;
	int r = 0;

	while (pos < w->held_len && !r) {
		n = snap_get32(w->held + pos + SNAP_CHUNK_FIXED);
		r = put_chunk_now(w, PM_SNAPSHOT_BYTES, w->held + pos, w->held + pos + SNAP_CHUNK_FIXED + 4, n);	/* w->raw
					may hold the chunk being written */
		pos += SNAP_CHUNK_FIXED + 4 + n;
	}
	w->held_len = 0;
	return r ? (w->error = r) : 0;
}

/*
 * The files declared since the last section as one FILES section (format
 * version 2): u32 count, u32 first id, a zstd frame of the records. A FILE
 * section each cost 40 bytes of header and index entry before its path, and
 * a snapshot declares hundreds of small or empty files (the NUMA topology's
 * memory blocks, per process text files), more than the pagemap of a
 * process with contiguous frames takes. Then the chunks of small text
 * files held back meanwhile: a chunk written at once would end the FILES
 * section before it, and a FILES section of one record costs about 70
 * bytes of header, index entry and zstd frame.
 */
static int flush_files(struct pm_snapshot_writer *w)
{
	size_t z;
	int r;

	if (w->error)
		return w->error;
	if (w->files_count) {
		snap_put32(w->pay, w->files_count);
		snap_put32(w->pay + 4, w->files_first);
		z = w->z->compress_cctx(w->cctx, w->pay + 8, ZSTD_COMPRESSBOUND(SNAP_MAX_RAW), w->files, w->files_len,
					SNAP_LEVEL);
		w->files_count = 0;
		w->files_len = 0;
		if (w->z->is_error(z))
			return w->error = -EIO;
		if ((r = put_section(w, PM_SNAPSHOT_FILES, w->pay, 8 + z)))
			return r;
	}
	return flush_held(w);
}

/* A chunk: @fixed (16 bytes) then @rawlen bytes of w->raw, compressed. */
static int put_chunk(struct pm_snapshot_writer *w, uint32_t type, const unsigned char *fixed, size_t rawlen)
{
	int r;

	if ((r = flush_files(w)))	/* a file's FILES section comes before its chunks */
		return r;
	return put_chunk_now(w, type, fixed, w->raw, rawlen);
}

struct snap_frames *pmi_snap_w_frames(struct pm_snapshot_writer *w)
{
	return &w->frames;
}

/* A series member's file w->nfiles: a word file's path kept (REUSE looks chunks up by it), a pagemap's PID noted. */
static int series_file(struct pm_snapshot_writer *w, const char *path, uint32_t kind)
{
	struct snap_series *sr = w->series;
	char **np;
	int pid = 0, n = 0;

	if (kind != PM_SNAPSHOT_WORDS)
		return 0;
	if (w->nfiles >= sr->npath) {
		size_t nc = w->nfiles + 64;
		if (!(np = realloc(sr->path, nc * sizeof(*np))))
			return -ENOMEM;
		memset(np + sr->npath, 0, (nc - sr->npath) * sizeof(*np));
		sr->path = np;
		sr->npath = nc;
	}
	if (!(sr->path[w->nfiles] = strdup(path)))
		return -ENOMEM;
	if (sscanf(path, "proc/%d/pagemap%n", &pid, &n) == 1 && !path[n] && pid > 0 &&
	    sr->npids < SNAP_MAX_MEMBER_PIDS)
		sr->pids[sr->npids++] = pid;
	else if (pid > 0 && !path[n])
		sr->npids++;	/* counted, not listed (npids past the list: see put_series) */
	return 0;
}

int pmi_snap_w_file(struct pm_snapshot_writer *w, const char *path, uint32_t kind, uint64_t size)
{
	size_t n = strlen(path);
	const char *why;
	unsigned char *p;
	int r;

	if (!n || n > SNAP_MAX_PATH || size > SNAP_MAX_FILE_SIZE || (kind == PM_SNAPSHOT_WORDS && size % 8))
		return -EINVAL;
	if (w->error)
		return w->error;
	/* what a reader would refuse (snapshot.h): a keyed snapshot's frames start at its lift */
	if ((r = snap_claim_check(path, kind, size, pmi_snap_w_frames(w)->perm[0].lift, &why)))
		return r;
	if (w->files_len + SNAP_FILES_FIXED + n > SNAP_FILES_RAW && (r = flush_files(w)))
		return r;
	if (w->series && (r = series_file(w, path, kind)))
		return r;
	if (!w->files_count)
		w->files_first = w->nfiles;
	p = w->files + w->files_len;
	snap_put32(p, kind);
	snap_put64(p + 4, size);
	snap_put32(p + 12, (uint32_t)n);
	memcpy(p + SNAP_FILES_FIXED, path, n);
	w->files_len += SNAP_FILES_FIXED + n;
	w->files_count++;
	return (int)w->nfiles++;
}

int pmi_snap_w_bytes(struct pm_snapshot_writer *w, uint32_t id, uint64_t off, const void *buf, size_t len)
{
	unsigned char fixed[SNAP_CHUNK_FIXED];
	int r;

	while (len) {
		size_t n = len < SNAP_TEXT_CHUNK ? len : SNAP_TEXT_CHUNK;
		snap_put32(fixed, id);
		snap_put32(fixed + 4, 0);
		snap_put64(fixed + 8, off);
		if (w->files_count && id >= w->files_first && n <= SNAP_HELD_MAX &&
		    w->held_len + SNAP_CHUNK_FIXED + 4 + n <= SNAP_HELD_RAW) {	/* after its FILES section */
			memcpy(w->held + w->held_len, fixed, SNAP_CHUNK_FIXED);
			snap_put32(w->held + w->held_len + SNAP_CHUNK_FIXED, (uint32_t)n);
			memcpy(w->held + w->held_len + SNAP_CHUNK_FIXED + 4, buf, n);
			w->held_len += SNAP_CHUNK_FIXED + 4 + n;
		} else {
			memcpy(w->raw, buf, n);
			if ((r = put_chunk(w, PM_SNAPSHOT_BYTES, fixed, n)))
				return r;
		}
		buf = (const char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Read @fd from @off into @buf of @cap bytes until it is full or the file ends: the bytes read, or -errno. */
static ssize_t read_upto(int fd, char *buf, size_t cap, uint64_t off)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = pread(fd, buf + got, cap - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * /proc files say length 0: their length is what reading gives, and the
 * FILE section (with the length) comes first. A file that fits
 * SNAP_STREAM_HELD is read once and held (smaps, numa_maps and
 * smaps_rollup walk the page tables: a second read costs a second walk);
 * a longer one is read twice, keeping memory at that size, the second
 * pass stopping at the first's length. This is the first read.
 */
int pmi_snap_text_read(struct snap_text *t, int fd)
{
	ssize_t n;

	memset(t, 0, sizeof(*t));
	while (!t->whole && t->held * 2 <= SNAP_STREAM_HELD) {	/* grown as the file turns out longer */
		size_t want = t->held ? t->held * 2 : SNAP_TEXT_CHUNK;
		char *nb = realloc(t->buf, want);
		if (!nb && !t->held)
			return -ENOMEM;
		if (!nb)
			break;	/* read twice instead */
		t->buf = nb;
		t->held = want;
		if ((n = read_upto(fd, t->buf + t->len, t->held - (size_t)t->len, t->len)) < 0)
			return (int)n;
		t->len += (uint64_t)n;
		t->whole = t->len < t->held;
	}
	return 0;
}

int pmi_snap_text_write(struct pm_snapshot_writer *w, const char *path, struct snap_text *t, int fd)
{
	static const size_t step = SNAP_TEXT_CHUNK;
	uint64_t off = t->len;
	ssize_t n = (ssize_t)step;
	int id, r = 0;

	while (!t->whole && n == (ssize_t)step) {	/* too long to hold: its length */
		if ((n = read_upto(fd, t->buf, step, off)) < 0)
			return (int)n;
		off += (uint64_t)n;
	}
	if ((id = pmi_snap_w_file(w, path, PM_SNAPSHOT_BYTES, off)) < 0)
		return id;
	if (t->whole)
		return pmi_snap_w_bytes(w, (uint32_t)id, 0, t->buf, (size_t)off);
	for (uint64_t pos = 0; pos < off && !r;) {
		n = pread(fd, t->buf, step < off - pos ? step : (size_t)(off - pos), (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* the file shrank between the reads (a /proc file changes): keep what is there */
			return n < 0 ? -errno : 0;
		r = pmi_snap_w_bytes(w, (uint32_t)id, pos, t->buf, (size_t)n);
		pos += (uint64_t)n;
	}
	return r;
}

int pmi_snap_w_stream(struct pm_snapshot_writer *w, const char *path, int fd)
{
	struct snap_text t;
	int r = pmi_snap_text_read(&t, fd);

	if (!r)
		r = pmi_snap_text_write(w, path, &t, fd);
	free(t.buf);
	return r;
}

struct snap_ws *pmi_snap_ws_new_cols(struct pm_snapshot_writer *w, const uint32_t *id, unsigned ncol)
{
	struct snap_ws *ws = ncol >= 1 && ncol <= 3 ? calloc(1, sizeof(*ws)) : NULL;
	unsigned c;

	if (!ws)
		return NULL;
	ws->w = w;
	ws->ncol = ncol;
	ws->cap = SNAP_MAX_WORDS;
	/* one huge-page backed block: the OR buffer alone, a malloc, cost 128 page faults */
	if (!(ws->col[0] = pmi_snap_big_alloc((ncol * SNAP_MAX_WORDS + (ncol > 1 ? SNAP_READ_WORDS : 0)) * 8))) {
		free(ws);
		errno = ENOMEM;
		return NULL;
	}
	for (c = 0; c < ncol; c++) {
		ws->id[c] = id[c];
		ws->col[c] = ws->col[0] + c * SNAP_MAX_WORDS;
	}
	ws->any = ncol > 1 ? ws->col[0] + ncol * SNAP_MAX_WORDS : NULL;
	return ws;
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
	size_t ne = 0, done = 0, longest = 0;
	uint32_t whole;
	unsigned c;

	while (done + ws->ext[ne].count < k)
		done += ws->ext[ne++].count;
	whole = ws->ext[ne].count;
	ws->ext[ne].count = (uint32_t)(k - done);	/* the extent @k ends in, cut there for the while */
	ws->enc[0] = pmi_snap_encode(ws->ext, ne + 1, ws->col[0], out, PM_SNAPSHOT_VERSION);
	ws->ext[ne].count = whole;
	for (c = 1; c < ws->ncol; c++)
		ws->enc[c] = pmi_snap_encode_columns(ws->col[c], k, out + c * SNAP_RAW_SLICE, PM_SNAPSHOT_VERSION);
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
			if ((ws->error = flush_files(ws->w)))	/* a file's FILES section comes before its chunks */
				break;
			ws->w->shared_extents = ws->ncol > 1;
			ws->error = put_chunk_now(ws->w, PM_SNAPSHOT_WORDS, fixed, ws->w->raw + c * SNAP_RAW_SLICE, ws->enc[c]);
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
	for (done = 0; done < n; done += k) {	/* in pieces of the OR buffer's length */
		k = n - done < SNAP_READ_WORDS ? n - done : SNAP_READ_WORDS;
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
	free(ws->col[0]);	/* the block of every column and the OR buffer */
	free(ws);
	return r;
}

/*
 * The compression context in one buffer of its own, huge-page backed (pmi_snap_big_alloc): zstd's
 * tables for level 3 take 1.3 MB, which ZSTD_createCCtx gets from malloc and the first chunks touch
 * page by page, about 240 page faults of the 800 of a THP process's snapshot (14 us each in a VM).
 * Else (a libzstd without the static calls) a context as zstd makes it.
 */
static ZSTD_CCtx *new_cctx(struct pm_snapshot_writer *w)
{
	size_t need = w->z->estimate_cctx_size ? w->z->estimate_cctx_size(SNAP_LEVEL) : 0;
	ZSTD_CCtx *c = NULL;

	if (need && (w->cctx_mem = pmi_snap_big_alloc(need)) && !(c = w->z->init_static_cctx(w->cctx_mem, need))) {
		free(w->cctx_mem);
		w->cctx_mem = NULL;
	}
	return c ? c : w->z->create_cctx();
}

static struct pm_snapshot_writer *create(const char *path, int fd, uint32_t version, unsigned flags)
{
	struct pm_snapshot_writer *w = calloc(1, sizeof(*w));
	unsigned char h[SNAP_HEAD_SIZE];
	int r = -ENOMEM;

	if (!w)
		goto fail;
	w->fd = -1;
	w->frames.fd[0] = w->frames.fd[1] = w->frames.fd[2] = -1;
	if (!(w->z = pmi_zstd(NULL, 0))) {
		r = -ELIBACC;	/* libzstd1 missing: pm_snapshot_open() names it */
		goto fail;
	}
	w->cctx = new_cctx(w);
	w->pay = malloc(SNAP_CHUNK_FIXED + ZSTD_COMPRESSBOUND(SNAP_MAX_RAW));
	w->raw = pmi_snap_big_alloc(3 * SNAP_RAW_SLICE);	/* a chunk's columns encoded before any is written */
	w->files = malloc(SNAP_FILES_RAW);
	w->held = malloc(SNAP_HELD_RAW);
	if (!w->cctx || !w->pay || !w->raw || !w->files || !w->held)
		goto fail;
	w->out = path ? pm_outfile_open(path, PM_OUTFILE_PRIVATE | flags) : pmi_outfile_on_fd(fd);	/* 0600 */
	if (!w->out) {
		r = -errno;
		goto fail;
	}
	w->fd = pm_outfile_fd(w->out);
	memcpy(h, SNAP_MAGIC, 8);
	snap_put32(h + 8, version);
	snap_put32(h + 12, (uint32_t)pmi_snap_hash(h, 12));
	if ((r = write_all(w, h, sizeof(h))))
		goto fail;
	return w;
fail:
	pm_snapshot_writer_free(w);
	errno = -r;
	return NULL;
}

struct pm_snapshot_writer *pm_snapshot_create(const char *path)
{
	return create(path, -1, PM_SNAPSHOT_VERSION, 0);
}

struct pm_snapshot_writer *pm_snapshot_create_fd(int fd)
{
	return create(NULL, fd, PM_SNAPSHOT_VERSION, 0);
}

/* The old series' bytes before its SERIES index (its members) into the new file, after the header. */
static int copy_members(struct pm_snapshot_writer *w, int from, uint64_t end)
{
	loff_t in = SNAP_HEAD_SIZE;
	char buf[65536];
	ssize_t n;

	while ((uint64_t)in < end) {
		size_t want = end - (uint64_t)in < (1u << 30) ? (size_t)(end - (uint64_t)in) : (1u << 30);
		n = copy_file_range(from, &in, w->fd, NULL, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* not supported here (or nothing copied): read and write */
		w->off += (uint64_t)n;
	}
	while ((uint64_t)in < end) {
		size_t want = end - (uint64_t)in < sizeof(buf) ? (size_t)(end - (uint64_t)in) : sizeof(buf);
		int r;

		n = pread(from, buf, want, in);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		if ((r = write_all(w, buf, (size_t)n)))
			return r;
		in += n;	/* a short read copies what it got, not @want */
	}
	return 0;
}

/*
 * The chunks of the old series' last member that a new chunk may name
 * (those with their own extents; a REUSE there names such a chunk too),
 * keyed by their file's path and the hash of their zstd frame.
 */
static int load_prev(struct snap_series *sr)
{
	struct pm_snapshot_section sec;
	uint64_t roff, rlen, off, len;
	unsigned char *buf = sr->cmp;
	size_t cap = 0;
	int r;

	pm_snapshot_rewind(sr->old);
	while (pm_snapshot_next(sr->old, &sec) == 0) {
		if (sec.type != PM_SNAPSHOT_WORDS || pmi_snap_chunk_ref(sr->old, sec.offset, &roff, &rlen))
			continue;
		off = sec.offset;
		len = sec.length;
		pmi_snap_chunk_data(sr->old, sec.offset, &off, &len);
		if (len < SNAP_CHUNK_FIXED || len > SNAP_CHUNK_FIXED + ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
			continue;	/* no chunk a reader would decode: never referred to */
		if (sr->nprev == cap) {
			struct prev_chunk *np = realloc(sr->prev, (cap = cap ? cap * 2 : 256) * sizeof(*np));
			if (!np)
				return -ENOMEM;
			sr->prev = np;
		}
		if ((r = pmi_snap_read_at(sr->old, buf, (size_t)len, off + SNAP_SEC_SIZE)))
			return r;
		sr->prev[sr->nprev++] = (struct prev_chunk){
			.key = pmi_snap_hash(sec.path, strlen(sec.path)) +
			       pmi_snap_hash(buf + SNAP_CHUNK_FIXED, (size_t)len - SNAP_CHUNK_FIXED),
			.off = off, .len = len, .nwords = snap_get32(buf + 4) };
	}
	qsort(sr->prev, sr->nprev, sizeof(*sr->prev), prev_cmp);
	return 0;
}

/* How long an append waits for the lock of a series that others could have opened (and keep locked). */
#define SERIES_LOCK_WAIT_MS 10000

/*
 * flock() the series in @fd. A file of ours or root's that no one else may
 * open (a series is written 0600) is locked by appends only: wait for it.
 * Anyone who can open a file can lock it and keep it locked: for any other
 * file (one planted in a sticky directory) try for SERIES_LOCK_WAIT_MS, then
 * fail with EWOULDBLOCK, never wait forever.
 */
static int lock_file(int fd, const struct stat *st)
{
	bool ours = (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & 077);
	struct timespec ms = { 0, 10 * 1000 * 1000 };

	for (int waited = 0;; waited += 10) {
		if (flock(fd, ours ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= SERIES_LOCK_WAIT_MS)
			return -errno;
		nanosleep(&ms, NULL);
	}
}

/*
 * Lock the series at @path from its read to the rename that replaces it, so
 * that appends wait for each other instead of each copying the same members
 * and the last rename dropping the others'. flock() on the series file (see
 * lock_file()), taken again when the name no longer holds that file once the
 * lock is granted (the append that held it renamed its new series in). While
 * there is no series yet nothing is locked (a lock on the directory is one
 * anyone can hold forever): the first member is published only where still
 * nothing is, and the append that loses that race gets -EEXIST from
 * pm_snapshot_commit(), to append again to the series now there. @fd: the
 * series opened (-1 when none is there); @lockfd: the fd locked, to close
 * when done (-1: none). 0 or -errno (-ELOOP: a symlink is there;
 * -EWOULDBLOCK: someone else's file stayed locked).
 */
static int lock_series(const char *path, int *fd, int *lockfd)
{
	char base[NAME_MAX + 1];
	struct stat st, now;
	int dirfd = pmi_open_parent(path, base), r;

	if (dirfd < 0)
		return dirfd;
	*lockfd = -1;
	for (;;) {
		*fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (*fd < 0) {
			r = errno == ENOENT ? 0 : -errno;
			break;
		}
		r = fstat(*fd, &st) < 0 ? -errno : lock_file(*fd, &st);
		if (r) {
			close(*fd);
			*fd = -1;
			break;
		}
		if (fstatat(dirfd, base, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
		    now.st_ino == st.st_ino) {
			*lockfd = *fd;
			close(dirfd);
			return 0;
		}
		close(*fd);	/* replaced while we waited: lock the new one */
	}
	close(dirfd);
	return r;
}

/* The series in @fd as it is (NULL when @fd is -1: none yet): checked whole. @fd stays the caller's. */
static struct pm_snapshot *open_old(int fd, char *err, size_t errsize, int *r)
{
	struct pm_snapshot *s;
	unsigned i;

	*r = 0;
	if (fd < 0)
		return NULL;
	for (i = 0, s = NULL; !*r; i++) {	/* every member: a damaged one is not carried into the new file */
		pm_snapshot_close(s);
		if (!(s = pm_snapshot_open_member_fd(fd, (int)i + 1, err, errsize)))
			*r = -errno;
		else if (s->version < SNAP_SERIES_VERSION)
			*r = -EINVAL;
		else if (i + 1 == s->nmembers)
			break;
	}
	if (*r == -EINVAL && err && errsize)
		snprintf(err, errsize, "a plain snapshot (format version %u), not a series", s->version);
	if (*r) {
		pm_snapshot_close(s);
		return NULL;
	}
	return s;
}

struct pm_snapshot_writer *pm_snapshot_append(const char *path, char *err, size_t errsize)
{
	struct pm_snapshot_writer *w = NULL;
	struct snap_series *sr = calloc(1, sizeof(*sr));
	int r = -ENOMEM, fd;

	if (sr)
		sr->lockfd = -1;
	if (!sr || !(sr->cmp = malloc(SNAP_CHUNK_FIXED + ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))))
		goto fail;
	if ((r = lock_series(path, &fd, &sr->lockfd))) {
		if (err && errsize)
			snprintf(err, errsize, "%s", r == -ELOOP ? "a symlink, not a series" :
				 r == -EWOULDBLOCK ? "someone else's file there stayed locked" : strerror(-r));
		goto out;
	}
	sr->old = open_old(fd, err, errsize, &r);
	if (r)
		goto out;	/* @err says why */
	if (sr->old && sr->old->nmembers >= SNAP_MAX_MEMBERS) {
		r = -EOVERFLOW;
		goto fail;
	}
	/*
	 * A series is a regular file. Where none was locked, one may have appeared
	 * since: create only where still nothing is, or its members would be lost.
	 */
	if (!(w = create(path, -1, SNAP_SERIES_VERSION,
			 PM_OUTFILE_ENTRY | (sr->old ? 0 : PM_OUTFILE_CREATE)))) {
		r = -errno;
		goto fail;
	}
	w->series = sr;
	sr = NULL;	/* the writer's now */
	if (w->series->old &&
	    ((r = copy_members(w, w->series->old->fd, w->series->old->limit)) ||
	     (r = load_prev(w->series))))
		goto fail;
	w->series->base = w->off;
	return w;
fail:
	if (err && errsize)
		snprintf(err, errsize, "%s", r == -EOVERFLOW ? "the series has 65536 members already" : strerror(-r));
out:
	series_free(sr);
	pm_snapshot_writer_free(w);
	errno = -r;
	return NULL;
}

int pm_snapshot_add_meta(struct pm_snapshot_writer *w, const char *key, const char *value)
{
	char line[4096];
	int n, r;

	if (!*key || strpbrk(key, "=\n") || strchr(value, '\n'))
		return -EINVAL;
	if ((r = flush_files(w)))
		return r;
	n = snprintf(line, sizeof(line), "%s=%s\n", key, value);
	if (n < 0 || (size_t)n >= sizeof(line) || w->meta_total + (size_t)n > SNAP_MAX_META)
		return -E2BIG;	/* never a file its reader refuses */
	if (w->meta_len + (size_t)n > sizeof(w->meta)) {	/* a section per META line cost 40 bytes of header and index */
		size_t len = w->meta_len;
		w->meta_len = 0;
		if ((r = put_section(w, PM_SNAPSHOT_META, w->meta, len)))
			return r;
	}
	memcpy(w->meta + w->meta_len, line, (size_t)n);
	w->meta_len += (size_t)n;
	w->meta_total += (size_t)n;
	return 0;
}

int pmi_snap_w_window(struct pm_snapshot_writer *w, pid_t pid, uint64_t start, uint64_t end)
{
	if (w->nwindows == w->windows_cap) {
		size_t cap = w->windows_cap ? 2 * w->windows_cap : 64;
		struct snap_window *nw = realloc(w->windows, cap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		w->windows = nw;
		w->windows_cap = cap;
	}
	w->windows[w->nwindows++] = (struct snap_window){ pid, start, end };
	return 0;
}

/*
 * The processes' windows as META lines window.PID=START,END, after
 * everything else: as many as the META limit leaves room for (about 1100
 * processes with nothing else in META), the count of those left out last
 * (windows_omitted).
 */
static int put_windows(struct pm_snapshot_writer *w)
{
	char key[32], val[48];
	unsigned long omitted = 0;
	size_t i;
	int r = 0;

	for (i = 0; i < w->nwindows && !r; i++) {
		int kn = snprintf(key, sizeof(key), "window.%d", (int)w->windows[i].pid);
		int vn = snprintf(val, sizeof(val), "%llu,%llu", (unsigned long long)w->windows[i].start,
				  (unsigned long long)w->windows[i].end);
		/* "windows_omitted=N\n" must still fit after this line */
		if (omitted || w->meta_total + (size_t)kn + (size_t)vn + 2 + 40 > SNAP_MAX_META)
			omitted++;
		else
			r = pm_snapshot_add_meta(w, key, val);
	}
	snprintf(val, sizeof(val), "%lu", omitted);
	return r ? r : omitted ? pm_snapshot_add_meta(w, "windows_omitted", val) : 0;
}

static int put_index(struct pm_snapshot_writer *w)
{
	size_t n, i, len;
	unsigned char *p, t[SNAP_TRAILER_SIZE];
	uint64_t at;
	int r;

	if ((r = flush_files(w)) || (r = put_windows(w)))	/* files declared last (empty ones) come before the index */
		return r;
	if (w->meta_len) {
		size_t mlen = w->meta_len;
		w->meta_len = 0;
		if ((r = put_section(w, PM_SNAPSHOT_META, w->meta, mlen)))
			return r;
	}
	/*
	 * Version 3: varint count, then per section varint type and varint
	 * payload length (its offset follows from those before it). The 16
	 * bytes an entry took before were 7 % of a THP process's snapshot.
	 */
	n = w->nidx;
	at = w->off;
	if (!(p = malloc(10 + n * 20)))
		return -ENOMEM;
	len = pmi_snap_put_varint(p, n);
	for (i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? w->idx[i + 1].offset : at;
		len += pmi_snap_put_varint(p + len, w->idx[i].type);
		len += pmi_snap_put_varint(p + len, end - w->idx[i].offset - SNAP_SEC_SIZE);
	}
	r = put_section(w, PM_SNAPSHOT_INDEX, p, len);
	free(p);
	if (!r && w->series) {	/* a series' trailer points at its SERIES index, after the member's INDEX */
		at = w->off;
		r = put_series(w, at);
	}
	snap_put64(t, at);
	memcpy(t + 8, SNAP_END_MAGIC, 8);
	return r ? r : write_all(w, t, sizeof(t));
}

/* The SERIES index of a series' members, the old ones and the new one ending at @end. */
static int put_series(struct pm_snapshot_writer *w, uint64_t end)
{
	struct snap_series *sr = w->series;
	size_t n = sr->old ? sr->old->nmembers : 0, i, k, len = 0;
	struct pm_snapshot_member m;
	unsigned char *p = malloc((n + 1) * 80 + (n + 1) * SNAP_MAX_MEMBER_PIDS * 5);
	int r;

	if (!p)
		return -ENOMEM;
	len = pmi_snap_put_varint(p, n + 1);
	for (i = 0; i <= n; i++) {
		if (i < n)
			pm_snapshot_member_info(sr->old, (unsigned)i + 1, &m);
		else
			m = (struct pm_snapshot_member){ .offset = sr->base, .length = end - sr->base,
				.time = (int64_t)time(NULL), .words_bytes = sr->words_bytes, .reused = sr->reused,
				.reused_bytes = sr->reused_bytes, .npids = sr->npids,
				.listed = sr->npids < SNAP_MAX_MEMBER_PIDS ? sr->npids : SNAP_MAX_MEMBER_PIDS,
				.pids = sr->pids };
		len += pmi_snap_put_varint(p + len, m.offset);
		len += pmi_snap_put_varint(p + len, m.length);
		len += pmi_snap_put_varint(p + len, m.time > 0 ? (uint64_t)m.time : 0);
		len += pmi_snap_put_varint(p + len, m.words_bytes);
		len += pmi_snap_put_varint(p + len, m.reused);
		len += pmi_snap_put_varint(p + len, m.reused_bytes);
		len += pmi_snap_put_varint(p + len, m.npids);
		len += pmi_snap_put_varint(p + len, m.listed);
		for (k = 0; k < m.listed; k++)
			len += pmi_snap_put_varint(p + len, (uint64_t)m.pids[k]);
	}
	r = len > SNAP_MAX_SERIES ? -EOVERFLOW : put_section(w, PM_SNAPSHOT_SERIES, p, len);	/* readers refuse more */
	free(p);
	return r;
}

int pm_snapshot_commit(struct pm_snapshot_writer *w)
{
	int r;

	if (w->error)
		return w->error;
	if ((r = put_index(w)))
		return r;
	if ((r = pm_outfile_commit(w->out)))
		return r;
	return 0;
}

void pm_snapshot_writer_free(struct pm_snapshot_writer *w)
{
	if (!w)
		return;
	pm_outfile_free(w->out);	/* first: the series' lock is held until the new one is in place */
	series_free(w->series);
	pmi_snap_ws_close(w->frames.joint);
	for (int i = 0; i < 3; i++) {
		pmi_snap_ws_close(w->frames.ws[i]);
		if (w->frames.fd[i] >= 0)
			close(w->frames.fd[i]);
	}
	free(w->frames.seen);
	free(w->frames.todo);
	free(w->frames.sorted);
	if (w->z && !w->cctx_mem)
		w->z->free_cctx(w->cctx);
	free(w->cctx_mem);
	free(w->windows);
	free(w->idx);
	free(w->pay);
	free(w->raw);
	free(w->files);
	free(w->held);
	free(w);
}
