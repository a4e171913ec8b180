/*
 * _features.c - the rows of `pagemap features` (feature, status, detail) for Python: the CLI's own
 * cli/cmd_features.c compiled here over a small stand-in for its table writer, so the words that say
 * what is hidden and why are the tool's, never a copy that drifts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "_core.h"
#include "../../cli/cli.h"
#include "../../cli/output/output.h"

/* The rows being made: a list of 3-lists, the current call's only (the GIL serialises callers). */
static PyObject *rows;
static int failed;

struct out {
	int unused;
};
static struct out the_out;

bool out_parse_opt(struct out_opts *o, int c, const char *arg)
{
	return false;
}

void out_help(FILE *f, const struct out_col *cols, size_t n)
{
}

struct out *out_new(const char *name, const struct out_col *cols, size_t n, const char *defaults,
		    const struct out_opts *o)
{
	return &the_out;
}

void out_free(struct out *out)
{
}

int out_print(struct out *out)
{
	return failed ? -ENOMEM : 0;
}

/* A line is the index of its row in @rows, plus one (never NULL). */
struct libscols_line *out_line(struct out *out)
{
	PyObject *row = Py_BuildValue("[sss]", "", "", "");

	if (!row || PyList_Append(rows, row) < 0)
		failed = 1;
	Py_XDECREF(row);
	return (struct libscols_line *)(uintptr_t)PyList_Size(rows);
}

void out_str(struct out *out, struct libscols_line *ln, size_t id, const char *s)
{
	PyObject *row = PyList_GetItem(rows, (Py_ssize_t)(uintptr_t)ln - 1);
	PyObject *v = pmpy_str(s);	/* a replayed tree's kernel release, paths: any bytes */

	if (!row || !v || PyList_SetItem(row, (Py_ssize_t)id, v) < 0)
		failed = 1;
}

void cli_error(int err, const char *fmt, ...)
{
	failed = 1;
}

int cli_usage_error(const char *fmt, ...)
{
	failed = 1;
	return EXIT_USAGE;
}

int cli_bad_option(char **argv)
{
	failed = 1;
	return EXIT_USAGE;
}

#include "../../cli/cmd_features.c"

/* The rows `pagemap features` prints for @ctx, as a list of (feature, status, detail) tuples. */
PyObject *pmpy_features_rows(struct pm_ctx *ctx)
{
	char arg0[] = "features";
	char *argv[] = { arg0, NULL };
	PyObject *out = NULL, *t;
	Py_ssize_t i;
	int r;

	rows = PyList_New(0);
	if (!rows)
		return NULL;
	failed = 0;
	r = cmd_features(ctx, 1, argv);
	if (r != EXIT_OK || failed) {
		if (!PyErr_Occurred())
			pmpy_raise(errno ? errno : EIO, NULL, "cannot describe the features");
		goto out;
	}
	out = PyList_New(0);
	for (i = 0; out && i < PyList_Size(rows); i++) {
		t = PyList_AsTuple(PyList_GetItem(rows, i));
		if (!t || PyList_Append(out, t) < 0)
			Py_CLEAR(out);
		Py_XDECREF(t);
	}
out:
	Py_CLEAR(rows);
	return out;
}
