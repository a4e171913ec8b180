/*
 * test_snapshot_bounds.c - what a snapshot may claim: text files and frame files within the shared limits
 * (reader and writer), a replay that extracts no file's bytes, and no tree left behind when it is killed.
 * With arguments it is the tool tests/live/snapshot_bounds.sh crafts hostile snapshots with:
 *   test_snapshot_bounds --claim IN OUT PATH text|words SIZE HELD
 * copies snapshot IN (a plain one, version 3) to OUT with one more file PATH that claims SIZE bytes and
 * holds HELD of them (text: 1 MiB chunks of smaps-like lines; words: one word per MiB held, at least one).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>
#include "harness.h"
#include "pages.h"
#include "snapshot_keeper.h"
#include "snapshot_source.h"
#include "snapshot_build.h"

#ifndef SNAP_MAX_TEXT	/* so that this test builds, and fails, on a reader without the limits */
#define SNAP_MAX_TEXT	(256ULL << 20)
#endif
#ifndef SNAP_MAX_FRAMES
#define SNAP_MAX_FRAMES	(1ULL << 40)
#endif

static int mem_fd(const void *p, size_t n)
{
	int fd = memfd_create("snap", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Open the snapshot built in @b (its bytes freed): NULL with errno and the reason in @err. */
static struct pm_snapshot *open_built(struct build *b, char *err, size_t errsize)
{
	int fd = mem_fd(b->p, b->len), e;
	struct pm_snapshot *s = fd >= 0 ? pm_snapshot_open_fd(fd, err, errsize) : NULL;

	e = errno;
	if (s)
		s->own_fd = true;	/* closed with the handle */
	else if (fd >= 0)
		close(fd);
	free(b->p);
	errno = e;
	return s;
}

/* A snapshot with META @meta (or none), then one file @path of @kind claiming @size, holding @held bytes at 0. */
static void build_claim(struct build *b, const char *meta, const char *path, uint32_t kind, uint64_t size,
			const void *held, size_t nheld)
{
	memset(b, 0, sizeof(*b));
	b_head(b, 3);
	if (meta)
		b_sec(b, PM_SNAPSHOT_META, meta, strlen(meta));
	b_file(b, 0, PM_SNAPSHOT_BYTES, 5, "proc/42/stat");
	b_chunk(b, PM_SNAPSHOT_BYTES, 0, 0, 0, "hello", 5);
	b_file(b, 1, kind, size, path);
	if (kind == PM_SNAPSHOT_BYTES && nheld)
		b_chunk(b, PM_SNAPSHOT_BYTES, 1, 0, 0, held, nheld);
	if (kind == PM_SNAPSHOT_WORDS) {
		struct snap_extent ext = { .start = 0, .count = 1 };
		uint64_t w = 0x400;
		unsigned char raw[64];
		size_t n = pmi_snap_encode(&ext, 1, &w, raw, 3);
		b_chunk(b, PM_SNAPSHOT_WORDS, 1, 1, 0, raw, n);
	}
	b_finish(b);
}

/* Does opening @b fail with @e, saying @what? (@e 0: it opens.) */
static bool opens(struct build *b, int e, const char *what)
{
	char err[256] = "";
	struct pm_snapshot *s = open_built(b, err, sizeof(err));
	int got = s ? 0 : errno;

	pm_snapshot_close(s);
	if (got != e || (what && !strstr(err, what))) {
		printf("  open: errno %d (%s), wanted %d with \"%s\"\n", got, err, e, what ? what : "");
		return false;
	}
	return true;
}

static int t_text_claims(void)
{
	struct build b;

	/* The 2 GiB smaps of a file of a few hundred bytes: refused at open, naming the file and the limit. */
	build_claim(&b, NULL, "proc/1/smaps", PM_SNAPSHOT_BYTES, 2ULL << 30, "x\n", 2);
	CHECK(opens(&b, EFBIG, "proc/1/smaps"));
	build_claim(&b, NULL, "proc/1/smaps", PM_SNAPSHOT_BYTES, SNAP_MAX_TEXT + 1, "x\n", 2);
	CHECK(opens(&b, EFBIG, "text file"));
	build_claim(&b, NULL, "proc/1/smaps", PM_SNAPSHOT_BYTES, SNAP_MAX_TEXT, "x\n", 2);
	CHECK(opens(&b, 0, NULL));
	return T_PASS;
}

static int t_frame_claims(void)
{
	struct build b;

	/* 1 PiB of kpageflags: refused (a replay walked 2^47 frames) */
	build_claim(&b, NULL, "proc/kpageflags", PM_SNAPSHOT_WORDS, 1ULL << 50, NULL, 0);
	CHECK(opens(&b, EFBIG, "proc/kpageflags"));
	build_claim(&b, NULL, "proc/kpagecount", PM_SNAPSHOT_WORDS, (SNAP_MAX_FRAMES + 1) * 8, NULL, 0);
	CHECK(opens(&b, EFBIG, "frames"));
	build_claim(&b, NULL, "proc/kpagecgroup", PM_SNAPSHOT_WORDS, SNAP_MAX_FRAMES * 8, NULL, 0);
	CHECK(opens(&b, 0, NULL));
	/* keyed: the frames start at key_lift, and are counted from there */
	build_claim(&b, "frames=keyed\nkey_lift=1099511627776\n", "proc/kpageflags", PM_SNAPSHOT_WORDS,
		    2 * SNAP_MAX_FRAMES * 8, NULL, 0);
	CHECK(opens(&b, 0, NULL));
	build_claim(&b, "frames=keyed\nkey_lift=1099511627776\n", "proc/kpageflags", PM_SNAPSHOT_WORDS,
		    (2 * SNAP_MAX_FRAMES + 1) * 8, NULL, 0);
	CHECK(opens(&b, EFBIG, "frames"));
	/* a pagemap is a process's address space, not frames: its claim is the format's */
	build_claim(&b, NULL, "proc/1/pagemap", PM_SNAPSHOT_WORDS, 1ULL << 50, NULL, 0);
	CHECK(opens(&b, 0, NULL));
	return T_PASS;
}

/* The writer refuses what the reader would: the same limits. */
static int t_writer_claims(void)
{
	char dir[] = "/tmp/test_snapshot_bounds.XXXXXX", snap[512];
	struct pm_snapshot_writer *w;

	if (!mkdtemp(dir))
		return t_skip("no temporary directory");
	snprintf(snap, sizeof(snap), "%s/out.snap", dir);
	w = pm_snapshot_create(snap);
	CHECK(w != NULL);
	if (w) {
		CHECK(pmi_snap_w_file(w, "proc/1/smaps", PM_SNAPSHOT_BYTES, SNAP_MAX_TEXT + 1) == -EFBIG);
		CHECK(pmi_snap_w_file(w, "proc/kpageflags", PM_SNAPSHOT_WORDS, (SNAP_MAX_FRAMES + 1) * 8) == -EFBIG);
		pm_snapshot_writer_free(w);
	}
	w = pm_snapshot_create(snap);
	CHECK(w && pmi_snap_w_file(w, "proc/1/smaps", PM_SNAPSHOT_BYTES, SNAP_MAX_TEXT) >= 0);
	CHECK(w && pmi_snap_w_file(w, "proc/kpageflags", PM_SNAPSHOT_WORDS, SNAP_MAX_FRAMES * 8) >= 0);
	CHECK(w && pmi_snap_w_file(w, "proc/1/pagemap", PM_SNAPSHOT_WORDS, 1ULL << 50) >= 0);
	pm_snapshot_writer_free(w);
	pmi_snap_remove_tree(dir);
	return T_PASS;
}

/* Bytes the files under @dir hold on their file system (st_blocks), and how many files. */
static uint64_t tree_bytes(const char *dir, unsigned *nfiles)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t sum = 0;
	char path[4096];
	struct stat st;

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sum += tree_bytes(path, nfiles);
			continue;
		}
		sum += (uint64_t)st.st_blocks * 512;
		++*nfiles;
	}
	if (d)
		closedir(d);
	return sum;
}

/*
 * A replay writes no file's bytes to $TMPDIR: a text file is read from its chunks when it is opened, as long
 * as its chunks hold (a claim past them reads as the bytes held), a word file from its chunks as before.
 */
static int t_replay_lazy(void)
{
	static char text[200000];
	struct build b;
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	char err[256] = "", path[4096], buf[64];
	unsigned nfiles = 0;
	int fd;
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	build_claim(&b, NULL, "proc/42/smaps", PM_SNAPSHOT_BYTES, 64ULL << 20, text, sizeof(text));
	s = open_built(&b, err, sizeof(err));
	CHECK(s != NULL);
	ctx = s ? pm_ctx_new_snapshot(s) : NULL;
	pm_snapshot_close(s);
	CHECK(ctx != NULL);
	if (!ctx) {
		printf("  %s\n", err);
		return T_FAIL;
	}
	CHECK_EQ_U64(tree_bytes(pm_ctx_root(ctx), &nfiles), 0);
	CHECK(nfiles >= 2);
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/stat") == 0);
	CHECK(pmi_read_small_file(ctx, path, buf, sizeof(buf)) == 5 && !strcmp(buf, "hello"));
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/smaps") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd >= 0);
	{
		static char got[300000];
		size_t have = 0;
		while (fd >= 0 && (n = read(fd, got + have, sizeof(got) - have)) > 0)
			have += (size_t)n;
		CHECK_EQ_U64(have, sizeof(text));	/* what the chunks hold, not the 64 MiB claimed */
		CHECK(!memcmp(got, text, sizeof(text)));
	}
	if (fd >= 0)
		close(fd);
	CHECK_EQ_U64(tree_bytes(pm_ctx_root(ctx), &nfiles), 0);	/* opened: still nothing written there */
	pm_ctx_free(ctx);
	return T_PASS;
}

/*
 * A replay that only opens files touches no file system: its root is a name until a call reads the root
 * itself. Text and word files are served from the chunks, a name the snapshot lacks (the FILE.errno probes
 * before every open) is ENOENT; a directory's name, or a listing, makes the tree of names, as it always was.
 */
static int t_replay_no_tree(void)
{
	struct build b;
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	struct pm_procs *it;
	const struct pm_proc *pr = NULL;
	struct stat st;
	char path[4096], buf[64];
	uint64_t w = 0;
	int fd;

	build_claim(&b, NULL, "proc/42/pagemap", PM_SNAPSHOT_WORDS, 4096, NULL, 0);
	s = open_built(&b, NULL, 0);
	ctx = s ? pm_ctx_new_snapshot(s) : NULL;
	pm_snapshot_close(s);
	CHECK(ctx != NULL);
	if (!ctx)
		return T_FAIL;
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/stat") == 0);
	CHECK(pmi_read_small_file(ctx, path, buf, sizeof(buf)) == 5 && !strcmp(buf, "hello"));
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/pagemap") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 4096);	/* its length, as the tree's file had */
	CHECK(fd >= 0 && pmi_ctx_pread_words(ctx, fd, &w, 1, 0) == 1 && w == 0x400);
	if (fd >= 0)
		close(fd);
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/maps") == 0);
	CHECK(pmi_open(ctx, path, O_RDONLY) == -ENOENT);
	CHECK(pm_ctx_tree_error(ctx) == NULL);
	CHECK(stat(ctx->root, &st) < 0 && errno == ENOENT);	/* nothing made: the root is a name */
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd == -EBADMSG);	/* a directory of the tree, said as before */
	if (fd != -EBADMSG)
		printf("  open of a directory: %d %s\n", fd, pm_ctx_tree_error(ctx) ? pm_ctx_tree_error(ctx) : "");
	CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "it is a directory"));
	CHECK(stat(ctx->root, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	it = pm_procs_open(ctx);	/* a listing: from the tree of names */
	CHECK(it != NULL && pm_procs_next(it, &pr) == 0 && pr->pid == 42 && pm_procs_next(it, &pr) == 1);
	pm_procs_close(it);
	pm_ctx_free(ctx);
	return T_PASS;
}

/*
 * Word files past PMI_SNAP_MEMFDS, or opened once the tree is made, are the tree's sparse files, read by their
 * inode as before: 70 pagemaps open at once, each reads its own word; the tree appears with the 65th.
 */
static int t_replay_many_words(void)
{
	enum { N = PMI_SNAP_MEMFDS + 6 };
	struct snap_extent ext = { .start = 0, .count = 1 };
	unsigned char raw[64];
	char path[4096], rel[64];
	struct build b;
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	struct stat st;
	int fd[N], i;
	uint64_t w;
	size_t n;

	memset(&b, 0, sizeof(b));
	b_head(&b, 3);
	for (i = 0; i < N; i++) {
		snprintf(rel, sizeof(rel), "proc/%d/pagemap", 100 + i);
		b_file(&b, (uint32_t)i, PM_SNAPSHOT_WORDS, 4096, rel);
		w = 0x1000 + (uint64_t)i;
		n = pmi_snap_encode(&ext, 1, &w, raw, 3);
		b_chunk(&b, PM_SNAPSHOT_WORDS, (uint32_t)i, 1, 0, raw, n);
	}
	b_finish(&b);
	s = open_built(&b, NULL, 0);
	ctx = s ? pm_ctx_new_snapshot(s) : NULL;
	pm_snapshot_close(s);
	CHECK(ctx != NULL);
	if (!ctx)
		return T_FAIL;
	for (i = 0; i < N; i++) {
		snprintf(rel, sizeof(rel), "/proc/%d/pagemap", 100 + i);
		CHECK(pmi_path(ctx, path, sizeof(path), "%s", rel) == 0);
		fd[i] = pmi_open(ctx, path, O_RDONLY);
		CHECK(fd[i] >= 0);
		if (i == PMI_SNAP_MEMFDS - 1)
			CHECK(stat(ctx->root, &st) < 0);	/* all from memfds so far */
	}
	CHECK(stat(ctx->root, &st) == 0);
	for (i = 0; i < N; i++) {
		w = 0;
		CHECK(fd[i] >= 0 && pmi_ctx_pread_words(ctx, fd[i], &w, 1, 0) == 1 && w == 0x1000 + (uint64_t)i);
		if (fd[i] >= 0)
			close(fd[i]);
	}
	pm_ctx_free(ctx);
	return T_PASS;
}

/* Names a tree cannot hold fail the replay as making the tree did: a path twice, a file as a directory. */
static int t_replay_names_clash(void)
{
	static const char *const clash[][2] = {
		{ "proc/42/maps", "the path is in the snapshot twice" },
		{ "proc/42/stat/x", "proc/42/stat/x): Not a directory" },
		{ "proc", "(FILE of proc): the path is in the snapshot twice" },
	};
	struct build b;
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	size_t i;

	for (i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
		memset(&b, 0, sizeof(b));
		b_head(&b, 3);
		b_file(&b, 0, PM_SNAPSHOT_BYTES, 5, "proc/42/stat");
		b_file(&b, 1, PM_SNAPSHOT_BYTES, 0, "proc/42/maps");
		b_file(&b, 2, PM_SNAPSHOT_BYTES, 0, clash[i][0]);
		b_finish(&b);
		s = open_built(&b, NULL, 0);
		CHECK(s != NULL);
		ctx = s ? pm_ctx_new_snapshot(s) : NULL;
		CHECK(ctx == NULL && errno != 0);
		CHECK(s && pm_snapshot_error(s) && strstr(pm_snapshot_error(s), clash[i][1]));
		if (s && (!pm_snapshot_error(s) || !strstr(pm_snapshot_error(s), clash[i][1])))
			printf("  %s: %s\n", clash[i][0], pm_snapshot_error(s) ? pm_snapshot_error(s) : "(no error)");
		pm_ctx_free(ctx);
		pm_snapshot_close(s);
	}
	return T_PASS;
}

/* Chunks that overlap hold more than the file: an open refuses them, rather than decompress them all. */
static int t_replay_overlap(void)
{
	struct build b;
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	char path[4096], buf[64];
	int fd;

	memset(&b, 0, sizeof(b));
	b_head(&b, 3);
	b_file(&b, 0, PM_SNAPSHOT_BYTES, 10, "proc/42/status");
	b_chunk(&b, PM_SNAPSHOT_BYTES, 0, 0, 0, "abcdef", 6);
	b_chunk(&b, PM_SNAPSHOT_BYTES, 0, 0, 0, "abcdef", 6);
	b_finish(&b);
	s = open_built(&b, NULL, 0);
	CHECK(s != NULL);
	ctx = s ? pm_ctx_new_snapshot(s) : NULL;
	pm_snapshot_close(s);
	CHECK(ctx != NULL);
	if (!ctx)
		return T_FAIL;
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/42/status") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd == -EBADMSG);
	CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "more bytes than the file's length"));
	if (fd >= 0)
		close(fd);
	CHECK(pmi_read_small_file(ctx, path, buf, sizeof(buf)) == -EBADMSG);
	pm_ctx_free(ctx);
	return T_PASS;
}

/*
 * SIGKILL of a replay leaves no tree behind. The child makes a replay context, says where its tree is and
 * waits to be killed; as the subreaper we wait for every process it left (the tree's keeper among them) to
 * end, then look.
 */
static int replay_killed(bool group)
{
	static const char leftover_fmt[] = "  %s is still there after the replay was killed\n";
	int p[2], status;
	char root[4096] = "";
	pid_t pid;
	struct stat st;
	ssize_t n;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || pipe(p) < 0)
		return t_skip("no subreaper or pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		struct build b;
		if (group)
			setpgid(0, 0);	/* a group of its own, which the keeper joins unless it leaves it */
		struct pm_snapshot *s;
		struct pm_ctx *ctx;
		close(p[0]);
		build_claim(&b, NULL, "proc/42/smaps", PM_SNAPSHOT_BYTES, 6, "smaps\n", 6);
		s = open_built(&b, NULL, 0);
		ctx = s ? pm_ctx_new_snapshot(s) : NULL;
		if (ctx && write(p[1], pm_ctx_root(ctx), strlen(pm_ctx_root(ctx))) < 0)
			_exit(1);
		close(p[1]);
		pause();
		_exit(0);
	}
	close(p[1]);
	n = pid > 0 ? read(p[0], root, sizeof(root) - 1) : -1;
	close(p[0]);
	if (pid > 0)
		kill(group ? -pid : pid, SIGKILL);	/* group: as `timeout -s KILL` or a shell's job control */
	while (waitpid(-1, &status, __WALL) > 0 || errno == EINTR)	/* the child, then whatever it left */
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	CHECK(n > 0);
	if (n <= 0)
		return T_FAIL;
	root[n] = '\0';
	if (stat(root, &st) == 0) {
		printf(leftover_fmt, root);
		pmi_snap_remove_tree(root);
		return T_FAIL;
	}
	return T_PASS;
}

static int t_replay_killed(void)
{
	return replay_killed(false);
}

/* The same, its whole process group killed: the keeper has a session of its own (before, it died too). */
static int t_replay_group_killed(void)
{
	return replay_killed(true);
}

/*
 * Paths a reader refuses: a C1 control (0x9b, CSI: refused where char is
 * signed only by luck, let through where it is unsigned) and more components
 * than a killed replay's keeper removes.
 */
static int t_path_refused(void)
{
	char deep[128] = "", err[256];
	struct build b;
	int i;

	for (i = 0; i < 33; i++)
		strcat(deep, i ? "/a" : "a");
	build_claim(&b, NULL, "proc/42/sm\x9b" "aps", PM_SNAPSHOT_BYTES, 6, "smaps\n", 6);
	CHECK(open_built(&b, err, sizeof(err)) == NULL && errno == EBADMSG);
	build_claim(&b, NULL, deep, PM_SNAPSHOT_BYTES, 6, "smaps\n", 6);
	CHECK(open_built(&b, err, sizeof(err)) == NULL && errno == EBADMSG);
	deep[strlen(deep) - 2] = '\0';	/* 32 components: taken */
	build_claim(&b, NULL, deep, PM_SNAPSHOT_BYTES, 6, "smaps\n", 6);
	{
		struct pm_snapshot *s = open_built(&b, err, sizeof(err));
		CHECK(s != NULL);
		pm_snapshot_close(s);
	}
	return T_PASS;
}

/* ---- the tool: a real snapshot with one hostile claim more ---- */

static int read_whole(const char *path, unsigned char **p, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !(*p = malloc((size_t)st.st_size + 1)) ||
	    read(fd, *p, (size_t)st.st_size) != st.st_size)
		return -1;
	*n = (size_t)st.st_size;
	close(fd);
	return 0;
}

struct out {
	FILE *f;
	uint64_t len;
	uint32_t *type;
	uint64_t *plen;
	size_t n, cap;
};

static void out_sec(struct out *o, uint32_t type, const void *pay, size_t n)
{
	unsigned char h[SNAP_SEC_SIZE];
	uint64_t hash = pmi_snap_hash(pay, n);

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 1024;
		o->type = realloc(o->type, o->cap * sizeof(*o->type));
		o->plen = realloc(o->plen, o->cap * sizeof(*o->plen));
	}
	o->type[o->n] = type;
	o->plen[o->n++] = n;
	snap_put32(h, type);
	snap_put32(h + 4, pmi_snap_header_check(type, n, hash));
	snap_put64(h + 8, n);
	snap_put64(h + 16, hash);
	fwrite(h, 1, sizeof(h), o->f);
	fwrite(pay, 1, n, o->f);
	o->len += SNAP_SEC_SIZE + n;
}

static void out_chunk(struct out *o, uint32_t type, uint32_t id, uint32_t mid, uint64_t off, const void *raw, size_t n)
{
	size_t bound = ZSTD_compressBound(n);
	unsigned char *p = malloc(SNAP_CHUNK_FIXED + bound);
	size_t z = ZSTD_compress(p + SNAP_CHUNK_FIXED, bound, raw, n, 1);

	snap_put32(p, id);
	snap_put32(p + 4, mid);
	snap_put64(p + 8, off);
	out_sec(o, type, p, SNAP_CHUNK_FIXED + z);
	free(p);
}

static int claim_tool(int argc, char **argv)
{
	const char *in = argv[2], *outp = argv[3], *path = argv[4], *kind = argv[5];
	uint64_t size = strtoull(argv[6], NULL, 0), held = strtoull(argv[7], NULL, 0), at, index_off;
	struct out o = { 0 };
	struct pm_snapshot *s;
	unsigned char *p, fixed[SNAP_FILE_FIXED + SNAP_MAX_PATH], *idx, t[SNAP_TRAILER_SIZE];
	char err[256];
	size_t n, i, plen = strlen(path), ilen;
	uint32_t id;
	bool text = !strcmp(kind, "text");

	if (argc != 8 || (!text && strcmp(kind, "words")) || plen > SNAP_MAX_PATH) {
		fprintf(stderr, "usage: %s --claim IN OUT PATH text|words SIZE HELD\n", argv[0]);
		return 2;
	}
	if (!(s = pm_snapshot_open(in, err, sizeof(err))) || s->version != 3 || read_whole(in, &p, &n)) {
		fprintf(stderr, "%s: %s\n", in, s ? "not a plain snapshot of version 3" : err);
		return 1;
	}
	if (!(o.f = fopen(outp, "we")))
		return 1;
	index_off = s->secs[s->nsecs - 1].offset;
	fwrite(p, 1, (size_t)index_off, o.f);
	o.len = index_off;
	o.type = malloc((o.cap = s->nsecs + 4096) * sizeof(*o.type));
	o.plen = malloc(o.cap * sizeof(*o.plen));
	for (i = 0; i + 1 < s->nsecs; i++) {	/* its sections as they are: no offset moves */
		o.type[i] = s->secs[i].type;
		o.plen[i] = s->secs[i].length;
	}
	o.n = s->nsecs - 1;
	id = (uint32_t)s->nfiles;
	snap_put32(fixed, id);
	snap_put32(fixed + 4, text ? PM_SNAPSHOT_BYTES : PM_SNAPSHOT_WORDS);
	snap_put64(fixed + 8, size);
	snap_put32(fixed + 16, (uint32_t)plen);
	memcpy(fixed + SNAP_FILE_FIXED, path, plen);
	out_sec(&o, PM_SNAPSHOT_FILE, fixed, SNAP_FILE_FIXED + plen);
	if (text) {
		static const char line[] = "Rss:                   4 kB\n";
		char *raw = malloc(SNAP_MAX_RAW);
		for (i = 0; i < SNAP_MAX_RAW; i++)
			raw[i] = line[i % (sizeof(line) - 1)];
		for (at = 0; at < held && at < size; at += SNAP_MAX_RAW)
			out_chunk(&o, PM_SNAPSHOT_BYTES, id, 0, at,
				  raw, held - at < SNAP_MAX_RAW ? (size_t)(held - at) : SNAP_MAX_RAW);
		free(raw);
	} else {
		for (at = 0; at == 0 || (at < held && at < size / 8); at += 1 << 17) {	/* a word per MiB held */
			struct snap_extent ext = { .start = at, .count = 1 };
			uint64_t w = 0x400;
			unsigned char raw[64];
			out_chunk(&o, PM_SNAPSHOT_WORDS, id, 1, 0, raw, pmi_snap_encode(&ext, 1, &w, raw, 3));
		}
	}
	at = o.len;
	idx = malloc(10 + o.n * 20);
	ilen = pmi_snap_put_varint(idx, o.n);
	for (i = 0; i < o.n; i++) {
		ilen += pmi_snap_put_varint(idx + ilen, o.type[i]);
		ilen += pmi_snap_put_varint(idx + ilen, o.plen[i]);
	}
	out_sec(&o, PM_SNAPSHOT_INDEX, idx, ilen);
	snap_put64(t, at);
	memcpy(t + 8, SNAP_END_MAGIC, 8);
	fwrite(t, 1, sizeof(t), o.f);
	pm_snapshot_close(s);
	free(p);
	free(idx);
	free(o.type);
	free(o.plen);
	return fclose(o.f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = { T(t_text_claims), T(t_frame_claims), T(t_writer_claims),
					       T(t_replay_lazy), T(t_replay_no_tree), T(t_replay_many_words), T(t_replay_names_clash),
					       T(t_replay_overlap), T(t_replay_killed),
					       T(t_replay_group_killed), T(t_path_refused) };

	if (argc > 1 && !strcmp(argv[1], "--claim"))
		return claim_tool(argc, argv);
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
