/* snapshot_writer.h - the snapshot writer's state, shared by its files: snapshot_write.c (sections,
 * chunks, files, META, the index), snapshot_write_words.c (word streams), snapshot_write_text.c
 * (/proc text files) and snapshot_write_series.c (pm_snapshot_append). Inside libpagemap only. */
#ifndef PMI_SNAPSHOT_WRITER_H
#define PMI_SNAPSHOT_WRITER_H

#include "snapshot_reader.h"
#include "zstd_load.h"

#define SNAP_LEVEL	3		/* zstd level: sized by bench/run-snapshot.sh */
/*
 * Chunks under SNAP_SMALL_RAW bytes at level 1: zstd's tables for level 3 take
 * 527 KB even for a 29 KB smaps (hash and chain tables of 2^16 entries,
 * each cleared): a first call of 254 us and 114 page faults, against 112 us
 * and 27 faults (166 KB) at level 1, for 5 % more bytes (1529 against 1459).
 * A small process's snapshot is all such chunks (a sleep's: 297 page faults
 * down to 248, 2 % more bytes). Both decode alike.
 */
#define SNAP_SMALL_RAW	(128u << 10)
#define SNAP_SMALL_LEVEL 1
#define SNAP_TEXT_CHUNK	(256u << 10)
#define SNAP_FILES_RAW	(64u << 10)	/* FILE records gathered into one FILES section at most */
#define SNAP_OUT_BUF	(64u << 10)	/* bytes written out at once (pmi_snap_w_write_all) */
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
	uint64_t off;		/* bytes written, those still in obuf included */
	unsigned char *obuf;	/* bytes not yet written to fd: olen of SNAP_OUT_BUF */
	size_t olen;
	struct idx *idx;
	size_t nidx, cap;
	uint32_t nfiles;
	const struct pmi_zstd *z;
	ZSTD_CCtx *cctx;
	unsigned char *pay;	/* one section's payload */
	unsigned char *raw;	/* one chunk before compression: raw_cap bytes, grown as chunks need */
	size_t raw_cap;
	size_t raw_slice;	/* a WORDS chunk's columns are encoded this far apart in raw (pmi_snap_w_raw_room) */
	struct snap_frames frames;
	struct snap_sys sys;	/* the machine's files, gathered with the first process's text files */
	struct snap_users users;	/* the processes' owners, written as META users at commit */
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

/* Bytes a column of a WORDS chunk may take while encoded, at most (w->raw holds up to three). */
#define SNAP_RAW_SLICE	pmi_snap_encode_bound(SNAP_MAX_WORDS, SNAP_MAX_EXTENTS)


/* snapshot_write.c */
/* Write @n bytes of @buf at the writer's end (buffered). 0 or -errno. */
int pmi_snap_w_write_all(struct pm_snapshot_writer *w, const void *buf, size_t n);
/* What pmi_snap_w_write_all holds, written to the file: before anything else writes to w->fd. 0 or -errno. */
int pmi_snap_w_flush_out(struct pm_snapshot_writer *w);
/* Append one section: header then @len bytes of payload (the META lines added before it first). */
int pmi_snap_w_section(struct pm_snapshot_writer *w, uint32_t type, const void *payload,
		       size_t len);
/* The files declared since the last section as one FILES section, then the chunks held back. */
int pmi_snap_w_flush_files(struct pm_snapshot_writer *w);
/* w->raw holds @nslice slices of @slice bytes at least, w->raw_slice apart; its bytes are not kept. 0 or -ENOMEM. */
int pmi_snap_w_raw_room(struct pm_snapshot_writer *w, size_t slice, unsigned nslice);
/* A chunk: @fixed (16 bytes) then @rawlen bytes of @raw, compressed, written now. */
int pmi_snap_w_chunk_now(struct pm_snapshot_writer *w, uint32_t type, const unsigned char *fixed,
			 const unsigned char *raw, size_t rawlen);
/* A writer at @path (or on @fd when @path is NULL) of format @version, its header written. */
struct pm_snapshot_writer *pmi_snap_w_create(const char *path, int fd, uint32_t version,
					      unsigned flags);

/* snapshot_write_series.c */
void pmi_snap_series_free(struct snap_series *sr);
/* A WORDS chunk the last member stored alike, as a REUSE: 1 if written so, 0 if not, -errno. */
int pmi_snap_series_reuse(struct pm_snapshot_writer *w, const unsigned char *fixed, size_t z);
/* A series member's file w->nfiles noted (its path, a pagemap's PID). */
int pmi_snap_series_file(struct pm_snapshot_writer *w, const char *path, uint32_t kind);
/* The SERIES index of a series' members, the old ones and the new one ending at @end. */
int pmi_snap_series_index(struct pm_snapshot_writer *w, uint64_t end);

#endif
