/* smaps.h - parse /proc/PID/smaps into per-mapping byte counts, the kernel's own numbers to compare walks with. */
#ifndef PM_LIVE_SMAPS_H
#define PM_LIVE_SMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One mapping of /proc/PID/smaps; sizes in bytes (smaps prints kB). */
struct smaps_entry {
	uint64_t start, end;
	char perms[5];
	char name[128];		/* path or [special] name, "" for plain anonymous */
	uint64_t rss, swap, anon_huge, shmem_pmd, file_pmd;
	uint64_t private_clean, private_dirty, shared_clean, shared_dirty;
	uint64_t private_hugetlb, shared_hugetlb, anonymous, ksm;	/* KSM: Linux 6.6+ */
	char vmflags[128];	/* " rd wr mr ..." as in VmFlags:, with a leading space */
};

struct smaps {
	struct smaps_entry *v;
	size_t n;
};

/* smaps_read - read /proc/@pid/smaps. Returns 0 or -errno; free with smaps_free(). */
int smaps_read(pid_t pid, struct smaps *out);
void smaps_free(struct smaps *s);

/* smaps_find - the entry that starts at @start, or NULL. */
const struct smaps_entry *smaps_find(const struct smaps *s, uint64_t start);

/* proc_field_kb - the number in the "Name:   N kB" line of @path (e.g. /proc/PID/status); -1 if absent. */
long long proc_field_kb(const char *path, const char *name);

#endif
