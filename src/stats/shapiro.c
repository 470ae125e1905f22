/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shapiro-Wilk W test of normality, following Royston (1995), "Remark AS R94:
 * a remark on algorithm AS 181", Applied Statistics 44(4), and Royston (1992)
 * for the approximations: the coefficients a come from the expected normal
 * order statistics m (Blom's approximation) with polynomial corrections of
 * the two largest; the p-value comes from a normalising transform of W
 * (exact for n = 3, a gamma-shifted log for n <= 11, log-normal above).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/internal.h"
#include "stats/stats.h"

/* Royston (1992): corrections to the largest and second-largest coefficient, in u = 1/sqrt(n). */
static const double coef_a1[] = {0.0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056};
static const double coef_a2[] = {0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633};
/* Royston (1995): p-value transforms, n <= 11 (in n) and n >= 12 (in log n). */
static const double gamma_small[] = {-2.273, 0.459};
static const double mean_small[] = {0.5440, -0.39978, 0.025054, -6.714e-4};
static const double logsd_small[] = {1.3822, -0.77857, 0.062767, -0.0020322};
static const double mean_large[] = {-1.5861, -0.31082, -0.083751, 0.0038915};
static const double logsd_large[] = {-0.4803, -0.082676, 0.0030302};

/*
 * The n/2 coefficients for the upper half of the order statistics, largest
 * first: W's numerator is sum a[i] (x[n-1-i] - x[i]). They are normalised so
 * that the full antisymmetric vector has unit length.
 */
static void sw_coefficients(size_t n, double *a)
{
	size_t half = n / 2, first_plain;
	double sum_m2 = 0.0, u, phi;

	if (n == 3) {
		a[0] = sqrt(0.5);
		return;
	}
	for (size_t i = 0; i < half; i++) {
		/* Blom: E[x_(n-i)] ~ Phi^-1((n - i - 0.375) / (n + 0.25)), 1-based n - i */
		a[i] = stats_normal_quantile(((double)(n - i) - 0.375) / ((double)n + 0.25));
		sum_m2 += a[i] * a[i];
	}
	sum_m2 *= 2.0;
	u = 1.0 / sqrt((double)n);
	double m1 = a[0], m2 = a[1], norm = sqrt(sum_m2);
	double a1 = m1 / norm + stats_poly(coef_a1, 6, u);

	if (n > 5) {
		double a2 = m2 / norm + stats_poly(coef_a2, 6, u);

		phi = (sum_m2 - 2.0 * m1 * m1 - 2.0 * m2 * m2) /
		      (1.0 - 2.0 * a1 * a1 - 2.0 * a2 * a2);
		a[1] = a2;
		first_plain = 2;
	} else {
		phi = (sum_m2 - 2.0 * m1 * m1) / (1.0 - 2.0 * a1 * a1);
		first_plain = 1;
	}
	a[0] = a1;
	phi = sqrt(phi);
	for (size_t i = first_plain; i < half; i++)
		a[i] /= phi;
}

/* P(W' <= w) upper tail of the normalising transform: small W means non-normal. */
static double sw_p_value(double w, size_t n)
{
	double y, m, s, dn = (double)n;

	if (n == 3) {
		double p = (6.0 / M_PI) * (asin(sqrt(w)) - M_PI / 3.0);

		return p < 0.0 ? 0.0 : (p > 1.0 ? 1.0 : p);
	}
	y = log1p(-w); /* log(1 - W) */
	if (n <= 11) {
		double gamma = stats_poly(gamma_small, 2, dn);

		if (y >= gamma)
			return 1e-99; /* beyond the transform's support: W is tiny */
		y = -log(gamma - y);
		m = stats_poly(mean_small, 4, dn);
		s = exp(stats_poly(logsd_small, 4, dn));
	} else {
		double ln = log(dn);

		m = stats_poly(mean_large, 4, ln);
		s = exp(stats_poly(logsd_large, 3, ln));
	}
	return stats_normal_sf((y - m) / s);
}

static double sw_statistic(const double *sorted, size_t n, const double *a)
{
	double mean = stats_mean(sorted, n), ss = 0.0, num = 0.0, w;

	for (size_t i = 0; i < n; i++)
		ss += (sorted[i] - mean) * (sorted[i] - mean);
	for (size_t i = 0; i < n / 2; i++)
		num += a[i] * (sorted[n - 1 - i] - sorted[i]);
	w = num * num / ss;
	return w > 1.0 ? 1.0 : w;
}

int stats_shapiro_wilk(const double *x, size_t n, struct stats_test *out)
{
	double *sorted, *a;
	int err = 0;

	out->statistic = out->p = NAN;
	out->df1 = out->df2 = NAN;
	if (n < STATS_SW_MIN_N || n > STATS_SW_MAX_N)
		return -EINVAL;
	sorted = stats_sorted_copy(x, n);
	a = malloc((n / 2) * sizeof(*a));
	if (!sorted || !a) {
		err = -ENOMEM;
		goto out;
	}
	/* constant (or numerically constant) data: W is undefined */
	if (!(sorted[n - 1] - sorted[0] > 1e-12 * fmax(fabs(sorted[0]), fabs(sorted[n - 1])))) {
		err = -EDOM;
		goto out;
	}
	/*
	 * W is scale-invariant: scale by a power of two (exactly) so that the
	 * sums of squares of tiny or huge values neither underflow nor overflow.
	 */
	{
		double scale = ldexp(1.0, ilogb(fmax(fabs(sorted[0]), fabs(sorted[n - 1]))));

		for (size_t i = 0; i < n; i++)
			sorted[i] /= scale;
	}
	sw_coefficients(n, a);
	out->statistic = sw_statistic(sorted, n, a);
	if (!isfinite(out->statistic)) {
		out->statistic = NAN;
		err = -EDOM;
		goto out;
	}
	out->p = sw_p_value(out->statistic, n);
out:
	free(sorted);
	free(a);
	return err;
}
