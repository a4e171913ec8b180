/*
 * mhd_load.c - libmicrohttpd, opened with dlopen() by `pagemap serve` only.
 *
 * Linked at build time, libmicrohttpd brings GnuTLS and eight more
 * libraries into every run of every command: measured on Linux 6.18, the
 * dynamic loader and their constructors were most of the 11 ms a
 * `pagemap maps` of a small process cost (`cat smaps`: 4.3 ms; the goal
 * is 1.3x, bench/README.md). Only `serve` needs it, so only `serve` loads it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include "mhd_load.h"

/* The run-time name of Debian's libmicrohttpd12 (the -dev package's libmicrohttpd.so points to it). */
#define MHD_SONAME "libmicrohttpd.so.12"

/* dlsym() returns void *; ISO C has no cast to a function pointer, POSIX promises this copy works. */
static int resolve(void *lib, const char *name, void *slot, char *why, size_t size)
{
	void *sym = dlsym(lib, name);

	if (!sym) {
		snprintf(why, size, "%s has no %s", MHD_SONAME, name);
		return -1;
	}
	*(void **)slot = sym;
	return 0;
}

int mhd_load(struct mhd_api *api, char *why, size_t size)
{
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(why, size, "cannot load %s (Debian package libmicrohttpd12): %s", MHD_SONAME, dlerror());
		return -1;
	}
	if (resolve(lib, "MHD_start_daemon", &api->start_daemon, why, size) < 0 ||
	    resolve(lib, "MHD_stop_daemon", &api->stop_daemon, why, size) < 0 ||
	    resolve(lib, "MHD_get_daemon_info", &api->get_daemon_info, why, size) < 0 ||
	    resolve(lib, "MHD_lookup_connection_value", &api->lookup_connection_value, why, size) < 0 ||
	    resolve(lib, "MHD_create_response_from_buffer", &api->create_response_from_buffer, why, size) < 0 ||
	    resolve(lib, "MHD_add_response_header", &api->add_response_header, why, size) < 0 ||
	    resolve(lib, "MHD_queue_response", &api->queue_response, why, size) < 0 ||
	    resolve(lib, "MHD_destroy_response", &api->destroy_response, why, size) < 0 ||
	    resolve(lib, "MHD_get_connection_info", &api->get_connection_info, why, size) < 0) {
		dlclose(lib);
		return -1;
	}
	return 0;	/* kept open until exit: the daemon's threads run its code */
}
