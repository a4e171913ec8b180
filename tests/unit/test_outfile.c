/* test_outfile.c - pm_outfile, the one file writer: what it does with each thing it may find at the path. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "pages.h"

/*
 * A second copy of the writer whose random names are not random (a counter
 * that can be made to repeat), under its own function names so it links
 * beside the library's: for names taken before they could be had.
 */
static unsigned long long t_next_name;
struct pm_outfile *t_outfile_open(const char *path, unsigned flags);
int t_outfile_fd(const struct pm_outfile *o);
bool t_outfile_in_place(const struct pm_outfile *o);
int t_outfile_commit(struct pm_outfile *o);
void t_outfile_free(struct pm_outfile *o);
int t_outfile_write(const char *path, const void *buf, size_t len, unsigned flags);
#define getrandom t_getrandom
#define pm_outfile_open t_outfile_open
#define pm_outfile_fd t_outfile_fd
#define pm_outfile_in_place t_outfile_in_place
#define pm_outfile_commit t_outfile_commit
#define pm_outfile_free t_outfile_free
#define pm_outfile_write t_outfile_write
#define pmi_outfile_on_fd t_outfile_on_fd
#define openat t_openat
struct pm_outfile *t_outfile_on_fd(int fd);
int t_openat(int dfd, const char *name, int flags, ...);
#include "../lib/base/outfile.c"
#undef openat
#undef pmi_outfile_on_fd
#undef getrandom
#undef pm_outfile_open
#undef pm_outfile_fd
#undef pm_outfile_in_place
#undef pm_outfile_commit
#undef pm_outfile_free
#undef pm_outfile_write

ssize_t t_getrandom(void *buf, size_t len, unsigned int flags)
{
	memcpy(buf, &t_next_name, len < sizeof(t_next_name) ? len : sizeof(t_next_name));
	return (ssize_t)len;
}

static char dir[64];

/*
 * The race of a directory someone else owns, played on the next openat()
 * of @t_swap_name: the entry looked at is renamed aside, a symlink to
 * @t_swap_target put in its place for the open, then the entry renamed back,
 * so that the name looks the same before and after the open.
 */
static const char *t_swap_name, *t_swap_target;

int t_openat(int dfd, const char *name, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd, e;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	if (!t_swap_name || strcmp(name, t_swap_name))
		return openat(dfd, name, flags, mode);
	t_swap_name = NULL;
	if (renameat(dfd, name, dfd, "aside") < 0 || symlinkat(t_swap_target, dfd, name) < 0)
		return -1;
	fd = openat(dfd, name, flags, mode);
	e = errno;
	unlinkat(dfd, name, 0);
	renameat(dfd, "aside", dfd, name);
	errno = e;
	return fd;
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

/* The bytes of @path (at most @size - 1), NUL-terminated; -1 if it cannot be read. */
static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

/* Entries of the test directory (temporaries left behind show up here). */
static int entries(void)
{
	char cmd[256], out[32];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	if ((p = popen(cmd, "r")) && fgets(out, sizeof(out), p))
		n = atoi(out);
	if (p)
		pclose(p);
	return n;
}

static void clean(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/* %s/.[!.]*", dir, dir);
	if (system(cmd))
		perror(cmd);
}

/* A new file: the content, mode 0600 when private, else 0644 less the umask; nothing else left behind. */
static int new_file(void)
{
	char p[128], buf[64];
	struct stat st;
	mode_t old = umask(027);

	path_of(p, sizeof(p), "out");
	CHECK(pm_outfile_write(p, "hello", 5, 0) == 0);
	CHECK(slurp(p, buf, sizeof(buf)) == 5 && !strcmp(buf, "hello"));
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640);
	unlink(p);
	umask(0);
	CHECK(pm_outfile_write(p, "x", 1, 0) == 0);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0644);	/* never group or world writable */
	unlink(p);
	CHECK(pm_outfile_write(p, "x", 1, PM_OUTFILE_PRIVATE) == 0);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600);
	umask(old);
	CHECK(entries() == 1);
	clean();
	return T_PASS;
}

/* A regular file is replaced whole (a new inode), never written into: a hard link to it keeps its bytes. */
static int replaces_regular(void)
{
	char p[128], l[128], buf[64];
	struct stat a, b;

	path_of(p, sizeof(p), "out");
	path_of(l, sizeof(l), "other-name");
	put(p, "old content");
	CHECK(link(p, l) == 0);
	CHECK(stat(p, &a) == 0);
	CHECK(pm_outfile_write(p, "new", 3, 0) == 0);
	CHECK(stat(p, &b) == 0 && b.st_ino != a.st_ino);
	CHECK(slurp(p, buf, sizeof(buf)) == 3 && !strcmp(buf, "new"));
	CHECK(slurp(l, buf, sizeof(buf)) > 0 && !strcmp(buf, "old content"));
	CHECK(entries() == 2);
	clean();
	return T_PASS;
}

/* Not committed: the path stays as it was and the temporary is gone, named or O_TMPFILE. */
static int discard(void)
{
	char p[128], buf[64];

	path_of(p, sizeof(p), "out");
	put(p, "kept");
	for (int named = 0; named < 2; named++) {
		struct pm_outfile *o;

		if (named)
			setenv("PAGEMAP_NO_TMPFILE", "1", 1);
		CHECK((o = pm_outfile_open(p, 0)) != NULL);
		CHECK(o && write(pm_outfile_fd(o), "lost", 4) == 4);
		CHECK(o && entries() == 1 + named);
		pm_outfile_free(o);
		CHECK(slurp(p, buf, sizeof(buf)) == 4 && !strcmp(buf, "kept"));
		CHECK(entries() == 1);
	}
	unsetenv("PAGEMAP_NO_TMPFILE");
	clean();
	return T_PASS;
}

/*
 * Our own symlink is followed to a device or FIFO (/dev/stdout on a pipe),
 * never to a regular file (EEXIST, the file kept: reopening what >> opened
 * would truncate it); a dangling one creates nothing.
 */
static int own_symlink(void)
{
	char p[128], t[128], buf[64];
	struct stat st;

	path_of(p, sizeof(p), "link");
	path_of(t, sizeof(t), "target");
	put(t, "a longer old content");
	CHECK(symlink(t, p) == 0);
	CHECK(pm_outfile_write(p, "through", 7, 0) == -EEXIST);
	CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(slurp(t, buf, sizeof(buf)) == 20 && !strcmp(buf, "a longer old content"));
	unlink(t);
	CHECK(pm_outfile_write(p, "x", 1, 0) == -ENOENT);
	CHECK(lstat(t, &st) < 0 && errno == ENOENT);
	unlink(p);
	CHECK(symlink("/dev/null", p) == 0);
	CHECK(pm_outfile_write(p, "to null", 7, 0) == 0);
	CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	clean();
	return T_PASS;
}

/*
 * A FIFO at the name swapped for a symlink to someone's file during the open
 * and back (a directory the attacker owns): O_NOFOLLOW and the check of the
 * descriptor itself refuse it (EAGAIN); the file is neither truncated nor
 * written. Before the fix the open followed the link, the name looked the
 * same afterwards, and the file was truncated.
 */
static int swapped_during_open(void)
{
	char p[128], t[128], buf[64];
	struct stat st;

	path_of(p, sizeof(p), "fifo");
	path_of(t, sizeof(t), "victim");
	put(t, "precious");
	CHECK(mkfifo(p, 0600) == 0);
	t_swap_name = "fifo";
	t_swap_target = t;
	CHECK(t_outfile_write(p, "evil", 4, 0) == -EAGAIN);	/* the copy whose openat() is swapped */
	t_swap_name = NULL;
	CHECK(slurp(t, buf, sizeof(buf)) == 8 && !strcmp(buf, "precious"));
	CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
	clean();
	return T_PASS;
}

/* A descriptor (standard output after > or >>) is written where it is: what it held stays. */
static int on_fd(void)
{
	char p[128], buf[64];
	struct pm_outfile *o;
	int fd;

	path_of(p, sizeof(p), "out");
	put(p, "HEADER\n");
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK((o = t_outfile_on_fd(fd)) != NULL);
	CHECK(t_outfile_in_place(o));
	CHECK(write(t_outfile_fd(o), "body", 4) == 4);
	CHECK(t_outfile_commit(o) == 0);
	t_outfile_free(o);
	CHECK(fcntl(fd, F_GETFD) >= 0);	/* still the caller's */
	close(fd);
	CHECK(slurp(p, buf, sizeof(buf)) == 11 && !strcmp(buf, "HEADER\nbody"));
	CHECK(t_outfile_on_fd(-1) == NULL && errno == EBADF);
	clean();
	return T_PASS;
}

/* Someone else's symlink is never followed (ELOOP), whatever the directory; with ENTRY it is replaced. */
static int planted_symlink(void)
{
	char p[128], t[128], buf[64];
	struct stat st;

	if (geteuid() != 0)
		return t_skip("needs root to plant a symlink owned by uid 65534");
	path_of(p, sizeof(p), "link");
	path_of(t, sizeof(t), "victim");
	put(t, "precious");
	CHECK(symlink(t, p) == 0 && lchown(p, 65534, 65534) == 0);
	CHECK(pm_outfile_write(p, "evil", 4, 0) == -ELOOP);
	CHECK(pm_outfile_write(p, "evil", 4, PM_OUTFILE_PRIVATE) == -ELOOP);
	CHECK(slurp(t, buf, sizeof(buf)) == 8 && !strcmp(buf, "precious"));
	CHECK(pm_outfile_write(p, "mine", 4, PM_OUTFILE_ENTRY) == 0);	/* the entry replaced, never followed */
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0);
	CHECK(slurp(t, buf, sizeof(buf)) == 8 && !strcmp(buf, "precious"));
	clean();
	return T_PASS;
}

/* A FIFO of ours is written in place (a reader gets the bytes); someone else's is refused; ENTRY replaces it. */
static int fifo(void)
{
	char p[128], buf[64] = "";
	int pipefd[2];
	struct stat st;
	pid_t child;

	path_of(p, sizeof(p), "fifo");
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(pipe(pipefd) == 0);
	if ((child = fork()) == 0) {	/* the reader: what it read goes back through the pipe */
		int fd = open(p, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

		_exit(n > 0 && write(pipefd[1], buf, (size_t)n) == n ? 0 : 1);
	}
	close(pipefd[1]);
	alarm(30);	/* a regression that swaps the FIFO while the reader waits in open() must not hang the read */
	CHECK(pm_outfile_write(p, "piped", 5, 0) == 0);
	CHECK(read(pipefd[0], buf, sizeof(buf) - 1) == 5 && !strncmp(buf, "piped", 5));
	close(pipefd[0]);
	alarm(0);
	waitpid(child, NULL, 0);
	CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
	if (geteuid() == 0) {
		CHECK(chown(p, 65534, 65534) == 0);
		CHECK(pm_outfile_write(p, "secret", 6, 0) == -EPERM);	/* would hand the output to uid 65534 */
		CHECK(pm_outfile_write(p, "mine", 4, PM_OUTFILE_ENTRY) == 0);
		CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
	}
	clean();
	return T_PASS;
}

/* A directory is EISDIR (as are "dir/" and "."); a block device is never written (EPERM). */
static int directory_and_devices(void)
{
	char p[128];

	path_of(p, sizeof(p), "sub");
	CHECK(mkdir(p, 0700) == 0);
	CHECK(pm_outfile_write(p, "x", 1, 0) == -EISDIR);
	CHECK(pm_outfile_write(p, "x", 1, PM_OUTFILE_ENTRY) == -EISDIR);
	strcat(p, "/");
	CHECK(pm_outfile_write(p, "x", 1, 0) == -EISDIR);
	path_of(p, sizeof(p), ".");
	CHECK(pm_outfile_write(p, "x", 1, 0) == -EISDIR);
	CHECK(pm_outfile_write("/nonexistent-dir-of-pagemap/x", "x", 1, 0) == -ENOENT);
	CHECK(pm_outfile_write(p, "x", 1, 1u << 7) == -EINVAL);
	if (geteuid() == 0) {
		path_of(p, sizeof(p), "blk");
		CHECK(mknod(p, S_IFBLK | 0600, makedev(7, 0)) == 0);
		CHECK(pm_outfile_write(p, "x", 1, 0) == -EPERM);
	}
	clean();
	return T_PASS;
}

/* A character device is written in place, never replaced: a memory-device node of our own (1, 3 is null). */
static int char_device(void)
{
	char p[128];
	struct stat st, was;
	int fd;

	if (geteuid() != 0)
		return t_skip("needs root for mknod");
	path_of(p, sizeof(p), "null");
	CHECK(mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0 && lstat(p, &was) == 0);
	if ((fd = open(p, O_WRONLY)) < 0) {
		clean();
		return t_skip("device nodes cannot be opened here (a nodev mount)");
	}
	close(fd);
	CHECK(pm_outfile_write(p, "gone", 4, PM_OUTFILE_PRIVATE) == 0);
	CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
	CHECK(st.st_ino == was.st_ino && st.st_mode == was.st_mode);	/* the same node, its mode kept */
	CHECK(chown(p, 65534, 65534) == 0);	/* a terminal of another user: still written, never replaced */
	CHECK(pm_outfile_write(p, "gone", 4, 0) == 0);
	CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_ino == was.st_ino);
	clean();
	return T_PASS;
}

/*
 * Every temporary name taken (by someone planting them ahead): an error, never a fall-through that
 * publishes their file. Both ways: named temporaries, and the O_TMPFILE link to rename from.
 */
static int names_taken(void)
{
	char p[128], n[128], buf[64];
	struct stat st;

	path_of(p, sizeof(p), "out");
	put(p, "before");
	t_next_name = 0x1234;	/* every try draws the same name */
	snprintf(n, sizeof(n), "%s/.pagemap-%016llx", dir, t_next_name);
	put(n, "planted");
	for (int named = 0; named < 2; named++) {
		if (named)
			setenv("PAGEMAP_NO_TMPFILE", "1", 1);
		errno = 0;
		CHECK(t_outfile_write(p, "ours", 4, 0) == -EEXIST);
		CHECK(slurp(p, buf, sizeof(buf)) == 6 && !strcmp(buf, "before"));
		CHECK(slurp(n, buf, sizeof(buf)) == 7 && !strcmp(buf, "planted"));	/* theirs: not removed either */
	}
	unsetenv("PAGEMAP_NO_TMPFILE");
	unlink(p);	/* nothing there: O_TMPFILE links at the name itself, no temporary name needed */
	CHECK(t_outfile_write(p, "ours", 4, 0) == 0);
	CHECK(slurp(p, buf, sizeof(buf)) == 4 && !strcmp(buf, "ours"));
	CHECK(lstat(n, &st) == 0);
	clean();
	return T_PASS;
}

/* CREATE: a new file only; whatever is there (a file, our own symlink, a FIFO) is EEXIST and kept. */
static int create_only(void)
{
	char p[128], t[128], buf[64];
	struct stat st;

	path_of(p, sizeof(p), "key");
	CHECK(pm_outfile_write(p, "k1", 2, PM_OUTFILE_PRIVATE | PM_OUTFILE_CREATE) == 0);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(pm_outfile_write(p, "k2", 2, PM_OUTFILE_PRIVATE | PM_OUTFILE_CREATE) == -EEXIST);
	CHECK(slurp(p, buf, sizeof(buf)) == 2 && !strcmp(buf, "k1"));
	unlink(p);
	path_of(t, sizeof(t), "target");
	CHECK(symlink(t, p) == 0);
	CHECK(pm_outfile_write(p, "k3", 2, PM_OUTFILE_CREATE) == -EEXIST);
	CHECK(lstat(t, &st) < 0 && lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	clean();
	return T_PASS;
}

/* Something created at the path while we wrote, where nothing was: EEXIST, theirs kept (no replacing). */
static int appeared_meanwhile(void)
{
	char p[128], buf[64];

	path_of(p, sizeof(p), "out");
	for (int named = 0; named < 2; named++) {
		struct pm_outfile *o;

		if (named)
			setenv("PAGEMAP_NO_TMPFILE", "1", 1);
		CHECK((o = pm_outfile_open(p, 0)) != NULL);
		CHECK(o && write(pm_outfile_fd(o), "ours", 4) == 4);
		put(p, "theirs");
		CHECK(o && pm_outfile_commit(o) == -EEXIST);
		pm_outfile_free(o);
		CHECK(slurp(p, buf, sizeof(buf)) == 6 && !strcmp(buf, "theirs"));
		CHECK(entries() == 1);
		unlink(p);
	}
	unsetenv("PAGEMAP_NO_TMPFILE");
	clean();
	return T_PASS;
}

static int setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/pm-outfile.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int run_all(int argc, char **argv);

int main(int argc, char **argv)
{
	int r;

	if (setup() < 0) {
		perror("mkdtemp");
		return 1;
	}
	r = run_all(argc, argv);
	rmdir(dir);
	return r;
}

static int run_all(int argc, char **argv)
{
	static const struct t_case cases[] = {
		T(new_file), T(replaces_regular), T(discard), T(own_symlink), T(planted_symlink), T(fifo),
		T(directory_and_devices), T(char_device), T(names_taken), T(appeared_meanwhile),
		T(create_only), T(swapped_during_open), T(on_fd),
	};

	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
