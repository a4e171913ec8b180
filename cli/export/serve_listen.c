/*
 * serve_listen.c - where `pagemap serve` listens.
 *
 * A TCP listener is reachable by every local user (and by other hosts unless
 * bound to loopback); what serve exports as root (exact PSS, bytes shared
 * across groups, page classes) is otherwise for root only. A Unix socket
 * with file permissions restricts it to its owner or group.
 */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>
#include "serve_listen.h"

int listen_parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai;
	char host[256];
	const char *colon = strrchr(s, ':'), *h = s;
	size_t n;

	if (!colon || !colon[1])
		return -EINVAL;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']')
		h = s + 1, n -= 2;
	if (n == 0 || n >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* Is there a server behind the socket at @sa? A refused connection means a stale file. */
static bool socket_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live = fd >= 0 && (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno != ECONNREFUSED);

	if (fd >= 0)
		close(fd);
	return live;
}

/* Clear the way for bind(): nothing at @sa's path, or a stale socket removed. */
static int clear_path(const struct sockaddr_un *sa, char *why, size_t size)
{
	struct stat st;

	if (lstat(sa->sun_path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, size, "%s", strerror(errno));
		return -errno;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, size, "it exists and is not a socket");
		return -EEXIST;
	}
	if (socket_live(sa)) {
		snprintf(why, size, "a server is listening on it");
		return -EADDRINUSE;
	}
	if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
		snprintf(why, size, "cannot remove the stale socket: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int listen_unix(const char *path, mode_t mode, struct unix_listener *l, char *why, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, size, "the path is empty or longer than %zu bytes", sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if ((r = clear_path(&sa, why, size)) < 0)
		return r;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	/* The mode is set as bind() creates the file: no moment with a wider one. */
	old = umask(~mode & 0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(fd, SOMAXCONN) < 0 || lstat(path, &st) < 0)
		goto fail;
	*l = (struct unix_listener){ .fd = fd, .path = path, .dev = st.st_dev, .ino = st.st_ino };
	return 0;
fail:
	r = -errno;
	snprintf(why, size, "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return r;
}

void listen_unix_remove(const struct unix_listener *l)
{
	struct stat st;

	if (l->path && lstat(l->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(l->path);
}
