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
#include <unistd.h>
#include "compat.h"
#include "inject.h"
#include "watch_uffd.h"

#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)	/* Linux 5.19 */
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)		/* /dev/userfaultfd, Linux 6.1 */
#endif

#define SPARSE_MIN_BYTES (1ULL << 30)	/* mappings below this are always armed whole */

static int uffd_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_UFFD);

	if (!f->scan) {
		snprintf(buf, size, "uffd: this kernel has no PAGEMAP_SCAN (Linux 6.7+)");
		return -EOPNOTSUPP;
	}
	if (f->uffd_wp_async != PM_YES) {
		if (f->uffd_error)
			snprintf(buf, size, "uffd: cannot create a userfaultfd here: %s", pmi_strerror(f->uffd_error));
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
			 geteuid() == 0 && pmi_inject_seccomp(pid) > 0
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
int pmi_uffd_self(uint64_t features)
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
	int err = pmi_uffd_scan_each(w, arg, count_pages, &pages);

	return err < 0 ? err : (int64_t)pages;
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
	at = s->npieces && s->pieces[s->npieces - 1].end <= a ? s->npieces : pmi_uffd_piece_lower(s, a);
	memmove(&s->pieces[at + 1], &s->pieces[at], (s->npieces - at) * sizeof(*s->pieces));
	s->pieces[at] = (struct piece){ .start = a, .end = b, .map_start = map_start, .sparse = sparse, .hugetlb = -1 };
	s->npieces++;
	return 0;
}

/* Forget the pieces and huge blocks inside @r (before registering it again). */
static void drop_pieces(struct uffd_state *s, const struct pmi_watch_range *r)
{
	size_t i = pmi_uffd_piece_lower(s, r->start), j = i, k;

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
	const struct pmi_watch_range *r;
	int any;
};

static int register_vma(struct pm_watch *w, const struct pmi_watch_vma *m, void *data)
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
		pmi_dbg(w->ctx, "watch: UFFDIO_REGISTER %#llx-%#llx: %s", (unsigned long long)a, (unsigned long long)b,
		       pmi_strerror(-err));
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
static int register_range(struct pm_watch *w, const struct pmi_watch_range *r)
{
	struct reg_ctx c = { r, 0 };
	int err;

	drop_pieces(w->priv, r);
	err = pmi_watch_vmas_in(w, r->start, r->end, register_vma, &c);
	if (err < 0)
		return err == -ENOMEM && mm_gone(w) ? -ESRCH : err;
	return c.any ? 0 : -EINVAL;
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
static void protect_holes(struct pm_watch *w, const struct pmi_watch_range *r)
{
	struct uffd_state *s = w->priv;
	uint64_t pmd = w->ctx->features.pmd_size;
	size_t i, j;

	for (i = pmi_uffd_piece_lower(s, r->start); i < s->npieces && s->pieces[i].start < r->end; i++) {
		const struct piece *p = &s->pieces[i];
		uint64_t a = p->start;

		if (p->sparse)
			continue;	/* page tables for all of it are what sparse pieces avoid */
		for (j = pmi_uffd_hb_lower(s, p->start); a < p->end; j++) {
			uint64_t b = j < s->nhb && s->hb[j].start < p->end ? s->hb[j].start : p->end;
			struct uffdio_writeprotect wp = { .range = { a, b - a }, .mode = UFFDIO_WRITEPROTECT_MODE_WP };

			if (b > a)
				ioctl(s->fd, UFFDIO_WRITEPROTECT, &wp);
			a = b + (b < p->end ? pmd : 0);
		}
	}
}

/* Does @r hold a huge block left whole? */
static bool has_huge(const struct uffd_state *s, const struct pmi_watch_range *r)
{
	size_t i = pmi_uffd_hb_lower(s, r->start);

	return i < s->nhb && s->hb[i].start < r->end;
}

static int uffd_add(struct pm_watch *w, const struct pmi_watch_range *r)
{
	struct uffd_state *s = w->priv;
	int err;

	if (!s)
		return -EBADF;	/* uffd_start failed: pm_watch_new did not return the handle */
	err = register_range(w, r);
	if (err < 0)
		return err;
	/*
	 * PM_WATCH_NOTHP: huge pages are armed like the rest, whole (a write-protect over a whole PMD keeps it
	 * whole); async uffd-wp splits one at its first write (wp_huge_pmd), so only written ones are split,
	 * each then exact per page. Ours (the caller) do not form again there.
	 */
	if ((w->flags & PM_WATCH_NOTHP) && w->pid == 0)
		madvise((void *)(uintptr_t)r->start, r->end - r->start, MADV_NOHUGEPAGE);
	/* Arm: from now on only pages written after this point read WRITTEN. */
	err = pmi_uffd_scan_range(w, r, false, true, true, true);
	if (err == 0 && s->sd && has_huge(s, r))	/* their soft-dirty bits: from now on */
		err = pmi_uffd_sd_clear(w, true, r);
	if (err == 0) {
		/*
		 * Arm again through the reporting path, and drop what it reports: 6.12 kernels
		 * before the fixes of docs/kernel-interface.md §6.5 skip page-table holes when arming
		 * without output, and then read them WRITTEN once (seen in the 6.12 guest:
		 * never-touched shared pages of a forked child reported by the first collect).
		 */
		size_t mark = w->nout;

		err = pmi_uffd_scan_range(w, r, true, true, false, false);
		w->nout = mark;
	}
	if (err == 0)
		protect_holes(w, r);
	return err;
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
		fd = pmi_uffd_self(want);
		if (fd < 0)
			snprintf(why, size, "uffd: cannot make a userfaultfd: %s", pmi_strerror(-fd));
	} else {
		err = pmi_remote_uffd(w->pid, want, &fd, &got);
		if (err < 0) {
			fd = err;
			snprintf(why, size, "uffd: cannot make a userfaultfd inside process %d: %s", (int)w->pid,
				 pmi_watch_inject_words(w->pid, err));
		}
	}
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->fd = fd;
	w->priv = s;
	pmi_uffd_sd_start(w);
	return 0;
}

/*
 * Huge blocks told by their soft-dirty bits: read every range's first, then
 * clear them at once (the whole process), so that a write racing with the
 * clear has a moment, not the whole collect. -EPERM (a replaced mapping) is
 * left to the pass that follows, which registers it again.
 */
static int sd_collect(struct pm_watch *w, bool reset)
{
	struct uffd_state *s = w->priv;
	size_t i;
	int err = 0;

	for (i = 0; i < w->nranges && !err; i++) {
		err = pmi_uffd_huge_range(w, &w->ranges[i], true, reset);
		if (err == -EPERM)
			err = 0;
	}
	if (!err && reset && s->nhb)
		err = pmi_uffd_sd_clear(w, false, NULL);
	return err;
}

static int uffd_collect(struct pm_watch *w, bool reset)
{
	struct uffd_state *s = w->priv;
	size_t i;
	int err = s->sd ? sd_collect(w, reset) : 0;

	for (i = 0; i < w->nranges && !err; i++) {
		const struct pmi_watch_range *r = &w->ranges[i];
		size_t mark = w->nout;

		err = pmi_uffd_scan_range(w, r, true, reset, !s->sd, false);

		/*
		 * EPERM: a mapping in the range is not registered any more: it was
		 * replaced (munmap + mmap, MAP_FIXED). Register again and report
		 * the range anew: the new mapping's pages read WRITTEN until armed.
		 */
		if (err == -EPERM) {
			w->nout = mark;
			w->stats.rearms++;
			err = register_range(w, r);
			if (err == -EINVAL) {	/* nothing mapped there any more */
				err = 0;
				continue;
			}
			if (!err)
				err = pmi_uffd_scan_range(w, r, true, reset, true, true);
		}
	}
	return err < 0 ? err : 0;
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
	if (s->refs_fd >= 0)
		close(s->refs_fd);
	free(s->pieces);
	free(s->hb);
	free(s->hbuf);
	free(s);
	w->priv = NULL;
}

/* Atomic, unless huge blocks are told by soft-dirty bits: a first write racing with their clearing is lost. */
static bool uffd_atomic_now(const struct pm_watch *w)
{
	const struct uffd_state *s = w->priv;

	return !(s && s->sd && s->nhb);
}

/* Calibration: @p registered with a userfaultfd of our own (*@state) once, then protected. */
static int uffd_cal_arm(char *p, size_t len, int *state)
{
	struct uffdio_writeprotect wp = { .range = { (uintptr_t)p, len },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	if (*state < 0) {
		struct uffdio_register reg = { .range = { (uintptr_t)p, len },
					       .mode = UFFDIO_REGISTER_MODE_WP };

		*state = pmi_uffd_self(UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED);
		if (*state < 0 || ioctl(*state, UFFDIO_REGISTER, &reg) < 0)
			return -1;
	}
	return ioctl(*state, UFFDIO_WRITEPROTECT, &wp);
}

const struct pmi_watch_ops pmi_watch_uffd_ops = {
	.method = PM_WATCH_UFFD,
	.name = "uffd",
	.auto_pick = true,
	.perturbs = "its writable pages are write-protected (a minor fault on the first write to "
		    "each page per interval); it was stopped once by ptrace to create a "
		    "userfaultfd",
	.details = "(Linux 6.7+) its writable pages are write-protected through a userfaultfd\n"
		   "created inside it: it is stopped once by ptrace for a few injected\n"
		   "syscalls; the first write to each page per interval takes a minor fault.\n"
		   "Its huge pages are left whole and unprotected (a write-protect fault\n"
		   "would split them), and a written one counts whole (column HUGE): told by\n"
		   "its soft-dirty bit where the kernel keeps them (cleared every interval,\n"
		   "the whole process; a write racing with the clear can be missed), else by\n"
		   "reading and comparing all of them every interval.\n"
		   "It keeps no descriptor; the protection goes when tracking ends.",
	.usable = uffd_usable,
	.atomic = true,
	.atomic_now = uffd_atomic_now,
	.start = uffd_start,
	.add = uffd_add,
	.collect = uffd_collect,
	.fini = uffd_fini,
	.cal_arm = uffd_cal_arm,
};
