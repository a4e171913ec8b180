/* smaps.c - the one parser of smaps text (pure, line-fed), and per-mapping Swap and KernelPageSize: the kernel's word where pagemap alone cannot tell (markers from swap, hugetlb from THP). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "smaps.h"

static const char *const keys[PMI_SMAPS_NKEYS] = {
	[PMI_SMAPS_RSS] = "Rss:",
	[PMI_SMAPS_PSS] = "Pss:",
	[PMI_SMAPS_SHARED_CLEAN] = "Shared_Clean:",
	[PMI_SMAPS_SHARED_DIRTY] = "Shared_Dirty:",
	[PMI_SMAPS_PRIVATE_CLEAN] = "Private_Clean:",
	[PMI_SMAPS_PRIVATE_DIRTY] = "Private_Dirty:",
	[PMI_SMAPS_REFERENCED] = "Referenced:",
	[PMI_SMAPS_SWAP] = "Swap:",
	[PMI_SMAPS_KERNEL_PAGE] = "KernelPageSize:",
	[PMI_SMAPS_SHARED_HUGETLB] = "Shared_Hugetlb:",
	[PMI_SMAPS_PRIVATE_HUGETLB] = "Private_Hugetlb:",
};

/* "Key:   12 kB" (@len bytes, NUL-terminated copy not needed): which key, and its bytes; -1 for another line. */
static int field(const char *line, size_t len, uint64_t *bytes)
{
	char num[24];
	size_t i, k, n;
	unsigned long long kb;
	char *end;

	for (k = 0; k < PMI_SMAPS_NKEYS; k++) {
		n = strlen(keys[k]);
		if (len < n || memcmp(line, keys[k], n))
			continue;
		while (n < len && (line[n] == ' ' || line[n] == '\t'))
			n++;
		/* the number, copied out: @line need not be NUL-terminated */
		for (i = 0; i < sizeof(num) - 1 && n + i < len && line[n + i] != '\n'; i++)
			num[i] = line[n + i];
		num[i] = '\0';
		kb = strtoull(num, &end, 10);
		if (end == num)
			return -1;
		*bytes = (uint64_t)kb * 1024;
		return (int)k;
	}
	return -1;
}

void pmi_smaps_init(struct pmi_smaps_parser *p, pmi_smaps_fn fn, void *arg)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->arg = arg;
}

/* Hand the record over (if it holds anything) and start an empty one. */
static int flush(struct pmi_smaps_parser *p)
{
	int r = p->open ? p->fn(p->arg, &p->rec) : 0;

	memset(&p->rec, 0, sizeof(p->rec));
	p->open = false;
	return r;
}

/* @line as a mapping line: 0 with a new record begun, 1 if it is not one, -errno. */
static int mapping_line(struct pmi_smaps_parser *p, const char *line, size_t len)
{
	struct pm_mapping m;
	int r;

	if (pm_maps_parse_line(line, len, &m) < 0)
		return 1;
	if ((r = flush(p)) != 0)	/* before the old copy goes: the record's path points into it */
		return r;
	if (len >= p->hdr_cap) {
		char *h = malloc(len + 1);
		if (!h)
			return -ENOMEM;
		free(p->hdr);
		p->hdr = h;
		p->hdr_cap = len + 1;
	}
	memcpy(p->hdr, line, len);	/* the caller's line goes away: keep the path */
	p->hdr[len] = '\0';
	m.path = p->hdr + (m.path - line);
	p->rec.mapped = p->open = true;
	p->rec.map = m;
	return 0;
}

int pmi_smaps_feed(struct pmi_smaps_parser *p, const char *line, size_t len)
{
	uint64_t v;
	int k = field(line, len, &v), r;

	if (k >= 0) {
		if (!(p->rec.have & PMI_SMAPS_HAVE(k))) {
			p->rec.val[k] = v;
			p->rec.have |= PMI_SMAPS_HAVE(k);
		}
		p->open = true;
		return 0;
	}
	/* A field line is "Name: value"; a mapping's line starts with its range. */
	if (memchr(line, ':', len) && !memchr(line, '-', len))
		return 0;
	r = mapping_line(p, line, len);
	return r == 1 ? 0 : r;
}

int pmi_smaps_finish(struct pmi_smaps_parser *p)
{
	int r = flush(p);

	free(p->hdr);
	p->hdr = NULL;
	p->hdr_cap = 0;
	return r;
}

int pmi_smaps_parse_buf(const char *buf, size_t len, pmi_smaps_fn fn, void *arg)
{
	struct pmi_smaps_parser p;
	size_t i = 0;
	int r = 0;

	pmi_smaps_init(&p, fn, arg);
	while (i < len && r == 0) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;

		r = pmi_smaps_feed(&p, buf + i, n);
		i += n;
	}
	if (r == 0)
		return pmi_smaps_finish(&p);
	p.open = false;		/* an error: nothing more is handed over */
	pmi_smaps_finish(&p);
	return r;
}

int pmi_smaps_parse_file(FILE *f, pmi_smaps_fn fn, void *arg)
{
	struct pmi_smaps_parser p;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	pmi_smaps_init(&p, fn, arg);
	errno = 0;
	while (r == 0 && (len = getline(&line, &cap, f)) > 0)
		r = pmi_smaps_feed(&p, line, (size_t)len);
	if (!r && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	if (r == 0)
		return pmi_smaps_finish(&p);
	p.open = false;		/* an error: nothing more is handed over */
	pmi_smaps_finish(&p);
	return r;
}

struct swap_vec {
	struct pmi_smaps_swap *v;
	size_t n, cap;
};

static int swap_add(void *arg, const struct pmi_smaps_rec *rec)
{
	struct swap_vec *s = arg;

	if (!rec->mapped || (s->n && rec->map.start <= s->v[s->n - 1].start))
		return 0;
	if (s->n == s->cap) {
		size_t c = s->cap ? 2 * s->cap : 64;
		struct pmi_smaps_swap *p = realloc(s->v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = c;
	}
	s->v[s->n++] = (struct pmi_smaps_swap){ .start = rec->map.start, .swap = rec->val[PMI_SMAPS_SWAP],
					       .kernel_page = rec->val[PMI_SMAPS_KERNEL_PAGE] };
	return 0;
}

int pmi_smaps_swap_parse(FILE *f, struct pmi_smaps_swap **out, size_t *nout)
{
	struct swap_vec s = { 0 };
	int r = pmi_smaps_parse_file(f, swap_add, &s);

	if (r < 0) {
		free(s.v);
		return r;
	}
	*out = s.v;
	*nout = s.n;
	return 0;
}

int pmi_smaps_open(struct pm_target *t, FILE **out)
{
	char path[4096];
	int fd, r;

	if ((r = pmi_pid_path(t->ctx, path, sizeof(path), t->pid, "smaps")) < 0)
		return r;
	fd = pmi_open(t->ctx, path, O_RDONLY);
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

int pmi_smaps_swap_read(struct pm_target *t, struct pmi_smaps_swap **out, size_t *n)
{
	FILE *f;
	int r = pmi_smaps_open(t, &f);

	if (r < 0)
		return r;
	r = pmi_smaps_swap_parse(f, out, n);
	fclose(f);
	return r;
}

const struct pmi_smaps_swap *pmi_smaps_find(const struct pmi_smaps_swap *v, size_t n, uint64_t start)
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

int64_t pmi_smaps_swap_of(const struct pmi_smaps_swap *v, size_t n, uint64_t start)
{
	const struct pmi_smaps_swap *e = pmi_smaps_find(v, n, start);

	return e ? (int64_t)e->swap : -1;
}
