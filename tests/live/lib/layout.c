/* layout.c - fork a child process with a known memory layout, report its regions through a socket, tear it down. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "layout.h"
#include "smaps.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21	/* Linux 5.4 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25	/* Linux 6.1 */
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102	/* Linux 6.13 */
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)	/* Linux 6.4 */
#define UFFD_FEATURE_WP_ASYNC		(1 << 15)	/* Linux 6.7 */
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif

#define READY_TIMEOUT_MS	60000
#define CHILD_ENV		"PM_LAYOUT_CHILD"	/* "sock,file_fd,parent_pid" in the re-executed child */

/* What the child sends once everything is mapped. */
struct report {
	int fatal;		/* errno of a setup step that failed, 0 if ready */
	int line;		/* where it failed */
	pid_t grandchild;
	struct lay_region r[LR_COUNT];
	pid_t peer;
};

/* What the parent sends: 'E' exec path arg. EOF or 'Q' makes the child exit. */
struct command {
	char op;
	char path[256];
	char arg[64];
};

static const char *const region_names[LR_COUNT] = {
	"anon", "file", "memfd", "thp", "cow", "guard", "uffd", "protnone",
	"zero", "sparse", "ksm_a", "ksm_b", "swap", "big", "thp_split", "hzero",
	"share", "share_memfd", "share_priv", "peer_memfd", "peer_priv",
};

const char *layout_region_name(enum lay_id r)
{
	return (unsigned)r < LR_COUNT ? region_names[r] : "?";
}

bool thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] && !strstr(buf, "[never]");
}

bool kernel_at_least(unsigned maj, unsigned min)
{
	struct utsname u;
	unsigned a = 0, b = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

bool kernel_has_scan(void)
{
	return kernel_at_least(6, 7);
}

static uint64_t read_pmd_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : 2u << 20;
}

/* ---- child side ------------------------------------------------------ */

struct child {
	const struct layout_opts *o;
	struct report rep;
	size_t ps;
	uint64_t pmd;
	int file_fd;
};

#define CHILD_FAIL(c, e)                               \
	do {                                           \
		(c)->rep.fatal = (e) ? (e) : EIO;      \
		(c)->rep.line = __LINE__;              \
		return -1;                             \
	} while (0)

static void set_region(struct child *c, enum lay_id r, const void *p, size_t bytes)
{
	c->rep.r[r].start = (uint64_t)(uintptr_t)p;
	c->rep.r[r].end = (uint64_t)(uintptr_t)p + bytes;
}

/* Private anonymous memory, 4 KiB pages unless @huge_ok. NULL on failure (errno set). */
static char *map_anon(size_t bytes, bool huge_ok)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (!huge_ok)
		madvise(p, bytes, MADV_NOHUGEPAGE);	/* EINVAL without THP: 4 KiB pages anyway */
	return p;
}

static void write_page(char *p, size_t ps, size_t i, unsigned char v)
{
	((volatile unsigned char *)p)[i * ps] = v;
}

/* The fork-COW region first, while nothing else of ours exists to be shared with the grandchild. */
static int setup_cow(struct child *c, int sock)
{
	size_t n = c->o->cow_pages, i;
	int gp[2];
	char *p = map_anon(n * c->ps, false);
	char b;
	pid_t g;

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 1));
	if (pipe2(gp, O_CLOEXEC) < 0)
		CHILD_FAIL(c, errno);
	g = fork();
	if (g < 0)
		CHILD_FAIL(c, errno);
	if (g == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sock);
		close(gp[0]);
		for (i = 0; i < c->o->cow_written && i < n; i++)
			write_page(p, c->ps, i, 0xee);	/* COW: our copy, theirs becomes exclusive */
		if (write(gp[1], "g", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(gp[1]);
	if (read(gp[0], &b, 1) != 1)
		CHILD_FAIL(c, ECHILD);
	close(gp[0]);
	c->rep.grandchild = g;
	set_region(c, LR_COW, p, n * c->ps);
	return 0;
}

static int setup_file(struct child *c)
{
	size_t n = c->o->file_pages, i, cow = n / 2;
	char *p = mmap(NULL, n * c->ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, c->file_fd, 0);

	if (p == MAP_FAILED)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		(void)((volatile char *)p)[i * c->ps];
	write_page(p, c->ps, cow, 0x77);
	close(c->file_fd);
	c->file_fd = -1;
	set_region(c, LR_FILE, p, n * c->ps);
	c->rep.r[LR_FILE].detail = cow;
	return 0;
}

static int setup_memfd(struct child *c)
{
	size_t n = c->o->memfd_pages, i;
	int fd = memfd_create("pm-live", MFD_CLOEXEC);
	char *p;

	if (fd < 0 || ftruncate(fd, (off_t)(n * c->ps)) < 0)
		CHILD_FAIL(c, errno);
	p = mmap(NULL, n * c->ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		CHILD_FAIL(c, errno);
	close(fd);
	for (i = 0; i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 3));
	set_region(c, LR_MEMFD, p, n * c->ps);
	return 0;
}

/* smaps' AnonHugePages of the mapping that starts at @p, or -1. */
static long long anon_huge_self(const void *p)
{
	struct smaps sm;
	long long v = -1;

	if (smaps_read(getpid(), &sm) == 0) {
		const struct smaps_entry *e = smaps_find(&sm, (uintptr_t)p);
		if (e)
			v = (long long)e->anon_huge;
		smaps_free(&sm);
	}
	return v;
}

/* smaps' Rss of our mapping that contains @p (it may have merged with a neighbour), or -1. */
static long long rss_self(const void *p)
{
	struct smaps sm;
	long long v = -1;
	size_t i;

	if (smaps_read(getpid(), &sm) == 0) {
		for (i = 0; i < sm.n; i++)
			if (sm.v[i].start <= (uintptr_t)p && (uintptr_t)p < sm.v[i].end)
				v = (long long)sm.v[i].rss;
		smaps_free(&sm);
	}
	return v;
}

/*
 * Read-fault @n pages at @p (private anonymous, never touched before): the
 * shared zero page (or huge zero page) is in no Rss, so the mapping's smaps
 * Rss stays as it was when the kernel mapped it, and grows by @n pages when
 * every read fault allocated a page of its own. Returns that growth in
 * bytes, or -1. Before and after, as a neighbour the mapping merged with
 * may have pages of its own.
 */
static long long read_fault_rss(char *p, size_t n, size_t ps)
{
	long long before = rss_self(p), after;
	size_t i;

	for (i = 0; i < n; i++)
		(void)((volatile char *)p)[i * ps];
	after = rss_self(p);
	return before < 0 || after < 0 ? -1 : after - before;
}

int zero_page_on_read(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = 16;
	char *p = map_anon(n * ps, false);
	long long rss;

	if (!p)
		return -errno;
	rss = read_fault_rss(p, n, ps);
	munmap(p, n * ps);
	return rss < 0 ? -EIO : rss == 0;
}

const char *layout_region_why(const struct layout *l, enum lay_id r)
{
	static char buf[256];
	const struct lay_region *g = &l->r[r];

	if (!g->start && !g->error)
		return "not set up";
	if ((r == LR_ZERO || r == LR_HZERO) && g->error == EOPNOTSUPP && g->detail)
		snprintf(buf, sizeof(buf),
			 "the kernel maps no %szero page on read faults: the child's read-only %s region grew smaps Rss by %llu kB, not 0 (each read fault allocated a page: mm_forbids_zeropage, or a hypervisor guest booted without the zero page)",
			 r == LR_HZERO ? "huge " : "", layout_region_name(r), (unsigned long long)g->detail >> 10);
	else if (r == LR_HZERO && g->error == EAGAIN)
		snprintf(buf, sizeof(buf), "the read-only hzero region is not the huge zero page (transparent_hugepage/use_zero_page 0, or no huge page for the fault)");
	else if ((r == LR_THP || r == LR_THP_SPLIT || r == LR_HZERO) && g->error == EOPNOTSUPP)
		snprintf(buf, sizeof(buf), "transparent_hugepage/enabled is [never]");
	else
		snprintf(buf, sizeof(buf), "%s", strerror(g->error));
	return buf;
}

/* Do @n pages at @p read as the huge zero page: present and, in private anonymous memory, PM_FILE (6.x quirk)? */
static bool huge_zero_self(const char *p, size_t n, size_t ps)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t i, ok = 0;
	uint64_t e;

	for (i = 0; fd >= 0 && i < n; i++) {
		off_t off = (off_t)(((uintptr_t)p / ps + i) * 8);
		ok += pread(fd, &e, 8, off) == 8 && (e >> 63) && ((e >> 61) & 1);
	}
	if (fd >= 0)
		close(fd);
	return ok == n;
}

/* @count PMD-aligned, fully written (or only read) THPs into region @r; NULL (and r's error set) if THP is off. */
static char *make_thp(struct child *c, enum lay_id r, size_t count, bool read_only)
{
	size_t len = count * c->pmd, i;
	char *raw, *p;

	if (!thp_enabled()) {
		c->rep.r[r].error = EOPNOTSUPP;
		return NULL;
	}
	raw = mmap(NULL, len + c->pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		c->rep.fatal = errno;
		c->rep.line = __LINE__;
		return NULL;
	}
	p = (char *)(((uintptr_t)raw + c->pmd - 1) & ~(uintptr_t)(c->pmd - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	if (raw + c->pmd > p)
		munmap(p + len, (size_t)(raw + c->pmd - p));
	if (madvise(p, len, MADV_HUGEPAGE) < 0) {
		c->rep.r[r].error = errno;
		munmap(p, len);
		return NULL;
	}
	set_region(c, r, p, len);
	if (read_only) {	/* a read fault maps the huge zero page when use_zero_page is 1 */
		long long rss = read_fault_rss(p, len / c->ps, c->ps);

		if (rss > 0) {
			c->rep.r[r].error = EOPNOTSUPP;
			c->rep.r[r].detail = (uint64_t)rss;
		} else if (!huge_zero_self(p, len / c->ps, c->ps)) {
			c->rep.r[r].error = EAGAIN;
		}
		return p;
	}
	for (i = 0; i < len / c->ps; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 5));
	madvise(p, len, MADV_COLLAPSE);	/* in case the first fault could not get a huge page */
	/* The kernel's own word that every PMD is huge, so no THP shortage (fragmentation) passes for a bug. */
	if (anon_huge_self(p) != (long long)len)
		c->rep.r[r].error = EAGAIN;
	return p;
}

static int setup_thp(struct child *c)
{
	make_thp(c, LR_THP, c->o->thp_count, false);
	return c->rep.fatal ? -1 : 0;
}

/*
 * Split a THP's PMD but not its folio: write-protecting half of it through
 * uffd-wp async splits the PMD (docs/kernel-interface.md §6.4); writing that half back
 * clears the bits again. All 512 PTEs then map the still-whole folio with
 * identical flags, contiguous aligned PFNs: pagemap alone cannot tell this
 * from a PMD mapping.
 */
static int setup_thp_split(struct child *c)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	struct lay_region *g = &c->rep.r[LR_THP_SPLIT];
	char *p = make_thp(c, LR_THP_SPLIT, 1, false);
	int fd;
	size_t i;

	if (!p || g->error)
		return c->rep.fatal ? -1 : 0;
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	reg.range.start = (uintptr_t)p;
	reg.range.len = c->pmd;
	wp.range.start = (uintptr_t)p + c->pmd / 2;
	wp.range.len = c->pmd / 2;
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) < 0 || ioctl(fd, UFFDIO_REGISTER, &reg) < 0 ||
	    ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		g->error = errno;
		return 0;
	}
	for (i = c->pmd / 2 / c->ps; i < c->pmd / c->ps; i++)
		write_page(p, c->ps, i, 0x42);
	if (anon_huge_self(p) != 0)
		g->error = EAGAIN;
	return 0;	/* fd kept open, as for the uffd region */
}

static int setup_hzero(struct child *c)
{
	make_thp(c, LR_HZERO, c->o->hzero_count, true);
	return c->rep.fatal ? -1 : 0;
}

static int setup_guard(struct child *c)
{
	size_t n = c->o->guard_pages, i;
	char *p = map_anon(n * c->ps, false);

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 7));
	for (i = 0; i < c->o->guard_count && 2 * i + 1 < n; i++) {
		if (madvise(p + (2 * i + 1) * c->ps, c->ps, MADV_GUARD_INSTALL) < 0) {
			c->rep.r[LR_GUARD].error = errno;
			break;
		}
	}
	set_region(c, LR_GUARD, p, n * c->ps);
	return 0;
}

/* docs/kernel-interface.md §6.4: the process creates, registers and arms its own uffd; the fd stays open. */
static int setup_uffd(struct child *c)
{
	size_t n = c->o->uffd_pages, len = n * c->ps, i;
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	char *p = map_anon(len, false);

	if (!p)
		CHILD_FAIL(c, errno);
	set_region(c, LR_UFFD, p, len);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) < 0) {
		c->rep.r[LR_UFFD].error = errno;
		return 0;
	}
	reg.range.start = wp.range.start = (uintptr_t)p;
	reg.range.len = wp.range.len = len;
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
		c->rep.r[LR_UFFD].error = errno;
		return 0;
	}
	for (i = 0; i < c->o->uffd_populated && i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 9));
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		c->rep.r[LR_UFFD].error = errno;
		return 0;
	}
	if (c->o->uffd_populated)
		write_page(p, c->ps, 0, 0x99);	/* async WP: resolved silently, the bit goes */
	return 0;	/* fd deliberately kept: closing it would unregister the range */
}

static int setup_protnone(struct child *c)
{
	size_t n = c->o->protnone_pages, i;
	char *p = map_anon(n * c->ps, false);

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 11));
	if (mprotect(p, n * c->ps, PROT_NONE) < 0)
		CHILD_FAIL(c, errno);
	set_region(c, LR_PROTNONE, p, n * c->ps);
	return 0;
}

static int setup_zero(struct child *c)
{
	size_t n = c->o->zero_pages;
	char *p = map_anon(n * c->ps, false);
	long long rss;

	if (!p)
		CHILD_FAIL(c, errno);
	rss = read_fault_rss(p, n, c->ps);
	set_region(c, LR_ZERO, p, n * c->ps);
	if (rss != 0) {		/* no zero page here (or smaps unreadable: -1) */
		c->rep.r[LR_ZERO].error = rss > 0 ? EOPNOTSUPP : EIO;
		c->rep.r[LR_ZERO].detail = rss > 0 ? (uint64_t)rss : 0;
	}
	return 0;
}

static int setup_sparse(struct child *c)
{
	size_t n = c->o->sparse_pages, i;
	char *p = map_anon(n * c->ps, false);

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i += 2)
		write_page(p, c->ps, i, (unsigned char)(i + 13));
	set_region(c, LR_SPARSE, p, n * c->ps);
	return 0;
}

/* Two regions whose page i holds the same bytes (and differs from page j): KSM can merge them pairwise. */
static int setup_ksm(struct child *c)
{
	size_t n = c->o->ksm_pages, i, k;
	char *a = map_anon(n * c->ps, false), *b = map_anon(n * c->ps, false);

	if (!a || !b)
		CHILD_FAIL(c, errno);
	for (k = 0; k < 2; k++) {
		char *p = k ? b : a;
		for (i = 0; i < n; i++) {
			memset(p + i * c->ps, (int)(i % 251) + 1, c->ps);
			memcpy(p + i * c->ps, &i, sizeof(i));
		}
	}
	set_region(c, LR_KSM_A, a, n * c->ps);
	set_region(c, LR_KSM_B, b, n * c->ps);
	if (madvise(a, n * c->ps, MADV_MERGEABLE) < 0 || madvise(b, n * c->ps, MADV_MERGEABLE) < 0)
		c->rep.r[LR_KSM_A].error = c->rep.r[LR_KSM_B].error = errno;
	return 0;
}

/* Pages of [p, p + n pages) whose own pagemap entry says swapped (bit 62) and not present. */
static uint64_t count_swapped_self(const char *p, size_t n, size_t ps)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e, cnt = 0;
	size_t i;

	if (fd < 0)
		return 0;
	for (i = 0; i < n; i++) {
		off_t off = (off_t)(((uintptr_t)p / ps + i) * 8);
		if (pread(fd, &e, 8, off) == 8 && (e >> 62) == 1)
			cnt++;
	}
	close(fd);
	return cnt;
}

static int setup_swap(struct child *c)
{
	size_t n = c->o->swap_pages, i;
	char *p = map_anon(n * c->ps, false);
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int tries;

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++) {
		memset(p + i * c->ps, (int)(i % 200) + 17, 64);
		memcpy(p + i * c->ps + 64, &i, sizeof(i));
	}
	set_region(c, LR_SWAP, p, n * c->ps);
	for (tries = 0; tries < 20; tries++) {
		if (madvise(p, n * c->ps, MADV_PAGEOUT) < 0) {
			c->rep.r[LR_SWAP].error = errno;
			return 0;
		}
		c->rep.r[LR_SWAP].detail = count_swapped_self(p, n, c->ps);
		if (c->rep.r[LR_SWAP].detail == n)
			break;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int setup_big(struct child *c)
{
	size_t len = (size_t)c->o->big_bytes, i;
	char *p = map_anon(len, false);

	if (!p)
		CHILD_FAIL(c, errno);
	if (madvise(p, len, MADV_POPULATE_WRITE) < 0)
		for (i = 0; i < len / c->ps; i++)
			write_page(p, c->ps, i, 1);
	set_region(c, LR_BIG, p, len);
	return 0;
}

static int setup_anon(struct child *c)
{
	size_t n = c->o->anon_pages, i;
	char *p = map_anon(n * c->ps, false);

	if (!p)
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		write_page(p, c->ps, i, (unsigned char)(i + 1));
	set_region(c, LR_ANON, p, n * c->ps);
	return 0;
}

/* Private anonymous memory between two PROT_NONE pages, so it never merges with a neighbour. NULL (errno) on failure. */
static char *map_anon_apart(size_t bytes, size_t ps)
{
	char *g = mmap(NULL, bytes + 2 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;

	if (g == MAP_FAILED)
		return NULL;
	p = mmap(g + ps, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

/* What the peer sends once its side is set up. */
struct peer_report {
	int error;
	uint64_t memfd, priv;	/* its second memfd mapping and its private mapping */
};

/*
 * In the peer after the fork: fresh pages of @a, the inherited memfd mapping
 * @m faulted in (fork copies no PTEs of a shared file mapping), the memfd
 * once more, a private mapping of its own.
 */
static void share_peer(struct child *c, char *a, const char *m0, int fd, struct peer_report *pr)
{
	const struct layout_opts *o = c->o;
	size_t ps = c->ps, i;
	char *m, *p;

	for (i = o->share_pages + o->share_broken; i < o->share_pages + o->share_broken + o->share_fresh; i++)
		write_page(a, ps, i, 0xdd);
	for (i = 0; i < o->share_memfd_pages; i++)
		(void)((const volatile char *)m0)[i * ps];
	if (o->share_memfd_pages) {
		m = mmap(NULL, o->share_memfd_pages * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			pr->error = errno;
			return;
		}
		madvise(m, o->share_memfd_pages * ps, MADV_NOHUGEPAGE);
		for (i = 0; i < o->share_memfd_pages; i++)
			write_page(m, ps, i, (unsigned char)(i + 31));
		pr->memfd = (uint64_t)(uintptr_t)m;
	}
	if (o->share_private_pages) {
		if (!(p = map_anon_apart(o->share_private_pages * ps, ps))) {
			pr->error = errno;
			return;
		}
		for (i = 0; i < o->share_private_pages; i++)
			write_page(p, ps, i, 0xde);
		pr->priv = (uint64_t)(uintptr_t)p;
	}
}

/* The child's side after the fork: break COW on the broken pages, write the fresh ones, a private mapping. */
static int share_child(struct child *c, char *a)
{
	const struct layout_opts *o = c->o;
	size_t ps = c->ps, i, n = o->share_private_pages;
	char *p;

	for (i = o->share_pages; i < o->share_pages + o->share_broken; i++)
		write_page(a, ps, i, 0xbb);
	for (; i < o->share_pages + o->share_broken + o->share_fresh; i++)
		write_page(a, ps, i, 0xcc);
	if (!n)
		return 0;
	if (!(p = map_anon_apart(n * ps, ps)))
		CHILD_FAIL(c, errno);
	for (i = 0; i < n; i++)
		write_page(p, ps, i, 0xcb);
	set_region(c, LR_SHARE_PRIV, p, n * ps);
	return 0;
}

/* Last of all: memory written, then a peer forked to share it (see layout_opts). */
static int setup_share(struct child *c, int sock)
{
	const struct layout_opts *o = c->o;
	size_t ps = c->ps, na = o->share_pages + o->share_broken + o->share_fresh, nm = o->share_memfd_pages, i;
	struct peer_report pr = { 0 };
	char *a = NULL, *m = NULL;
	int fd = -1, sp[2];
	pid_t g;

	if (na && !(a = map_anon_apart(na * ps, ps)))
		CHILD_FAIL(c, errno);
	for (i = 0; i < o->share_pages + o->share_broken; i++)
		write_page(a, ps, i, (unsigned char)(i + 21));
	if (nm) {
		fd = memfd_create("pm-share", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)(nm * ps)) < 0)
			CHILD_FAIL(c, errno);
		m = mmap(NULL, nm * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			CHILD_FAIL(c, errno);
		madvise(m, nm * ps, MADV_NOHUGEPAGE);
		for (i = 0; i < nm; i++)
			write_page(m, ps, i, (unsigned char)(i + 23));
	}
	if (pipe2(sp, O_CLOEXEC) < 0)
		CHILD_FAIL(c, errno);
	g = fork();
	if (g < 0)
		CHILD_FAIL(c, errno);
	if (g == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sock);
		close(sp[0]);
		share_peer(c, a, m, fd, &pr);
		if (write(sp[1], &pr, sizeof(pr)) != (ssize_t)sizeof(pr))
			_exit(1);
		for (;;)
			pause();
	}
	close(sp[1]);
	c->rep.peer = g;
	if (share_child(c, a) < 0)
		return -1;
	if (read(sp[0], &pr, sizeof(pr)) != (ssize_t)sizeof(pr))
		CHILD_FAIL(c, ECHILD);
	if (pr.error)
		CHILD_FAIL(c, pr.error);
	close(sp[0]);
	if (fd >= 0)
		close(fd);
	if (na)
		set_region(c, LR_SHARE, a, na * ps);
	if (nm) {
		set_region(c, LR_SHARE_MEMFD, m, nm * ps);
		set_region(c, LR_PEER_MEMFD, (void *)(uintptr_t)pr.memfd, nm * ps);
	}
	if (o->share_private_pages)
		set_region(c, LR_PEER_PRIV, (void *)(uintptr_t)pr.priv, o->share_private_pages * ps);
	return 0;
}

static int child_setup(struct child *c, int sock)
{
	const struct layout_opts *o = c->o;

	if ((o->cow_pages && setup_cow(c, sock)) || (o->anon_pages && setup_anon(c)) ||
	    (o->file_pages && setup_file(c)) || (o->memfd_pages && setup_memfd(c)) ||
	    (o->thp_count && setup_thp(c)) || (o->guard_pages && setup_guard(c)) ||
	    (o->uffd_pages && setup_uffd(c)) || (o->protnone_pages && setup_protnone(c)) ||
	    (o->zero_pages && setup_zero(c)) || (o->sparse_pages && setup_sparse(c)) ||
	    (o->ksm_pages && setup_ksm(c)) || (o->big_bytes && setup_big(c)) ||
	    (o->swap_pages && setup_swap(c)) || (o->thp_split && setup_thp_split(c)) ||
	    (o->hzero_count && setup_hzero(c)))
		return -1;
	if ((o->share_pages || o->share_broken || o->share_fresh || o->share_memfd_pages || o->share_private_pages) &&
	    setup_share(c, sock))
		return -1;
	return 0;
}

static void child_serve(int sock)
{
	struct command cmd;

	for (;;) {
		ssize_t n = recv(sock, &cmd, sizeof(cmd), 0);
		int e;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(cmd) || cmd.op == 'Q')
			return;
		if (cmd.op == 'E') {
			cmd.path[sizeof(cmd.path) - 1] = cmd.arg[sizeof(cmd.arg) - 1] = '\0';
			execl(cmd.path, cmd.path, cmd.arg, (char *)NULL);
			e = errno;
			send(sock, &e, sizeof(e), MSG_NOSIGNAL);
		}
	}
}

static void __attribute__((noreturn)) child_main(int sock, const struct layout_opts *o, int file_fd,
						 pid_t parent, size_t ps, uint64_t pmd)
{
	struct child c = { .o = o, .ps = ps, .pmd = pmd, .file_fd = file_fd };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	child_setup(&c, sock);
	send(sock, &c.rep, sizeof(c.rep), MSG_NOSIGNAL);
	if (!c.rep.fatal)
		child_serve(sock);
	/* The grandchild dies of its PDEATHSIG and is reaped by the test (a subreaper), never by us. */
	_exit(0);
}

/*
 * The child re-executes the test binary so that it starts with a memory of
 * its own: after a plain fork its heap and stack would be COW-shared with
 * the test, whose every write would flip the child's exclusive bits under
 * the test's feet. This constructor catches that exec before main().
 */
__attribute__((constructor)) static void layout_child_entry(void)
{
	const char *v = getenv(CHILD_ENV);
	struct layout_opts o;
	int sock, file_fd, parent;

	if (!v || sscanf(v, "%d,%d,%d", &sock, &file_fd, &parent) != 3)
		return;
	unsetenv(CHILD_ENV);
	fcntl(sock, F_SETFD, FD_CLOEXEC);	/* layout_exec sees the exec as EOF */
	if (file_fd >= 0)
		fcntl(file_fd, F_SETFD, FD_CLOEXEC);
	if (recv(sock, &o, sizeof(o), 0) != (ssize_t)sizeof(o))
		_exit(1);
	child_main(sock, &o, file_fd, (pid_t)parent, (size_t)sysconf(_SC_PAGESIZE), read_pmd_size());
}

/* In the forked child: exec ourselves with the fds to keep; returns only if the exec failed. */
static void exec_child(int sock, int file_fd, pid_t parent)
{
	char env[64];
	char *argv[] = { (char *)"pm-layout-child", NULL };

	snprintf(env, sizeof(env), "%d,%d,%d", sock, file_fd, (int)parent);
	if (setenv(CHILD_ENV, env, 1) < 0 || fcntl(sock, F_SETFD, 0) < 0 ||
	    (file_fd >= 0 && fcntl(file_fd, F_SETFD, 0) < 0))
		return;
	execv("/proc/self/exe", argv);
}

/* ---- parent side ----------------------------------------------------- */

/* An unlinked temp file of @pages pages (page i filled with one letter), in the build dir or /tmp. */
static int make_temp_file(unsigned pages, size_t ps)
{
	const char *dirs[] = { getenv("PAGEMAP_BUILD"), getenv("TMPDIR"), "/tmp" };
	char path[4096], *buf;
	size_t d, i;
	int fd = -1;

	for (d = 0; d < 3 && fd < 0; d++) {
		if (!dirs[d] || !*dirs[d])
			continue;
		snprintf(path, sizeof(path), "%s/pm-live-XXXXXX", dirs[d]);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return -errno;
	buf = malloc(ps);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (i = 0; i < pages; i++) {
		memset(buf, 'a' + (int)(i % 26), ps);
		if (write(fd, buf, ps) != (ssize_t)ps) {
			free(buf);
			close(fd);
			return -EIO;
		}
	}
	free(buf);
	return fd;
}

static int recv_timeout(int sock, void *buf, size_t size, int timeout_ms)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	do
		n = recv(sock, buf, size, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : (int)n;
}

int layout_start(const struct layout_opts *o, struct layout *l)
{
	struct report rep;
	int sv[2], file_fd = -1, n;
	pid_t me = getpid();

	memset(l, 0, sizeof(*l));
	l->sock = -1;
	l->page_size = (unsigned)sysconf(_SC_PAGESIZE);
	l->pmd_size = read_pmd_size();
	/* Orphaned grandchildren come back to us, so layout_stop can reap them. */
	l->reaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
	if (o->file_pages) {
		file_fd = make_temp_file(o->file_pages, l->page_size);
		if (file_fd < 0)
			return file_fd;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		n = -errno;
		if (file_fd >= 0)
			close(file_fd);
		return n;
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid == 0) {
		close(sv[0]);
		exec_child(sv[1], file_fd, me);
		_exit(127);
	}
	n = l->pid < 0 ? -errno : 0;
	if (!n && send(sv[0], o, sizeof(*o), MSG_NOSIGNAL) != (ssize_t)sizeof(*o))
		n = -errno;
	close(sv[1]);
	if (file_fd >= 0)
		close(file_fd);
	if (n < 0) {
		close(sv[0]);
		l->pid = 0;
		return n;
	}
	l->sock = sv[0];
	n = recv_timeout(l->sock, &rep, sizeof(rep), READY_TIMEOUT_MS);
	if (n != (int)sizeof(rep) || rep.fatal) {
		if (n == (int)sizeof(rep))
			printf("  layout: child setup failed at layout.c:%d: %s\n", rep.line, strerror(rep.fatal));
		else
			printf("  layout: child did not report ready (%s)\n", n < 0 ? strerror(-n) : "it died");
		if (n == (int)sizeof(rep)) {
			l->grandchild = rep.grandchild;
			l->peer = rep.peer;
		}
		layout_stop(l);
		return n == (int)sizeof(rep) ? -rep.fatal : (n < 0 ? n : -ECHILD);
	}
	l->grandchild = rep.grandchild;
	l->peer = rep.peer;
	memcpy(l->r, rep.r, sizeof(l->r));
	return 0;
}

int layout_exec(struct layout *l, const char *path, const char *arg)
{
	struct command cmd = { .op = 'E' };
	char comm[64] = "", want[16];
	const char *base = strrchr(path, '/');
	int e = 0, n;
	FILE *f;

	snprintf(cmd.path, sizeof(cmd.path), "%s", path);
	snprintf(cmd.arg, sizeof(cmd.arg), "%s", arg);
	if (send(l->sock, &cmd, sizeof(cmd), MSG_NOSIGNAL) != (ssize_t)sizeof(cmd))
		return -errno;
	/* The child's end is close-on-exec: EOF means the exec happened (or the child died). */
	n = recv_timeout(l->sock, &e, sizeof(e), READY_TIMEOUT_MS);
	if (n < 0)
		return n;
	if (n > 0)
		return -(e ? e : EIO);
	snprintf(want, sizeof(want), "%s", base ? base + 1 : path);	/* comm is 15 bytes at most */
	snprintf(cmd.path, sizeof(cmd.path), "/proc/%d/comm", (int)l->pid);
	f = fopen(cmd.path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, want) ? -ECHILD : 0;
}

int layout_kill_nowait(struct layout *l)
{
	siginfo_t si;

	if (l->pid <= 0)
		return -ECHILD;
	if (kill(l->pid, SIGKILL) < 0)
		return -errno;
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)l->pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void layout_stop(struct layout *l)
{
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		reap(l->pid);
	}
	l->pid = 0;
	if (l->sock >= 0)
		close(l->sock);
	l->sock = -1;
	/* Once the child is reaped the grandchild is ours (subreaper), so its pid cannot be reused yet. */
	if (l->grandchild > 0 && l->reaper) {
		kill(l->grandchild, SIGKILL);
		reap(l->grandchild);
	}
	l->grandchild = 0;
	if (l->peer > 0 && l->reaper) {
		kill(l->peer, SIGKILL);
		reap(l->peer);
	}
	l->peer = 0;
}
