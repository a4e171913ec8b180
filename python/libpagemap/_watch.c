/* _watch.c - Watch (pm_watch: the pages a process writes) and Context.shared (pm_share). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "_core.h"

PyTypeObject *pmpy_watch_type;

/*
 * A Watch: one pm_watch. As with a Target, calls count themselves in @busy and close() meanwhile defers.
 * The handle is made for one caller at a time (collect's result is borrowed until the next call): @lock
 * serialises the calls of several threads, and @owner refuses a signal handler's call inside one.
 */
typedef struct {
	PyObject_HEAD
	struct pm_watch *w;
	CtxObject *ctx;
	long pid;
	int busy;
	bool closing;
	PyThread_type_lock lock;
	_Atomic unsigned long owner;
} WatchObject;

/*
 * The library's back ends as words: "uffd, soft-dirty, mprotect, fork-snapshot", the last
 * joined by @last. The library lists them, so a back end it adds shows here by itself.
 */
static const char *method_list(char *buf, size_t size, const char *last)
{
	size_t i, n = pm_watch_method_count(), len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", !i ? "" : i + 1 == n ? last : ", ",
					pm_watch_method_name(pm_watch_method_at(i)));
	return buf;
}

static int method_of(const char *s, enum pm_watch_method *out)
{
	/* "snapshot": the binding took the enum's own name for fork-snapshot, and still does. */
	int r = pm_watch_method_from_name(strcmp(s, "snapshot") ? s : "fork-snapshot");
	char names[256];

	if (r >= 0) {
		*out = (enum pm_watch_method)r;
		return 0;
	}
	PyErr_Format(PyExc_ValueError, "unknown watch method '%s' (auto, %s)", s,
		     method_list(names, sizeof(names), ", "));
	return -1;
}

static PyObject *watch_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "context", "pid", "method", "nothp", NULL };
	enum pm_watch_method method = PM_WATCH_AUTO;
	const char *mname = "auto";
	WatchObject *w;
	PyObject *ctx;
	int nothp = 0, e;
	pid_t pid = 0;
	char why[512] = "";

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O&sp:Watch", kwlist, pmpy_ctx_type, &ctx, pmpy_pid_arg, &pid,
					 &mname, &nothp) ||
	    method_of(mname, &method) < 0)
		return NULL;
	w = (WatchObject *)PMPY_ALLOC(type);
	if (!w)
		return NULL;
	w->ctx = (CtxObject *)Py_NewRef(ctx);
	w->pid = pid;
	w->lock = PyThread_allocate_lock();
	if (!w->lock) {
		Py_DECREF(w);
		return PyErr_NoMemory();
	}
	Py_BEGIN_ALLOW_THREADS
	w->w = pm_watch_new(w->ctx->ctx, pid, method, nothp ? PM_WATCH_NOTHP : 0);
	e = errno;
	if (!w->w && e == EOPNOTSUPP)
		pm_watch_explain(w->ctx->ctx, pid, method, why, sizeof(why));
	Py_END_ALLOW_THREADS
	if (!w->w) {
		pmpy_raise(e, w->ctx, "cannot watch process %d with %s%s%s", (int)pid, mname, why[0] ? ": " : "", why);
		Py_DECREF(w);
		return NULL;
	}
	return (PyObject *)w;
}

static void watch_free(WatchObject *w)
{
	struct pm_watch *h = w->w;

	w->w = NULL;
	Py_BEGIN_ALLOW_THREADS
	pm_watch_free(h);
	Py_END_ALLOW_THREADS
}

static void watch_dealloc(WatchObject *w)
{
	PyTypeObject *tp = Py_TYPE((PyObject *)w);

	watch_free(w);
	if (w->lock)
		PyThread_free_lock(w->lock);
	Py_XDECREF((PyObject *)w->ctx);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(w);
	Py_DECREF(tp);
}

static int check_open(WatchObject *w)
{
	if (w->w && !w->closing)
		return 0;
	PyErr_SetString(PyExc_ValueError, "the watch is closed");
	return -1;
}

/* Count a call that uses the handle (see WatchObject). */
static int enter(WatchObject *w)
{
	if (check_open(w))
		return -1;
	if (w->owner == PyThread_get_thread_ident()) {
		PyErr_SetString(PyExc_RuntimeError, "the watch is in use by this thread (a signal handler or finalizer "
						    "run inside one of its calls)");
		return -1;
	}
	w->busy++;
	return 0;
}

/* Without the GIL: the handle for this thread alone, until release(). */
static void hold(WatchObject *w)
{
	PyThread_acquire_lock(w->lock, WAIT_LOCK);
	w->owner = PyThread_get_thread_ident();
}

static void release(WatchObject *w)
{
	w->owner = 0;
	PyThread_release_lock(w->lock);
}

static void leave(WatchObject *w)
{
	if (--w->busy == 0 && w->closing)
		watch_free(w);
}

/* Stop now, or, while calls of other threads still use the handle, when the last of them ends. */
static PyObject *watch_close(WatchObject *w, PyObject *unused)
{
	if (w->busy)
		w->closing = true;
	else
		watch_free(w);
	Py_RETURN_NONE;
}

/* Watch.add(start, end, populated=False) */
static PyObject *watch_add(WatchObject *w, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "start", "end", "populated", NULL };
	uint64_t start, end;
	int populated = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|p:add", kwlist, pmpy_u64_arg, &start, pmpy_u64_arg, &end,
					 &populated) || enter(w))
		return NULL;
	PMPY_ALLOW_THREADS
	hold(w);
	r = pm_watch_add(w->w, start, end, populated ? PM_WATCH_POPULATED : 0);
	release(w);
	PMPY_END_ALLOW_THREADS
	leave(w);
	if (r < 0 || pmpy_interrupted())
		return pmpy_raise(r, w->ctx, "cannot watch %#llx-%#llx of process %ld", (unsigned long long)start,
				  (unsigned long long)end, w->pid);
	Py_RETURN_NONE;
}

/* Watch.add_writable(populated=False) -> dict: every writable mapping not watched yet. */
static PyObject *watch_add_writable(WatchObject *w, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "populated", NULL };
	struct pm_watch_batch b;
	int populated = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:add_writable", kwlist, &populated) || check_open(w))
		return NULL;
	/*
	 * mprotect watches the caller: every writable mapping of the interpreter is its own heap, its threads'
	 * stacks and the handler's: the first write there faulted for good (SIGSEGV, 3 of 3).
	 */
	if (pm_watch_method(w->w) == PM_WATCH_MPROTECT) {
		PyErr_SetString(PyExc_ValueError, "add_writable() with mprotect would make this interpreter's own heap "
						  "and stacks read-only: add() the ranges to watch");
		return NULL;
	}
	if (enter(w))
		return NULL;
	PMPY_ALLOW_THREADS
	hold(w);
	r = pm_watch_add_writable(w->w, populated ? PM_WATCH_POPULATED : 0, &b);
	release(w);
	PMPY_END_ALLOW_THREADS
	leave(w);
	if (r < 0 || pmpy_interrupted())
		return pmpy_raise(r, w->ctx, "cannot watch the writable mappings of process %ld", w->pid);
	return Py_BuildValue("{s:n,s:n,s:n,s:i}", "added", (Py_ssize_t)b.added, "vanished", (Py_ssize_t)b.vanished,
			     "failed", (Py_ssize_t)b.failed, "error", b.error);
}

/* Watch.collect(reset=True) -> Array of written ranges (WRITTEN_FORMAT: start, end, huge). */
static PyObject *watch_collect(WatchObject *w, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "reset", NULL };
	const struct pm_written *out;
	ArrayObject *a;
	int reset = 1, r;
	size_t n, i;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:collect", kwlist, &reset) || enter(w))
		return NULL;
	PMPY_ALLOW_THREADS
	hold(w);
	r = pm_watch_collect(w->w, reset ? PM_WATCH_RESET : 0, &out, &n);
	PMPY_END_ALLOW_THREADS
	if (r < 0 || pmpy_interrupted()) {
		release(w);
		pmpy_raise(r, w->ctx, "cannot collect the writes of process %ld", w->pid);
		leave(w);
		return NULL;
	}
	/* @out is the handle's until its next call: copied still holding it, before leave(), which may free it */
	a = (ArrayObject *)pmpy_array_new(ARRAY_WRITTEN, (Py_ssize_t)n, sizeof(struct pmpy_written), WRITTEN_FORMAT);
	if (!a) {
		release(w);
		leave(w);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct pmpy_written *o = (struct pmpy_written *)a->data + i;

		memset(o, 0, sizeof(*o));
		o->start = out[i].start;
		o->end = out[i].end;
		o->huge = out[i].huge;
	}
	release(w);
	leave(w);
	return (PyObject *)a;
}

static PyObject *watch_method(WatchObject *w, void *closure)
{
	if (check_open(w))
		return NULL;
	return PyUnicode_FromString(pm_watch_method_name(pm_watch_method(w->w)));
}

static PyObject *watch_reason(WatchObject *w, void *closure)
{
	if (check_open(w))
		return NULL;
	return pmpy_str(pm_watch_reason(w->w));
}

static PyObject *watch_notice(WatchObject *w, void *closure)
{
	const char *n;

	if (check_open(w))
		return NULL;
	n = pm_watch_notice(w->w);
	if (!n)
		Py_RETURN_NONE;
	return pmpy_str(n);
}

static PyObject *watch_atomic(WatchObject *w, void *closure)
{
	if (check_open(w))
		return NULL;
	return PyBool_FromLong(pm_watch_atomic(w->w));
}

static PyObject *watch_stats(WatchObject *w, void *closure)
{
	const struct pm_watch_stats *s;

	if (check_open(w))
		return NULL;
	s = pm_watch_stats(w->w);
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "collects", s->collects, "written_pages",
			     s->written_pages, "huge_pages", s->huge_pages, "faults", s->faults, "overflows",
			     s->overflows, "rearms", s->rearms, "sparse_bytes", s->sparse_bytes, "shared_bytes",
			     s->shared_bytes, "content_compared", s->content_compared, "hashed_bytes", s->hashed_bytes);
}

static PyMethodDef watch_methods[] = {
	{ "close", (PyCFunction)watch_close, METH_NOARGS, "Stop watching (unregister, restore protections)." },
	{ "add", (PyCFunction)(void (*)(void))watch_add, METH_VARARGS | METH_KEYWORDS,
	  "add(start, end, populated=False): watch [start, end) too." },
	{ "add_writable", (PyCFunction)(void (*)(void))watch_add_writable, METH_VARARGS | METH_KEYWORDS,
	  "add_writable(populated=False) -> dict: watch every writable mapping not watched yet." },
	{ "collect", (PyCFunction)(void (*)(void))watch_collect, METH_VARARGS | METH_KEYWORDS,
	  "collect(reset=True) -> Array of (start, end, huge): pages written since the last reset." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef watch_getset[] = {
	{ "method", (getter)watch_method, NULL, NULL, NULL },	/* its doc: pmpy_watch_init */
	{ "reason", (getter)watch_reason, NULL, "why this back end was chosen", NULL },
	{ "notice", (getter)watch_notice, NULL, "None, or what the watched ranges change in a collect's cost or sight "
	  "(uffd: huge pages left whole, and how their writes are told); set by the add that finds one", NULL },
	{ "atomic", (getter)watch_atomic, NULL, "does a reset never lose a concurrent write?", NULL },
	{ "stats", (getter)watch_stats, NULL, "running counts", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot watch_slots[] = {
	{ Py_tp_new, watch_new },
	{ Py_tp_dealloc, watch_dealloc },
	{ Py_tp_methods, watch_methods },
	{ Py_tp_getset, watch_getset },
	{ Py_tp_doc, "Watch(context, pid=0, method='auto', nothp=False): the pages a process writes." },
	{ 0, NULL },
};

static PyType_Spec watch_spec = { "libpagemap.Watch", sizeof(WatchObject), 0,
				  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, watch_slots };

int pmpy_watch_init(PyObject *m)
{
	static char method_doc[256];	/* "uffd, soft-dirty, mprotect or fork-snapshot" */

	watch_getset[0].doc = method_list(method_doc, sizeof(method_doc), " or ");
	pmpy_watch_type = (PyTypeObject *)PyType_FromSpec(&watch_spec);
	return pmpy_watch_type ? PyModule_AddObjectRef(m, "Watch", (PyObject *)pmpy_watch_type) : -1;
}

/* ---- shared ---- */

/* Add every PID of @pids to @s; returns 0 or -errno with *@bad the PID that failed. */
static int share_add_all(struct pm_ctx *ctx, struct pm_share *s, const pid_t *pids, Py_ssize_t n, long *bad)
{
	Py_ssize_t i;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		struct pm_target *t = pm_target_open(ctx, pids[i]);

		*bad = pids[i];
		r = t ? pm_share_add(s, t) : -errno;
		pm_target_close(t);
	}
	return r ? r : pm_share_finish(s);
}

static PyObject *share_result(struct pm_share *s)
{
	const struct pm_share_map *m;
	const struct pm_share_pair *p;
	struct pm_share_sum sum;
	PyObject *maps = PyList_New(0), *pairs = PyList_New(0), *procs = PyList_New(0), *rec;
	unsigned i;

	while (maps && pm_share_next_map(s, &m) == 0) {
		rec = Py_BuildValue("(lNN)", (long)m->pid, pmpy_mapping_new(&m->map), pmpy_share_sum_new(&m->sum));
		if (!rec || PyList_Append(maps, rec) < 0)
			Py_CLEAR(maps);
		Py_XDECREF(rec);
	}
	while (pairs && pm_share_next_pair(s, &p) == 0) {
		rec = Py_BuildValue("(lKlKKKK)", (long)p->a->pid, (unsigned long long)p->a->map.start, (long)p->b->pid,
				    (unsigned long long)p->b->map.start, (unsigned long long)p->shared,
				    (unsigned long long)p->outside, (unsigned long long)p->swap);
		if (!rec || PyList_Append(pairs, rec) < 0)
			Py_CLEAR(pairs);
		Py_XDECREF(rec);
	}
	for (i = 0; procs && i < pm_share_ntargets(s); i++) {
		pm_share_sum(s, (int)i, PM_SHARE_ALL, &sum);
		rec = pmpy_share_sum_new(&sum);
		if (!rec || PyList_Append(procs, rec) < 0)
			Py_CLEAR(procs);
		Py_XDECREF(rec);
	}
	pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &sum);
	return Py_BuildValue("{s:N,s:N,s:N,s:N}", "total", pmpy_share_sum_new(&sum), "processes", procs, "maps", maps,
			     "pairs", pairs);
}

/* Context.shared(pids) -> {"total", "processes", "maps", "pairs"} (root: frames and kpagecount). */
PyObject *pmpy_ctx_shared(PyObject *self, PyObject *args)
{
	CtxObject *c = (CtxObject *)self;
	PyObject *seq, *out = NULL;
	struct pm_kpage *k = NULL;
	struct pm_share *s;
	Py_ssize_t n;
	pid_t *pids;
	long bad = 0;
	int r, e = 0;

	if (!PyArg_ParseTuple(args, "O:shared", &seq) || !(pids = pmpy_pid_list(seq, &n)))
		return NULL;
	/* the share reads kpagecount through the context's handle until it is freed: hold it that long */
	PMPY_ALLOW_THREADS
	if (pmpy_ctx_kpage_lock(c, &k) < 0)
		k = NULL;	/* pm_share_add reports the open error */
	s = pm_share_new(c->ctx, k);
	if (!s)
		e = errno;
	else
		r = share_add_all(c->ctx, s, pids, n, &bad);
	PMPY_END_ALLOW_THREADS
	if (!s)
		pmpy_raise(e, c, "cannot compare processes");
	else
		out = r < 0 || pmpy_interrupted() ? pmpy_raise(r, c, "cannot read what process %ld shares", bad) :
						    share_result(s);
	pm_share_free(s);
	pmpy_ctx_kpage_unlock(c);
	free(pids);
	return out;
}
