/* snapshot.h - the snapshot file format (man/pagemap-snapshot.5), shared by its reader and writer. */
#ifndef PMI_SNAPSHOT_H
#define PMI_SNAPSHOT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include "pagemap.h"
#include "snapshot_pfnkey.h"

#define SNAP_MAGIC		"\x89PMSNAP\n"
#define SNAP_END_MAGIC		"PMSNEND\n"
#define SNAP_HEAD_SIZE		16u		/* magic, u32 version, u32 check */
#define SNAP_SEC_SIZE		24u		/* u32 type, u32 check, u64 length, u64 xxh64 of the payload */
#define SNAP_TRAILER_SIZE	16u		/* u64 offset of the INDEX section, end magic */
#define SNAP_FILE_FIXED		20u		/* FILE payload before the path: u32 id, u32 kind, u64 size, u32 len */
#define SNAP_FILES_FIXED	16u		/* a FILES record before the path: u32 kind, u64 size, u32 len */
#define SNAP_CHUNK_FIXED	16u		/* BYTES: u32 id, u32 0, u64 offset; WORDS: u32 id, u32 nwords, u64 ref */

/* Limits a reader enforces, so a hostile file cannot make it allocate or loop much. */
#define SNAP_MAX_RAW		(1u << 20)	/* decompressed bytes of one chunk */
#define SNAP_MAX_WORDS		262144u		/* words of one WORDS chunk (version 3) */
#define SNAP_MAX_WORDS_V2	65536u		/* words of one WORDS chunk of a version 1 or 2 file */
#define SNAP_MAX_EXTENTS	65536u		/* extents of one WORDS chunk (every version) */
#define SNAP_MAX_PATH		1024u
#define SNAP_MAX_DEPTH		32u		/* components of a path: what snapshot_keeper.c removes (KEEPER_DEPTH) */
#define SNAP_MAX_FILES		(1u << 20)
#define SNAP_MAX_META		65536u
#define SNAP_MAX_FILE_SIZE	(1ULL << 58)	/* logical bytes of one file (a pagemap spans 2^57 on la57) */

/*
 * What one file may claim, beyond the format's limit: the writer refuses to
 * write more (-EFBIG) and the reader refuses a file that claims more, so a
 * snapshot the writer made always replays. A text file is a /proc or /sys
 * file: the longest, smaps of a process at the default vm.max_map_count
 * (65530 mappings, about 1.3 KB each), is 85 MB; a replay holds a text file
 * in memory while it is open. A frame file (proc/kpage*) is one word per
 * frame of the machine: physical addresses have at most 52 bits, 2^40 frames
 * of 4 KiB, counted from where its frames start (a keyed snapshot's
 * key_lift). A claim within it costs a replay what its chunks hold: walks
 * of all frames skip those no chunk holds (pm_kpage_next_data).
 */
#define SNAP_MAX_TEXT		(256ULL << 20)
#define SNAP_MAX_FRAMES		(1ULL << 40)

/* Is @path one of the frame files, whose words are indexed by frame number? */
static inline bool snap_is_frame_file(const char *path)
{
	return !strcmp(path, "proc/kpageflags") || !strcmp(path, "proc/kpagecount") ||
	       !strcmp(path, "proc/kpagecgroup");
}

/*
 * May file @path of @kind claim @size bytes, its frames (if a frame file)
 * starting at @frame_start? 0, or -EFBIG with the limit it breaks in *@why.
 */
static inline int snap_claim_check(const char *path, uint32_t kind, uint64_t size, uint64_t frame_start,
				   const char **why)
{
	if (kind == PM_SNAPSHOT_BYTES && size > SNAP_MAX_TEXT) {
		*why = "over the 256 MiB a text file may hold";
		return -EFBIG;
	}
	if (kind == PM_SNAPSHOT_WORDS && snap_is_frame_file(path) &&
	    (size / 8 < frame_start ? 0 : size / 8 - frame_start) > SNAP_MAX_FRAMES) {
		*why = "over the 2^40 frames a machine can have";
		return -EFBIG;
	}
	return 0;
}

/* A series (format version 4, man/pagemap-snapshot.5): members, each a version 3 body, and a SERIES index. */
#define SNAP_SERIES_VERSION	4u
#define SNAP_REUSE_LEN		16u
#define SNAP_MAX_MEMBERS	65536u
#define SNAP_MAX_MEMBER_PIDS	64u		/* PIDs the index keeps per member (more are counted, not listed) */
#define SNAP_MAX_SERIES		(4u << 20)	/* bytes of the SERIES payload */
/* A series writer lines its word files' chunks up on slots of this many words (64 MiB of 4 KiB pages), so an
 * unchanged range gives an equal chunk; a change costs one slot's chunk, not the 1 GiB a whole chunk spans. */
#define SNAP_SLOT_WORDS		16384u

/* The words a WORDS chunk of a file of format @version may hold. */
static inline uint32_t snap_max_words(uint32_t version)
{
	return version >= 3 ? SNAP_MAX_WORDS : SNAP_MAX_WORDS_V2;
}

/* Little-endian load and store (the format is little-endian whatever the host). */
static inline uint32_t snap_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t snap_get64(const unsigned char *p)
{
	return snap_get32(p) | (uint64_t)snap_get32(p + 4) << 32;
}

static inline void snap_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void snap_put64(unsigned char *p, uint64_t v)
{
	snap_put32(p, (uint32_t)v);
	snap_put32(p + 4, (uint32_t)(v >> 32));
}

/*
 * snapshot_read.c: a buffer of @n bytes for a chunk's words or their
 * encoding, freed by free(). From 1 MiB on it is 2 MiB-aligned and may be
 * backed by huge pages (THP madvise): each 4 KiB page first touched costs a
 * page fault, which in a virtual machine exits to the hypervisor (14 us
 * each here); chunks of 262144 words made a THP snapshot and its replay
 * touch 8 MiB more of such buffers, 30 ms of 160. Smaller ones are plain
 * malloc (a fuzzer's inputs, small snapshots). NULL with errno.
 */
void *pmi_snap_big_alloc(size_t n);
/* @ncol columns of @keep bytes moved from @old (@old_stride apart) to a new block, @stride apart; @old freed. */
void *pmi_snap_regrow(void *old, size_t old_stride, size_t keep, size_t stride, unsigned ncol);
/* A block written all over at once: huge-page backed from 256 KiB (one huge page up to a MiB). */
void *pmi_snap_dense_alloc(size_t n);

/* The check word of a section header: covers type, length and payload hash, so a flipped bit there shows. */
uint32_t pmi_snap_header_check(uint32_t type, uint64_t length, uint64_t hash);
uint64_t pmi_snap_hash(const void *p, size_t n);

/* LEB128: write @v at @p (at most 10 bytes), returns the length. */
size_t pmi_snap_put_varint(unsigned char *p, uint64_t v);
/* Read one at *@p (advanced): 0 with *@v, or -1 when it runs past @end or past 64 bits. */
int pmi_snap_get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v);

/*
 * The columnar word encoding of a WORDS chunk (pure). Raw layout: varint
 * extent count; per extent varint gap (words from the previous extent's end,
 * the first from word 0) and varint count; a 2-byte column per word (bits
 * 55-63, and bit 9 set when bits 0-54 are not zero); then for each word with
 * non-zero low bits a zig-zag varint of its low bits minus the previous such
 * word's (frame numbers of contiguous memory cost one byte).
 */
struct snap_extent {
	uint64_t start;		/* word index in the file */
	uint32_t count;
};
/* Encode; @out must hold pmi_snap_encode_bound(@nwords, @next) bytes. Returns the length. */
size_t pmi_snap_encode_bound(size_t nwords, size_t next);
size_t pmi_snap_encode(const struct snap_extent *ext, size_t next, const uint64_t *words, unsigned char *out,
		       uint32_t version);
/*
 * The two halves of a chunk's encoding: the extent list, and the columns of
 * @total words. A version 3 chunk that shares another chunk's extents (its
 * header's ref, pagemap-snapshot(5)) holds the columns alone.
 */
size_t pmi_snap_encode_extents(const struct snap_extent *ext, size_t next, unsigned char *out);
size_t pmi_snap_encode_columns(const uint64_t *words, size_t total, unsigned char *out, uint32_t version);
/*
 * Decode @raw of @len: at most @max_ext extents into @ext and @max_words
 * words into @words. Returns the number of extents, or -EBADMSG (with a
 * reason in *@why) when the data is malformed or exceeds the limits.
 */
int pmi_snap_decode(const unsigned char *raw, size_t len, struct snap_extent *ext, size_t max_ext, uint64_t *words,
		   size_t max_words, size_t *nwords, uint32_t version, const char **why);
/*
 * The extent list at the start of @raw alone: as pmi_snap_decode, *@nwords
 * the words the extents hold (at most @max_words), *@used the bytes read.
 */
int pmi_snap_decode_extents(const unsigned char *raw, size_t len, struct snap_extent *ext, size_t max_ext,
			    size_t max_words, size_t *nwords, size_t *used, const char **why);
/*
 * snapshot_read.c: the extents to make room for before decoding the list at
 * the start of @raw (@len bytes) of a chunk of at most @max_words words: the
 * count it gives, within those bounds and SNAP_MAX_EXTENTS (at least 1).
 */
size_t pmi_snap_extent_room(const unsigned char *raw, size_t len, size_t max_words);
/* The columns of @total words, all of @raw: 0, or -EBADMSG with a reason in *@why. */
int pmi_snap_decode_columns(const unsigned char *raw, size_t len, uint64_t *words, size_t total, uint32_t version,
			    const char **why);

/* snapshot_read.c: the META line after @prev ("key=value"), the first when @prev is NULL; NULL at the end. */
const char *pmi_snap_meta_next(const struct pm_snapshot *s, const char *prev);

/* snapshot_read.c: record an I/O failure @r while extracting @sec as the snapshot's error line. */
void pmi_snap_fail_io(struct pm_snapshot *s, const struct pm_snapshot_section *sec, int r);

/* snapshot_write*.c: the writer's pieces, for the tree and process writers. */
struct pm_snapshot_writer;
struct snap_ws;
/* Declare a file; returns its id (>= 0) or -errno. */
int pmi_snap_w_file(struct pm_snapshot_writer *w, const char *path, uint32_t kind, uint64_t size);
/* Bytes of file @id at byte @off (split into chunks). 0 or -errno. */
int pmi_snap_w_bytes(struct pm_snapshot_writer *w, uint32_t id, uint64_t off, const void *buf, size_t len);
/* A word stream of file @id: words added at any index (ascending), flushed as WORDS chunks; NULL with errno. */
struct snap_ws *pmi_snap_ws_new(struct pm_snapshot_writer *w, uint32_t id);
int pmi_snap_ws_add(struct snap_ws *ws, uint64_t index, const uint64_t *words, size_t n);
/*
 * A stream of @ncol (1 to 3) word files @id[] given the words of the same
 * indices together (the kpage* files of the frames a process maps): each
 * flush writes one chunk per file, the first with the extent list, the
 * others referring to it (format version 3). An index whose words are all
 * 0 may be left out. NULL with errno.
 */
struct snap_ws *pmi_snap_ws_new_cols(struct pm_snapshot_writer *w, const uint32_t *id, unsigned ncol);
/* @n words at @index of each file, @cols[c] those of file @id[c]. */
int pmi_snap_ws_add_cols(struct snap_ws *ws, uint64_t index, const uint64_t *const *cols, size_t n);
/* Flush what is pending and free; returns 0 or the first error of the stream. NULL is fine. */
int pmi_snap_ws_close(struct snap_ws *ws);
/*
 * Process @pid was read from @start to @end (CLOCK_REALTIME ns): kept,
 * and written as META window.PID=START,END at commit. 0 or -ENOMEM.
 */
int pmi_snap_w_window(struct pm_snapshot_writer *w, pid_t pid, uint64_t start, uint64_t end);
/* A whole file read from @fd to its end as bytes of a new file @path. 0 or -errno. */
int pmi_snap_w_stream(struct pm_snapshot_writer *w, const char *path, int fd);
/*
 * pmi_snap_w_stream in two steps, so that the reading can be done ahead,
 * by another thread, and the writing in the file's usual place: read @fd
 * into @t (up to SNAP_STREAM_HELD held; 0 or -errno), then write @t as
 * @path, reading the rest of a longer file from @fd (0 or -errno). The
 * caller frees t->buf, whatever the results.
 */
struct snap_text {
	char *buf;
	size_t held;	/* bytes of buf */
	uint64_t len;	/* bytes read into buf */
	bool whole;	/* len is the file's length */
};
int pmi_snap_text_read(struct snap_text *t, int fd);
int pmi_snap_text_write(struct pm_snapshot_writer *w, const char *path, struct snap_text *t, int fd);

/*
 * snapshot_sys.c: the machine's files a snapshot keeps beside its processes,
 * gathered (read: no writer needed, so another thread may) then written.
 */
struct snap_sysfile {
	char *path;		/* in the snapshot */
	bool name_only;		/* only its name is kept (a NUMA memory block): an empty file */
	bool errno_file;	/* if it cannot be opened, PATH.errno says why (else it is left out) */
	int err;		/* the open's errno, or 0 */
	int r;			/* the read's 0 or -errno */
	int fd;			/* open while the file is longer than t holds, else -1 */
	struct snap_text t;
};
struct snap_sys {
	struct snap_sysfile *v;
	size_t n, cap;
	bool gathered;
	const struct pm_ctx *ctx;	/* whose files they are */
	int r;			/* the gathering's 0 or -errno (out of memory, a path too long) */
};
/* Gather every file (once; sets s->gathered). 0 or -errno, also kept in s->r. */
int pmi_snap_sys_gather(struct snap_sys *s, const struct pm_ctx *ctx);
/* Read @live as @path; one that cannot be opened is noted (@errno_file: written as PATH.errno). 0 or -ENOMEM. */
int pmi_snap_sys_read(struct snap_sys *s, const struct pm_ctx *ctx, const char *live, const char *path,
		      bool errno_file);
/* @path kept as a name only (an empty file). 0 or -ENOMEM. */
int pmi_snap_sys_name(struct snap_sys *s, const char *path);
/* Write what was gathered, in the order it was. 0 or -errno. */
int pmi_snap_sys_put(struct pm_snapshot_writer *w, struct snap_sys *s);
void pmi_snap_sys_free(struct snap_sys *s);
/* snapshot_numa.c: the NUMA topology under sys/ (nodes, memory blocks, tiers), gathered into @s. 0 or -errno. */
int pmi_snap_numa_gather(struct snap_sys *s, const struct pm_ctx *ctx);
/* snapshot_users.c: the users whose processes the snapshot holds, for META users=UID=NAME,... */
#define SNAP_USERS_MAX	256
#define SNAP_USERS_LINE	(4096 - sizeof("users=\n"))	/* "users=" LINE "\n" is one META line of 4 KiB */
struct snap_users {
	uid_t uid[SNAP_USERS_MAX];
	char *name[SNAP_USERS_MAX];	/* this machine's name for it, or NULL (none: left out of META) */
	size_t n;
};
/* This machine's name for @uid (getpwuid_r: any thread). 0, -ENOENT (none, or longer than @size), -errno. */
int pmi_snap_user_name(uid_t uid, char *name, size_t size);
bool pmi_snap_users_known(const struct snap_users *u, uid_t uid);
/* Note @uid and its @name (NULL: none), once. 0 or -ENOMEM. */
int pmi_snap_users_note(struct snap_users *u, uid_t uid, const char *name);
/* META users=UID=NAME,... of those named (at most 4 KiB); nothing when none is. 0 or -errno. */
int pmi_snap_users_put(struct pm_snapshot_writer *w, const struct snap_users *u);
void pmi_snap_users_free(struct snap_users *u);
struct snap_users *pmi_snap_w_users(struct pm_snapshot_writer *w);
/* snapshot_proc.c: @path.errno, the errno name of @e (an open that failed). 0 or -errno. */
int pmi_snap_put_errno(struct pm_snapshot_writer *w, const char *path, int e);
/* The writer's machine files (snapshot_sys.c), gathered once. */
struct snap_sys *pmi_snap_w_sys(struct pm_snapshot_writer *w);

#define SNAP_READ_WORDS	65536u		/* words of a pagemap or kpage file read at once */

/* A run of contiguous frames met in a process's pagemap: what the frame join gathers. */
struct frun {
	uint64_t start, n;
};

/* Keyed modes: a frame's kpage words (one per column of the frames' stream) at its permuted index. */
struct moved {
	uint64_t index, word[3];
};

/* The frame files of a snapshot being written: declared once, fed by every process, closed by add_system. */
struct snap_frames {
	bool declared;
	const struct pm_ctx *ctx;	/* whose frame files fd[] are */
	int fd[3];			/* live kpageflags, kpagecount, kpagecgroup (or -errno) */
	struct snap_ws *ws[3];		/* each file alone: the whole files (machine scope) */
	struct snap_ws *joint;		/* the files of ws[] together: the frames processes map */
	int col[3];			/* joint's columns: their files (0 kpageflags, 1 kpagecount, 2 kpagecgroup) */
	unsigned ncol;
	uint64_t end;			/* frames in the files */
	int pfn_mode;			/* enum pm_snapshot_pfn: how frame numbers are written */
	struct pmi_perm perm[2];	/* keyed modes: frames (lifted past their domain), swap offsets */
	struct pmi_scramble sc;		/* what pagemap words become (drop: no permutations) */
	uint64_t *seen;			/* a bit per frame whose kpage words are written (NULL: none yet) */
	struct frun *first;		/* or the first batch's runs, merged, not marked in seen yet */
	size_t nfirst;
	bool flushed;			/* a batch was written: the next one needs seen */
	struct frun *todo;		/* a batch's frames to read, as disjoint ascending pieces */
	size_t todo_cap;
	struct frun *sorted;		/* a batch's runs: the radix sort's other half */
	size_t sorted_cap;
	/* Does a large folio's map count matter to what is recorded (the page_mapcount probe)? */
	bool large;			/* a frame written is part of a large folio (kpageflags) */
	bool blind;			/* a process's frames were not all read with their kpageflags */
};
struct snap_frames *pmi_snap_w_frames(struct pm_snapshot_writer *w);

/*
 * snapshot_frames.c: the kpage words of the frames of @nrun runs (sorted
 * here), but for frames written already; @buf holds 3 * SNAP_READ_WORDS
 * words, @mv (keyed modes) one entry per frame of the batch. 0 or -errno.
 */
int pmi_snap_frames_flush(struct pm_snapshot_writer *w, struct frun *run, size_t nrun, uint64_t *buf, struct moved *mv);
/* The words of @n frames from @pfn of file @f, but for those the processes' frames wrote already. */
int pmi_snap_frames_put_unseen(struct snap_frames *fr, int f, uint64_t pfn, const uint64_t *buf, size_t n);

#endif
