/* cmd_serve.c - `pagemap serve`: GET /metrics over libmicrohttpd, the cheap tier per scrape, exact PSS on its own schedule. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include "cli.h"
#include "fleet.h"
#include "mhd_load.h"

#define DEFAULT_LISTEN "127.0.0.1:9747"
#define REQUEST_MEMORY 8192	/* request line and headers of one connection: a longer URL gets 414 */
#define CLIENT_TIMEOUT 10	/* seconds a connection may idle (slow clients) */
#define MAX_CONNECTIONS 32

struct server {
	struct mhd_api mhd;		/* libmicrohttpd, loaded by cmd_serve */
	struct pm_ctx *ctx;		/* the scrape's: used by the polling thread only */
	struct fleet_opts o;
	struct fleet_state st;
	double pss_interval;		/* seconds; 0: no exact tier */
	pthread_mutex_t lock;		/* guards exact, stop */
	pthread_cond_t wake;
	struct fleet_exact exact;	/* the last finished pass */
	bool stop;
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

static enum MHD_Result reply(const struct server *s, struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
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
	ret = s->mhd.queue_response(c, status, r);
	s->mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result error_reply(const struct server *s, struct MHD_Connection *c, unsigned status,
				   const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(s, c, status, "text/plain; charset=utf-8", body, strlen(body), status == 405) : MHD_NO;
}

static enum MHD_Result metrics(struct server *s, struct MHD_Connection *c)
{
	const char *accept = s->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	struct fleet_opts o = s->o;
	struct mw w;
	int r;

	o.format = mw_negotiate(accept);
	mw_init(&w, o.format);
	pthread_mutex_lock(&s->lock);	/* the exact result stays while it is written */
	r = fleet_scrape(s->ctx, &o, &s->st, s->exact.groups ? &s->exact : NULL, &w);
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		mw_free(&w);
		return error_reply(s, c, 500, "scrape failed\n");
	}
	return reply(s, c, 200, o.format == MW_OPENMETRICS ? MW_CT_OPENMETRICS : MW_CT_PROMETHEUS, w.buf, w.len, false);
}

/* Does the request carry a body? A GET has none: one is refused before it is read. */
static bool has_body(const struct server *s, struct MHD_Connection *c)
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
	const struct server *s = cls;

	if (*con_cls != &seen) {
		*con_cls = &seen;
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

/* "HOST:PORT" or "[V6]:PORT" into @ss. Returns 0, or -EINVAL. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
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

static int usage_help(void)
{
	printf("Usage: pagemap serve [options]\n\n"
	       "An HTTP endpoint for Prometheus: GET /metrics answers with the families of\n"
	       "'pagemap export' (Prometheus text, or OpenMetrics when the Accept header asks).\n"
	       "The cheap tier is read at every scrape; exact PSS and the classes of frames\n"
	       "on their own schedule, exported with their age.\n\n"
	       "Options:\n"
	       " -l, --listen ADDR:PORT   where to listen (default " DEFAULT_LISTEN "; port 0: any free one)\n"
	       " -g, --group-by KEY       cgroup (default), user, comm, pid, rules\n"
	       "     --rules FILE         with --group-by rules: lines \"GROUP PATTERN\"\n"
	       "     --top N              at most N groups besides \"other\"\n"
	       "     --max-series N       hard cap on the samples of a scrape (default %d)\n"
	       "     --budget SECONDS     stop walking processes after this long per scrape\n"
	       "     --pss-interval SEC   seconds between exact PSS passes (default 300; 0: none)\n"
	       " -h, --help               this help\n"
	       "\nOnly GET /metrics is served; other methods get 405, other paths 404, requests\n"
	       "whose line and headers pass %d bytes 414 or 431; idle connections close after %d s.\n",
	       FLEET_MAX_SERIES, REQUEST_MEMORY, CLIENT_TIMEOUT);
	return EXIT_OK;
}

#define OPT_TOP 0x3100
#define OPT_MAXSERIES 0x3101
#define OPT_BUDGET 0x3102
#define OPT_PSSINT 0x3103
#define OPT_RULES 0x3104

static int parse_num(const char *s, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0) || *out > max ? -EINVAL : 0;
}

struct serve_args {
	const char *listen, *rules;
};

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
	case OPT_BUDGET:
		if (parse_num(optarg, 3600, &s->o.budget) < 0 || s->o.budget == 0)
			return cli_usage_error("invalid --budget '%s'", optarg);
		return -1;
	case OPT_PSSINT:
		return parse_num(optarg, 86400 * 7, &s->pss_interval) < 0 ?
			       cli_usage_error("invalid --pss-interval '%s'", optarg) : -1;
	case 'h':
		return usage_help();
	default:
		return cli_bad_option(argv);
	}
}

/* Serve until SIGINT or SIGTERM. */
static int run(struct server *s, const char *listen)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	pthread_t th;
	bool threaded = false;
	socklen_t len;
	sigset_t set;
	int sig;

	if (parse_listen(listen, &ss, &len) < 0)
		return cli_usage_error("invalid --listen '%s' (ADDR:PORT, [ADDR6]:PORT)", listen);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* every thread made below inherits it; sigwait takes them */
	d = s->mhd.start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, &ss,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned)CLIENT_TIMEOUT, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
			     MHD_OPTION_END);
	if (!d) {
		cli_error(errno, "cannot listen on %s", listen);
		return EXIT_RUNTIME;
	}
	info = s->mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "pagemap: serving /metrics on %s (port %u)\n", listen, info ? info->port : 0);
	if (s->pss_interval > 0)
		threaded = pthread_create(&th, NULL, exact_loop, s) == 0;
	while (sigwait(&set, &sig) != 0)
		;
	s->mhd.stop_daemon(d);
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
		{ "pss-interval", required_argument, NULL, OPT_PSSINT }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server s = { .ctx = ctx, .o = { .max_series = FLEET_MAX_SERIES }, .pss_interval = 300,
			    .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };
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
	r = run(&s, a.listen);
	fleet_exact_free(&s.exact);
	fleet_rules_free(&s.o);
	return r;
}
