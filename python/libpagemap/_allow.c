/*
 * _allow.c - long library calls run without the GIL, yet Ctrl-C stops them: the thread state is kept per
 * thread, and the library's check function (pm_ctx_set_check) takes the GIL back about every CHECK_NS to run
 * Python's signal handlers. Only the main thread runs them (Python's rule), so only it checks.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include "_core.h"

#define CHECK_NS 20000000L	/* 20 ms: Ctrl-C feels immediate, and the GIL is taken back rarely */

static _Thread_local PyThreadState *saved;	/* this thread's state while it runs without the GIL */
static _Thread_local struct timespec last;	/* when this thread last ran the handlers */
static _Thread_local bool tripped;		/* a handler raised: stop every later check */
static _Thread_local pid_t saved_pid;		/* the process that released the GIL */
static unsigned long main_ident;		/* threading.main_thread().ident: where handlers run */

void pmpy_release(void)
{
	tripped = false;
	saved_pid = getpid();
	clock_gettime(CLOCK_MONOTONIC, &last);
	saved = PyEval_SaveThread();
}

/* A handler's exception belongs to the call it interrupted: the next call starts unmarked. */
void pmpy_acquire(void)
{
	PyThreadState *s = saved;

	saved = NULL;
	tripped = false;
	PyEval_RestoreThread(s);
}

int pmpy_check_now(void)
{
	PyThreadState *s = saved;
	int r;

	/* with the GIL held (no saved state: a handler's own call, or a call that keeps the GIL) nothing to do */
	if (!s)
		return 0;
	if (tripped)
		return -EINTR;
	/* a child the library forked has no Python to go back to (none calls us today: cheap insurance) */
	if (PyThread_get_thread_ident() != main_ident || getpid() != saved_pid)
		return 0;
	/*
	 * The handlers hold the GIL: a library call of theirs that reaches this check must see no saved state,
	 * or it would take the GIL its own thread holds and wait forever.
	 */
	saved = NULL;
	PyEval_RestoreThread(s);
	r = PyErr_CheckSignals();
	saved = PyEval_SaveThread();
	clock_gettime(CLOCK_MONOTONIC, &last);
	tripped = r < 0;
	return tripped ? -EINTR : 0;
}

int pmpy_check(void *unused)
{
	struct timespec now;

	if (!saved)
		return 0;
	if (tripped)
		return -EINTR;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) < CHECK_NS)
		return 0;
	return pmpy_check_now();
}

int pmpy_interrupted(void)
{
	return PyErr_Occurred() != NULL;
}

int pmpy_allow_init(PyObject *m)
{
	PyObject *threading = PyImport_ImportModule("threading"), *main = NULL, *ident = NULL;

	if (threading)
		main = PyObject_CallMethod(threading, "main_thread", NULL);
	if (main)
		ident = PyObject_GetAttrString(main, "ident");
	if (ident)
		main_ident = PyLong_AsUnsignedLong(ident);
	Py_XDECREF(ident);
	Py_XDECREF(main);
	Py_XDECREF(threading);
	return PyErr_Occurred() ? -1 : 0;
}
