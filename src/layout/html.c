// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `lever layout report --html`: a heat map of each sampled struct (issue
 * 17; spec autocpa.md §8.7 output). Two tables side by side: the layout as
 * it is and the suggested one, one row per field, grouped by cache line
 * (a line's rows share a band, its header says which line), each row
 * coloured by the field's adjusted samples relative to the hottest field of
 * the struct; raw and adjusted counts as numbers beside. One
 * self-contained page: inline CSS, a small inline script (field search and
 * the count of structs shown), no external resources.
 */
#include <stdlib.h>

#include "layout/layout.h"
#include "report/report.h"

static const char style[] =
    "<style>\n"
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:80em;padding:0 1em;"
    "color:#222}\n"
    ".pair{display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start}\n"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\n"
    "th,td{padding:.2em .5em;text-align:left;border-bottom:1px solid #eee}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "tr.line th{background:#f3f3f3;font-weight:600;border-top:2px solid #999}\n"
    "tr.hole td{color:#999;font-style:italic}\n"
    "tr.hidden{display:none}\n"
    ".legend span{display:inline-block;width:2em;height:1em;vertical-align:middle;"
    "border:1px solid #ccc}\n"
    "code{font-family:ui-monospace,monospace}\n"
    "</style>\n";

/* The script: counts what is shown and filters rows by a field name typed in. */
static const char script[] =
    "<script>\n"
    "(function(){\n"
    "  var structs=document.querySelectorAll('section.struct');\n"
    "  document.getElementById('count').textContent=String(structs.length);\n"
    "  var box=document.getElementById('filter');\n"
    "  box.addEventListener('input',function(){\n"
    "    var q=box.value.toLowerCase();\n"
    "    document.querySelectorAll('tr.field').forEach(function(r){\n"
    "      var hit=!q||r.getAttribute('data-field').toLowerCase().indexOf(q)>=0;\n"
    "      r.classList.toggle('hidden',!hit);\n"
    "    });\n"
    "  });\n"
    "})();\n"
    "</script>\n";

/* White to red by heat in [0, 1]. */
static void heat_colour(FILE *f, double heat)
{
	int gb = (int)(255.0 - 200.0 * (heat < 0 ? 0 : heat > 1 ? 1 : heat));

	fprintf(f, "background:rgb(255,%d,%d)", gb, gb);
}

static void field_row(FILE *f, const struct layout_field *fl, uint32_t offset, uint64_t hottest)
{
	fprintf(f, "<tr class=\"field\" data-field=\"");
	report_html_escape(f, fl->name);
	fprintf(f, "\" style=\"");
	heat_colour(f, hottest ? (double)fl->adj / (double)hottest : 0);
	fprintf(f, "\"><td class=\"num\">%u</td><td class=\"num\">%u</td><td><code>", offset,
		fl->size);
	report_html_escape(f, fl->type);
	fprintf(f, " ");
	report_html_escape(f, fl->name);
	report_html_escape(f, fl->array_suffix);
	fprintf(f, "</code></td><td class=\"num\">%llu</td><td class=\"num\">%llu</td></tr>\n",
		(unsigned long long)fl->raw, (unsigned long long)fl->adj);
}

/* One layout: fields in `order` at `offsets`, a header row per cache line, holes shown. */
static void layout_table(FILE *f, const char *caption, const struct layout_struct *s,
			 const uint32_t *order, const uint32_t *offsets, uint32_t size,
			 uint64_t hottest)
{
	uint32_t end = 0;
	long line = -1;

	fprintf(f, "<table><caption>");
	report_html_escape(f, caption);
	fprintf(f,
		" (%u bytes)</caption>\n<tr><th>offset</th><th>size</th><th>field</th>"
		"<th>raw</th><th>adjusted</th></tr>\n",
		size);
	for (size_t k = 0; k < s->n_fields; k++) {
		const struct layout_field *fl = &s->fields[order[k]];

		if ((long)(offsets[k] / LAYOUT_LINE_SIZE) != line) {
			line = offsets[k] / LAYOUT_LINE_SIZE;
			fprintf(f,
				"<tr class=\"line\"><th colspan=\"5\">cache line %ld</th></tr>\n",
				line);
		}
		if (offsets[k] > end)
			fprintf(f,
				"<tr class=\"hole\"><td class=\"num\">%u</td><td class=\"num\">%u"
				"</td><td colspan=\"3\">hole</td></tr>\n",
				end, offsets[k] - end);
		field_row(f, fl, offsets[k], hottest);
		end = offsets[k] + fl->size;
	}
	if (size > end)
		fprintf(f,
			"<tr class=\"hole\"><td class=\"num\">%u</td><td class=\"num\">%u</td>"
			"<td colspan=\"3\">padding</td></tr>\n",
			end, size - end);
	fprintf(f, "</table>\n");
}

static const char *algorithm_name(enum layout_algorithm a)
{
	return a == LAYOUT_ALGO_MISSES	  ? "by misses"
	       : a == LAYOUT_ALGO_THREADS ? "by threads"
					  : "unchanged";
}

/* "<p class="kept">keep the current layout: why</p>", escaped. */
static int keep_reason(FILE *f, const struct layout_suggestion *sg, const struct layout_units *u)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -1;
	layout_print_keep_reason(m, sg, u);
	if (fclose(m)) {
		free(text);
		return -1;
	}
	fprintf(f, "<p class=\"kept\">");
	report_html_escape(f, text);
	fprintf(f, ".</p>\n");
	free(text);
	return 0;
}

static int struct_section(FILE *f, const struct layout_suggestion *sg, const struct layout_units *u)
{
	const struct layout_struct *s = sg->s;
	uint32_t *order = malloc((s->n_fields + 1) * sizeof(*order));
	uint32_t *offsets = malloc((s->n_fields + 1) * sizeof(*offsets));
	uint64_t hottest = 0;

	if (!order || !offsets) {
		free(order);
		free(offsets);
		return -1;
	}
	for (size_t k = 0; k < s->n_fields; k++) {
		order[k] = (uint32_t)k;
		offsets[k] = s->fields[k].offset;
		if (s->fields[k].adj > hottest)
			hottest = s->fields[k].adj;
	}
	fprintf(f, "<section class=\"struct\"><h2>struct ");
	report_html_escape(f, s->name);
	fprintf(f, "</h2>\n<p>%llu %s; suggestion %s saves %llu %s",
		(unsigned long long)s->total_raw, u->count, algorithm_name(sg->algorithm),
		(unsigned long long)sg->benefit, u->count);
	if (u->period > 1)
		fprintf(f, " (about %.4g %s)", (double)sg->benefit * (double)u->period, u->scaled);
	fprintf(f, "; modelled %s %llu → %llu.</p>\n", u->count,
		(unsigned long long)sg->modelled_before, (unsigned long long)sg->modelled_after);
	if (sg->algorithm == LAYOUT_ALGO_ORIGINAL && keep_reason(f, sg, u))
		return -1;
	fprintf(f, "<div class=\"pair\">\n");
	layout_table(f, "as it is", s, order, offsets, s->size, hottest);
	layout_table(f, "suggested", s, sg->order, sg->offsets, sg->size, hottest);
	fprintf(f, "</div></section>\n");
	free(order);
	free(offsets);
	return 0;
}

/* Lines two threads touch, one writing, from the data addresses (sharing.c). */
static void shared_lines_section(FILE *f, const struct layout_record *rec,
				 const struct layout_units *u, const struct layout_params *params)
{
	size_t all = layout_find_shared_lines(rec, NULL, 0), n = 0, left = 0;
	struct layout_shared_line *lines = all ? calloc(all, sizeof(*lines)) : NULL;
	uint64_t total = 0;

	if (!lines)
		return;
	layout_find_shared_lines(rec, lines, all);
	for (size_t i = 0; i < rec->n_accesses; i++)
		total += rec->accesses[i].count;
	/* the significant ones first, in their order (issue 17 B2: the rule of the text report) */
	for (size_t i = 0; i < all; i++) {
		if (lines[i].sharing >= params->sharing_min_samples &&
		    (double)lines[i].sharing >= params->sharing_min_share * (double)total)
			lines[n++] = lines[i];
		else
			left++;
	}
	fprintf(f, "<section class=\"shared\"><h2>Data lines shared between threads</h2>\n"
		   "<p>From the samples' data addresses: lines two threads touched, one of them "
		   "writing; <em>false</em> when no writer's bytes meet the other thread's.</p>\n");
	if (n)
		fprintf(f,
			"<table><tr><th>line</th><th>sharing</th><th>%s</th><th>threads: bytes "
			"(field), %s, writes</th></tr>\n",
			u->count, u->count);
	for (size_t i = 0; i < n && i < 20; i++) {
		const struct layout_shared_line *l = &lines[i];

		fprintf(f,
			"<tr><td><code>%#llx</code></td><td>%s</td><td class=\"num\">%llu</td><td>",
			(unsigned long long)l->line, l->false_sharing ? "false" : "true",
			(unsigned long long)l->count);
		for (size_t k = 0; k < l->n_threads; k++) {
			const struct layout_line_thread *t = &l->threads[k];
			int lo = __builtin_ctzll(t->bytes), hi = 63 - __builtin_clzll(t->bytes);

			fprintf(f, "%sthread %u: %d-%d", k ? "<br>" : "", t->tid, lo, hi);
			if (t->has_field) {
				fprintf(f, " (");
				report_html_escape(f, rec->program.structs[t->struct_index]->name);
				fprintf(f, ".");
				report_html_escape(f, rec->program.structs[t->struct_index]
							  ->fields[t->field_index]
							  .name);
				fprintf(f, ")");
			}
			fprintf(f, ", %llu, %llu", (unsigned long long)t->count,
				(unsigned long long)t->writes);
		}
		fprintf(f, "</td></tr>\n");
	}
	if (n)
		fprintf(f, "</table>%s", n > 20 ? "<p>(the 20 busiest shown)</p>" : "");
	if (left)
		fprintf(f,
			"<p>%zu shared line%s left out: their sharing is below %llu %s or %.3g%% "
			"of the addressed %s.</p>",
			left, left == 1 ? "" : "s", (unsigned long long)params->sharing_min_samples,
			u->count, 100.0 * params->sharing_min_share, u->count);
	fprintf(f, "</section>\n");
	free(lines);
}

int layout_write_html(FILE *f, const char *title, const struct layout_record *rec,
		      const struct layout_suggestion *sg, size_t n,
		      const struct layout_params *params)
{
	struct layout_params defaults;
	uint64_t total = 0;
	struct layout_units u;

	layout_units_for(rec->source, rec->period, &u);
	if (!params) {
		layout_params_default(&defaults);
		params = &defaults;
	}
	for (size_t i = 0; i < rec->n_samples; i++)
		total += rec->samples[i].count;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
		   "lever layout: ");
	report_html_escape(f, title);
	fprintf(f, "</title>\n%s</head>\n<body>\n<h1>Struct layouts: ", style);
	report_html_escape(f, title);
	fprintf(f, "</h1>\n<p>%llu %s", (unsigned long long)total, u.count);
	if (rec->source) {
		fprintf(f, " from ");
		report_html_escape(f, rec->source);
		fprintf(f, " (");
		report_html_escape(f, rec->event);
		fprintf(f, ")");
	}
	fprintf(f,
		", %llu without a reference; <span id=\"count\"></span> structs with samples "
		"shown. Rows are coloured by adjusted %s (Algorithm 3) against the "
		"struct's hottest field.</p>\n",
		(unsigned long long)rec->program.unattributed, u.count);
	fprintf(f, "<p class=\"legend\">cold <span style=\"");
	heat_colour(f, 0);
	fprintf(f, "\"></span><span style=\"");
	heat_colour(f, 0.5);
	fprintf(f, "\"></span><span style=\"");
	heat_colour(f, 1);
	fprintf(f, "\"></span> hot &nbsp; <label>field <input id=\"filter\" "
		   "placeholder=\"name\"></label></p>\n");
	for (size_t i = 0; i < n; i++)
		if (struct_section(f, &sg[i], &u))
			return -1;
	if (!n)
		fprintf(f, "<p>No struct has samples.</p>\n");
	shared_lines_section(f, rec, &u, params);
	fputs(script, f);
	fprintf(f, "</body>\n</html>\n");
	return ferror(f) ? -1 : 0;
}
