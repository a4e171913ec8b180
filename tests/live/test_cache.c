/* test_cache.c - live page cache view: files of known residency, one held open only, one deleted while mapped, no perturbation, fincore agreement, no fake mincore answer. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define NPAGES 64
#define DROPPED 20	/* pages [8, 28) evicted with POSIX_FADV_DONTNEED */

static struct pm_ctx *ctx;
static uint64_t ps;
static char dir[256];
static char why_no_file[512];	/* why make_file() failed, when errno alone does not say it */

struct raw_cs {
	uint64_t cache, dirty, writeback, evicted, recent;
};

/* The test's own cachestat, to check that measuring changes nothing. */
static int raw_cachestat(const char *path, struct raw_cs *cs)
{
	uint64_t range[2] = { 0, 0 };
	int fd = open(path, O_RDONLY), r;

	if (fd < 0)
		return -errno;
	r = (int)syscall(451, fd, range, cs, 0);
	r = r < 0 ? -errno : 0;
	close(fd);
	return r;
}

/*
 * Resident pages of a file the test made (so mincore's answer is true for
 * it): the probe for kernels without cachestat (before 6.5).
 */
static int64_t mincore_pages(const char *path)
{
	unsigned char vec[NPAGES];
	int fd = open(path, O_RDONLY);
	void *p = fd >= 0 ? mmap(NULL, NPAGES * ps, PROT_NONE, MAP_SHARED, fd, 0) : MAP_FAILED;
	int64_t n = -1;
	size_t i;

	if (p != MAP_FAILED && mincore(p, NPAGES * ps, vec) == 0)
		for (n = 0, i = 0; i < NPAGES; i++)
			n += vec[i] & 1;
	if (p != MAP_FAILED)
		munmap(p, NPAGES * ps);
	if (fd >= 0)
		close(fd);
	return n;
}

/* Does this kernel have cachestat(2)? Asked of a file that exists. */
static bool have_cachestat(const char *path)
{
	struct raw_cs cs;

	return raw_cachestat(path, &cs) != -ENOSYS;
}

/*
 * Did fadvise(DONTNEED) evict the pages it was asked to? Not on tmpfs (the
 * guests' /tmp, a tmpfs TMPDIR): its pages are shared memory, never
 * written back. Probed by effect, by cachestat or else by mincore.
 */
static int evicted(const char *path)
{
	struct raw_cs cs;
	int64_t cached = raw_cachestat(path, &cs) == 0 ? (int64_t)cs.cache : mincore_pages(path);

	if (cached < 0 || cached == NPAGES - DROPPED)
		return 0;
	snprintf(why_no_file, sizeof(why_no_file),
		 "fadvise(DONTNEED) evicted %lld of %d pages of a file in %s (tmpfs keeps them: shared memory); "
		 "set TMPDIR to a disk file system", (long long)(NPAGES - cached), DROPPED, dir);
	unlink(path);
	return -1;
}

/*
 * A file of NPAGES pages, written back and then partly evicted: its
 * residency is known to the page. Written one page per write: a file
 * system with large folios (ext4 since 6.16) sizes them by the write, and
 * fadvise cannot drop part of a folio.
 */
static int make_file(const char *name, char *path, size_t size)
{
	char *buf = malloc(NPAGES * ps);
	size_t i;
	int fd;

	snprintf(path, size, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf) {
		snprintf(why_no_file, sizeof(why_no_file), "cannot make a test file in %s: %s", dir, strerror(errno));
		free(buf);
		return -1;
	}
	memset(buf, 0x5a, NPAGES * ps);
	for (i = 0; i < NPAGES; i++)
		if (pwrite(fd, buf, ps, (off_t)(i * ps)) != (ssize_t)ps)
			break;
	if (i < NPAGES || fsync(fd) < 0 ||
	    posix_fadvise(fd, (off_t)(8 * ps), (off_t)(DROPPED * ps), POSIX_FADV_DONTNEED) != 0) {
		snprintf(why_no_file, sizeof(why_no_file), "cannot make a test file in %s: %s", dir, strerror(errno));
		free(buf);
		close(fd);
		return -1;
	}
	free(buf);
	close(fd);
	return evicted(path);
}

static int known_residency(void)
{
	struct pm_cache_stat st;
	struct raw_cs before, after;
	char path[512];
	int r;

	if (make_file("known", path, sizeof(path)) < 0)
		return t_skip("%s", why_no_file);
	if (raw_cachestat(path, &before) == -ENOSYS)
		return t_skip("no cachestat(2) (Linux 6.5+)");
	r = pm_cache_stat_path(ctx, path, &st);
	CHECK_EQ_U64(r, 0);
	CHECK_EQ_U64(st.method, PM_CACHE_CACHESTAT);
	CHECK_EQ_U64(st.known, PM_CACHE_ALL);
	CHECK_EQ_U64(st.size, NPAGES * ps);
	CHECK_EQ_U64(st.cached, (NPAGES - DROPPED) * ps);
	CHECK_EQ_U64(st.dirty, 0);
	CHECK_EQ_U64(st.writeback, 0);
	/* Measuring perturbs nothing: the same counts after as before. */
	CHECK_EQ_U64(raw_cachestat(path, &after), 0);
	CHECK(!memcmp(&before, &after, sizeof(before)));
	CHECK_EQ_U64(after.cache, NPAGES - DROPPED);
	unlink(path);
	return T_PASS;
}

/* The mincore path (forced) agrees with cachestat where it may be trusted (the caller owns the file). */
static int mincore_agrees(void)
{
	struct pm_cache_stat a, b;
	char path[512];

	if (make_file("mincore", path, sizeof(path)) < 0)
		return t_skip("%s", why_no_file);
	CHECK_EQ_U64(pm_cache_stat_path(ctx, path, &a), 0);
	setenv("PAGEMAP_CACHE", "mincore", 1);
	CHECK_EQ_U64(pm_cache_stat_path(ctx, path, &b), 0);
	unsetenv("PAGEMAP_CACHE");
	CHECK_EQ_U64(b.method, PM_CACHE_MINCORE);
	CHECK_EQ_U64(b.known, PM_CACHE_CACHED);
	CHECK_EQ_U64(b.cached, a.cached);
	CHECK_EQ_U64(b.cached, (NPAGES - DROPPED) * ps);
	unlink(path);
	return T_PASS;
}

/* Debian's fincore (util-linux 2.38, mincore) as root gives the same resident bytes. */
static int fincore_agrees(void)
{
	struct pm_cache_stat st;
	char path[512], cmd[700], line[128] = "";
	unsigned long long res = 0;
	FILE *p;

	if (geteuid() != 0)
		return t_skip("fincore's mincore answer is only true for files the reader may write; run as root");
	if (system("command -v fincore >/dev/null 2>&1") != 0)
		return t_skip("no fincore (util-linux) here");
	if (make_file("fincore", path, sizeof(path)) < 0)
		return t_skip("%s", why_no_file);
	snprintf(cmd, sizeof(cmd), "fincore -b -n -o RES '%s'", path);
	p = popen(cmd, "r");
	if (!p || !fgets(line, sizeof(line), p) || sscanf(line, "%llu", &res) != 1)
		printf("  fincore printed \"%s\"\n", line);
	if (p)
		pclose(p);
	CHECK_EQ_U64(pm_cache_stat_path(ctx, path, &st), 0);
	CHECK_EQ_U64(res, st.cached);
	unlink(path);
	return T_PASS;
}

/*
 * A reader that neither owns nor may write the file: cachestat refuses
 * (Linux 6.14+) and the mincore path refuses too, rather than the "all
 * resident" answer the kernel gives such readers.
 */
static int no_fake_answer(void)
{
	char path[512];
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return t_skip("needs root to make a file another user cannot write");
	if (make_file("other", path, sizeof(path)) < 0 || chmod(dir, 0755) < 0)
		return t_skip("%s", why_no_file);
	pid = fork();
	if (pid == 0) {
		struct pm_cache_stat st;
		int a, b;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(3);
		a = pm_cache_stat_path(ctx, path, &st);
		setenv("PAGEMAP_CACHE", "mincore", 1);
		b = pm_cache_stat_path(ctx, path, &st);
		/*
		 * cachestat: refused (6.14+) or a true answer (6.5-6.13); without
		 * cachestat (before 6.5) the default method says so (ENOSYS),
		 * since the mincore fallback may not answer. Forced mincore: refused.
		 */
		_exit(b != -EPERM ? 1 : a == -EPERM ? 0 : a == 0 ? 4 : a == -ENOSYS ? 5 : 2);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
		printf("  cachestat answered an unprivileged reader (a kernel before 6.14)\n");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 5)
		printf("  no cachestat (a kernel before 6.5): the unprivileged reader was told so\n");
	CHECK(WIFEXITED(status) && (WEXITSTATUS(status) == 0 ||
				    (WEXITSTATUS(status) == 4 && have_cachestat(path)) ||
				    (WEXITSTATUS(status) == 5 && !have_cachestat(path))));
	unlink(path);
	return T_PASS;
}

/* A child that holds @held open through a descriptor only and maps @mapped (then deletes it). */
static pid_t start_child(const char *held, const char *mapped, size_t touch, int *release)
{
	int up[2], down[2];
	char c;
	pid_t pid;

	if (pipe(up) < 0 || pipe(down) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(held, O_RDONLY), mfd = open(mapped, O_RDONLY);
		volatile char *m = mfd >= 0 ? mmap(NULL, NPAGES * ps, PROT_READ, MAP_SHARED, mfd, 0) : MAP_FAILED;
		size_t i;
		close(up[0]);
		close(down[1]);
		if (fd < 0 || m == MAP_FAILED)
			_exit(1);
		close(mfd);
		for (i = 0; i < touch; i++)
			(void)m[i * ps];
		unlink(mapped);
		if (write(up[1], "r", 1) != 1)
			_exit(1);
		while (read(down[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (pid < 0 || read(up[0], &c, 1) != 1) {
		close(up[0]);
		close(down[1]);
		return -1;
	}
	close(up[0]);
	*release = down[1];
	return pid;
}

static const struct pm_cache_use *use_for(const struct pm_cache *c, pid_t pid, uint64_t ino)
{
	size_t i;

	for (i = 0; i < pm_cache_nuses(c); i++) {
		const struct pm_cache_use *u = pm_cache_use_at(c, i);
		if (u->pid == pid && pm_cache_file_at(c, u->file)->stat.ino == ino)
			return u;
	}
	return NULL;
}

static int held_and_deleted(void)
{
	char held[512], mapped[512];
	struct stat hs, ms;
	struct raw_cs before, after;
	const struct pm_cache_use *u;
	const struct pm_cache_file *f;
	struct pm_cache *c;
	struct pm_kpage *kp;
	int release = -1, status;
	bool cs;
	pid_t pid;

	if (make_file("held", held, sizeof(held)) < 0 || make_file("mapped", mapped, sizeof(mapped)) < 0 ||
	    stat(held, &hs) < 0 || stat(mapped, &ms) < 0)
		return t_skip("%s", why_no_file);
	pid = start_child(held, mapped, 4, &release);
	if (pid < 0)
		return t_skip("cannot start the child: %s", strerror(errno));
	/* Without cachestat (before 6.5) the library measured by mincore; nothing to compare it with. */
	cs = have_cachestat(held);
	if (cs)
		CHECK_EQ_U64(raw_cachestat(held, &before), 0);
	c = pm_cache_new(ctx);
	CHECK(c != NULL);
	/* As root, who pays too: every mapped byte is charged somewhere (or to no cgroup). */
	kp = geteuid() == 0 ? pm_kpage_open(ctx) : NULL;
	if (kp && pm_cache_set_kpage(c, kp) < 0) {
		pm_kpage_close(kp);
		kp = NULL;
	}
	CHECK_EQ_U64(pm_cache_add_process(c, pid), 0);
	u = use_for(c, pid, (uint64_t)hs.st_ino);
	CHECK(u != NULL);
	if (u) {
		f = pm_cache_file_at(c, u->file);
		CHECK_EQ_U64(u->via, PM_CACHE_VIA_FD);
		CHECK_EQ_U64(u->mapped, 0);
		CHECK_EQ_U64(f->stat.cached, (NPAGES - DROPPED) * ps);
		CHECK(!f->deleted);
		CHECK_EQ_U64(f->nprocs, 1);
	}
	u = use_for(c, pid, (uint64_t)ms.st_ino);
	CHECK(u != NULL);
	if (u) {
		f = pm_cache_file_at(c, u->file);
		CHECK_EQ_U64(u->via, PM_CACHE_VIA_MAP);
		CHECK(f->deleted);
		CHECK_EQ_U64(f->stat.error, 0);
		CHECK_EQ_U64(f->stat.cached, (NPAGES - DROPPED) * ps);
		/* The four pages it read are mapped (fault-around may map more of what is cached). */
		CHECK(u->mapped >= 4 * ps && u->mapped <= f->stat.cached);
		CHECK(!u->mapped_only_known || u->mapped_only == u->mapped);
		CHECK_EQ_U64(u->charged_known, kp != NULL);
		if (u->charged_known)
			CHECK_EQ_U64(u->charged_own + u->charged_other, u->mapped);
	}
	if (cs) {
		CHECK_EQ_U64(raw_cachestat(held, &after), 0);
		CHECK(!memcmp(&before, &after, sizeof(before)));
	}
	pm_cache_free(c);
	pm_kpage_close(kp);
	close(release);
	waitpid(pid, &status, 0);
	unlink(held);
	return T_PASS;
}

/* A file reached twice (a hard link) is one file; a directory or FIFO is refused before any open. */
static int dedup_and_refusals(void)
{
	char a[512], b[512], fifo[512];
	struct pm_cache *c = pm_cache_new(ctx);

	if (make_file("link-a", a, sizeof(a)) < 0)
		return t_skip("%s", why_no_file);
	snprintf(b, sizeof(b), "%s/link-b", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_EQ_U64(link(a, b), 0);
	CHECK_EQ_U64(mkfifo(fifo, 0600), 0);
	CHECK_EQ_U64(pm_cache_add_path(c, a), 0);
	CHECK_EQ_U64(pm_cache_add_path(c, b), 0);
	CHECK_EQ_U64(pm_cache_nfiles(c), 1);
	CHECK_EQ_U64(pm_cache_add_path(c, fifo), -EINVAL);
	CHECK_EQ_U64(pm_cache_add_path(c, dir), -EINVAL);
	CHECK_EQ_U64(pm_cache_nfiles(c), 1);
	pm_cache_free(c);
	unlink(a);
	unlink(b);
	unlink(fifo);
	return T_PASS;
}

/* A name relative to a directory descriptor: measured as its full path is, recorded under the path given. */
static int add_at_relative(void)
{
	char a[512];
	struct pm_cache *c = pm_cache_new(ctx);
	struct pm_cache_stat want;
	const struct pm_cache_file *f;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	if (make_file("rel", a, sizeof(a)) < 0 || dfd < 0 || !c)
		return t_skip("%s", why_no_file);
	CHECK_EQ_U64(pm_cache_stat_path(ctx, a, &want), 0);
	CHECK_EQ_U64(pm_cache_add_at(c, dfd, "rel", "shown-as"), 0);
	CHECK_EQ_U64(pm_cache_add_at(c, AT_FDCWD, a, a), 0);	/* the same inode: not added again */
	CHECK_EQ_U64(pm_cache_add_at(c, dfd, "no-such-file", "x"), -ENOENT);
	CHECK_EQ_U64(pm_cache_add_at(c, dfd, ".", "x"), -EINVAL);
	CHECK_EQ_U64(pm_cache_nfiles(c), 1);
	f = pm_cache_file_at(c, 0);
	CHECK(!strcmp(f->path, "shown-as"));
	CHECK_EQ_U64(f->stat.error, 0);
	CHECK_EQ_U64(f->stat.ino, want.ino);
	CHECK_EQ_U64(f->stat.cached, want.cached);
	CHECK_EQ_U64(f->via, PM_CACHE_VIA_ARG);
	pm_cache_free(c);
	close(dfd);
	unlink(a);
	return T_PASS;
}

static int meminfo_cached(void)
{
	uint64_t cached = 0;

	CHECK_EQ_U64(pm_cache_meminfo(ctx, &cached), 0);
	CHECK(cached > 0);
	return T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "known_residency", known_residency },
		{ "mincore_agrees", mincore_agrees },
		{ "fincore_agrees", fincore_agrees },
		{ "no_fake_answer", no_fake_answer },
		{ "held_and_deleted", held_and_deleted },
		{ "dedup_and_refusals", dedup_and_refusals },
		{ "add_at_relative", add_at_relative },
		{ "meminfo_cached", meminfo_cached },
	};
	const char *tmp = getenv("TMPDIR");
	int r;

	ps = (uint64_t)sysconf(_SC_PAGESIZE);
	snprintf(dir, sizeof(dir), "%s/pagemap-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ctx = pm_ctx_new(NULL);
	if (!ctx || !mkdtemp(dir)) {
		printf("FAIL cache_setup: %s\n", strerror(errno));
		return 1;
	}
	r = t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	rmdir(dir);
	pm_ctx_free(ctx);
	return r;
}
