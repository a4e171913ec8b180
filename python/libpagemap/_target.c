/* _target.c - Target: one process (pm_target) with raw reads, walks into arrays, maps, usage, accounting, v2p. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "_core.h"

PyTypeObject *pmpy_target_type;

static PyObject *target_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "context", "pid", NULL };
	PyObject *ctx;
	TargetObject *t;
	pid_t pid = 0;
	int e;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O&:Target", kwlist, pmpy_ctx_type, &ctx, pmpy_pid_arg, &pid))
		return NULL;
	t = (TargetObject *)PMPY_ALLOC(type);
	if (!t)
		return NULL;
	t->ctx = (CtxObject *)Py_NewRef(ctx);
	Py_BEGIN_ALLOW_THREADS
	t->t = pm_target_open(t->ctx->ctx, pid);
	e = errno;
	Py_END_ALLOW_THREADS
	if (!t->t) {
		if (pid)
			pmpy_raise(e, t->ctx, "cannot open process %d", (int)pid);
		else
			pmpy_raise(e, t->ctx, "cannot open this process");
		Py_DECREF(t);
		return NULL;
	}
	{
		const struct pm_features *f = pm_ctx_features(t->ctx->ctx);

		t->page_size = f ? f->page_size : 4096;
	}
	return (PyObject *)t;
}

static void target_dealloc(TargetObject *t)
{
	PyTypeObject *tp = Py_TYPE((PyObject *)t);

	pm_target_close(t->t);
	Py_XDECREF((PyObject *)t->ctx);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(t);
	Py_DECREF(tp);
}

/* For calls that keep the GIL from start to end: nothing can close the handle under them. */
static int check_open(TargetObject *t)
{
	if (t->t && !t->closing)
		return 0;
	PyErr_SetString(PyExc_ValueError, "the target is closed");
	return -1;
}

int pmpy_target_enter(TargetObject *t)
{
	if (check_open(t))
		return -1;
	t->busy++;
	return 0;
}

void pmpy_target_leave(TargetObject *t)
{
	if (--t->busy == 0 && t->closing) {
		pm_target_close(t->t);
		t->t = NULL;
	}
}

/* Close now, or, while calls of other threads still use the handle, when the last of them ends. */
static PyObject *target_close(TargetObject *t, PyObject *unused)
{
	if (t->busy) {
		t->closing = true;
		Py_RETURN_NONE;
	}
	pm_target_close(t->t);
	t->t = NULL;
	Py_RETURN_NONE;
}

static PyObject *target_pid(TargetObject *t, void *closure)
{
	return PyLong_FromLong(t->t && !t->closing ? pm_target_pid(t->t) : -1);
}

static PyObject *target_pfn_view(TargetObject *t, void *closure)
{
	if (check_open(t))
		return NULL;
	return PyUnicode_FromString(pm_pfn_view_name(pm_target_pfn_view(t->t)));
}

static PyObject *target_page_size(TargetObject *t, void *closure)
{
	return PyLong_FromUnsignedLong(t->page_size);
}

static PyObject *target_context(TargetObject *t, void *closure)
{
	return Py_NewRef((PyObject *)t->ctx);
}

static PyObject *target_decode_info(TargetObject *t, void *closure)
{
	static const char *layouts[] = { "unknown", "pshift", "v2", "current" };
	struct pm_decode_info i;

	if (check_open(t))
		return NULL;
	pm_target_decode_info(t->t, &i);
	{
		PyObject *v[] = { PyUnicode_FromString(layouts[i.layout & 3]), PyLong_FromUnsignedLong(i.page_shift),
				  PyBool_FromLong(i.frame_visible), PyBool_FromLong(i.swap_active) };

		return pmpy_record(pmpy_decode_info_type, v, 4);
	}
}

/* Target.decode(raw) -> Entry, as this target's entries decode. */
static PyObject *target_decode(TargetObject *t, PyObject *arg)
{
	struct pm_decode_info i;
	struct pm_entry e;
	uint64_t raw = PyLong_AsUnsignedLongLong(arg);

	if ((raw == (uint64_t)-1 && PyErr_Occurred()) || check_open(t))
		return NULL;
	pm_target_decode_info(t->t, &i);
	pm_entry_decode(raw, &i, &e);
	return pmpy_entry_new(&e);
}

#define READ_PIECE (1u << 20)	/* entries per pread of read(): 8 MiB, between two looks for Ctrl-C */

/* Read @n entries from page @vpn into @buf in pieces (pm_target_read asks pmpy_check before each). */
static ssize_t read_pieces(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = pm_target_read(t, vpn + done, buf + done, n - done < READ_PIECE ? n - done : READ_PIECE);
		if (r < 0)
			return r;
		done += (size_t)r;
		if (!r || (size_t)r < READ_PIECE)	/* the end of the address space */
			break;
	}
	return (ssize_t)done;
}

/* Target.read(addr, npages) -> Array of raw uint64 entries, the GIL released while reading. */
static PyObject *target_read(TargetObject *t, PyObject *args)
{
	uint64_t addr, n;
	ArrayObject *a;
	ssize_t r;

	if (!PyArg_ParseTuple(args, "O&O&:read", pmpy_u64_arg, &addr, pmpy_u64_arg, &n) || pmpy_target_enter(t))
		return NULL;
	/* no address space has 2^52 pages: past it, asking for memory would only fail */
	if (n > PY_SSIZE_T_MAX / 8 || n > (UINT64_MAX / t->page_size)) {
		pmpy_target_leave(t);
		return PyErr_NoMemory();
	}
	a = (ArrayObject *)pmpy_array_new(ARRAY_ENTRIES, (Py_ssize_t)n, 8, "Q");
	if (!a) {
		pmpy_target_leave(t);
		return NULL;
	}
	PMPY_ALLOW_THREADS
	r = read_pieces(t->t, addr / t->page_size, (uint64_t *)a->data, (size_t)n);
	PMPY_END_ALLOW_THREADS
	if (r < 0 || pmpy_interrupted()) {
		Py_DECREF(a);
		pmpy_raise((int)r, t->ctx, "cannot read the pagemap of process %d at %#llx", pm_target_pid(t->t),
			   (unsigned long long)addr);
		pmpy_target_leave(t);
		return NULL;
	}
	a->n = a->shape = r;
	a->start = addr / t->page_size * t->page_size;
	pm_target_decode_info(t->t, &a->decode);
	a->has_decode = true;
	a->known = pmpy_entry_known(pm_ctx_features(t->ctx->ctx), &a->decode);
	pmpy_target_leave(t);
	return (PyObject *)a;
}

/* Target.read_into(addr, buffer) -> entries read: into a writable buffer of 8-byte items (numpy uint64). */
static PyObject *target_read_into(TargetObject *t, PyObject *args)
{
	uint64_t addr;
	PyObject *obj;
	Py_buffer b;
	ssize_t r;

	if (!PyArg_ParseTuple(args, "O&O:read_into", pmpy_u64_arg, &addr, &obj))
		return NULL;
	if (PyObject_GetBuffer(obj, &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	if (pmpy_target_enter(t)) {
		PyBuffer_Release(&b);
		return NULL;
	}
	PMPY_ALLOW_THREADS
	r = read_pieces(t->t, addr / t->page_size, (uint64_t *)b.buf, (size_t)b.len / 8);
	PMPY_END_ALLOW_THREADS
	PyBuffer_Release(&b);
	if (r < 0 || pmpy_interrupted())
		pmpy_raise((int)r, t->ctx, "cannot read the pagemap of process %d at %#llx", pm_target_pid(t->t),
			   (unsigned long long)addr);
	pmpy_target_leave(t);
	return PyErr_Occurred() ? NULL : PyLong_FromSsize_t(r);
}

/* A mapping copied out of the walk (its path borrowed there), to become a Mapping once the GIL is back. */
struct mapcopy {
	struct pm_mapping m;
	char *path;
};

struct runbuf {
	struct pmpy_run *runs;
	size_t n, cap;
	struct mapcopy *maps;
	size_t nmaps, capmaps;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int add_map(struct runbuf *b, const struct pm_mapping *m)
{
	struct mapcopy *c;

	if (grow((void **)&b->maps, &b->capmaps, b->nmaps + 1, sizeof(*b->maps)))
		return -ENOMEM;
	c = &b->maps[b->nmaps];
	c->m = *m;
	c->path = strndup(m->path ? m->path : "", m->path_len);
	if (!c->path)
		return -ENOMEM;
	c->m.path = c->path;
	b->nmaps++;
	return 0;
}

/* Walk [start, end) of @t into @b without the GIL. Returns 0 or -errno. */
static int walk_all(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags, struct runbuf *b,
		    unsigned *known, int *backend)
{
	struct pm_walk *w = pm_walk_new(t, start, end, flags);
	const struct pm_run *r;
	int rc;

	if (!w)
		return -errno;
	*known = pm_walk_known(w);
	*backend = pm_walk_backend(w);
	while ((rc = pm_walk_next(w, &r)) == 0) {
		struct pmpy_run *o;

		if (!b->nmaps || b->maps[b->nmaps - 1].m.start != r->map->start ||
		    b->maps[b->nmaps - 1].m.end != r->map->end) {
			if ((rc = add_map(b, r->map)) < 0)
				break;
		}
		if ((rc = grow((void **)&b->runs, &b->cap, b->n + 1, sizeof(*b->runs))) < 0)
			break;
		o = &b->runs[b->n++];
		memset(o, 0, sizeof(*o));
		o->start = r->start;
		o->end = r->end;
		o->pfn = r->pfn;
		o->swap_offset = r->swap_offset;
		o->flags = r->flags;
		o->map = (uint32_t)(b->nmaps - 1);
		o->swap_type = r->swap_type;
	}
	pm_walk_free(w);
	return rc < 0 ? rc : 0;
}

static void runbuf_free(struct runbuf *b)
{
	size_t i;

	for (i = 0; i < b->nmaps; i++)
		free(b->maps[i].path);
	free(b->maps);
	free(b->runs);
}

/* The runs as an Array that takes over @b's runs, with the mappings as a tuple. */
static PyObject *runs_array(struct runbuf *b, unsigned known, int backend)
{
	ArrayObject *a = (ArrayObject *)pmpy_array_new(ARRAY_RUNS, 0, sizeof(struct pmpy_run), RUN_FORMAT);
	size_t i;

	if (!a)
		return NULL;
	a->maps = PyTuple_New((Py_ssize_t)b->nmaps);
	for (i = 0; a->maps && i < b->nmaps; i++) {
		PyObject *m = pmpy_mapping_new(&b->maps[i].m);

		if (!m) {
			Py_DECREF(a);
			return NULL;
		}
		PyTuple_SetItem(a->maps, (Py_ssize_t)i, m);
	}
	if (!a->maps) {
		Py_DECREF(a);
		return NULL;
	}
	if (b->runs) {
		free(a->data);
		a->data = (char *)b->runs;
		b->runs = NULL;
	}
	a->n = a->shape = (Py_ssize_t)b->n;
	a->known = known;
	a->backend = backend;
	return (PyObject *)a;
}

/* Target.runs(start=0, end=2**64-1, entries=False, each=False) -> Array of runs (RUN_FORMAT records). */
static PyObject *target_runs(TargetObject *t, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "start", "end", "entries", "each", NULL };
	uint64_t start = 0, end = UINT64_MAX;
	int entries = 0, each = 0, rc, backend = 0;
	struct runbuf b = { 0 };
	unsigned known = 0;
	PyObject *out;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&O&pp:runs", kwlist, pmpy_u64_arg, &start, pmpy_u64_arg, &end,
					 &entries, &each) ||
	    pmpy_target_enter(t))
		return NULL;
	PMPY_ALLOW_THREADS
	rc = walk_all(t->t, start, end, (entries ? PM_WALK_ENTRIES : 0) | (each ? PM_WALK_EACH : 0), &b, &known,
		      &backend);
	PMPY_END_ALLOW_THREADS
	out = rc < 0 || pmpy_interrupted() ?
		      pmpy_raise(rc, t->ctx, "cannot walk the pages of process %d", pm_target_pid(t->t)) :
		      runs_array(&b, known, backend);
	runbuf_free(&b);
	pmpy_target_leave(t);
	return out;
}

/* Target.maps() -> [Mapping] */
static PyObject *target_maps(TargetObject *t, PyObject *unused)
{
	const struct pm_mapping *m;
	struct pm_maps *it;
	PyObject *list, *rec;
	int r = 0;

	if (pmpy_target_enter(t))
		return NULL;
	it = pm_maps_open(t->t);
	if (!it) {
		pmpy_raise(errno, t->ctx, "cannot read the mappings of process %d", pm_target_pid(t->t));
		pmpy_target_leave(t);
		return NULL;
	}
	list = PyList_New(0);
	while (list && (r = pm_maps_next(it, &m)) == 0) {
		rec = pmpy_mapping_new(m);
		if (!rec || PyList_Append(list, rec) < 0)
			Py_CLEAR(list);
		Py_XDECREF(rec);
	}
	pm_maps_close(it);
	if (list && r < 0) {
		Py_CLEAR(list);
		pmpy_raise(r, t->ctx, "cannot read the mappings of process %d", pm_target_pid(t->t));
	}
	pmpy_target_leave(t);
	return list;
}

/* Target.mapstat(entries=False) -> [(Mapping, Usage)]: every mapping with its usage from one walk, None unknown. */
static PyObject *target_mapstat(TargetObject *t, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "entries", NULL };
	const struct pm_mapping *m;
	const struct pm_usage *u;
	struct pm_mapstat *it;
	PyObject *list, *rec;
	int entries = 0, r = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:mapstat", kwlist, &entries) || pmpy_target_enter(t))
		return NULL;
	it = pm_mapstat_open(t->t, entries ? PM_WALK_ENTRIES : 0);
	if (!it) {
		pmpy_raise(errno, t->ctx, "cannot walk process %d", pm_target_pid(t->t));
		pmpy_target_leave(t);
		return NULL;
	}
	list = PyList_New(0);
	for (;;) {
		PMPY_ALLOW_THREADS
		r = pm_mapstat_next(it, &m, &u);
		PMPY_END_ALLOW_THREADS
		if (r || !list || pmpy_interrupted())
			break;
		rec = Py_BuildValue("(NN)", pmpy_mapping_new(m), pmpy_usage_new(u, m, pm_mapstat_known(it)));
		if (!rec || PyList_Append(list, rec) < 0)
			Py_CLEAR(list);
		Py_XDECREF(rec);
	}
	pm_mapstat_close(it);
	if (list && (r < 0 || pmpy_interrupted())) {
		Py_CLEAR(list);
		pmpy_raise(r, t->ctx, "cannot walk process %d", pm_target_pid(t->t));
	}
	pmpy_target_leave(t);
	return list;
}

/* Target.account(exact=True) -> Account: exact from kpagecount when readable, else smaps_rollup. */
static PyObject *target_account(TargetObject *t, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "exact", NULL };
	struct pm_kpage *k = NULL;
	struct pm_account a;
	int exact = 1, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:account", kwlist, &exact) || pmpy_target_enter(t))
		return NULL;
	PMPY_ALLOW_THREADS
	if (exact)
		pmpy_ctx_kpage_lock(t->ctx, &k);
	r = pm_account_process(t->t, k, &a);
	if (exact)
		pmpy_ctx_kpage_unlock(t->ctx);
	PMPY_END_ALLOW_THREADS
	if (r < 0 || pmpy_interrupted())
		pmpy_raise(r, t->ctx, "cannot account process %d", pm_target_pid(t->t));
	pmpy_target_leave(t);
	return PyErr_Occurred() ? NULL : pmpy_account_new(&a);
}

/* Target.v2p(addr) -> V2P: the page's entry, physical address and, as root, its frame's flags and count. */
static PyObject *target_v2p(TargetObject *t, PyObject *arg)
{
	uint64_t addr = PyLong_AsUnsignedLongLong(arg), raw = 0, kf = 0, kc = 0;
	struct pm_decode_info info;
	struct pm_kpage *k = NULL;
	bool phys, kfok = false, kcok = false;
	struct pm_entry e;
	char names[2048] = "";
	ssize_t r;

	if ((addr == (uint64_t)-1 && PyErr_Occurred()) || pmpy_target_enter(t))
		return NULL;
	r = pm_target_read(t->t, addr / t->page_size, &raw, 1);
	if (r < 0) {
		pmpy_raise((int)r, t->ctx, "cannot read the pagemap of process %d at %#llx", pm_target_pid(t->t),
			   (unsigned long long)addr);
		pmpy_target_leave(t);
		return NULL;
	}
	pm_target_decode_info(t->t, &info);
	pmpy_target_leave(t);
	pm_entry_decode(raw, &info, &e);
	phys = (e.flags & PM_PAGE_FRAME) && (e.flags & PM_PAGE_PRESENT);
	if (phys) {
		PMPY_ALLOW_THREADS
		if (pmpy_ctx_kpage_lock(t->ctx, &k) == 0) {
			kfok = pm_kpage_status(k, PM_KPAGE_FLAGS) == 0 &&
			       pm_kpage_read(k, e.pfn, 1, &kf, NULL, NULL) == 0;
			kcok = pm_kpage_status(k, PM_KPAGE_COUNT) == 0 &&
			       pm_kpage_read(k, e.pfn, 1, NULL, &kc, NULL) == 0;
		}
		pmpy_ctx_kpage_unlock(t->ctx);
		PMPY_END_ALLOW_THREADS
		if (kfok)
			pm_kpf_describe(pm_kpf_cook(kf, false), names, sizeof(names));
	}
	{
		PyObject *v[] = { pmpy_u64(addr), pmpy_entry_new(&e),
				  phys ? pmpy_u64(e.pfn * t->page_size + addr % t->page_size) : Py_NewRef(Py_None),
				  kfok ? pmpy_u64(kf) : Py_NewRef(Py_None), kcok ? pmpy_u64(kc) : Py_NewRef(Py_None),
				  PyUnicode_FromString(names) };

		return pmpy_record(pmpy_v2p_type, v, 6);
	}
}

static PyMethodDef target_methods[] = {
	{ "close", (PyCFunction)target_close, METH_NOARGS, "Close the pagemap descriptor." },
	{ "decode", (PyCFunction)target_decode, METH_O, "decode(raw) -> Entry, as this target's entries decode." },
	{ "read", (PyCFunction)target_read, METH_VARARGS, "read(addr, npages) -> Array of raw uint64 entries." },
	{ "read_into", (PyCFunction)target_read_into, METH_VARARGS,
	  "read_into(addr, buffer) -> entries read into a writable buffer of uint64." },
	{ "runs", (PyCFunction)(void (*)(void))target_runs, METH_VARARGS | METH_KEYWORDS,
	  "runs(start=0, end=2**64-1, entries=False, each=False) -> Array of runs; a flag outside its known is "
	  "unknown, not clear." },
	{ "maps", (PyCFunction)target_maps, METH_NOARGS, "The mappings (Mapping records)." },
	{ "mapstat", (PyCFunction)(void (*)(void))target_mapstat, METH_VARARGS | METH_KEYWORDS,
	  "mapstat(entries=False) -> [(Mapping, Usage)] from one walk; a Usage field is None where it cannot be "
	  "told (entries=True reads exclusive and uffd-wp under PAGEMAP_SCAN)." },
	{ "account", (PyCFunction)(void (*)(void))target_account, METH_VARARGS | METH_KEYWORDS,
	  "account(exact=True) -> Account (RSS, PSS, USS, swap, shared, hugetlb)." },
	{ "v2p", (PyCFunction)target_v2p, METH_O, "v2p(addr) -> V2P." },
	{ "wss", (PyCFunction)(void (*)(void))pmpy_target_wss, METH_VARARGS | METH_KEYWORDS,
	  "wss(seconds=1.0, method='auto') -> dict: bytes accessed during the window, total and per mapping "
	  "(untracked: None unless the method is idle)." },
	{ "numa", (PyCFunction)(void (*)(void))pmpy_target_numa, METH_VARARGS | METH_KEYWORDS,
	  "numa(source='auto') -> (source, [(Mapping, policy, {node: (anon, file, shmem, hugetlb, thp)})])." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef target_getset[] = {
	{ "pid", (getter)target_pid, NULL, "The PID given (0 for this process).", NULL },
	{ "pfn_view", (getter)target_pfn_view, NULL, "visible or hidden: what this handle shows of frames.", NULL },
	{ "page_size", (getter)target_page_size, NULL, "Bytes per page.", NULL },
	{ "decode_info", (getter)target_decode_info, NULL, "How this target's raw entries decode.", NULL },
	{ "context", (getter)target_context, NULL, "The Context it was opened in.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot target_slots[] = {
	{ Py_tp_new, target_new },
	{ Py_tp_dealloc, target_dealloc },
	{ Py_tp_methods, target_methods },
	{ Py_tp_getset, target_getset },
	{ Py_tp_doc, "Target(context, pid=0): one process (0: this one) with its pagemap kept open." },
	{ 0, NULL },
};

static PyType_Spec target_spec = { "libpagemap.Target", sizeof(TargetObject), 0,
				   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, target_slots };

int pmpy_target_init(PyObject *m)
{
	pmpy_target_type = (PyTypeObject *)PyType_FromSpec(&target_spec);
	return pmpy_target_type ? PyModule_AddObjectRef(m, "Target", (PyObject *)pmpy_target_type) : -1;
}
