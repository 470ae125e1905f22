/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The fitted curve, the default ranking and thin evidence of the causal
 * report (src/causal/fit.c, summary.c, report_*.c; issue 18): synthetic
 * profiles whose true curves are known, with seeded noise.
 *
 *  - Figure 1 of the Coz paper: line a's true curve jumps to +8% and stays
 *    there, line b's is 0 everywhere. a must rank first by default (text,
 *    JSON, HTML), its fitted curve must level off and lie within 2 points of
 *    the truth at every speedup, and b's fitted effect interval must hold 0.
 *  - A straight true curve stays straight; a curve that levels off at 30%
 *    gets its knee near 30%.
 *  - A line measured by too few experiments says so (thin) in text, JSON and
 *    HTML instead of printing a confident number.
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

typedef double (*truth_fn)(double x);

/*
 * n experiments of `line` at pct, each 100 visits in a time that gives the
 * true program speedup truth(x), times 1 + noise uniform in +-noise.
 */
static void experiments(char **buf, size_t *len, struct rng *r, const char *line, int pct, int n,
			truth_fn truth, double noise)
{
	for (int k = 0; k < n; k++) {
		double e = noise * (2 * rng_double(r) - 1);
		long duration = lround(1e6 * (1 - truth(pct / 100.0)) * (1 + e));

		append(
		    buf, len,
		    "experiment\tselected=%s\tspeedup=%d.%02d\tduration=%ld\tselected-samples=10\n"
		    "throughput-point\tname=round\tdelta=100\n",
		    line, pct / 100, pct % 100, duration);
	}
}

static double figure1_a(double x)
{
	return x > 0 ? 0.08 : 0; /* levelled off before the first speedup measured */
}

static double zero(double x)
{
	(void)x;
	return 0;
}

static double straight(double x)
{
	return 0.3 * x;
}

static double knee30(double x)
{
	return 0.5 * (x < 0.3 ? x : 0.3);
}

/* The demo's shape: speedups 0, 25, 50, 75, 100 (--speedup-step 25), half at 0%. */
static char *figure1_profile(size_t *len, int per_speedup)
{
	char *buf = NULL;
	struct rng r;

	*len = 0;
	rng_seed(&r, 18);
	append(&buf, len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25) {
		int n = pct ? per_speedup : 4 * per_speedup;

		experiments(&buf, len, &r, "figure1.c:48", pct, n, figure1_a, 0.03);
		experiments(&buf, len, &r, "figure1.c:56", pct, n, zero, 0.03);
	}
	return buf;
}

static void test_figure1_fit(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *a, *b;
	size_t len;
	char *buf = figure1_profile(&len, 20);

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	a = series_of(&p, &s, "figure1.c:48");
	b = series_of(&p, &s, "figure1.c:56");
	/* ranked first by default */
	assert_ptr_equal(a, &s.series[0]);
	/* a's fit levels off, and is within 2 points of the truth everywhere */
	assert_true(a->fit.levels_off);
	assert_true(a->fit.knee <= 0.25 + 1e-9);
	for (size_t i = 0; i < a->n_buckets; i++) {
		double x = a->buckets[i].speedup_pct / 100.0;

		assert_true(fabs(a->buckets[i].fit - figure1_a(x)) < 0.02);
		assert_true(fabs(causal_fit_at(&a->fit, x) - figure1_a(x)) < 0.02);
	}
	assert_true(fabs(a->fit.effect - 0.08) < 0.02);
	assert_true(a->fit.effect_low < a->fit.effect && a->fit.effect < a->fit.effect_high);
	/* the straight regression line misses a's curve by more than 2 points at the ends */
	assert_true(fabs(a->intercept + a->slope * 1.0 - 0.08) > 0.02 ||
		    fabs(a->intercept + a->slope * 0.25 - 0.08) > 0.02 ||
		    fabs(a->intercept) > 0.02);
	/* b: its effect's interval holds 0 */
	assert_true(b->fit.effect_low <= 0 && 0 <= b->fit.effect_high);
	assert_int_equal(a->thin, 0);
	assert_int_equal(b->thin, 0);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* The text report ranks a first and prints its fitted effect; the HTML page opens sorted so. */
static void test_figure1_reports(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	size_t len;
	char *buf = figure1_profile(&len, 20), *out;
	const char *a_row, *b_row, *a_chart, *b_chart;
	json_error_t err;
	json_t *root, *first;

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	out = report_to_string(causal_report_text, &p, &s, NULL);
	a_row = strstr(out, " 1  figure1.c:48");
	b_row = strstr(out, " 2  figure1.c:56");
	assert_non_null(a_row);
	assert_non_null(b_row);
	assert_non_null(strstr(a_row, "levels@"));
	assert_non_null(strstr(out, "ranked by impact"));
	free(out);

	out = report_to_string(causal_report_html, &p, &s, NULL);
	assert_non_null(strstr(out, "<option value=\"impact\" selected>"));
	a_chart = strstr(out, "data-name=\"figure1.c:48\"");
	b_chart = strstr(out, "data-name=\"figure1.c:56\"");
	assert_non_null(a_chart);
	assert_non_null(b_chart);
	assert_true(a_chart < b_chart);
	/* the fitted curve is drawn, not a straight regression line */
	assert_non_null(strstr(a_chart, "<polyline"));
	/* the page's script sorts by data-impact: a's must be the larger */
	assert_true(strtod(strstr(a_chart, "data-impact=\"") + 13, NULL) >
		    strtod(strstr(b_chart, "data-impact=\"") + 13, NULL));
	free(out);

	out = report_to_string(causal_report_json, &p, &s, NULL);
	root = json_loads(out, 0, &err);
	if (!root)
		fail_msg("JSON does not parse: %s", err.text);
	assert_string_equal(json_string_value(json_object_get(root, "sort")), "impact");
	first = json_array_get(json_object_get(root, "series"), 0);
	assert_string_equal(json_string_value(json_object_get(first, "line")), "figure1.c:48");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(first, "fit"), "model")),
	    "levels_off");
	assert_true(json_is_false(json_object_get(first, "thin")));
	json_decref(root);
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* A straight curve stays straight; one that levels off at 30% gets a knee near 30%. */
static void test_fit_shapes(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;
	struct rng r;

	rng_seed(&r, 7);
	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 10) {
		experiments(&buf, &len, &r, "straight.c:1", pct, pct ? 12 : 40, straight, 0.02);
		experiments(&buf, &len, &r, "knee.c:1", pct, pct ? 12 : 40, knee30, 0.02);
	}
	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	c = series_of(&p, &s, "straight.c:1");
	assert_false(c->fit.levels_off);
	assert_true(fabs(c->fit.slope - 0.3) < 0.02);
	assert_true(c->fit.effect_low < 0.3 && 0.3 < c->fit.effect_high);
	c = series_of(&p, &s, "knee.c:1");
	assert_true(c->fit.levels_off);
	assert_true(fabs(c->fit.knee - 0.3) <= 0.05);
	for (size_t i = 0; i < c->n_buckets; i++)
		assert_true(fabs(c->buckets[i].fit - knee30(c->buckets[i].speedup_pct / 100.0)) <
			    0.02);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/*
 * Thin evidence: the Figure 1 profile with 2 experiments per speedup and
 * 30% noise. The line is marked thin, and its number is not printed as a
 * measurement: "thin" in the table, parenthesised with the reason in
 * --detail, "thin": true with reasons in JSON, a badge in HTML.
 */
static void test_thin_evidence(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *a;
	char *buf = NULL, *out;
	const char *row;
	size_t len = 0;
	struct rng r;
	json_error_t err;
	json_t *root, *series, *reasons;

	rng_seed(&r, 3);
	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25)
		experiments(&buf, &len, &r, "figure1.c:48", pct, 2, figure1_a, 0.3);
	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	a = series_of(&p, &s, "figure1.c:48");
	assert_true(a->thin & CAUSAL_THIN_POINTS);
	for (size_t i = 1; i < a->n_buckets; i++)
		assert_true(a->buckets[i].thin & CAUSAL_THIN_FEW_EXPERIMENTS);
	assert_int_equal(a->buckets[0].thin, 0);

	out = report_to_string(causal_report_text, &p, &s, NULL);
	row = strstr(out, " 1? figure1.c:48 ");
	assert_non_null(row);
	/* the row's effect column reads "thin", not a number */
	assert_true(strncmp(row + 27, "  thin ", 7) == 0);
	assert_non_null(strstr(out, "? thin:"));
	free(out);
	out = NULL;
	{
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);

		causal_report_text(f, &p, &s, &(struct causal_report_options){.detail = true});
		fclose(f);
	}
	assert_non_null(strstr(out, "thin points in parentheses: e = under 3 experiments"));
	assert_non_null(strstr(out, "thin evidence:"));
	free(out);

	out = report_to_string(causal_report_json, &p, &s, NULL);
	root = json_loads(out, 0, &err);
	if (!root)
		fail_msg("JSON does not parse: %s", err.text);
	series = json_array_get(json_object_get(root, "series"), 0);
	assert_true(json_is_true(json_object_get(series, "thin")));
	reasons = json_object_get(series, "thin_reasons");
	assert_true(json_array_size(reasons) >= 1);
	assert_true(json_is_true(
	    json_object_get(json_array_get(json_object_get(series, "points"), 1), "thin")));
	json_decref(root);
	free(out);

	out = report_to_string(causal_report_html, &p, &s, NULL);
	assert_non_null(strstr(out, "thin evidence</span>"));
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);

	/* the same profile with 20 experiments per speedup and 3% noise is not thin */
	buf = figure1_profile(&len, 20);
	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	for (size_t i = 0; i < s.n_series; i++)
		for (size_t k = 0; k < s.series[i].n_buckets; k++)
			assert_int_equal(s.series[i].buckets[k].thin, 0);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

static void test_thin_text(void **state)
{
	char buf[64];

	assert_string_equal(causal_thin_text(0, buf, sizeof(buf)), "");
	assert_string_equal(
	    causal_thin_text(CAUSAL_THIN_FEW_EXPERIMENTS | CAUSAL_THIN_WIDE, buf, sizeof(buf)),
	    "few experiments, wide interval");
	assert_string_equal(causal_thin_text(CAUSAL_THIN_FEW_VISITS, buf, 4), "few");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_figure1_fit), cmocka_unit_test(test_figure1_reports),
	    cmocka_unit_test(test_fit_shapes),	cmocka_unit_test(test_thin_evidence),
	    cmocka_unit_test(test_thin_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
