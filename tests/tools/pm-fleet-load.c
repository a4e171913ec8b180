/* pm-fleet-load.c - a workload of known size for the exporter tests: private, shared and huge-page bytes, static.
 * Usage: pm-fleet-load PRIVATE_MIB SHARED_MIB THP(0|1)
 * The process (comm "pmfleetwork") touches PRIVATE_MIB of private anonymous memory and SHARED_MIB of
 * MAP_SHARED|MAP_ANONYMOUS memory (shmem), which a child (comm "pmfleetpeer") maps and reads too; with THP 1,
 * one more 2 MiB aligned region with MADV_HUGEPAGE. It prints "ready PID CHILD" and sleeps until killed; the child
 * dies with it (PR_SET_PDEATHSIG). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MIB (1024UL * 1024)

static void *map(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t priv, shared, i;
	volatile char sum = 0;
	char *p, *s, *h;
	pid_t child;

	if (argc != 4)
		return 2;
	priv = strtoul(argv[1], NULL, 10) * MIB;
	shared = strtoul(argv[2], NULL, 10) * MIB;
	s = map(shared, MAP_SHARED);
	memset(s, 1, shared);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "pmfleetpeer");
		for (i = 0; i < shared; i += 4096)
			sum += s[i];
		for (;;)
			pause();
	}
	prctl(PR_SET_NAME, "pmfleetwork");
	p = map(priv, MAP_PRIVATE);
	memset(p, 2, priv);
	if (atoi(argv[3])) {
		h = map(4 * MIB, MAP_PRIVATE);
		h = (char *)(((unsigned long)h + 2 * MIB - 1) & ~(2 * MIB - 1));
		madvise(h, 2 * MIB, MADV_HUGEPAGE);
		memset(h, 3, 2 * MIB);
	}
	printf("ready %d %d\n", (int)getpid(), (int)child);
	fflush(stdout);
	for (;;)
		pause();
}
