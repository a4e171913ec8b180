/* touch.c - the scraped process's view: write one byte per page of GIB GiB, round after round, and report the p50,
 * p99 and max time of each 2 MiB step (512 pages) over SECONDS. Usage: touch GIB SECONDS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define STEP (2UL << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t len, off, i, n = 0, cap = 1 << 20;
	uint64_t *lat = malloc(cap * sizeof(*lat)), end, t0;
	volatile char *p;

	if (argc != 3 || !lat)
		return 2;
	len = strtoul(argv[1], NULL, 10) << 30;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset((char *)p, 1, len);	/* populated first: the loop measures writes to present pages */
	printf("ready\n");
	fflush(stdout);
	end = now_ns() + strtoull(argv[2], NULL, 10) * 1000000000ULL;
	for (off = 0; n < cap && now_ns() < end; off = (off + STEP) % len) {
		t0 = now_ns();
		for (i = 0; i < STEP; i += 4096)
			p[off + i]++;
		lat[n++] = now_ns() - t0;
	}
	qsort(lat, n, sizeof(*lat), cmp);
	printf("steps %zu p50_us %.1f p99_us %.1f max_us %.1f\n", n, lat[n / 2] / 1e3, lat[n * 99 / 100] / 1e3,
	       lat[n - 1] / 1e3);
	return 0;
}
