/* test_serve_cache.c - serve's scrape cache (one walk for concurrent scrapes, its age and counter in each answer)
 * and its connection guard (the per-client count that spares loopback, the cut at the deadline). */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../harness.h"
#include "pages.h"
/* The CLI's pure parts are compiled in: unit tests link no CLI objects. */
#include "../../cli/base/textsafe.c"
#include "../../cli/export/metrics.c"
#include "../../cli/export/export_fleet.c"
#include "../../cli/export/serve_cache.c"
#include "../../cli/export/serve_guard.c"

/* A walk that counts its calls, holds until released, and writes one sample. */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int calls, fail;
	bool entered, release;
};

static int fake_walk(void *arg, struct mw w[2])
{
	struct fake *f = arg;
	int i;

	pthread_mutex_lock(&f->lock);
	f->calls++;
	f->entered = true;
	pthread_cond_broadcast(&f->cv);
	while (!f->release)
		pthread_cond_wait(&f->cv, &f->lock);
	pthread_mutex_unlock(&f->lock);
	if (f->fail)
		return -EIO;
	for (i = 0; i < 2; i++) {
		mw_family(&w[i], "pagemap_test", MW_GAUGE, NULL, "test");
		mw_sample_u64(&w[i], NULL, 0, 42);
		mw_finish(&w[i]);
	}
	return 0;
}

struct getter {
	struct scrape_cache *c;
	enum mw_format f;
	char *body;
	int r;
};

static void *get_thread(void *arg)
{
	struct getter *g = arg;
	size_t len;

	g->r = scrape_cache_get(g->c, g->f, NULL, NULL, &g->body, &len);
	return NULL;
}

static int single_flight(void)
{
	struct fake f = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, false };
	struct scrape_cache c;
	struct getter g[8];
	pthread_t th[8];
	int i;

	scrape_cache_init(&c, 100, fake_walk, &f);
	for (i = 0; i < 8; i++) {
		g[i] = (struct getter){ &c, i % 2 ? MW_OPENMETRICS : MW_PROMETHEUS, NULL, 0 };
		pthread_create(&th[i], NULL, get_thread, &g[i]);
	}
	pthread_mutex_lock(&f.lock);
	while (!f.entered)
		pthread_cond_wait(&f.cv, &f.lock);
	f.release = true;	/* the others wait for this walk, or find its result fresh */
	pthread_cond_broadcast(&f.cv);
	pthread_mutex_unlock(&f.lock);
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK(g[i].r == 0);
		CHECK(g[i].body && strstr(g[i].body, "\npagemap_test 42\n"));
		CHECK(g[i].body && strstr(g[i].body, "\npagemap_scrape_walks_total 1\n"));
		CHECK(g[i].body && strstr(g[i].body, "\npagemap_scrape_age_seconds "));
		if (g[i].f == MW_OPENMETRICS) {
			/* one end, after the server's families */
			CHECK(g[i].body && strstr(g[i].body, "# EOF\n") == g[i].body + strlen(g[i].body) - 6);
			CHECK(g[i].body &&
			      strstr(g[i].body, "# EOF\n") > strstr(g[i].body, "pagemap_scrape_walks_total"));
		} else {
			CHECK(g[i].body && !strstr(g[i].body, "# EOF"));
		}
		free(g[i].body);
	}
	CHECK(f.calls == 1);
	scrape_cache_free(&c);
	return T_PASS;
}

static int no_cache_and_errors(void)
{
	struct fake f = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, true };
	struct scrape_cache c;
	char *body = NULL;
	size_t len;
	int i;

	scrape_cache_init(&c, 0, fake_walk, &f);	/* 0: each scrape alone walks */
	for (i = 0; i < 3; i++) {
		CHECK(scrape_cache_get(&c, MW_PROMETHEUS, NULL, NULL, &body, &len) == 0);
		free(body);
	}
	CHECK(f.calls == 3);
	scrape_cache_free(&c);
	f.calls = 0;
	f.fail = 1;
	scrape_cache_init(&c, 100, fake_walk, &f);
	CHECK(scrape_cache_get(&c, MW_PROMETHEUS, NULL, NULL, &body, &len) == -EIO);
	f.fail = 0;
	CHECK(scrape_cache_get(&c, MW_PROMETHEUS, NULL, NULL, &body, &len) == 0);	/* a failure is not kept */
	CHECK(f.calls == 2);
	CHECK(strstr(body, "\npagemap_scrape_walks_total 2\n") != NULL);
	free(body);
	scrape_cache_free(&c);
	return T_PASS;
}

static struct sockaddr_storage addr(const char *s)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1)
		a4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1)
		a6->sin6_family = AF_INET6;
	return ss;
}

/*
 * At an address's limit its connection longest in its headers is cut for the
 * new one (never another address's); none in its headers: refused. IPv4 and
 * IPv4-mapped IPv6 are one client, an IPv6 /64 is one, loopback is never
 * limited.
 */
static int per_client(void)
{
	struct serve_guard g = { 0 };
	struct guard_conn *c[5], *o, *six[2];
	struct sockaddr_storage remote = addr("192.0.2.7"), mapped = addr("::ffff:192.0.2.7");
	struct sockaddr_storage other = addr("192.0.2.8");
	struct sockaddr_storage net6 = addr("2001:db8:1:2::1"), same64 = addr("2001:db8:1:2:ffff::9");
	struct sockaddr_storage next64 = addr("2001:db8:1:3::1");
	const char *loop[] = { "127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1" };
	uint64_t cut, open;
	int i;

	CHECK(serve_guard_start(&g) == 0);
	o = serve_guard_add(&g, -1, (struct sockaddr *)&other, 100);	/* older than all, but not that client's */
	for (i = 0; i < 3; i++)
		c[i] = serve_guard_add(&g, -1, (struct sockaddr *)&remote, 100);
	c[3] = serve_guard_add(&g, -1, (struct sockaddr *)&mapped, 100);	/* the same client over IPv6 */
	CHECK(serve_guard_admit(&g, (struct sockaddr *)&remote, sizeof(remote), 4));	/* its oldest makes room */
	CHECK(c[0]->cut && !c[1]->cut && !c[2]->cut && !c[3]->cut && !o->cut);
	c[4] = serve_guard_add(&g, -1, (struct sockaddr *)&remote, 100);
	for (i = 1; i < 5; i++)
		serve_guard_set(&g, c[i], 0);	/* all four have sent their headers: none to cut */
	CHECK(!serve_guard_admit(&g, (struct sockaddr *)&remote, sizeof(remote), 4));
	CHECK(!serve_guard_admit(&g, (struct sockaddr *)&mapped, sizeof(mapped), 4));
	CHECK(serve_guard_admit(&g, (struct sockaddr *)&other, sizeof(other), 4));
	serve_guard_counts(&g, &cut, &open);
	CHECK(cut == 1 && open == 6 && !o->cut);
	serve_guard_del(&g, c[1]);
	CHECK(serve_guard_admit(&g, (struct sockaddr *)&remote, sizeof(remote), 4));
	six[0] = serve_guard_add(&g, -1, (struct sockaddr *)&net6, 100);
	six[1] = serve_guard_add(&g, -1, (struct sockaddr *)&same64, 100);
	serve_guard_set(&g, six[0], 0);
	serve_guard_set(&g, six[1], 0);
	CHECK(!serve_guard_admit(&g, (struct sockaddr *)&net6, sizeof(net6), 2));	/* one /64, one client */
	CHECK(serve_guard_admit(&g, (struct sockaddr *)&next64, sizeof(next64), 2));
	for (i = 0; i < 4; i++) {
		struct sockaddr_storage l = addr(loop[i]);
		struct guard_conn *lc[3];
		int j;

		for (j = 0; j < 3; j++) {
			lc[j] = serve_guard_add(&g, -1, (struct sockaddr *)&l, 100);
			serve_guard_set(&g, lc[j], 0);
		}
		CHECK(serve_guard_admit(&g, (struct sockaddr *)&l, sizeof(l), 1));	/* loopback: never limited */
		for (j = 0; j < 3; j++)
			serve_guard_del(&g, lc[j]);
	}
	serve_guard_del(&g, c[0]);
	for (i = 2; i < 5; i++)
		serve_guard_del(&g, c[i]);
	serve_guard_del(&g, o);
	serve_guard_del(&g, six[0]);
	serve_guard_del(&g, six[1]);
	serve_guard_stop(&g);
	return T_PASS;
}

/* A connection past its deadline is shut down (its peer reads the end); one without a deadline is left. */
static int deadline_cut(void)
{
	struct serve_guard g = { 0 };
	struct guard_conn *late, *kept;
	int a[2], b[2], i;
	uint64_t cut, open;
	struct pollfd p;
	char ch;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
	CHECK(serve_guard_start(&g) == 0);
	late = serve_guard_add(&g, a[0], NULL, 0.01);
	kept = serve_guard_add(&g, b[0], NULL, 100);	/* not 0.01: the thread could cut it before the next line */
	serve_guard_set(&g, kept, 0);
	p = (struct pollfd){ .fd = a[1], .events = POLLIN };
	for (i = 0; i < 100 && poll(&p, 1, 100) == 0; i++)	/* bounded: 10 s */
		;
	CHECK(p.revents && read(a[1], &ch, 1) == 0);
	p = (struct pollfd){ .fd = b[1], .events = POLLIN };
	CHECK(poll(&p, 1, 300) == 0);
	serve_guard_counts(&g, &cut, &open);
	CHECK(cut == 1 && open == 2);
	serve_guard_del(&g, late);
	serve_guard_del(&g, kept);
	serve_guard_stop(&g);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
	return T_PASS;
}

/* Every slot taken: the connection longest in its headers is cut for a new one; none in its headers: refused. */
static int make_room(void)
{
	struct serve_guard g = { .max_open = 2 };
	struct guard_conn *old, *young, *next;
	struct sockaddr_storage l = addr("127.0.0.1");
	int a[2], b[2], c[2];
	uint64_t cut, open;
	struct pollfd p;
	char ch;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0 &&
	      socketpair(AF_UNIX, SOCK_STREAM, 0, c) == 0);
	CHECK(serve_guard_start(&g) == 0);
	old = serve_guard_add(&g, a[0], (struct sockaddr *)&l, 100);
	young = serve_guard_add(&g, b[0], (struct sockaddr *)&l, 100);
	CHECK(serve_guard_admit(&g, (struct sockaddr *)&l, sizeof(l), 16));
	p = (struct pollfd){ .fd = a[1], .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 1 && read(a[1], &ch, 1) == 0);	/* the oldest was cut */
	p = (struct pollfd){ .fd = b[1], .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0);
	next = serve_guard_add(&g, c[0], (struct sockaddr *)&l, 100);
	serve_guard_set(&g, young, 0);	/* both have sent their headers: nothing to cut */
	serve_guard_set(&g, next, 0);
	CHECK(!serve_guard_admit(&g, (struct sockaddr *)&l, sizeof(l), 16));
	serve_guard_counts(&g, &cut, &open);
	CHECK(cut == 1 && open == 3);
	serve_guard_del(&g, old);
	serve_guard_del(&g, young);
	serve_guard_del(&g, next);
	serve_guard_stop(&g);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]), close(c[0]), close(c[1]);
	return T_PASS;
}

T_MAIN(T(single_flight), T(no_cache_and_errors), T(per_client), T(deadline_cut), T(make_room))
