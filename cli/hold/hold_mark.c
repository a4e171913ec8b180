/* hold_mark.c - the mark --freeze puts on a cgroup it froze: who holds it, so that a freeze left behind is known. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "cli.h"
#include "hold_mark.h"

static const char *const names[] = { "trusted.pagemap.frozen_by", "user.pagemap.frozen_by" };

/*
 * May the mark names[@i] on @dirfd be believed? trusted.* takes CAP_SYS_ADMIN to write; user.* only
 * write permission on the directory, which a delegated user has. So root believes trusted.* alone (a
 * user.* mark may be the owner's forgery, naming a "gone" holder so that root thaws their freeze), and
 * anyone else a user.* mark only on a directory they own: then none but they (or root) wrote it.
 */
static bool believed(int dirfd, size_t i)
{
	struct stat sb;

	if (i == 0)
		return true;
	return geteuid() != 0 && fstat(dirfd, &sb) == 0 && sb.st_uid == geteuid();
}

/* The start time of @pid: with the PID, one process for good; 0 when it is gone. */
static unsigned long long start_time(pid_t pid)
{
	struct pm_proc_stat ps = cli_proc_stat(pid);

	return ps.state == 'Z' || ps.state == 'X' ? 0 : ps.starttime;
}

void mark_put(int dirfd, pid_t guardian)
{
	char v[64];
	int len = snprintf(v, sizeof(v), "%d %llu", (int)guardian, start_time(guardian));
	size_t i;

	for (i = 0; i < 2; i++)	/* none that the next run would not believe */
		if (believed(dirfd, i) && fsetxattr(dirfd, names[i], v, (size_t)len, 0) == 0)
			return;
}

void mark_drop(int dirfd)
{
	size_t i;

	for (i = 0; i < 2; i++)
		fremovexattr(dirfd, names[i]);
}

bool mark_left_behind(int dirfd, char *who, size_t size)
{
	unsigned long long t;
	char v[64];
	size_t i;
	int pid;

	for (i = 0; i < 2; i++) {
		ssize_t n = believed(dirfd, i) ? fgetxattr(dirfd, names[i], v, sizeof(v) - 1) : -1;

		if (n <= 0)
			continue;
		v[n] = '\0';
		if (sscanf(v, "%d %llu", &pid, &t) != 2 || pid <= 0)
			continue;
		if (start_time(pid) == t && t)
			return false;	/* its holder runs: a snapshot going on now */
		snprintf(who, size, "%d", pid);
		return true;
	}
	return false;
}
