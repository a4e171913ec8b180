/*
 * zstd_load.c - libzstd for snapshots: opened with dlopen() on first use by the shared library, linked
 * directly in the static one.
 *
 * Only snapshots compress, yet a libpagemap.so linked with -lzstd makes every program that uses it map and
 * relocate libzstd at every start. For a command on a small process that start is most of its cost:
 * measured on Linux 6.18 (bench/README.md, "The fixed cost of a command"), an empty program linked with
 * libzstd took 0.3 ms more CPU than one without, about 7 % of `cat /proc/PID/smaps` (the goal for a tiny
 * `maps` is at most 1.3x that). systemd opens its compression libraries the same way. The Makefile builds
 * the shared library's objects with PMI_ZSTD_DLOPEN; the static archive (tests, fuzzers, the guests'
 * static binaries, where dlopen is not available) keeps the direct calls.
 */
#include <stdio.h>
#include "zstd_load.h"

#ifdef PMI_ZSTD_DLOPEN
#include <dlfcn.h>
#include <pthread.h>

/* The run-time name of Debian's libzstd1 (what libzstd-dev's libzstd.so points to; dpkg itself needs it). */
#define ZSTD_SONAME "libzstd.so.1"

static struct pmi_zstd api;
static const struct pmi_zstd *loaded;
static char load_error[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym() returns void *; ISO C has no cast to a function pointer, POSIX promises this copy works. */
static int resolve(void *lib, const char *name, void *slot)
{
	void *sym = dlsym(lib, name);

	if (!sym) {
		snprintf(load_error, sizeof(load_error), "%s has no %s", ZSTD_SONAME, name);
		return -1;
	}
	*(void **)slot = sym;
	return 0;
}

static void load(void)
{
	void *lib = dlopen(ZSTD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(load_error, sizeof(load_error), "cannot load %s (Debian package libzstd1): %s", ZSTD_SONAME,
			 dlerror());
		return;
	}
	if (resolve(lib, "ZSTD_decompress", &api.decompress) < 0 ||
	    resolve(lib, "ZSTD_getFrameContentSize", &api.frame_content_size) < 0 ||
	    resolve(lib, "ZSTD_isError", &api.is_error) < 0 ||
	    resolve(lib, "ZSTD_getErrorName", &api.error_name) < 0 ||
	    resolve(lib, "ZSTD_createCCtx", &api.create_cctx) < 0 ||
	    resolve(lib, "ZSTD_freeCCtx", &api.free_cctx) < 0 ||
	    resolve(lib, "ZSTD_compressCCtx", &api.compress_cctx) < 0) {
		dlclose(lib);
		return;
	}
	*(void **)&api.create_cctx_advanced = dlsym(lib, "ZSTD_createCCtx_advanced");	/* optional */
	loaded = &api;	/* kept open until exit: contexts made by it may live as long as the process */
}

const struct pmi_zstd *pmi_zstd(char *why, size_t size)
{
	pthread_once(&once, load);
	if (!loaded && why && size)
		snprintf(why, size, "%s", load_error);
	return loaded;
}

#else

static const struct pmi_zstd api = {
	.decompress = ZSTD_decompress,
	.frame_content_size = ZSTD_getFrameContentSize,
	.is_error = ZSTD_isError,
	.error_name = ZSTD_getErrorName,
	.create_cctx = ZSTD_createCCtx,
	.free_cctx = ZSTD_freeCCtx,
	.compress_cctx = ZSTD_compressCCtx,
	.create_cctx_advanced = ZSTD_createCCtx_advanced,
};

const struct pmi_zstd *pmi_zstd(char *why, size_t size)
{
	(void)why;
	(void)size;
	return &api;
}

#endif
