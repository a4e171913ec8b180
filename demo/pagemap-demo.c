/* pagemap-demo.c - a process with a known memory layout for `make demo` and fixture captures. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define MIB (1024UL * 1024)

static size_t page;

static char regions[1024];
static size_t regions_len;

/*
 * Name the region [anon:NAME] where the kernel allows it (CONFIG_ANON_VMA_NAME)
 * and list "NAME START END" on stdout so `pagemap pages PID 0xSTART-0xEND` finds it.
 */
static void name(void *p, size_t len, const char *n)
{
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len, (unsigned long)n);
	regions_len += (size_t)snprintf(regions + regions_len, sizeof(regions) - regions_len, "%s %p-%p\n", n, p,
					(void *)((char *)p + len));
}

/* An anonymous region with an unmapped page on each side, so it never merges with a neighbour. */
static char *anon(size_t len, int prot)
{
	char *p = mmap(NULL, len + 2 * page, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("pagemap-demo: mmap");
		exit(1);
	}
	munmap(p, page);
	munmap(p + page + len, page);
	return p + page;
}

/* 4 MiB written, then every other page of 1 MiB: present runs and holes. */
static void layout_anon(void)
{
	char *p = anon(4 * MIB, PROT_READ | PROT_WRITE), *q = anon(MIB, PROT_READ | PROT_WRITE);
	size_t i;

	name(p, 4 * MIB, "demo-anon");
	memset(p, 1, 4 * MIB);
	madvise(p, 4 * MIB, MADV_NOHUGEPAGE);
	name(q, MIB, "demo-sparse");
	for (i = 0; i < MIB; i += 2 * page)
		q[i] = 1;
}

/* 4 MiB aligned to 2 MiB with MADV_HUGEPAGE: two PMD-mapped huge pages when THP allows. */
static void layout_thp(void)
{
	char *raw = anon(6 * MIB, PROT_READ | PROT_WRITE);
	char *p = (char *)(((uintptr_t)raw + 2 * MIB - 1) & ~(2 * MIB - 1));

	madvise(p, 4 * MIB, MADV_HUGEPAGE);
	name(p, 4 * MIB, "demo-thp");
	memset(p, 2, 4 * MIB);
}

/* Shared memfd (file-backed, shared), a guard region, and a PROT_NONE populated region. */
static void layout_special(void)
{
	int fd = memfd_create("demo-memfd", MFD_CLOEXEC);
	char *s, *g, *n;

	if (fd >= 0 && ftruncate(fd, (off_t)MIB) == 0) {
		s = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (s != MAP_FAILED)
			memset(s, 3, MIB / 2);
	}
	g = anon(16 * page, PROT_READ | PROT_WRITE);
	name(g, 16 * page, "demo-guard");
	memset(g, 4, 16 * page);
	madvise(g + 4 * page, 4 * page, MADV_GUARD_INSTALL);	/* 6.15+; EINVAL before */
	n = anon(8 * page, PROT_READ | PROT_WRITE);
	name(n, 8 * page, "demo-protnone");
	memset(n, 5, 8 * page);
	mprotect(n, 8 * page, PROT_NONE);
}

int main(void)
{
	char c;

	page = (size_t)sysconf(_SC_PAGESIZE);
	layout_anon();
	layout_thp();
	layout_special();
	printf("%d\n%s", (int)getpid(), regions);
	fflush(stdout);
	/* Live until stdin closes or a signal ends us. */
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
