/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The report as one self-contained HTML page: a summary of the run, then a
 * chart per line (x: line speedup 0-100%, y: program speedup; points with
 * their bootstrap intervals and the fitted line). The charts are drawn here
 * as SVG, so the page reads without scripts; a few lines of inline JS sort
 * them (slope, impact, name) and pick the progress point shown. Nothing is
 * fetched.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"
#include "report/report.h"

static const char page_style[] =
    "<style>\n"
    "body{max-width:none;margin:1em 2em}\n"
    "#charts{display:flex;flex-wrap:wrap;gap:1em}\n"
    ".line{border:1px solid #ddd;border-radius:4px;padding:.5em .8em;width:460px}\n"
    ".line h3{font-size:1em;margin:.2em 0;word-break:break-all}\n"
    ".line p{margin:.2em 0;font-size:.9em;color:#444}\n"
    ".badge{background:#d62728;color:#fff;border-radius:3px;padding:0 .4em;font-size:.8em}\n"
    ".controls{margin:1em 0}\n"
    ".controls label{margin-right:1.5em}\n"
    "</style>\n";

/* Sorting and progress point selection; the charts carry their keys as data-*. */
static const char page_script[] =
    "(function () {\n"
    "  var box = document.getElementById('charts');\n"
    "  var sortBy = document.getElementById('sort');\n"
    "  var point = document.getElementById('point');\n"
    "  function key(e, k) {\n"
    "    var v = parseFloat(e.getAttribute('data-' + k));\n"
    "    return isNaN(v) ? -Infinity : v;\n"
    "  }\n"
    "  function byName(a, b) {\n"
    "    var x = a.getAttribute('data-name'), y = b.getAttribute('data-name');\n"
    "    return x < y ? -1 : x > y ? 1 : 0;\n"
    "  }\n"
    "  function update() {\n"
    "    var k = sortBy.value, items = Array.prototype.slice.call(box.children), shown = 0;\n"
    "    items.sort(function (a, b) {\n"
    "      if (k === 'name') return byName(a, b);\n"
    "      return (key(b, k) - key(a, k)) || byName(a, b);\n"
    "    });\n"
    "    items.forEach(function (e) {\n"
    "      box.appendChild(e);\n"
    "      var on = point.value === 'all' || e.getAttribute('data-point') === point.value;\n"
    "      e.style.display = on ? '' : 'none';\n"
    "      if (on) e.querySelector('.rank').textContent = ++shown + '.';\n"
    "    });\n"
    "    document.getElementById('count').textContent = shown;\n"
    "  }\n"
    "  sortBy.addEventListener('change', update);\n"
    "  point.addEventListener('change', update);\n"
    "  update();\n"
    "})();";

static void add_row(struct report_table *t, const char *name, const char *value)
{
	report_table_row(t);
	report_table_cell(t, name);
	report_table_cell(t, value);
}

/* Sum of the effective durations of all experiments, ns. */
static double experiment_time(const struct causal_profile *p)
{
	double sum = 0;

	for (size_t i = 0; i < p->n_experiments; i++)
		sum += (double)p->experiments[i].duration;
	return sum;
}

static void run_summary(FILE *f, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	static const char *const headers[] = {"", ""};
	struct report_table *t = report_table_new(2, headers);
	uint64_t period = 0;
	const char *sampler = causal_profile_sampler(p, &period);
	char buf[512], a[32], b[32];

	if (!t)
		return;
	snprintf(buf, sizeof(buf), "%zu", p->n_runs);
	add_row(t, "runs", buf);
	snprintf(buf, sizeof(buf), "%zu (%s of effective experiment time)", p->n_experiments,
		 report_format_time(experiment_time(p) / 1e9, a, sizeof(a)));
	add_row(t, "experiments", buf);
	if (s->runtime_ns > 0)
		add_row(t, "duration (runs' runtime summed)",
			report_format_time((double)s->runtime_ns / 1e9, a, sizeof(a)));
	if (sampler)
		snprintf(buf, sizeof(buf), "%s, %llu us period", sampler,
			 (unsigned long long)(period / 1000));
	add_row(t, "sampler", sampler ? buf : "unknown (not a lever profile, or mixed)");
	buf[0] = '\0';
	for (size_t i = 0; opt && i < opt->n_files; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "", opt->files[i]);
	}
	add_row(t, "files", buf);
	add_row(t, "phase correction",
		!s->phase_correction ? "off"
		: s->runtime_ns > 0  ? "on (paper eq. 8)"
				     : "on, but the profile has no runtime records");
	snprintf(buf, sizeof(buf),
		 "%.0f%%, percentile bootstrap over experiments, %u resamples, seed %llu",
		 100 * s->level, s->resamples, (unsigned long long)s->seed);
	add_row(t, "intervals", buf);
	snprintf(buf, sizeof(buf), "%s",
		 !s->trim ? "off (--no-trim)" : "on (Tukey far-out fences per bucket)");
	if (s->trim) {
		size_t len = strlen(buf);

		snprintf(buf + len, sizeof(buf) - len, ", %zu set aside", s->trimmed_experiments);
	}
	add_row(t, "far-out experiments", buf);
	snprintf(a, sizeof(a), "%zu", s->dropped_no_baseline);
	snprintf(b, sizeof(b), "%zu", s->dropped_few_speedups);
	snprintf(buf, sizeof(buf),
		 "%zu (dropped: %s without a 0%% baseline, %s with too few speedups)", s->n_series,
		 a, b);
	add_row(t, "lines with a curve", buf);
	report_table_print_html(t, f);
	report_table_free(t);
}

static void controls(FILE *f, const struct causal_profile *p, const struct causal_summary *s)
{
	fputs("<div class=\"controls\"><label>Sort by <select id=\"sort\">"
	      "<option value=\"slope\">slope</option>"
	      "<option value=\"impact\">impact</option>"
	      "<option value=\"name\">name</option></select></label>\n"
	      "<label>Progress point <select id=\"point\"><option value=\"all\">all</option>",
	      f);
	for (size_t i = 0; i < p->n_points; i++) {
		fprintf(f, "<option value=\"%zu\">", i);
		report_html_escape(f, causal_profile_string(p, p->points[i].name));
		fprintf(f, " (%s)</option>", causal_point_kind_name(p->points[i].kind));
	}
	fputs("</select></label> <span id=\"count\"></span> lines shown</div>\n", f);
}

/* A number for a data-* attribute (NaN as "nan", which the script ranks last). */
static void data_number(FILE *f, const char *name, double v)
{
	if (isfinite(v))
		fprintf(f, " data-%s=\"%.6g\"", name, v);
	else
		fprintf(f, " data-%s=\"nan\"", name);
}

static void line_chart(FILE *f, const struct causal_profile *p, const struct causal_series *c,
		       size_t rank)
{
	struct report_xy_point *pts = malloc((c->n_buckets + 1) * sizeof(*pts));
	struct report_xy_chart chart = {
	    .n = c->n_buckets,
	    .x_lo = 0,
	    .x_hi = 1,
	    .y_clip_lo = -1,
	    .y_clip_hi = 2,
	    .x_scale = 100,
	    .y_scale = 100,
	    .has_line = true,
	    .line_a = c->intercept,
	    .line_b = c->slope,
	    .x_label = "line speedup (%)",
	    .y_label = "program speedup (%)",
	};

	if (!pts)
		return;
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];

		pts[i] = (struct report_xy_point){b->speedup_pct / 100.0, b->program_speedup,
						  b->ci_low, b->ci_high};
	}
	chart.points = pts;
	fputs("<div class=\"line\" data-name=\"", f);
	report_html_escape(f, causal_profile_string(p, c->selected));
	fprintf(f, "\" data-point=\"%u\"", c->point);
	data_number(f, "slope", c->slope);
	data_number(f, "impact", c->impact);
	fprintf(f, ">\n<h3><span class=\"rank\">%zu.</span> ", rank);
	report_html_escape(f, causal_profile_string(p, c->selected));
	if (c->contention)
		fputs(" <span class=\"badge\">contention</span>", f);
	fputs("</h3>\n<p>", f);
	report_html_escape(f, causal_profile_string(p, p->points[c->point].name));
	fprintf(f,
		" (%s) &middot; slope %+.2f [%+.2f, %+.2f] &middot; impact %+.1f%% &middot; "
		"max %+.1f%% &middot; %zu points, %u experiments%s</p>\n",
		causal_point_kind_name(p->points[c->point].kind), c->slope, c->slope_low,
		c->slope_high, 100 * c->impact, 100 * c->max_speedup, c->n_buckets, c->experiments,
		c->phase_corrected ? ", phase-corrected" : "");
	report_svg_xy(f, &chart);
	fputs("</div>\n", f);
	free(pts);
}

void causal_report_html(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	size_t shown = s->n_series;

	if (opt && opt->top && opt->top < shown)
		shown = opt->top;
	report_html_begin(out, "lever causal report");
	fputs(page_style, out);
	report_html_heading(out, 1, "lever causal report");
	run_summary(out, p, s, opt);
	report_html_paragraph(out, "Each chart predicts how much faster the program would run "
				   "(y) if one line were made faster (x). Bars are confidence "
				   "intervals; the line is the least-squares fit whose slope ranks "
				   "the lines. A line sloping down is contention: speeding it up "
				   "slows the program.");
	if (s->n_series == 0) {
		report_html_paragraph(out, "No line has a usable curve yet: a line needs "
					   "experiments at 0% and at several other speedups.");
		report_html_end(out);
		return;
	}
	controls(out, p, s);
	fputs("<div id=\"charts\">\n", out);
	for (size_t i = 0; i < shown; i++)
		line_chart(out, p, &s->series[i], i + 1);
	fputs("</div>\n", out);
	report_html_script(out, page_script);
	report_html_end(out);
}
