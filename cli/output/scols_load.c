/*
 * scols_load.c - libsmartcols, opened with dlopen() only when a table is printed through it.
 *
 * Most output never reaches libsmartcols: raw, JSON and aligned tables that go to no terminal are
 * formatted by cli/output/out_rows.c, byte for byte as libsmartcols prints them. Linked at build time, the
 * library was still mapped and relocated at every start; for `pagemap maps` of a small process the start
 * is most of the cost (bench/README.md, "The fixed cost of a command": an empty program linked with
 * libsmartcols took 0.3 ms more CPU than one without; the goal for a tiny `maps` is at most 1.3x
 * `cat smaps`). The output layer calls scols_load() the first time a table needs libsmartcols: a
 * terminal, a tree, a record's table, a batch it sends back.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include "cli.h"
#include "scols_load.h"

/* The run-time name of Debian's libsmartcols1 (what libsmartcols-dev's libsmartcols.so points to). */
#define SCOLS_SONAME "libsmartcols.so.1"

#define SCOLS_DEFINE(f) __typeof__(f) *sym_##f;
SCOLS_CALLS(SCOLS_DEFINE)
#undef SCOLS_DEFINE

static void fail(const char *what, const char *why)
{
	cli_error(0, "cannot load %s (Debian package libsmartcols1): %s", what, why);
	exit(EXIT_RUNTIME);
}

static void load(void)
{
	void *lib, *sym;

	if (!(lib = dlopen(SCOLS_SONAME, RTLD_NOW | RTLD_LOCAL)))
		fail(SCOLS_SONAME, dlerror());
	/* dlsym() returns void *; ISO C has no cast to a function pointer, POSIX promises this copy works. */
#define SCOLS_RESOLVE(f)                                   \
	if (!(sym = dlsym(lib, #f)))                       \
		fail(SCOLS_SONAME, "it has no " #f);       \
	*(void **)&sym_##f = sym;
	SCOLS_CALLS(SCOLS_RESOLVE)
#undef SCOLS_RESOLVE
	/* kept open until exit */
}

void scols_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load);
}
