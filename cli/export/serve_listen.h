/* serve_listen.h - where `pagemap serve` listens: ADDR:PORT, [ADDR6]:PORT or unix:PATH (see serve_listen.c). */
#ifndef PM_CLI_SERVE_LISTEN_H
#define PM_CLI_SERVE_LISTEN_H

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#define UNIX_PREFIX "unix:"

/* "HOST:PORT" or "[V6]:PORT" (numeric) into @ss. Returns 0, or -EINVAL. */
int listen_parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *len);

/* A Unix socket made by listen_unix(), and how to recognise it at exit. */
struct unix_listener {
	int fd;
	const char *path;
	dev_t dev;
	ino_t ino;
};

/*
 * Bind and listen on the Unix socket @path, created with @mode (umask
 * ignored). A stale socket left by a dead server is replaced; anything else
 * at @path (a file, a symbolic link, a live server's socket) is refused:
 * bind() itself never follows a link, so no file is created elsewhere.
 * Returns 0, or -errno with a reason in @why.
 */
int listen_unix(const char *path, mode_t mode, struct unix_listener *l, char *why, size_t size);
/* Remove the socket at exit, if it is still the one we made. */
void listen_unix_remove(const struct unix_listener *l);

#endif
