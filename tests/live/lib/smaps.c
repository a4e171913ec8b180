/* smaps.c - parse /proc/PID/smaps into per-mapping byte counts for the live tests. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "smaps.h"

static void set_field(struct smaps_entry *e, const char *key, uint64_t bytes)
{
	static const struct { const char *name; size_t off; } fields[] = {
		{ "Rss", offsetof(struct smaps_entry, rss) },
		{ "Swap", offsetof(struct smaps_entry, swap) },
		{ "AnonHugePages", offsetof(struct smaps_entry, anon_huge) },
		{ "ShmemPmdMapped", offsetof(struct smaps_entry, shmem_pmd) },
		{ "FilePmdMapped", offsetof(struct smaps_entry, file_pmd) },
		{ "Private_Clean", offsetof(struct smaps_entry, private_clean) },
		{ "Private_Dirty", offsetof(struct smaps_entry, private_dirty) },
		{ "Shared_Clean", offsetof(struct smaps_entry, shared_clean) },
		{ "Shared_Dirty", offsetof(struct smaps_entry, shared_dirty) },
		{ "Private_Hugetlb", offsetof(struct smaps_entry, private_hugetlb) },
		{ "Shared_Hugetlb", offsetof(struct smaps_entry, shared_hugetlb) },
		{ "Anonymous", offsetof(struct smaps_entry, anonymous) },
		{ "KSM", offsetof(struct smaps_entry, ksm) },
	};
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(key, fields[i].name))
			*(uint64_t *)((char *)e + fields[i].off) = bytes;
}

/* A mapping header: "start-end perms offset dev inode   name". */
static int parse_header(const char *line, struct smaps_entry *e)
{
	unsigned long long s, en, off, ino;
	char perms[8] = "", dev[16];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %n", &s, &en, perms, &off, dev, &ino, &n) < 6 || !n)
		return -1;
	memset(e, 0, sizeof(*e));
	e->start = s;
	e->end = en;
	memcpy(e->perms, perms, 4);
	e->perms[4] = '\0';
	snprintf(e->name, sizeof(e->name), "%s", line + n);
	e->name[strcspn(e->name, "\n")] = '\0';
	return 0;
}

int smaps_read(pid_t pid, struct smaps *out)
{
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	FILE *f;
	int r = 0;

	out->v = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char key[64];
		unsigned long long kb;
		struct smaps_entry e;

		if (sscanf(line, "%63[A-Za-z_]: %llu kB", key, &kb) == 2) {
			if (out->n)
				set_field(&out->v[out->n - 1], key, (uint64_t)kb * 1024);
			continue;
		}
		if (!strncmp(line, "VmFlags:", 8)) {
			if (out->n) {
				struct smaps_entry *l = &out->v[out->n - 1];
				snprintf(l->vmflags, sizeof(l->vmflags), "%s", line + 8);
				l->vmflags[strcspn(l->vmflags, "\n")] = '\0';
			}
			continue;
		}
		if (parse_header(line, &e) < 0)
			continue;	/* other non-size lines */
		if (out->n == alloc) {
			struct smaps_entry *nv;
			alloc = alloc ? alloc * 2 : 64;
			nv = realloc(out->v, alloc * sizeof(*nv));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			out->v = nv;
		}
		out->v[out->n++] = e;
	}
	free(line);
	fclose(f);
	if (r < 0)
		smaps_free(out);
	return r;
}

void smaps_free(struct smaps *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const struct smaps_entry *smaps_find(const struct smaps *s, uint64_t start)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].start == start)
			return &s->v[i];
	return NULL;
}

long long proc_field_kb(const char *path, const char *name)
{
	char *line = NULL;
	size_t cap = 0, n = strlen(name);
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtoll(line + n + 1, NULL, 10);
			break;
		}
	}
	free(line);
	fclose(f);
	return v;
}
