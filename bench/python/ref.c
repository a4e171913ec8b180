/* ref.c - the C baselines of bench/python/bench.py: the same libpagemap calls the Python package makes, timed in C. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <pagemap.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* read: pm_target_read of @n entries into a fresh buffer (as Target.read allocates one per call). */
static double time_read(struct pm_target *t, uint64_t addr, size_t n)
{
	double t0 = now();
	uint64_t *buf = malloc(n * 8), sum = 0;
	ssize_t r;

	if (!buf)
		return -1;
	r = pm_target_read(t, addr / 4096, buf, n);
	sum = r > 0 ? buf[r - 1] : 0;
	free(buf);
	return r == (ssize_t)n ? now() - t0 + (double)(sum & 0) : -1;
}

/* walk: every run of [addr, addr + size) copied into a growing array (as Target.runs keeps them). */
static double time_walk(struct pm_target *t, uint64_t addr, uint64_t size)
{
	double t0 = now();
	struct pm_walk *w = pm_walk_new(t, addr, addr + size, 0);
	const struct pm_run *run;
	struct pm_run *out = NULL, *q;
	size_t n = 0, cap = 0;
	int r;

	if (!w)
		return -1;
	while ((r = pm_walk_next(w, &run)) == 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			q = realloc(out, cap * sizeof(*out));
			if (!q)
				break;
			out = q;
		}
		out[n++] = *run;
	}
	pm_walk_free(w);
	free(out);
	return r == 1 ? now() - t0 : -1;
}

/* Usage: ref read|walk GIB_TOUCHED|-RESERVED_GIB ROUNDS: one time per line, in seconds. */
int main(int argc, char **argv)
{
	long gib = argc > 2 ? atol(argv[2]) : 1, rounds = argc > 3 ? atol(argv[3]) : 5, i;
	size_t size = (size_t)(gib < 0 ? -gib : gib) << 30;
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_target *t = ctx ? pm_target_open(ctx, 0) : NULL;
	char *p;

	if (argc < 3 || !t)
		return 2;
	/* touched: written anonymous memory, THP off; reserved: PROT_NONE, never touched (entries all 0) */
	p = mmap(NULL, size, gib < 0 ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return 1;
	if (gib > 0) {
		madvise(p, size, MADV_NOHUGEPAGE);
		memset(p, 1, size);
	}
	for (i = 0; i < rounds; i++) {
		double s = !strcmp(argv[1], "read") ? time_read(t, (uint64_t)p, size / 4096) :
						      time_walk(t, (uint64_t)p, size);

		printf("%.6f\n", s);
	}
	pm_target_close(t);
	pm_ctx_free(ctx);
	return 0;
}
