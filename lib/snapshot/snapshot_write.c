/* snapshot_write.c - the snapshot writer: sections, chunks, FILES, META, the index, atomic creation
 * (man/pagemap-snapshot.5). Word streams: snapshot_write_words.c; /proc text files:
 * snapshot_write_text.c; appending to a series: snapshot_write_series.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "snapshot_writer.h"

static int write_out(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

int pmi_snap_w_flush_out(struct pm_snapshot_writer *w)
{
	int r = write_out(w->fd, w->obuf, w->olen);

	w->olen = 0;
	return r ? (w->error = r) : 0;	/* bytes lost: every later call fails with it */
}

/*
 * Bytes go out through w->obuf, a system call per SNAP_OUT_BUF: a section
 * is a header then its payload, and a small process's snapshot wrote 62
 * times for 11 KB (30 headers of 24 bytes), 3-9 us each on ext4.
 */
int pmi_snap_w_write_all(struct pm_snapshot_writer *w, const void *buf, size_t n)
{
	int r = 0;

	if (w->olen + n > SNAP_OUT_BUF && (r = pmi_snap_w_flush_out(w)))
		return r;
	if (n >= SNAP_OUT_BUF) {
		r = write_out(w->fd, buf, n);
	} else {
		memcpy(w->obuf + w->olen, buf, n);
		w->olen += n;
	}
	if (!r)
		w->off += n;
	return r;
}

/* Append one section: header then @len bytes of payload. */
int pmi_snap_w_section(struct pm_snapshot_writer *w, uint32_t type, const void *payload,
		       size_t len)
{
	unsigned char h[SNAP_SEC_SIZE];
	uint64_t hash = pmi_snap_hash(payload, len);
	int r;

	if (w->error)
		return w->error;
	if (type != PM_SNAPSHOT_META && w->meta_len) {	/* the META lines added before it, in one section */
		size_t n = w->meta_len;
		w->meta_len = 0;
		if ((r = pmi_snap_w_section(w, PM_SNAPSHOT_META, w->meta, n)))
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
	if ((r = pmi_snap_w_write_all(w, h, sizeof(h))) ||
	    (r = pmi_snap_w_write_all(w, payload, len)))
		return w->error = r;
	w->nidx++;
	return 0;
}

static int snap_level(size_t rawlen)
{
	return rawlen < SNAP_SMALL_RAW ? SNAP_SMALL_LEVEL : SNAP_LEVEL;
}

/* A chunk: @fixed (16 bytes) then @rawlen bytes of @raw, compressed, written now. */
int pmi_snap_w_chunk_now(struct pm_snapshot_writer *w, uint32_t type, const unsigned char *fixed,
			 const unsigned char *raw, size_t rawlen)
{
	size_t z;
	int r;

	memcpy(w->pay, fixed, SNAP_CHUNK_FIXED);
	z = w->z->compress_cctx(w->cctx, w->pay + SNAP_CHUNK_FIXED, ZSTD_COMPRESSBOUND(SNAP_MAX_RAW), raw, rawlen,
				snap_level(rawlen));
	if (w->z->is_error(z))
		return -EIO;
	if (type == PM_SNAPSHOT_WORDS && w->series) {
		if (!w->shared_extents && (r = pmi_snap_series_reuse(w, fixed, z)))
			return r < 0 ? r : 0;
		w->series->words_bytes += SNAP_CHUNK_FIXED + z;
	}
	return pmi_snap_w_section(w, type, w->pay, SNAP_CHUNK_FIXED + z);
}

/* The BYTES chunks held back (pmi_snap_w_bytes), in the order they came. */
static int flush_held(struct pm_snapshot_writer *w)
{
	size_t pos = 0, n;
	int r = 0;

	while (pos < w->held_len && !r) {
		n = snap_get32(w->held + pos + SNAP_CHUNK_FIXED);
		/* w->raw may hold the chunk being written */
		r = pmi_snap_w_chunk_now(w, PM_SNAPSHOT_BYTES, w->held + pos,
					 w->held + pos + SNAP_CHUNK_FIXED + 4, n);
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
int pmi_snap_w_flush_files(struct pm_snapshot_writer *w)
{
	size_t z;
	int r;

	if (w->error)
		return w->error;
	if (w->files_count) {
		snap_put32(w->pay, w->files_count);
		snap_put32(w->pay + 4, w->files_first);
		z = w->z->compress_cctx(w->cctx, w->pay + 8, ZSTD_COMPRESSBOUND(SNAP_MAX_RAW), w->files, w->files_len,
					snap_level(w->files_len));
		w->files_count = 0;
		w->files_len = 0;
		if (w->z->is_error(z))
			return w->error = -EIO;
		if ((r = pmi_snap_w_section(w, PM_SNAPSHOT_FILES, w->pay, 8 + z)))
			return r;
	}
	return flush_held(w);
}

/* A chunk: @fixed (16 bytes) then @rawlen bytes of w->raw, compressed. */
static int put_chunk(struct pm_snapshot_writer *w, uint32_t type, const unsigned char *fixed, size_t rawlen)
{
	int r;

	if ((r = pmi_snap_w_flush_files(w)))	/* a file's FILES section comes before its chunks */
		return r;
	return pmi_snap_w_chunk_now(w, type, fixed, w->raw, rawlen);
}

struct snap_frames *pmi_snap_w_frames(struct pm_snapshot_writer *w)
{
	return &w->frames;
}

struct snap_sys *pmi_snap_w_sys(struct pm_snapshot_writer *w)
{
	return &w->sys;
}

struct snap_users *pmi_snap_w_users(struct pm_snapshot_writer *w)
{
	return &w->users;
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
	if (w->files_len + SNAP_FILES_FIXED + n > SNAP_FILES_RAW && (r = pmi_snap_w_flush_files(w)))
		return r;
	if (w->series && (r = pmi_snap_series_file(w, path, kind)))
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
			if ((r = pmi_snap_w_raw_room(w, n, 1)))
				return r;
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

/*
 * The chunk buffer, sized by what is written: at its limits (three columns
 * of a 262,144-word chunk, 13 MiB, huge-page backed) it cost a snapshot of
 * a small process more page clearing than all else it did. It grows to
 * twice what it held at least, so a large process's snapshot moves it a
 * few times only.
 */
int pmi_snap_w_raw_room(struct pm_snapshot_writer *w, size_t slice, unsigned nslice)
{
	size_t s = w->raw_slice;
	unsigned char *p;

	if (slice <= s && (size_t)nslice * s <= w->raw_cap)
		return 0;
	if (slice > s)
		s = slice > 2 * s ? slice : 2 * s;
	if (s < 4096)
		s = 4096;
	if (!(p = pmi_snap_regrow(w->raw, 0, 0, (size_t)nslice * s, 1)))	/* its bytes are not kept */
		return -ENOMEM;
	w->raw = p;
	w->raw_cap = (size_t)nslice * s;
	w->raw_slice = s;
	return 0;
}

/*
 * The compression context's memory: blocks of a MiB or more huge-page
 * backed (pmi_snap_big_alloc). zstd sizes its tables by the input: a small
 * process's chunks of a few KiB take a context of tens of KiB, malloc'd;
 * the first chunk near SNAP_MAX_RAW grows it to the 1.3 MB of level 3,
 * whose pages the first chunks touched one by one as ZSTD_createCCtx got
 * it from malloc (240 page faults of a THP process's snapshot, 14 us each
 * in a VM).
 */
static void *cctx_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return pmi_snap_big_alloc(n);
}

static void cctx_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

static ZSTD_CCtx *new_cctx(struct pm_snapshot_writer *w)
{
	ZSTD_customMem mem = { cctx_alloc, cctx_free, NULL };

	return w->z->create_cctx_advanced ? w->z->create_cctx_advanced(mem) : w->z->create_cctx();
}

struct pm_snapshot_writer *pmi_snap_w_create(const char *path, int fd, uint32_t version,
					      unsigned flags)
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
	w->files = malloc(SNAP_FILES_RAW);
	w->held = malloc(SNAP_HELD_RAW);
	w->obuf = malloc(SNAP_OUT_BUF);
	if (!w->cctx || !w->pay || !w->files || !w->held || !w->obuf)
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
	if ((r = pmi_snap_w_write_all(w, h, sizeof(h))))
		goto fail;
	return w;
fail:
	pm_snapshot_writer_free(w);
	errno = -r;
	return NULL;
}

struct pm_snapshot_writer *pm_snapshot_create(const char *path)
{
	return pmi_snap_w_create(path, -1, PM_SNAPSHOT_VERSION, 0);
}

struct pm_snapshot_writer *pm_snapshot_create_fd(int fd)
{
	return pmi_snap_w_create(NULL, fd, PM_SNAPSHOT_VERSION, 0);
}

int pm_snapshot_add_meta(struct pm_snapshot_writer *w, const char *key, const char *value)
{
	char line[4096];
	int n, r;

	if (!*key || strpbrk(key, "=\n") || strchr(value, '\n'))
		return -EINVAL;
	if ((r = pmi_snap_w_flush_files(w)))
		return r;
	n = snprintf(line, sizeof(line), "%s=%s\n", key, value);
	if (n < 0 || (size_t)n >= sizeof(line) || w->meta_total + (size_t)n > SNAP_MAX_META)
		return -E2BIG;	/* never a file its reader refuses */
	if (w->meta_len + (size_t)n > sizeof(w->meta)) {	/* a section per META line cost 40 bytes of header and index */
		size_t len = w->meta_len;
		w->meta_len = 0;
		if ((r = pmi_snap_w_section(w, PM_SNAPSHOT_META, w->meta, len)))
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

	/* files declared last (empty ones) come before the index */
	if ((r = pmi_snap_w_flush_files(w)) || (r = pmi_snap_users_put(w, &w->users)) || (r = put_windows(w)))
		return r;
	if (w->meta_len) {
		size_t mlen = w->meta_len;
		w->meta_len = 0;
		if ((r = pmi_snap_w_section(w, PM_SNAPSHOT_META, w->meta, mlen)))
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
	r = pmi_snap_w_section(w, PM_SNAPSHOT_INDEX, p, len);
	free(p);
	if (!r && w->series) {	/* a series' trailer points at its SERIES index, after the member's INDEX */
		at = w->off;
		r = pmi_snap_series_index(w, at);
	}
	snap_put64(t, at);
	memcpy(t + 8, SNAP_END_MAGIC, 8);
	return r ? r : pmi_snap_w_write_all(w, t, sizeof(t));
}

int pm_snapshot_commit(struct pm_snapshot_writer *w)
{
	int r;

	if (w->error)
		return w->error;
	if ((r = put_index(w)) || (r = pmi_snap_w_flush_out(w)))
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
	pmi_snap_series_free(w->series);
	pmi_snap_ws_close(w->frames.joint);
	for (int i = 0; i < 3; i++) {
		pmi_snap_ws_close(w->frames.ws[i]);
		if (w->frames.fd[i] >= 0)
			close(w->frames.fd[i]);
	}
	free(w->frames.seen);
	free(w->frames.first);
	free(w->frames.todo);
	free(w->frames.sorted);
	pmi_snap_sys_free(&w->sys);
	pmi_snap_users_free(&w->users);
	if (w->z)
		w->z->free_cctx(w->cctx);
	free(w->windows);
	free(w->idx);
	free(w->pay);
	free(w->raw);
	free(w->files);
	free(w->held);
	free(w->obuf);
	free(w);
}
