/* fuzz_maps.c - libFuzzer target for pm_maps_parse_line: whole input and each line, invariants and a round trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"

#define PM_FUZZ_NAME "fuzz_maps"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                        \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "fuzz_maps: %s:%d: invariant failed: %s\n", __FILE__, \
				__LINE__, #c);                                           \
			abort();                                                         \
		}                                                                        \
	} while (0)

static bool same_mapping(const struct pm_mapping *a, const struct pm_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->inode == b->inode &&
	       a->prot == b->prot && !memcmp(a->perms, b->perms, sizeof(a->perms)) && a->kind == b->kind &&
	       a->deleted == b->deleted && a->path_len == b->path_len &&
	       (!a->path_len || !memcmp(a->path, b->path, a->path_len));
}

/* Parse an exact-size copy of @line (so any read past @len is caught). */
static int parse_copy(const char *line, size_t len, struct pm_mapping *m, char **keep)
{
	char *c = malloc(len ? len : 1);

	ASSERT(c);
	if (len)
		memcpy(c, line, len);
	*keep = c;
	return pm_maps_parse_line(c, len, m);
}

static void check_ok(const char *line, size_t len, const struct pm_mapping *m)
{
	size_t body = len && line[len - 1] == '\n' ? len - 1 : len;
	static const char del[] = " (deleted)";
	unsigned prot;

	ASSERT(m->start <= m->end);
	ASSERT(m->path >= line && m->path <= line + body);
	ASSERT(m->path_len <= body);
	ASSERT(m->path + m->path_len == line + body);
	ASSERT(!m->path_len || m->path[0] != ' ');
	ASSERT((m->kind == PM_MAP_ANON) == (m->path_len == 0));
	ASSERT(m->kind <= PM_MAP_SPECIAL);
	ASSERT(m->perms[4] == '\0');
	ASSERT(m->perms[0] == 'r' || m->perms[0] == '-');
	ASSERT(m->perms[1] == 'w' || m->perms[1] == '-');
	ASSERT(m->perms[2] == 'x' || m->perms[2] == '-');
	ASSERT(m->perms[3] == 's' || m->perms[3] == 'p');
	prot = (m->perms[0] == 'r' ? PM_PROT_READ : 0) | (m->perms[1] == 'w' ? PM_PROT_WRITE : 0) |
	       (m->perms[2] == 'x' ? PM_PROT_EXEC : 0) | (m->perms[3] == 's' ? PM_MAP_SHARED : 0);
	ASSERT(m->prot == prot);
	ASSERT(m->deleted == (m->path_len >= sizeof(del) - 1 &&
			      !memcmp(m->path + m->path_len - (sizeof(del) - 1), del, sizeof(del) - 1)));
	if (m->kind != PM_MAP_ANON && m->kind != PM_MAP_FILE)
		ASSERT(m->path[0] == '[');
}

/* Print @m the way the kernel does and parse it again: the same record must come back. */
static void round_trip(const struct pm_mapping *m)
{
	struct pm_mapping again;
	char *buf, *keep;
	int n, r;

	buf = malloc(128 + m->path_len);
	ASSERT(buf);
	n = snprintf(buf, 128, "%08llx-%08llx %s %08llx %02x:%02x %llu ", (unsigned long long)m->start,
		     (unsigned long long)m->end, m->perms, (unsigned long long)m->offset, m->dev_major,
		     m->dev_minor, (unsigned long long)m->inode);
	ASSERT(n > 0 && n < 128);
	if (m->path_len)
		memcpy(buf + n, m->path, m->path_len);
	n += (int)m->path_len;
	buf[n++] = '\n';	/* one newline is dropped, so a path ending in '\n' survives */
	r = parse_copy(buf, (size_t)n, &again, &keep);
	ASSERT(r == 0);
	ASSERT(same_mapping(m, &again));
	free(keep);
	free(buf);
}

static void one_line(const char *line, size_t len)
{
	struct pm_mapping m, m2;
	char *keep, *keep2;
	int r = parse_copy(line, len, &m, &keep);

	ASSERT(r == 0 || r == -22);	/* -EINVAL */
	/* Deterministic. */
	ASSERT(parse_copy(line, len, &m2, &keep2) == r);
	if (!r) {
		check_ok(keep, len, &m);
		ASSERT(same_mapping(&m, &m2));
		round_trip(&m);
	}
	free(keep2);
	/* With or without the newline, the same answer. */
	if (!len || line[len - 1] != '\n') {
		char *nl = malloc(len + 1);
		ASSERT(nl);
		if (len)
			memcpy(nl, line, len);
		nl[len] = '\n';
		ASSERT(parse_copy(nl, len + 1, &m2, &keep2) == r);
		if (!r)
			ASSERT(same_mapping(&m, &m2));
		free(keep2);
		free(nl);
	}
	free(keep);
}

/*
 * The other direction: the first 41 bytes are the fields of a mapping, the
 * rest its path. Whatever show_map_vma() can print must parse back exactly.
 */
static void from_fields(const uint8_t *d, size_t size)
{
	static const char *const perms[] = { "---p", "r--p", "rw-p", "r-xp", "rwxp", "--xp", "r--s", "rw-s" };
	struct pm_mapping want, got;
	uint64_t f[4];
	uint32_t dev[2];
	char *line, *keep;
	size_t plen, i, skip;
	int n;

	if (size < 41)
		return;
	memcpy(f, d, sizeof(f));
	memcpy(dev, d + 32, sizeof(dev));
	memset(&want, 0, sizeof(want));
	want.start = f[0] < f[1] ? f[0] : f[1];
	want.end = f[0] < f[1] ? f[1] : f[0];
	want.offset = f[2];
	want.inode = f[3];
	want.dev_major = dev[0];
	want.dev_minor = dev[1];
	memcpy(want.perms, perms[d[40] & 7], 5);
	d += 41;
	size -= 41;
	/* The kernel escapes newlines in paths; padding spaces cannot start one. */
	for (skip = 0; skip < size && d[skip] == ' '; skip++)
		;
	plen = size - skip;
	line = malloc(160 + plen);
	ASSERT(line);
	n = snprintf(line, 160, "%08llx-%08llx %s %08llx %02x:%02x %llu%s", (unsigned long long)want.start,
		     (unsigned long long)want.end, want.perms, (unsigned long long)want.offset, want.dev_major,
		     want.dev_minor, (unsigned long long)want.inode, plen ? "                   " : " ");
	ASSERT(n > 0 && n < 160);
	for (i = 0; i < plen; i++)
		line[n + i] = d[skip + i] == '\n' ? '?' : (char)d[skip + i];
	n += (int)plen;
	line[n++] = '\n';
	ASSERT(parse_copy(line, (size_t)n, &got, &keep) == 0);
	ASSERT(got.start == want.start && got.end == want.end && got.offset == want.offset);
	ASSERT(got.dev_major == want.dev_major && got.dev_minor == want.dev_minor);
	ASSERT(got.inode == want.inode);
	ASSERT(!strcmp(got.perms, want.perms));
	ASSERT(got.path_len == plen);
	ASSERT(!plen || !memcmp(got.path, line + n - 1 - plen, plen));
	check_ok(keep, (size_t)n, &got);
	free(keep);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *p = s, *end = s + size;

	if (size > 65536)
		return 0;
	from_fields(data, size);
	one_line(s, size);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		one_line(p, n);
		p += n;
	}
	return 0;
}
