/* ctx.c - the context: root prefix, back-end choice, debug log. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base.h"
#include "pme.h"
#include "source.h"

/*
 * A tree written out of a keyed snapshot (pm_snapshot_extract) records where
 * its frames start, META key_lift, in ROOT/pagemap-frame-start: no frame was
 * moved below it, so walks over all frames (pm_kpage_start) begin there.
 * Absent: 0. Not a frame number: 0, and the tree says why.
 */
static uint64_t recorded_frame_start(const struct pm_ctx *ctx)
{
	char path[4096], buf[64], *end;
	unsigned long long v;

	if (pmi_path(ctx, path, sizeof(path), "/pagemap-frame-start") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) < 0)
		return 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || buf[0] < '0' || buf[0] > '9' ||
	    v >= 1ULL << PME_PFRAME_BITS) {
		pmi_tree_error(ctx, "%s: not a frame number: frames are walked from 0", path);
		return 0;
	}
	return v;
}

/* A context over @root (checked by the caller), its source installed before the first file is read. */
static struct pm_ctx *ctx_make(const char *root, const struct pmi_source_ops *ops, void *data)
{
	struct pm_ctx *ctx;
	const char *env;
	size_t n;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->live = !root || !*root || !strcmp(root, "/");
	ctx->root = strdup(ctx->live ? "/" : root);
	if (!ctx->root) {
		free(ctx);
		return NULL;
	}
	if (!ctx->live && !(ctx->tree_error = calloc(1, PMI_TREE_ERROR_MAX))) {
		free(ctx->root);
		free(ctx);
		return NULL;
	}
	n = strlen(ctx->root);
	while (n > 1 && ctx->root[n - 1] == '/')
		ctx->root[--n] = '\0';
	ctx->swap_active = -1;
	env = getenv("PAGEMAP_BACKEND");
	if (env && !strcmp(env, "pread"))
		ctx->backend = PM_BACKEND_PREAD;
	else if (env && !strcmp(env, "scan"))
		ctx->backend = PM_BACKEND_SCAN;
	env = getenv("PAGEMAP_DEBUG");
	ctx->debug = env && *env && strcmp(env, "0");
	if (ops)
		pmi_ctx_set_source(ctx, ops, data);
	if (!ctx->live)
		ctx->frame_start = recorded_frame_start(ctx);
	return ctx;
}

struct pm_ctx *pm_ctx_new(const char *root)
{
	struct stat st;

	if (root && *root && strcmp(root, "/")) {
		if (stat(root, &st) < 0)
			return NULL;
		if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return NULL;
		}
	}
	return ctx_make(root, NULL, NULL);
}

struct pm_ctx *pmi_ctx_new_source(const char *root, const struct pmi_source_ops *ops, void *data)
{
	struct pm_ctx *ctx;

	if (!root || !*root || !strcmp(root, "/")) {
		ops->free(data);
		errno = EINVAL;
		return NULL;
	}
	if (!(ctx = ctx_make(root, ops, data)))
		ops->free(data);
	return ctx;
}

int pmi_ctx_tree(const struct pm_ctx *ctx)
{
	if (!ctx->source || !ctx->source->tree)
		return 0;
	return ctx->source->tree(ctx);
}

void pm_ctx_free(struct pm_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->root);
	free(ctx->tree_error);
	free(ctx->hugetlb.v);
	if (ctx->source)
		ctx->source->free(ctx->source_data);
	free(ctx);
}

void pmi_ctx_set_source(struct pm_ctx *ctx, const struct pmi_source_ops *ops, void *data)
{
	ctx->source = ops;
	ctx->source_data = data;
}

const char *pm_ctx_root(const struct pm_ctx *ctx)
{
	pmi_ctx_tree(ctx);	/* a caller may look in it: its names are there (or nothing is, on failure) */
	return ctx->root;
}

const char *pm_ctx_tree_error(const struct pm_ctx *ctx)
{
	return ctx->tree_error && ctx->tree_error[0] ? ctx->tree_error : NULL;
}

int pm_ctx_set_backend(struct pm_ctx *ctx, enum pm_backend backend)
{
	if (backend != PM_BACKEND_AUTO && backend != PM_BACKEND_PREAD && backend != PM_BACKEND_SCAN)
		return -EINVAL;
	ctx->backend = backend;
	return 0;
}

const char *pm_backend_name(enum pm_backend backend)
{
	switch (backend) {
	case PM_BACKEND_PREAD:
		return "pread";
	case PM_BACKEND_SCAN:
		return "scan";
	case PM_BACKEND_AUTO:
	default:
		return "auto";
	}
}

void pm_ctx_set_log(struct pm_ctx *ctx, pm_log_fn fn, void *data)
{
	const char *env = getenv("PAGEMAP_DEBUG");

	ctx->log = fn;
	ctx->log_data = data;
	ctx->debug = fn || (env && *env && strcmp(env, "0"));
}

void pm_ctx_set_check(struct pm_ctx *ctx, pm_check_fn fn, void *data)
{
	ctx->check = fn;
	ctx->check_data = data;
}

void pmi_dbg(const struct pm_ctx *ctx, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!ctx->debug)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (ctx->log)
		ctx->log(ctx->log_data, line);
	else	/* PAGEMAP_DEBUG is the caller asking for stderr */
		fprintf(stderr, "libpagemap: %s\n", line);
}
