/* hotwriter.c - benchmark target for the cost of tracking: writes pseudo-random pages of a hot set as fast as it
 * can and reports its write rate; with "floor" it tracks itself the cheapest way the kernel allows (userfaultfd,
 * or soft-dirty where that is the method: run-cost.sh in the 6.1 and 6.12 guests). */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../lib/base/compat.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

static volatile sig_atomic_t go;

static void on_go(int sig)
{
	(void)sig;
	go = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The floor: a thread that harvests and re-arms every interval, by one of
 *   uffd     our own userfaultfd (async write-protect), PAGEMAP_SCAN WRITTEN with WP_MATCHING (harvest and re-arm in one);
 *   sd-read  soft-dirty: pread of the region's pagemap (bit 55), then clear_refs 4;
 *   sd-scan  soft-dirty: PAGEMAP_SCAN for PAGE_IS_SOFT_DIRTY (Linux 6.7), then clear_refs 4.
 */
enum floor_mech { FLOOR_UFFD, FLOOR_SD_READ, FLOOR_SD_SCAN };

struct floor {
	char *mem;
	size_t len;
	int pagemap, uffd;
	enum floor_mech mech;
	double interval;
	volatile int stop;
	uint64_t pages;		/* written pages reported, summed */
	unsigned long scans;	/* harvests done */
	double scan_time;	/* ... and the seconds they took */
	double t_start;		/* when the thread started */
};

static int scan(struct floor *f, bool report)
{
	static struct page_region vec[1024];
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .start = (uintptr_t)f->mem, .end = (uintptr_t)f->mem + f->len,
		.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC, .category_mask = PAGE_IS_WRITTEN,
		.return_mask = PAGE_IS_WRITTEN,
	};

	while (arg.start < arg.end) {
		int n, i;

		arg.vec = (uintptr_t)vec;
		arg.vec_len = report ? 1024 : 0;
		n = ioctl(f->pagemap, PAGEMAP_SCAN, &arg);
		if (n < 0)
			return -errno;
		for (i = 0; i < n; i++)
			f->pages += (vec[i].end - vec[i].start) / 4096;
		if (!report || n < 1024)
			break;
		arg.start = arg.walk_end > vec[n - 1].end ? arg.walk_end : vec[n - 1].end;
	}
	return 0;
}

/* Soft-dirty: the region's soft-dirty pages (pagemap bit 55, or PAGEMAP_SCAN), then clear_refs 4 (whole process). */
static int scan_softdirty(struct floor *f, bool report)
{
	static uint64_t ent[8192];
	static struct page_region vec[1024];
	int fd, err = 0;

	if (report && f->mech == FLOOR_SD_READ) {
		size_t npages = f->len / 4096, i, at;

		for (at = 0; at < npages; at += 8192) {
			size_t n = npages - at < 8192 ? npages - at : 8192;
			ssize_t got = pread(f->pagemap, ent, n * 8, (off_t)(((uintptr_t)f->mem / 4096 + at) * 8));

			if (got < 0)
				return -errno;
			for (i = 0; i < (size_t)got / 8; i++)
				f->pages += (ent[i] >> 55) & 1;
		}
	} else if (report) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .start = (uintptr_t)f->mem, .end = (uintptr_t)f->mem + f->len,
			.category_mask = PAGE_IS_SOFT_DIRTY, .return_mask = PAGE_IS_SOFT_DIRTY,
		};

		while (arg.start < arg.end) {
			int n, i;

			arg.vec = (uintptr_t)vec;
			arg.vec_len = 1024;
			n = ioctl(f->pagemap, PAGEMAP_SCAN, &arg);
			if (n < 0)
				return -errno;
			for (i = 0; i < n; i++)
				f->pages += (vec[i].end - vec[i].start) / 4096;
			if (n < 1024)
				break;
			arg.start = arg.walk_end > vec[n - 1].end ? arg.walk_end : vec[n - 1].end;
		}
	}
	fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "4", 1) != 1)
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static void *floor_thread(void *data)
{
	struct floor *f = data;
	double next = now_s() + f->interval;

	f->t_start = now_s();
	while (!f->stop) {
		struct timespec ts;

		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		double t0 = now_s();

		if ((f->mech == FLOOR_UFFD ? scan(f, true) : scan_softdirty(f, true)) < 0)
			break;
		f->scans++;
		f->scan_time += now_s() - t0;
		next += f->interval;
	}
	return NULL;
}

static int floor_start(struct floor *f, pthread_t *th)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct uffdio_register reg = { .range = { (uintptr_t)f->mem, f->len }, .mode = UFFDIO_REGISTER_MODE_WP };

	f->pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (f->mech != FLOOR_UFFD) {
		if (f->pagemap < 0 || scan_softdirty(f, false) < 0)
			return -1;
		return pthread_create(th, NULL, floor_thread, f) ? -1 : 0;
	}
	f->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (f->uffd < 0 || f->pagemap < 0 || ioctl(f->uffd, UFFDIO_API, &api) < 0 ||
	    ioctl(f->uffd, UFFDIO_REGISTER, &reg) < 0 || scan(f, false) < 0)
		return -1;
	return pthread_create(th, NULL, floor_thread, f) ? -1 : 0;
}

/*
 * HOTWRITER_FLUSH_MS=N: flush the TLB 16 times 20 ms apart once writing, then every N ms (mprotect of a populated
 * 1 MiB region: 256 pages, over the kernel's 33-page ceiling for page-by-page flushes, so a full flush), tracked
 * or not. For QEMU under TCG (bench/run-cost-vm.sh): its software TLB is resized only at a full flush (doubled
 * when it was full), so a writer that nothing flushes keeps a TLB of 256 entries and misses on most writes, while
 * a tracked one (clear_refs flushes) gets one that holds its hot set and runs up to 8x faster than untracked.
 * Real TLBs have one size; the first flushes give the emulated one the size the hot set needs in every run, the
 * later ones stand for a machine's other activity. Off by default; on the host no visible cost at 100 ms.
 */
static char *flush_mem;
static double flush_every, flush_next;
static int flush_n;

static void flush_tlb(double now)
{
	if (!flush_mem || now < flush_next)
		return;
	mprotect(flush_mem, 1 << 20, PROT_READ);
	mprotect(flush_mem, 1 << 20, PROT_READ | PROT_WRITE);
	flush_next = now + (++flush_n < 16 ? 0.02 : flush_every);
}

static void flush_init(void)
{
	const char *e = getenv("HOTWRITER_FLUSH_MS");

	if (!e || !(atof(e) > 0))
		return;
	flush_every = atof(e) / 1000;
	flush_mem = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (flush_mem == MAP_FAILED) {
		flush_mem = NULL;
		return;
	}
	madvise(flush_mem, 1 << 20, MADV_NOHUGEPAGE);
	memset(flush_mem, 1, 1 << 20);
}

int main(int argc, char **argv)
{
	struct floor f = { 0 };
	pthread_t th;
	double gib, hot, secs, t = 0;
	size_t psize = 4096, npages, nhot;
	uint64_t x = 88172645463325252ULL, writes = 0;
	double tick = 0;
	char *mem;

	if (argc < 4) {
		fprintf(stderr, "Usage: hotwriter GIB HOT_PERCENT MEASURE_S [floor INTERVAL_S [uffd|sd-read|sd-scan]]\n"
				"Map and populate GIB GiB (THP off), print \"ready PID\", write one byte to pseudo-random\n"
				"pages among the first HOT_PERCENT %% as fast as it can; from SIGUSR1 on count the writes\n"
				"for MEASURE_S seconds, print \"rate\" and their number per second, and exit. With floor,\n"
				"track itself meanwhile: userfaultfd async write-protect and PAGEMAP_SCAN (harvest and\n"
				"re-arm) from a thread every INTERVAL_S; sd-read: its pagemap read (soft-dirty bit)\n"
				"and clear_refs 4 instead, sd-scan: PAGEMAP_SCAN for soft-dirty pages and clear_refs 4.\n"
				"Every second of the measure it prints\n"
				"\"at SECONDS WRITES\" (since SIGUSR1), so a share can be taken over any later window.\n");
		return 2;
	}
	gib = atof(argv[1]);
	hot = atof(argv[2]);
	secs = atof(argv[3]);
	signal(SIGUSR1, on_go);
	f.len = (size_t)(gib * 1024 * 1024 * 1024) & ~(size_t)((2 << 20) - 1);	/* whole 2 MiB: uffd ranges are page aligned */
	npages = f.len / psize;
	nhot = (size_t)((double)npages * hot / 100);
	if (nhot < 1)
		nhot = 1;
	mem = mmap(NULL, f.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return perror("mmap"), 1;
	madvise(mem, f.len, MADV_NOHUGEPAGE);
	if (madvise(mem, f.len, MADV_POPULATE_WRITE) < 0)
		memset(mem, 1, f.len);
	f.mem = mem;
	if (argc >= 6 && !strcmp(argv[4], "floor")) {
		f.interval = atof(argv[5]);
		if (argc >= 7 && strcmp(argv[6], "uffd")) {
			if (strcmp(argv[6], "sd-read") && strcmp(argv[6], "sd-scan"))
				return fprintf(stderr, "hotwriter: unknown floor %s (uffd, sd-read, sd-scan)\n", argv[6]), 2;
			f.mech = !strcmp(argv[6], "sd-read") ? FLOOR_SD_READ : FLOOR_SD_SCAN;
		}
		if (floor_start(&f, &th) < 0)
			return perror("floor"), 1;
	}
	flush_init();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		int i;

		for (i = 0; i < 4096; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			mem[(x % nhot) * psize + (x >> 60)] = (char)x;
		}
		if (flush_mem)
			flush_tlb(now_s());
		if (!go)
			continue;
		if (!t)
			t = tick = now_s();
		else
			writes += 4096;
		if (now_s() >= tick + 1) {
			tick += 1;
			printf("at %.0f %llu\n", tick - t, (unsigned long long)writes);
			fflush(stdout);
		}
		if (now_s() >= t + secs)
			break;
	}
	if (f.interval > 0) {
		f.stop = 1;
		pthread_join(th, NULL);
	}
	if (f.interval > 0)	/* a harvest longer than the interval makes the next start late: the floor's real interval */
		printf("floor %lu scans in %.1f s, %.1f ms each, %llu pages\n", f.scans, now_s() - f.t_start,
		       f.scans ? f.scan_time * 1000 / (double)f.scans : 0, (unsigned long long)f.pages);
	printf("rate %.0f\n", (double)writes / secs);
	return 0;
}
