/*
 * test_unscramble.c - --unscramble of keyed snapshots built by hand: files with META key_lift (frames lifted past
 * the domain) and files of earlier builds without it (lift 0) both come back bit for bit with the keep lengths;
 * a replayed lifted file's frames start at key_lift (pm_kpage_start); a kpage word below the lift is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "pages.h"
#include "snapshot_keeper.h"
#include "snapshot_pfnkey.h"

#define DOMAIN	1000u	/* max_pfn of the made-up machine */
#define NPM	6u	/* pagemap words of process 1 */

static unsigned char key[PMI_KEY_SIZE];
static const uint64_t frames[] = { 5, 6, 7, 999 };	/* in the domain: they have kpage words */

/* The real pagemap: four present frames, one swapped page, one frame past max_pfn (memory added meanwhile). */
static void real_pagemap(uint64_t pm[NPM])
{
	for (unsigned i = 0; i < 4; i++)
		pm[i] = 0x8100000000000000ULL | frames[i];
	pm[4] = 0x4000000000000000ULL | 0x2a << 5 | 3;
	pm[5] = 0x8000000000000000ULL | (DOMAIN + 500);
}

static uint64_t kflags(uint64_t pfn)
{
	return 0x800 | pfn << 20;	/* any nonzero word that names its frame */
}

static int put_words(const char *path, const uint64_t *idx, const uint64_t *w, size_t n, uint64_t nwords)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok = fd >= 0;

	for (size_t i = 0; ok && i < n; i++)
		ok = pwrite(fd, &w[i], 8, (off_t)(idx[i] * 8)) == 8;
	ok = ok && ftruncate(fd, (off_t)(nwords * 8)) == 0;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static int put_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/*
 * A keyed snapshot @snap as pm_snapshot_set_frames writes it (@lifted) or as
 * builds before key_lift did; @below: one more kpage word at index 1, where
 * no frame moves in a lifted file. Returns 0 or -1.
 */
static int make_keyed(const char *dir, const char *snap, int lifted, int below)
{
	char tree[512], path[600], feat[128];
	struct pmi_perm f, s;
	struct pmi_scramble sc = { &f, &s, 0 };
	uint64_t pm[NPM], vpn[NPM], idx[5], kw[5], lift;
	struct pm_snapshot_writer *w;
	int r = 0;

	pmi_perm_init(&f, key, 1, DOMAIN, 0);
	pmi_perm_init(&s, key, 2, 1ULL << 50, 0);
	lift = lifted ? pmi_perm_span(&f) : 0;
	if (pmi_perm_lift(&f, lift))
		return -1;
	snprintf(tree, sizeof(tree), "%s/tree%d%d", dir, lifted, below);
	snprintf(path, sizeof(path), "%s/proc", tree);
	if (mkdir(tree, 0700) || mkdir(path, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/proc/1", tree);
	mkdir(path, 0700);
	real_pagemap(pm);
	for (unsigned i = 0; i < NPM; i++) {
		vpn[i] = 16 + i;
		pm[i] = pmi_scramble_word(&sc, pm[i]);
	}
	for (unsigned i = 0; i < 4; i++) {
		idx[i] = pmi_perm_fwd(&f, frames[i]);
		kw[i] = kflags(frames[i]);
	}
	idx[4] = 1;
	kw[4] = 0x800;
	snprintf(path, sizeof(path), "%s/proc/1/pagemap", tree);
	r |= put_words(path, vpn, pm, NPM, 64);
	snprintf(path, sizeof(path), "%s/proc/kpageflags", tree);
	r |= put_words(path, idx, kw, below ? 5 : 4, lift + DOMAIN);
	snprintf(path, sizeof(path), "%s/proc/1/maps", tree);
	r |= put_text(path, "00010000-00016000 rw-p 00000000 00:00 0 \n");
	snprintf(feat, sizeof(feat), "kernel=6.1.0\npage_size=4096\nzero_pfn=0x%llx\n",
		 (unsigned long long)pmi_perm_fwd(&f, 7));
	snprintf(path, sizeof(path), "%s/pagemap-features", tree);
	r |= put_text(path, feat);
	if (r || !(w = pm_snapshot_create(snap)))
		return -1;
	snprintf(feat, sizeof(feat), "%016llx", (unsigned long long)pm_snapshot_key_id(key));
	r = pm_snapshot_add_meta(w, "frames", "keyed") || pm_snapshot_add_meta(w, "key_id", feat) ||
	    pm_snapshot_add_meta(w, "key_domain", "1000") || pm_snapshot_add_meta(w, "key_block", "0");
	snprintf(feat, sizeof(feat), "%llu", (unsigned long long)lift);
	r = r || (lifted && pm_snapshot_add_meta(w, "key_lift", feat)) || pm_snapshot_add_tree(w, tree) ||
	    pm_snapshot_commit(w);
	pm_snapshot_writer_free(w);
	return r ? -1 : 0;
}

static int read_words(const char *path, uint64_t *w, size_t n, uint64_t at, off_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	int ok = fd >= 0 && pread(fd, w, n * 8, (off_t)(at * 8)) == (ssize_t)(n * 8) && fstat(fd, &st) == 0;

	if (ok)
		*size = st.st_size;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Unscramble @snap and check its tree is the real one: pagemap words, kpage words at their frames, lengths. */
static int check_unscrambled(const char *dir, const char *snap, const char *tag)
{
	char out[512], back[512], path[600], err[256] = "", feat[256] = "";
	uint64_t pm[NPM], want[NPM], kw;
	struct pm_snapshot *s;
	off_t size = 0;
	int fd;

	snprintf(out, sizeof(out), "%s/un-%s.snap", dir, tag);
	snprintf(back, sizeof(back), "%s/back-%s", dir, tag);
	CHECK(pm_snapshot_unscramble(snap, out, key, err, sizeof(err)) == 0);
	CHECK(mkdir(back, 0700) == 0);
	s = pm_snapshot_open(out, err, sizeof(err));
	CHECK(s && pm_snapshot_extract(s, back) == 0);
	CHECK(s && !pm_snapshot_meta(s, "key_lift") && !pm_snapshot_meta(s, "key_domain"));
	pm_snapshot_close(s);
	real_pagemap(want);
	snprintf(path, sizeof(path), "%s/proc/1/pagemap", back);
	CHECK(read_words(path, pm, NPM, 16, &size) == 0 && !memcmp(pm, want, sizeof(pm)));
	snprintf(path, sizeof(path), "%s/proc/kpageflags", back);
	for (unsigned i = 0; i < 4; i++)
		CHECK(read_words(path, &kw, 1, frames[i], &size) == 0 && kw == kflags(frames[i]));
	CHECK_EQ_U64((uint64_t)size, DOMAIN * 8);	/* the keep snapshot's length, lifted or not */
	snprintf(path, sizeof(path), "%s/pagemap-features", back);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, feat, sizeof(feat) - 1) > 0 && strstr(feat, "\nzero_pfn=0x7\n"));
	if (fd >= 0)
		close(fd);
	return T_PASS;
}

static int set_up(char *dir)
{
	for (unsigned i = 0; i < PMI_KEY_SIZE; i++)
		key[i] = (unsigned char)(i * 29 + 3);
	return mkdtemp(dir) ? 0 : -1;
}

/* A file with key_lift: the frames lie in [lift, lift + domain), and come back. */
static int lifted_round_trip(void)
{
	char dir[] = "/tmp/test_unscramble.XXXXXX", snap[512];

	if (set_up(dir))
		return t_skip("no temporary directory");
	snprintf(snap, sizeof(snap), "%s/lifted.snap", dir);
	CHECK(make_keyed(dir, snap, 1, 0) == 0);
	check_unscrambled(dir, snap, "lifted");
	pmi_snap_remove_tree(dir);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* A file of an earlier build (no key_lift): unscrambled exactly as before, lift 0. */
static int unlifted_round_trip(void)
{
	char dir[] = "/tmp/test_unscramble.XXXXXX", snap[512];

	if (set_up(dir))
		return t_skip("no temporary directory");
	snprintf(snap, sizeof(snap), "%s/old.snap", dir);
	CHECK(make_keyed(dir, snap, 0, 0) == 0);
	check_unscrambled(dir, snap, "old");
	pmi_snap_remove_tree(dir);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* Replay: a lifted file's frames start at key_lift (phys walks from there), an old file's at 0. */
static int replay_frame_start(void)
{
	char dir[] = "/tmp/test_unscramble.XXXXXX", snap[512], err[256];
	uint64_t start[2] = { 1, 1 }, end[2] = { 0, 0 };

	if (set_up(dir))
		return t_skip("no temporary directory");
	for (int lifted = 0; lifted < 2; lifted++) {
		struct pm_snapshot *s;
		struct pm_ctx *ctx = NULL;
		struct pm_kpage *k = NULL;

		snprintf(snap, sizeof(snap), "%s/r%d.snap", dir, lifted);
		CHECK(make_keyed(dir, snap, lifted, 0) == 0);
		s = pm_snapshot_open(snap, err, sizeof(err));
		CHECK(s && (ctx = pm_ctx_new_snapshot(s)) && (k = pm_kpage_open(ctx)));
		if (k) {
			start[lifted] = pm_kpage_start(k);
			CHECK(pm_kpage_end(k, &end[lifted]) == 0);
		}
		pm_kpage_close(k);
		pm_ctx_free(ctx);
		pm_snapshot_close(s);
	}
	CHECK_EQ_U64(start[0], 0);
	CHECK_EQ_U64(end[0], DOMAIN);
	CHECK_EQ_U64(start[1], DOMAIN);		/* key_lift: the domain */
	CHECK_EQ_U64(end[1], 2 * DOMAIN);	/* phys walks [lift, end): DOMAIN frames, as a keep file */
	pmi_snap_remove_tree(dir);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* Hostile: a kpage word below the lift (no frame moves there), or a key_lift that is no number, is refused. */
static int refused(void)
{
	char dir[] = "/tmp/test_unscramble.XXXXXX", snap[512], out[512], err[256] = "";
	struct stat st;

	if (set_up(dir))
		return t_skip("no temporary directory");
	snprintf(snap, sizeof(snap), "%s/below.snap", dir);
	snprintf(out, sizeof(out), "%s/out.snap", dir);
	CHECK(make_keyed(dir, snap, 1, 1) == 0);
	CHECK(pm_snapshot_unscramble(snap, out, key, err, sizeof(err)) == -EBADMSG);
	CHECK(err[0] && !strchr(err, '\n') && strstr(err, "outside the keyed frames"));
	CHECK(stat(out, &st) < 0 && errno == ENOENT);
	snprintf(snap, sizeof(snap), "%s/old-below.snap", dir);	/* lift 0: index 1 is a frame's, fine */
	CHECK(make_keyed(dir, snap, 0, 1) == 0);
	CHECK(pm_snapshot_unscramble(snap, out, key, err, sizeof(err)) == 0);
	pmi_snap_remove_tree(dir);
	return t_failed_checks ? T_FAIL : T_PASS;
}

T_MAIN(T(lifted_round_trip), T(unlifted_round_trip), T(replay_frame_start), T(refused))
