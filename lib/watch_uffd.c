/* watch_uffd.c - write watch back end: userfaultfd write-protect (async) armed and harvested by PAGEMAP_SCAN. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#define XXH_INLINE_ALL	/* header-only: no link dependency */
#include <xxhash.h>
#include "compat.h"
#include "smaps.h"
#include "inject.h"
#include "watch.h"

#define VEC_LEN 1024u	/* regions per PAGEMAP_SCAN call (24 KiB) */

#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)	/* Linux 5.19 */
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)		/* /dev/userfaultfd, Linux 6.1 */
#endif

/*
 * One registered mapping (or the part of it inside a watched range). Arming
 * write-protects empty entries too, with markers: that needs page tables,
 * 4 KiB per 2 MiB of address space nobody touched. A big mapping that is
 * mostly empty (a sanitizer's shadow, a reserved heap) would cost gigabytes,
 * so there only populated pages are armed and reported ("sparse"): a write
 * to an empty page still populates it and is seen; MADV_DONTNEED there is not.
 */
struct piece {
	uint64_t start, end;
	uint64_t map_start;	/* the mapping's first address (its smaps record) */
	bool sparse;
	int hugetlb;		/* -1 not asked yet (asked only where a huge page shows), 0, 1 */
};

/*
 * A PMD-mapped transparent huge page left whole. With async uffd-wp the
 * first write to a write-protected huge PMD splits it (wp_huge_pmd, 6.7-6.18:
 * seen here, AnonHugePages 4096 -> 2048 kB after one byte), and tracking must
 * leave the target's huge pages as it found them. So unless PM_WATCH_NOTHP,
 * huge pages are not armed: each collect compares their contents (read with
 * process_vm_readv, hashed) and reports a changed one whole, marked huge.
 */
struct hblock {
	uint64_t start;
	uint64_t hash;
};

#define SPARSE_MIN_BYTES (1ULL << 30)	/* mappings below this are always armed whole */

struct uffd_state {
	int fd;
	struct piece *pieces;
	size_t npieces, cap;
	struct hblock *hb;		/* sorted by start */
	size_t nhb, caphb;
	void *hbuf;			/* one PMD of contents */
	struct page_region vec[VEC_LEN];
};

int pm_watch_uffd_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_UFFD);

	if (!f->scan) {
		snprintf(buf, size, "uffd: this kernel has no PAGEMAP_SCAN (Linux 6.7+)");
		return -EOPNOTSUPP;
	}
	if (f->uffd_wp_async != PM_YES) {
		if (f->uffd_error)
			snprintf(buf, size, "uffd: cannot create a userfaultfd here: %s", strerror(f->uffd_error));
		else
			snprintf(buf, size, "uffd: this kernel's userfaultfd has no async write-protect (Linux 6.7+)");
		return -EOPNOTSUPP;
	}
#ifndef __x86_64__
	if (pid != 0) {
		snprintf(buf, size, "uffd: creating a userfaultfd inside another process is only done on x86-64");
		return -EOPNOTSUPP;
	}
#endif
	if (pid != 0)
		snprintf(buf, size, "uffd: async write-protect + PAGEMAP_SCAN; the userfaultfd is made inside PID %d "
			 "by ptrace (it stops once, briefly)%s", (int)pid,
			 geteuid() == 0 && pm_inject_seccomp(pid) > 0
				 ? "; its seccomp filter is suspended for the 2 injected calls"
				 : "");
	else
		snprintf(buf, size, "uffd: async write-protect + PAGEMAP_SCAN (exact, atomic reset)");
	return 0;
}

static uint64_t wanted_features(const struct pm_features *f)
{
	uint64_t want = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;

	/* Shared memory and hugetlb need it; ask only if offered, else UFFDIO_API fails. */
	if (f->uffd_features & UFFD_FEATURE_WP_HUGETLBFS_SHMEM)
		want |= UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	return want;
}

/* A userfaultfd of the calling process: the syscall, else /dev/userfaultfd (6.1+). */
static int self_uffd(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev < 0)
			return -errno;
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		close(dev);
		if (fd < 0)
			return -errno;
	}
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int register_span(int fd, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(fd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

/*
 * The userfaultfd belongs to the mm the target had when it was made:
 * UFFDIO_REGISTER fails with ENOMEM once that mm is gone (exit, exec).
 * The pagemap fd was opened on the same mm: a read of it then gives EOF.
 */
static bool mm_gone(struct pm_watch *w)
{
	uint64_t e;

	return pm_target_read(w->t, 0, &e, 1) == -ESRCH;
}

/* What to do with each batch of regions one PAGEMAP_SCAN call returned. */
typedef int (*regions_fn)(struct pm_watch *w, const struct page_region *v, int n, void *data);

/*
 * PAGEMAP_SCAN over [arg.start, arg.end) with @arg's flags and masks; with
 * arg.vec_len non-zero the regions go to @fn batch by batch (the vector is
 * the handle's), else one call does it all. Resumes from the later of
 * walk_end and the last region's end (docs/kernel-interface.md §6.2: walk_end can be
 * stale after more than 512 regions in one call).
 */
static int scan_each(struct pm_watch *w, struct pm_scan_arg arg, regions_fn fn, void *data)
{
	struct uffd_state *s = w->priv;
	bool out = arg.vec_len != 0;
	uint64_t end = arg.end;

	arg.size = sizeof(arg);
	arg.vec = out ? (uintptr_t)s->vec : 0;
	arg.vec_len = out ? VEC_LEN : 0;
	while (arg.start < end) {
		int err, n = ioctl(w->t->pagemap_fd, PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		if (n > 0 && (err = fn(w, s->vec, n, data)) < 0)
			return err;
		if (!out || (unsigned)n < VEC_LEN)
			break;
		arg.start = arg.walk_end > s->vec[n - 1].end ? arg.walk_end : s->vec[n - 1].end;
		arg.end = end;
	}
	return 0;
}

static int count_pages(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	int i;

	for (i = 0; i < n; i++)
		*(uint64_t *)data += (v[i].end - v[i].start) / w->psize;
	return 0;
}

/* Pages of [a, b) that are present or swapped, counted by PAGEMAP_SCAN. */
static int64_t populated_pages(struct pm_watch *w, uint64_t a, uint64_t b)
{
	struct pm_scan_arg arg = {
		.start = a, .end = b, .vec_len = 1,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED, .return_mask = PAGE_IS_PRESENT,
	};
	uint64_t pages = 0;
	int err = scan_each(w, arg, count_pages, &pages);

	return err < 0 ? err : (int64_t)pages;
}

/* Index of the first piece that ends after @a (pieces are sorted and do not overlap). */
static size_t piece_lower(const struct uffd_state *s, uint64_t a)
{
	size_t lo = 0, hi = s->npieces;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pieces[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert in address order: appending when ranges come in order (a batch), so adding N mappings is linear. */
static int add_piece(struct uffd_state *s, uint64_t a, uint64_t b, uint64_t map_start, bool sparse)
{
	size_t at;

	if (s->npieces == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct piece *p = realloc(s->pieces, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pieces = p;
		s->cap = cap;
	}
	at = s->npieces && s->pieces[s->npieces - 1].end <= a ? s->npieces : piece_lower(s, a);
	memmove(&s->pieces[at + 1], &s->pieces[at], (s->npieces - at) * sizeof(*s->pieces));
	s->pieces[at] = (struct piece){ .start = a, .end = b, .map_start = map_start, .sparse = sparse, .hugetlb = -1 };
	s->npieces++;
	return 0;
}

/* Forget the pieces and huge blocks inside @r (before registering it again). */
static void drop_pieces(struct uffd_state *s, const struct pm_watch_range *r)
{
	size_t i = piece_lower(s, r->start), j = i, k;

	while (j < s->npieces && s->pieces[j].start < r->end)
		j++;
	if (j > i) {	/* nothing to move otherwise (and pieces may still be NULL) */
		memmove(&s->pieces[i], &s->pieces[j], (s->npieces - j) * sizeof(*s->pieces));
		s->npieces -= j - i;
	}
	for (i = 0; i < s->nhb && s->hb[i].start < r->start; i++)
		;
	for (k = i; k < s->nhb && s->hb[k].start < r->end; k++)
		;
	if (k > i) {
		memmove(&s->hb[i], &s->hb[k], (s->nhb - k) * sizeof(*s->hb));
		s->nhb -= k - i;
	}
}

/* Big and less than half populated: arm only what has content. */
static int is_sparse(struct pm_watch *w, uint64_t a, uint64_t b, bool *sparse)
{
	int64_t pop;

	*sparse = false;
	if (b - a < SPARSE_MIN_BYTES)
		return 0;
	pop = populated_pages(w, a, b);
	if (pop < 0)
		return (int)pop;
	*sparse = (uint64_t)pop * 2 < (b - a) / w->psize;
	if (*sparse)
		w->stats.sparse_bytes += b - a;
	return 0;
}

struct reg_ctx {
	const struct pm_watch_range *r;
	int any;
};

static int register_vma(struct pm_watch *w, const struct pm_watch_vma *m, void *data)
{
	struct reg_ctx *c = data;
	struct uffd_state *s = w->priv;
	uint64_t a = m->start > c->r->start ? m->start : c->r->start;
	uint64_t b = m->end < c->r->end ? m->end : c->r->end;
	bool sparse;
	int err;

	if (b <= a || m->special)
		return 0;
	err = register_span(s->fd, a, b);
	if (err < 0) {
		pm_dbg(w->ctx, "watch: UFFDIO_REGISTER %#llx-%#llx: %s", (unsigned long long)a, (unsigned long long)b,
		       strerror(-err));
		return err;
	}
	err = is_sparse(w, a, b, &sparse);
	if (!err)
		err = add_piece(s, a, b, m->start, sparse);
	c->any = 1;
	return err;
}

/*
 * Register every mapping inside @r (a registration may not span a hole, and
 * one that fails names its mapping) and note each as a piece. [vvar] and
 * [vsyscall] cannot be registered.
 */
static int register_range(struct pm_watch *w, const struct pm_watch_range *r)
{
	struct reg_ctx c = { r, 0 };
	int err;

	drop_pieces(w->priv, r);
	err = pm_watch_vmas_in(w, r->start, r->end, register_vma, &c);
	if (err < 0)
		return err == -ENOMEM && mm_gone(w) ? -ESRCH : err;
	return c.any ? 0 : -EINVAL;
}

static int scan_written(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse);

/* ---- huge pages left whole ---- */

/* Index of the first huge block at or after @a. */
static size_t hb_lower(const struct uffd_state *s, uint64_t a)
{
	size_t lo = 0, hi = s->nhb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->hb[mid].start < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int hb_insert(struct uffd_state *s, size_t at, uint64_t start, uint64_t hash)
{
	if (s->nhb == s->caphb) {
		size_t cap = s->caphb ? 2 * s->caphb : 16;
		struct hblock *p = realloc(s->hb, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->hb = p;
		s->caphb = cap;
	}
	memmove(&s->hb[at + 1], &s->hb[at], (s->nhb - at) * sizeof(*s->hb));
	s->hb[at] = (struct hblock){ start, hash };
	s->nhb++;
	return 0;
}

/* The contents of the huge page at @a, hashed; read from the target (process_vm_readv: never a fault here). */
static int hb_hash(struct pm_watch *w, uint64_t a, uint64_t *hash)
{
	struct uffd_state *s = w->priv;
	size_t len = (size_t)w->ctx->features.pmd_size;
	struct iovec local, remote = { (void *)(uintptr_t)a, len };
	ssize_t n;

	if (!s->hbuf && !(s->hbuf = malloc(len)))
		return -ENOMEM;
	local = (struct iovec){ s->hbuf, len };
	n = process_vm_readv(w->pid ? w->pid : getpid(), &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	*hash = XXH3_64bits(s->hbuf, len);
	w->stats.hashed_bytes += len;
	return 0;
}

/* Is the PMD block at @a still one PMD-mapped huge page? */
static int still_huge(struct pm_watch *w, uint64_t a, bool *huge)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .start = a, .end = a + pmd, .vec = (uintptr_t)s->vec, .vec_len = 1,
		.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT, .return_mask = PAGE_IS_HUGE,
	};
	int n = ioctl(w->t->pagemap_fd, PAGEMAP_SCAN, &arg);

	if (n < 0)
		return -errno;
	*huge = n == 1 && s->vec[0].start == a && s->vec[0].end == a + pmd;
	return 0;
}

struct found {
	uint64_t *v;
	size_t n, cap;
};

static int collect_huge(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	uint64_t pmd = w->ctx->features.pmd_size, a;
	struct found *f = data;
	int i;

	for (i = 0; i < n; i++)
		for (a = (v[i].start + pmd - 1) & ~(pmd - 1); a + pmd <= v[i].end; a += pmd) {
			if (f->n == f->cap) {
				size_t cap = f->cap ? 2 * f->cap : 16;
				uint64_t *p = realloc(f->v, cap * sizeof(*p));

				if (!p)
					return -ENOMEM;
				f->v = p;
				f->cap = cap;
			}
			f->v[f->n++] = a;
		}
	return 0;
}

/* Is piece @p a hugetlb mapping (armed as it is: a hugetlb page never splits)? Asked once, of smaps. */
static bool piece_hugetlb(struct pm_watch *w, struct piece *p)
{
	struct pm_smaps_swap *v;
	const struct pm_smaps_swap *e;
	size_t n;

	if (p->hugetlb < 0) {
		p->hugetlb = 0;
		if (pm_smaps_swap_read(w->t, &v, &n) == 0) {
			e = pm_smaps_find(v, n, p->map_start);
			p->hugetlb = e && e->kernel_page > w->psize;
			free(v);
		}
	}
	return p->hugetlb;
}

/*
 * The huge pages of piece @p now: in a sparse piece (empty parts not armed,
 * where a new one can form) by a scan of it all, elsewhere by checking the
 * known ones (armed page tables keep new ones from forming: no huge fault
 * over them, and khugepaged skips uffd-wp entries). At add (@discover) the
 * whole piece is scanned.
 */
static int huge_now(struct pm_watch *w, struct piece *p, bool discover, struct found *f)
{
	struct uffd_state *s = w->priv;
	size_t i;
	int err = 0;

	if (discover || p->sparse) {
		struct pm_scan_arg arg = {
			.start = p->start, .end = p->end, .vec_len = 1,
			.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT, .return_mask = PAGE_IS_HUGE,
		};

		err = scan_each(w, arg, collect_huge, f);
		if (!err && f->n && piece_hugetlb(w, p))
			f->n = 0;
		return err;
	}
	for (i = hb_lower(s, p->start); i < s->nhb && s->hb[i].start < p->end && !err; i++) {
		bool huge = false;

		err = still_huge(w, s->hb[i].start, &huge);
		if (!err && huge)
			err = collect_huge(w, &(struct page_region){ .start = s->hb[i].start,
					   .end = s->hb[i].start + w->ctx->features.pmd_size }, 1, f);
	}
	return err;
}

/*
 * Compare the known huge blocks of @p with those there now (@f, sorted):
 * still huge, its contents decide; split or gone, contents decide and (with
 * @reset) it is armed like any other memory from now on; new, it appeared
 * since the last look, so it was written (or read in: either way new
 * contents), and it is kept whole from now on (with @reset).
 */
static int huge_merge(struct pm_watch *w, const struct piece *p, const struct found *f, bool report, bool reset)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size, hash = 0;
	size_t i = hb_lower(s, p->start), j = 0;
	int err = 0;

	while (!err && (j < f->n || (i < s->nhb && s->hb[i].start < p->end))) {
		bool known = i < s->nhb && s->hb[i].start < p->end;
		uint64_t a = known && (j >= f->n || s->hb[i].start <= f->v[j]) ? s->hb[i].start : f->v[j];
		bool now = j < f->n && f->v[j] == a;
		int herr;

		known = known && s->hb[i].start == a;
		herr = hb_hash(w, a, &hash);
		if (report && (!known || herr || hash != s->hb[i].hash))
			pm_watch_emit(w, a, a + pmd, true);
		if (known && now) {
			if (reset && !herr)
				s->hb[i].hash = hash;
			i++;
		} else if (known) {	/* split or unmapped since: arm it, forget it */
			if (reset) {
				err = scan_written(w, a, a + pmd, false, true, p->sparse);
				memmove(&s->hb[i], &s->hb[i + 1], (--s->nhb - i) * sizeof(*s->hb));
			} else {
				i++;
			}
		} else if (reset && !herr) {	/* new */
			err = hb_insert(s, i, a, hash);
			i++;
		}
		if (now)
			j++;
	}
	return err;
}

/* Scan (report and/or re-arm) [@a, @b) of @p around the huge blocks left whole. */
static int scan_gaps(struct pm_watch *w, const struct piece *p, bool report, bool rearm)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size, a = p->start;
	size_t i;
	int err = 0;

	for (i = hb_lower(s, p->start); i < s->nhb && s->hb[i].start < p->end && !err; i++) {
		if (s->hb[i].start > a)
			err = scan_written(w, a, s->hb[i].start, report, rearm, p->sparse);
		a = s->hb[i].start + pmd;
	}
	if (!err && a < p->end)
		err = scan_written(w, a, p->end, report, rearm, p->sparse);
	return err;
}

/*
 * One piece: the huge pages left whole first (@huge: look at them; at add,
 * @discover them), then everything else through the write-protect bits.
 */
static int scan_piece(struct pm_watch *w, struct piece *p, bool report, bool rearm, bool huge, bool discover)
{
	bool keep = !(w->flags & PM_WATCH_NOTHP) && w->ctx->features.pmd_size;
	struct found f = { 0 };
	int err;

	if (!keep)
		return scan_written(w, p->start, p->end, report, rearm, p->sparse);
	if (!huge)
		return scan_gaps(w, p, report, rearm);
	err = huge_now(w, p, discover, &f);
	if (!err)
		err = huge_merge(w, p, &f, report, rearm);
	free(f.v);
	return err ? err : scan_gaps(w, p, report, rearm);
}

/* Scan (report and/or re-arm) every piece inside @r; @huge: look at the huge pages left whole too. */
static int scan_range(struct pm_watch *w, const struct pm_watch_range *r, bool report, bool rearm, bool huge,
		      bool discover)
{
	struct uffd_state *s = w->priv;
	size_t i;

	for (i = piece_lower(s, r->start); i < s->npieces && s->pieces[i].start < r->end; i++) {
		int err = scan_piece(w, &s->pieces[i], report, rearm, huge, discover);

		if (err < 0)
			return err;
	}
	return 0;
}

static int emit_regions(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	int i;

	(void)data;
	for (i = 0; i < n; i++)
		pm_watch_emit(w, v[i].start, v[i].end, false);
	return 0;
}

/* One pass over [start, end): report written pages (when @report), write-protect them again (when @rearm). */
static int scan_written(struct pm_watch *w, uint64_t start, uint64_t end, bool report, bool rearm, bool sparse)
{
	struct pm_scan_arg arg = {
		.flags = (rearm ? PM_SCAN_WP_MATCHING : 0) | PM_SCAN_CHECK_WPASYNC,
		.start = start,
		.end = end,
		.vec_len = report,
		/*
		 * Sparse pieces: only populated pages, and not the zero page (a read maps it
		 * unprotected there, as nothing armed the empty entry).
		 */
		.category_inverted = sparse ? PAGE_IS_PFNZERO : 0,
		.category_mask = PAGE_IS_WRITTEN | (sparse ? PAGE_IS_PFNZERO : 0),
		.category_anyof_mask = sparse ? PAGE_IS_PRESENT | PAGE_IS_SWAPPED : 0,
		/*
		 * WRITTEN alone: the kernel's fast path (docs/kernel-interface.md §6.2). Before the
		 * stable fix of docs/kernel-interface.md §6.5 (6.12.95 lacks it) only that path reads an emptied
		 * entry (MADV_DONTNEED) as written. A huge page needs no HUGE bit here:
		 * the first write splits its PMD, so reports are per page anyway.
		 */
		.return_mask = PAGE_IS_WRITTEN,
	};

	return scan_each(w, arg, emit_regions, NULL);
}

/* Arm the first page of each PMD-sized step of these huge regions alone: the kernel splits the PMD (docs/kernel-interface.md §6.4). */
static int arm_first_pages(struct pm_watch *w, const struct page_region *v, int n, void *data)
{
	int i;

	(void)data;
	for (i = 0; i < n; i++) {
		uint64_t a, step = w->ctx->features.pmd_size ? w->ctx->features.pmd_size : v[i].end;

		for (a = v[i].start; a < v[i].end; a += step) {
			/* No output vector: the regions being walked stay as they are. */
			int err = scan_written(w, a, a + w->psize, false, true, false);

			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int split_huge(struct pm_watch *w, const struct pm_watch_range *r)
{
	struct pm_scan_arg arg = {
		.start = r->start, .end = r->end, .vec_len = 1,
		.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT, .return_mask = PAGE_IS_HUGE,
	};

	if (w->pid == 0)
		madvise((void *)(uintptr_t)r->start, r->end - r->start, MADV_NOHUGEPAGE);
	return scan_each(w, arg, arm_first_pages, NULL);
}

/*
 * Shared memory of a forked process has no page tables where it never
 * touched it (fork copies none for shared mappings). PAGEMAP_SCAN's arming
 * installs no marker there on 6.12 kernels without the PMD-hole fix
 * (docs/kernel-interface.md §6.5), so a later read fault there maps a page that reads
 * WRITTEN (seen in the 6.12 guest: pages 322-327 of remote_uffd reported
 * but never written, one run in three). UFFDIO_WRITEPROTECT allocates the
 * tables and installs the markers: do it over the parts of dense pieces
 * around the huge pages left whole. Best effort: -EAGAIN (mm changing) or
 * an error leaves the behaviour as it was.
 */
static void protect_holes(struct pm_watch *w, const struct pm_watch_range *r)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	size_t i, j;

	for (i = piece_lower(s, r->start); i < s->npieces && s->pieces[i].start < r->end; i++) {
		const struct piece *p = &s->pieces[i];
		uint64_t a = p->start;

		if (p->sparse)
			continue;	/* page tables for all of it are what sparse pieces avoid */
		for (j = hb_lower(s, p->start); a < p->end; j++) {
			uint64_t b = j < s->nhb && s->hb[j].start < p->end ? s->hb[j].start : p->end;
			struct uffdio_writeprotect wp = { .range = { a, b - a }, .mode = UFFDIO_WRITEPROTECT_MODE_WP };

			if (b > a)
				ioctl(s->fd, UFFDIO_WRITEPROTECT, &wp);
			a = b + (b < p->end ? pmd : 0);
		}
	}
}

static int uffd_add(struct pm_watch *w, const struct pm_watch_range *r)
{
	struct uffd_state *s = w->priv;
	int err;

	if (!s)
		return -EBADF;	/* uffd_start failed: pm_watch_new did not return the handle */
	err = register_range(w, r);
	if (err < 0)
		return err;
	if (w->flags & PM_WATCH_NOTHP) {
		err = split_huge(w, r);
		if (err < 0)
			return err;
	}
	/* Arm: from now on only pages written after this point read WRITTEN. */
	err = scan_range(w, r, false, true, true, true);
	if (err == 0) {
		/*
		 * Arm again through the reporting path, and drop what it reports: 6.12 kernels
		 * before the fixes of docs/kernel-interface.md §6.5 skip page-table holes when arming
		 * without output, and then read them WRITTEN once (seen in the 6.12 guest:
		 * never-touched shared pages of a forked child reported by the first collect).
		 */
		size_t mark = w->nout;

		err = scan_range(w, r, true, true, false, false);
		w->nout = mark;
	}
	if (err == 0)
		protect_holes(w, r);
	return err;
}

const char *pm_watch_inject_words(pid_t pid, int err)
{
	switch (-err) {
	case EBUSY:
		return "it is traced already (a debugger, strace): a process has one tracer";
	case EAGAIN:
		return "it stayed in uninterruptible sleep (a vfork parent waiting for its child, stuck I/O), "
		       "where ptrace cannot stop it";
	case EPERM:
		if (pm_inject_seccomp(pid) > 0 && geteuid() != 0)
			return "it runs under a seccomp filter, which only CAP_SYS_ADMIN may suspend for the injected "
			       "calls (one could kill it)";
		return "ptrace or the injected call was refused (credentials, Yama, an LSM, seccomp)";
	case ENOEXEC:
		return "no rt_sigreturn trampoline (mov $15,%eax; syscall) in its code to run injected calls from";
	case EOPNOTSUPP:
		return "it runs 32-bit code or has a shadow stack";
	case ESRCH:
		return "it exited";
	}
	return strerror(-err);
}

/* The userfaultfd, once: of the caller, or made inside the target. */
static int uffd_start(struct pm_watch *w, char *why, size_t size)
{
	uint64_t want = wanted_features(&w->ctx->features), got = 0;
	struct uffd_state *s = calloc(1, sizeof(*s));
	int fd, err;

	if (!s)
		return -ENOMEM;
	if (w->pid == 0) {
		fd = self_uffd(want);
		if (fd < 0)
			snprintf(why, size, "uffd: cannot make a userfaultfd: %s", strerror(-fd));
	} else {
		err = pm_remote_uffd(w->pid, want, &fd, &got);
		if (err < 0) {
			fd = err;
			snprintf(why, size, "uffd: cannot make a userfaultfd inside process %d: %s", (int)w->pid,
				 pm_watch_inject_words(w->pid, err));
		}
	}
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->fd = fd;
	w->priv = s;
	return 0;
}

static int uffd_collect(struct pm_watch *w, bool reset)
{
	size_t i;

	for (i = 0; i < w->nranges; i++) {
		const struct pm_watch_range *r = &w->ranges[i];
		size_t mark = w->nout;
		int err = scan_range(w, r, true, reset, true, false);

		/*
		 * EPERM: a mapping in the range is not registered any more: it was
		 * replaced (munmap + mmap, MAP_FIXED). Register again and report
		 * the range anew: the new mapping's pages read WRITTEN until armed.
		 */
		if (err == -EPERM) {
			w->nout = mark;
			w->stats.rearms++;
			err = register_range(w, r);
			if (err == -EINVAL)	/* nothing mapped there any more */
				continue;
			if (!err)
				err = scan_range(w, r, true, reset, true, true);
		}
		if (err < 0)
			return err;
	}
	return 0;
}

static void uffd_fini(struct pm_watch *w)
{
	struct uffd_state *s = w->priv;
	size_t i;

	if (!s)
		return;
	/* Closing the last reference would do it too (userfaultfd_release clears the bits); be explicit. */
	for (i = 0; i < w->nranges; i++) {
		struct uffdio_range range = { .start = w->ranges[i].start,
					      .len = w->ranges[i].end - w->ranges[i].start };

		ioctl(s->fd, UFFDIO_UNREGISTER, &range);
	}
	close(s->fd);
	free(s->pieces);
	free(s->hb);
	free(s->hbuf);
	free(s);
	w->priv = NULL;
}

const struct pm_watch_ops pm_watch_uffd_ops = {
	.atomic = true,
	.start = uffd_start,
	.add = uffd_add,
	.collect = uffd_collect,
	.fini = uffd_fini,
};
