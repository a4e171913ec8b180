/* fuzz_heat.c - libFuzzer target for the reader of `track -J` and `wss -J` recordings (cli/render/render_heat_parse.c), then the heat map drawn from what it read. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cli/render/render.h"

#define PM_FUZZ_NAME "fuzz_heat"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                \
	do {                                                                                     \
		if (!(c)) {                                                                      \
			fprintf(stderr, "fuzz_heat: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* What the reader promises of a recording it accepted. */
static void check_rec(const struct heat_rec *rec)
{
	size_t i, j, n = 0;

	ASSERT(rec->n > 0 && rec->n <= rec->cap);
	ASSERT(!strcmp(rec->kind, "track") || !strcmp(rec->kind, "wss"));
	for (i = 0; i < rec->n; i++) {
		const struct heat_interval *iv = &rec->iv[i];

		ASSERT(iv->n <= iv->cap);
		for (j = 0; j < iv->n; j++) {
			ASSERT(iv->r[j].start <= iv->r[j].end);
			ASSERT(rec->per_mapping || iv->r[j].bytes <= iv->r[j].end - iv->r[j].start);
		}
		n += iv->n;
	}
	ASSERT(n == rec->nranges);
}

/* Draw it as `pagemap render --track FILE` does without a process: axis from the recording, every format. */
static void draw(struct heat_rec *rec)
{
	struct rnd_layout lay = { 400, 1, 4096, 24, true };
	struct rnd_model m = { 0 };
	uint64_t *grid = NULL;
	FILE *f;

	m.page_size = 4096;
	m.max_runs = 20000;
	if (lay.max_cells / rec->n < lay.width)
		lay.width = lay.max_cells / (uint32_t)rec->n > 16 ? lay.max_cells / (uint32_t)rec->n : 16;
	lay.max_cells = lay.width;
	if (heat_axis_from_rec(&m, rec) == 0 && rnd_layout(&m, &lay) == 0 && (grid = heat_grid(&m, rec))) {
		f = fopen("/dev/null", "we");
		ASSERT(f);
		ASSERT(heat_write_json(f, &m, rec, grid) == 0);
		ASSERT(heat_write_svg(f, &m, rec, grid) == 0);
		ASSERT(heat_write_ansi(f, &m, rec, grid) == 0);
		fclose(f);
	}
	free(grid);
	rnd_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heat_rec rec = { 0 };
	char err[256];
	int rc = heat_parse(&rec, (const char *)data, size, err, sizeof(err));

	if (rc == 0) {
		check_rec(&rec);
		draw(&rec);
	} else {
		ASSERT(rc == -EINVAL || rc == -ENOMEM);
		ASSERT(rc != -EINVAL || (err[0] && !strchr(err, '\n')));	/* one line that says why */
	}
	heat_free(&rec);
	return 0;
}
