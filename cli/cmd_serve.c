/* cmd_serve.c - `pagemap serve`: GET /metrics over libmicrohttpd, the cheap tier per scrape, exact PSS on its own schedule. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "cli.h"
#include "export_fleet.h"
#include "mhd_load.h"
#include "serve_cache.h"
#include "serve_guard.h"
#include "serve_listen.h"

#define DEFAULT_LISTEN "127.0.0.1:9747"
#define REQUEST_MEMORY 8192	/* request line and headers of one connection: a longer URL gets 414 */
#define CLIENT_TIMEOUT 10	/* seconds a connection may idle (libmicrohttpd's timeout: activity renews it) */
#define HEADER_DEADLINE 5	/* seconds from accept to the end of the headers, whatever the client sends */
#define SEND_DEADLINE 30	/* seconds from a queued answer to the connection's end (slow readers) */
#define MAX_CONNECTIONS 1024	/* open at once by default (--max-connections) */
#define PER_CLIENT 16		/* open at once from one IP address */
#define DEFAULT_CACHE 1.0	/* seconds a walk's result answers further scrapes */
#define FD_RESERVE 256		/* descriptors kept for the walks (/proc files) besides the connections */
#define STR_(x) #x
#define STR(x) STR_(x)

struct server {
	struct mhd_api mhd;		/* libmicrohttpd, loaded by cmd_serve */
	struct pm_ctx *ctx;		/* the walks': one at a time (the cache lets one walk run) */
	struct fleet_opts o;
	struct fleet_state st;
	double pss_interval;		/* seconds; 0: no exact tier */
	pthread_mutex_t lock;		/* guards exact, stop */
	pthread_cond_t wake;
	struct fleet_exact exact;	/* the last finished pass */
	bool stop;
	struct scrape_cache cache;	/* scrapes share walks */
	double cache_age;		/* --cache */
	struct serve_guard guard;	/* connection deadlines */
	unsigned max_conns;		/* --max-connections */
	mode_t socket_mode;		/* --socket-mode, for unix:PATH */
	bool socket_mode_set;
};

/* ---- the slow tier, in a thread of its own with its own context ---- */

static void *exact_loop(void *arg)
{
	struct server *s = arg;
	struct pm_ctx *ctx = cli_ctx_new();
	struct fleet_exact ex, old;
	struct timespec until;
	bool stop = !ctx;

	while (!stop) {
		if (fleet_exact_pass(ctx, &s->o, &ex) < 0)
			fleet_exact_free(&ex);
		pthread_mutex_lock(&s->lock);
		old = s->exact;
		if (ex.groups)
			s->exact = ex;
		else
			old.groups = NULL;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)s->pss_interval;
		while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		fleet_exact_free(&old);
	}
	pm_ctx_free(ctx);
	return NULL;
}

/* ---- HTTP ---- */

/* The deadline record of connection @c (NULL when its allocation failed). */
static struct guard_conn *conn_of(struct server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = s->mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* Accepted: headers due within HEADER_DEADLINE. Closed: forgotten before libmicrohttpd closes the socket. */
static void notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode toe)
{
	struct server *s = cls;
	const union MHD_ConnectionInfo *i, *a;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		serve_guard_del(&s->guard, *ctx);
		*ctx = NULL;
		return;
	}
	a = s->mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	i = s->mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!i)
		return;
	*ctx = serve_guard_add(&s->guard, i->connect_fd, a ? a->client_addr : NULL, HEADER_DEADLINE);
	if (!*ctx)	/* no memory to watch it: it does not stay unwatched */
		shutdown(i->connect_fd, SHUT_RDWR);
}

/* The limits, at accept (libmicrohttpd closes a refused connection at once): per client, and room made. */
static enum MHD_Result admit(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct server *s = cls;

	return serve_guard_admit(&s->guard, sa, len, PER_CLIENT) ? MHD_YES : MHD_NO;
}

/* The families only the server knows, at the end of every answer. */
static void http_families(void *arg, struct mw *w)
{
	struct server *s = arg;
	uint64_t cut, open;

	serve_guard_counts(&s->guard, &cut, &open);
	mw_family(w, "pagemap_http_connections_cut", MW_COUNTER, NULL,
		  "Connections cut: headers not in within " STR(HEADER_DEADLINE)
		  " s of the accept, the answer not taken within " STR(SEND_DEADLINE)
		  " s, or the longest in its headers when every slot, or every slot of its address, was taken");
	mw_sample_u64(w, NULL, 0, cut);
	mw_family(w, "pagemap_http_connections", MW_GAUGE, NULL, "Connections open now, this one included");
	mw_sample_u64(w, NULL, 0, open);
}

/* One walk in both formats, for the cache: the exact tier's result stays while it is written. */
static int walk(void *arg, struct mw w[2])
{
	struct server *s = arg;
	int r;

	pthread_mutex_lock(&s->lock);
	r = fleet_scrape_n(s->ctx, &s->o, &s->st, s->exact.groups ? &s->exact : NULL, w, 2);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static enum MHD_Result reply(struct server *s, struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
			     bool allow_get)
{
	struct MHD_Response *r = s->mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	s->mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow_get)
		s->mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	/* One answer per connection: requests pipelined behind it are dropped, not answered one walk each. */
	s->mhd.add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = s->mhd.queue_response(c, status, r);
	s->mhd.destroy_response(r);
	serve_guard_set(&s->guard, conn_of(s, c), SEND_DEADLINE);
	return ret;
}

static enum MHD_Result error_reply(struct server *s, struct MHD_Connection *c, unsigned status,
				   const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(s, c, status, "text/plain; charset=utf-8", body, strlen(body), status == 405) : MHD_NO;
}

static enum MHD_Result metrics(struct server *s, struct MHD_Connection *c)
{
	const char *accept = s->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum mw_format f = mw_negotiate(accept);
	char *body;
	size_t len;

	if (scrape_cache_get(&s->cache, f, http_families, s, &body, &len) < 0)
		return error_reply(s, c, 500, "scrape failed\n");
	return reply(s, c, 200, f == MW_OPENMETRICS ? MW_CT_OPENMETRICS : MW_CT_PROMETHEUS, body, len, false);
}

/* Does the request carry a body? A GET has none: one is refused before it is read. */
static bool has_body(struct server *s, struct MHD_Connection *c)
{
	const char *len = s->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0")) ||
	       s->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* Errors are queued at the first call, on the headers alone, so that MHD never reads a body. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	static int seen;
	struct server *s = cls;

	if (*con_cls != &seen) {
		*con_cls = &seen;
		serve_guard_set(&s->guard, conn_of(s, c), 0);	/* headers in: ours to answer */
		if (strcmp(method, MHD_HTTP_METHOD_GET))
			return error_reply(s, c, 405, "only GET is served\n");
		if (strcmp(url, "/metrics"))
			return error_reply(s, c, 404, "only /metrics is served\n");
		if (has_body(s, c))
			return error_reply(s, c, 400, "a request body is not accepted\n");
		return MHD_YES;	/* answered at the next call, once the request is complete */
	}
	if (*upload_size)	/* a body without the headers saying so */
		return MHD_NO;
	return metrics(cls, c);
}

/* ---- options and the listening address ---- */

static int usage_help(void)
{
	printf("Usage: pagemap serve [options]\n\n"
	       "An HTTP endpoint for Prometheus: GET /metrics answers with the families of\n"
	       "'pagemap export' (Prometheus text, or OpenMetrics when the Accept header asks).\n"
	       "The cheap tier is read at every walk; exact PSS and the classes of frames\n"
	       "on their own schedule, exported with their age.\n\n"
	       "Options:\n"
	       " -l, --listen ADDR:PORT   where to listen (default " DEFAULT_LISTEN "; port 0: any free one)\n"
	       " -l, --listen unix:PATH   a Unix socket instead, for its owner only\n"
	       "     --socket-mode MODE   the Unix socket's permissions (octal; default 0600;\n"
	       "                          0660: its group too)\n"
	       " -g, --group-by KEY       cgroup (default), user, comm, pid, rules\n"
	       "     --rules FILE         with --group-by rules: lines \"GROUP PATTERN\"\n"
	       "     --top N              at most N groups besides \"other\"\n"
	       "     --max-series N       hard cap on the samples of a scrape (default %d)\n"
	       "     --budget SECONDS     stop walking processes after this long per walk\n"
	       "     --cache SECONDS      a walk answers the scrapes of this long after it (default 1;\n"
	       "                          0: only scrapes arriving during it); they say its age\n"
	       "     --pss-interval SEC   seconds between exact PSS passes (default 300; 0: none)\n"
	       "     --max-connections N  connections open at once (default %d)\n"
	       " -h, --help               this help\n"
	       "\nRun as root, it serves figures only root can read (exact PSS, bytes shared\n"
	       "across groups, page classes) to whoever can connect: any local user, on a\n"
	       "TCP address. A Unix socket restricts them to its owner or group.\n"
	       "\nOnly GET /metrics is served, one answer per connection; other methods get\n"
	       "405, other paths 404, requests whose line and headers pass %d bytes 414 or\n"
	       "431. Headers must arrive within %d s of the connection, however slowly sent,\n"
	       "and the answer be taken within %d s; idle connections close after %d s. At\n"
	       "most %d connections from one address (an IPv6 /64; loopback addresses, which\n"
	       "every local user shares, excepted). At either limit the connection longest\n"
	       "in its headers (of that address) makes room; none in its headers: refused.\n",
	       FLEET_MAX_SERIES, MAX_CONNECTIONS, REQUEST_MEMORY, HEADER_DEADLINE, SEND_DEADLINE, CLIENT_TIMEOUT,
	       PER_CLIENT);
	return EXIT_OK;
}

#define OPT_TOP 0x3100
#define OPT_MAXSERIES 0x3101
#define OPT_BUDGET 0x3102
#define OPT_PSSINT 0x3103
#define OPT_RULES 0x3104
#define OPT_CACHE 0x3105
#define OPT_SOCKMODE 0x3106
#define OPT_MAXCONN 0x3107

static int parse_num(const char *s, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0) || *out > max ? -EINVAL : 0;
}

/* An octal mode for the socket: its owner must be able to use it (read and write). */
static int parse_mode(const char *s, mode_t *mode)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 0777 || (v & 0600) != 0600)
		return -EINVAL;
	*mode = (mode_t)v;
	return 0;
}

struct serve_args {
	const char *listen, *rules;
};

static int parse_tier(struct server *s, int c)
{
	switch (c) {
	case OPT_BUDGET:
		if (parse_num(optarg, 3600, &s->o.budget) < 0 || s->o.budget == 0)
			return cli_usage_error("invalid --budget '%s'", optarg);
		return -1;
	case OPT_CACHE:
		return parse_num(optarg, 3600, &s->cache_age) < 0 ?
			       cli_usage_error("invalid --cache '%s'", optarg) : -1;
	case OPT_PSSINT:
	default:
		return parse_num(optarg, 86400 * 7, &s->pss_interval) < 0 ?
			       cli_usage_error("invalid --pss-interval '%s'", optarg) : -1;
	}
}

/* Returns -1 to go on, or an exit code. */
static int parse_opt(struct server *s, struct serve_args *a, int c, char **argv)
{
	double v;

	switch (c) {
	case 'l':
		a->listen = optarg;
		return -1;
	case 'g':
		return fleet_parse_by(optarg, &s->o.by) < 0 ?
			       cli_usage_error("unknown group key '%s' (cgroup, user, comm, pid, rules)", optarg) : -1;
	case OPT_RULES:
		a->rules = optarg;
		return -1;
	case OPT_TOP:
	case OPT_MAXSERIES:
		if (parse_num(optarg, 1000000, &v) < 0 || v < 1 || v != (size_t)v)
			return cli_usage_error("invalid %s '%s'", c == OPT_TOP ? "--top" : "--max-series", optarg);
		*(c == OPT_TOP ? &s->o.top : &s->o.max_series) = (size_t)v;
		return -1;
	case OPT_MAXCONN:
		if (parse_num(optarg, 65536, &v) < 0 || v < 4 || v != (unsigned)v)
			return cli_usage_error("invalid --max-connections '%s' (4 to 65536)", optarg);
		s->max_conns = (unsigned)v;
		return -1;
	case OPT_BUDGET:
	case OPT_CACHE:
	case OPT_PSSINT:
		return parse_tier(s, c);
	case OPT_SOCKMODE:
		s->socket_mode_set = true;
		return parse_mode(optarg, &s->socket_mode) < 0 ?
			       cli_usage_error("invalid --socket-mode '%s' (octal, at least 0600)", optarg) : -1;
	case 'h':
		return usage_help();
	default:
		return cli_bad_option(argv);
	}
}

/*
 * Connections are descriptors: raise the soft limit toward the hard one so
 * that every slot can be used (systemd's default soft limit is 1024). Returns
 * the number of connections that fit besides the walks' own descriptors.
 */
static unsigned connection_slots(unsigned want_conns)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)want_conns + FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return want_conns;
	return rl.rlim_cur > FD_RESERVE + 64 ? (unsigned)(rl.rlim_cur - FD_RESERVE) : 64;
}

/*
 * A thread per connection: a scrape waiting for the shared walk blocks its
 * own thread only, never the one that accepts and polls (walks run in the
 * first waiting scrape's thread). poll(), not select(): descriptors pass 1024.
 */
static struct MHD_Daemon *start(struct server *s, const struct sockaddr_storage *ss, int fd)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION;
	/* Cut connections hold their slot until their thread has closed them: room for them beyond the limit. */
	unsigned margin = s->max_conns / 4 + 16, slots = connection_slots(s->max_conns + margin);

	s->guard.max_open = slots > margin ? slots - margin : slots;
	if (s->guard.max_open < s->max_conns)	/* the operator asked for more: never lower it unsaid */
		fprintf(stderr,
			"pagemap: --max-connections %u lowered to %u: the descriptor limit (RLIMIT_NOFILE) holds "
			"no more (raise its hard limit, e.g. systemd's LimitNOFILE=)\n",
			s->max_conns, s->guard.max_open);
	if (fd >= 0)	/* a Unix socket: no address to limit per client */
		return s->mhd.start_daemon(flags, 0, admit, s, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
					   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
					   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CLIENT_TIMEOUT,
					   MHD_OPTION_CONNECTION_LIMIT, slots,
					   MHD_OPTION_NOTIFY_CONNECTION, notify, s, MHD_OPTION_END);
	return s->mhd.start_daemon(flags | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0, admit, s, handle, s,
				   MHD_OPTION_SOCK_ADDR, ss, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CLIENT_TIMEOUT,
				   MHD_OPTION_CONNECTION_LIMIT, slots,
				   MHD_OPTION_NOTIFY_CONNECTION, notify, s, MHD_OPTION_END);
}

/* Where to listen: a Unix socket made here (ul->fd), or an address for libmicrohttpd. Returns -1 or an exit code. */
static int listener(struct server *s, const char *listen, struct sockaddr_storage *ss, struct unix_listener *ul)
{
	socklen_t len;
	char why[256];

	if (strncmp(listen, UNIX_PREFIX, strlen(UNIX_PREFIX))) {
		if (s->socket_mode_set)
			return cli_usage_error("--socket-mode goes with --listen unix:PATH");
		if (listen_parse_inet(listen, ss, &len) < 0)
			return cli_usage_error("invalid --listen '%s' (ADDR:PORT, [ADDR6]:PORT, unix:PATH)", listen);
		return -1;
	}
	if (listen_unix(listen + strlen(UNIX_PREFIX), s->socket_mode, ul, why, sizeof(why)) < 0) {
		cli_error(0, "cannot listen on %s: %s", listen, why);
		return EXIT_RUNTIME;
	}
	return -1;
}

static void wait_signal(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	while (sigwait(&set, &sig) != 0)
		;
}

/* Serve until SIGINT or SIGTERM. */
static int run(struct server *s, const char *listen)
{
	struct sockaddr_storage ss;
	struct unix_listener ul = { .fd = -1 };
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	pthread_t th;
	bool threaded = false;
	sigset_t set;
	int r;

	if ((r = listener(s, listen, &ss, &ul)) >= 0)
		return r;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* every thread made below inherits it; sigwait takes them */
	if ((r = serve_guard_start(&s->guard)) < 0 || !(d = start(s, &ss, ul.fd))) {
		cli_error(r < 0 ? -r : errno, "cannot listen on %s", listen);
		serve_guard_stop(&s->guard);
		listen_unix_remove(&ul);
		return EXIT_RUNTIME;
	}
	info = s->mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	cli_note("serving /metrics on %s (port %u)", listen, info ? info->port : 0);
	if (s->pss_interval > 0)
		threaded = pthread_create(&th, NULL, exact_loop, s) == 0;
	wait_signal();
	s->mhd.stop_daemon(d);	/* joins the connections' threads, a walk under way included */
	serve_guard_stop(&s->guard);
	listen_unix_remove(&ul);
	if (threaded) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(th, NULL);
	}
	return EXIT_OK;
}

int cmd_serve(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "group-by", required_argument, NULL, 'g' },
		{ "rules", required_argument, NULL, OPT_RULES }, { "top", required_argument, NULL, OPT_TOP },
		{ "max-series", required_argument, NULL, OPT_MAXSERIES }, { "budget", required_argument, NULL, OPT_BUDGET },
		{ "pss-interval", required_argument, NULL, OPT_PSSINT },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "socket-mode", required_argument, NULL, OPT_SOCKMODE },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server s = { .ctx = ctx, .o = { .max_series = FLEET_MAX_SERIES }, .pss_interval = 300,
			    .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
			    .cache_age = DEFAULT_CACHE, .socket_mode = 0600, .max_conns = MAX_CONNECTIONS };
	struct serve_args a = { DEFAULT_LISTEN, NULL };
	char why[512];
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "l:g:h", longopts, NULL)) != -1)
		if ((r = parse_opt(&s, &a, c, argv)) >= 0)
			return r;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if ((r = fleet_check_opts(&s.o, a.rules)) >= 0)
		return r;
	if (mhd_load(&s.mhd, why, sizeof(why)) < 0) {
		fprintf(stderr, "pagemap serve: %s\n", why);
		fleet_rules_free(&s.o);
		return EXIT_RUNTIME;
	}
	pm_ctx_features(ctx);	/* probe once, before scrapes */
	scrape_cache_init(&s.cache, s.cache_age, walk, &s);
	r = run(&s, a.listen);
	scrape_cache_free(&s.cache);
	fleet_exact_free(&s.exact);
	fleet_rules_free(&s.o);
	return r;
}
