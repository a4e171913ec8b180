/* live_memory.c - the machine's memory for a live view's header: /proc/meminfo in one read (pagemap/live.h). */
#include <errno.h>
#include <string.h>
#include "cache.h"

/* The field @name of @buf in bytes, or PM_LIVE_UNKNOWN without one. */
static uint64_t field(const char *buf, const char *name)
{
	uint64_t v;

	return pmi_meminfo_field(buf, name, &v) == 0 ? v : PM_LIVE_UNKNOWN;
}

static uint64_t sum2(uint64_t a, uint64_t b)
{
	return a == PM_LIVE_UNKNOWN || b == PM_LIVE_UNKNOWN ? PM_LIVE_UNKNOWN : a + b;
}

int pm_live_memory(struct pm_ctx *ctx, struct pm_live_memory *out)
{
	char path[4096], buf[16384];
	int r = pmi_path(ctx, path, sizeof(path), "/proc/meminfo");

	if (r == 0)
		r = pmi_read_small_file(ctx, path, buf, sizeof(buf));
	if (r < 0)
		return r;
	out->total = field(buf, "MemTotal");
	if (out->total == PM_LIVE_UNKNOWN)
		return pmi_tree_error(ctx, "%s: no valid \"MemTotal:\" line", path);
	out->free = field(buf, "MemFree");
	out->available = field(buf, "MemAvailable");
	out->anon = field(buf, "AnonPages");
	out->file = sum2(field(buf, "Active(file)"), field(buf, "Inactive(file)"));
	out->shmem = field(buf, "Shmem");
	out->anon_thp = field(buf, "AnonHugePages");
	out->hugetlb = field(buf, "Hugetlb");
	out->swap_total = field(buf, "SwapTotal");
	out->swap_free = field(buf, "SwapFree");
	return 0;
}
