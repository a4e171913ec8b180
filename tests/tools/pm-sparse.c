/* pm-sparse.c - pack live or sparse binary /proc files into a diffable text form for fixtures, and unpack them. */
/*
 * Format (pagemap-sparse v1), one item per line:
 *   # comment
 *   @OFFSET      move to byte OFFSET (hex), a multiple of 8
 *   WORD         one 64-bit word (hex)
 *   WORD*N       N copies of WORD
 *   WORD+N       N words WORD, WORD+1, ... (runs of contiguous frames)
 *   =SIZE        the file's length in bytes (hex); reads past it return 0
 * Unwritten stretches are holes: they read as zero, as the kernel's unmapped entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sparse-format.h"

static int die(const char *what, const char *name)
{
	fprintf(stderr, "pm-sparse: %s %s: %s\n", what, name, strerror(errno));
	return 1;
}

/* Read a live process's pagemap for each mapping in its maps. */
static int capture(const char *pid, const char *outname)
{
	char path[256], line[8192];
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t maxend = 0;
	FILE *maps, *out;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	if (!(maps = fopen(path, "re")))
		return die("cannot open", path);
	snprintf(path, sizeof(path), "/proc/%s/pagemap", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return die("cannot open", path);
	if (!(out = fopen(outname, "we")))
		return die("cannot create", outname);
	fprintf(out, "# pagemap-sparse v1: /proc/%s/pagemap, mapped ranges only\n", pid);
	while (fgets(line, sizeof(line), maps)) {
		uint64_t start, end, n;
		uint64_t *w;
		ssize_t got;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
			continue;
		n = (end - start) / (uint64_t)ps;
		w = calloc(n ? n : 1, 8);
		got = w ? pread(fd, w, n * 8, (off_t)(start / (uint64_t)ps * 8)) : -1;
		if (got > 0) {	/* [vsyscall] reads nothing: above task_size */
			sparse_emit(out, start / (uint64_t)ps * 8, w, (size_t)got / 8);
			if (start / (uint64_t)ps * 8 + (uint64_t)got > maxend)
				maxend = start / (uint64_t)ps * 8 + (uint64_t)got;
		}
		free(w);
	}
	fprintf(out, "=%" PRIx64 "\n", maxend);
	fclose(maps);
	close(fd);
	return fclose(out) ? die("cannot write", outname) : 0;
}

static int bad(const char *name, unsigned long lineno, const char *why)
{
	fprintf(stderr, "pm-sparse: %s:%lu: %s\n", name, lineno, why);
	return 1;
}

static int put(int fd, uint64_t *off, uint64_t w)
{
	if (pwrite(fd, &w, 8, (off_t)*off) != 8)
		return -1;
	*off += 8;
	return 0;
}

static int unpack(const char *inname, const char *outname)
{
	char line[256];
	unsigned long lineno = 0;
	uint64_t off = 0;
	FILE *in = fopen(inname, "re");
	int fd;

	if (!in)
		return die("cannot open", inname);
	fd = open(outname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return die("cannot create", outname);
	while (fgets(line, sizeof(line), in)) {
		char *e;
		uint64_t v, n, i;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] == '@' || line[0] == '=') {
			v = strtoull(line + 1, &e, 16);
			if (e == line + 1 || (v & 7))
				return bad(inname, lineno, "bad offset");
			if (line[0] == '@')
				off = v;
			else if (ftruncate(fd, (off_t)v) < 0)
				return die("cannot size", outname);
			continue;
		}
		v = strtoull(line, &e, 16);
		if (e == line)
			return bad(inname, lineno, "bad word");
		n = 1;
		if (*e == '*' || *e == '+') {
			char op = *e;
			n = strtoull(e + 1, &e, 10);
			if (!n || n > (1ULL << 40))
				return bad(inname, lineno, "bad count");
			for (i = 0; i < n; i++)
				if (put(fd, &off, op == '+' ? v + i : v) < 0)
					return die("cannot write", outname);
			continue;
		}
		if (put(fd, &off, v) < 0)
			return die("cannot write", outname);
	}
	fclose(in);
	return close(fd) ? die("cannot write", outname) : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "capture"))
		return capture(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "unpack"))
		return unpack(argv[2], argv[3]);
	fprintf(stderr, "usage: pm-sparse capture PID OUT.sparse | unpack IN.sparse OUT\n");
	return 2;
}
