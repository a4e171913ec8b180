/* target.c - benchmark target: maps and touches N GiB of anonymous memory, THP off or on, then waits. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024UL * 1024)
#define PMD (2 * MIB)
#define JVM_SLICES 400	/* a JVM's heap regions, code cache, metaspace and libraries: hundreds of mappings */

static int usage(void)
{
	fprintf(stderr, "Usage: target on|off [GIB [share[N]|half|sparse[N]|jvm|mapsN]]\n"
			"Map and write GIB GiB (default 4) of private anonymous memory with THP on\n"
			"(MADV_HUGEPAGE on a 2 MiB-aligned region) or off (MADV_NOHUGEPAGE), print the\n"
			"pid and \"ready\", then wait until killed, or until stdin closes when it is a pipe.\n"
			"With share, first fork a child that keeps the pages shared (copy-on-write, map\n"
			"count 2) and dies with its parent; shareN forks N such children (map count N+1),\n"
			"and prints their pids on a third line, after \"ready\". With half, write only a random half of the\n"
			"pages (in address order, fixed seed). With sparse, write every other page\n"
			"(THP off) or every other 2 MiB block (THP on): the most regions a walk can meet;\n"
			"sparseN writes one unit in N (sparse16: one 4 KiB page in 16, each its own run).\n"
			"SIGUSR1 makes it write every 16th page\n"
			"again (breaking copy-on-write with share) and print \"written\"; SIGUSR2\n"
			"writes 64 pages in the middle of the region only (a small change: a series\n"
			"member of it stores little) and prints \"written\" too.\n"
			"With jvm, a JVM-sized layout: the region cut into %d mappings (every other\n"
			"slice made read-only, on 2 MiB boundaries, so the VMAs cannot merge).\n"
			"With mapsN, also N one-page mappings beside the region (protections alternate\n"
			"read-write and read-only so the kernel cannot merge them; every other\n"
			"read-write page written): many mappings for `pagemap maps` against cat smaps.\n", JVM_SLICES);
	return 2;
}

/* Map @len bytes starting on a 2 MiB boundary, so every PMD of it can be huge. */
static char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + PMD - 1) & ~(uintptr_t)(PMD - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((char *)a + len, (uintptr_t)p + PMD - a);
	return (char *)a;
}

/* "mapsN": N one-page mappings, protections alternating (unmergeable), every other writable one touched. */
static long maps_count(const char *w)
{
	char *end;
	long n;

	if (strncmp(w, "maps", 4) || !w[4])
		return 0;
	n = strtol(w + 4, &end, 10);
	return *end || n < 1 || n > 1000000 ? -1 : n;
}

static int make_mappings(long n, long page)
{
	char *q = mmap(NULL, (size_t)n * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (q == MAP_FAILED) {
		fprintf(stderr, "target: cannot map %ld pages: %s\n", n, strerror(errno));
		return -1;
	}
	for (long i = 0; i < n; i += 4)
		q[i * page] = 1;
	for (long i = 1; i < n; i += 2)
		if (mprotect(q + i * page, (size_t)page, PROT_READ) < 0) {
			fprintf(stderr, "target: mprotect (vm.max_map_count?): %s\n", strerror(errno));
			return -1;
		}
	return 0;
}

/* "sparse" writes one unit in 2, "sparseN" one in N (2..65536); anything else 0 (-1: a bad N). */
static long sparse_stride(const char *w)
{
	char *end;
	long n;

	if (strncmp(w, "sparse", 6))
		return 0;
	if (!w[6])
		return 2;
	n = strtol(w + 6, &end, 10);
	return *end || n < 2 || n > 65536 ? -1 : n;
}

#define MAX_SHARERS 4096
static pid_t children[MAX_SHARERS];

/* "share" is one sharer, "shareN" N of them (1..MAX_SHARERS); anything else none (-1: not a share word). */
static long share_count(const char *w)
{
	char *end;
	long n;

	if (strncmp(w, "share", 5))
		return 0;
	if (!w[5])
		return 1;
	n = strtol(w + 5, &end, 10);
	return *end || n < 1 || n > MAX_SHARERS ? -1 : n;
}

/* Cut [p, p + len) into JVM_SLICES mappings: every other slice read-only (whole PMDs, so no huge page splits). */
static void split_mappings(char *p, size_t len)
{
	size_t slice = len / JVM_SLICES & ~(PMD - 1), i;

	if (!slice)
		slice = PMD;
	for (i = 1; (i + 1) * slice <= len; i += 2)
		if (mprotect(p + i * slice, slice, PROT_READ) < 0)
			fprintf(stderr, "target: mprotect: %s\n", strerror(errno));
}

static volatile sig_atomic_t write_asked;
static char *region;
static size_t region_len;

static void on_usr1(int sig)
{
	write_asked = sig == SIGUSR2 ? 2 : 1;
}

/* SIGUSR1: write every 16th page (a known set for `pagemap diff`), then say so on stdout. */
static void write_if_asked(void)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!write_asked)
		return;
	if (write_asked == 2) {	/* SIGUSR2: 64 pages from the middle */
		for (size_t i = 0; i < 64; i++)
			region[(region_len / 2 & ~((size_t)page - 1)) + i * (size_t)page] = 3;
	} else {
		for (size_t i = 0; i < region_len; i += 16 * (size_t)page)
			region[i] = 2;
	}
	write_asked = 0;
	printf("written\n");
	fflush(stdout);
}

/* Block until stdin reaches EOF if it is a pipe or socket; otherwise until a signal kills us. */
static void wait_for_end(void)
{
	struct stat st;
	char buf[256];
	ssize_t n;

	if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		do {
			n = read(0, buf, sizeof(buf));
			write_if_asked();
		} while (n > 0 || (n < 0 && errno == EINTR));
		return;
	}
	for (;;) {
		pause();
		write_if_asked();
	}
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	double gib = 4;
	size_t len, i;
	long sharers = argc == 4 ? share_count(argv[3]) : 0, nmaps = argc == 4 ? maps_count(argv[3]) : 0;
	bool thp, share = sharers > 0, half = argc == 4 && !strcmp(argv[3], "half");
	long stride = argc == 4 ? sparse_stride(argv[3]) : 0;
	bool sparse = stride > 0, jvm = argc == 4 && !strcmp(argv[3], "jvm");
	size_t skip;	/* sparse: a written unit, then one left alone */
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART: the wait's read returns EINTR */
	char *p, *end;
	pid_t parent = getpid();

	if (argc < 2 || argc > 4 || (strcmp(argv[1], "on") && strcmp(argv[1], "off")) || sharers < 0 ||
	    nmaps < 0 || stride < 0 || (argc == 4 && !share && !half && !sparse && !jvm && !nmaps))
		return usage();
	thp = !strcmp(argv[1], "on");
	if (argc >= 3) {
		gib = strtod(argv[2], &end);
		if (*end || gib <= 0 || gib > 1024)
			return usage();
	}
	len = ((size_t)(gib * 1024) * MIB + PMD - 1) & ~(PMD - 1);
	p = map_aligned(len);
	if (!p) {
		fprintf(stderr, "target: cannot map %zu bytes: %s\n", len, strerror(errno));
		return 1;
	}
	if (madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0) {
		fprintf(stderr, "target: madvise %s: %s\n", thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
		return 1;
	}
	srand(42);
	skip = thp ? PMD : (size_t)page;
	for (i = 0; i < len; i += (size_t)page)
		if (sparse ? !((i / skip) % (size_t)stride) : !half || (rand() & 1))
			p[i] = 1;
	if (jvm)
		split_mappings(p, len);
	if (nmaps && make_mappings(nmaps, page) < 0)
		return 1;
	region = p;
	region_len = len;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	for (long k = 0; k < sharers; k++) {
		pid_t child = fork();

		if (child < 0) {
			fprintf(stderr, "target: fork: %s\n", strerror(errno));
			return 1;
		}
		if (child == 0) {	/* the sharer: dies with the parent, whatever kills it */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
				_exit(0);
			wait_for_end();
			_exit(0);
		}
		children[k] = child;
	}
	printf("%d\nready\n", (int)getpid());
	for (long k = 0; k < sharers && sharers > 1; k++)
		printf("%d%c", (int)children[k], k + 1 < sharers ? ' ' : '\n');
	fflush(stdout);
	wait_for_end();
	return 0;
}
