/* grow.c - the one way the library's arrays grow: doubling, with the multiplication checked. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "base.h"

int pmi_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	p = realloc(*(void **)pp, c * size);
	if (!p)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = c;
	return 0;
}
