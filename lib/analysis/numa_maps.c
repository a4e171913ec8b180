/* numa_maps.c - the numa_maps line parser and where a process's threads run (locality). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"
#include "numa.h"

#define MAX_PAGES	(1ULL << 52)	/* more pages than a 64-bit address space holds: refused */

/* Policies whose names hold a space (mpol_to_str); every other is one token. */
static size_t policy_len(const char *s)
{
	static const char *const spaced[] = { "prefer (many)", "weighted interleave" };
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(spaced); i++) {
		size_t len = strlen(spaced[i]);

		if (!strncmp(s, spaced[i], len))
			return len + strcspn(s + len, " \n");
	}
	return strcspn(s, " \n");
}

static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\n') || v > MAX_PAGES)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One key=value (or bare) token after the policy. */
static int parse_token(const char *tok, const struct pm_numa *n, struct pmi_numa_maps_line *out, uint64_t *pages)
{
	uint64_t v;

	if (!strncmp(tok, "huge", 4) && (tok[4] == ' ' || tok[4] == '\n' || !tok[4])) {
		out->huge = true;
		return 0;
	}
	if (!strncmp(tok, "anon=", 5))
		return parse_count(tok + 5, &out->anon);
	if (!strncmp(tok, "kernelpagesize_kB=", 18)) {
		if (parse_count(tok + 18, &v) < 0 || !v || v > (1ULL << 30))
			return -EINVAL;
		out->page_size = v * 1024;
		return 0;
	}
	if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
		char *end;
		long id = strtol(tok + 1, &end, 10);
		int i;

		if (*end != '=' || id > PMI_NUMA_MAX_ID || parse_count(end + 1, &v) < 0)
			return -EINVAL;
		i = pm_numa_index_of_id(n, (int)id);
		pages[i < 0 ? n->count : (size_t)i] += v;
		out->pages += v;
		if (out->pages > MAX_PAGES)
			return -EINVAL;
	}
	return 0;	/* file=, heap, stack, dirty=, mapped=, ...: not needed */
}

int pmi_numa_maps_parse(const char *line, const struct pm_numa *n, struct pmi_numa_maps_line *out, uint64_t *pages)
{
	const char *s = line;
	char *end;
	size_t len;

	memset(out, 0, sizeof(*out));
	memset(pages, 0, (n->count + 1) * sizeof(*pages));
	errno = 0;
	out->start = strtoull(s, &end, 16);
	if (end == s || *end != ' ' || errno)
		return -EINVAL;
	s = end + 1;
	len = policy_len(s);
	if (!len)
		return -EINVAL;
	snprintf(out->policy, sizeof(out->policy), "%.*s", (int)len, s);
	s += len;
	while (*s == ' ') {
		s++;
		if (*s && *s != '\n' && parse_token(s, n, out, pages) < 0)
			return -EINVAL;
		s += strcspn(s, " \n");
	}
	return *s && *s != '\n' ? -EINVAL : 0;
}

/* Field 39 of a task's stat: the CPU it last ran on; -1 unreadable. */
static long last_cpu(struct pm_ctx *ctx, pid_t pid, const char *tid)
{
	char path[4096], buf[1024];
	struct pm_proc_stat st;
	int n;

	if (pmi_path(ctx, path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid) < 0 ||
	    (n = pmi_read_small_file(ctx, path, buf, sizeof(buf))) <= 0 ||
	    pmi_stat_line_parse(buf, (size_t)n, &st, NULL, 0) < 0)
		return -1;
	return st.processor;
}

struct mark {
	const struct pm_numa *n;
	bool *set;
};

static void mark_cpu(long cpu, void *data)
{
	struct mark *m = data;
	int i = pm_numa_index_of_cpu(m->n, (unsigned)cpu);

	if (i >= 0)
		m->set[i] = true;
}

static int read_allowed(struct pm_numa *n, pid_t pid, bool *allowed)
{
	char path[4096], buf[8192], *p;
	struct mark m = { n, allowed };
	int r = pmi_pid_path(n->ctx, path, sizeof(path), pid, "status");

	if (r < 0 || (r = pmi_read_small_file(n->ctx, path, buf, sizeof(buf))) < 0)
		return r == -ENOENT ? -ESRCH : r;
	p = strstr(buf, "\nCpus_allowed_list:");
	if (p)
		pmi_numa_parse_list(p + strlen("\nCpus_allowed_list:") + strspn(p + 19, " \t"), mark_cpu, &m);
	return 0;
}

int pm_numa_locality(struct pm_numa *n, pid_t pid, bool *ran_on, bool *allowed)
{
	char path[4096];
	struct dirent *de;
	int threads = 0, r;
	DIR *d;

	memset(ran_on, 0, n->count * sizeof(*ran_on));
	memset(allowed, 0, n->count * sizeof(*allowed));
	if ((r = read_allowed(n, pid, allowed)) < 0)
		return r;
	if ((r = pmi_ctx_tree(n->ctx)) < 0 || (r = pmi_pid_path(n->ctx, path, sizeof(path), pid, "task")) < 0)
		return r;
	if (!(d = opendir(path)))
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		long cpu;
		int i;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		cpu = last_cpu(n->ctx, pid, de->d_name);
		i = cpu >= 0 ? pm_numa_index_of_cpu(n, (unsigned)cpu) : -1;
		if (i >= 0)
			ran_on[i] = true;
		threads++;
	}
	closedir(d);
	return threads;
}
