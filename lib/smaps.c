/* smaps.c - per-mapping Swap and KernelPageSize of /proc/PID/smaps: the kernel's word where pagemap alone cannot tell (markers from swap, hugetlb from THP). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "smaps.h"

bool pm_smaps_field(const char *line, const char *key, uint64_t *bytes)
{
	size_t n = strlen(key);
	unsigned long long kb;
	char *end;

	if (strncmp(line, key, n))
		return false;
	kb = strtoull(line + n, &end, 10);
	if (end == line + n)
		return false;
	*bytes = (uint64_t)kb * 1024;
	return true;
}

static int push(struct pm_smaps_swap **v, size_t *n, size_t *cap, uint64_t start)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct pm_smaps_swap *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct pm_smaps_swap){ .start = start };
	return 0;
}

int pm_smaps_swap_parse(FILE *f, struct pm_smaps_swap **out, size_t *nout)
{
	struct pm_smaps_swap *v = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	ssize_t len;
	int r = 0;

	errno = 0;
	while ((len = getline(&line, &lcap, f)) > 0) {
		struct pm_mapping m;

		if (n && (pm_smaps_field(line, "Swap:", &v[n - 1].swap) ||
			  pm_smaps_field(line, "KernelPageSize:", &v[n - 1].kernel_page)))
			continue;
		/* A field line is "Name: value"; a mapping's line starts with its range. */
		if (strchr(line, ':') && !strchr(line, '-'))
			continue;
		if (pm_maps_parse_line(line, (size_t)len, &m) == 0 && (n == 0 || m.start > v[n - 1].start) &&
		    (r = push(&v, &n, &cap, m.start)) < 0)
			break;
	}
	if (!r && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	if (r < 0) {
		free(v);
		return r;
	}
	*out = v;
	*nout = n;
	return 0;
}

int pm_smaps_open(struct pm_target *t, FILE **out)
{
	char path[4096];
	int fd, r;

	if ((r = pm_pid_path(t->ctx, path, sizeof(path), t->pid, "smaps")) < 0)
		return r;
	fd = pm_open(t->ctx, path, O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	*out = fdopen(fd, "r");
	if (!*out) {
		r = -errno;
		close(fd);
		return r;
	}
	return 0;
}

int pm_smaps_swap_read(struct pm_target *t, struct pm_smaps_swap **out, size_t *n)
{
	FILE *f;
	int r = pm_smaps_open(t, &f);

	if (r < 0)
		return r;
	r = pm_smaps_swap_parse(f, out, n);
	fclose(f);
	return r;
}

const struct pm_smaps_swap *pm_smaps_find(const struct pm_smaps_swap *v, size_t n, uint64_t start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start == start)
			return &v[mid];
		if (v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int64_t pm_smaps_swap_of(const struct pm_smaps_swap *v, size_t n, uint64_t start)
{
	const struct pm_smaps_swap *e = pm_smaps_find(v, n, start);

	return e ? (int64_t)e->swap : -1;
}
