/*
 * _array.c - Array: an owned block of raw entries, flags, runs or written ranges that numpy (or memoryview)
 * wraps without a copy through the buffer protocol (PEP 3118; in the limited API since Python 3.11).
 */
#include <stdlib.h>
#include <string.h>
#include "_core.h"

PyTypeObject *pmpy_array_type;

PyObject *pmpy_array_new(int kind, Py_ssize_t n, Py_ssize_t itemsize, const char *format)
{
	ArrayObject *a = (ArrayObject *)PMPY_ALLOC(pmpy_array_type);

	if (!a)
		return NULL;
	a->kind = kind;
	a->itemsize = itemsize;
	a->stride = itemsize;
	a->format = format;
	a->n = a->shape = n;
	/* malloc, not calloc: every item is written before Python sees it; at least one byte so n = 0 works */
	a->data = malloc(n ? (size_t)n * (size_t)itemsize : 1);
	if (!a->data) {
		Py_DECREF(a);
		return PyErr_NoMemory();
	}
	return (PyObject *)a;
}

static void array_dealloc(ArrayObject *a)
{
	PyTypeObject *tp = Py_TYPE((PyObject *)a);

	free(a->data);
	Py_XDECREF(a->maps);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(a);
	Py_DECREF(tp);
}

/* Read-only, one-dimensional, C-contiguous: the items never move or change once made. */
static int array_getbuffer(ArrayObject *a, Py_buffer *v, int flags)
{
	if (flags & PyBUF_WRITABLE) {
		PyErr_SetString(PyExc_BufferError, "libpagemap arrays are read-only");
		v->obj = NULL;
		return -1;
	}
	v->buf = a->data;
	v->obj = Py_NewRef((PyObject *)a);
	v->len = a->n * a->itemsize;
	v->readonly = 1;
	v->itemsize = a->itemsize;
	v->format = (flags & PyBUF_FORMAT) ? (char *)a->format : NULL;
	v->ndim = 1;
	v->shape = (flags & PyBUF_ND) ? &a->shape : NULL;
	v->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &a->stride : NULL;
	v->suboffsets = NULL;
	v->internal = NULL;
	return 0;
}

static void array_releasebuffer(ArrayObject *a, Py_buffer *v)
{
}

static Py_ssize_t array_len(ArrayObject *a)
{
	return a->n;
}

static PyObject *run_item(ArrayObject *a, Py_ssize_t i)
{
	const struct pmpy_run *r = (const struct pmpy_run *)a->data + i;
	PyObject *map = PyTuple_GetItem(a->maps, r->map);
	PyObject *v[] = { pmpy_u64(r->start), pmpy_u64(r->end), PyLong_FromUnsignedLong(r->flags), NULL, NULL, NULL,
			  map ? Py_NewRef(map) : NULL };

	pmpy_frame_fields(r->flags, r->pfn, r->swap_type, r->swap_offset, &v[3]);
	return pmpy_record(pmpy_run_type, v, 7);
}

static PyObject *array_item(ArrayObject *a, Py_ssize_t i)
{
	if (i < 0 || i >= a->n) {
		PyErr_SetString(PyExc_IndexError, "index out of range");
		return NULL;
	}
	switch (a->kind) {
	case ARRAY_ENTRIES:
	case ARRAY_KPAGE:
		return pmpy_u64(((const uint64_t *)a->data)[i]);
	case ARRAY_FLAGS:
		return PyLong_FromUnsignedLong(((const uint32_t *)a->data)[i]);
	case ARRAY_RUNS:
		return run_item(a, i);
	default: {
		const struct pmpy_written *w = (const struct pmpy_written *)a->data + i;

		return Py_BuildValue("(KKN)", (unsigned long long)w->start, (unsigned long long)w->end,
				     PyBool_FromLong(w->huge));
	}
	}
}

unsigned pmpy_entry_known(const struct pm_features *f, const struct pm_decode_info *d)
{
	/* every entry read whole, as pread reads them; THP and ZERO come from the walker, never one entry */
	struct pm_read_how how = { .layout = d->layout, .frames = d->frame_visible, .entries = true };
	const struct pm_flag_fact *x;
	unsigned known = 0;
	size_t i, n;

	for (x = pm_flag_facts(&n), i = 0; f && i < n; i++)
		if (!(x[i].bit & (PM_PAGE_THP | PM_PAGE_ZERO)) && pm_flag_lack(f, &how, x[i].bit) == PM_LACK_NONE)
			known |= x[i].bit;
	return known;
}

/*
 * Array.flags(): the entries decoded to PM_PAGE_* flags, one uint32 each (ENTRIES of a Target only). The
 * decode info was copied at read(): the Target may be closed since.
 */
static PyObject *array_flags(ArrayObject *a, PyObject *unused)
{
	struct pm_decode_info info = a->decode;
	ArrayObject *out;
	Py_ssize_t i;

	if (a->kind != ARRAY_ENTRIES || !a->has_decode) {
		PyErr_SetString(PyExc_TypeError, "flags() needs the raw entries of a Target.read()");
		return NULL;
	}
	out = (ArrayObject *)pmpy_array_new(ARRAY_FLAGS, a->n, sizeof(uint32_t), "I");
	if (!out)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	for (i = 0; i < a->n; i++) {
		struct pm_entry e;

		pm_entry_decode(((const uint64_t *)a->data)[i], &info, &e);
		((uint32_t *)out->data)[i] = e.flags;
	}
	Py_END_ALLOW_THREADS
	out->start = a->start;
	out->known = a->known;
	return (PyObject *)out;
}

static PyObject *array_maps(ArrayObject *a, void *closure)
{
	return Py_NewRef(a->maps ? a->maps : Py_None);
}

static PyObject *array_known(ArrayObject *a, void *closure)
{
	return PyLong_FromUnsignedLong(a->known);
}

static PyObject *array_backend(ArrayObject *a, void *closure)
{
	if (a->kind != ARRAY_RUNS)
		Py_RETURN_NONE;
	return PyUnicode_FromString(pm_backend_name((enum pm_backend)a->backend));
}

static PyObject *array_start(ArrayObject *a, void *closure)
{
	return pmpy_u64(a->start);
}

static PyObject *array_format(ArrayObject *a, void *closure)
{
	return PyUnicode_FromString(a->format);
}

static PyObject *array_kind(ArrayObject *a, void *closure)
{
	static const char *names[] = { "entries", "flags", "runs", "written", "kpage" };

	return PyUnicode_FromString(names[a->kind]);
}

static PyMethodDef array_methods[] = {
	{ "flags", (PyCFunction)array_flags, METH_NOARGS, "Entries decoded to Flag bits (a uint32 Array)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef array_getset[] = {
	{ "maps", (getter)array_maps, NULL, "runs: the Mappings their map field indexes", NULL },
	{ "known", (getter)array_known, NULL,
	  "runs, and entries and their flags(): the Flag bits they can tell; a bit outside it is unknown, though 0 "
	  "in flags", NULL },
	{ "backend", (getter)array_backend, NULL, "runs: pread or scan", NULL },
	{ "start", (getter)array_start, NULL, "entries: address of the first entry's page; kpage: the first frame", NULL },
	{ "format", (getter)array_format, NULL, "the PEP 3118 format of one item", NULL },
	{ "kind", (getter)array_kind, NULL, "entries, flags, runs, written or kpage", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot array_slots[] = {
	{ Py_tp_dealloc, array_dealloc },
	{ Py_bf_getbuffer, array_getbuffer },
	{ Py_bf_releasebuffer, array_releasebuffer },
	{ Py_sq_length, array_len },
	{ Py_sq_item, array_item },
	{ Py_tp_methods, array_methods },
	{ Py_tp_getset, array_getset },
	{ Py_tp_doc, "Read-only records exported without a copy: numpy.asarray(a) or numpy.frombuffer(a, dtype)." },
	{ 0, NULL },
};

static PyType_Spec array_spec = { "libpagemap.Array", sizeof(ArrayObject), 0,
				  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, array_slots };

int pmpy_array_init(PyObject *m)
{
	pmpy_array_type = (PyTypeObject *)PyType_FromSpec(&array_spec);
	return pmpy_array_type ? PyModule_AddObjectRef(m, "Array", (PyObject *)pmpy_array_type) : -1;
}
