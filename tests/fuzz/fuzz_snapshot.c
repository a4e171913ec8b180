/* fuzz_snapshot.c - libFuzzer target: the snapshot reader (open, iterate, decode every chunk, rewind; of a series its last and first
 * members) on any bytes, in memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"

/* fuzz_snapshot_extract.c includes this file with FUZZ_SNAPSHOT_EXTRACT: the same checks, then extraction. */
#ifndef PM_FUZZ_NAME
#define PM_FUZZ_NAME "fuzz_snapshot"
#endif
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                   \
	do {                                                                                        \
		if (!(c)) {                                                                         \
			fprintf(stderr, PM_FUZZ_NAME ": %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

static int fd = -1;

/* Every extent lies inside its file, and what a callback gets is readable. */
static int check_extent(void *arg, uint64_t off, const void *buf, size_t len)
{
	const struct pm_snapshot_section *sec = arg;
	volatile unsigned char sink = 0;

	ASSERT(len && off <= sec->size && len <= sec->size - off);
	sink ^= ((const unsigned char *)buf)[0] ^ ((const unsigned char *)buf)[len - 1];
	(void)sink;
	return 0;
}

/* Walk every section and decode every chunk; returns how many sections were seen. */
static unsigned walk(struct pm_snapshot *s)
{
	struct pm_snapshot_section sec;
	unsigned n = 0;
	int r;

	while ((r = pm_snapshot_next(s, &sec)) == 0) {
		n++;
		if (sec.type != PM_SNAPSHOT_BYTES && sec.type != PM_SNAPSHOT_WORDS)
			continue;
		ASSERT(sec.path && *sec.path != '/');
		r = pm_snapshot_read(s, &sec, check_extent, &sec);
		ASSERT(r == 0 || r == -EBADMSG);
		ASSERT(r == 0 || (pm_snapshot_error(s) && !strchr(pm_snapshot_error(s), '\n')));
	}
	ASSERT(r == 1);
	return n;
}

#ifdef FUZZ_SNAPSHOT_EXTRACT
void pmi_snap_remove_tree(const char *dir);	/* lib/base/base.h: remove a tree without following symlinks */

static char root[256];

/* The private directory goes when the run ends (each input's tree goes after the input). */
static void remove_root(void)
{
	pmi_snap_remove_tree(root);
}

/* The paths stay inside the tree, whatever they say. */
static void extract(struct pm_snapshot *s)
{
	char dir[300];

	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/fuzz_snapshot.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		ASSERT(mkdtemp(root));
		atexit(remove_root);
	}
	snprintf(dir, sizeof(dir), "%s/t", root);
	if (mkdir(dir, 0700) == 0) {
		(void)pm_snapshot_extract(s, dir);
		pmi_snap_remove_tree(dir);
	}
}

/* lib/base/base.h: a path under the context's root, opened as its readers open it */
int pmi_path(const struct pm_ctx *ctx, char *buf, size_t size, const char *fmt, ...);
int pmi_open(const struct pm_ctx *ctx, const char *path, int flags);
ssize_t pmi_ctx_pread_words(const struct pm_ctx *ctx, int fd, uint64_t *buf, size_t count, uint64_t word_index);

/* A word file's first words, read from its chunks whether it is a memfd or the tree's file (snapshot_source.c). */
static void replay_words(struct pm_ctx *ctx, const char *path)
{
	uint64_t w[64];
	int wfd = pmi_open(ctx, path, O_RDONLY);
	ssize_t n;

	ASSERT(wfd >= 0 || wfd == -EBADMSG || wfd == -EMFILE || wfd == -ENFILE || wfd == -ENOSPC);
	if (wfd < 0)
		return;
	n = pmi_ctx_pread_words(ctx, wfd, w, 64, 0);
	ASSERT(n >= -4095 && n <= 64);
	close(wfd);
}

/*
 * A replay: every text file read from its chunks (lib/snapshot/snapshot_text.c), never longer than it claims;
 * word files read, then the tree of names made (pm_ctx_root) and the word files read again from it.
 */
static void replay(struct pm_snapshot *s)
{
	struct pm_ctx *ctx = pm_ctx_new_snapshot(s);
	struct pm_snapshot_section sec;
	char path[4096], buf[65536];
	int pass;

	if (!ctx)
		return;
	for (pass = 0; pass < 2; pass++) {
		pm_snapshot_rewind(s);
		while (pm_snapshot_next(s, &sec) == 0)
			if (sec.type == PM_SNAPSHOT_FILE && sec.kind == PM_SNAPSHOT_WORDS &&
			    pmi_path(ctx, path, sizeof(path), "/%s", sec.path) == 0)
				replay_words(ctx, path);
		(void)pm_ctx_root(ctx);	/* the tree of names, as a listing makes it */
	}
	pm_snapshot_rewind(s);
	while (pm_snapshot_next(s, &sec) == 0) {
		uint64_t got = 0;
		ssize_t n;
		int tfd;

		if (sec.type != PM_SNAPSHOT_FILE || sec.kind != PM_SNAPSHOT_BYTES ||
		    pmi_path(ctx, path, sizeof(path), "/%s", sec.path) < 0)
			continue;
		tfd = pmi_open(ctx, path, O_RDONLY);
		ASSERT(tfd >= 0 || tfd == -EBADMSG || tfd == -EEXIST || tfd == -ENOENT);
		ASSERT(tfd != -EBADMSG || (pm_ctx_tree_error(ctx) && !strchr(pm_ctx_tree_error(ctx), '\n')));
		while (tfd >= 0 && (n = read(tfd, buf, sizeof(buf))) > 0)
			got += (uint64_t)n;
		ASSERT(got <= sec.size);
		if (tfd >= 0)
			close(tfd);
	}
	pm_ctx_free(ctx);
}
#endif

/* Input: the snapshot file's bytes (fuzz builds skip checksum mismatches, so chunks are reached). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pm_snapshot_section sec;
	struct pm_snapshot *s;
	char err[256];
	unsigned n;

	if (fd < 0)
		ASSERT((fd = memfd_create(PM_FUZZ_NAME, MFD_CLOEXEC)) >= 0);
	ASSERT(ftruncate(fd, 0) == 0);
	ASSERT(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
	err[0] = '\0';
	s = pm_snapshot_open_fd(fd, err, sizeof(err));
	if (!s) {	/* refused: one line, and a reason */
		ASSERT(errno == EBADMSG || errno == EFBIG || errno == EPROTONOSUPPORT || errno == ENOMEM);
		ASSERT(err[0] && !strchr(err, '\n'));
		return 0;
	}
	(void)pm_snapshot_meta(s, "writer");
	(void)pm_snapshot_meta(s, "frames");
	n = walk(s);
	pm_snapshot_rewind(s);	/* a second pass sees the same sections */
	while (pm_snapshot_next(s, &sec) == 0)
		n--;
	ASSERT(n == 0);
#ifdef FUZZ_SNAPSHOT_EXTRACT
	extract(s);
	replay(s);
#endif
	if (pm_snapshot_members(s, NULL) > 1) {	/* a series: its first member too (REUSE reaches back to it) */
		pm_snapshot_close(s);
		err[0] = '\0';
		if (!(s = pm_snapshot_open_member_fd(fd, 1, err, sizeof(err)))) {
			ASSERT(errno == EBADMSG || errno == EFBIG || errno == EPROTONOSUPPORT || errno == ENOMEM);
			ASSERT(err[0] && !strchr(err, '\n'));
			return 0;
		}
		(void)walk(s);
	}
	pm_snapshot_close(s);
	return 0;
}
