/* render_heat_parse.c - a bounded reader of `pagemap track -J` and `wss -J` recordings (untrusted text). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"
#include "textsafe.h"

#define MAX_DEPTH 16
#define MAX_RANGES (16u << 20)
#define MAX_INTERVALS 1000000u

/* The keys of one object the reader cares about. */
struct frame {
	bool has_start, has_end, has_bytes, has_t, has_wss;
	uint64_t start, end, bytes;
	double t;
	char name[4096];
};

struct parser {
	const char *p, *end, *line_start;
	size_t line;
	struct heat_rec *rec;
	char *err;
	size_t errsize;
	int nomem;
};

static int fail(struct parser *ps, const char *why)
{
	if (!ps->err[0])
		snprintf(ps->err, ps->errsize, "line %zu: %s", ps->line, why);
	return -EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) {
		if (*ps->p == '\n')
			ps->line++;
		ps->p++;
	}
}

/* The code point of \uXXXX's hex digits at @h as UTF-8 into @out: its length, 0 for a bad digit. */
static size_t utf8_of_u(const char *h, char *out)
{
	unsigned cp = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = h[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;

		if (d == 16)
			return 0;
		cp = cp << 4 | d;
	}
	/* A lone surrogate becomes its 3 bytes, not UTF-8: the writers show them as \xHH. */
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | cp >> 12);
	out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

/*
 * A string into @buf (truncated): JSON's escapes give back their bytes (\u00XX, \t, \n: what
 * textsafe's TS_JSON writes for control bytes), then textsafe's \xHH theirs, so a name comes back
 * as the bytes track had and the picture's writers escape it as they escape every name.
 */
static int parse_string(struct parser *ps, char *buf, size_t size)
{
	size_t n = 0, k;
	char u[3];

	ps->p++;	/* the quote */
	while (ps->p < ps->end && *ps->p != '"') {
		char c = *ps->p++;

		if ((unsigned char)c < 0x20)
			return fail(ps, "control character in a string");
		if (c == '\\') {
			if (ps->p >= ps->end)
				break;
			c = *ps->p++;
			if (c == 'u') {
				if (ps->end - ps->p < 4)
					return fail(ps, "short \\u escape");
				if (!(k = utf8_of_u(ps->p, u)))
					return fail(ps, "bad \\u escape");
				ps->p += 4;
				if (n + k < size) {
					memcpy(buf + n, u, k);
					n += k;
				}
				continue;
			}
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' :
			    c == 'b' ? '\b' : c == 'f' ? '\f' : c;	/* \" \\ \/: itself */
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
	if (ps->p >= ps->end)
		return fail(ps, "unterminated string");
	ps->p++;
	/* Names were written as cli/base/textsafe.h renders them: their bytes back, so they are rendered once, not twice. */
	n = ts_unescape(buf, n, buf);
	if (size)
		buf[n] = '\0';
	return 0;
}

/* "0x..." into @v; 0 or -EINVAL. */
static int hex_of(struct parser *ps, const char *s, uint64_t *v)
{
	char *e;

	if (strncmp(s, "0x", 2) || !s[2] || strlen(s) > 18)
		return fail(ps, "an address must be a \"0x...\" string of at most 16 digits");
	errno = 0;
	*v = strtoull(s + 2, &e, 16);
	if (errno || *e)
		return fail(ps, "bad hexadecimal address");
	return 0;
}

static int parse_number(struct parser *ps, double *d)
{
	char tmp[64], *e;
	size_t n = 0;

	while (ps->p < ps->end && n < sizeof(tmp) - 1 && strchr("+-0123456789.eE", *ps->p))
		tmp[n++] = *ps->p++;
	tmp[n] = '\0';
	*d = strtod(tmp, &e);
	if (!n || *e || *d != *d)
		return fail(ps, "bad number");
	return 0;
}

static int parse_value(struct parser *ps, int depth, struct frame *fr, const char *key);

/* A byte count: a JSON integer from 0 to 2^62. */
static int set_bytes(struct parser *ps, struct frame *fr, double d)
{
	if (!(d >= 0 && d <= 4611686018427387904.0) || d != (double)(uint64_t)d)
		return fail(ps, "a byte count must be a non-negative integer");
	fr->bytes = (uint64_t)d;
	fr->has_bytes = true;
	return 0;
}

static int add_range(struct parser *ps, const struct frame *fr)
{
	struct heat_rec *rec = ps->rec;
	struct heat_interval *iv;
	struct heat_range *r;

	if (!rec->n)
		return fail(ps, "a range outside an interval");
	if (fr->end <= fr->start)
		return fail(ps, "a range whose end is not after its start");
	if (++rec->nranges > MAX_RANGES)
		return fail(ps, "more than 16777216 ranges");
	iv = &rec->iv[rec->n - 1];
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? 2 * iv->cap : 16;

		if (!(r = realloc(iv->r, cap * sizeof(*r))))
			return ps->nomem = -ENOMEM;
		iv->r = r;
		iv->cap = cap;
	}
	r = &iv->r[iv->n++];
	r->start = fr->start;
	r->end = fr->end;
	/* exact ranges (track --ranges) count whole; a mapping's record gives its own count */
	r->bytes = fr->has_bytes ? fr->bytes : fr->end - fr->start;
	r->name = fr->has_bytes && fr->name[0] ? strdup(fr->name) : NULL;
	if (fr->has_bytes)
		rec->per_mapping = true;
	return 0;
}

static int set_kind(struct parser *ps, const char *kind)
{
	struct heat_rec *rec = ps->rec;

	if (rec->kind[0] && strcmp(rec->kind, kind))
		return fail(ps, "track and wss records mixed in one recording");
	snprintf(rec->kind, sizeof(rec->kind), "%s", kind);
	return 0;
}

static int new_interval(struct parser *ps)
{
	struct heat_rec *rec = ps->rec;
	struct heat_interval *iv;

	if (rec->n == MAX_INTERVALS)
		return fail(ps, "more than 1000000 intervals");
	if (rec->n == rec->cap) {
		size_t cap = rec->cap ? 2 * rec->cap : 64;

		if (!(iv = realloc(rec->iv, cap * sizeof(*iv))))
			return ps->nomem = -ENOMEM;
		rec->iv = iv;
		rec->cap = cap;
	}
	memset(&rec->iv[rec->n], 0, sizeof(*iv));
	rec->iv[rec->n].t = (double)rec->n;	/* wss documents: their order */
	rec->n++;
	return 0;
}

static int parse_object(struct parser *ps, int depth)
{
	struct frame fr = { 0 };
	char key[64];
	int rc;

	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return depth ? 0 : fail(ps, "an empty record");
	}
	if (!depth && (rc = new_interval(ps)) < 0)	/* its ranges may come before its "t" */
		return rc;
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"')
			return fail(ps, "expected a key");
		if ((rc = parse_string(ps, key, sizeof(key))) < 0)
			return rc;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p++ != ':')
			return fail(ps, "expected ':'");
		skip_ws(ps);
		/* the kind is known at the record's end: a wss series' line has a "t" before its "wss" */
		if (!depth && !strcmp(key, "t"))
			fr.has_t = true;
		if (!depth && !strcmp(key, "wss"))
			fr.has_wss = true;
		if ((rc = parse_value(ps, depth + 1, &fr, key)) < 0)
			return rc;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			break;
		}
		return fail(ps, "expected ',' or '}'");
	}
	if (!depth && !fr.has_t && !fr.has_wss)
		return fail(ps, "neither a track record (\"t\") nor a wss record (\"wss\")");
	if (!depth && (rc = set_kind(ps, fr.has_wss ? "wss" : "track")) < 0)
		return rc;
	if (!depth && fr.t == fr.t && ps->rec->kind[0] == 't')
		ps->rec->iv[ps->rec->n - 1].t = fr.t;
	if (depth && fr.has_start && fr.has_end)
		return add_range(ps, &fr);
	return 0;
}

static int parse_array(struct parser *ps, int depth)
{
	int rc;

	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		if ((rc = parse_value(ps, depth + 1, NULL, "")) < 0)
			return rc;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return 0;
		}
		return fail(ps, "expected ',' or ']'");
	}
}

static int parse_scalar(struct parser *ps, struct frame *fr, const char *key)
{
	char s[4096];
	double d;
	int rc;

	if (*ps->p == '"') {
		if ((rc = parse_string(ps, s, sizeof(s))) < 0)
			return rc;
		if (fr && !strcmp(key, "start") && (rc = hex_of(ps, s, &fr->start)) == 0)
			fr->has_start = true;
		else if (fr && !strcmp(key, "end") && (rc = hex_of(ps, s, &fr->end)) == 0)
			fr->has_end = true;
		else if (fr && (!strcmp(key, "path") || !strcmp(key, "mapping")))
			snprintf(fr->name, sizeof(fr->name), "%s", s);
		return rc < 0 ? rc : 0;
	}
	if (ps->end - ps->p >= 4 && !strncmp(ps->p, "null", 4)) {
		ps->p += 4;
		return 0;
	}
	if (ps->end - ps->p >= 4 && !strncmp(ps->p, "true", 4)) {
		ps->p += 4;
		return 0;
	}
	if (ps->end - ps->p >= 5 && !strncmp(ps->p, "false", 5)) {
		ps->p += 5;
		return 0;
	}
	if ((rc = parse_number(ps, &d)) < 0)
		return rc;
	if (fr && !strcmp(key, "t"))
		fr->t = d;
	/* track's maps give "written" bytes; wss gives "accessed" bytes */
	if (fr && (!strcmp(key, "written") || !strcmp(key, "accessed")) && (rc = set_bytes(ps, fr, d)) < 0)
		return rc;
	return 0;
}

static int parse_value(struct parser *ps, int depth, struct frame *fr, const char *key)
{
	if (depth > MAX_DEPTH)
		return fail(ps, "nested too deep");
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end");
	if (*ps->p == '{')
		return parse_object(ps, depth);
	if (*ps->p == '[')
		return parse_array(ps, depth);
	return parse_scalar(ps, fr, key);
}

int heat_parse(struct heat_rec *rec, const char *buf, size_t len, char *err, size_t errsize)
{
	char dummy[1];
	struct parser ps = { buf, buf + len, buf, 1, rec, err ? err : dummy, err ? errsize : sizeof(dummy), 0 };
	int rc;

	ps.err[0] = '\0';
	for (;;) {
		skip_ws(&ps);
		if (ps.p >= ps.end)
			break;
		if (*ps.p != '{')
			return ps.nomem ? ps.nomem : fail(&ps, "expected a JSON object");
		if ((rc = parse_object(&ps, 0)) < 0)
			return ps.nomem ? ps.nomem : rc;
	}
	if (!rec->n)
		return fail(&ps, "no records");
	return 0;
}

void heat_free(struct heat_rec *rec)
{
	size_t i, j;

	for (i = 0; i < rec->n; i++) {
		for (j = 0; j < rec->iv[i].n; j++)
			free(rec->iv[i].r[j].name);
		free(rec->iv[i].r);
	}
	free(rec->iv);
	memset(rec, 0, sizeof(*rec));
}
