/* maps.c - pure parser of /proc/PID/maps lines and a streaming iterator over a target's mappings. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"

/* struct pm_mapping as 0.11 had it: the field hugetlb sits in what was padding after deleted. */
struct mapping_0_11 {
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t prot;
	char perms[5];
	enum pm_map_kind kind;
	bool deleted;
	const char *path;
	size_t path_len;
};
_Static_assert(sizeof(struct pm_mapping) == sizeof(struct mapping_0_11) &&
		       offsetof(struct pm_mapping, path) == offsetof(struct mapping_0_11, path) &&
		       offsetof(struct pm_mapping, path_len) == offsetof(struct mapping_0_11, path_len),
	       "struct pm_mapping keeps 0.11's size and offsets");
/*
 * The maps text is read into a buffer of MAPS_BUF bytes. stdio's own is
 * st_blksize, 1 KiB for a /proc file: a read per dozen lines, and each read
 * of /proc/PID/maps takes the target's mmap lock and finds its place again.
 * The kernel gives at most its seq_file buffer (a page of whole lines) per
 * read; a buffer as large as the largest page (64 KiB) takes all it offers:
 * 4x fewer reads with 4 KiB pages. The pages of the buffer a read does not
 * fill are never touched.
 */
#define MAPS_BUF	65536u

struct pm_maps {
	struct pm_target *t;
	bool smaps_read;	/* a replay's smaps was read to tell hugetlb devices */
	FILE *f;
	char *buf;	/* stdio's buffer: MAPS_BUF bytes */
	char *line;
	size_t cap;
	struct pm_mapping cur;
};

/* Parse hex digits at *p (at least one, at most 16); advances *p. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	for (; s < end; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int parse_perms(const char **p, const char *end, struct pm_mapping *m)
{
	static const char want[4][2] = { { 'r', '-' }, { 'w', '-' }, { 'x', '-' }, { 's', 'p' } };
	int i;

	if (end - *p < 4)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		char c = (*p)[i];
		if (c != want[i][0] && c != want[i][1])
			return -EINVAL;
		m->perms[i] = c;
	}
	m->perms[4] = '\0';
	m->prot = (m->perms[0] == 'r' ? PM_PROT_READ : 0) | (m->perms[1] == 'w' ? PM_PROT_WRITE : 0) |
		  (m->perms[2] == 'x' ? PM_PROT_EXEC : 0) | (m->perms[3] == 's' ? PM_MAP_SHARED : 0);
	*p += 4;
	return 0;
}

static bool path_is(const struct pm_mapping *m, const char *s)
{
	size_t n = strlen(s);
	return m->path_len == n && !memcmp(m->path, s, n);
}

static bool path_starts(const struct pm_mapping *m, const char *s)
{
	size_t n = strlen(s);
	return m->path_len >= n && !memcmp(m->path, s, n);
}

/* MAP_HUGETLB's file is /anon_hugepage: the one hugetlb mapping its line alone tells. */
static bool path_hugetlb(const struct pm_mapping *m)
{
	return path_starts(m, "/anon_hugepage");
}

/* What pm_maps_next told by effect, or (a mapping built by hand, or parsed alone) the path rule. */
bool pmi_map_hugetlb(const struct pm_mapping *m)
{
	return m->hugetlb || path_hugetlb(m);
}

static enum pm_map_kind classify(const struct pm_mapping *m)
{
	if (!m->path_len)
		return PM_MAP_ANON;
	/* 6.x names shmem VMAs [anon_shmem:NAME] and prints the shmem file's inode. */
	if (path_starts(m, "[anon_shmem:"))
		return PM_MAP_ANON_NAMED;
	if (m->path[0] != '[' || m->inode)
		return PM_MAP_FILE;
	if (path_is(m, "[heap]"))
		return PM_MAP_HEAP;
	if (path_is(m, "[stack]") || path_starts(m, "[stack:"))
		return PM_MAP_STACK;
	if (path_is(m, "[vdso]"))
		return PM_MAP_VDSO;
	if (path_is(m, "[vvar]") || path_is(m, "[vvar_vclock]"))
		return PM_MAP_VVAR;
	if (path_is(m, "[vsyscall]"))
		return PM_MAP_VSYSCALL;
	if (path_starts(m, "[anon:") || path_starts(m, "[anon_shmem:"))
		return PM_MAP_ANON_NAMED;
	return PM_MAP_SPECIAL;
}

/* "start-end perms offset major:minor inode   path" (fs/proc/task_mmu.c show_map_vma). */
int pm_maps_parse_line(const char *line, size_t len, struct pm_mapping *m)
{
	const char *p = line, *end = line + len;
	uint64_t maj, min;

	memset(m, 0, sizeof(*m));
	if (len && end[-1] == '\n')
		end--;
	if (parse_hex(&p, end, &m->start) || expect(&p, end, '-') || parse_hex(&p, end, &m->end) ||
	    expect(&p, end, ' ') || parse_perms(&p, end, m) || expect(&p, end, ' ') ||
	    parse_hex(&p, end, &m->offset) || expect(&p, end, ' ') || parse_hex(&p, end, &maj) ||
	    expect(&p, end, ':') || parse_hex(&p, end, &min) || expect(&p, end, ' ') ||
	    parse_dec(&p, end, &m->inode))
		return -EINVAL;
	if (m->start > m->end || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	if (p < end && *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	m->path = p;
	m->path_len = (size_t)(end - p);
	m->kind = classify(m);
	m->deleted = m->path_len >= 10 && !memcmp(end - 10, " (deleted)", 10);
	m->hugetlb = path_hugetlb(m);
	return 0;
}

struct pm_maps *pm_maps_open(struct pm_target *t)
{
	struct pm_maps *it;
	char path[4096];
	int fd, r;

	r = pmi_pid_path(t->ctx, path, sizeof(path), t->pid, "maps");
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	fd = pmi_open(t->ctx, path, O_RDONLY);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	it = calloc(1, sizeof(*it));
	if (it)
		it->t = t;
	if (!it || !(it->buf = malloc(MAPS_BUF)) || !(it->f = fdopen(fd, "r"))) {
		if (it)
			free(it->buf);
		free(it);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(it->f, it->buf, _IOFBF, MAPS_BUF);
	return it;
}

int pm_maps_next(struct pm_maps *it, const struct pm_mapping **out)
{
	ssize_t n;

	errno = 0;
	n = getline(&it->line, &it->cap, it->f);
	if (n < 0)
		return errno ? -errno : 1;
	if (pm_maps_parse_line(it->line, (size_t)n, &it->cur) < 0)
		return -EINVAL;
	if (!it->cur.hugetlb)
		it->cur.hugetlb = pmi_hugetlb_by_effect(it->t, &it->cur, &it->smaps_read);
	*out = &it->cur;
	return 0;
}

void pm_maps_close(struct pm_maps *it)
{
	if (!it)
		return;
	if (it->f)
		fclose(it->f);
	free(it->buf);	/* after fclose: stdio's buffer until then */
	free(it->line);
	free(it);
}
