/* render_heat.c - time heat maps from `pagemap track -J` and `pagemap wss -J` recordings: exact page counts. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "out_human.h"	/* out_human_size: the sizes the tables print */
#include "render.h"

/* Viridis, light to dark: colour-blind safe and readable in grey; darker is a larger share of the cell. */
static const char *const ramp[8] = { "#FDE725", "#A0DA39", "#4AC16D", "#1FA187",
				     "#277F8E", "#365C8D", "#46327E", "#440154" };

static int cmp_range(const void *a, const void *b)
{
	const struct heat_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Without a process: every recorded range, merged where they overlap, is a band ("written" or the path). */
int heat_axis_from_rec(struct rnd_model *m, const struct heat_rec *rec)
{
	struct heat_range *all = malloc((rec->nranges ? rec->nranges : 1) * sizeof(*all));
	size_t i, j, n = 0;
	int rc = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < rec->n; i++)
		for (j = 0; j < rec->iv[i].n; j++)
			all[n++] = rec->iv[i].r[j];
	qsort(all, n, sizeof(*all), cmp_range);
	for (i = 0; i < n && rc == 0; i = j) {
		uint64_t s = all[i].start / m->page_size * m->page_size, e = all[i].end;
		const char *name = all[i].name ? all[i].name : rec->per_mapping ? "" : "written";

		for (j = i + 1; j < n && all[j].start < e; j++)
			e = all[j].end > e ? all[j].end : e;
		e = (e + m->page_size - 1) / m->page_size * m->page_size;
		if ((rc = rnd_add_map(m, s, e, "", name, strlen(name))) == 0)
			m->mapped += e - s;
	}
	free(all);
	return rc;
}

/* Calls @fn for each piece of [start, end) on the axis: segment, first and end page. */
static uint64_t on_axis(const struct rnd_model *m, uint64_t start, uint64_t end,
			void (*fn)(void *d, const struct rnd_seg *s, uint64_t o0, uint64_t o1), void *d)
{
	size_t lo = 0, hi = m->nmaps;
	uint64_t pages = 0;

	while (lo < hi) {	/* the first mapping that ends after start */
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m->nmaps && m->maps[lo].start < end; lo++) {
		const struct rnd_map *mp = &m->maps[lo];
		uint64_t s = start > mp->start ? start : mp->start, e = end < mp->end ? end : mp->end;
		uint64_t o0 = mp->seg_page + (s - mp->start) / m->page_size;
		uint64_t o1 = mp->seg_page + (e - mp->start + m->page_size - 1) / m->page_size;

		if (fn)
			fn(d, &m->segs[mp->seg], o0, o1);
		pages += o1 - o0;
	}
	return pages;
}

struct spread {
	const struct rnd_model *m;
	uint64_t *row;
	uint64_t pages, onaxis, cum;	/* pages to give out over the onaxis pages; pages passed so far */
};

/* Pages [o0, o1) of a segment: each cell gets its exact share (cumulative rounding keeps the total). */
static void spread_piece(void *d, const struct rnd_seg *s, uint64_t o0, uint64_t o1)
{
	struct spread *sp = d;
	uint64_t i = (uint64_t)(((unsigned __int128)(o0 + 1) * s->ncells + s->pages - 1) / s->pages) - 1;

	while (o0 < o1 && i < s->ncells) {
		uint64_t next = (uint64_t)((unsigned __int128)(i + 1) * s->pages / s->ncells), upto = next < o1 ? next : o1;
		uint64_t before = (uint64_t)((unsigned __int128)sp->pages * sp->cum / sp->onaxis);

		sp->cum += upto - o0;
		sp->row[s->cell + i] += (uint64_t)((unsigned __int128)sp->pages * sp->cum / sp->onaxis) - before;
		o0 = upto;
		i++;
	}
}

uint64_t *heat_grid(const struct rnd_model *m, struct heat_rec *rec)
{
	uint64_t *grid = calloc(rec->n * (m->ncells ? m->ncells : 1), sizeof(*grid));
	size_t i, j;

	if (!grid)
		return NULL;
	rec->off_axis = 0;
	for (i = 0; i < rec->n; i++) {
		for (j = 0; j < rec->iv[i].n; j++) {
			const struct heat_range *r = &rec->iv[i].r[j];
			struct spread sp = { m, grid + i * m->ncells, r->bytes / m->page_size, 0, 0 };
			uint64_t all = (r->end - r->start + m->page_size - 1) / m->page_size;

			sp.onaxis = on_axis(m, r->start, r->end, NULL, NULL);
			if (!sp.onaxis) {
				rec->off_axis += sp.pages;
				continue;
			}
			if (!rec->per_mapping)	/* exact ranges: the pages outside every band are off the axis */
				sp.pages = sp.onaxis, rec->off_axis += all - sp.onaxis;
			on_axis(m, r->start, r->end, spread_piece, &sp);
		}
	}
	return grid;
}

static uint64_t cell_pages(const struct rnd_model *m, uint32_t c)
{
	long si = rnd_seg_of_cell(m, c);
	const struct rnd_seg *s;
	uint64_t k;

	if (si < 0 || (s = &m->segs[si])->gap)
		return 0;
	k = c - s->cell;
	return (uint64_t)((unsigned __int128)(k + 1) * s->pages / s->ncells) -
	       (uint64_t)((unsigned __int128)k * s->pages / s->ncells);
}

/* 0 for nothing, else 1..8 by the share of the cell's pages. */
static unsigned heat_level(uint64_t pages, uint64_t of)
{
	unsigned l;

	if (!pages)
		return 0;
	l = of ? (unsigned)((pages * 8 + of - 1) / of) : 8;
	return l < 1 ? 1 : l > 8 ? 8 : l;
}

#define HX 78		/* left: time labels */
#define HY 76		/* first interval's top */

static void heat_band_labels(FILE *f, const struct rnd_model *m, uint32_t height)
{
	char name[64], sz[16];
	size_t i;

	for (i = 0; i < m->nsegs; i++) {
		const struct rnd_seg *s = &m->segs[i];

		if (s->gap) {
			if (!s->ncells)
				continue;
			fprintf(f, "<rect x=\"%u\" y=\"%d\" width=\"%u\" height=\"%u\" fill=\"url(#gap)\"><title>gap %s</title></rect>\n",
				HX + s->cell, HY, s->ncells, height, out_human_size(s->end - s->start, sz, sizeof(sz)));
			continue;
		}
		fprintf(f, "<path d=\"M%u %dv%u\" stroke=\"#333333\"/>", HX + s->cell, HY - 14, 10);
		if (s->ncells >= 30) {
			const char *base = strrchr(m->maps[s->first_map].name, '/');

			base = base && base[1] ? base + 1 : m->maps[s->first_map].name;
			snprintf(name, sizeof(name), "%.*s", (int)(s->ncells / 6), s->nmaps > 1 ? "mappings" : base);
			fprintf(f, "<text x=\"%u\" y=\"%d\">", HX + s->cell + 2, HY - 6);
			rnd_xml_escape(f, name);
			fputs("</text>", f);
		}
		fputc('\n', f);
	}
}

/* What the cells count, in words. */
static const char *heat_what(const struct heat_rec *rec)
{
	return rec->what ? rec->what : strcmp(rec->kind, "wss") ? "written" : "accessed";
}

/* Bytes of mappings a series could not compare (in one snapshot of an interval only). */
static uint64_t heat_unmatched(const struct heat_rec *rec)
{
	uint64_t n = 0;

	for (size_t i = 0; i < rec->n; i++)
		n += rec->iv[i].unmatched;
	return n;
}

int heat_write_svg(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid)
{
	uint32_t rh = rec->n ? 600 / (uint32_t)rec->n : 14, w, h, level, row;
	uint64_t total = 0;
	char a[16];
	size_t i;

	rh = rh < 2 ? 2 : rh > 14 ? 14 : rh;
	w = HX + m->width + 8;
	h = HY + (uint32_t)rec->n * rh + 60;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		   "height=\"%u\" viewBox=\"0 0 %u %u\" font-family=\"monospace\" font-size=\"10\">\n<title>pagemap render: ",
		w, h, w, h);
	rnd_xml_escape(f, m->source);
	fputs("</title>\n<defs><pattern id=\"gap\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
	      "<path d=\"M0 4L4 0\" stroke=\"#999999\" stroke-width=\"1\"/></pattern></defs>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"/>\n", f);
	for (i = 0; i < rec->n * m->ncells; i++)
		total += grid[i];
	fputs("<text x=\"8\" y=\"16\" font-weight=\"bold\">", f);
	rnd_xml_escape(f, m->source);
	fprintf(f, ": %zu interval%s, %" PRIu64 " page%s %s%s</text>\n", rec->n, rec->n == 1 ? "" : "s", total,
		total == 1 ? "" : "s", heat_what(rec),
		rec->off_axis ? "" : " (all on the axis)");
	fprintf(f, "<text x=\"8\" y=\"32\">time down, address across (bands follow the mappings, gaps collapsed); "
		   "%s%s</text>\n", rec->per_mapping ? "counts per mapping, spread evenly over its band" :
		   "exact pages per cell", m->group > 1 ? "; aggregated: bands of several mappings" : "");
	if (rec->off_axis)
		fprintf(f, "<text x=\"8\" y=\"46\">%" PRIu64 " pages lie in no mapping of the axis</text>\n", rec->off_axis);
	else if (heat_unmatched(rec))
		fprintf(f, "<text x=\"8\" y=\"46\">%s in mappings that are not in both snapshots of an interval: not "
			   "compared</text>\n", out_human_size(heat_unmatched(rec), a, sizeof(a)));
	heat_band_labels(f, m, (uint32_t)rec->n * rh);
	for (level = 1; level <= 8; level++) {
		bool any = false;

		for (row = 0; row < rec->n; row++) {
			uint32_t c = 0, last_end = 0;
			bool in_row = false;

			while (c < m->ncells) {
				uint32_t e = c;

				if (heat_level(grid[row * m->ncells + c], cell_pages(m, c)) != level) {
					c++;
					continue;
				}
				while (e + 1 < m->ncells && heat_level(grid[row * m->ncells + e + 1], cell_pages(m, e + 1)) == level)
					e++;
				if (!any)
					fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%u\" d=\"", ramp[level - 1], rh);
				if (!in_row)
					fprintf(f, "M%u %uh%u", HX + c, HY + row * rh + rh / 2, e - c + 1);
				else
					fprintf(f, "m%u 0h%u", HX + c - last_end, e - c + 1);
				any = in_row = true;
				last_end = HX + e + 1;
				c = e + 1;
			}
		}
		if (any)
			fputs("\"/>\n", f);
	}
	for (row = 0; row < rec->n; row += (rh >= 12 ? 1 : (12 + rh - 1) / rh))
		fprintf(f, "<text x=\"8\" y=\"%u\">%.3fs</text>\n", HY + row * rh + rh / 2 + 4, rec->iv[row].t);
	fprintf(f, "<g id=\"legend\">");
	for (level = 0; level < 8; level++)
		fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"24\" height=\"10\" fill=\"%s\"/>", 8 + level * 26,
			HY + (uint32_t)rec->n * rh + 16, ramp[level]);
	fprintf(f, "<text x=\"%d\" y=\"%u\">share of the cell's pages: 1/8 ... 8/8; one cell is %s or more</text></g>\n",
		8 + 8 * 26 + 6, HY + (uint32_t)rec->n * rh + 25, out_human_size(m->page_size, a, sizeof(a)));
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

int heat_write_json(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid)
{
	size_t i, c;

	fputs("{\"heatmap\":{\"source\":", f);
	rnd_json_str(f, m->source);
	fprintf(f, ",\"kind\":\"%s\",\"exact\":%s,\"page_size\":%" PRIu64 ",\"cells\":%u,\"off_axis_pages\":%" PRIu64
		   ",", rec->kind, rec->per_mapping ? "false" : "true", m->page_size, m->ncells, rec->off_axis);
	if (rec->what)
		fprintf(f, "\"what\":\"%s\",", rec->what);
	fputs("\n\"segments\":[", f);
	for (i = 0; i < m->nsegs; i++) {
		const struct rnd_seg *s = &m->segs[i];

		fprintf(f, "%s\n{\"kind\":\"%s\",\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"cell\":%u,\"cells\":%u",
			i ? "," : "", s->gap ? "gap" : "band", s->start, s->end, s->cell, s->ncells);
		if (!s->gap) {
			fputs(",\"name\":", f);
			rnd_json_str(f, s->nmaps > 1 ? "" : m->maps[s->first_map].name);
		}
		fputc('}', f);
	}
	fputs("],\n\"intervals\":[", f);
	for (i = 0; i < rec->n; i++) {
		bool first = true;

		fprintf(f, "%s\n{\"t\":%.3f,", i ? "," : "", rec->iv[i].t);
		if (rec->what)	/* a series: what could not be compared */
			fprintf(f, "\"unmatched_bytes\":%" PRIu64 ",", rec->iv[i].unmatched);
		fputs("\"cells\":[", f);
		for (c = 0; c < m->ncells; c++) {
			if (!grid[i * m->ncells + c])
				continue;
			fprintf(f, "%s{\"cell\":%zu,\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"pages\":%" PRIu64 "}",
				first ? "" : ",", c, m->cells[c].start, m->cells[c].end, grid[i * m->ncells + c]);
			first = false;
		}
		fputs("]}", f);
	}
	fputs("]}}\n", f);
	return ferror(f) ? -EIO : 0;
}

int heat_write_ansi(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid)
{
	size_t i;
	uint32_t c;

	rnd_term_str(f, m->source);	/* snapshot file names: as rnd_write_ansi() writes them */
	fprintf(f, ": %zu interval%s, time down, address across\n%8s ", rec->n, rec->n == 1 ? "" : "s", "");
	for (c = 0; c < m->ncells; c++) {
		long si = rnd_seg_of_cell(m, c);

		fputc(si < 0 ? ' ' : m->segs[si].gap ? '~' : m->segs[si].cell == c ? '|' : '-', f);
	}
	fputc('\n', f);
	for (i = 0; i < rec->n; i++) {
		unsigned last = 0;

		fprintf(f, "%7.3fs ", rec->iv[i].t);
		for (c = 0; c < m->ncells; c++) {
			unsigned l = heat_level(grid[i * m->ncells + c], cell_pages(m, c)), r, g, b;

			if (l != last && !l)
				fputs("\033[0m", f);
			else if (l != last) {
				sscanf(ramp[l - 1] + 1, "%2x%2x%2x", &r, &g, &b);
				fprintf(f, "\033[48;2;%u;%u;%um", r, g, b);
			}
			fputc(' ', f);
			last = l;
		}
		fputs("\033[0m\n", f);
	}
	return ferror(f) ? -EIO : 0;
}
