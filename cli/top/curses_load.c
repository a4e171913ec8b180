/*
 * curses_load.c - ncurses, opened with dlopen() only when `top` draws in a terminal: every other
 * command, and top's frames for scripts, start without mapping it (the fixed cost of a command:
 * bench/README.md; cli/output/scols_load.c does the same for libsmartcols).
 */
#include <dlfcn.h>
#include "cli.h"
#include "curses_load.h"

/* The run-time name of Debian's libncursesw6 (what libncurses-dev's libncursesw.so points to). */
#define CURSES_SONAME "libncursesw.so.6"

#define CURSES_DEFINE(f) __typeof__(f) *sym_##f;
CURSES_CALLS(CURSES_DEFINE)
#undef CURSES_DEFINE

static WINDOW **stdscr_var;

WINDOW *curses_stdscr(void)
{
	return stdscr_var ? *stdscr_var : NULL;
}

int curses_load(void)
{
	static int loaded;
	void *lib, *sym;

	if (loaded)
		return 0;
	if (!(lib = dlopen(CURSES_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		cli_error(0, "cannot load %s (Debian package libncursesw6): %s; -b prints frames without it",
			  CURSES_SONAME, dlerror());
		return -1;
	}
	/* dlsym() returns void *; ISO C has no cast to a function pointer, POSIX promises this copy works. */
#define CURSES_RESOLVE(f)                                                                \
	if (!(sym = dlsym(lib, #f))) {                                                   \
		cli_error(0, "cannot load %s: it has no %s", CURSES_SONAME, #f);         \
		dlclose(lib);                                                            \
		return -1;                                                               \
	}                                                                                \
	*(void **)&sym_##f = sym;
	CURSES_CALLS(CURSES_RESOLVE)
#undef CURSES_RESOLVE
	if (!(stdscr_var = dlsym(lib, "stdscr"))) {
		cli_error(0, "cannot load %s: it has no stdscr", CURSES_SONAME);
		dlclose(lib);
		return -1;
	}
	loaded = 1;	/* kept open until exit */
	return 0;
}
