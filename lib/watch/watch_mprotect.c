/* watch_mprotect.c - write watch back end for the caller only: read-only pages and a SIGSEGV handler. */
#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <signal.h>
#include <ucontext.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "watch.h"

/*
 * One piece of a watched range that lies in one writable mapping: its
 * original protection and one "written" bit per page. The handler and the
 * collector both take the global lock, so "set the bit, make the page
 * writable" and "clear the bit, make the page read-only" never interleave:
 * a write is either seen by this collect (bit set before it) or faults
 * again after it.
 */
struct piece {
	uint64_t start, end;
	int prot;			/* PROT_* of the mapping */
	_Atomic uint64_t *written;	/* one bit per page */
};

/*
 * Everything the handler or the locked sections write lives in memory of
 * our own from mmap: a watched range may cover the malloc heap, and a fault
 * taken while holding the lock would deadlock.
 */
struct mp_state {
	struct piece *pieces;
	size_t n, cap;
	uint64_t psize;
	_Atomic uint64_t faults, overflows;
	uint64_t *scratch;		/* a copy of the bits, taken under the lock, emitted after */
	size_t scratch_words;
};

static void *mp_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void mp_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : 1);
}

static size_t words_of(const struct piece *p, uint64_t psize)
{
	return ((p->end - p->start) / psize + 63) / 64;
}

#define MAX_WATCHES 64

/* What the handler sees: every live mprotect watch. Changed only under the lock. */
static struct mp_state *watches[MAX_WATCHES];
static atomic_flag lock = ATOMIC_FLAG_INIT;
static struct sigaction old_action;
static int installed;		/* watches using the handler; changed under the lock */

/* Spin, then yield: on one CPU the holder may be preempted (sched_yield is async-signal-safe). */
static void lock_all(void)
{
	unsigned spins = 0;

	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		if (++spins > 64)
			sched_yield();
}

static void unlock_all(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

static struct piece *find_piece(uint64_t addr, struct mp_state **owner)
{
	size_t i, j;

	for (i = 0; i < MAX_WATCHES; i++) {
		struct mp_state *s = watches[i];

		for (j = 0; s && j < s->n; j++)
			if (addr >= s->pieces[j].start && addr < s->pieces[j].end) {
				*owner = s;
				return &s->pieces[j];
			}
	}
	return NULL;
}

/* A fault we did not cause: hand it to whoever had SIGSEGV before, or die of it. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	if (old_action.sa_flags & SA_SIGINFO) {
		old_action.sa_sigaction(sig, si, uc);
	} else if (old_action.sa_handler != SIG_DFL && old_action.sa_handler != SIG_IGN) {
		old_action.sa_handler(sig);
	} else {
		/* Returning re-runs the access, which faults again with the default action. */
		signal(sig, SIG_DFL);
	}
}

/*
 * Was the fault a write? x86-64 says so in the page-fault error code (bit
 * 1); elsewhere any access fault on a watched page is taken for one.
 */
static bool write_fault(const void *uc)
{
#if defined(__x86_64__) && defined(REG_ERR)
	return ((const ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2;
#else
	(void)uc;
	return true;
#endif
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	uint64_t addr = (uintptr_t)si->si_addr;
	struct mp_state *s = NULL;
	struct piece *p;
	int saved = errno;
	bool ours = false;

	lock_all();
	p = si->si_code == SEGV_ACCERR && write_fault(uc) ? find_piece(addr, &s) : NULL;
	if (p) {
		uint64_t i = (addr - p->start) / s->psize;

		ours = true;
		/* Already written: another thread's fault made it writable meanwhile; just retry the write. */
		if ((atomic_load_explicit(&p->written[i / 64], memory_order_relaxed) >> (i % 64)) & 1)
			p = NULL;
	}
	if (p) {
		uint64_t psize = s->psize, i = (addr - p->start) / psize;
		uint64_t page = p->start + i * psize;

		atomic_fetch_or_explicit(&p->written[i / 64], 1ULL << (i % 64), memory_order_relaxed);
		atomic_fetch_add_explicit(&s->faults, 1, memory_order_relaxed);
		if (mprotect((void *)(uintptr_t)page, psize, p->prot) < 0) {
			/* vm.max_map_count: one more VMA is refused. Give the piece up whole, all written. */
			uint64_t k, pages = (p->end - p->start) / psize;

			for (k = 0; k < pages; k++)
				atomic_fetch_or_explicit(&p->written[k / 64], 1ULL << (k % 64), memory_order_relaxed);
			atomic_fetch_add_explicit(&s->overflows, 1, memory_order_relaxed);
			mprotect((void *)(uintptr_t)p->start, p->end - p->start, p->prot);
		}
	}
	unlock_all();
	if (!ours)
		chain(sig, si, uc);
	errno = saved;
}

static int install(void)
{
	struct sigaction sa;

	if (installed++)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_action) < 0) {
		installed--;
		return -errno;
	}
	return 0;
}

static void uninstall(void)
{
	if (installed && !--installed)
		sigaction(SIGSEGV, &old_action, NULL);
}

/* Room for one more piece and its bits; called under the lock (the handler reads the array). */
static int add_piece(struct mp_state *s, uint64_t start, uint64_t end, int prot)
{
	struct piece *p;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		p = mp_alloc(cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		if (s->n)
			memcpy(p, s->pieces, s->n * sizeof(*p));
		mp_free(s->pieces, s->cap * sizeof(*p));
		s->pieces = p;
		s->cap = cap;
	}
	p = &s->pieces[s->n];
	p->start = start;
	p->end = end;
	p->prot = prot;
	p->written = mp_alloc(words_of(p, s->psize) * sizeof(uint64_t));
	if (!p->written)
		return -ENOMEM;
	if (words_of(p, s->psize) > s->scratch_words) {
		uint64_t *sc = mp_alloc(words_of(p, s->psize) * sizeof(uint64_t));

		if (!sc) {
			mp_free((void *)p->written, words_of(p, s->psize) * sizeof(uint64_t));
			return -ENOMEM;
		}
		mp_free(s->scratch, s->scratch_words * sizeof(uint64_t));
		s->scratch = sc;
		s->scratch_words = words_of(p, s->psize);
	}
	return 0;
}

static int prot_of(const struct pm_mapping *m)
{
	return (m->prot & PM_PROT_READ ? PROT_READ : 0) | (m->prot & PM_PROT_WRITE ? PROT_WRITE : 0) |
	       (m->prot & PM_PROT_EXEC ? PROT_EXEC : 0);
}

/* Attach @s to the handler's table. */
static int publish(struct mp_state *s)
{
	size_t i;
	int err = -EMFILE;

	lock_all();
	for (i = 0; i < MAX_WATCHES; i++)
		if (!watches[i]) {
			watches[i] = s;
			err = install();
			if (err < 0)
				watches[i] = NULL;
			break;
		}
	unlock_all();
	return err;
}

static int mp_add(struct pm_watch *w, const struct pmi_watch_range *r)
{
	struct mp_state *s = w->priv;
	const struct pm_mapping *m;
	struct pm_maps *it;
	int ret, err = 0, any = 0;

	if (!s) {
		s = mp_alloc(sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->psize = w->psize;
		err = publish(s);
		if (err < 0) {
			mp_free(s, sizeof(*s));
			return err;
		}
		w->priv = s;
	}
	it = pm_maps_open(w->t);
	if (!it)
		return -errno;
	if (w->flags & PM_WATCH_NOTHP)
		madvise((void *)(uintptr_t)r->start, r->end - r->start, MADV_NOHUGEPAGE);
	while (!err && (ret = pm_maps_next(it, &m)) == 0 && m->start < r->end) {
		uint64_t a = m->start > r->start ? m->start : r->start;
		uint64_t b = m->end < r->end ? m->end : r->end;
		int prot = prot_of(m);

		/* Only writable pages can be written. Protect under the lock: the handler must see the piece. */
		if (b <= a || !(m->prot & PM_PROT_WRITE))
			continue;
		lock_all();
		err = add_piece(s, a, b, prot);
		if (!err && mprotect((void *)(uintptr_t)a, b - a, prot & ~PROT_WRITE) < 0) {
			err = -errno;
			mp_free((void *)s->pieces[s->n].written, words_of(&s->pieces[s->n], s->psize) * sizeof(uint64_t));
		} else if (!err) {
			s->n++;
			any = 1;
		}
		unlock_all();
	}
	pm_maps_close(it);
	if (err < 0)
		return err;
	if (ret < 0)
		return ret;
	return any ? 0 : -EINVAL;
}

/*
 * Under the lock: copy @p's bits to the scratch (clearing them and making
 * the written pages read-only again when @reset). No allocation, no write
 * outside our own mappings.
 */
static int take_piece(struct mp_state *s, struct piece *p, bool reset)
{
	uint64_t pages = (p->end - p->start) / s->psize, i, run = UINT64_MAX;
	size_t k, nw = words_of(p, s->psize);
	int err = 0;

	for (k = 0; k < nw; k++)
		s->scratch[k] = reset ? atomic_exchange_explicit(&p->written[k], 0, memory_order_relaxed)
				      : atomic_load_explicit(&p->written[k], memory_order_relaxed);
	for (i = 0; reset && i <= pages; i++) {
		bool set = i < pages && (s->scratch[i / 64] >> (i % 64)) & 1;

		if (set && run == UINT64_MAX)
			run = i;
		if (!set && run != UINT64_MAX) {
			if (mprotect((void *)(uintptr_t)(p->start + run * s->psize), (i - run) * s->psize,
				     p->prot & ~PROT_WRITE) < 0 && !err)
				err = -errno;
			run = UINT64_MAX;
		}
	}
	return err;
}

/* After the lock: the scratch's runs of set bits become reports. */
static void emit_scratch(struct pm_watch *w, const struct mp_state *s, const struct piece *p)
{
	uint64_t pages = (p->end - p->start) / s->psize, i, run = UINT64_MAX;

	for (i = 0; i <= pages; i++) {
		bool set = i < pages && (s->scratch[i / 64] >> (i % 64)) & 1;

		if (set && run == UINT64_MAX)
			run = i;
		if (!set && run != UINT64_MAX) {
			pmi_watch_emit(w, p->start + run * s->psize, p->start + i * s->psize, false);
			run = UINT64_MAX;
		}
	}
}

static int mp_collect(struct pm_watch *w, bool reset)
{
	struct mp_state *s = w->priv;
	size_t i;
	int err = 0;

	if (!s)
		return 0;
	for (i = 0; i < s->n; i++) {
		int e;

		lock_all();	/* the handler waits: no bit changes while we copy and re-protect */
		e = take_piece(s, &s->pieces[i], reset);
		unlock_all();
		emit_scratch(w, s, &s->pieces[i]);
		if (e < 0 && !err)
			err = e;
	}
	w->stats.faults = atomic_load(&s->faults);
	w->stats.overflows = atomic_load(&s->overflows);
	return err;
}

static void mp_fini(struct pm_watch *w)
{
	struct mp_state *s = w->priv;
	size_t i;

	if (!s)
		return;
	lock_all();
	for (i = 0; i < MAX_WATCHES; i++)
		if (watches[i] == s)
			watches[i] = NULL;
	uninstall();
	unlock_all();
	for (i = 0; i < s->n; i++) {
		struct piece *p = &s->pieces[i];

		mprotect((void *)(uintptr_t)p->start, p->end - p->start, p->prot);
		mp_free((void *)p->written, words_of(p, s->psize) * sizeof(uint64_t));
	}
	mp_free(s->pieces, s->cap * sizeof(*s->pieces));
	mp_free(s->scratch, s->scratch_words * sizeof(uint64_t));
	mp_free(s, sizeof(*s));
	w->priv = NULL;
}

static int mp_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	if (pid != 0) {
		snprintf(buf, size, "mprotect: only for the calling process (it needs the process's own SIGSEGV handler)");
		return -EOPNOTSUPP;
	}
	snprintf(buf, size, "mprotect: read-only pages and a SIGSEGV handler (kernel writes into them fail)");
	return 0;
}

/* Calibration's handler: the fault of a page the round protected makes it writable again. */
static void cal_unprotect(int sig, siginfo_t *si, void *uc)
{
	long ps = sysconf(_SC_PAGESIZE);

	(void)sig;
	(void)uc;
	uintptr_t page = (uintptr_t)si->si_addr & ~(uintptr_t)(ps - 1);

	mprotect((void *)page, (size_t)ps, PROT_READ | PROT_WRITE);
}

/* Calibration: @p made read-only, the handler above installed at the first round. */
static int mp_cal_arm(char *p, size_t len, int *state)
{
	struct sigaction sa = { .sa_sigaction = cal_unprotect, .sa_flags = SA_SIGINFO };

	if (*state < 0) {
		if (sigaction(SIGSEGV, &sa, NULL) < 0)
			return -1;
		*state = 0;
	}
	return mprotect(p, len, PROT_READ);
}

const struct pmi_watch_ops pmi_watch_mprotect_ops = {
	.method = PM_WATCH_MPROTECT,
	.name = "mprotect",
	.auto_pick = true,
	.caller_only = true,
	.perturbs = "its watched pages are made read-only (a SIGSEGV, caught and resolved, on the "
		    "first write to each page per interval)",
	.details = "(the caller only) its watched pages are made read-only and a SIGSEGV\n"
		   "handler makes each writable again at its first write per interval.\n"
		   "Kernel writes into a watched page (read(2), recv(2)) fail with EFAULT;\n"
		   "scattered written pages split the mapping up to vm.max_map_count.",
	.usable = mp_usable,
	.atomic = true,
	.add = mp_add,
	.collect = mp_collect,
	.fini = mp_fini,
	.cal_arm = mp_cal_arm,
};
