/* test_memcg.c - the memory cgroup lookup: the pure /proc/PID/cgroup parser on real and hostile text, path matching, replayed trees. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"
#include "../harness.h"
#include "replay.h"

/* Parse @text (strlen) and return the result; the path goes to @buf. */
static int parse(const char *text, char *buf, size_t size)
{
	return pm_memcg_parse(text, strlen(text), buf, size);
}

static int v2_only(void)
{
	char b[256];

	CHECK_EQ_U64(parse("0::/system.slice/nginx.service\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/system.slice/nginx.service");
	CHECK_EQ_U64(parse("0::/\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/");
	CHECK_EQ_U64(parse("0::/no/newline", b, sizeof(b)), 0);	/* a hand-written fixture */
	CHECK_STR(b, "/no/newline");
	return T_PASS;
}

/* v1 with the memory controller wins over the v2 line, wherever either is. */
static int v1_memory_wins(void)
{
	char b[256];

	CHECK_EQ_U64(parse("0::/\n12:memory:/system.slice/postgresql.service\n1:name=systemd:/x\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/system.slice/postgresql.service");
	CHECK_EQ_U64(parse("4:cpu,memory,pids:/a\n0::/b\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/a");
	/* "memoryx", "xmemory" and a name= hierarchy are not the memory controller */
	CHECK_EQ_U64(parse("3:memoryx:/x\n2:xmemory:/y\n1:name=memory:/z\n0::/v2\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/v2");
	return T_PASS;
}

static int no_memory_line(void)
{
	char b[64];

	CHECK_EQ_U64(parse("", b, sizeof(b)), -ENODATA);
	CHECK_EQ_U64(parse("\n\n\n", b, sizeof(b)), -ENODATA);
	CHECK_EQ_U64(parse("3:cpu:/a\n1:name=systemd:/b\n", b, sizeof(b)), -ENODATA);
	CHECK_EQ_U64(parse("10::/not-v2\n", b, sizeof(b)), -ENODATA);	/* ID 10, not 0 */
	CHECK_EQ_U64(parse("0:x:/not-v2\n", b, sizeof(b)), -ENODATA);
	return T_PASS;
}

/* Paths may hold colons: only the first two split. */
static int colons_in_path(void)
{
	char b[64];

	CHECK_EQ_U64(parse("0::/a:b:c\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/a:b:c");
	CHECK_EQ_U64(parse("5:memory:/m::\n", b, sizeof(b)), 0);
	CHECK_STR(b, "/m::");
	return T_PASS;
}

/* What no kernel writes: no colons, one colon, NUL bytes, empty paths, paths longer than the buffer. */
static int hostile_text(void)
{
	static const char nul[] = "0::/evil\0/hidden\n0::/second\n";
	char b[16], big[8192];

	CHECK_EQ_U64(parse("garbage\n:\n::\n0:\nmemory\n", b, sizeof(b)), -ENODATA);
	CHECK_EQ_U64(pm_memcg_parse(nul, sizeof(nul) - 1, b, sizeof(b)), 0);	/* the line with a NUL is skipped */
	CHECK_STR(b, "/second");
	CHECK_EQ_U64(parse("0::\n", b, sizeof(b)), -EBADMSG);
	CHECK_EQ_U64(parse("7:memory:\n0::/v2\n", b, sizeof(b)), -EBADMSG);	/* the memory line wins, empty */
	CHECK_EQ_U64(parse("0::/0123456789abcdef\n", b, sizeof(b)), -ERANGE);
	CHECK_EQ_U64(parse("0::/0123456789abcd\n", b, sizeof(b)), 0);	/* 15 bytes and the NUL: fits */
	memset(big, ',', sizeof(big));
	memcpy(big, "1:", 2);
	memcpy(big + sizeof(big) - 12, ":/commas\n0:", 11);	/* 8 KiB of empty controller names */
	CHECK_EQ_U64(pm_memcg_parse(big, sizeof(big) - 1, b, sizeof(b)), -ENODATA);
	CHECK_EQ_U64(pm_memcg_parse("0::/x", 0, b, sizeof(b)), -ENODATA);	/* length rules, not the NUL */
	CHECK_EQ_U64(pm_memcg_parse("0::/xyz\n", 5, b, sizeof(b)), 0);
	CHECK_STR(b, "/x");
	return T_PASS;
}

static int within(void)
{
	CHECK(pm_memcg_within("/system.slice/nginx.service", "/system.slice"));
	CHECK(pm_memcg_within("/system.slice/nginx.service", "/system.slice/nginx.service/"));
	CHECK(!pm_memcg_within("/system.slice/nginx.service-canary", "/system.slice/nginx.service"));
	CHECK(pm_memcg_within("/anything", "/"));
	CHECK(pm_memcg_within("/", "//"));
	CHECK(!pm_memcg_within("/system.slice", "system.slice"));	/* relative: never */
	CHECK(!pm_memcg_within(NULL, "/"));
	CHECK(!pm_memcg_within("/a", NULL));
	CHECK(!pm_memcg_within("/a", "/a/b"));
	return T_PASS;
}

/* Through a replayed tree: the root prefix, FILE.errno, a FIFO and a directory in place of the file, truncation. */
static int replayed(void)
{
	char *root = rp_new_root(), b[256], *big;
	struct pm_ctx *ctx;
	size_t n = 70 * 1024;

	if (!root)
		return t_skip("no temporary directory");
	CHECK_EQ_U64(rp_write_str(root, "proc/10/cgroup", "12:memory:/v1\n0::/\n"), 0);
	CHECK_EQ_U64(rp_write_str(root, "proc/11/cgroup.errno", "EACCES\n"), 0);
	CHECK_EQ_U64(rp_mkdirs(root, "proc/12/x"), 0);
	CHECK_EQ_U64(rp_mkdirs(root, "proc/13/cgroup/x"), 0);
	snprintf(b, sizeof(b), "%s/proc/12/cgroup", root);
	CHECK_EQ_U64(mkfifo(b, 0600), 0);
	CHECK_EQ_U64(rp_mkdirs(root, "sys/fs/cgroup/memory/v1/x/file"), 0);
	/* 70 KiB: the memory line, cut by the 64 KiB read, must not be taken as a shorter path */
	big = malloc(n);
	if (big) {
		memset(big, '\n', n);
		memcpy(big, "0::/v2\n", 7);
		memcpy(big + 64 * 1024 - 20, "3:memory:/cut-off-path-that-is-long\n", 36);
		CHECK_EQ_U64(rp_write(root, "proc/14/cgroup", big, n), 0);
		free(big);
	}
	ctx = pm_ctx_new(root);
	CHECK(ctx != NULL);
	if (!ctx)
		goto out;
	CHECK_EQ_U64(pm_memcg_of(ctx, 10, b, sizeof(b)), 0);
	CHECK_STR(b, "/v1");
	CHECK_EQ_U64(pm_memcg_of(ctx, 11, b, sizeof(b)), -EACCES);
	CHECK_EQ_U64(pm_memcg_of(ctx, 12, b, sizeof(b)), -EBADMSG);	/* the FIFO: refused, not blocked on */
	CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "FIFO"));
	CHECK_EQ_U64(pm_memcg_of(ctx, 13, b, sizeof(b)), -EBADMSG);
	CHECK_EQ_U64(pm_memcg_of(ctx, 99, b, sizeof(b)), -ENOENT);
	CHECK_EQ_U64(pm_memcg_of(ctx, 0, b, sizeof(b)), -EINVAL);
	CHECK_EQ_U64(pm_memcg_of(ctx, 10, b, 0), -EINVAL);
	CHECK_EQ_U64(pm_memcg_of(ctx, 14, b, sizeof(b)), 0);
	CHECK_STR(b, "/v2");	/* not "/cut-off-pa" */
	CHECK(pm_memcg_exists(ctx, "/v1"));	/* v1's memory hierarchy */
	CHECK(pm_memcg_exists(ctx, "/v1/x/"));
	CHECK(pm_memcg_exists(ctx, "/"));
	CHECK(!pm_memcg_exists(ctx, "/v2"));
	CHECK(!pm_memcg_exists(ctx, "v1"));
	pm_ctx_free(ctx);
out:
	rp_free_root(root);
	return T_PASS;
}

/* This process, live: its own file always names a cgroup on a kernel with cgroups. */
static int live_self(void)
{
	struct pm_ctx *ctx = pm_ctx_new("/");
	char b[4096];
	int r;

	if (!ctx)
		return T_FAIL;
	r = pm_memcg_of(ctx, getpid(), b, sizeof(b));
	pm_ctx_free(ctx);
	if (r == -ENOENT || r == -ENODATA)
		return t_skip("no /proc/self/cgroup with a memory or v2 line here (%d)", r);
	CHECK_EQ_U64(r, 0);
	CHECK(b[0] == '/');
	return T_PASS;
}

T_MAIN(T(v2_only), T(v1_memory_wins), T(no_memory_line), T(colons_in_path), T(hostile_text), T(within), T(replayed),
       T(live_self))
