/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The suite analysis of lever compare --suite (src/measure/suite.c): the
 * choice of configurations, per-benchmark comparisons, the count of
 * significant ones, the ratios mean(B)/mean(A) and the within-subjects
 * ANOVA. Expected values from SciPy 1.10.1 / NumPy 1.24.2, printed by
 *
 *     /usr/bin/python3 bench/stats/compare_reference.py
 *
 * (its "suite" lines, on the same data). With two configurations and
 * balanced cells the ANOVA's F is the square of the paired t statistic on
 * the cell means, with the same p: an independent route to the answer.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/measure.h"

static const char suite_csv[] = "benchmark,config,time\n"
				"a,A,1.00\na,A,1.02\na,A,1.01\na,B,0.95\na,B,0.96\na,B,0.94\n"
				"b,A,2.00\nb,A,2.04\nb,A,2.02\nb,B,2.01\nb,B,2.03\nb,B,2.05\n"
				"c,A,0.50\nc,A,0.51\nc,A,0.52\nc,B,0.47\nc,B,0.48\nc,B,0.46\n"
				"d,A,3.10\nd,A,3.00\nd,A,3.20\nd,B,3.05\nd,B,2.95\nd,B,3.00\n";

/* |got - want| <= rel * |want| */
static void near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%s: got %.17g, want %.17g (relative %.3g)", what, got, want, rel);
}

static void load(struct measure_suite *r, const char *csv)
{
	char err[256];

	memset(r, 0, sizeof(*r));
	if (stats_suite_read_buffer("suite.csv", csv, strlen(csv), &r->suite, err, sizeof(err)))
		fail_msg("%s", err);
}

static void options(struct measure_compare_options *o)
{
	measure_compare_options_init(o);
	o->stats.resamples = 500;
	o->stats.seed = 1;
}

static void test_suite_against_scipy(void **state)
{
	static const double ratio[] = {0.9405940594059404, 1.004950495049505, 0.9215686274509803,
				       0.9677419354838709};
	static const double p[] = {0.0018262606682599716, 0.5733922538253637, 0.008049893100837681,
				   0.22088084049409573};
	struct measure_compare_options o;
	struct measure_suite r;

	(void)state;
	options(&o);
	load(&r, suite_csv);
	assert_int_equal(measure_suite_analyse(&r, NULL, false, &o), 0);
	assert_int_equal(r.config[0], 0);
	assert_int_equal(r.config[1], 1);
	assert_int_equal(r.suite.n_benchmarks, 4);
	for (size_t b = 0; b < 4; b++) {
		const struct stats_comparison *c = &r.cmp[b];

		assert_int_equal(c->a.n, 3);
		assert_int_equal(c->b.n, 3);
		assert_int_equal(c->test, STATS_TEST_WELCH);
		near(c->b.summary.mean / c->a.summary.mean, ratio[b], 1e-12, "mean(B)/mean(A)");
		near(c->result.p, p[b], 1e-6, "ttest_ind(equal_var=False) p");
	}
	assert_int_equal(r.significant, 2);
	assert_int_equal(r.faster, 2);
	near(r.ratio_median, 0.9541679974449057, 1e-12, "np.median(ratios)");
	assert_int_equal(r.ratio_min, 2); /* c */
	assert_int_equal(r.ratio_max, 1); /* b */
	assert_int_equal(r.anova_err, 0);
	near(r.anova.f, 4.3147410358566045, 1e-9, "ttest_rel(cell means) t**2");
	near(r.anova.p, 0.12934879800648036, 1e-7, "ttest_rel(cell means) p");
	near(r.anova.df_treatment, 1.0, 1e-12, "df1");
	near(r.anova.df_error, 3.0, 1e-12, "df2 = cells - subjects - (k - 1)");
	measure_suite_free(&r);
}

/* --configs B,A swaps the sides: every ratio inverts, the ANOVA does not change. */
static void test_configs_order(void **state)
{
	struct measure_compare_options o;
	struct measure_suite r;

	(void)state;
	options(&o);
	load(&r, suite_csv);
	assert_int_equal(measure_suite_analyse(&r, "B,A", false, &o), 0);
	assert_int_equal(r.config[0], 1);
	near(r.cmp[0].b.summary.mean / r.cmp[0].a.summary.mean, 1 / 0.9405940594059404, 1e-12,
	     "mean(A)/mean(B) of a");
	near(r.anova.f, 4.3147410358566045, 1e-9, "F with the sides swapped");
	assert_int_equal(r.faster, 0);
	measure_suite_free(&r);
}

static void test_bad_configs(void **state)
{
	static const char three[] = "benchmark,config,time\n"
				    "a,A,1\na,A,2\na,B,1\na,B,2\na,C,1\na,C,2\n";
	struct measure_compare_options o;
	struct measure_suite r;

	(void)state;
	options(&o);
	load(&r, three);
	assert_int_equal(measure_suite_analyse(&r, NULL, false, &o), MEASURE_EXIT_USAGE);
	measure_suite_free(&r);
	load(&r, three);
	assert_int_equal(measure_suite_analyse(&r, "A,A", false, &o), MEASURE_EXIT_USAGE);
	measure_suite_free(&r);
	load(&r, three);
	assert_int_equal(measure_suite_analyse(&r, "A,D", false, &o), MEASURE_EXIT_USAGE);
	measure_suite_free(&r);
	load(&r, three);
	assert_int_equal(measure_suite_analyse(&r, "A", false, &o), MEASURE_EXIT_USAGE);
	measure_suite_free(&r);
	load(&r, three);
	assert_int_equal(measure_suite_analyse(&r, "A,C", false, &o), 0);
	assert_int_equal(r.config[1], 2);
	measure_suite_free(&r);
}

/* A cell of one run cannot be compared: an error, not a verdict. */
static void test_cell_too_small(void **state)
{
	static const char thin[] = "benchmark,config,time\n"
				   "a,A,1\na,A,2\na,B,1\na,B,2\nb,A,1\nb,B,1\nb,B,2\n";
	struct measure_compare_options o;
	struct measure_suite r;

	(void)state;
	options(&o);
	load(&r, thin);
	assert_int_equal(measure_suite_analyse(&r, NULL, false, &o), 1);
	measure_suite_free(&r);
}

/* --drop-max removes the largest run of each cell before anything else. */
static void test_drop_max(void **state)
{
	struct measure_compare_options o;
	struct measure_suite r;

	(void)state;
	options(&o);
	load(&r, suite_csv);
	assert_int_equal(measure_suite_analyse(&r, NULL, true, &o), 0);
	assert_int_equal(r.dropped, 8);
	assert_int_equal(r.cmp[0].a.n, 2);
	near(r.cmp[0].a.summary.mean, 1.005, 1e-12, "mean of a under A without 1.02");
	near(r.cmp[3].b.summary.mean, 2.975, 1e-12, "mean of d under B without 3.05");
	measure_suite_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_suite_against_scipy),
	    cmocka_unit_test(test_configs_order),
	    cmocka_unit_test(test_bad_configs),
	    cmocka_unit_test(test_cell_too_small),
	    cmocka_unit_test(test_drop_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
