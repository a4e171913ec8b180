/*
 * features_record.c - the pagemap-features record, the key=value lines a captured tree keeps of
 * what can only be probed by effect: one key table drives the writer (pm_features_export, for
 * `pagemap features --export` and snapshots) and the reader (a replayed tree's probe).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"

/* How a value is spelled, and so read back. */
enum rec_kind {
	REC_TEXT,	/* char[]: written for people, not read back */
	REC_UINT,	/* unsigned, decimal */
	REC_HEX,	/* uint64_t, 0x… */
	REC_BOOL,	/* bool: yes, no */
	REC_TRI,	/* enum pm_tristate: no, yes, unknown */
	REC_LAYOUT,	/* enum pm_layout: pm_layout_name */
	REC_PFN_VIEW,	/* enum pm_pfn_view: pm_pfn_view_name */
	REC_ERRNO,	/* int errno: its name (a number where glibc has none); no line when 0 */
	REC_MAPCOUNT,	/* page_mapcount: as REC_TRI, or not-needed (unknown, page_mapcount_not_needed) */
};

struct rec_key {
	const char *key;
	enum rec_kind kind;
	size_t off;	/* the field in struct pm_features */
};

#define KEY(name, kind) { #name, kind, offsetof(struct pm_features, name) }

/*
 * The record's keys, in the order they are written (tests/fixtures/README.md lists them).
 * "kernel" is for people: a tree's proc/sys/kernel/osrelease says the release the reader uses.
 * A new key: its row here, and the field in struct pm_features.
 */
static const struct rec_key rec_keys[] = {
	{ "kernel", REC_TEXT, offsetof(struct pm_features, kernel_release) },
	KEY(page_size, REC_UINT),
	KEY(privileged, REC_BOOL),
	KEY(layout, REC_LAYOUT),
	KEY(pfn_view, REC_PFN_VIEW),
	KEY(pagemap_error, REC_ERRNO),
	KEY(zero_pfn, REC_HEX),
	KEY(scan, REC_BOOL),
	KEY(scan_categories, REC_HEX),
	KEY(uffd_wp_async, REC_TRI),
	KEY(uffd_features, REC_HEX),
	KEY(soft_dirty, REC_TRI),
	KEY(guard_regions, REC_TRI),
	KEY(page_mapcount, REC_MAPCOUNT),
	KEY(zero_page, REC_TRI),
	KEY(huge_zero_page, REC_TRI),
};

static const char *const tri_name[] = { "no", "yes", "unknown" };

/* One "key=value\n" line of @f's field, or "" (an errno of 0 is not written). */
static void rec_print(const struct rec_key *k, const struct pm_features *f, char *buf, size_t size)
{
	const void *p = (const char *)f + k->off;
	unsigned long long u;
	const char *v;
	unsigned t;
	int e;

	buf[0] = '\0';
	switch (k->kind) {
	case REC_TEXT:
		snprintf(buf, size, "%s=%s\n", k->key, (const char *)p);
		break;
	case REC_UINT:
		snprintf(buf, size, "%s=%u\n", k->key, *(const unsigned *)p);
		break;
	case REC_HEX:
		u = *(const uint64_t *)p;
		snprintf(buf, size, "%s=0x%llx\n", k->key, (unsigned long long)u);
		break;
	case REC_BOOL:
		snprintf(buf, size, "%s=%s\n", k->key, *(const bool *)p ? "yes" : "no");
		break;
	case REC_MAPCOUNT:
		/* A reader older than not-needed takes it for unknown: what it is, without the why. */
		if (*(const enum pm_tristate *)p == PM_UNKNOWN && f->page_mapcount_not_needed) {
			snprintf(buf, size, "%s=not-needed\n", k->key);
			break;
		}
		/* fall through */
	case REC_TRI:
		t = (unsigned)*(const enum pm_tristate *)p;
		snprintf(buf, size, "%s=%s\n", k->key, tri_name[t < PM_UNKNOWN ? t : PM_UNKNOWN]);
		break;
	case REC_LAYOUT:
		snprintf(buf, size, "%s=%s\n", k->key, pm_layout_name(*(const enum pm_layout *)p));
		break;
	case REC_PFN_VIEW:
		v = pm_pfn_view_name(*(const enum pm_pfn_view *)p);
		snprintf(buf, size, "%s=%s\n", k->key, v);
		break;
	case REC_ERRNO:
		e = *(const int *)p;
		if (e && strerrorname_np(e))
			snprintf(buf, size, "%s=%s\n", k->key, strerrorname_np(e));
		else if (e)	/* an errno glibc has no name for: its number (read back so) */
			snprintf(buf, size, "%s=%d\n", k->key, e);
		break;
	}
}

int pm_features_export(const struct pm_features *f, char *buf, size_t size)
{
	static const char head[] = "# pagemap-features: recorded by 'pagemap features --export'\n";
	char line[128];
	size_t i, n = 0;

	for (i = 0; i <= PMI_ARRAY_SIZE(rec_keys); i++) {
		size_t len;

		if (i)
			rec_print(&rec_keys[i - 1], f, line, sizeof(line));
		len = strlen(i ? line : head);
		if (n + len < size)
			memcpy(buf + n, i ? line : head, len + 1);
		n += len;
	}
	if (size && n >= size)
		buf[size - 1] = '\0';
	return n >= size || n > INT32_MAX ? -ENOSPC : (int)n;
}

static enum pm_tristate parse_tristate(const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "1"))
		return PM_YES;
	if (!strcmp(v, "no") || !strcmp(v, "0"))
		return PM_NO;
	return PM_UNKNOWN;
}

/*
 * A recorded errno: a number, or any name 'pagemap features --export'
 * writes (glibc's strerrorname_np), not only the few pmi_errno_from_name knows.
 */
static int recorded_errno(const char *v)
{
	int e = pmi_errno_from_name(v), i;

	for (i = 1; !e && i < 4096; i++) {
		const char *n = strerrorname_np(i);

		if (n && !strcmp(n, v))
			e = i;
	}
	return e;
}

/* The value of @names (indexed by enum value, @n of them) that @v spells; 0 (unknown) for none. */
static int parse_name(const char *v, const char *(*name)(int), int n)
{
	int i;

	for (i = 1; i < n; i++)
		if (!strcmp(v, name(i)))
			return i;
	return 0;
}

static const char *layout_name(int i)
{
	return pm_layout_name((enum pm_layout)i);
}

static const char *pfn_view_name(int i)
{
	return pm_pfn_view_name((enum pm_pfn_view)i);
}

/* Set @f's field from the text @v of key @k. */
static void rec_parse(const struct rec_key *k, struct pm_features *f, const char *v)
{
	void *p = (char *)f + k->off;
	unsigned long long u;

	switch (k->kind) {
	case REC_TEXT:
		break;
	case REC_UINT:
		u = strtoull(v, NULL, 0);	/* 2^32 + 4096 is not 4096: out of range, 0 */
		*(unsigned *)p = u > UINT32_MAX ? 0 : (unsigned)u;
		break;
	case REC_HEX:
		*(uint64_t *)p = strtoull(v, NULL, 0);
		break;
	case REC_BOOL:
		*(bool *)p = parse_tristate(v) == PM_YES;
		break;
	case REC_TRI:
		*(enum pm_tristate *)p = parse_tristate(v);
		break;
	case REC_MAPCOUNT:	/* the last line of the key decides, the why with it */
		*(enum pm_tristate *)p = parse_tristate(v);
		f->page_mapcount_not_needed = !strcmp(v, "not-needed");
		break;
	case REC_LAYOUT:
		*(enum pm_layout *)p = parse_name(v, layout_name, PM_LAYOUT_CURRENT + 1);
		break;
	case REC_PFN_VIEW:
		*(enum pm_pfn_view *)p = parse_name(v, pfn_view_name, PM_PFN_REFUSED + 1);
		break;
	case REC_ERRNO:
		*(int *)p = recorded_errno(v);
		break;
	}
}

void pmi_features_record_read(struct pm_features *f, char *text)
{
	char *line, *save = NULL;
	size_t i;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (line[0] == '#' || !eq)
			continue;
		*eq = '\0';
		for (i = 0; i < PMI_ARRAY_SIZE(rec_keys); i++)
			if (!strcmp(rec_keys[i].key, line))
				rec_parse(&rec_keys[i], f, eq + 1);
	}
}
