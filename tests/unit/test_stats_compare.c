/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The two-sample decision of src/stats (compare.c): describing a sample,
 * choosing Welch's t or Mann-Whitney by normality, running the test, the
 * speedup and the verdict. Expected values from SciPy 1.10.1 / NumPy 1.24.2
 * (Debian 12's python3-scipy), printed by
 *
 *     /usr/bin/python3 bench/stats/compare_reference.py
 *
 * which holds the same data sets A, B and C; each value below names the
 * call that produced it.
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

#include "stats/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const double A[] = {1.012, 1.034, 0.998, 1.021, 1.005, 1.027,
			   1.016, 0.993, 1.030, 1.009, 1.019, 1.002};
static const double B[] = {0.981, 0.995, 0.972, 0.989, 0.978, 1.001,
			   0.985, 0.969, 0.993, 0.976, 0.987, 0.983};
/* A's level with two slow runs: not normal, so the decision turns to Mann-Whitney. */
static const double C[] = {1.001, 1.011, 1.003, 1.022, 1.008, 1.004,
			   1.452, 1.033, 1.015, 1.006, 1.904, 1.026};

/* |got - want| <= rel * |want| */
static void near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%s: got %.17g, want %.17g (relative %.3g)", what, got, want, rel);
}

static void test_describe(void **state)
{
	struct stats_sample_description d;

	(void)state;
	assert_int_equal(stats_describe_sample(&d, "A", A, N(A), 0.95), 0);
	assert_string_equal(d.name, "A");
	assert_int_equal(d.n, 12);
	near(d.summary.mean, 1.0138333333333336, 1e-12, "np.mean(A)");
	near(d.summary.sd, 0.012981338587185514, 1e-10, "np.std(A, ddof=1)");
	near(d.summary.median, 1.014, 1e-12, "np.median(A)");
	assert_int_equal(d.normality_err, 0);
	/* SciPy's swilk works in single precision */
	near(d.normality.statistic, 0.9761706590652466, 1e-5, "stats.shapiro(A) W");
	near(d.normality.p, 0.9636263847351074, 1e-3, "stats.shapiro(A) p");
	near(d.ci_mean.low, 1.005585384294093, 1e-10, "stats.t.interval(0.95) low");
	near(d.ci_mean.high, 1.0220812823725742, 1e-10, "stats.t.interval(0.95) high");
	assert_int_equal(d.outliers, 0);

	assert_int_equal(stats_describe_sample(&d, "C", C, N(C), 0.95), 0);
	near(d.normality.statistic, 0.5105414986610413, 1e-5, "stats.shapiro(C) W");
	near(d.normality.p, 2.1151272449060343e-05, 1e-2, "stats.shapiro(C) p");
	near(d.ci_mean.low, 0.9481227754493743, 1e-10, "stats.t.interval(C) low");
	/* 1.452 and 1.904 lie far beyond 10 scaled MADs of the median 1.013 */
	assert_int_equal(d.outliers, 2);

	assert_int_equal(stats_describe_sample(&d, "empty", A, 0, 0.95), -EINVAL);
}

static void test_normal_sides_take_welch(void **state)
{
	struct stats_compare_options o;
	struct stats_comparison c;

	(void)state;
	stats_compare_options_init(&o);
	o.resamples = 2000;
	assert_int_equal(stats_compare_samples(&c, &o, "A", A, N(A), "B", B, N(B)), 0);
	assert_int_equal(c.test, STATS_TEST_WELCH);
	assert_non_null(strstr(c.reason, "A is consistent with normal"));
	assert_non_null(strstr(c.reason, "B is consistent with normal"));
	assert_int_equal(c.test_err, 0);
	near(c.result.statistic, 6.392908772228679, 1e-9, "ttest_ind(equal_var=False) t");
	near(c.result.df1, 20.217666807712494, 1e-9, "Welch-Satterthwaite df");
	near(c.result.p, 2.9330537401395036e-06, 1e-6, "ttest_ind(equal_var=False) p");
	near(c.variance.statistic, 1.5616509385046184, 1e-9, "levene(center='median') F");
	near(c.variance.p, 0.22455524664203688, 1e-6, "levene(center='median') p");
	near(c.speedup.estimate, 1.0302311796087733, 1e-12, "mean(A)/mean(B)");
	assert_true(c.speedup.low <= c.speedup.estimate && c.speedup.estimate <= c.speedup.high);
	assert_true(c.significant);
	/* the ± half-width comes from the seeded bootstrap, not from SciPy */
	assert_int_equal(strncmp(c.verdict, "B is 3.0% ± ", strlen("B is 3.0% ± ")), 0);
	assert_non_null(
	    strstr(c.verdict, "% faster than A, p = 2.9e-06; significant at alpha = 0.05"));
}

static void test_forced_student(void **state)
{
	struct stats_compare_options o;
	struct stats_comparison c;

	(void)state;
	stats_compare_options_init(&o);
	o.test = STATS_TEST_STUDENT;
	o.resamples = 500;
	stats_compare_samples(&c, &o, "A", A, N(A), "B", B, N(B));
	assert_int_equal(c.test, STATS_TEST_STUDENT);
	assert_string_equal(c.reason, "chosen with --test");
	near(c.result.statistic, 6.392908772228679, 1e-9, "ttest_ind(equal_var=True) t");
	near(c.result.df1, 22.0, 1e-12, "n1 + n2 - 2");
	near(c.result.p, 1.9672325150293377e-06, 1e-6, "ttest_ind(equal_var=True) p");
}

static void test_skewed_side_takes_mann_whitney(void **state)
{
	struct stats_compare_options o;
	struct stats_comparison c;

	(void)state;
	stats_compare_options_init(&o);
	o.resamples = 2000;
	stats_compare_samples(&c, &o, "A", A, N(A), "C", C, N(C));
	assert_int_equal(c.test, STATS_TEST_MANN_WHITNEY);
	assert_non_null(strstr(c.reason, "B is NOT normal (Shapiro-Wilk W = 0.51"));
	assert_true(c.exact);
	near(c.result.statistic, 64.0, 1e-12, "mannwhitneyu(method='exact') U");
	near(c.result.p, 0.6706595329559389, 1e-9, "mannwhitneyu(method='exact') p");
	near(c.speedup.estimate, 0.9021876158694848, 1e-12, "mean(A)/mean(C)");
	assert_false(c.significant);
	assert_non_null(strstr(c.verdict, "B is 10.8% "));
	assert_non_null(strstr(c.verdict, "slower than A, p = 0.671; NOT significant"));
	/* the same decision when the skewed sample is A */
	stats_compare_samples(&c, &o, "C", C, N(C), "A", A, N(A));
	assert_int_equal(c.test, STATS_TEST_MANN_WHITNEY);
	assert_non_null(strstr(c.reason, "A is NOT normal"));
}

static void test_no_variation(void **state)
{
	static const double k1[] = {2.0, 2.0, 2.0, 2.0}, k2[] = {2.0, 2.0, 2.0};
	struct stats_compare_options o;
	struct stats_comparison c;

	(void)state;
	stats_compare_options_init(&o);
	o.resamples = 200;
	assert_int_equal(stats_compare_samples(&c, &o, "k1", k1, N(k1), "k2", k2, N(k2)), 0);
	assert_int_equal(c.a.normality_err, -EDOM);
	assert_int_equal(c.test, STATS_TEST_MANN_WHITNEY);
	assert_int_not_equal(c.test_err, 0);
	assert_false(c.significant);
	assert_string_equal(c.verdict, "cannot test: the samples have no variation");
}

/* Past Shapiro-Wilk's range the mean is normal by the CLT: Welch, said so. */
static void test_large_samples_take_welch(void **state)
{
	enum { n = STATS_SW_MAX_N + 1 };
	double *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	struct stats_compare_options o;
	struct stats_comparison c;
	char text[160];

	(void)state;
	assert_non_null(x);
	assert_non_null(y);
	/* uniform, not normal: only the size can justify the t-test */
	for (size_t i = 0; i < n; i++) {
		x[i] = 1.0 + (double)(i % 100) / 1000.0;
		y[i] = 1.01 + (double)((i * 37) % 100) / 1000.0;
	}
	stats_compare_options_init(&o);
	o.resamples = 200;
	stats_compare_samples(&c, &o, "x", x, n, "y", y, n);
	assert_int_equal(c.test, STATS_TEST_WELCH);
	assert_non_null(strstr(c.reason, "central limit theorem"));
	assert_string_equal(stats_normality_text(&c.a, 0.05, text, sizeof(text)),
			    "not tested (Shapiro-Wilk covers n <= 5000)");
	free(x);
	free(y);
}

/* Subnormal and huge values: W and sd as for D itself (SciPy's D lines), never NaN. */
static void test_extreme_scales(void **state)
{
	static const double D[] = {1.0, 2.0, 3.0, 1.5, 2.5};
	static const double factor[] = {1e-310, 1e60, 1e300};
	struct stats_sample_description d;
	double x[5];
	char text[160];

	(void)state;
	for (size_t f = 0; f < N(factor); f++) {
		for (size_t i = 0; i < N(D); i++)
			x[i] = D[i] * factor[f];
		assert_int_equal(stats_describe_sample(&d, "x", x, N(x), 0.95), 0);
		assert_int_equal(d.normality_err, 0);
		near(d.normality.statistic, 0.9867621660232544, 1e-5, "stats.shapiro(D) W");
		near(d.normality.p, 0.9671739339828491, 1e-3, "stats.shapiro(D) p");
		near(d.summary.sd, 0.7905694150420949 * factor[f], 1e-9, "np.std(D) * factor");
		stats_normality_text(&d, 0.05, text, sizeof(text));
		assert_null(strstr(text, "nan"));
	}
}

/* Zero or negative values: no speedup (not "-250% slower"), no interval. */
static void test_speedup_needs_positive_values(void **state)
{
	static const double z[] = {0, 0, 0, 1}, neg[] = {-1, -1.1, -0.9, -1.05},
			    pos[] = {0.4, 0.41, 0.39, 0.42};
	struct stats_compare_options o;
	struct stats_comparison c;

	(void)state;
	stats_compare_options_init(&o);
	o.resamples = 500;
	stats_compare_samples(&c, &o, "z", z, N(z), "z", z, N(z));
	assert_true(isnan(c.speedup.estimate));
	assert_true(isnan(c.speedup.low) && isnan(c.speedup.high));
	assert_non_null(
	    strstr(c.verdict, "the speedup is undefined (the values must be positive)"));
	stats_compare_samples(&c, &o, "pos", pos, N(pos), "neg", neg, N(neg));
	assert_true(isnan(c.speedup.estimate));
	assert_null(strstr(c.verdict, "slower"));
	assert_true(c.significant); /* the test itself still holds */
}

static void test_format_p(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(stats_format_p(NAN, b, sizeof(b)), "n/a");
	assert_string_equal(stats_format_p(2.9330537401395036e-06, b, sizeof(b)), "2.9e-06");
	assert_string_equal(stats_format_p(0.6706595329559389, b, sizeof(b)), "0.671");
	assert_string_equal(stats_format_p(1e-4, b, sizeof(b)), "0.0001");
	assert_string_equal(stats_compare_test_id(STATS_TEST_MANN_WHITNEY), "mann-whitney");
	assert_string_equal(stats_compare_test_name(STATS_TEST_WELCH), "Welch's t-test");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_normal_sides_take_welch),
	    cmocka_unit_test(test_forced_student),
	    cmocka_unit_test(test_skewed_side_takes_mann_whitney),
	    cmocka_unit_test(test_no_variation),
	    cmocka_unit_test(test_large_samples_take_welch),
	    cmocka_unit_test(test_extreme_scales),
	    cmocka_unit_test(test_speedup_needs_positive_values),
	    cmocka_unit_test(test_format_p),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
