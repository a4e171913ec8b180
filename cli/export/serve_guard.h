/* serve_guard.h - absolute deadlines on the connections of `pagemap serve` (see serve_guard.c). */
#ifndef PM_CLI_SERVE_GUARD_H
#define PM_CLI_SERVE_GUARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* A client's address as the per-client limit counts it: IPv4 (also IPv4-mapped IPv6) or an IPv6 /64. */
struct guard_addr {
	int family;			/* AF_INET, AF_INET6; 0: not counted (Unix socket, loopback) */
	unsigned char bytes[16];
};

/* One connection: its socket, its client, and when it is cut (0: never, while its answer is being made). */
struct guard_conn {
	struct guard_conn *prev, *next;
	int fd;
	struct guard_addr addr;
	double deadline;
	bool in_headers;		/* its request's headers are not all in yet */
	bool cut;			/* shut down, its close still to come */
};

struct serve_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct guard_conn head;		/* circular list of open connections */
	pthread_t thread;
	bool running, stop;
	uint64_t cut;			/* connections cut at their deadline or to make room */
	uint64_t open;			/* connections open now */
	uint64_t closing;		/* of them, cut and not yet closed */
	unsigned max_open;		/* connections not cut at once; 0: no limit here */
};

/* Start the thread that cuts late connections. Returns 0 or -errno. */
int serve_guard_start(struct serve_guard *g);
void serve_guard_stop(struct serve_guard *g);
/*
 * May a client at @sa open one more connection? When @limit of its address
 * (IPv6: its /64) are open, that address's connection longest in its
 * headers is cut to make room; none such: no. Loopback is not limited:
 * every local user connects from it, so a limit would let one of them lock
 * the local Prometheus out with a few connections (a Unix socket is what
 * keeps local users out). When max_open connections are open, the one
 * longest in its headers is cut likewise: a scrape sends its request at
 * once, slow clients do not, so slow clients cannot hold every slot (or
 * every slot of their address) against it. None such: no.
 */
bool serve_guard_admit(struct serve_guard *g, const struct sockaddr *sa, socklen_t len, unsigned limit);
/*
 * A connection from @sa was accepted on @fd: it must send its request's
 * headers within @seconds. NULL: no memory.
 */
struct guard_conn *serve_guard_add(struct serve_guard *g, int fd, const struct sockaddr *sa, double seconds);
/* Its socket is about to be closed: forget it (never cut a reused descriptor). */
void serve_guard_del(struct serve_guard *g, struct guard_conn *c);
/* A new deadline @seconds from now; 0: none. */
void serve_guard_set(struct serve_guard *g, struct guard_conn *c, double seconds);
/* The counters, read together. */
void serve_guard_counts(struct serve_guard *g, uint64_t *cut, uint64_t *open);

#endif
