/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Coz's viewer's method (src/causal/viewer.c, spec anchors.md §1.8): a
 * hand-made profile whose viewer numbers are worked out by hand in the
 * comments, checked point by point: sums over experiments, no phase
 * correction although the profile has samples and runtime records, the
 * MIN_DELTA and [-1, 2] filters, Little's law with the duration-weighted
 * difference and the viewer's negation, coz.h lines dropped, Minimum Points
 * lowered until something shows, and the impact ranking; then the JSON's
 * `method` field and the table's columns; and a fuzz loop over all of it.
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
#include "fuzz_edit.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* One experiment of `line` with one throughput point `p`. */
static void exp_tp(char **buf, size_t *len, const char *line, int pct, long duration, long delta)
{
	append(buf, len,
	       "experiment\tselected=%s\tspeedup=%d.%02d\tduration=%ld\tselected-samples=7\n"
	       "throughput-point\tname=p\tdelta=%ld\n",
	       line, pct / 100, pct % 100, duration, delta);
}

/* One experiment of `line` with one latency point `q` (lever's in-flight-ns too). */
static void exp_lat(char **buf, size_t *len, const char *line, int pct, long duration,
		    long arrivals, long difference)
{
	append(buf, len,
	       "experiment\tselected=%s\tspeedup=%d.%02d\tduration=%ld\tselected-samples=7\n"
	       "latency-point\tname=q\tarrivals=%ld\tdepartures=%ld\tdifference=%ld\t"
	       "in-flight-ns=%ld\n",
	       line, pct / 100, pct % 100, duration, arrivals, arrivals, difference, duration * 9);
}

/*
 * a.c:10 (throughput p):
 *   0%:   1000 ns / 10 + 1000 ns / 10 -> 2000 / 20, period 100
 *   25%:  900 / 10 -> 90, (100 - 90) / 100 = +0.10
 *   50%:  300 / 4 + 500 / 6 -> 800 / 10 = 80, +0.20 (the mean of the two
 *         periods, 79.17, would give +0.2083: the viewer sums)
 *   75%:  850 / 10 -> 85, +0.15
 *   100%: 3 / 4: under MIN_DELTA (5) visits, no point
 *   4 points; impact: areas 0.0125 (/0.25 = 0.05), 0.05 (/0.5 = 0.10),
 *   0.09375 (/0.75 = 0.125): 0.125
 * b.c:20 (throughput p):
 *   0%: 1000 / 10 -> 100;  50%: 500 / 10 -> 50, +0.50;
 *   75%: 3000 / 5 -> 600, -5.0: outside [-1, 2], no point;
 *   100%: 100 / 50 -> 2, +0.98
 *   3 points; impact: 0.125 / 0.5 = 0.25, then 0.125 + 0.37 = 0.495 / 1
 * c.c:30 (latency q; W = mean difference / (arrivals / duration)):
 *   0%: (1000 ns, 10 arrivals, difference 2) + (3000, 30, 4): difference
 *       weighted by duration (2000 + 12000) / 4000 = 3.5, arrivals 40 per
 *       4000 ns, W = 3.5 / 0.01 = 350
 *   25%: (1000, 10, 2) + (1000, 10, 4): mean difference 3, arrivals 20 per
 *        2000 ns, W = 3 / 0.01 = 300, (350 - 300) / 350 = +1/7, negated -1/7
 *   50%: (2000, 20, 2): W = 200, +3/7, negated -3/7
 *   75%: (2000, 20, 1): W = 100, +5/7, negated -5/7
 *   (lever's in-flight-ns would give other W; the viewer reads difference)
 *   4 points, all below 0: impact 0 (the viewer's area starts at 0)
 * /usr/include/coz.h:50: a perfect curve, dropped (5 experiments)
 * samples and runtime records say a.c:10 runs in 1% of the run: a phase
 * correction would scale its points by about 0.01; the viewer has none.
 */
static char *viewer_profile(size_t *len)
{
	char *buf = NULL;

	*len = 0;
	append(&buf, len, "startup\ttime=1\n");
	exp_tp(&buf, len, "a.c:10", 0, 1000, 10);
	exp_tp(&buf, len, "a.c:10", 0, 1000, 10);
	exp_tp(&buf, len, "a.c:10", 25, 900, 10);
	exp_tp(&buf, len, "a.c:10", 50, 300, 4);
	exp_tp(&buf, len, "a.c:10", 50, 500, 6);
	exp_tp(&buf, len, "a.c:10", 75, 850, 10);
	exp_tp(&buf, len, "a.c:10", 100, 3, 4);
	exp_tp(&buf, len, "b.c:20", 0, 1000, 10);
	exp_tp(&buf, len, "b.c:20", 50, 500, 10);
	exp_tp(&buf, len, "b.c:20", 75, 3000, 5);
	exp_tp(&buf, len, "b.c:20", 100, 100, 50);
	exp_lat(&buf, len, "c.c:30", 0, 1000, 10, 2);
	exp_lat(&buf, len, "c.c:30", 0, 3000, 30, 4);
	exp_lat(&buf, len, "c.c:30", 25, 1000, 10, 2);
	exp_lat(&buf, len, "c.c:30", 25, 1000, 10, 4);
	exp_lat(&buf, len, "c.c:30", 50, 2000, 20, 2);
	exp_lat(&buf, len, "c.c:30", 75, 2000, 20, 1);
	for (int pct = 0; pct <= 100; pct += 25)
		exp_tp(&buf, len, "/usr/include/coz.h:50", pct, 1000 - 5 * pct, 10);
	append(&buf, len, "runtime\ttime=1000000\nsamples\tlocation=a.c:10\tcount=7\n");
	return buf;
}

static const struct causal_series *find_series(const struct causal_profile *p,
					       const struct causal_summary *s, const char *line)
{
	for (size_t i = 0; i < s->n_series; i++) {
		if (strcmp(causal_profile_string(p, s->series[i].selected), line) == 0)
			return &s->series[i];
	}
	return NULL;
}

static void assert_point(const struct causal_series *c, size_t i, int pct, double y)
{
	assert_true(i < c->n_buckets);
	assert_int_equal(c->buckets[i].speedup_pct, pct);
	NEAR(c->buckets[i].program_speedup, y);
}

static void summarize_viewer(const struct causal_profile *p, unsigned min_points,
			     struct causal_summary *s)
{
	struct causal_summary_options o = {.method = CAUSAL_METHOD_COZ_VIEWER,
					   .min_speedups = min_points};

	assert_int_equal(causal_summarize(p, &o, s), 0);
	assert_int_equal(s->method, CAUSAL_METHOD_COZ_VIEWER);
}

/* Default Minimum Points (10) is lowered to 4, where a.c:10 and c.c:30 show. */
static void test_viewer_points_and_lowering(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *a, *c;
	size_t len;
	char *buf = viewer_profile(&len);

	(void)state;
	load(&p, buf, len);
	summarize_viewer(&p, 0, &s);
	assert_int_equal(s.viewer_min_points, 4);
	assert_int_equal(s.n_series, 2);
	assert_null(find_series(&p, &s, "b.c:20")); /* 3 points < 4 */
	assert_null(find_series(&p, &s, "/usr/include/coz.h:50"));
	assert_int_equal(s.dropped_coz_h, 5);
	assert_int_equal(s.dropped_few_speedups, 1);
	/* a.c:100% (4 visits), b.c:75% (-500%) */
	assert_int_equal(s.dropped_out_of_range, 2);
	assert_false(s.phase_correction);

	a = find_series(&p, &s, "a.c:10");
	assert_non_null(a);
	assert_int_equal(a->n_buckets, 4);
	assert_point(a, 0, 0, 0);
	assert_point(a, 1, 25, 0.10);
	assert_point(a, 2, 50, 0.20);
	assert_point(a, 3, 75, 0.15);
	assert_int_equal(a->buckets[2].experiments, 2);
	NEAR(a->buckets[2].visits, 10);
	NEAR(a->impact, 0.125);
	assert_false(a->phase_corrected);
	assert_true(isnan(a->buckets[1].ci_low) && isnan(a->fit.effect));

	c = find_series(&p, &s, "c.c:30");
	assert_non_null(c);
	assert_int_equal(c->n_buckets, 4);
	assert_point(c, 0, 0, 0);
	assert_point(c, 1, 25, -1.0 / 7);
	assert_point(c, 2, 50, -3.0 / 7);
	assert_point(c, 3, 75, -5.0 / 7);
	NEAR(c->impact, 0);
	/* ranked by impact: a (0.125) before c (0) */
	assert_ptr_equal(a, &s.series[0]);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* At Minimum Points 3, b.c:20 shows too and ranks first (impact 0.495). */
static void test_viewer_ranking(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *b;
	size_t len;
	char *buf = viewer_profile(&len);

	(void)state;
	load(&p, buf, len);
	summarize_viewer(&p, 3, &s);
	assert_int_equal(s.viewer_min_points, 3);
	assert_int_equal(s.n_series, 3);
	b = find_series(&p, &s, "b.c:20");
	assert_non_null(b);
	assert_int_equal(b->n_buckets, 3);
	assert_point(b, 1, 50, 0.50);
	assert_point(b, 2, 100, 0.98);
	NEAR(b->impact, 0.495);
	NEAR(b->max_speedup, 0.98);
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "b.c:20");
	assert_string_equal(causal_profile_string(&p, s.series[1].selected), "a.c:10");
	assert_string_equal(causal_profile_string(&p, s.series[2].selected), "c.c:30");
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* lever's own analysis of the same profile differs: it phase-corrects a.c:10. */
static void test_lever_method_differs(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *a;
	size_t len;
	char *buf = viewer_profile(&len);

	(void)state;
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(
		&p, &(struct causal_summary_options){.resamples = 100, .min_speedups = 3}, &s),
	    0);
	assert_int_equal(s.method, CAUSAL_METHOD_LEVER);
	a = find_series(&p, &s, "a.c:10");
	assert_non_null(a);
	assert_true(a->phase_corrected);
	assert_true(fabs(a->buckets[1].program_speedup - 0.10) > 0.05);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* The JSON says which method made it; the table has the viewer's columns. */
static void test_viewer_reports(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	json_error_t err;
	json_t *doc;
	size_t len;
	char *buf = viewer_profile(&len), *out;

	(void)state;
	load(&p, buf, len);
	summarize_viewer(&p, 0, &s);
	out = report_to_string(causal_report_json, &p, &s, NULL);
	doc = json_loads(out, 0, &err);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "method")), "coz-viewer");
	assert_int_equal(json_integer_value(json_object_get(doc, "viewer_min_points")), 4);
	assert_int_equal(json_array_size(json_object_get(doc, "series")), 2);
	json_decref(doc);
	free(out);
	out = report_to_string(causal_report_text, &p, &s, NULL);
	assert_non_null(strstr(out, "method: coz-viewer"));
	assert_non_null(strstr(out, "impact"));
	assert_non_null(strstr(out, "+12.5%")); /* a.c:10's impact */
	assert_null(strstr(out, "[95% CI]"));
	free(out);
	causal_summary_free(&s);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 100}, &s), 0);
	out = report_to_string(causal_report_json, &p, &s, NULL);
	doc = json_loads(out, 0, &err);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "method")), "lever");
	json_decref(doc);
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* Bad input never crashes the viewer's method or its reports. */
static void test_viewer_fuzz(void **state)
{
	static const char *tokens[] = {"\t",	      "=",
				       "\n",	      "experiment",
				       "speedup=",    "delta=",
				       "0.00",	      "-1",
				       "duration=",   "latency-point",
				       "difference=", "9223372036854775807",
				       "/coz.h:1",    "arrivals=0"};
	const struct fuzz_edits edits_of = {NULL, 0, tokens, ARRAY_SIZE(tokens), 2};
	size_t base_len;
	char *base = viewer_profile(&base_len), buf[8192];
	FILE *devnull = fopen("/dev/null", "w");
	struct rng r;

	(void)state;
	assert_true(base_len < sizeof(buf) / 2);
	assert_non_null(devnull);
	rng_seed(&r, 1818);
	for (int iter = 0; iter < 3000; iter++) {
		struct causal_profile p;
		struct causal_summary s;
		size_t len = base_len;
		int edits = 1 + (int)rng_below(&r, 8);

		memcpy(buf, base, len);
		for (int k = 0; k < edits; k++)
			fuzz_edit(&r, &edits_of, buf, &len, sizeof(buf));
		causal_profile_init(&p);
		(void)causal_profile_read_buffer(&p, buf, len, "fuzz.coz", NULL);
		for (unsigned min = 0; min <= 3; min += 3) {
			assert_int_equal(causal_summarize(&p,
							  &(struct causal_summary_options){
							      .method = CAUSAL_METHOD_COZ_VIEWER,
							      .min_speedups = min},
							  &s),
					 0);
			for (size_t i = 0; i < s.n_series; i++)
				for (size_t k = 0; k < s.series[i].n_buckets; k++) {
					double y = s.series[i].buckets[k].program_speedup;

					assert_true(y >= -1 && y <= 2);
				}
			causal_report_text(devnull, &p, &s,
					   &(struct causal_report_options){.detail = true});
			causal_report_json(devnull, &p, &s, NULL);
			causal_summary_free(&s);
		}
		causal_profile_free(&p);
	}
	fclose(devnull);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_viewer_points_and_lowering),
	    cmocka_unit_test(test_viewer_ranking),
	    cmocka_unit_test(test_lever_method_differs),
	    cmocka_unit_test(test_viewer_reports),
	    cmocka_unit_test(test_viewer_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
