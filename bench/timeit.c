/* timeit.c - run one command, print its wall time (CLOCK_MONOTONIC), max RSS and CPU time (wait4), for bench/run.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/*
 * Usage: timeit OUT CMD [ARG...]
 * The command's stdout goes to file OUT (/dev/null to drop it), its stderr is
 * kept. Prints "SECONDS MAXRSS_KIB CPU_SECONDS" (CPU = user + system, which a
 * busy machine disturbs less than wall time) and exits with the command's status.
 * The clock starts just before fork and stops when wait4 returns, so every
 * command pays the same fork, exec and exit.
 */
int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, dt;
	pid_t pid;
	int fd, status;

	if (argc < 3) {
		fprintf(stderr, "Usage: timeit OUT CMD [ARG...]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "timeit: cannot open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "timeit: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		dup2(fd, 1);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "timeit: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "timeit: wait4: %s\n", strerror(errno));
			return 2;
		}
	dt = now() - t0;
	printf("%.6f %ld %.6f\n", dt, ru.ru_maxrss, tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
