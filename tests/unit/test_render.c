/* test_render.c - pagemap render's pure parts: the axis layout, exact cells from runs, the recording reader. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"
/* The CLI's model and recording reader are pure: tested here as they are compiled into the tool. */
#include "../../cli/base/textsafe.c"
#include "../../cli/render/render_model.c"
#include "../../cli/render/render_heat_parse.c"

#define TiB (1ULL << 40)

static const struct rnd_layout lay = { 1200, 8, 250000, 24, false };

/* Gaps of 40 TiB take no more room than small ones: every mapping >= 1 cell, gaps <= 2 % of the cells. */
static int layout_huge_gaps(void)
{
	struct rnd_model m = { .page_size = 4096 };
	uint32_t gaps = 0, i;

	CHECK(rnd_add_map(&m, 0x10000, 0x12000, "rw-p", "", 0) == 0);
	CHECK(rnd_add_map(&m, 0x12000 + 40 * TiB, 0x13000 + 40 * TiB, "r--p", "/lib/a.so", 9) == 0);
	CHECK(rnd_add_map(&m, 80 * TiB, 80 * TiB + (4ULL << 30), "rw-p", "[heap]", 6) == 0);
	CHECK(rnd_add_map(&m, 80 * TiB, 80 * TiB + 4096, "rw-p", "", 0) == -EINVAL);	/* overlaps: refused */
	CHECK(rnd_layout(&m, &lay) == 0);
	CHECK_EQ_U64(m.nsegs, 5);
	for (i = 0; i < m.nsegs; i++) {
		if (m.segs[i].gap)
			gaps += m.segs[i].ncells;
		else
			CHECK(m.segs[i].ncells >= 1 && m.segs[i].ncells <= m.segs[i].pages);
	}
	CHECK(gaps * 50 <= m.width * m.rows);
	CHECK(gaps > 0);
	CHECK_STR(m.maps[0].name, "anon");
	CHECK(m.segs[4].ncells > m.segs[2].ncells);	/* 4 GiB wider than 4 KiB */
	rnd_model_free(&m);
	return T_PASS;
}

/* Runs land in the cells whose pages they cover, byte for byte, also across cell borders. */
static int cells_exact(void)
{
	struct rnd_model m = { .page_size = 4096, .max_runs = 2 };
	struct pm_run r = { 0 };
	uint64_t sum = 0, st = 0;
	uint32_t i;
	int k;

	CHECK(rnd_add_map(&m, 0x100000, 0x100000 + 1000 * 4096, "rw-p", "", 0) == 0);
	CHECK(rnd_layout(&m, &(struct rnd_layout){ 100, 1, 250000, 24, false }) == 0);
	CHECK(m.segs[0].ncells >= 1 && m.segs[0].ncells < 1000);
	r.start = 0x100000 + 3 * 4096;
	r.end = 0x100000 + 777 * 4096;
	r.flags = PM_PAGE_PRESENT | PM_PAGE_EXCLUSIVE;
	rnd_add_run(&m, &r);
	r.start = r.end;
	r.end = 0x100000 + 1000 * 4096;
	r.flags = PM_PAGE_SWAPPED;
	rnd_add_run(&m, &r);
	r.start = 0x50000;	/* before every mapping: not on the axis, ignored */
	r.end = 0x60000;
	rnd_add_run(&m, &r);
	for (i = 0; i < m.ncells; i++) {
		uint64_t p0 = (m.cells[i].start - 0x100000) / 4096, p1 = (m.cells[i].end - 0x100000) / 4096, want = 0;

		if (p0 < 777)	/* present pages [3, 777) inside [p0, p1) */
			want = ((p1 < 777 ? p1 : 777) - (p0 > 3 ? p0 : 3)) * 4096;
		if (p1 <= 3)
			want = 0;
		CHECK_EQ_U64(m.cells[i].bytes[RC_PRESENT], want);
		sum += m.cells[i].bytes[RC_SWAPPED];
		for (k = 0; k < RS_NSTATE; k++)
			st += m.cells[i].state[k];
	}
	CHECK_EQ_U64(sum, 223 * 4096);
	CHECK_EQ_U64(st, 997 * 4096);
	CHECK_EQ_U64(m.total[RC_PRESENT], 774 * 4096);
	CHECK_EQ_U64(m.total[RC_EXCLUSIVE], 774 * 4096);
	CHECK_EQ_U64(m.nruns, 2);
	CHECK_EQ_U64(m.runs_left_out, 0);
	rnd_model_free(&m);
	return T_PASS;
}

/* More mappings than cells: bands of several mappings, said by group. */
static int layout_grouped(void)
{
	struct rnd_model m = { .page_size = 4096 };
	uint32_t i;

	for (i = 0; i < 5000; i++)
		CHECK(rnd_add_map(&m, 0x10000000ULL + i * 0x2000ULL, 0x10001000ULL + i * 0x2000ULL, "rw-p", "", 0) == 0);
	CHECK(rnd_layout(&m, &(struct rnd_layout){ 100, 1, 1000, 24, false }) == 0);
	CHECK(m.group >= 8);
	CHECK(m.ncells <= m.width * m.rows);
	rnd_model_free(&m);
	return T_PASS;
}

static int parse(const char *s, struct heat_rec *rec, char *err)
{
	memset(rec, 0, sizeof(*rec));
	return heat_parse(rec, s, strlen(s), err, 256);
}

static int recording_track(void)
{
	struct heat_rec rec;
	char err[256];

	CHECK(parse("{\"ranges\":[{\"start\":\"0x1000\",\"end\":\"0x3000\",\"huge\":false}],\"t\":0.5}\n"
		    "{\"t\":1.0,\"ranges\":[]}\n", &rec, err) == 0);
	CHECK_STR(rec.kind, "track");
	CHECK_EQ_U64(rec.n, 2);
	CHECK_EQ_U64(rec.iv[0].n, 1);
	CHECK_EQ_U64(rec.iv[0].r[0].bytes, 0x2000);
	CHECK(rec.iv[0].t == 0.5 && rec.iv[1].t == 1.0);
	CHECK(!rec.per_mapping);
	heat_free(&rec);
	CHECK(parse("{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x9000\",\"path\":\"[heap]\",\"pages\":2,"
		    "\"written\":8192,\"huge\":0}]}", &rec, err) == 0);
	CHECK(rec.per_mapping);
	CHECK_EQ_U64(rec.iv[0].r[0].bytes, 8192);
	CHECK_STR(rec.iv[0].r[0].name, "[heap]");
	heat_free(&rec);
	/* A name as track -J writes it (cli/base/textsafe.h): the bytes come back, not the escapes' text. */
	CHECK(parse("{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x9000\",\"path\":\"/a\\\\xff\\\\x5cx2d\\\\x2d\",\"pages\":2,"
		    "\"written\":8192,\"huge\":0}]}", &rec, err) == 0);
	CHECK_STR(rec.iv[0].r[0].name, "/a\xff\\x2d\\x2d");
	heat_free(&rec);
	return T_PASS;
}

static void put_str(void *ctx, const char *s, size_t n)
{
	strncat(ctx, s, n);
}

/*
 * A name read back from track -J is the name track had: every byte from 01 to ff, as TS_JSON
 * writes it (control bytes as \u00XX, \t, \n), comes back as itself, so render --heat draws it
 * as render draws a live process's names (before, \u00XX became '?' and \t a blank).
 */
static int recording_names_round_trip(void)
{
	static char doc[16384], want[256];
	struct heat_rec rec;
	char err[256];
	int i;

	for (i = 1; i < 256; i++)
		want[i - 1] = (char)i;
	strcpy(doc, "{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x9000\",\"path\":\"");
	ts_escape(TS_JSON, want, put_str, doc);
	strcat(doc, "\",\"pages\":2,\"written\":8192,\"huge\":0}]}");
	CHECK(parse(doc, &rec, err) == 0);
	CHECK(rec.iv[0].r[0].name && !strcmp(rec.iv[0].r[0].name, want));
	heat_free(&rec);
	/* What another JSON writer may send: a character as \uXXXX is its UTF-8. */
	CHECK(parse("{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x9000\",\"path\":\"\\u00e9\\u20ac\\/\","
		    "\"pages\":2,\"written\":8192,\"huge\":0}]}", &rec, err) == 0);
	CHECK_STR(rec.iv[0].r[0].name, "\xc3\xa9\xe2\x82\xac/");
	heat_free(&rec);
	return T_PASS;
}

static int recording_wss(void)
{
	struct heat_rec rec;
	char err[256];
	const char *doc = "{\"wss\":[{\"mapping\":\"total\",\"start\":null,\"end\":null,\"rss\":8192,\"accessed\":4096,"
			  "\"children\":[{\"mapping\":\"/bin/x\",\"start\":\"0x1000\",\"end\":\"0x3000\",\"rss\":8192,"
			  "\"accessed\":4096,\"pct\":50.0}]}]}\n";
	char two[1024];

	snprintf(two, sizeof(two), "%s%s", doc, doc);
	CHECK(parse(two, &rec, err) == 0);
	CHECK_STR(rec.kind, "wss");
	CHECK_EQ_U64(rec.n, 2);
	CHECK_EQ_U64(rec.iv[1].n, 1);
	CHECK_EQ_U64(rec.iv[1].r[0].bytes, 4096);
	CHECK(rec.per_mapping);
	heat_free(&rec);
	return T_PASS;
}

/* A `wss PID INTERVAL COUNT -J` series: one line per window, its "t" before its "wss": still wss. */
static int recording_wss_series(void)
{
	struct heat_rec rec;
	char err[256];
	const char *lines = "{\"index\":1,\"t\":0.200,\"method\":\"referenced\",\"rss\":8192,\"accessed\":4096,"
			    "\"wss\":[{\"mapping\":\"/bin/x\",\"start\":\"0x1000\",\"end\":\"0x3000\",\"rss\":8192,"
			    "\"accessed\":4096,\"pct\":50.0}]}\n"
			    "{\"index\":2,\"t\":0.400,\"method\":\"referenced\",\"rss\":8192,\"accessed\":8192,"
			    "\"wss\":[{\"mapping\":\"/bin/x\",\"start\":\"0x1000\",\"end\":\"0x3000\",\"rss\":8192,"
			    "\"accessed\":8192,\"pct\":100.0}]}\n";

	CHECK(parse(lines, &rec, err) == 0);
	CHECK_STR(rec.kind, "wss");
	CHECK_EQ_U64(rec.n, 2);
	CHECK_EQ_U64(rec.iv[1].n, 1);
	CHECK_EQ_U64(rec.iv[1].r[0].bytes, 8192);
	CHECK(rec.per_mapping);
	heat_free(&rec);
	return T_PASS;
}

/* Hostile recordings: one reason each, never a crash, nothing kept. */
static int recording_hostile(void)
{
	static const char *const bad[] = {
		"",
		"   \n",
		"[1,2]",
		"{}",
		"{\"t\":1,\"ranges\":[{\"start\":\"0x3000\",\"end\":\"0x1000\"}]}",
		"{\"t\":1,\"ranges\":[{\"start\":\"0x1000\",\"end\":\"0x",
		"{\"t\":1,\"ranges\":[{\"start\":\"1000\",\"end\":\"0x2000\"}]}",
		"{\"t\":1,\"ranges\":[{\"start\":\"0x10000000000000000\",\"end\":\"0x2000\"}]}",
		"{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x2000\",\"written\":-5}]}",
		"{\"t\":1,\"maps\":[{\"start\":\"0x1000\",\"end\":\"0x2000\",\"written\":1e300}]}",
		"{\"t\":1}{\"wss\":[]}",
		"{\"x\":1}",
		"{\"t\":1,\"ranges\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		"{\"t\":1,\"s\":\"a\x01b\"}",
		"{\"t\":1,\"s\":\"\\u12\"}",
		"{\"t\":1 \"u\":2}",
		"{\"t\":nul}",
		"{\"t\":1,}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct heat_rec rec;
		char err[256];
		int rc = parse(bad[i], &rec, err);

		if (rc != -EINVAL || !err[0])
			printf("  case %zu: rc %d, err \"%s\"\n", i, rc, err);
		CHECK(rc == -EINVAL && err[0]);
		heat_free(&rec);
	}
	return T_PASS;
}

static int escapes(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_EQ_U64(isqrt(0), 0);
	CHECK_EQ_U64(isqrt(99), 9);
	CHECK_EQ_U64(isqrt(UINT64_MAX), 4294967295ULL);
	f = open_memstream(&out, &len);
	rnd_xml_escape(f, "<a&\"b'>\x01\xff");
	fputc('|', f);
	rnd_json_str(f, "\"\\</script>\n\xc3");
	fclose(f);
	/* The one sanitizer's XML and HTML-safe JSON (cli/base/textsafe.h): bad bytes as \xHH text, as in every format. */
	CHECK_STR(out, "&lt;a&amp;&quot;b&#39;&gt;\\x01\\xff|\"\\\"\\\\\\u003c/script\\u003e\\n\\\\xc3\"");
	free(out);
	return T_PASS;
}

T_MAIN(T(layout_huge_gaps), T(cells_exact), T(layout_grouped), T(recording_track),
       T(recording_names_round_trip), T(recording_wss), T(recording_wss_series),
       T(recording_hostile), T(escapes))
