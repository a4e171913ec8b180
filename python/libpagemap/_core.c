/* _core.c - the libpagemap extension module: errors, the Context, features, pure decoders and tables. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "_core.h"

PyTypeObject *pmpy_ctx_type;
static PyObject *error_factory;	/* libpagemap._make_error(errno, message, explanation) */

/*
 * The names in @what and @why come from the system or the user (paths, cgroups, a tree's file names): any
 * bytes. They reach Python as os.fsdecode would make them (surrogateescape), never as a UnicodeDecodeError
 * that hides the real error. An exception already set (a signal handler's, raised during the call) is kept.
 */
PyObject *pmpy_raise(int err, CtxObject *ctx, const char *fmt, ...)
{
	char what[512], why[1024];
	const char *tree = NULL;
	PyObject *exc;
	va_list ap;

	if (PyErr_Occurred())
		return NULL;
	if (err < 0)
		err = -err;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err == EBADMSG && ctx && ctx->ctx)
		tree = pm_ctx_tree_error(ctx->ctx);
	snprintf(why, sizeof(why), "%s%s%s", pm_strerror(err), tree ? ": " : "", tree ? tree : "");
	if (!error_factory) {
		PyErr_SetString(PyExc_OSError, what);
		return NULL;
	}
	exc = PyObject_CallFunction(error_factory, "iNN", err, PyUnicode_DecodeFSDefault(what),
				    PyUnicode_DecodeFSDefault(why));
	if (exc) {
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
		Py_DECREF(exc);
	}
	return NULL;
}

static PyObject *set_error_factory(PyObject *self, PyObject *f)
{
	Py_XDECREF(error_factory);
	error_factory = Py_NewRef(f);
	Py_RETURN_NONE;
}

/* ---- Context ---- */

/*
 * Every Context: long calls look for Ctrl-C (pmpy_check), and the features are probed now, with the GIL
 * held, so two threads' first calls never probe into the same struct at once.
 */
static void ctx_setup(struct pm_ctx *ctx)
{
	pm_ctx_set_check(ctx, pmpy_check, NULL);
	pm_ctx_features(ctx);
}

static PyObject *ctx_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "root", NULL };
	PyObject *root = Py_None, *bytes = NULL;
	CtxObject *c;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Context", kwlist, &root))
		return NULL;
	if (root != Py_None && !PyUnicode_FSConverter(root, &bytes))
		return NULL;
	c = (CtxObject *)PMPY_ALLOC(type);
	if (!c)
		goto out;
	c->snapshot = Py_NewRef(Py_None);
	c->kpage_lock = PyThread_allocate_lock();
	c->ctx = pm_ctx_new(bytes ? PyBytes_AsString(bytes) : NULL);
	if (!c->ctx || !c->kpage_lock) {
		if (!c->kpage_lock)
			PyErr_NoMemory();
		else
			pmpy_raise(errno, NULL, "cannot make a context for root %s", bytes ? PyBytes_AsString(bytes) : "/");
		Py_CLEAR(c);
		goto out;
	}
	ctx_setup(c->ctx);
out:
	Py_XDECREF(bytes);
	return (PyObject *)c;
}

static void ctx_dealloc(CtxObject *c)
{
	PyTypeObject *tp = Py_TYPE((PyObject *)c);

	pm_kpage_close(c->kpage);
	pm_ctx_free(c->ctx);
	if (c->kpage_lock)
		PyThread_free_lock(c->kpage_lock);
	Py_XDECREF(c->snapshot);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(c);
	Py_DECREF(tp);
}

/* Context.from_snapshot(path): a context replaying a snapshot file (pm_ctx_new_snapshot). */
static PyObject *ctx_from_snapshot(PyObject *cls, PyObject *arg)
{
	PyObject *bytes = NULL, *empty = NULL;
	struct pm_snapshot *s = NULL;
	struct pm_ctx *pc = NULL;
	CtxObject *c = NULL;
	char err[512] = "";
	int e = 0;

	if (!PyUnicode_FSConverter(arg, &bytes))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	s = pm_snapshot_open(PyBytes_AsString(bytes), err, sizeof(err));
	if (s) {
		pc = pm_ctx_new_snapshot(s);
		if (!pc)
			snprintf(err, sizeof(err), "%s", pm_snapshot_error(s) ? pm_snapshot_error(s) : "");
	}
	e = errno;
	pm_snapshot_close(s);
	Py_END_ALLOW_THREADS
	if (!pc) {
		pmpy_raise(e, NULL, "cannot replay snapshot %s%s%s", PyBytes_AsString(bytes), err[0] ? ": " : "", err);
		goto out;
	}
	empty = PyTuple_New(0);
	c = empty ? (CtxObject *)ctx_new((PyTypeObject *)cls, empty, NULL) : NULL;
	if (!c) {
		pm_ctx_free(pc);
		goto out;
	}
	pm_ctx_free(c->ctx);
	c->ctx = pc;
	ctx_setup(pc);
	Py_DECREF(c->snapshot);
	c->snapshot = Py_NewRef(arg);
out:
	Py_XDECREF(empty);
	Py_XDECREF(bytes);
	return (PyObject *)c;
}

static PyObject *ctx_root(CtxObject *c, void *closure)
{
	return PyUnicode_DecodeFSDefault(pm_ctx_root(c->ctx));
}

static PyObject *ctx_snapshot(CtxObject *c, void *closure)
{
	return Py_NewRef(c->snapshot);
}

static PyObject *ctx_tree_error(CtxObject *c, void *closure)
{
	const char *e = pm_ctx_tree_error(c->ctx);

	if (!e)
		Py_RETURN_NONE;
	return pmpy_str(e);	/* it names a file of the tree: any bytes */
}

static const char *tri(enum pm_tristate t)
{
	return t == PM_YES ? "yes" : t == PM_NO ? "no" : "unknown";
}

static int put(PyObject *d, const char *k, PyObject *v)
{
	int r;

	if (!v)
		return -1;
	r = PyDict_SetItemString(d, k, v);
	Py_DECREF(v);
	return r;
}

static int put_kfile(PyObject *d, const char *k, const struct pm_kfile *f)
{
	return put(d, k, Py_BuildValue("(Ni)", PyBool_FromLong(f->readable), f->error));
}

/* The probed features as a dict (the Python layer freezes it into Features). */
static PyObject *features_dict(const struct pm_features *f)
{
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (put(d, "kernel_release", pmpy_str(f->kernel_release)) ||
	    put(d, "kernel_version", Py_BuildValue("(III)", f->kernel_major, f->kernel_minor, f->kernel_patch)) ||
	    put(d, "page_size", PyLong_FromUnsignedLong(f->page_size)) ||
	    put(d, "pmd_size", pmpy_u64(f->pmd_size)) || put(d, "privileged", PyBool_FromLong(f->privileged)) ||
	    put(d, "layout", PyUnicode_FromString(pm_layout_name(f->layout))) ||
	    put(d, "layout_by_effect", PyBool_FromLong(f->layout_by_effect)) ||
	    put(d, "pfn_view", PyUnicode_FromString(pm_pfn_view_name(f->pfn_view))) ||
	    put(d, "pagemap_error", PyLong_FromLong(f->pagemap_error)) ||
	    put(d, "unpriv_pfn", PyUnicode_FromString(tri(f->unpriv_pfn))) ||
	    put(d, "zero_pfn", pmpy_u64(f->zero_pfn)) || put(d, "scan", PyBool_FromLong(f->scan)) ||
	    put(d, "scan_categories", pmpy_u64(f->scan_categories)) ||
	    put(d, "uffd_wp_async", PyUnicode_FromString(tri(f->uffd_wp_async))) ||
	    put(d, "uffd_features", pmpy_u64(f->uffd_features)) || put(d, "uffd_error", PyLong_FromLong(f->uffd_error)) ||
	    put(d, "soft_dirty", PyUnicode_FromString(tri(f->soft_dirty))) ||
	    put(d, "guard_regions", PyUnicode_FromString(tri(f->guard_regions))) ||
	    put(d, "page_mapcount", PyUnicode_FromString(tri(f->page_mapcount))) ||
	    put_kfile(d, "kpageflags", &f->kpageflags) || put_kfile(d, "kpagecount", &f->kpagecount) ||
	    put_kfile(d, "kpagecgroup", &f->kpagecgroup) || put_kfile(d, "page_idle", &f->page_idle) ||
	    put(d, "by_effect", PyBool_FromLong(f->by_effect)) ||
	    put(d, "zero_page", PyUnicode_FromString(tri(f->zero_page))) ||
	    put(d, "huge_zero_page", PyUnicode_FromString(tri(f->huge_zero_page)))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* Context._features(probe_all): (dict of fields, rows of `pagemap features`) */
static PyObject *ctx_features(CtxObject *c, PyObject *arg)
{
	const struct pm_features *f;
	int all = PyObject_IsTrue(arg);
	PyObject *rows = Py_None;

	if (all < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	f = all ? pm_ctx_probe(c->ctx, PM_PROBE_ALL) : pm_ctx_features(c->ctx);
	Py_END_ALLOW_THREADS
	if (!f)
		return pmpy_raise(errno, c, "cannot probe the kernel");
	if (all) {
		rows = pmpy_features_rows(c);	/* pm_features_row: the tool's words */
		if (!rows)
			return NULL;
	} else {
		Py_INCREF(rows);
	}
	return Py_BuildValue("(NN)", features_dict(f), rows);
}

static PyObject *ctx_set_backend(CtxObject *c, PyObject *arg)
{
	static const char *names[] = { "auto", "pread", "scan" };
	const char *s = PyUnicode_AsUTF8AndSize(arg, NULL);
	int i;

	if (!s)
		return NULL;
	for (i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			pm_ctx_set_backend(c->ctx, (enum pm_backend)i);
			Py_RETURN_NONE;
		}
	PyErr_Format(PyExc_ValueError, "unknown back end '%s' (auto, pread or scan)", s);
	return NULL;
}

static const char *state_name(enum pm_proc_state s)
{
	return s == PM_PROC_RUNNING ? "running" : s == PM_PROC_ZOMBIE ? "zombie" : s == PM_PROC_KTHREAD ? "kthread" : "gone";
}

static PyObject *proc_new(const struct pm_proc *p)
{
	PyObject *v[] = { PyLong_FromLong(p->pid), PyUnicode_FromString(state_name(p->state)),
			  p->uid_known ? PyLong_FromUnsignedLong(p->uid) : Py_NewRef(Py_None),
			  pmpy_str(p->comm) };

	return pmpy_record(pmpy_proc_type, v, 4);
}

/* Context.processes(): every process of ROOT/proc as Proc records. */
static PyObject *ctx_processes(CtxObject *c, PyObject *unused)
{
	struct pm_procs *it = pm_procs_open(c->ctx);
	const struct pm_proc *p;
	PyObject *list, *rec;
	int r;

	if (!it)
		return pmpy_raise(errno, c, "cannot list the processes of %sproc", pm_ctx_root(c->ctx));
	list = PyList_New(0);
	while (list && (r = pm_procs_next(it, &p)) == 0) {
		rec = proc_new(p);
		if (!rec || PyList_Append(list, rec) < 0)
			Py_CLEAR(list);
		Py_XDECREF(rec);
	}
	pm_procs_close(it);
	if (list && r < 0) {
		Py_CLEAR(list);
		pmpy_raise(r, c, "cannot list the processes");
	}
	return list;
}

static PyObject *ctx_memcg_of(CtxObject *c, PyObject *arg)
{
	char buf[4096];
	pid_t pid;
	int r;

	if (!pmpy_pid_arg(arg, &pid))
		return NULL;
	r = pm_memcg_of(c->ctx, pid, buf, sizeof(buf));
	if (r == -ENODATA)
		Py_RETURN_NONE;
	if (r < 0)
		return pmpy_raise(r, c, "cannot read the memory cgroup of process %d", (int)pid);
	return pmpy_str(buf);	/* a cgroup's name is any bytes its creator chose */
}

/* The kpage handle accounting, v2p, shared and kpage_read share, opened once per context. */
int pmpy_ctx_kpage_lock(CtxObject *c, struct pm_kpage **out)
{
	unsigned long me = PyThread_get_thread_ident();

	if (c->kpage_owner == me) {
		c->kpage_depth++;
		*out = NULL;
		return -EDEADLK;
	}
	PyThread_acquire_lock(c->kpage_lock, WAIT_LOCK);
	c->kpage_owner = me;
	c->kpage_depth = 1;
	if (!c->kpage && !c->kpage_err) {
		c->kpage = pm_kpage_open(c->ctx);
		if (!c->kpage)
			c->kpage_err = -errno;
	}
	*out = c->kpage;
	return c->kpage_err;
}

void pmpy_ctx_kpage_unlock(CtxObject *c)
{
	if (--c->kpage_depth)
		return;
	c->kpage_owner = 0;
	PyThread_release_lock(c->kpage_lock);
}

static PyObject *ctx_state(CtxObject *c, PyObject *arg)
{
	pid_t pid;

	if (!pmpy_pid_arg(arg, &pid))
		return NULL;
	return PyUnicode_FromString(state_name(pm_proc_state(c->ctx, pid)));
}

static PyMethodDef ctx_methods[] = {
	{ "from_snapshot", ctx_from_snapshot, METH_O | METH_CLASS, "A context replaying a snapshot file." },
	{ "_features", (PyCFunction)ctx_features, METH_O, NULL },
	{ "set_backend", (PyCFunction)ctx_set_backend, METH_O, "Force the walker back end: auto, pread or scan." },
	{ "processes", (PyCFunction)ctx_processes, METH_NOARGS, "Every process of ROOT/proc (Proc records)." },
	{ "memcg_of", (PyCFunction)ctx_memcg_of, METH_O, "The memory cgroup path of a process, None if it has none." },
	{ "proc_state", (PyCFunction)ctx_state, METH_O, "running, zombie, kthread or gone." },
	{ "shared", pmpy_ctx_shared, METH_VARARGS, "What processes share (root): dict of sums, maps and pairs." },
	{ "numa_nodes", pmpy_ctx_numa_nodes, METH_NOARGS, "The NUMA nodes: CPUs, memory, tiers (None: none), distances." },
	{ "kpage_read", pmpy_ctx_kpage_read, METH_VARARGS,
	  "kpage_read(pfn, n) -> (flags, counts, cgroups): uint64 Arrays of /proc/kpage*, None where unreadable (root)." },
	{ "cache_stat", pmpy_ctx_cache_stat, METH_O,
	  "cache_stat(path) -> dict: the page cache of one file; a count the method cannot measure is None." },
	{ "write_snapshot", (PyCFunction)(void (*)(void))pmpy_ctx_write_snapshot, METH_VARARGS | METH_KEYWORDS,
	  "write_snapshot(path, pids, phys=False, pfn='keep'): one snapshot file (pagemap --snapshot replays it)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef ctx_getset[] = {
	{ "root", (getter)ctx_root, NULL, "The root prefix ('/' live).", NULL },
	{ "snapshot", (getter)ctx_snapshot, NULL, "The snapshot replayed, or None.", NULL },
	{ "tree_error", (getter)ctx_tree_error, NULL, "What was wrong with the replayed tree, or None.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot ctx_slots[] = {
	{ Py_tp_new, ctx_new },
	{ Py_tp_dealloc, ctx_dealloc },
	{ Py_tp_methods, ctx_methods },
	{ Py_tp_getset, ctx_getset },
	{ Py_tp_doc, "Context(root=None): the live system, or a captured tree replayed as --root does." },
	{ 0, NULL },
};

static PyType_Spec ctx_spec = { "libpagemap.Context", sizeof(CtxObject), 0,
				Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, ctx_slots };

/* ---- pure module functions ---- */

static const char *layout_names[] = { "unknown", "pshift", "v2", "current" };

static int layout_of(PyObject *o, enum pm_layout *out)
{
	const char *s = PyUnicode_AsUTF8AndSize(o, NULL);
	int i;

	if (!s)
		return -1;
	for (i = 0; i < 4; i++)
		if (!strcmp(s, layout_names[i])) {
			*out = (enum pm_layout)i;
			return 0;
		}
	PyErr_Format(PyExc_ValueError, "unknown layout '%s' (pshift, v2 or current)", s);
	return -1;
}

/* decode(raw, layout="current", frames=True, page_shift=12, swap_active=False) -> Entry (pure; fast path). */
static PyObject *mod_decode(PyObject *self, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	struct pm_decode_info info = { PM_LAYOUT_CURRENT, 12, true, false };
	struct pm_entry e;
	uint64_t raw;

	if (n < 1 || n > 5 || kw) {
		PyErr_SetString(PyExc_TypeError, "decode(raw, layout='current', frames=True, page_shift=12, "
						 "swap_active=False): positional arguments only");
		return NULL;
	}
	raw = PyLong_AsUnsignedLongLong(args[0]);
	if (raw == (uint64_t)-1 && PyErr_Occurred())
		return NULL;
	if (n > 1 && layout_of(args[1], &info.layout) < 0)
		return NULL;
	if (n > 2)
		info.frame_visible = PyObject_IsTrue(args[2]);
	if (n > 3) {
		unsigned long shift = PyLong_AsUnsignedLong(args[3]);

		if (shift > 63 && !PyErr_Occurred())	/* a cast would make 2**32 + 12 pass for 12 */
			PyErr_SetString(PyExc_ValueError, "page_shift is 0 to 63");
		info.page_shift = (unsigned)shift;
	}
	if (n > 4)
		info.swap_active = PyObject_IsTrue(args[4]);
	if (PyErr_Occurred())
		return NULL;
	if (pm_entry_decode(raw, &info, &e) < 0) {
		PyErr_Format(PyExc_ValueError, "entry %#llx is impossible in the %s layout", (unsigned long long)raw,
			     layout_names[info.layout]);
		return NULL;
	}
	return pmpy_entry_new(&e);
}

/* flag_table() -> [(bit, name, letter, meaning, raw_bit, (since_major, since_minor), needs, scan_category)] */
static PyObject *mod_flag_table(PyObject *self, PyObject *unused)
{
	size_t n, nf, i, j;
	const struct pm_flag_info *t = pm_flag_table(&n);
	const struct pm_flag_fact *facts = pm_flag_facts(&nf);
	PyObject *list = PyList_New(0), *row;

	for (i = 0; list && i < n; i++) {
		const struct pm_flag_fact *fa = NULL;

		for (j = 0; j < nf; j++)
			if (facts[j].bit == t[i].bit)
				fa = &facts[j];
		row = Py_BuildValue("(Isssi(II)IK)", t[i].bit, t[i].name, (char[]){ t[i].letter, 0 }, t[i].meaning,
				    fa ? fa->raw_bit : -1, fa ? fa->since_major : 0, fa ? fa->since_minor : 0,
				    fa ? fa->needs : 0, (unsigned long long)(fa ? fa->scan_category : 0));
		if (!row || PyList_Append(list, row) < 0)
			Py_CLEAR(list);
		Py_XDECREF(row);
	}
	return list;
}

/* kpf_table() -> [(bit, name, letter, meaning, internal)] */
static PyObject *mod_kpf_table(PyObject *self, PyObject *unused)
{
	size_t n, i;
	const struct pm_kpf_info *t = pm_kpf_table(&n);
	PyObject *list = PyList_New(0), *row;

	for (i = 0; list && i < n; i++) {
		row = Py_BuildValue("(IsssN)", t[i].bit, t[i].name, (char[]){ t[i].letter, 0 }, t[i].meaning,
				    PyBool_FromLong(t[i].internal));
		if (!row || PyList_Append(list, row) < 0)
			Py_CLEAR(list);
		Py_XDECREF(row);
	}
	return list;
}

static PyObject *mod_flags_letters(PyObject *self, PyObject *arg)
{
	unsigned long f = PyLong_AsUnsignedLong(arg);
	char buf[PM_PAGE_NFLAGS + 1];

	if (f == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	if (f > UINT32_MAX) {	/* flags are 32 bits: a cast would drop the high ones silently */
		PyErr_SetString(PyExc_OverflowError, "flags are 32 bits");
		return NULL;
	}
	return PyUnicode_FromString(pm_flags_letters((uint32_t)f, buf, sizeof(buf)));
}

static PyObject *mod_kpf_describe(PyObject *self, PyObject *arg)
{
	uint64_t f = PyLong_AsUnsignedLongLong(arg);
	char buf[2048];

	if (f == (uint64_t)-1 && PyErr_Occurred())
		return NULL;
	pm_kpf_describe(f, buf, sizeof(buf));
	return PyUnicode_FromString(buf);
}

/* memcg_within(cg, path): both str (os.fsencode'd: surrogateescape) or bytes, as cgroup names are any bytes. */
static PyObject *mod_memcg_within(PyObject *self, PyObject *args)
{
	PyObject *cg, *path, *out;

	if (!PyArg_ParseTuple(args, "O&O&:memcg_within", PyUnicode_FSConverter, &cg, PyUnicode_FSConverter, &path))
		return NULL;
	out = PyBool_FromLong(pm_memcg_within(PyBytes_AsString(cg), PyBytes_AsString(path)));
	Py_DECREF(cg);
	Py_DECREF(path);
	return out;
}

/* _check_pid(pid) -> pid: the range check every PID argument gets (ps(pids=...) filters with it). */
static PyObject *mod_check_pid(PyObject *self, PyObject *arg)
{
	pid_t pid;

	if (!pmpy_pid_arg(arg, &pid))
		return NULL;
	return PyLong_FromLong(pid);
}

static PyMethodDef mod_methods[] = {
	{ "_set_error_factory", set_error_factory, METH_O, NULL },
	{ "decode", (PyCFunction)(void (*)(void))mod_decode, METH_FASTCALL | METH_KEYWORDS,
	  "decode(raw, layout='current', frames=True, page_shift=12, swap_active=False) -> Entry" },
	{ "flag_table", mod_flag_table, METH_NOARGS, "The PM_PAGE_* flag table with each flag's kernel facts." },
	{ "kpf_table", mod_kpf_table, METH_NOARGS, "The /proc/kpageflags bit table (page-types' names)." },
	{ "flags_letters", mod_flags_letters, METH_O, "Flags as one letter per flag, '-' where clear." },
	{ "kpf_describe", mod_kpf_describe, METH_O, "kpageflags bits by name, comma separated." },
	{ "memcg_within", mod_memcg_within, METH_VARARGS, "Is cgroup CG at or below PATH? (str or bytes)" },
	{ "_check_pid", mod_check_pid, METH_O, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef moddef = { PyModuleDef_HEAD_INIT, "libpagemap._core",
				     "libpagemap: Linux /proc/PID/pagemap, decoded and walked (C core).", -1,
				     mod_methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m = PyModule_Create(&moddef);

	if (!m)
		return NULL;
	pmpy_ctx_type = (PyTypeObject *)PyType_FromSpec(&ctx_spec);
	if (!pmpy_ctx_type || PyModule_AddObjectRef(m, "Context", (PyObject *)pmpy_ctx_type) < 0 ||
	    pmpy_records_init(m) < 0 || pmpy_array_init(m) < 0 || pmpy_target_init(m) < 0 ||
	    pmpy_watch_init(m) < 0 || pmpy_allow_init(m) < 0 || PyModule_AddStringConstant(m, "RUN_FORMAT", RUN_FORMAT) < 0 ||
	    PyModule_AddIntConstant(m, "RUN_ITEMSIZE", sizeof(struct pmpy_run)) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
