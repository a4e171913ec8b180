/* fuzz_unscramble.c - libFuzzer target: pm_snapshot_unscramble (the owner's --unscramble) of any bytes with a fixed key. */
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

#define PM_FUZZ_NAME "fuzz_unscramble"
#include "replay_main.h"

void pmi_snap_remove_tree(const char *dir);	/* lib/base/base.h: remove a tree without following symlinks */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                   \
	do {                                                                                        \
		if (!(c)) {                                                                         \
			fprintf(stderr, "fuzz_unscramble: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

/*
 * The key of the seeds in tests/fuzz/corpus/unscramble: 32 bytes 'K' (made
 * with pagemap snapshot --pfn keyed --key FILE of a live process). Seed
 * wrong-key has 16 'W' then 16 'K': another key id (lib/snapshot/snapshot_pfnkey.c folds the
 * key's halves together by XOR, so 32 'W' would be the same key as 32 'K');
 * seed kept is not keyed. Seeds keyed and keyed-block predate META key_lift
 * (lift 0); keyed-lifted and keyed-block-lifted carry it. keyed-v3 and
 * keyed-block-v3 are format version 3 (the kpage* chunks share an extent list).
 */
static unsigned char key[PM_SNAPSHOT_KEY_SIZE];
static int fd = -1;
static char root[256], in[64], out[300];

static void remove_root(void)
{
	pmi_snap_remove_tree(root);
}

static void set_up(void)
{
	memset(key, 'K', sizeof(key));
	ASSERT((fd = memfd_create("fuzz_unscramble", MFD_CLOEXEC)) >= 0);
	snprintf(in, sizeof(in), "/proc/self/fd/%d", fd);
	snprintf(root, sizeof(root), "%s/fuzz_unscramble.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(root));
	atexit(remove_root);
	snprintf(out, sizeof(out), "%s/out", root);
}

static int check_extent(void *arg, uint64_t off, const void *buf, size_t len)
{
	const struct pm_snapshot_section *sec = arg;

	ASSERT(len && buf && off <= sec->size && len <= sec->size - off);
	return 0;
}

/* What unscramble wrote is a whole snapshot that says frames=kept, keeps no key line, and reads back. */
static void check_output(void)
{
	struct pm_snapshot_section sec;
	struct pm_snapshot *s;
	char err[256];
	const char *frames;

	s = pm_snapshot_open(out, err, sizeof(err));
	ASSERT(s);
	frames = pm_snapshot_meta(s, "frames");
	ASSERT(frames && !strcmp(frames, "kept"));
	ASSERT(!pm_snapshot_meta(s, "key_id") && !pm_snapshot_meta(s, "key_domain"));
	while (pm_snapshot_next(s, &sec) == 0)
		if (sec.type == PM_SNAPSHOT_BYTES || sec.type == PM_SNAPSHOT_WORDS)
			ASSERT(pm_snapshot_read(s, &sec, check_extent, &sec) == 0);
	pm_snapshot_close(s);
}

/* Input: a snapshot file's bytes (fuzz builds skip checksum mismatches, so chunks are reached). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct stat st;
	int r;

	if (fd < 0)
		set_up();
	ASSERT(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
	ASSERT(ftruncate(fd, (off_t)size) == 0);
	err[0] = '\0';
	r = pm_snapshot_unscramble(in, out, key, err, sizeof(err));
	if (r) {	/* refused: one line and a reason, and no output left behind */
		ASSERT(r == -EBADMSG || r == -EINVAL || r == -EKEYREJECTED || r == -EPROTONOSUPPORT || r == -ENOMEM);
		ASSERT(err[0] && !strchr(err, '\n'));
		ASSERT(lstat(out, &st) < 0 && errno == ENOENT);
		return 0;
	}
	check_output();
	ASSERT(unlink(out) == 0);
	return 0;
}
