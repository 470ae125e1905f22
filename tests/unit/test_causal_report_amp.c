/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The load amplification parts of the JSON and HTML reports
 * (src/causal/report_json.c, report_html.c, amp_profiles.c) on generated
 * sweep profiles: the scalability curve per progress point, and each line's
 * causal curves per load level, each against its own same-load 0% baseline.
 *
 * The sweep: levels 0 and 5 ms, two runs each (interleaved as `lever causal
 * sweep` runs them), every experiment 100 visits of progress point "done".
 * At 0 an experiment of the 0% speedup lasts 1 s and one thread arrives
 * every 10 ms; at 5 ms it lasts 0.5 s and the effective inter-arrival period
 * is 5 ms, so the load is 5 / 10 = 50% and the rate doubles. Line "grows.c:1"
 * matters only under load (program speedup = 0.5 x at 5 ms, 0 at 0); line
 * "steady.c:2" gains 0.2 x at both. Durations carry a +-2% pattern so that the
 * intervals have a spread.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/base.h"
#include "causal/causal.h"
#include "causal_test_util.h"

#define D_HIGH 5000000 /* the amplified level, ns */

struct sweep_line {
	const char *name;
	double gain_low, gain_high; /* program speedup per line speedup at 0 and at 5 ms */
};

static const struct sweep_line sweep_lines[] = {{"grows.c:1", 0.0, 0.5}, {"steady.c:2", 0.2, 0.2}};

/* Effective duration of one experiment, ns. */
static long sweep_duration(bool high, double gain, int pct, int k)
{
	double base = high ? 0.5e9 : 1e9;

	return (long)(base * (1 - gain * pct / 100.0) * (1 + 0.02 * (k % 3 - 1)));
}

/* Rate of one run at a level, visits per second, as the report pools it. */
static double sweep_run_rate(bool high)
{
	double visits = 0, duration = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sweep_lines); i++)
		for (int pct = 0; pct <= 50; pct += 10)
			for (int k = 0; k < 3; k++) {
				double g =
				    high ? sweep_lines[i].gain_high : sweep_lines[i].gain_low;

				visits += 100;
				duration += (double)sweep_duration(high, g, pct, k);
			}
	return visits * 1e9 / duration;
}

/*
 * The sweep profile. line_speedups false: AMP alone (every experiment at 0%,
 * as with --fixed-speedup=0). levels_mask: bit 0 = level 0, bit 1 = 5 ms,
 * bit 2 = 8 ms (a level without a baseline when bit 0 is off).
 */
static char *sweep_profile(size_t *len, bool line_speedups, unsigned levels_mask)
{
	static const uint64_t levels[] = {0, D_HIGH, 8000000};
	char *buf = NULL;

	*len = 0;
	for (int run = 0; run < 2; run++)
		for (size_t lv = 0; lv < ARRAY_SIZE(levels); lv++) {
			bool high = levels[lv] != 0;
			double period = high ? 1e7 - (double)levels[lv] : 1e7;

			if (!(levels_mask & (1u << lv)))
				continue;
			append(&buf, len, "startup\ttime=%d\n", run * 10 + (int)lv + 1);
			for (size_t i = 0; i < ARRAY_SIZE(sweep_lines); i++)
				for (int pct = 0; pct <= 50; pct += 10)
					for (int k = 0; k < 3; k++) {
						double g = high ? sweep_lines[i].gain_high
								: sweep_lines[i].gain_low;
						long dur = sweep_duration(high, g, pct, k);

						append(&buf, len,
						       "experiment\tselected=%s\tspeedup=%d.%02d\t"
						       "duration=%ld\tselected-samples=10\t"
						       "arrival-speedup=%llu\tarrivals=%ld\t"
						       "arrival-threads=1\n"
						       "throughput-point\tname=done\tdelta=100\n",
						       sweep_lines[i].name,
						       line_speedups ? pct / 100 : 0,
						       line_speedups ? pct % 100 : 0, dur,
						       (unsigned long long)levels[lv],
						       lround((double)dur / period));
					}
		}
	return buf;
}

struct rendered {
	struct causal_profile p;
	struct causal_summary s;
	struct causal_amp_profiles ap;
	bool amp;
	char *out;
};

typedef void (*render_fn)(FILE *, const struct causal_profile *, const struct causal_summary *,
			  const struct causal_report_options *);

/* Reads buf and renders it as the CLI does: pooled summary, AMP profiles when any. */
static void render(struct rendered *r, const char *buf, size_t len, render_fn fn,
		   enum causal_sort sort)
{
	struct causal_summary_options so = {.sort = sort};
	char *files[] = {"sweep.coz"};
	size_t n = 0;
	FILE *f;
	int amp;

	causal_profile_init(&r->p);
	assert_int_equal(causal_profile_read_buffer(&r->p, buf, len, "sweep.coz", NULL), 0);
	assert_int_equal(r->p.stats.malformed, 0);
	amp = causal_amp_profiles_build(&r->p, &so, &r->ap);
	assert_true(amp == 0 || amp == 1);
	r->amp = amp == 0;
	assert_int_equal(causal_summarize(&r->p, &so, &r->s), 0);
	f = open_memstream(&r->out, &n);
	assert_non_null(f);
	fn(f, &r->p, &r->s,
	   &(struct causal_report_options){
	       .files = files, .n_files = 1, .amp = r->amp ? &r->ap : NULL});
	fclose(f);
}

static void rendered_free(struct rendered *r)
{
	free(r->out);
	causal_summary_free(&r->s);
	if (r->amp)
		causal_amp_profiles_free(&r->ap);
	causal_profile_free(&r->p);
}

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);

	if (!root)
		fail_msg("JSON: %s (line %d)", err.text, err.line);
	return root;
}

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) < (tol))

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		fail_msg("%s is not a number", key);
	return json_number_value(v);
}

/* ------------------------------------------------------------ JSON */

static void json_scalability_curve(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x3);
	json_t *root, *sc, *levels, *pt, *loads, *l0, *l1, *ci, *rci;
	double rel = sweep_run_rate(true) / sweep_run_rate(false);

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_SLOPE);
	root = parse(r.out);
	assert_int_equal(json_integer_value(json_object_get(root, "lever_causal_report")), 2);
	/* the version 1 keys are still there */
	assert_true(json_is_array(json_object_get(root, "series")));
	assert_int_equal(json_integer_value(json_object_get(root, "runs")), 4);
	sc = json_object_get(root, "scalability");
	assert_true(json_is_object(sc));
	NEAR(num(sc, "baseline_arrival_speedup_ns"), 0, 1e-12);
	NEAR(num(sc, "baseline_period_ns"), 1e7, 1e7 * 0.01);
	NEAR(num(sc, "confidence_level"), 0.95, 1e-12);
	assert_int_equal(json_integer_value(json_object_get(sc, "ignored_experiments")), 0);
	assert_true(json_is_null(json_object_get(sc, "beyond_period_arrival_speedup_ns")));
	assert_true(json_is_null(json_object_get(sc, "no_arrivals_arrival_speedup_ns")));
	levels = json_object_get(sc, "levels");
	assert_int_equal(json_array_size(levels), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(levels, 1), "runs")), 2);
	assert_int_equal(
	    json_integer_value(json_object_get(json_array_get(levels, 1), "experiments")), 72);

	assert_int_equal(json_array_size(json_object_get(sc, "points")), 1);
	pt = json_array_get(json_object_get(sc, "points"), 0);
	assert_string_equal(json_string_value(json_object_get(pt, "point")), "done");
	assert_string_equal(json_string_value(json_object_get(pt, "kind")), "throughput");
	assert_string_equal(json_string_value(json_object_get(pt, "unit")), "visits/s");
	loads = json_object_get(pt, "loads");
	assert_int_equal(json_array_size(loads), 2);
	l0 = json_array_get(loads, 0);
	l1 = json_array_get(loads, 1);
	assert_int_equal(json_integer_value(json_object_get(l0, "arrival_speedup_ns")), 0);
	assert_int_equal(json_integer_value(json_object_get(l1, "arrival_speedup_ns")), D_HIGH);
	/* load = d / p0 = 5 ms / 10 ms; the measured effective period is 5 ms */
	NEAR(num(l0, "load"), 0, 1e-12);
	NEAR(num(l1, "load"), 0.5, 0.01);
	NEAR(num(l1, "period_ns"), 5e6, 5e6 * 0.01);
	assert_int_equal(json_integer_value(json_object_get(l1, "runs")), 2);
	NEAR(num(l0, "value"), sweep_run_rate(false), 1e-6);
	NEAR(num(l1, "value"), sweep_run_rate(true), 1e-6);
	NEAR(num(l0, "relative"), 1, 1e-12);
	NEAR(num(l1, "relative"), rel, 1e-9);
	/* by hand: mean durations 0.975 s at 0 and 0.45625 s at 5 ms */
	NEAR(rel, 0.975 / 0.45625, 1e-3);
	/* runs of a level are identical here: the t interval is the value */
	ci = json_object_get(l1, "ci");
	assert_int_equal(json_array_size(ci), 2);
	NEAR(json_number_value(json_array_get(ci, 0)), sweep_run_rate(true), 1e-6);
	rci = json_object_get(l1, "relative_ci");
	assert_int_equal(json_array_size(rci), 2);
	assert_true(json_number_value(json_array_get(rci, 0)) <= rel + 1e-9);
	assert_true(json_number_value(json_array_get(rci, 1)) >= rel - 1e-9);
	assert_true(json_is_false(json_object_get(l1, "unstable")));
	assert_true(json_is_boolean(json_object_get(l1, "saturated")));
	json_decref(root);
	rendered_free(&r);
	free(buf);
}

static json_t *curve_at(json_t *line, long long d)
{
	json_t *curves = json_object_get(line, "curves"), *c;
	size_t i;

	json_array_foreach(curves, i, c)
	{
		if (json_integer_value(json_object_get(c, "arrival_speedup_ns")) == d)
			return c;
	}
	fail_msg("no curve at %lld", d);
	return NULL;
}

/* The point at line speedup pct of a curve. */
static json_t *curve_point(json_t *curve, int pct)
{
	json_t *pts = json_object_get(curve, "points"), *p;
	size_t i;

	json_array_foreach(pts, i, p)
	{
		if (fabs(num(p, "line_speedup") - pct / 100.0) < 1e-9)
			return p;
	}
	fail_msg("no point at %d%%", pct);
	return NULL;
}

static void json_curves_per_load(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x3);
	json_t *root, *lc, *grows, *steady, *c0, *c1;

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_SLOPE);
	root = parse(r.out);
	lc = json_object_get(root, "load_curves");
	assert_int_equal(json_array_size(lc), 2);
	/* ranked by the largest slope over the loads: 0.5 at 5 ms before 0.2 */
	grows = json_array_get(lc, 0);
	steady = json_array_get(lc, 1);
	assert_string_equal(json_string_value(json_object_get(grows, "line")), "grows.c:1");
	assert_string_equal(json_string_value(json_object_get(grows, "point")), "done");
	assert_string_equal(json_string_value(json_object_get(grows, "kind")), "throughput");
	assert_string_equal(json_string_value(json_object_get(steady, "line")), "steady.c:2");
	assert_int_equal(json_array_size(json_object_get(grows, "curves")), 2);
	c0 = curve_at(grows, 0);
	c1 = curve_at(grows, D_HIGH);
	NEAR(num(c0, "load"), 0, 1e-12);
	NEAR(num(c1, "load"), 0.5, 0.01);
	/* each against its own load's 0%: flat at 0, 0.5 x at 5 ms */
	NEAR(num(c0, "slope"), 0, 0.02);
	NEAR(num(c1, "slope"), 0.5, 0.03);
	NEAR(num(curve_point(c0, 0), "program_speedup"), 0, 1e-12);
	NEAR(num(curve_point(c1, 0), "program_speedup"), 0, 1e-12);
	NEAR(num(curve_point(c0, 50), "program_speedup"), 0, 0.03);
	NEAR(num(curve_point(c1, 50), "program_speedup"), 0.25, 0.03);
	assert_int_equal(json_integer_value(json_object_get(c1, "experiments")), 36);
	assert_int_equal(json_array_size(json_object_get(c1, "points")), 6);
	assert_int_equal(json_array_size(json_object_get(c1, "slope_ci")), 2);
	assert_true(json_is_boolean(json_object_get(c1, "contention")));
	NEAR(num(curve_at(steady, 0), "slope"), 0.2, 0.03);
	NEAR(num(curve_at(steady, D_HIGH), "slope"), 0.2, 0.03);
	json_decref(root);
	rendered_free(&r);
	free(buf);
}

/*
 * Against a pooled baseline the 5 ms curve of grows.c:1 would be wrong: the
 * pooled 0% bucket mixes 1 s and 0.5 s experiments. The per-load curve must
 * differ from the pooled series, which stays as in version 1.
 */
static void json_per_load_is_not_pooled(void **state)
{
	struct rendered r;
	size_t len, i;
	char *buf = sweep_profile(&len, true, 0x3);
	json_t *root, *series, *s, *pooled = NULL;

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_SLOPE);
	root = parse(r.out);
	series = json_object_get(root, "series");
	json_array_foreach(series, i, s)
	{
		if (strcmp(json_string_value(json_object_get(s, "line")), "grows.c:1") == 0)
			pooled = s;
	}
	assert_non_null(pooled);
	/* pooled 0%: 1 s and 0.5 s per 100 visits; at 50%: 1 s and 0.375 s */
	NEAR(num(curve_point(pooled, 50), "program_speedup"), 1 - 0.6875 / 0.75, 0.03);
	assert_true(fabs(num(curve_point(pooled, 50), "program_speedup") - 0.25) > 0.1);
	json_decref(root);
	rendered_free(&r);
	free(buf);
}

static void json_sort_by_name(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x3);
	json_t *root, *lc;

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_NAME);
	root = parse(r.out);
	lc = json_object_get(root, "load_curves");
	assert_int_equal(json_array_size(lc), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lc, 0), "line")),
			    "grows.c:1");
	json_decref(root);
	rendered_free(&r);
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_IMPACT);
	root = parse(r.out);
	/* impact: grows reaches +25% at 5 ms, steady +10% */
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(root, "load_curves"), 0), "line")),
			    "grows.c:1");
	json_decref(root);
	rendered_free(&r);
	free(buf);
}

static void json_amp_alone_and_plain(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, false, 0x3), *plain;
	json_t *root;

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_SLOPE);
	root = parse(r.out);
	assert_true(json_is_object(json_object_get(root, "scalability")));
	assert_true(json_is_null(json_object_get(root, "load_curves")));
	json_decref(root);
	rendered_free(&r);
	free(buf);

	/* not an AMP profile: the keys are there, null */
	plain = strdup("startup\ttime=1\n"
		       "experiment\tselected=a.c:1\tspeedup=0.00\tduration=1000000\t"
		       "selected-samples=1\n"
		       "throughput-point\tname=p\tdelta=10\n");
	assert_non_null(plain);
	render(&r, plain, strlen(plain), causal_report_json, CAUSAL_SORT_SLOPE);
	assert_false(r.amp);
	root = parse(r.out);
	assert_true(json_is_null(json_object_get(root, "scalability")));
	assert_true(json_is_null(json_object_get(root, "load_curves")));
	json_decref(root);
	rendered_free(&r);
	free(plain);
}

static void json_without_baseline(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x6), *out = NULL;
	json_t *root, *sc, *l;
	FILE *f;

	(void)state;
	render(&r, buf, len, causal_report_json, CAUSAL_SORT_SLOPE);
	root = parse(r.out);
	sc = json_object_get(root, "scalability");
	assert_true(json_is_null(json_object_get(sc, "baseline_arrival_speedup_ns")));
	assert_true(json_is_null(json_object_get(sc, "baseline_period_ns")));
	l = json_array_get(
	    json_object_get(json_array_get(json_object_get(sc, "points"), 0), "loads"), 0);
	assert_int_equal(json_integer_value(json_object_get(l, "arrival_speedup_ns")), D_HIGH);
	assert_true(json_is_null(json_object_get(l, "relative")));
	assert_true(json_is_null(json_object_get(l, "relative_ci")));
	assert_true(json_is_number(json_object_get(l, "value")));
	/* each level's own period + d: 5 ms / (5 ms + 5 ms) */
	NEAR(num(l, "load"), 0.5, 0.01);
	/* per-load curves need no scalability baseline: each load has its 0% */
	assert_int_equal(json_array_size(json_object_get(root, "load_curves")), 2);
	json_decref(root);
	/* NULL options: no AMP keys filled, still valid JSON */
	f = open_memstream(&out, &len);
	causal_report_json(f, &r.p, &r.s, NULL);
	fclose(f);
	root = parse(out);
	assert_true(json_is_null(json_object_get(root, "scalability")));
	json_decref(root);
	free(out);
	rendered_free(&r);
	free(buf);
}

/* ------------------------------------------------------------ HTML */

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *c = s; (c = strstr(c, needle)); c++)
		n++;
	return n;
}

static void html_self_contained(const char *out)
{
	assert_null(strstr(out, "src="));
	assert_null(strstr(out, "href="));
	assert_null(strstr(out, "@import"));
	/* the only URL is the SVG namespace */
	assert_int_equal(count(out, "http"), count(out, "xmlns=\"http://www.w3.org/2000/svg\""));
}

static void html_charts_per_load(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x3), rel[32];

	(void)state;
	snprintf(rel, sizeof(rel), "%.3fx [", sweep_run_rate(true) / sweep_run_rate(false));
	render(&r, buf, len, causal_report_html, CAUSAL_SORT_SLOPE);
	/* one scalability chart and one chart per line */
	assert_int_equal(count(r.out, "<svg"), 3);
	assert_non_null(strstr(r.out, "<section id=\"scalability\">"));
	assert_non_null(strstr(r.out, "offered load (% shorter inter-arrival time)"));
	assert_non_null(strstr(r.out, "relative performance (x, 1 = at 0)"));
	assert_non_null(strstr(r.out, "done (throughput)"));
	/* the numbers behind it */
	assert_non_null(strstr(r.out, rel));
	/* legends: one entry per load in each line chart, charts labelled for readers */
	assert_int_equal(count(r.out, "<title>5 ms (load 50%)</title>"), 2);
	assert_int_equal(count(r.out, "<title>0 (load 0%)</title>"), 2);
	assert_non_null(strstr(r.out, "aria-label=\"Predicted program speedup against line "
				      "speedup for grows.c:1 at done, one curve per load level\""));
	assert_non_null(strstr(r.out, "aria-label=\"Scalability: "));
	assert_non_null(strstr(r.out, "Causal profiles per load"));
	assert_non_null(strstr(r.out, "slope per load: 0 (load 0%) "));
	/* ranked as in JSON: grows.c:1 first */
	assert_true(strstr(r.out, "data-name=\"grows.c:1\"") <
		    strstr(r.out, "data-name=\"steady.c:2\""));
	/* second series: other color and marker (a square) */
	assert_non_null(strstr(r.out, "<rect x="));
	assert_non_null(strstr(r.out, "stroke=\"#d62728\""));
	assert_non_null(strstr(r.out, "id=\"sort\""));
	html_self_contained(r.out);
	rendered_free(&r);
	free(buf);
}

static void html_amp_alone(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, false, 0x3);

	(void)state;
	render(&r, buf, len, causal_report_html, CAUSAL_SORT_SLOPE);
	assert_int_equal(count(r.out, "<svg"), 1);
	assert_non_null(strstr(r.out, "<section id=\"scalability\">"));
	assert_non_null(strstr(r.out, "the scalability curve is the whole report"));
	assert_null(strstr(r.out, "Causal profiles per load"));
	html_self_contained(r.out);
	rendered_free(&r);
	free(buf);
}

static void html_without_baseline(void **state)
{
	struct rendered r;
	size_t len;
	char *buf = sweep_profile(&len, true, 0x6);

	(void)state;
	render(&r, buf, len, causal_report_html, CAUSAL_SORT_SLOPE);
	/* one absolute chart per progress point, then the lines */
	assert_non_null(strstr(r.out, "throughput (visits/s)"));
	assert_non_null(strstr(r.out, "No run at arrival speedup 0"));
	assert_int_equal(count(r.out, "<svg"), 1 + 2);
	assert_int_equal(count(r.out, "<title>8 ms (load 80%)</title>"), 2);
	rendered_free(&r);
	free(buf);
}

/* A plain profile's page has no AMP section (and is as before). */
static void html_plain_has_no_amp(void **state)
{
	struct rendered r;
	char *plain = NULL;
	size_t len = 0;

	(void)state;
	append(&plain, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 50; pct += 10)
		append(&plain, &len,
		       "experiment\tselected=a.c:1\tspeedup=0.%02d\tduration=%d\t"
		       "selected-samples=1\nthroughput-point\tname=p\tdelta=100\n",
		       pct, 1000000 - pct * 5000);
	render(&r, plain, len, causal_report_html, CAUSAL_SORT_SLOPE);
	assert_false(r.amp);
	assert_null(strstr(r.out, "scalability"));
	assert_null(strstr(r.out, "load amplification"));
	assert_int_equal(count(r.out, "<svg"), 1);
	rendered_free(&r);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(json_scalability_curve),	   cmocka_unit_test(json_curves_per_load),
	    cmocka_unit_test(json_per_load_is_not_pooled), cmocka_unit_test(json_sort_by_name),
	    cmocka_unit_test(json_amp_alone_and_plain),	   cmocka_unit_test(json_without_baseline),
	    cmocka_unit_test(html_charts_per_load),	   cmocka_unit_test(html_amp_alone),
	    cmocka_unit_test(html_without_baseline),	   cmocka_unit_test(html_plain_has_no_amp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
