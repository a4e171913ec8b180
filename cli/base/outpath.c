/* outpath.c - the commands' output files through pm_outfile (include/pagemap.h), with one way to say why one is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

void cli_outfile_error(int err, const char *what, const char *path)
{
	cli_error(err, "cannot %s %s", what, path);
	if (err == ELOOP)
		cli_hint("a symlink there that neither you nor root own is never followed: remove it or write elsewhere");
	else if (err == EPERM)
		cli_hint("a FIFO is written only when you or root own it, a socket or block device never, and "
			 "another user's file in a sticky directory cannot be replaced");
	else if (err == EEXIST)
		cli_hint("a file appeared at that name while it was written, no private temporary name was free, "
			 "or a symlink there names a regular file (never written through: give the file's own name, or -)");
}

int cli_write_output(const char *path, const void *buf, size_t len, unsigned flags)
{
	int r;

	if (!path || !strcmp(path, "-")) {
		if (fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0)
			return 0;
		cli_error(errno ? errno : EIO, "cannot write standard output");
		return -1;
	}
	if ((r = pm_outfile_write(path, buf, len, flags)) < 0) {
		cli_outfile_error(-r, "write", path);
		return -1;
	}
	return 0;
}
