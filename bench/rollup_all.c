/* rollup_all.c - benchmark baseline: read /proc/PID/smaps_rollup of every process, sum Rss, Pss and Swap. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The kB value of line "Name:" in @buf, or -1 if absent. */
static long long field(const char *buf, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = buf; (p = strstr(p, name)); p += n)
		if ((p == buf || p[-1] == '\n') && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

/* Read smaps_rollup of @pid into @buf; its length, 0 for no mm (kernel thread, zombie), <0 when gone or denied. */
static ssize_t read_rollup(const char *pid, char *buf, size_t size)
{
	char path[300];	/* d_name is at most 255 bytes */
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (len < size - 1 && ((n = read(fd, buf + len, size - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	n = n < 0 ? -errno : (ssize_t)len;
	close(fd);
	buf[len] = '\0';
	return n;
}

/*
 * Usage: rollup_all [-v]
 * One pass over /proc: every numeric entry's smaps_rollup, read whole and parsed for
 * Rss, Pss and Swap (kB). With -v also one "pid PID pss_kb N rss_kb N" line per process.
 * Ends with the totals, the process count and the seconds the pass took.
 */
int main(int argc, char **argv)
{
	long long rss = 0, pss = 0, swap = 0, v;
	unsigned long procs = 0, skipped = 0;
	int verbose = argc == 2 && !strcmp(argv[1], "-v");
	struct dirent *d;
	char buf[8192];
	double t0;
	DIR *dir;

	if (argc > 2 || (argc == 2 && !verbose)) {
		fprintf(stderr, "Usage: rollup_all [-v]\n");
		return 2;
	}
	t0 = now();
	if (!(dir = opendir("/proc"))) {
		fprintf(stderr, "rollup_all: cannot open /proc: %s\n", strerror(errno));
		return 1;
	}
	while ((d = readdir(dir))) {
		ssize_t n;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		if ((n = read_rollup(d->d_name, buf, sizeof(buf))) <= 0 || field(buf, "Pss") < 0) {
			skipped++;	/* kernel thread, zombie, exited or denied */
			continue;
		}
		procs++;
		rss += field(buf, "Rss");
		pss += (v = field(buf, "Pss"));
		swap += field(buf, "Swap") > 0 ? field(buf, "Swap") : 0;
		if (verbose)
			printf("pid %s pss_kb %lld rss_kb %lld\n", d->d_name, v, field(buf, "Rss"));
	}
	closedir(dir);
	printf("procs=%lu skipped=%lu rss_kb=%lld pss_kb=%lld swap_kb=%lld seconds=%.6f\n", procs, skipped, rss, pss,
	       swap, now() - t0);
	return 0;
}
