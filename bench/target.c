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
	fprintf(stderr, "Usage: target on|off [GIB [share|half|jvm]]\n"
			"Map and write GIB GiB (default 4) of private anonymous memory with THP on\n"
			"(MADV_HUGEPAGE on a 2 MiB-aligned region) or off (MADV_NOHUGEPAGE), print the\n"
			"pid and \"ready\", then wait until killed, or until stdin closes when it is a pipe.\n"
			"With share, first fork a child that keeps the pages shared (copy-on-write, map\n"
			"count 2) and dies with its parent. With half, write only a random half of the\n"
			"pages (in address order, fixed seed). SIGUSR1 makes it write every 16th page\n"
			"again (breaking copy-on-write with share) and print \"written\".\n"
			"With jvm, a JVM-sized layout: the region cut into %d mappings (every other\n"
			"slice made read-only, on 2 MiB boundaries, so the VMAs cannot merge).\n", JVM_SLICES);
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
	(void)sig;
	write_asked = 1;
}

/* SIGUSR1: write every 16th page (a known set for `pagemap diff`), then say so on stdout. */
static void write_if_asked(void)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!write_asked)
		return;
	write_asked = 0;
	for (size_t i = 0; i < region_len; i += 16 * (size_t)page)
		region[i] = 2;
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
	bool thp, share = argc == 4 && !strcmp(argv[3], "share"), half = argc == 4 && !strcmp(argv[3], "half");
	bool jvm = argc == 4 && !strcmp(argv[3], "jvm");
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART: the wait's read returns EINTR */
	char *p, *end;
	pid_t parent = getpid();

	if (argc < 2 || argc > 4 || (strcmp(argv[1], "on") && strcmp(argv[1], "off")) || (argc == 4 && !share && !half && !jvm))
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
	for (i = 0; i < len; i += (size_t)page)
		if (!half || (rand() & 1))
			p[i] = 1;
	if (jvm)
		split_mappings(p, len);
	region = p;
	region_len = len;
	sigaction(SIGUSR1, &sa, NULL);
	if (share) {
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
	}
	printf("%d\nready\n", (int)getpid());
	fflush(stdout);
	wait_for_end();
	return 0;
}
