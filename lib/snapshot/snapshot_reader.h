/* snapshot_reader.h - the open snapshot's state, shared by snapshot_open*.c (checking a file: its
 * section table, declarations, chunks, index) and snapshot_read.c (iterating sections, decoding
 * chunks). Inside libpagemap only. */
#ifndef PMI_SNAPSHOT_READER_H
#define PMI_SNAPSHOT_READER_H

#include "base.h"
#include "snapshot.h"

#define SNAP_ERR_MAX 256

/* Fuzzers cannot forge checksums: their builds read past a mismatch (every other check stays). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define SNAP_VERIFY 0
#else
#define SNAP_VERIFY 1
#endif


struct snap_sec {
	uint32_t type, file;	/* FILES: its first file */
	uint32_t nfiles;	/* FILES: how many */
	uint32_t nwords;	/* WORDS: the words its header gives */
	uint64_t offset, length;
	size_t ref;		/* WORDS (version 3) sharing another chunk's extents: that section's index + 1; else 0 */
	uint64_t data_off, data_len;	/* where its payload is: its own header and length, or (REUSE) the
					   WORDS section of an earlier member it names */
};

struct snap_member {
	uint64_t offset, length, time, words_bytes, reused, reused_bytes;
	uint32_t npids, pid_at;		/* its PIDs: npids listed from pids[pid_at] (at most SNAP_MAX_MEMBER_PIDS) */
	uint32_t pids_total;		/* PIDs it holds, listed or not */
};

struct snap_file {
	char *path;
	uint32_t kind;
	uint64_t size;
	size_t sec;		/* the section declaring it */
};

struct pm_snapshot {
	uint32_t version;		/* the file's format version */
	int fd;
	bool own_fd;
	uint64_t fsize;
	struct snap_sec *secs;
	size_t nsecs, cap, pos;
	uint32_t sub;			/* pm_snapshot_next inside a FILES section: its next file */
	struct snap_file *files;
	size_t nfiles, fcap;
	char *meta;			/* the META payloads, NUL-terminated lines */
	size_t meta_len;
	unsigned char *zbuf, *raw;	/* one chunk's payload and its decompressed bytes */
	uint64_t *words;
	struct snap_extent *ext;
	size_t zcap, rawcap, wcap, xcap;	/* their sizes: grown to what the chunks read need (chunk_buffers) */
	struct snap_member *members;	/* a series (version 4): its index; NULL for a plain snapshot */
	size_t nmembers, member;	/* how many, and which one is open (0-based) */
	int32_t *pids;			/* the members' listed PIDs */
	uint64_t base;			/* where the open member's sections start (16 in a plain snapshot) */
	uint64_t limit;			/* where they end: its INDEX's end */
	char err[SNAP_ERR_MAX];
};

/* A section type's name for messages ("WORDS"). */
const char *pmi_snap_type_name(uint32_t t);
/* Set the snapshot's error line; returns @e. */
int pmi_snap_fail(struct pm_snapshot *s, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "section 7 (WORDS of proc/42/pagemap, at byte 1171)" for error messages; returns @buf. */
const char *pmi_snap_sec_name(const struct pm_snapshot *s, size_t i, char *buf, size_t size);
/* Read @n bytes at @off whole: 0, -EBADMSG past the end, or -errno. */
int pmi_snap_read_at(struct pm_snapshot *s, void *buf, size_t n, uint64_t off);
/*
 * The WORDS section at @offset shares the extents of another (version 3):
 * true with that section's header offset and payload length.
 */
bool pmi_snap_chunk_ref(const struct pm_snapshot *s, uint64_t offset, uint64_t *ref_offset, uint64_t *ref_length);
/* Where the payload of the chunk whose section (a WORDS, or a REUSE yielded as one) is at @offset lies. */
void pmi_snap_chunk_data(const struct pm_snapshot *s, uint64_t offset, uint64_t *data_off, uint64_t *data_len);
/*
 * Where a keyed snapshot's frames start: META key_lift (pagemap-snapshot(5)),
 * for a snapshot of frames=keyed or keyed-block; else, or not a number, 0.
 */
uint64_t pmi_snap_frame_start(const struct pm_snapshot *s);
/* Grow the chunk buffers (see snapshot_read.c). 0 or -ENOMEM. */
int pmi_snap_chunk_buffers(struct pm_snapshot *s, size_t zlen, size_t rawlen, size_t nwords);

/* Checking a file as it opens (snapshot_open*.c); each returns 0 or -errno, its error line set. */
/* Hash a payload in bounded steps (a section may be large: its length is checked against the
 * file). */
int pmi_snap_hash_payload(struct pm_snapshot *s, uint64_t off, uint64_t len, uint64_t *out);
/* snapshot_open_files.c: the section @i (FILE; FILES), a META section, every frame file's claim. */
int pmi_snap_load_file_sec(struct pm_snapshot *s, size_t i, const char *where);
int pmi_snap_load_files_sec(struct pm_snapshot *s, size_t i, const char *where);
int pmi_snap_load_meta_sec(struct pm_snapshot *s, const struct snap_sec *c, const char *where);
int pmi_snap_check_claims(struct pm_snapshot *s);
/* snapshot_open_chunks.c: a BYTES or WORDS section; a REUSE section and the chunk it names. */
int pmi_snap_check_chunk_sec(struct pm_snapshot *s, struct snap_sec *c, const char *where);
int pmi_snap_check_reuse(struct pm_snapshot *s, struct snap_sec *c, const char *where);
/* snapshot_open_index.c: the INDEX against the sections found; a series' SERIES index at @off. */
int pmi_snap_check_index(struct pm_snapshot *s, uint64_t index_off);
int pmi_snap_load_series(struct pm_snapshot *s, uint64_t off, uint64_t end);

#endif
