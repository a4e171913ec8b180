/* pm-thp-hold.c - a process holding one written, PMD-aligned MADV_HUGEPAGE region: a THP where the kernel gives one. */
/*
 * Usage: pm-thp-hold   Prints "ready" once written, then waits for a signal. Whether the region is a THP is
 * the caller's to check (smaps_rollup's AnonHugePages): THP may be never, or memory too fragmented.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	const size_t pmd = 2u << 20;	/* x86-64, arm64 4K: PMD size; elsewhere a large region is no worse */
	char *p = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED) {
		perror("pm-thp-hold: mmap");
		return 1;
	}
	a = (char *)(((uintptr_t)p + pmd - 1) & ~(uintptr_t)(pmd - 1));
	if (madvise(a, pmd, MADV_HUGEPAGE) < 0)
		perror("pm-thp-hold: madvise MADV_HUGEPAGE");	/* THP not built in: the caller sees no THP */
	memset(a, 1, pmd);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
