/* _more.c - working-set size (pm_wss), NUMA placement (pm_numa) and the page cache (pm_cache) for Python. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "_core.h"

static int wss_method_of(const char *s, enum pm_wss_method *out)
{
	static const char *names[] = { "auto", "idle", "referenced" };
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			*out = (enum pm_wss_method)i;
			return 0;
		}
	PyErr_Format(PyExc_ValueError, "unknown working-set method '%s' (auto, idle or referenced)", s);
	return -1;
}

#define WSS_MAX_SECONDS (86400 * 365.0)	/* as `pagemap wss` takes: past a year, a typo rather than a window */
#define SLEEP_PIECE_NS 20000000L		/* 20 ms between two looks for Ctrl-C */

/* Sleep @seconds without the GIL, looking for Ctrl-C between pieces. Returns 0, or -EINTR when a handler raised. */
static int sleep_for(double seconds)
{
	struct timespec end, now, ts;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ts.tv_sec = end.tv_sec - now.tv_sec;
		ts.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (ts.tv_nsec < 0) {
			ts.tv_sec--;
			ts.tv_nsec += 1000000000L;
		}
		if (ts.tv_sec < 0)
			return 0;
		if (ts.tv_sec > 0 || ts.tv_nsec > SLEEP_PIECE_NS)
			ts = (struct timespec){ 0, SLEEP_PIECE_NS };
		nanosleep(&ts, NULL);
		if ((r = pmpy_check_now()) < 0)
			return r;
	}
}

/* Untracked bytes are a count of idle page tracking only: None for another method, as `pagemap wss` prints "-". */
static PyObject *wss_untracked(enum pm_wss_method method, uint64_t v)
{
	return method == PM_WSS_IDLE ? pmpy_u64(v) : Py_NewRef(Py_None);
}

static PyObject *wss_mappings(struct pm_wss *w, enum pm_wss_method method)
{
	const struct pm_wss_mapping *m;
	PyObject *list = PyList_New(0), *rec;

	while (list && pm_wss_next(w, &m) == 0) {
		rec = Py_BuildValue("{s:K,s:K,s:N,s:N,s:K,s:K,s:N}", "start", (unsigned long long)m->start, "end",
				    (unsigned long long)m->end, "perms", pmpy_str(m->perms), "path", pmpy_str(m->path),
				    "resident", (unsigned long long)m->resident, "accessed",
				    (unsigned long long)m->accessed, "untracked", wss_untracked(method, m->untracked));
		if (!rec || PyList_Append(list, rec) < 0)
			Py_CLEAR(list);
		Py_XDECREF(rec);
	}
	return list;
}

/* Target.wss(seconds=1.0, method="auto") -> dict: bytes accessed during a window, total and per mapping. */
PyObject *pmpy_target_wss(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "seconds", "method", NULL };
	TargetObject *t = (TargetObject *)self;
	enum pm_wss_method method = PM_WSS_AUTO;
	const char *mname = "auto";
	struct pm_wss_summary s;
	double seconds = 1.0;
	char why[512] = "";
	struct pm_wss *w;
	PyObject *out;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|ds:wss", kwlist, &seconds, &mname) ||
	    wss_method_of(mname, &method) < 0)
		return NULL;
	/* inf, nan or 1e300 would make a garbage timespec: nanosleep refused it and a 10 us window passed as valid */
	if (!(seconds >= 0 && seconds <= WSS_MAX_SECONDS)) {
		PyErr_Format(PyExc_ValueError, "a window is 0 to %.0f seconds (a year), not %R", WSS_MAX_SECONDS,
			     PyTuple_Size(args) ? PyTuple_GetItem(args, 0) : Py_None);
		return NULL;
	}
	if (pmpy_target_enter(t))
		return NULL;
	w = pm_wss_new(t->t, method);
	if (!w) {
		r = errno;
		pm_wss_explain(t->t, method, why, sizeof(why));
		pmpy_raise(r, t->ctx, "cannot measure the working set of process %d: %s", pm_target_pid(t->t), why);
		pmpy_target_leave(t);
		return NULL;
	}
	PMPY_ALLOW_THREADS
	r = pm_wss_start(w);
	if (!r)
		r = sleep_for(seconds);
	if (!r)
		r = pm_wss_stop(w, &s);
	PMPY_END_ALLOW_THREADS
	if (r < 0 || pmpy_interrupted())
		out = pmpy_raise(r, t->ctx, "cannot measure the working set of process %d", pm_target_pid(t->t));
	else
		out = Py_BuildValue("{s:s,s:N,s:K,s:K,s:K,s:K,s:N,s:N}", "method", pm_wss_method_name(s.method), "reason",
				    pmpy_str(pm_wss_reason(w)), "window_ns", (unsigned long long)s.window_ns, "window_max_ns",
				    (unsigned long long)s.window_max_ns, "resident", (unsigned long long)s.resident,
				    "accessed", (unsigned long long)s.accessed, "untracked",
				    wss_untracked(s.method, s.untracked), "mappings", wss_mappings(w, s.method));
	pm_wss_free(w);
	pmpy_target_leave(t);
	return out;
}

static PyObject *node_dict(const struct pm_numa *n, size_t i)
{
	const struct pm_numa_node *d = pm_numa_node(n, i);
	PyObject *dist = PyList_New(0), *v;
	size_t j;

	for (j = 0; dist && j < pm_numa_count(n); j++) {
		v = PyLong_FromLong(pm_numa_distance(n, i, j));
		if (!v || PyList_Append(dist, v) < 0)
			Py_CLEAR(dist);
		Py_XDECREF(v);
	}
	/* tier: None where the kernel has no memory tiers (before 6.1), as `pagemap numa` prints "-" */
	return Py_BuildValue("{s:i,s:N,s:I,s:N,s:N,s:K,s:K,s:K,s:K,s:N}", "id", d->id, "has_memory",
			     PyBool_FromLong(d->has_memory), "ncpus", d->ncpus, "cpulist", pmpy_str(d->cpulist), "tier",
			     d->tier >= 0 ? PyLong_FromLong(d->tier) : Py_NewRef(Py_None),
			     "mem_total", (unsigned long long)d->mem_total, "mem_free", (unsigned long long)d->mem_free,
			     "promoted", (unsigned long long)d->promoted, "demoted", (unsigned long long)d->demoted,
			     "distances", dist);
}

/* Context.numa_nodes() -> [dict]: the machine's nodes (pm_numa_open). */
PyObject *pmpy_ctx_numa_nodes(PyObject *self, PyObject *unused)
{
	CtxObject *c = (CtxObject *)self;
	struct pm_numa *n = pm_numa_open(c->ctx);
	PyObject *list, *d;
	size_t i;

	if (!n)
		return pmpy_raise(errno, c, "cannot read the NUMA nodes");
	list = PyList_New(0);
	for (i = 0; list && i < pm_numa_count(n); i++) {
		d = node_dict(n, i);
		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	pm_numa_close(n);
	return list;
}

/* {node id: (anon, file, shmem, hugetlb, thp)} of one mapping; node id None for bytes on no known node. */
static PyObject *numa_bytes(const struct pm_numa *n, const struct pm_numa_map *m)
{
	PyObject *d = PyDict_New(), *k, *v;
	size_t i;

	for (i = 0; d && i < m->nnodes; i++) {
		const uint64_t *b = m->bytes[i];

		if (!(b[0] | b[1] | b[2] | b[3]))
			continue;
		k = i < pm_numa_count(n) ? PyLong_FromLong(pm_numa_node(n, i)->id) : Py_NewRef(Py_None);
		v = Py_BuildValue("(KKKKK)", (unsigned long long)b[PM_NUMA_ANON], (unsigned long long)b[PM_NUMA_FILE],
				  (unsigned long long)b[PM_NUMA_SHMEM], (unsigned long long)b[PM_NUMA_HUGETLB],
				  (unsigned long long)m->thp[i]);
		if (!k || !v || PyDict_SetItem(d, k, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(k);
		Py_XDECREF(v);
	}
	return d;
}

/* Target.numa(source="auto") -> (source, [(Mapping, policy, {node: (anon, file, shmem, hugetlb, thp)})]). */
PyObject *pmpy_target_numa(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "source", NULL };
	static const char *names[] = { "auto", "frames", "move_pages", "numa_maps" };
	TargetObject *t = (TargetObject *)self;
	const char *sname = "auto";
	const struct pm_numa_map *m;
	struct pm_numa_proc *p;
	struct pm_numa *n;
	PyObject *list = NULL, *rec;
	int src = -1, i, r = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:numa", kwlist, &sname))
		return NULL;
	for (i = 0; i < 4; i++)
		if (!strcmp(sname, names[i]))
			src = i;
	if (src < 0) {
		PyErr_Format(PyExc_ValueError, "unknown source '%s' (auto, frames, move_pages, numa_maps)", sname);
		return NULL;
	}
	if (pmpy_target_enter(t))
		return NULL;
	n = pm_numa_open(t->ctx->ctx);
	if (!n) {
		pmpy_raise(errno, t->ctx, "cannot read the NUMA nodes");
		pmpy_target_leave(t);
		return NULL;
	}
	p = pm_numa_proc_open(t->t, n, (enum pm_numa_source)src);
	if (!p) {
		pmpy_raise(errno, t->ctx, "cannot place the pages of process %d on nodes", pm_target_pid(t->t));
		goto out;
	}
	list = PyList_New(0);
	while (list && (r = pm_numa_proc_next(p, &m)) == 0) {
		rec = Py_BuildValue("(NNN)", pmpy_mapping_new(m->map), pmpy_str(m->policy), numa_bytes(n, m));
		if (!rec || PyList_Append(list, rec) < 0)
			Py_CLEAR(list);
		Py_XDECREF(rec);
	}
	if (list && r < 0) {
		Py_CLEAR(list);
		pmpy_raise(r, t->ctx, "cannot place the pages of process %d on nodes", pm_target_pid(t->t));
	}
	if (list)
		list = Py_BuildValue("(sN)", pm_numa_source_name(pm_numa_proc_source(p)), list);
	pm_numa_proc_close(p);
out:
	pm_numa_close(n);
	pmpy_target_leave(t);
	return list;
}

/* A count the method measured, else None: `pagemap cache` prints "-" there, never 0. */
static PyObject *cache_count(const struct pm_cache_stat *s, uint32_t bit, uint64_t v)
{
	return !s->error && (s->known & bit) ? pmpy_u64(v) : Py_NewRef(Py_None);
}

static PyObject *cache_stat_dict(const struct pm_cache_stat *s)
{
	return Py_BuildValue("{s:s,s:I,s:i,s:K,s:N,s:N,s:N,s:N,s:N}", "method", pm_cache_method_name(s->method), "known",
			     s->known, "error", -s->error, "size", (unsigned long long)s->size, "cached",
			     cache_count(s, PM_CACHE_CACHED, s->cached), "dirty", cache_count(s, PM_CACHE_DIRTY, s->dirty),
			     "writeback", cache_count(s, PM_CACHE_WRITEBACK, s->writeback), "evicted",
			     cache_count(s, PM_CACHE_EVICTED, s->evicted), "recently_evicted",
			     cache_count(s, PM_CACHE_RECENT, s->recently_evicted));
}

/* Context.cache_stat(path) -> dict: one file's page cache (cachestat; never a fake mincore answer), None unknown. */
PyObject *pmpy_ctx_cache_stat(PyObject *self, PyObject *arg)
{
	CtxObject *c = (CtxObject *)self;
	struct pm_cache_stat s;
	PyObject *bytes;
	int r;

	if (!PyUnicode_FSConverter(arg, &bytes))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = pm_cache_stat_path(c->ctx, PyBytes_AsString(bytes), &s);
	Py_END_ALLOW_THREADS
	if (r < 0) {
		pmpy_raise(r, c, "cannot measure the page cache of %s", PyBytes_AsString(bytes));
		Py_DECREF(bytes);
		return NULL;
	}
	Py_DECREF(bytes);
	return cache_stat_dict(&s);
}

#define DROP (1u << 8)	/* write_snapshot(pfn="drop"): PM_SNAPSHOT_PFN_DROP */

/* Write the snapshot without the GIL: processes, then the system files, then commit. Returns 0 or -errno. */
static int snapshot_write(struct pm_ctx *ctx, const char *path, const pid_t *pids, Py_ssize_t n, unsigned flags,
			  long *bad)
{
	struct pm_snapshot_writer *w = pm_snapshot_create(path);
	Py_ssize_t i;
	int r = 0;

	const struct pm_features *f = pm_ctx_features(ctx);
	char now[32];

	if (!w)
		return -errno;
	/* the META lines `pagemap snapshot` writes (cli/cmd_snapshot.c), so audit and diff read it alike */
	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	if ((r = pm_snapshot_add_meta(w, "writer", "libpagemap-python 0.1.0")) ||
	    (r = pm_snapshot_add_meta(w, "source", "live")) || (r = pm_snapshot_add_meta(w, "time", now)))
		goto out;
	if (f && f->pfn_view == PM_PFN_VISIBLE)
		r = pm_snapshot_set_frames(w, ctx, (flags & DROP) ? PM_SNAPSHOT_PFN_DROP : PM_SNAPSHOT_PFN_KEEP, NULL);
	else if (f)	/* hidden frame numbers are said so, never stored as if 0 were a frame */
		r = pm_snapshot_add_meta(w, "frames", f->pfn_view == PM_PFN_HIDDEN ? "hidden" : "refused");
	for (i = 0; i < n && !r; i++) {
		*bad = pids[i];
		r = pm_snapshot_add_process(w, ctx, pids[i], (flags & PM_SNAPSHOT_PHYS) ? 0 : PM_SNAPSHOT_FRAMES);
	}
	if (!r) {
		*bad = 0;
		r = pm_snapshot_add_system(w, ctx, flags & PM_SNAPSHOT_PHYS);
	}
	if (!r)
		r = pm_snapshot_commit(w);
out:
	pm_snapshot_writer_free(w);
	return r;
}

/*
 * Context.write_snapshot(path, pids, phys=False, pfn="keep"): one snapshot file of processes' page state, as
 * `pagemap snapshot -p PIDS -o PATH [--phys] [--pfn drop]` writes it (their frames' kpage* words as root).
 */
PyObject *pmpy_ctx_write_snapshot(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "pids", "phys", "pfn", NULL };
	CtxObject *c = (CtxObject *)self;
	PyObject *bytes, *seq, *out = NULL;
	const char *pfn = "keep";
	int phys = 0, r;
	pid_t *pids = NULL;
	long bad = 0;
	Py_ssize_t n;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|ps:write_snapshot", kwlist, PyUnicode_FSConverter, &bytes,
					 &seq, &phys, &pfn))
		return NULL;
	if (strcmp(pfn, "keep") && strcmp(pfn, "drop")) {
		PyErr_Format(PyExc_ValueError, "unknown pfn mode '%s' (keep or drop)", pfn);
		Py_DECREF(bytes);
		return NULL;
	}
	pids = pmpy_pid_list(seq, &n);
	if (!pids)
		goto out;
	PMPY_ALLOW_THREADS
	r = snapshot_write(c->ctx, PyBytes_AsString(bytes), pids, n,
			   (!strcmp(pfn, "drop") ? DROP : 0) | (phys ? PM_SNAPSHOT_PHYS : 0), &bad);
	PMPY_END_ALLOW_THREADS
	if (r < 0 && bad)
		pmpy_raise(r, c, "cannot snapshot process %ld into %s", bad, PyBytes_AsString(bytes));
	else if (r < 0)
		pmpy_raise(r, c, "cannot write snapshot %s", PyBytes_AsString(bytes));
	else if (!pmpy_interrupted())
		out = Py_NewRef(Py_None);
out:
	free(pids);
	Py_DECREF(bytes);
	return out;
}

#define KPAGE_PIECE (1u << 20)	/* frames per read of kpage_read: 8 MiB per file, between two looks for Ctrl-C */

/* Read @n frames from @pfn in pieces, without the GIL. Returns 0 or -errno (-EINTR: a signal handler raised). */
static int kpage_pieces(struct pm_kpage *k, uint64_t pfn, uint64_t n, uint64_t **buf)
{
	uint64_t done = 0, m;
	int r = 0;

	while (done < n && !r) {
		m = n - done < KPAGE_PIECE ? n - done : KPAGE_PIECE;
		r = pm_kpage_read(k, pfn + done, (size_t)m, buf[0] ? buf[0] + done : NULL,
				  buf[1] ? buf[1] + done : NULL, buf[2] ? buf[2] + done : NULL);
		done += m;
		if (!r)
			r = pmpy_check_now();
	}
	return r;
}

/*
 * Context.kpage_read(pfn, n) -> (flags, counts, cgroups): three Arrays of uint64 per frame, None where
 * unreadable. Frames past the machine's last (pm_kpage_end) are left out: the Arrays hold what was read, so a
 * count of 2**31 costs the machine's frames, not 48 GiB of words saying "no page".
 */
PyObject *pmpy_ctx_kpage_read(PyObject *self, PyObject *args)
{
	CtxObject *c = (CtxObject *)self;
	ArrayObject *a[3] = { NULL, NULL, NULL };
	uint64_t *buf[3] = { NULL, NULL, NULL };
	int ok[3] = { 0, 0, 0 };
	struct pm_kpage *k;
	uint64_t pfn, n, end = 0;
	PyObject *out = NULL;
	int i, r;

	if (!PyArg_ParseTuple(args, "O&O&:kpage_read", pmpy_u64_arg, &pfn, pmpy_u64_arg, &n))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = pmpy_ctx_kpage_lock(c, &k);
	if (!r)
		r = pm_kpage_end(k, &end);
	for (i = 0; !r && i < 3; i++)
		ok[i] = pm_kpage_status(k, (enum pm_kpage_file)i) == 0;
	pmpy_ctx_kpage_unlock(c);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return pmpy_raise(r, c, "cannot read %sproc/kpageflags", pm_ctx_root(c->ctx));
	n = pfn >= end ? 0 : (n < end - pfn ? n : end - pfn);
	for (i = 0; i < 3; i++) {
		if (!ok[i])
			continue;
		a[i] = (ArrayObject *)pmpy_array_new(ARRAY_KPAGE, (Py_ssize_t)n, 8, "Q");
		if (!a[i])
			goto out;
		a[i]->start = pfn;
		buf[i] = (uint64_t *)a[i]->data;
	}
	PMPY_ALLOW_THREADS
	r = pmpy_ctx_kpage_lock(c, &k);
	if (!r)
		r = kpage_pieces(k, pfn, n, buf);
	pmpy_ctx_kpage_unlock(c);
	PMPY_END_ALLOW_THREADS
	if (r < 0 || pmpy_interrupted()) {
		pmpy_raise(r, c, "cannot read frames %#llx+%llu", (unsigned long long)pfn, (unsigned long long)n);
		goto out;
	}
	out = Py_BuildValue("(OOO)", a[0] ? (PyObject *)a[0] : Py_None, a[1] ? (PyObject *)a[1] : Py_None,
			    a[2] ? (PyObject *)a[2] : Py_None);
out:
	for (i = 0; i < 3; i++)
		Py_XDECREF((PyObject *)a[i]);
	return out;
}
