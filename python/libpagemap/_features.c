/*
 * _features.c - the rows of `pagemap features` (feature, status, detail) for Python: the library's
 * own words (pm_features_row), the same rows the tool prints, never a copy that drifts.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "_core.h"

/* One row as a (feature, status, detail) tuple; a replayed tree's kernel release is any bytes. */
static PyObject *row_tuple(const struct pm_feature_row *r)
{
	return Py_BuildValue("(NNN)", pmpy_str(r->key), pmpy_str(r->value), pmpy_str(r->why));
}

/*
 * The rows `pagemap features` prints for @c's context, as a list of (feature, status, detail) tuples. A
 * replayed snapshot is told by @c itself: pm_ctx_root() of one makes its tree of names, which nothing here reads.
 */
PyObject *pmpy_features_rows(CtxObject *c)
{
	struct pm_ctx *ctx = c->ctx;
	bool replay = c->snapshot && c->snapshot != Py_None;
	unsigned flags = replay || strcmp(pm_ctx_root(ctx), "/") ? 0 : PM_FEATURES_LIVE;
	/* Every answer, as the tool asks for them (probed already: this only looks them up). */
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_ALL);
	struct pm_feature_row r;
	PyObject *out, *t;
	size_t i;
	int rc = 0;

	if (!f)
		return pmpy_raise(errno ? errno : EIO, NULL, "cannot describe the features");
	out = PyList_New(0);
	for (i = 0; out && (rc = pm_features_row(f, flags, i, &r)) == 0; i++) {
		t = row_tuple(&r);
		if (!t || PyList_Append(out, t) < 0)
			Py_CLEAR(out);
		Py_XDECREF(t);
	}
	if (out && rc < 0) {
		Py_CLEAR(out);
		pmpy_raise(-rc, NULL, "cannot describe the features");
	}
	return out;
}
