/* test_replay_hostile.c - replayed trees as hostile input: FIFOs, sizes out of range, short pieces, truncation. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"
#include "../harness.h"
#include "replay.h"

#define B_PRESENT (1ULL << 63)
#define TIMEOUT 10	/* seconds: each of these hung forever before the fix */

static const char *current;

static void on_alarm(int sig)
{
	(void)sig;
	printf("  timed out after %d s (hung)\nFAIL %s\n", TIMEOUT, current ? current : "?");
	fflush(stdout);
	_exit(1);
}

/* A small valid tree: 4 KiB pages (or @psize), one process (self) with @maps and every entry present. */
static char *tree(uint64_t psize, const char *maps, uint64_t pagemap_pages)
{
	char *root = rp_new_root(), feat[256];
	uint64_t *e;
	size_t i;

	if (!root)
		return NULL;
	snprintf(feat, sizeof(feat), "kernel=6.18.0\npage_size=%llu\nlayout=current\npfn_view=visible\n",
		 (unsigned long long)psize);
	e = calloc(pagemap_pages ? pagemap_pages : 1, sizeof(*e));
	for (i = 0; e && i < pagemap_pages; i++)
		e[i] = B_PRESENT | (0x1000 + i);
	if (!e || rp_write_str(root, "pagemap-features", feat) ||
	    rp_write_str(root, "proc/sys/kernel/osrelease", "6.18.0\n") ||
	    rp_write_str(root, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n") ||
	    rp_write_stat(root, "proc/self/stat", 'S', 4194560) || rp_write_str(root, "proc/self/maps", maps) ||
	    rp_put_entries(root, "proc/self/pagemap", 0, e, pagemap_pages)) {
		free(e);
		rp_free_root(root);
		return NULL;
	}
	free(e);
	return root;
}

/* Everything a read-only command does with a target: features, target, mapstat. Returns the first error. */
static int run_all(struct pm_ctx *ctx)
{
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_mapstat *it;
	struct pm_target *t;
	int r;

	pm_ctx_features(ctx);
	t = pm_target_open(ctx, 0);
	if (!t)
		return -errno;
	it = pm_mapstat_open(t, 0);
	if (!it) {
		r = -errno;
		pm_target_close(t);
		return r;
	}
	while ((r = pm_mapstat_next(it, &m, &u)) == 0)
		;
	pm_mapstat_close(it);
	pm_target_close(t);
	return r == 1 ? 0 : r;
}

static void check_msg(const struct pm_ctx *ctx, const char *want)
{
	const char *msg = pm_ctx_tree_error(ctx);

	CHECK(msg && strstr(msg, want));
	if (!msg || !strstr(msg, want))
		printf("  message \"%s\" lacks \"%s\"\n", msg ? msg : "(none)", want);
}

/*
 * A FIFO anywhere in the tree blocked open() forever. Now each is refused,
 * with a message naming it, whether the library needed the file to go on
 * (pagemap, maps: the call fails) or went on without it (stat, features).
 */
static int fifo_anywhere(void)
{
	static const struct {
		const char *rel;
		bool fatal;	/* the target or walk fails, not just the context's message */
	} files[] = {
		{ "proc/self/pagemap", true },	{ "proc/self/maps", true },
		{ "proc/self/stat", false },	{ "pagemap-features", false },
		{ "proc/self/pagemap.errno", true }, { "proc/sys/kernel/osrelease", false },
		{ "proc/swaps", false },	{ "sys/kernel/mm/transparent_hugepage/hpage_pmd_size", false },
		{ "proc/kpageflags", false },	{ "proc/self/maps.errno", true },
	};
	size_t i;

	for (i = 0; i < (sizeof(files) / sizeof(files[0])); i++) {
		char *root = tree(4096, "00400000-00402000 rw-p 00000000 00:00 0 \n", 0x402);
		char path[4096], want[4200];
		struct pm_ctx *ctx;
		int r;

		if (!root)
			return t_skip("cannot create a replay root");
		snprintf(path, sizeof(path), "%s/%s", root, files[i].rel);
		unlink(path);
		rp_mkdirs(root, files[i].rel);
		if (mkfifo(path, 0600) < 0) {
			rp_free_root(root);
			return t_skip("mkfifo: %s", strerror(errno));
		}
		ctx = pm_ctx_new(root);
		CHECK(ctx != NULL);
		r = run_all(ctx);
		if (files[i].fatal)
			CHECK_EQ_U64(r, -EBADMSG);
		snprintf(want, sizeof(want), "%s: it is a FIFO, not a regular file", path);
		check_msg(ctx, want);
		pm_ctx_free(ctx);
		rp_free_root(root);
	}
	return T_PASS;
}

/* A directory where pagemap should be is refused the same way (read() would fail with EISDIR later). */
static int directory_pagemap(void)
{
	char *root = tree(4096, "00400000-00402000 rw-p 00000000 00:00 0 \n", 0), path[4096];
	struct pm_ctx *ctx;

	if (!root)
		return t_skip("cannot create a replay root");
	snprintf(path, sizeof(path), "%s/proc/self/pagemap", root);
	unlink(path);
	mkdir(path, 0700);
	ctx = pm_ctx_new(root);
	CHECK_EQ_U64(run_all(ctx), -EBADMSG);
	check_msg(ctx, "pagemap: it is a directory, not a regular file");
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* page_size below 4096 read past huge_block()'s buffer (ASan: heap-buffer-overflow); others made no sense. */
static int page_size_range(void)
{
	static const uint64_t bad[] = { 2048, 512, 8, 3000, 6144, 1ULL << 21, (1ULL << 32) + 4096 };
	size_t i;

	for (i = 0; i < (sizeof(bad) / sizeof(bad[0])); i++) {
		char *root = tree(bad[i], "00400000-00800000 rw-p 00000000 00:00 0 \n", 0x800), want[128];
		struct pm_ctx *ctx;

		if (!root)
			return t_skip("cannot create a replay root");
		ctx = pm_ctx_new(root);
		CHECK_EQ_U64(run_all(ctx), -EBADMSG);
		CHECK_EQ_U64(pm_ctx_features(ctx)->page_size, 4096);
		snprintf(want, sizeof(want), "pagemap-features: page_size=%u is out of range: a page is a power of two from 4096 to 1048576 bytes",
			 bad[i] > UINT32_MAX ? 0 : (unsigned)bad[i]);
		check_msg(ctx, want);
		pm_ctx_free(ctx);
		rp_free_root(root);
	}
	return T_PASS;
}

/* hpage_pmd_size sized an allocation: 2^39 made a one-page query allocate 1 GiB. Only sane values pass. */
static int pmd_size_range(void)
{
	static const struct {
		uint64_t psize;
		const char *pmd;
		uint64_t want;	/* 0: refused */
	} cases[] = {
		{ 4096, "549755813888\n", 0 }, { 4096, "4096\n", 0 },	      { 4096, "3145728\n", 0 },
		{ 4096, "4194304\n", 0 },      { 4096, "-1\n", 0 },	      { 4096, "2097152\n", 2097152 },
		{ 65536, "16777216\n", 16777216 }, { 65536, "1073741824\n", 0 }, { 16384, "33554432\n", 33554432 },
		{ 4096, "garbage\n", 2097152 },
	};
	size_t i;

	for (i = 0; i < (sizeof(cases) / sizeof(cases[0])); i++) {
		char *root = tree(cases[i].psize, "00000000-00000000 rw-p 00000000 00:00 0 \n", 0);
		struct pm_ctx *ctx;

		if (!root)
			return t_skip("cannot create a replay root");
		/* An empty maps file: the target opens, nothing is walked. */
		rp_write_str(root, "proc/self/maps", "");
		rp_write_str(root, "sys/kernel/mm/transparent_hugepage/hpage_pmd_size", cases[i].pmd);
		ctx = pm_ctx_new(root);
		if (cases[i].want) {
			CHECK_EQ_U64(run_all(ctx), 0);
			CHECK_EQ_U64(pm_ctx_features(ctx)->pmd_size, cases[i].want);
			CHECK(pm_ctx_tree_error(ctx) == NULL);
		} else {
			CHECK_EQ_U64(run_all(ctx), -EBADMSG);
			CHECK(pm_ctx_features(ctx)->pmd_size <= (1ULL << 30));
			check_msg(ctx, "hpage_pmd_size: ");
			check_msg(ctx, "is out of range: a PMD maps a power of two from");
		}
		pm_ctx_free(ctx);
		rp_free_root(root);
	}
	return T_PASS;
}

/* A [vvar] or [vsyscall] piece shorter than a page, or any mapping shorter than the page size, looped forever. */
static int short_pieces(void)
{
	static const struct {
		uint64_t psize;
		const char *maps;
		int rc;
	} cases[] = {
		{ 4096, "00400000-00401800 r--p 00000000 00:00 0                          [vvar]\n", -EBADMSG },
		{ 4096, "00400000-00400800 --xp 00000000 00:00 0                          [vsyscall]\n", -EBADMSG },
		{ 16384, "00400000-00401000 r--p 00000000 00:00 0                          [vvar]\n", 0 },
		{ 65536, "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0          [vsyscall]\n", 0 },
		{ 16384, "00400000-00401000 rw-p 00000000 00:00 0 \n", -EBADMSG },
		{ 65536, "00400000-00402000 rw-p 00000000 00:00 0 \n", -EBADMSG },
		{ 4096, "00400000-00400010 rw-p 00000000 00:00 0 \n", -EBADMSG },
		{ 4096, "00400000-00400000 rw-p 00000000 00:00 0 \n", -EBADMSG },
		{ 4096, "00500000-00501000 rw-p 00000000 00:00 0 \n00400000-00401000 rw-p 00000000 00:00 0 \n", -EBADMSG },
	};
	size_t i;

	for (i = 0; i < (sizeof(cases) / sizeof(cases[0])); i++) {
		char *root = tree(cases[i].psize, cases[i].maps, 0x1000000 / cases[i].psize);
		struct pm_ctx *ctx;
		int r;

		if (!root)
			return t_skip("cannot create a replay root");
		ctx = pm_ctx_new(root);
		r = run_all(ctx);
		CHECK_EQ_U64(r, cases[i].rc);
		if (r)
			check_msg(ctx, "/proc/self/maps line ");
		pm_ctx_free(ctx);
		rp_free_root(root);
	}
	return T_PASS;
}

/* 32 mappings, a pagemap cut inside the 4th: mapstat used to give 3 rows and end (29 vanished), now an error. */
static int truncated_mapstat(void)
{
	char maps[32 * 64], *root;
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_mapstat *it;
	struct pm_target *t;
	struct pm_ctx *ctx;
	int i, n = 0, rows = 0, r;

	for (i = 0; i < 32; i++)
		n += snprintf(maps + n, sizeof(maps) - n, "%08x-%08x rw-p 00000000 00:00 0 \n", 0x400000 + i * 0x10000,
			      0x400000 + i * 0x10000 + 0x4000);
	root = tree(4096, maps, 0x430 + 2);
	if (!root)
		return t_skip("cannot create a replay root");
	ctx = pm_ctx_new(root);
	t = pm_target_open(ctx, 0);
	CHECK(t != NULL);
	it = t ? pm_mapstat_open(t, 0) : NULL;
	CHECK(it != NULL);
	while (it && (r = pm_mapstat_next(it, &m, &u)) == 0)
		rows++;
	if (it)
		CHECK_EQ_U64(r, -EBADMSG);
	CHECK_EQ_U64(rows, 3);
	check_msg(ctx, "/proc/self/pagemap is truncated: it ends at byte 8592 (0x2190), but the entry of 0x432000 "
		       "(mapping 0x430000-0x434000) is at byte 0x2190");
	pm_mapstat_close(it);
	pm_target_close(t);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* The live context never has a tree error. */
static int live_no_tree_error(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);

	CHECK(ctx && pm_ctx_tree_error(ctx) == NULL);
	pm_ctx_free(ctx);
	return T_PASS;
}

#define WRAP(fn)                                  \
	static int fn##_timed(void)               \
	{                                         \
		int r;                            \
		current = #fn;                    \
		alarm(TIMEOUT);                   \
		r = fn();                         \
		alarm(0);                         \
		return r;                         \
	}
WRAP(fifo_anywhere)
WRAP(directory_pagemap)
WRAP(page_size_range)
WRAP(pmd_size_range)
WRAP(short_pieces)
WRAP(truncated_mapstat)

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "fifo_anywhere", fifo_anywhere_timed },     { "directory_pagemap", directory_pagemap_timed },
		{ "page_size_range", page_size_range_timed }, { "pmd_size_range", pmd_size_range_timed },
		{ "short_pieces", short_pieces_timed },	      { "truncated_mapstat", truncated_mapstat_timed },
		{ "live_no_tree_error", live_no_tree_error },
	};

	signal(SIGALRM, on_alarm);
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
