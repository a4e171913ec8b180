/* sparse.c - sorted sparse reads and writes of files of 64-bit words, coalesced into few system calls. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "sparse.h"

/* End of the group of ascending @idx starting at @i that one read or write covers. */
static size_t group_end(const struct pmi_sparse *s, const uint64_t *idx, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && idx[j] - idx[j - 1] <= s->gap && idx[j] - idx[i] < s->span)
		j++;
	return j;
}

int pmi_sparse_read(struct pmi_sparse *s, int fd, const uint64_t *idx, size_t n, uint64_t *out, uint64_t fill)
{
	size_t i = 0, j, k;

	while (i < n) {
		size_t span;
		ssize_t got;

		j = group_end(s, idx, n, i);
		span = (size_t)(idx[j - 1] - idx[i] + 1);
		got = pmi_ctx_pread_words(s->ctx, fd, s->buf, span, idx[i]);	/* loops: the bitmap gives 4096 bytes a call */
		s->nio++;
		if (got < 0)
			return (int)got;
		for (k = (size_t)got; k < span; k++)
			s->buf[k] = fill;
		for (k = i; k < j; k++)
			out[k] = s->buf[idx[k] - idx[i]];
		i = j;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;	/* sysfs binary files take at most a page per call */
	}
	return 0;
}

int pmi_sparse_write(struct pmi_sparse *s, int fd, const uint64_t *idx, const uint64_t *val, size_t n)
{
	size_t i = 0, j, k;
	int r;

	while (i < n) {
		size_t span;

		j = group_end(s, idx, n, i);
		span = (size_t)(idx[j - 1] - idx[i] + 1);
		memset(s->buf, 0, span * sizeof(uint64_t));
		for (k = i; k < j; k++)
			s->buf[idx[k] - idx[i]] = val[k];
		r = pwrite_all(fd, s->buf, span * sizeof(uint64_t), (off_t)(idx[i] * sizeof(uint64_t)));
		s->nio++;
		if (r < 0)
			return r;
		i = j;
	}
	return 0;
}
