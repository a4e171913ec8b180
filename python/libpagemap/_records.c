/* _records.c - the frozen records (struct sequences) the extension returns: one per C value struct. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "_core.h"

PyTypeObject *pmpy_entry_type, *pmpy_mapping_type, *pmpy_usage_type, *pmpy_account_type, *pmpy_proc_type,
	*pmpy_run_type, *pmpy_v2p_type, *pmpy_share_sum_type, *pmpy_decode_info_type;

static PyStructSequence_Field entry_fields[] = {
	{ "raw", "the 64-bit pagemap entry" },
	{ "flags", "PM_PAGE_* flags (Flag)" },
	{ "pfn", "frame number, with FRAME and PRESENT, else None (hidden from this reader, or not present)" },
	{ "swap_type", "swap type, with FRAME and SWAPPED or MIGRATION, else None (a marker is no swap slot)" },
	{ "swap_offset", "swap offset, as swap_type" },
	{ "page_shift", "pshift layout only: bits 55-60" },
	{ NULL, NULL },
};

/*
 * The field docs of Mapping, Usage and Account are what help() shows and what python/gen_stubs.py copies into
 * __init__.pyi: their one home for Python. A field without one is NULL (the stubs show "...").
 */
static PyStructSequence_Field mapping_fields[] = {
	{ "start", "first address of the mapping" },
	{ "end", "address after its last byte" },
	{ "offset", "file offset" },
	{ "dev_major", NULL },
	{ "dev_minor", NULL },
	{ "inode", "inode" },
	{ "perms", "permissions, as in maps (rwxp/s)" },
	{ "kind", "anon, file, heap, stack, vdso, vvar, vsyscall, anon_named, special" },
	{ "deleted", "the path ends with ' (deleted)'" },
	{ "path", "the mapping's file or [name]" },
	/* by name only: the tuple stays the ten fields it always was */
	{ "hugetlb", "its file is on hugetlbfs (MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB or a hugetlbfs file): its "
		     "pages count as hugetlb, not RSS; told by the mapping's device (a replay: by its smaps)" },
	{ NULL, NULL },
};
#define MAPPING_IN_SEQUENCE 10

/* The words of pagemap maps' columns of the same names (the flag table's sums, and RSS). */
static PyStructSequence_Field usage_fields[] = {
	{ "present", "bytes mapped to pages in RAM: RSS, ZERO (the zero page) and hugetlb" },
	{ "swapped", "bytes in swap (smaps Swap for private memory)" },
	{ "file", "bytes of page cache or shared memory" },
	{ "exclusive", "bytes mapped only by this process" },
	{ "thp", "bytes in PMD-mapped huge pages of its own (THP or hugetlb), not the huge zero page" },
	{ "softdirty", "soft-dirty bytes (written since clear_refs 4)" },
	{ "uffdwp", "userfaultfd write-protected bytes" },
	{ "guard", "bytes of guard regions" },
	{ "zero", "bytes mapped to the zero page or huge zero page (in PRESENT, not in RSS)" },
	/* by name only: the tuple stays the nine sums it always was */
	{ "rss", "resident bytes as the kernel counts them (smaps Rss, VmRSS): not the zero page, not hugetlb" },
	{ NULL, NULL },
};
#define USAGE_IN_SEQUENCE 9

/* Where `pagemap maps` prints "-" (null in JSON), Usage says None: unknown is not 0. */
#define USAGE_DOC \
	"Bytes of a mapping by page state (pagemap maps' columns). A field is None where it cannot be told, " \
	"as maps prints \"-\": the kernel, its entry layout, the reader's privilege or the back end lacks the " \
	"flag (exclusive and uffdwp need mapstat(entries=True) under PAGEMAP_SCAN; softdirty needs " \
	"CONFIG_MEM_SOFT_DIRTY), and every field of [vvar] and [vsyscall], which are never read."

static PyStructSequence_Field account_fields[] = {
	{ "rss", "resident bytes as the kernel counts them (smaps Rss, VmRSS): not the zero page, not hugetlb" },
	{ "pss", "proportional bytes: each page divided by its map count" },
	{ "uss", "unique bytes: pages mapped by this process only" },
	{ "swap", "bytes in swap" },
	{ "shared", "bytes of pages mapped more than once" },
	{ "hugetlb", "hugetlb bytes mapped (in no other column)" },
	{ "source", "smaps_rollup, or pagemap (with kpagecount: --exact)" },
	{ "exact", NULL },
	{ "estimate", "USS, SHARED, PSS rest on averaged map counts of large folios" },
	{ NULL, NULL },
};

static PyStructSequence_Field proc_fields[] = {
	{ "pid", NULL }, { "state", "running, zombie, kthread or gone" }, { "uid", "real UID, None unknown" },
	{ "comm", NULL }, { NULL, NULL },
};

static PyStructSequence_Field run_fields[] = {
	{ "start", NULL }, { "end", NULL }, { "flags", "Flag" }, { "pfn", "first page's frame, None as Entry's" },
	{ "swap_type", "None as Entry's" }, { "swap_offset", "None as Entry's" }, { "map", "the Mapping it lies in" },
	{ NULL, NULL },
};

static PyStructSequence_Field v2p_fields[] = {
	{ "addr", NULL }, { "entry", "the decoded Entry" }, { "phys", "physical address, None hidden or absent" },
	{ "kpageflags", "raw kpageflags word, None unreadable" }, { "kpagecount", "map count, None unreadable" },
	{ "kpage_names", "the kpageflags bits by name" }, { NULL, NULL },
};

static PyStructSequence_Field share_sum_fields[] = {
	{ "resident", "bytes" }, { "shared", "bytes" }, { "outside", "bytes" }, { "swap", "bytes" },
	{ "swap_shared", "bytes" }, { "hugetlb", "bytes" }, { NULL, NULL },
};

static PyStructSequence_Field decode_info_fields[] = {
	{ "layout", "pshift, v2, current" }, { "page_shift", NULL }, { "frame_visible", NULL },
	{ "swap_active", NULL }, { NULL, NULL },
};

/* A record type whose first @seq fields (all, when 0) are its tuple; the others are read by name only. */
static PyTypeObject *make_seq(PyObject *m, const char *name, const char *qual, PyStructSequence_Field *f,
			     const char *doc, int seq)
{
	int n = 0;
	PyStructSequence_Desc d;
	PyTypeObject *t;

	while (f[n].name)
		n++;
	d.name = qual;
	d.doc = doc;
	d.fields = f;
	d.n_in_sequence = seq && seq < n ? seq : n;
	t = PyStructSequence_NewType(&d);
	if (t && PyModule_AddObjectRef(m, name, (PyObject *)t) < 0)
		return NULL;
	return t;
}

static PyTypeObject *make(PyObject *m, const char *name, const char *qual, PyStructSequence_Field *f, const char *doc)
{
	return make_seq(m, name, qual, f, doc, 0);
}

int pmpy_records_init(PyObject *m)
{
	pmpy_entry_type = make(m, "Entry", "libpagemap.Entry", entry_fields, "One decoded pagemap entry.");
	pmpy_mapping_type = make_seq(m, "Mapping", "libpagemap.Mapping", mapping_fields, "One line of /proc/PID/maps.",
				      MAPPING_IN_SEQUENCE);
	pmpy_usage_type = make_seq(m, "Usage", "libpagemap.Usage", usage_fields, USAGE_DOC, USAGE_IN_SEQUENCE);
	pmpy_account_type = make(m, "Account", "libpagemap.Account", account_fields, "Memory of one process.");
	pmpy_proc_type = make(m, "Proc", "libpagemap.Proc", proc_fields, "One process of ROOT/proc.");
	pmpy_run_type = make(m, "Run", "libpagemap.Run", run_fields, "Pages with identical state.");
	pmpy_v2p_type = make(m, "V2P", "libpagemap.V2P", v2p_fields, "A virtual address and its frame.");
	pmpy_share_sum_type = make(m, "ShareSum", "libpagemap.ShareSum", share_sum_fields, "Bytes shared by a scope.");
	pmpy_decode_info_type = make(m, "DecodeInfo", "libpagemap.DecodeInfo", decode_info_fields,
				     "How a target's raw entries decode.");
	return pmpy_entry_type && pmpy_mapping_type && pmpy_usage_type && pmpy_account_type && pmpy_proc_type &&
			       pmpy_run_type && pmpy_v2p_type && pmpy_share_sum_type && pmpy_decode_info_type ?
		       0 :
		       -1;
}

PyObject *pmpy_str(const char *s)
{
	return PyUnicode_DecodeFSDefault(s ? s : "");
}

PyObject *pmpy_u64(uint64_t v)
{
	return PyLong_FromUnsignedLongLong(v);
}

int pmpy_pid_arg(PyObject *o, void *out)
{
	PyObject *i = PyNumber_Index(o);	/* an int or numpy integer; TypeError for 1.5 or "1" */
	long long v;

	if (!i)
		return 0;
	v = PyLong_AsLongLong(i);
	Py_DECREF(i);
	if (v == -1 && PyErr_Occurred()) {
		if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
			PyErr_Clear();
			PyErr_SetString(PyExc_OverflowError, "PID out of range (at most 2**31 - 1)");
		}
		return 0;
	}
	/* pid_t is 32 bits: (pid_t)(2**32 + P) would be P, another process */
	if (v > 0x7fffffff) {
		PyErr_Format(PyExc_OverflowError, "PID %lld out of range (at most 2**31 - 1)", v);
		return 0;
	}
	if (v < 0) {
		PyErr_Format(PyExc_ValueError, "PID %lld is negative (0 is this process)", v);
		return 0;
	}
	*(pid_t *)out = (pid_t)v;
	return 1;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

pid_t *pmpy_pid_list(PyObject *seq, Py_ssize_t *n)
{
	PyObject *fast = PyIter_Check(seq) || PySequence_Check(seq) ? PySequence_List(seq) : NULL;
	Py_ssize_t i, k = 0, u = 0, len;
	pid_t *pids = NULL, *uniq = NULL;
	bool *taken = NULL;

	if (!fast) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "the PIDs are a sequence of ints");
		return NULL;
	}
	len = PyList_Size(fast);
	pids = calloc((size_t)len + 1, sizeof(*pids));
	uniq = calloc((size_t)len + 1, sizeof(*uniq));
	taken = calloc((size_t)len + 1, sizeof(*taken));
	if (!pids || !uniq || !taken) {
		PyErr_NoMemory();
		goto fail;
	}
	/* 0 is this process: as its own PID, so [0, os.getpid()] is one process, not the same one twice */
	for (i = 0; i < len; i++) {
		if (!pmpy_pid_arg(PyList_GetItem(fast, i), &pids[i]))
			goto fail;
		if (!pids[i])
			pids[i] = getpid();
	}
	/* the library refuses a process added twice (EEXIST): each PID once, where it first came */
	memcpy(uniq, pids, (size_t)len * sizeof(*pids));
	qsort(uniq, (size_t)len, sizeof(*uniq), pid_cmp);
	for (i = 0; i < len; i++)
		if (!u || uniq[u - 1] != uniq[i])
			uniq[u++] = uniq[i];
	for (i = 0; i < len; i++) {
		pid_t *at = bsearch(&pids[i], uniq, (size_t)u, sizeof(*uniq), pid_cmp);

		if (!taken[at - uniq]) {
			taken[at - uniq] = true;
			pids[k++] = pids[i];
		}
	}
	free(uniq);
	free(taken);
	Py_DECREF(fast);
	*n = k;
	return pids;
fail:
	free(pids);
	free(uniq);
	free(taken);
	Py_DECREF(fast);
	return NULL;
}

int pmpy_u64_arg(PyObject *o, void *out)
{
	uint64_t v = PyLong_AsUnsignedLongLong(o);

	if (v == (uint64_t)-1 && PyErr_Occurred())
		return 0;
	*(uint64_t *)out = v;
	return 1;
}

/* Fill a struct sequence from @n new references (NULL: fail, after releasing the others). */
static PyObject *fill(PyTypeObject *t, PyObject **v, int n)
{
	PyObject *r = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (!v[i])
			goto fail;
	r = PyStructSequence_New(t);
	if (!r)
		goto fail;
	for (i = 0; i < n; i++)
		PyStructSequence_SetItem(r, i, v[i]);
	return r;
fail:
	for (i = 0; i < n; i++)
		Py_XDECREF(v[i]);
	return NULL;
}

void pmpy_frame_fields(uint32_t flags, uint64_t pfn, unsigned swap_type, uint64_t swap_offset, PyObject *out[3])
{
	bool frame = flags & PM_PAGE_FRAME, slot = frame && (flags & (PM_PAGE_SWAPPED | PM_PAGE_NONSWAP));

	out[0] = frame && (flags & PM_PAGE_PRESENT) ? pmpy_u64(pfn) : Py_NewRef(Py_None);
	out[1] = slot ? PyLong_FromUnsignedLong(swap_type) : Py_NewRef(Py_None);
	out[2] = slot ? pmpy_u64(swap_offset) : Py_NewRef(Py_None);
}

PyObject *pmpy_entry_new(const struct pm_entry *e)
{
	PyObject *v[] = { pmpy_u64(e->raw), PyLong_FromUnsignedLong(e->flags), NULL, NULL, NULL,
			  PyLong_FromLong(e->page_shift) };

	pmpy_frame_fields(e->flags, e->pfn, e->swap_type, e->swap_offset, &v[2]);
	return fill(pmpy_entry_type, v, 6);
}

static const char *kind_name(enum pm_map_kind k)
{
	static const char *names[] = { "anon", "file", "heap", "stack", "vdso", "vvar", "vsyscall", "anon_named",
				       "special" };

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "special";
}

PyObject *pmpy_mapping_new(const struct pm_mapping *m)
{
	PyObject *v[] = { pmpy_u64(m->start), pmpy_u64(m->end), pmpy_u64(m->offset),
			  PyLong_FromUnsignedLong(m->dev_major), PyLong_FromUnsignedLong(m->dev_minor),
			  pmpy_u64(m->inode), PyUnicode_FromString(m->perms), PyUnicode_FromString(kind_name(m->kind)),
			  PyBool_FromLong(m->deleted),
			  PyUnicode_DecodeFSDefaultAndSize(m->path ? m->path : "", (Py_ssize_t)m->path_len),
			  PyBool_FromLong(m->hugetlb) };

	return fill(pmpy_mapping_type, v, 11);
}

/*
 * A Usage: field i is the bytes of the flag in column i of the flag table's sums (pm_flag_sums), as in
 * struct pm_usage; None where that flag is outside @known, as `pagemap maps` prints "-" there. rss
 * (by name only) is PRESENT less ZERO: None unless both are known.
 */
PyObject *pmpy_usage_new(const struct pm_usage *u, const struct pm_mapping *m, uint32_t known)
{
	const uint64_t val[] = { u->present, u->swapped, u->file, u->exclusive, u->thp, u->softdirty, u->uffdwp,
				 u->guard, u->zero };
	enum { N = sizeof(val) / sizeof(val[0]) };
	const uint32_t rss_needs = PM_PAGE_PRESENT | PM_PAGE_ZERO;
	const struct pm_flag_sum *s;
	uint32_t bit[N] = { 0 };
	PyObject *v[N + 1];
	size_t i, n;

	for (s = pm_flag_sums(&n), i = 0; i < n; i++)
		if (s[i].column >= 0 && s[i].column < N)
			bit[s[i].column] = s[i].bit;
	for (i = 0; i < N; i++)
		v[i] = bit[i] && (known & bit[i]) ? pmpy_u64(val[i]) : Py_NewRef(Py_None);
	v[N] = (known & rss_needs) == rss_needs ? pmpy_u64(pm_usage_rss(u, m)) : Py_NewRef(Py_None);
	return fill(pmpy_usage_type, v, N + 1);
}

PyObject *pmpy_account_new(const struct pm_account *a)
{
	PyObject *v[] = { pmpy_u64(a->rss), pmpy_u64(a->pss), pmpy_u64(a->uss), pmpy_u64(a->swap),
			  pmpy_u64(a->shared), pmpy_u64(a->hugetlb),
			  PyUnicode_FromString(pm_account_source_name(a->source)), PyBool_FromLong(a->exact),
			  PyBool_FromLong(a->estimate) };

	return fill(pmpy_account_type, v, 9);
}

PyObject *pmpy_share_sum_new(const struct pm_share_sum *s)
{
	PyObject *v[] = { pmpy_u64(s->resident), pmpy_u64(s->shared), pmpy_u64(s->outside), pmpy_u64(s->swap),
			  pmpy_u64(s->swap_shared), pmpy_u64(s->hugetlb) };

	return fill(pmpy_share_sum_type, v, 6);
}

PyObject *pmpy_record(PyTypeObject *t, PyObject **v, int n)
{
	return fill(t, v, n);
}
