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
    ".badge.thin{background:#888}\n"
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
    "      var thin = (a.hasAttribute('data-thin') ? 1 : 0) - (b.hasAttribute('data-thin') ? 1 : "
    "0);\n"
    "      return thin || (key(b, k) - key(a, k)) || byName(a, b);\n"
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

static const char line_intro[] =
    "Each chart predicts how much faster the program would run (y) if one line were made "
    "faster (x). Bars are confidence intervals; the red curve is the fitted model (a rise "
    "that may level off, as when another path becomes critical) with its interval shaded. "
    "Hollow grey points and lines marked <i>thin evidence</i> rest on too few experiments or "
    "visits, or have intervals wider than 10 points: run longer before trusting them. A "
    "curve going down is contention: speeding the line up slows the program.";

static const char per_load_intro[] =
    "Each chart predicts how much faster the program would run (y) if one line were made "
    "faster (x), with one curve per load level (color and marker shape; see the legend), each "
    "against the 0% experiments at the same load. Bars are confidence intervals. A curve that "
    "rises with load marks a line that matters more at scale; the lines are ranked by their "
    "largest slope (or impact) over the loads.";

static void add_row(struct report_table *t, const char *name, const char *value)
{
	report_table_row(t);
	report_table_cell(t, name);
	report_table_cell(t, value);
}

/* ------------------------------------------------------------ load amplification */

static void amp_summary_rows(struct report_table *t, const struct causal_amp_profiles *ap)
{
	const struct causal_amp *a = &ap->amp;
	char buf[256], period[32];

	snprintf(buf, sizeof(buf), "%zu arrival speedup%s%s", a->n_levels,
		 a->n_levels == 1 ? "" : "s",
		 ap->per_load ? "; each line's curves per load, against the same load's 0%" : "");
	add_row(t, "load amplification", buf);
	if (a->base_period_ns > 0) {
		causal_amp_format_ns(period, sizeof(period), (uint64_t)(a->base_period_ns + 0.5));
		snprintf(buf, sizeof(buf), "%s per arriving thread at arrival speedup 0", period);
		add_row(t, "inter-arrival period", buf);
	}
}

/* How the x axis shows arrival speedups: a unit and its scale from ns. */
static const char *speedup_unit(uint64_t max_ns, double *scale)
{
	if (max_ns >= 1000000) {
		*scale = 1e-6;
		return "arrival speedup (ms)";
	}
	if (max_ns >= 1000) {
		*scale = 1e-3;
		return "arrival speedup (us)";
	}
	*scale = 1;
	return "arrival speedup (ns)";
}

/* Every level has a load: the x axis can be the offered load. */
static bool loads_known(const struct causal_amp *a)
{
	for (size_t k = 0; k < a->n_levels; k++)
		if (a->levels[k].load < 0)
			return false;
	return true;
}

/* x of level k: its load (0..1), or its arrival speedup in ns. */
static double level_x(const struct causal_amp *a, size_t k, bool by_load)
{
	return by_load ? a->levels[k].load : (double)a->levels[k].arrival_speedup_ns;
}

static void level_name(char *buf, size_t size, const struct causal_amp_level *lv)
{
	char d[32];

	causal_amp_format_ns(d, sizeof(d), lv->arrival_speedup_ns);
	if (lv->load >= 0)
		snprintf(buf, size, "%s (load %.0f%%)", d, 100 * lv->load);
	else
		snprintf(buf, size, "%s", d);
}

/* The chart's x range and scale: load in percent, or arrival speedups. */
static void amp_x_axis(const struct causal_amp *a, bool by_load, struct report_xy_multi_chart *c)
{
	c->x_lo = 0;
	c->x_hi = 0;
	for (size_t k = 0; k < a->n_levels; k++)
		c->x_hi = fmax(c->x_hi, level_x(a, k, by_load));
	if (by_load) {
		c->x_scale = 100;
		c->x_label = "offered load (% shorter inter-arrival time)";
	} else {
		c->x_label = speedup_unit((uint64_t)c->x_hi, &c->x_scale);
	}
}

static void format_amp_value(char *buf, size_t size, bool latency, double v)
{
	if (latency)
		snprintf(buf, size, "%.4g ms", v / 1e6);
	else
		snprintf(buf, size, "%.4g/s", v);
}

/* The numbers behind the scalability chart, one row per (point, level). */
static void scalability_table(FILE *f, const struct causal_profile *p, const struct causal_amp *a)
{
	static const char *const headers[] = {"progress point", "arrival speedup",   "load", "runs",
					      "value [95% CI]", "relative [95% CI]", ""};
	struct report_table *t = report_table_new(7, headers);
	char v[32], lo[32], hi[32];

	if (!t)
		return;
	for (size_t c = 2; c < 6; c++)
		report_table_align(t, c, REPORT_RIGHT);
	for (size_t j = 0; j < a->n_points; j++) {
		bool latency = p->points[j].kind == CAUSAL_POINT_LATENCY;

		for (size_t k = 0; k < a->n_levels; k++) {
			const struct causal_amp_level *lv = &a->levels[k];
			const struct causal_amp_point *pt = &lv->points[j];

			report_table_row(t);
			report_table_cell(t, causal_profile_string(p, p->points[j].name));
			causal_amp_format_ns(v, sizeof(v), lv->arrival_speedup_ns);
			report_table_cell(t, v);
			if (lv->load >= 0)
				report_table_cellf(t, "%.1f%%", 100 * lv->load);
			else
				report_table_cell(t, "?");
			report_table_cellf(t, "%u", pt->runs);
			if (pt->runs) {
				format_amp_value(v, sizeof(v), latency, pt->value);
				format_amp_value(lo, sizeof(lo), latency, pt->low);
				format_amp_value(hi, sizeof(hi), latency, pt->high);
				report_table_cellf(t, "%s [%s, %s]", v, lo, hi);
			} else {
				report_table_cell(t, "no visits");
			}
			if (pt->has_relative)
				report_table_cellf(t, "%.3fx [%.3f, %.3f]", pt->relative,
						   pt->rel_low, pt->rel_high);
			else
				report_table_cell(t, "-");
			report_table_cell(t, pt->unstable    ? "unstable"
					     : pt->saturated ? "at capacity"
							     : "");
		}
	}
	report_table_print_html(t, f);
	report_table_free(t);
}

/* Series j of the scalability chart: relative (baseline) or absolute values. */
static size_t scalability_points(const struct causal_amp *a, size_t j, bool by_load, bool relative,
				 struct report_xy_point *out)
{
	size_t n = 0;

	for (size_t k = 0; k < a->n_levels; k++) {
		const struct causal_amp_point *pt = &a->levels[k].points[j];
		double x = level_x(a, k, by_load);

		if (relative && pt->has_relative)
			out[n++] =
			    (struct report_xy_point){x, pt->relative, pt->rel_low, pt->rel_high};
		else if (!relative && pt->runs)
			out[n++] = (struct report_xy_point){x, pt->value, pt->low, pt->high};
	}
	return n;
}

static void point_label(char *buf, size_t size, const struct causal_profile *p, size_t j)
{
	snprintf(buf, size, "%s (%s)", causal_profile_string(p, p->points[j].name),
		 causal_point_kind_name(p->points[j].kind));
}

/* With a baseline: every progress point's relative performance on one chart. */
static void relative_chart(FILE *f, const struct causal_profile *p, const struct causal_amp *a,
			   bool by_load)
{
	struct report_xy_series *ser = calloc(a->n_points ? a->n_points : 1, sizeof(*ser));
	struct report_xy_point *pts = calloc(a->n_points * a->n_levels + 1, sizeof(*pts));
	char(*names)[160] = calloc(a->n_points ? a->n_points : 1, sizeof(*names));
	struct report_xy_multi_chart c = {
	    .y_clip_lo = 0,
	    .y_clip_hi = 10,
	    .y_scale = 1,
	    .y_ref = 1,
	    .connect = true,
	    .y_label = "relative performance (x, 1 = at 0)",
	    .title = "Scalability: relative performance of each progress point against offered "
		     "load, with 95% confidence intervals",
	    .width = 560,
	};

	if (ser && pts && names) {
		amp_x_axis(a, by_load, &c);
		for (size_t j = 0; j < a->n_points; j++) {
			struct report_xy_point *s = pts + j * a->n_levels;

			point_label(names[j], sizeof(names[j]), p, j);
			ser[c.k++] = (struct report_xy_series){
			    names[j], s, scalability_points(a, j, by_load, true, s)};
		}
		c.series = ser;
		report_svg_xy_multi(f, &c);
	}
	free(names);
	free(pts);
	free(ser);
}

/* Without a baseline: each point's own values (rates and latencies do not share an axis). */
static void absolute_charts(FILE *f, const struct causal_profile *p, const struct causal_amp *a,
			    bool by_load)
{
	struct report_xy_point *pts = calloc(a->n_levels + 1, sizeof(*pts));
	char name[160];

	for (size_t j = 0; pts && j < a->n_points; j++) {
		bool latency = p->points[j].kind == CAUSAL_POINT_LATENCY;
		struct report_xy_series ser = {name, pts,
					       scalability_points(a, j, by_load, false, pts)};
		struct report_xy_multi_chart c = {
		    .series = &ser,
		    .k = 1,
		    .y_clip_lo = -INFINITY,
		    .y_clip_hi = INFINITY,
		    .y_scale = latency ? 1e-6 : 1,
		    .y_ref = NAN,
		    .connect = true,
		    .y_label = latency ? "latency (ms)" : "throughput (visits/s)",
		    .title = "Scalability without a baseline: the progress point's value against "
			     "load, with 95% confidence intervals",
		    .width = 560,
		};

		point_label(name, sizeof(name), p, j);
		amp_x_axis(a, by_load, &c);
		report_svg_xy_multi(f, &c);
	}
	free(pts);
}

static void scalability_section(FILE *f, const struct causal_profile *p, const struct causal_amp *a)
{
	bool by_load = loads_known(a);

	fputs("<section id=\"scalability\">\n", f);
	report_html_heading(f, 2, "Scalability (load amplification)");
	report_html_paragraph(
	    f, a->baseline >= 0
		   ? "Performance of each progress point at each arrival speedup, relative to "
		     "arrival speedup 0 (throughput: rate / rate at 0; latency: latency at 0 / "
		     "latency; above 1 is better). The offered load is the fraction by which the "
		     "inter-arrival time shrinks: 50% means requests arrive twice as fast. Bars "
		     "are 95% bootstrap intervals over runs (2 or more runs per level)."
		   : "No run at arrival speedup 0: there is no baseline to compare with, so each "
		     "progress point's own value is shown, with 95% t intervals over runs.");
	if (a->baseline >= 0)
		relative_chart(f, p, a, by_load);
	else
		absolute_charts(f, p, a, by_load);
	scalability_table(f, p, a);
	fputs("</section>\n", f);
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
	if (opt && opt->amp)
		amp_summary_rows(t, opt->amp);
	report_table_print_html(t, f);
	report_table_free(t);
}

static void controls(FILE *f, const struct causal_profile *p, const struct causal_summary *s)
{
	static const enum causal_sort keys[] = {CAUSAL_SORT_IMPACT, CAUSAL_SORT_SLOPE,
						CAUSAL_SORT_NAME};

	/* the page opens sorted as the report was (--sort), not by the first option */
	fputs("<div class=\"controls\"><label>Sort by <select id=\"sort\">", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		fprintf(f, "<option value=\"%s\"%s>%s</option>", causal_sort_name(keys[i]),
			keys[i] == s->sort ? " selected" : "", causal_sort_name(keys[i]));
	fputs("</select></label>\n"
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

/*
 * The fitted curve's vertices: the 0% point, each bucket, and the knee when
 * it falls between buckets (its band interpolated from its neighbours).
 * out has room for n_buckets + 1.
 */
static size_t fit_vertices(const struct causal_series *c, struct report_xy_point *out)
{
	size_t n = 0;
	double knee = c->fit.knee;

	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];
		double x = b->speedup_pct / 100.0;

		if (c->fit.levels_off && i > 0 && n > 0 && out[n - 1].x < knee && x > knee) {
			double t = (knee - out[n - 1].x) / (x - out[n - 1].x);
			const struct report_xy_point *a = &out[n - 1];

			out[n] = (struct report_xy_point){knee, causal_fit_at(&c->fit, knee),
							  a->lo + t * (b->fit_low - a->lo),
							  a->hi + t * (b->fit_high - a->hi)};
			n++;
		}
		out[n++] =
		    (struct report_xy_point){x, b->fit, i ? b->fit_low : 0, i ? b->fit_high : 0};
	}
	return n;
}

/* The chart's subtitle: the fit, the ranking keys, and thin evidence. */
static void line_facts(FILE *f, const struct causal_profile *p, const struct causal_series *c)
{
	char why[64];

	report_html_escape(f, causal_profile_string(p, p->points[c->point].name));
	fprintf(f, " (%s) &middot; ", causal_point_kind_name(p->points[c->point].kind));
	if (c->thin)
		fprintf(f,
			"<b>thin evidence</b> (%s): effect at 100%% %+.1f%% [%+.1f, %+.1f] "
			"is not a measurement to rely on",
			causal_thin_text(c->thin, why, sizeof(why)), 100 * c->fit.effect,
			100 * c->fit.effect_low, 100 * c->fit.effect_high);
	else
		fprintf(f, "<b>effect at 100%% %+.1f%%</b> [%+.1f, %+.1f]", 100 * c->fit.effect,
			100 * c->fit.effect_low, 100 * c->fit.effect_high);
	if (c->fit.levels_off)
		fprintf(f, ", levels off at %.0f%%", 100 * c->fit.knee);
	else
		fputs(", linear", f);
	fprintf(f,
		" &middot; impact %+.1f%% &middot; slope %+.2f [%+.2f, %+.2f] &middot; "
		"max %+.1f%% &middot; %zu points, %u experiments%s",
		100 * c->impact, c->slope, c->slope_low, c->slope_high, 100 * c->max_speedup,
		c->n_buckets, c->experiments, c->phase_corrected ? ", phase-corrected" : "");
}

static void line_chart(FILE *f, const struct causal_profile *p, const struct causal_series *c,
		       size_t rank)
{
	struct report_xy_point *pts = malloc((c->n_buckets + 1) * sizeof(*pts));
	struct report_xy_point *fit = malloc((c->n_buckets + 2) * sizeof(*fit));
	bool *faint = malloc((c->n_buckets + 1) * sizeof(*faint));
	struct report_xy_chart chart = {
	    .n = c->n_buckets,
	    .x_lo = 0,
	    .x_hi = 1,
	    .y_clip_lo = -1,
	    .y_clip_hi = 2,
	    .x_scale = 100,
	    .y_scale = 100,
	    .x_label = "line speedup (%)",
	    .y_label = "program speedup (%)",
	};

	if (!pts || !fit || !faint)
		goto out;
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];

		pts[i] = (struct report_xy_point){b->speedup_pct / 100.0, b->program_speedup,
						  b->ci_low, b->ci_high};
		faint[i] = b->thin != 0;
	}
	chart.points = pts;
	chart.faint = faint;
	chart.curve = fit;
	chart.n_curve = fit_vertices(c, fit);
	fputs("<div class=\"line\" data-name=\"", f);
	report_html_escape(f, causal_profile_string(p, c->selected));
	fprintf(f, "\" data-point=\"%u\"", c->point);
	data_number(f, "slope", c->slope);
	data_number(f, "impact", c->impact);
	if (c->thin)
		fputs(" data-thin=\"1\"", f); /* ranked after the firm lines, as in the text */
	fprintf(f, ">\n<h3><span class=\"rank\">%zu.</span> ", rank);
	report_html_escape(f, causal_profile_string(p, c->selected));
	if (c->contention)
		fputs(" <span class=\"badge\">contention</span>", f);
	if (c->thin)
		fputs(" <span class=\"badge thin\">thin evidence</span>", f);
	fputs("</h3>\n<p>", f);
	line_facts(f, p, c);
	fputs("</p>\n", f);
	report_svg_xy(f, &chart);
	fputs("</div>\n", f);
out:
	free(pts);
	free(fit);
	free(faint);
}

/* Series of one line's curve at one level: its points as fractions. */
static size_t curve_points(const struct causal_series *c, struct report_xy_point *out)
{
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];

		out[i] = (struct report_xy_point){b->speedup_pct / 100.0, b->program_speedup,
						  b->ci_low, b->ci_high};
	}
	return c->n_buckets;
}

/* The per-level slopes under a line's title: "0: +0.10 [...] · 5 ms: ...". */
static void level_slopes(FILE *f, const struct causal_amp_profiles *ap,
			 const struct causal_amp_line *l)
{
	const char *sep = "";
	char name[64];

	fputs("<p>slope per load: ", f);
	for (size_t k = 0; k < ap->amp.n_levels; k++) {
		const struct causal_series *c = l->series[k];

		if (!c)
			continue;
		level_name(name, sizeof(name), &ap->amp.levels[k]);
		fprintf(f, "%s%s %+.2f [%+.2f, %+.2f]%s", sep, name, c->slope, c->slope_low,
			c->slope_high, c->contention ? " (contention)" : "");
		sep = " &middot; ";
	}
	fputs("</p>\n", f);
}

/* "contention at 5 ms": the loads at which the line's slope interval lies below 0. */
static void contention_badge(FILE *f, const struct causal_amp_profiles *ap,
			     const struct causal_amp_line *l)
{
	const char *sep = " at ";
	char d[32];

	fputs(" <span class=\"badge\">contention", f);
	for (size_t k = 0; k < ap->amp.n_levels; k++) {
		if (!l->series[k] || !l->series[k]->contention)
			continue;
		causal_amp_format_ns(d, sizeof(d), ap->amp.levels[k].arrival_speedup_ns);
		fprintf(f, "%s%s", sep, d);
		sep = ", ";
	}
	fputs("</span>", f);
}

/* One line with one curve per load level, each against its own same-load 0%. */
static void load_line_chart(FILE *f, const struct causal_profile *p,
			    const struct causal_amp_profiles *ap, const struct causal_amp_line *l,
			    size_t rank)
{
	size_t n_levels = ap->amp.n_levels, total = 0, k_used = 0;
	struct report_xy_series *ser = calloc(n_levels, sizeof(*ser));
	char(*names)[64] = calloc(n_levels, sizeof(*names));
	struct report_xy_point *pts;
	bool contention = false;
	char title[512];
	struct report_xy_multi_chart chart = {
	    .x_lo = 0,
	    .x_hi = 1,
	    .y_clip_lo = -1,
	    .y_clip_hi = 2,
	    .x_scale = 100,
	    .y_scale = 100,
	    .y_ref = 0,
	    .connect = true,
	    .x_label = "line speedup (%)",
	    .y_label = "program speedup (%)",
	};

	for (size_t k = 0; k < n_levels; k++)
		total += l->series[k] ? l->series[k]->n_buckets : 0;
	pts = calloc(total + 1, sizeof(*pts));
	if (!ser || !names || !pts)
		goto out;
	for (size_t k = 0, used = 0; k < n_levels; k++) {
		const struct causal_series *c = l->series[k];

		if (!c)
			continue;
		contention |= c->contention;
		level_name(names[k], sizeof(names[k]), &ap->amp.levels[k]);
		ser[k_used++] =
		    (struct report_xy_series){names[k], pts + used, curve_points(c, pts + used)};
		used += c->n_buckets;
	}
	snprintf(title, sizeof(title),
		 "Predicted program speedup against line speedup for %s at %s, one curve per load "
		 "level",
		 causal_profile_string(p, l->selected),
		 causal_profile_string(p, p->points[l->point].name));
	chart.series = ser;
	chart.k = k_used;
	chart.title = title;
	fputs("<div class=\"line\" data-name=\"", f);
	report_html_escape(f, causal_profile_string(p, l->selected));
	fprintf(f, "\" data-point=\"%u\"", l->point);
	data_number(f, "slope", l->slope);
	data_number(f, "impact", l->impact);
	fprintf(f, ">\n<h3><span class=\"rank\">%zu.</span> ", rank);
	report_html_escape(f, causal_profile_string(p, l->selected));
	if (contention)
		contention_badge(f, ap, l);
	fputs("</h3>\n<p>", f);
	report_html_escape(f, causal_profile_string(p, p->points[l->point].name));
	fprintf(f, " (%s) &middot; %zu load level%s</p>\n",
		causal_point_kind_name(p->points[l->point].kind), k_used, k_used == 1 ? "" : "s");
	level_slopes(f, ap, l);
	report_svg_xy_multi(f, &chart);
	fputs("</div>\n", f);
out:
	free(pts);
	free(names);
	free(ser);
}

void causal_report_html(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	const struct causal_amp_profiles *ap = opt ? opt->amp : NULL;
	bool per_load = ap && ap->per_load;
	size_t n = per_load ? ap->n_lines : s->n_series, shown = n;

	if (opt && opt->top && opt->top < shown)
		shown = opt->top;
	report_html_begin(out, "lever causal report");
	fputs(page_style, out);
	report_html_heading(out, 1, "lever causal report");
	run_summary(out, p, s, opt);
	if (ap)
		scalability_section(out, p, &ap->amp);
	if (ap && !causal_profile_has_line_speedups(p)) {
		report_html_paragraph(out, "No line was sped up (load amplification alone): the "
					   "scalability curve is the whole report.");
		report_html_end(out);
		return;
	}
	if (per_load)
		report_html_heading(out, 2, "Causal profiles per load");
	report_html_paragraph(out, per_load ? per_load_intro : line_intro);
	if (n == 0) {
		report_html_paragraph(out, "No line has a usable curve yet: a line needs "
					   "experiments at 0% and at several other speedups.");
		report_html_end(out);
		return;
	}
	controls(out, p, s);
	fputs("<div id=\"charts\">\n", out);
	for (size_t i = 0; i < shown; i++) {
		if (per_load)
			load_line_chart(out, p, ap, &ap->lines[i], i + 1);
		else
			line_chart(out, p, &s->series[i], i + 1);
	}
	fputs("</div>\n", out);
	report_html_script(out, page_script);
	report_html_end(out);
}
