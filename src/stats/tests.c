/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parametric tests: Student and Welch two-sample t-tests, one-way ANOVA and
 * the Brown-Forsythe test of equal variances (ANOVA on absolute deviations
 * from the group medians).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"

static void test_clear(struct stats_test *out)
{
	out->statistic = out->df1 = out->df2 = out->p = NAN;
}

/*
 * The t statistics do not change when both samples are multiplied by one
 * factor, but their variances do: they underflow to 0 for subnormal values
 * (squares below 1e-308) and overflow to inf above 1e154, which would report
 * samples that do vary as having "no variation". Such samples are tested
 * scaled by a power of two, which is exact. Returns the power (0: no
 * scaling needed).
 */
static int t_test_scale(const double *a, size_t na, const double *b, size_t nb)
{
	double big = 0.0;
	int e;

	for (size_t i = 0; i < na; i++)
		big = fmax(big, fabs(a[i]));
	for (size_t i = 0; i < nb; i++)
		big = fmax(big, fabs(b[i]));
	if (!(big > 0.0) || !isfinite(big))
		return 0;
	e = ilogb(big);
	return e > -400 && e < 400 ? 0 : -e;
}

typedef int t_test_fn(const double *a, size_t na, const double *b, size_t nb,
		      struct stats_test *out);

/* Run test on copies of a and b multiplied by 2^shift. */
static int t_test_scaled(t_test_fn *test, int shift, const double *a, size_t na, const double *b,
			 size_t nb, struct stats_test *out)
{
	double *x = malloc((na + nb) * sizeof(*x));
	int rc;

	test_clear(out);
	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		x[i] = ldexp(a[i], shift);
	for (size_t i = 0; i < nb; i++)
		x[na + i] = ldexp(b[i], shift);
	rc = test(x, na, x + na, nb, out);
	free(x);
	return rc;
}

static int t_test_student(const double *a, size_t na, const double *b, size_t nb,
			  struct stats_test *out)
{
	double va, vb, df, pooled, se;

	test_clear(out);
	if (na < 2 || nb < 2)
		return -EINVAL;
	va = stats_variance(a, na);
	vb = stats_variance(b, nb);
	df = (double)(na + nb - 2);
	pooled = ((double)(na - 1) * va + (double)(nb - 1) * vb) / df;
	se = sqrt(pooled * (1.0 / (double)na + 1.0 / (double)nb));
	if (!(se > 0.0))
		return -EDOM;
	out->statistic = (stats_mean(a, na) - stats_mean(b, nb)) / se;
	out->df1 = df;
	out->p = stats_t_p_two_sided(out->statistic, df);
	return 0;
}

static int t_test_welch(const double *a, size_t na, const double *b, size_t nb,
			struct stats_test *out)
{
	double qa, qb, se2;

	test_clear(out);
	if (na < 2 || nb < 2)
		return -EINVAL;
	qa = stats_variance(a, na) / (double)na;
	qb = stats_variance(b, nb) / (double)nb;
	se2 = qa + qb;
	if (!(se2 > 0.0))
		return -EDOM;
	out->statistic = (stats_mean(a, na) - stats_mean(b, nb)) / sqrt(se2);
	out->df1 = se2 * se2 / (qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	out->p = stats_t_p_two_sided(out->statistic, out->df1);
	return 0;
}

int stats_anova_oneway(const double *const *groups, const size_t *sizes, size_t k,
		       struct stats_test *out)
{
	double grand = 0.0, ss_between = 0.0, ss_within = 0.0, df1, df2;
	size_t total = 0;

	test_clear(out);
	if (k < 2)
		return -EINVAL;
	for (size_t g = 0; g < k; g++) {
		if (sizes[g] == 0)
			return -EINVAL;
		total += sizes[g];
		grand += stats_mean(groups[g], sizes[g]) * (double)sizes[g];
	}
	if (total <= k)
		return -EINVAL;
	grand /= (double)total;
	for (size_t g = 0; g < k; g++) {
		double m = stats_mean(groups[g], sizes[g]);

		ss_between += (double)sizes[g] * (m - grand) * (m - grand);
		for (size_t i = 0; i < sizes[g]; i++)
			ss_within += (groups[g][i] - m) * (groups[g][i] - m);
	}
	df1 = (double)(k - 1);
	df2 = (double)(total - k);
	out->df1 = df1;
	out->df2 = df2;
	if (!(ss_within > 0.0))
		return -EDOM;
	out->statistic = (ss_between / df1) / (ss_within / df2);
	out->p = stats_f_sf(out->statistic, df1, df2);
	return 0;
}

/* Neumaier-compensated mean of |x_i - center|, as stats_mean of the deviations. */
static double mean_abs_dev(const double *x, size_t n, double center)
{
	double sum = 0.0, c = 0.0;

	for (size_t i = 0; i < n; i++) {
		double z = fabs(x[i] - center), t = sum + z;

		c += fabs(sum) >= fabs(z) ? (sum - t) + z : (z - t) + sum;
		sum = t;
	}
	return (sum + c) / (double)n;
}

/*
 * One-way ANOVA of the absolute deviations from the group medians, computed
 * from the data as it goes (the deviations of two samples of 10^7 values
 * were 160 MB): the same sums, in the same order, as stats_anova_oneway.
 */
int stats_brown_forsythe(const double *const *groups, const size_t *sizes, size_t k,
			 struct stats_test *out)
{
	double *med = calloc(k ? k : 1, sizeof(*med)), *mean = calloc(k ? k : 1, sizeof(*mean));
	double grand = 0.0, ss_between = 0.0, ss_within = 0.0, df1, df2;
	size_t total = 0;
	int err = -EINVAL;

	test_clear(out);
	if (!med || !mean) {
		err = -ENOMEM;
		goto out;
	}
	if (k < 2)
		goto out;
	for (size_t g = 0; g < k; g++) {
		if (sizes[g] == 0)
			goto out;
		med[g] = stats_median(groups[g], sizes[g]);
		mean[g] = mean_abs_dev(groups[g], sizes[g], med[g]);
		total += sizes[g];
		grand += mean[g] * (double)sizes[g];
	}
	if (total <= k)
		goto out;
	grand /= (double)total;
	for (size_t g = 0; g < k; g++) {
		double m = mean[g];

		ss_between += (double)sizes[g] * (m - grand) * (m - grand);
		for (size_t i = 0; i < sizes[g]; i++) {
			double z = fabs(groups[g][i] - med[g]);

			ss_within += (z - m) * (z - m);
		}
	}
	df1 = (double)(k - 1);
	df2 = (double)(total - k);
	out->df1 = df1;
	out->df2 = df2;
	err = -EDOM;
	if (!(ss_within > 0.0))
		goto out;
	out->statistic = (ss_between / df1) / (ss_within / df2);
	out->p = stats_f_sf(out->statistic, df1, df2);
	err = 0;
out:
	free(med);
	free(mean);
	return err;
}

int stats_t_test_student(const double *a, size_t na, const double *b, size_t nb,
			 struct stats_test *out)
{
	int shift = t_test_scale(a, na, b, nb);

	if (shift)
		return t_test_scaled(t_test_student, shift, a, na, b, nb, out);
	return t_test_student(a, na, b, nb, out);
}

int stats_t_test_welch(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out)
{
	int shift = t_test_scale(a, na, b, nb);

	if (shift)
		return t_test_scaled(t_test_welch, shift, a, na, b, nb, out);
	return t_test_welch(a, na, b, nb, out);
}
