/* _core.h - what the C files of the libpagemap Python extension share (stable ABI, Python 3.11+). */
#ifndef PMPY_CORE_H
#define PMPY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pagemap.h>

/* A new object of heap type @tp (its tp_alloc, as the limited API reaches it). */
#define PMPY_ALLOC(tp) ((allocfunc)PyType_GetSlot((tp), Py_tp_alloc))((tp), 0)

/* A Context: one pm_ctx, and the kpage handle accounting opens on first use. */
typedef struct {
	PyObject_HEAD
	struct pm_ctx *ctx;
	struct pm_kpage *kpage;
	int kpage_err;		/* -errno of the failed pm_kpage_open, 0 not tried or open */
	PyThread_type_lock kpage_lock;	/* the kpage handle has one buffer: one thread at a time uses it */
	_Atomic unsigned long kpage_owner;	/* the thread holding kpage_lock, 0 none */
	int kpage_depth;		/* its nested takes (a signal handler's, refused), owner only */
	PyObject *snapshot;	/* the snapshot path it replays, or None */
} CtxObject;

/*
 * A Target: one pm_target; holds its Context, which must outlive it. A call that uses the handle counts
 * itself in @busy for its whole length (most run without the GIL): close() from another thread meanwhile
 * only marks it @closing, so no new call starts, and the last call to end closes the handle.
 */
typedef struct {
	PyObject_HEAD
	struct pm_target *t;
	CtxObject *ctx;
	unsigned page_size;
	int busy;
	bool closing;
} TargetObject;

/* Count a call on @t: 0, or -1 with ValueError("the target is closed"). pmpy_target_leave ends it. */
int pmpy_target_enter(TargetObject *t);
void pmpy_target_leave(TargetObject *t);

/* An Array: an owned block of fixed-size records exported through the buffer protocol (PEP 3118). */
typedef struct {
	PyObject_HEAD
	char *data;
	Py_ssize_t n, itemsize;
	const char *format;	/* static */
	Py_ssize_t shape, stride;
	int kind;		/* ARRAY_* */
	PyObject *maps;		/* ARRAY_RUNS: tuple of Mapping, indexed by the run's map field */
	unsigned known;		/* ARRAY_RUNS: pm_walk_known; ARRAY_ENTRIES, ARRAY_FLAGS: pmpy_entry_known */
	int backend;		/* ARRAY_RUNS: pm_walk_backend */
	uint64_t start;		/* ARRAY_ENTRIES: address of the first entry's page; ARRAY_KPAGE: first PFN */
	/* ARRAY_ENTRIES of a Target: how they decode, copied, so flags() never needs the Target (it may be closed) */
	struct pm_decode_info decode;
	bool has_decode;
} ArrayObject;

enum { ARRAY_ENTRIES, ARRAY_FLAGS, ARRAY_RUNS, ARRAY_WRITTEN, ARRAY_KPAGE };

/* One run as the Runs array holds it: 48 bytes, naturally aligned, RUN_FORMAT. */
struct pmpy_run {
	uint64_t start, end, pfn, swap_offset;
	uint32_t flags, map;
	uint8_t swap_type;
	uint8_t pad[7];
};
#define RUN_FORMAT "T{Q:start:Q:end:Q:pfn:Q:swap_offset:I:flags:I:map:B:swap_type:7x}"

/* One written range as a Watch returns it: 24 bytes. */
struct pmpy_written {
	uint64_t start, end;
	uint8_t huge;
	uint8_t pad[7];
};
#define WRITTEN_FORMAT "T{Q:start:Q:end:?:huge:7x}"

extern PyTypeObject *pmpy_ctx_type, *pmpy_target_type, *pmpy_array_type, *pmpy_watch_type;
extern PyTypeObject *pmpy_entry_type, *pmpy_mapping_type, *pmpy_usage_type, *pmpy_account_type,
	*pmpy_proc_type, *pmpy_run_type, *pmpy_v2p_type, *pmpy_share_sum_type, *pmpy_decode_info_type;

/* Raise the exception the Python layer makes for -@err (an OSError subclass), "WHAT: explanation". */
PyObject *pmpy_raise(int err, CtxObject *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Running without the GIL (_allow.c). PMPY_ALLOW_THREADS / PMPY_END_ALLOW_THREADS replace Py_BEGIN/END_ALLOW_THREADS
 * around library calls that may be long: the thread state is kept where pmpy_check (the pm_ctx_set_check function
 * of every Context) can take the GIL back for a moment to run Python's signal handlers, so Ctrl-C stops a walk of
 * a huge address space. Once a handler raised, every later check fails with -EINTR until the GIL is taken back
 * (the mark ends there: calls that keep the GIL never see it); the call then fails with the handler's exception
 * (pmpy_raise keeps it; pmpy_interrupted tells a success path). The handlers run with no saved state, so a
 * library call of theirs checks nothing.
 */
#define PMPY_ALLOW_THREADS pmpy_release();
#define PMPY_END_ALLOW_THREADS pmpy_acquire();
void pmpy_release(void);
void pmpy_acquire(void);
int pmpy_check(void *unused);
/* Without the GIL: run the signal handlers now (not rate-limited). -EINTR when one raised. */
int pmpy_check_now(void);
/* With the GIL: did a signal handler raise during the last call without it? (its exception is set) */
int pmpy_interrupted(void);
int pmpy_allow_init(PyObject *m);

/* Types and functions of each file, set up by PyInit__core. */
int pmpy_target_init(PyObject *m);
int pmpy_array_init(PyObject *m);
int pmpy_watch_init(PyObject *m);
int pmpy_records_init(PyObject *m);
PyObject *pmpy_array_new(int kind, Py_ssize_t n, Py_ssize_t itemsize, const char *format);
/* The PM_PAGE_* flags that entries decoded as @d say on the kernel of @f (pm_flag_lack); 0 for a NULL @f. */
unsigned pmpy_entry_known(const struct pm_features *f, const struct pm_decode_info *d);
PyObject *pmpy_mapping_new(const struct pm_mapping *m);
/* A Usage of @u (a row of mapping @m): None for a field whose flag is outside @known (pm_mapstat_known). */
PyObject *pmpy_usage_new(const struct pm_usage *u, const struct pm_mapping *m, uint32_t known);
PyObject *pmpy_entry_new(const struct pm_entry *e);
/*
 * The pfn, swap type and swap offset of an entry or run with @flags, as three new references into @out: None
 * where the fields are not real (no FRAME: hidden or absent; pfn without PRESENT; swap without a slot).
 */
void pmpy_frame_fields(uint32_t flags, uint64_t pfn, unsigned swap_type, uint64_t swap_offset, PyObject *out[3]);
PyObject *pmpy_account_new(const struct pm_account *a);
PyObject *pmpy_share_sum_new(const struct pm_share_sum *s);
PyObject *pmpy_features_rows(CtxObject *c);
PyObject *pmpy_u64(uint64_t v);
/* A str of text that came from the system or a replayed tree (any bytes): decoded as os.fsdecode does. */
PyObject *pmpy_str(const char *s);
/* PyArg "O&" converter to pid_t: TypeError for a non-integer, OverflowError past pid_t, ValueError below 0. */
int pmpy_pid_arg(PyObject *o, void *out);
/* A sequence of PIDs as a malloc'd array (free it), each checked as pmpy_pid_arg, duplicates dropped
   (first places kept), 0 made this process's PID; *@n their number. NULL with an exception. */
pid_t *pmpy_pid_list(PyObject *seq, Py_ssize_t *n);
/* PyArg "O&" converter to uint64_t: OverflowError for negatives and values past 64 bits ("K" wraps them). */
int pmpy_u64_arg(PyObject *o, void *out);
/* A struct sequence of type @t from @n new references (all released on failure; a NULL one fails). */
PyObject *pmpy_record(PyTypeObject *t, PyObject **v, int n);
/*
 * Without the GIL: take the context's kpage handle (opened on first use) for this thread until
 * pmpy_ctx_kpage_unlock (always called, whatever this returns). Returns 0 with *@out, or -errno of its open,
 * or -EDEADLK when this thread holds it already (a signal handler run inside a call that uses it: the
 * handle is mid-read, and waiting would never end); *@out is NULL then.
 */
int pmpy_ctx_kpage_lock(CtxObject *c, struct pm_kpage **out);
void pmpy_ctx_kpage_unlock(CtxObject *c);

/* Context methods defined in other files. */
PyObject *pmpy_ctx_shared(PyObject *self, PyObject *args);
PyObject *pmpy_ctx_numa_nodes(PyObject *self, PyObject *unused);
PyObject *pmpy_ctx_cache_stat(PyObject *self, PyObject *arg);
PyObject *pmpy_ctx_kpage_read(PyObject *self, PyObject *args);
PyObject *pmpy_ctx_write_snapshot(PyObject *self, PyObject *args, PyObject *kw);

/* Target methods defined in _more.c. */
PyObject *pmpy_target_wss(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pmpy_target_numa(PyObject *self, PyObject *args, PyObject *kw);

#endif
