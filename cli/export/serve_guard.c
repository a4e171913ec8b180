/*
 * serve_guard.c - absolute deadlines on the connections of `pagemap serve`.
 *
 * libmicrohttpd's connection timeout counts idle time: a client sending one
 * header byte every few seconds renews it forever, and a few dozen such
 * clients held every connection slot, so no scrape got through. Here each
 * connection gets a deadline when it is accepted that no activity extends:
 * its headers must be in by then. A thread shuts the late ones' sockets
 * down; libmicrohttpd then sees the end of the stream and frees the slot.
 * Cutting happens under the lock that the close notification also takes,
 * so a descriptor already closed (and maybe reused) is never touched.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "export_fleet.h"
#include "serve_guard.h"

#define GUARD_TICK_MS 200	/* how late past its deadline a connection can be cut */

/* Shut @c's socket down: libmicrohttpd sees its end and closes it. Locked. */
static void cut(struct serve_guard *g, struct guard_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->deadline = 0;
	c->in_headers = false;
	c->cut = true;
	g->cut++;
	g->closing++;
}

static void *guard_loop(void *arg)
{
	struct serve_guard *g = arg;
	struct guard_conn *c;
	struct timespec until;
	double now;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		now = fleet_now();
		for (c = g->head.next; c != &g->head; c = c->next)
			if (c->deadline && now > c->deadline)
				cut(g, c);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += GUARD_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int serve_guard_start(struct serve_guard *g)
{
	pthread_condattr_t a;
	int r;

	g->head.next = g->head.prev = &g->head;
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &a);
	pthread_condattr_destroy(&a);
	r = pthread_create(&g->thread, NULL, guard_loop, g);
	g->running = r == 0;
	return -r;
}

void serve_guard_stop(struct serve_guard *g)
{
	if (!g->running)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	g->running = false;
}

/* The address a client is counted under (IPv6: its /64); family 0 for loopback and anything else not counted. */
static struct guard_addr addr_key(const struct sockaddr *sa, socklen_t len)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct guard_addr k = { 0 };
	const unsigned char *b;

	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(k.bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		k.family = k.bytes[0] == 127 ? 0 : AF_INET;
	} else if (sa && sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (!memcmp(b, mapped, sizeof(mapped))) {
			memcpy(k.bytes, b + 12, 4);
			k.family = k.bytes[0] == 127 ? 0 : AF_INET;
		} else {
			/* A host gets a /64 to itself and may use any address in it: one client. */
			memcpy(k.bytes, b, 8);
			k.family = IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)b) ? 0 : AF_INET6;
		}
	}
	return k;
}

/* The connection longest in its headers, of @k's address (@k NULL: of any), or NULL. Locked. */
static struct guard_conn *oldest_in_headers(struct serve_guard *g, const struct guard_addr *k)
{
	struct guard_conn *c;

	for (c = g->head.prev; c != &g->head; c = c->prev)	/* new ones go in at the head: the oldest first */
		if (c->in_headers && (!k || !memcmp(&c->addr, k, sizeof(*k))))
			return c;
	return NULL;
}

bool serve_guard_admit(struct serve_guard *g, const struct sockaddr *sa, socklen_t len, unsigned limit)
{
	struct guard_addr k = addr_key(sa, len);
	struct guard_conn *c;
	unsigned n = 0;
	bool ok = true;

	pthread_mutex_lock(&g->lock);
	for (c = g->head.next; k.family && c != &g->head && n < limit; c = c->next)
		n += !c->cut && !memcmp(&c->addr, &k, sizeof(k));
	/*
	 * At the address's limit, as at the global one, its slowest is cut: a
	 * scrape from behind the same NAT (or node address) as clients that hold
	 * their slots trickling still gets in. A cut counts as closed at once.
	 */
	if (k.family && n >= limit) {
		if ((c = oldest_in_headers(g, &k)))
			cut(g, c);
		else
			ok = false;
	}
	if (ok && g->max_open && g->open - g->closing >= g->max_open) {
		if ((c = oldest_in_headers(g, NULL)))
			cut(g, c);
		else
			ok = false;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

struct guard_conn *serve_guard_add(struct serve_guard *g, int fd, const struct sockaddr *sa, double seconds)
{
	struct guard_conn *c = calloc(1, sizeof(*c));
	const struct sockaddr_storage none = { 0 };

	if (!c)
		return NULL;
	c->fd = fd;
	c->in_headers = true;
	c->addr = addr_key(sa ? sa : (const struct sockaddr *)&none, sizeof(struct sockaddr_storage));
	c->deadline = fleet_now() + seconds;
	pthread_mutex_lock(&g->lock);
	c->next = g->head.next;
	c->prev = &g->head;
	c->next->prev = c;
	g->head.next = c;
	g->open++;
	pthread_mutex_unlock(&g->lock);
	return c;
}

void serve_guard_del(struct serve_guard *g, struct guard_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	g->open--;
	g->closing -= c->cut;
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void serve_guard_set(struct serve_guard *g, struct guard_conn *c, double seconds)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (!c->cut)
		c->deadline = seconds > 0 ? fleet_now() + seconds : 0;
	c->in_headers = false;
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_counts(struct serve_guard *g, uint64_t *cut, uint64_t *open)
{
	pthread_mutex_lock(&g->lock);
	*cut = g->cut;
	*open = g->open;
	pthread_mutex_unlock(&g->lock);
}
