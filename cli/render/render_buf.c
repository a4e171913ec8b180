/* render_buf.c - a picture written into memory, in a buffer that grows without copying or clearing what it holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"

/*
 * open_memstream grows its buffer by a new allocation, a copy and a clearing
 * of the new part: a 1.2 MiB page touched about three times its size in fresh
 * pages, more than the rest of the page's writing cost. Here the buffer is
 * one block grown by realloc, which moves a large (mmap'd) block without
 * copying it, and only the pages written are ever touched.
 */
struct rnd_buf {
	char **out;
	size_t *out_len;
	char *p;
	size_t len, cap;
};

static ssize_t buf_write(void *cookie, const char *data, size_t n)
{
	struct rnd_buf *b = cookie;

	if (n >= b->cap - b->len) {
		size_t cap = b->cap;
		char *more;

		while (n >= cap - b->len)
			cap *= 2;
		if (!(more = realloc(b->p, cap)))
			return -1;
		b->p = more;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return (ssize_t)n;
}

/* As open_memstream's: the text, NUL-terminated, and its length are the caller's from fclose on. */
static int buf_close(void *cookie)
{
	struct rnd_buf *b = cookie;

	b->p[b->len] = '\0';
	*b->out = b->p;
	*b->out_len = b->len;
	free(b);
	return 0;
}

FILE *rnd_buf_open(char **buf, size_t *len)
{
	struct rnd_buf *b = calloc(1, sizeof(*b));
	FILE *f;

	if (!b || !(b->p = malloc(b->cap = 256 << 10))) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->out = buf;
	b->out_len = len;
	f = fopencookie(b, "w", (cookie_io_functions_t){ .write = buf_write, .close = buf_close });
	if (!f) {
		free(b->p);
		free(b);
	}
	return f;
}
