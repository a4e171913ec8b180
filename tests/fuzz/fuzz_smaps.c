/* fuzz_smaps.c - libFuzzer target for the smaps text parser (lib/pages/smaps.c): buffer and stream front ends agree, records are sane. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "smaps.h"

#define PM_FUZZ_NAME "fuzz_smaps"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                \
	do {                                                                                     \
		if (!(c)) {                                                                      \
			fprintf(stderr, "fuzz_smaps: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* A digest of every record, so two parses can be compared. */
struct digest {
	size_t n, mapped;
	uint64_t sum, starts;
	unsigned have;
	size_t lines;		/* newlines in the input + 1: an upper bound on records */
};

static int check_rec(void *arg, const struct pmi_smaps_rec *rec)
{
	struct digest *d = arg;
	size_t k;

	ASSERT(rec->have < PMI_SMAPS_HAVE(PMI_SMAPS_NKEYS));
	for (k = 0; k < PMI_SMAPS_NKEYS; k++)
		if (!(rec->have & PMI_SMAPS_HAVE(k)))
			ASSERT(rec->val[k] == 0);
	ASSERT(rec->mapped || rec->have);	/* an unmapped record exists only for its fields */
	if (rec->mapped) {
		ASSERT(rec->map.start <= rec->map.end);
		if (rec->map.path_len)	/* borrowed, readable to its end (ASan checks) */
			d->sum += (unsigned char)rec->map.path[rec->map.path_len - 1];
		d->starts = d->starts * 31 + rec->map.start;
		d->mapped++;
	}
	for (k = 0; k < PMI_SMAPS_NKEYS; k++)
		d->sum = d->sum * 131 + rec->val[k];
	d->have |= rec->have;
	d->n++;
	ASSERT(d->n <= d->lines);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct digest a = { 0 }, b = { 0 };
	char *copy = calloc(size ? size : 1, 1);	/* exact size: any read past the end is caught */
	FILE *f;
	size_t i;

	ASSERT(copy);
	if (size)
		memcpy(copy, data, size);
	a.lines = b.lines = 1;
	for (i = 0; i < size; i++)
		a.lines += copy[i] == '\n';
	b.lines = a.lines;
	ASSERT(pmi_smaps_parse_buf(copy, size, check_rec, &a) == 0);
	/* The stream front end sees the same lines: the same records. */
	f = size ? fmemopen(copy, size, "r") : NULL;
	if (f) {
		ASSERT(pmi_smaps_parse_file(f, check_rec, &b) == 0);
		fclose(f);
		ASSERT(a.n == b.n && a.mapped == b.mapped && a.sum == b.sum && a.starts == b.starts &&
		       a.have == b.have);
	}
	free(copy);
	return 0;
}
