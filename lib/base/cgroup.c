/* cgroup.c - the memory cgroup of a process from ROOT/proc/PID/cgroup, and whether one exists under ROOT/sys. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base.h"

/*
 * Larger than any real file: a cgroup v1 host has about a dozen lines, each
 * path is at most PATH_MAX. A file that fills it has its unfinished last
 * line dropped rather than read as a shorter (wrong) path.
 */
#define CGROUP_FILE_MAX (64 * 1024)

/* Is "memory" one of the comma-separated controllers in [@s, @s + @n)? */
static bool has_memory(const char *s, size_t n)
{
	const char *end = s + n, *c;

	for (; s < end; s = c + 1) {
		c = memchr(s, ',', (size_t)(end - s));
		if (!c)
			c = end;
		if (c - s == 6 && !memcmp(s, "memory", 6))
			return true;
	}
	return false;
}

/* Copy the path [@p, @p + @n) into @buf; -ERANGE if it does not fit with its NUL, -EBADMSG if it is empty. */
static int copy_path(const char *p, size_t n, char *buf, size_t size)
{
	if (!n)
		return -EBADMSG;
	if (n >= size)
		return -ERANGE;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

/*
 * Each line is "ID:CONTROLLERS:PATH". The path may itself hold colons, so
 * only the first two split. A cgroup v1 line whose controllers include
 * "memory" names the memory cgroup; without one (a pure v2 host, or v1
 * without the memory controller) the v2 line "0::PATH" does. Lines with a
 * NUL byte or fewer than two colons are not the kernel's: skipped.
 */
int pm_memcg_parse(const char *text, size_t len, char *buf, size_t size)
{
	const char *end = text + len, *line, *nl, *c1, *c2, *v2 = NULL;
	size_t v2_len = 0;

	for (line = text; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		if (memchr(line, '\0', (size_t)(nl - line)) || !(c1 = memchr(line, ':', (size_t)(nl - line))) ||
		    !(c2 = memchr(c1 + 1, ':', (size_t)(nl - c1 - 1))))
			continue;
		if (has_memory(c1 + 1, (size_t)(c2 - c1 - 1)))
			return copy_path(c2 + 1, (size_t)(nl - c2 - 1), buf, size);
		if (!v2 && c1 == line + 1 && line[0] == '0' && c2 == c1 + 1) {
			v2 = c2 + 1;
			v2_len = (size_t)(nl - v2);
		}
	}
	return v2 ? copy_path(v2, v2_len, buf, size) : -ENODATA;
}

int pm_memcg_of(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	char path[4096], *text;
	int n;

	if (pid <= 0 || !buf || !size)
		return -EINVAL;
	n = pmi_pid_path(ctx, path, sizeof(path), pid, "cgroup");
	if (n < 0)
		return n;
	text = malloc(CGROUP_FILE_MAX);
	if (!text)
		return -ENOMEM;
	n = pmi_read_small_file(ctx, path, text, CGROUP_FILE_MAX);
	if (n == CGROUP_FILE_MAX - 1) {		/* full: the last line may be cut */
		char *nl = memrchr(text, '\n', (size_t)n);
		n = nl ? (int)(nl - text) : 0;
	}
	if (n >= 0)
		n = pm_memcg_parse(text, (size_t)n, buf, size);
	free(text);
	return n;
}

bool pm_memcg_within(const char *cg, const char *path)
{
	size_t n;

	if (!cg || !path || path[0] != '/')
		return false;
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	/* whole path components: /a is below /a and /a/b, not /ab */
	return !strncmp(cg, path, n) && (cg[n] == '\0' || cg[n] == '/' || !n);
}

/*
 * The memory cgroup's directory: the v2 unified hierarchy, or v1's memory
 * hierarchy as systemd mounts it. Nothing is opened, so a FIFO in a replayed
 * tree cannot block.
 */
bool pm_memcg_exists(struct pm_ctx *ctx, const char *path)
{
	static const char *const base[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/memory" };
	char dir[4096];
	struct stat sb;
	size_t i, n;

	if (!path || path[0] != '/' || pmi_ctx_tree(ctx) < 0)
		return false;
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	for (i = 0; i < PMI_ARRAY_SIZE(base); i++)
		if (pmi_path(ctx, dir, sizeof(dir), "%s%.*s", base[i], (int)n, path) == 0 && stat(dir, &sb) == 0 &&
		    S_ISDIR(sb.st_mode))
			return true;
	return false;
}
