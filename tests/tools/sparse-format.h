/* sparse-format.h - the encoder of the pagemap-sparse text form, shared by pm-sparse and pm-derive. */
#ifndef PM_SPARSE_FORMAT_H
#define PM_SPARSE_FORMAT_H

#include <inttypes.h>
#include <stdio.h>

/* Encode @n words at byte @off: runs of repeats (WORD*N) and of +1 steps (WORD+N). */
static inline void sparse_emit(FILE *out, uint64_t off, const uint64_t *w, size_t n)
{
	size_t i = 0;

	fprintf(out, "@%" PRIx64 "\n", off);
	while (i < n) {
		size_t same = 1, step = 1;
		while (i + same < n && w[i + same] == w[i])
			same++;
		while (i + step < n && w[i + step] == w[i] + step)
			step++;
		if (same >= step) {
			fprintf(out, same > 1 ? "%" PRIx64 "*%zu\n" : "%" PRIx64 "\n", w[i], same);
			i += same;
		} else {
			fprintf(out, "%" PRIx64 "+%zu\n", w[i], step);
			i += step;
		}
	}
}

#endif
