/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Bootstrap confidence intervals, bias-corrected and accelerated (BCa;
 * Efron & Tibshirani, "An Introduction to the Bootstrap", ch. 14): the
 * percentiles of the bootstrap distribution are shifted by the bias
 * correction z0 (where the estimate falls among the replicates) and the
 * acceleration a (skewness of the jackknife influence values). Also the
 * classic Student t interval of a mean.
 *
 * Large samples: resampling a mean costs n random reads per replicate (10^7
 * values and 200 replicates took minutes), yet for large n the bootstrap
 * distribution of a mean is known to far better than Monte Carlo precision.
 * Its cumulants are exact functions of the sample's moments (the mean of n
 * draws from the empirical distribution: variance m2 / n, skewness
 * g1 / sqrt(n), excess kurtosis g2 / n), and the Cornish-Fisher expansion in
 * them gives its quantiles with an error of order n^(-3/2). So when a sample
 * has at least RESAMPLE_MAX values and the mean's skewness and excess
 * kurtosis are both below SMOOTH_MAX (no single value dominates), each
 * replicate's mean is drawn from that expansion in O(1) rather than by
 * resampling; everything else (replicates, z0, the jackknife acceleration,
 * the BCa percentiles) is unchanged. Samples with a heavy outlier, whose
 * bootstrap distribution is not smooth, are still resampled.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "stats/internal.h"
#include "stats/stats.h"

static void interval_clear(struct stats_interval *out)
{
	out->estimate = out->low = out->high = out->bias_z0 = out->acceleration = NAN;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Jackknife influence values of one group, added to the sums for the
 * acceleration; several groups are weighted as Efron & Tibshirani (15.36)
 * and SciPy do: U_i = (n - 1)(mean - jack_i), sums of U^2 / n^2 and U^3 / n^3.
 */
static void acceleration_add(const double *jack, size_t n, double *sum2, double *sum3)
{
	double mean = stats_mean(jack, n), f = (double)(n - 1) / (double)n, s2 = 0.0, s3 = 0.0;

	for (size_t i = 0; i < n; i++) {
		double d = mean - jack[i];

		s2 += d * d;
		s3 += d * d * d;
	}
	*sum2 += f * f * s2;
	*sum3 += f * f * f * s3;
}

static double acceleration_of(double sum2, double sum3)
{
	return sum2 > 0.0 ? sum3 / (6.0 * pow(sum2, 1.5)) : 0.0;
}

static int bca_finish(double estimate, double *reps, size_t b, double accel, double level,
		      struct stats_interval *out)
{
	size_t less = 0, equal = 0;
	double prop, z0, zl, a1, a2;

	interval_clear(out);
	out->estimate = estimate;
	if (b < 2 || !(level > 0.0 && level < 1.0) || !isfinite(estimate))
		return -EINVAL;
	qsort(reps, b, sizeof(*reps), compare_double);
	for (size_t i = 0; i < b; i++) {
		less += reps[i] < estimate;
		equal += reps[i] == estimate;
	}
	prop = ((double)less + 0.5 * (double)equal) / (double)b;
	prop = fmin(fmax(prop, 0.5 / (double)b), 1.0 - 0.5 / (double)b);
	z0 = stats_normal_quantile(prop);
	zl = stats_normal_quantile((1.0 - level) / 2.0);
	a1 = stats_normal_cdf(z0 + (z0 + zl) / (1.0 - accel * (z0 + zl)));
	a2 = stats_normal_cdf(z0 + (z0 - zl) / (1.0 - accel * (z0 - zl)));
	out->bias_z0 = z0;
	out->acceleration = accel;
	out->low = stats_quantile_sorted(reps, b, a1);
	out->high = stats_quantile_sorted(reps, b, a2);
	return 0;
}

int stats_bca_interval(double estimate, double *replicates, size_t n_replicates,
		       const double *jackknife, size_t n_jackknife, double level,
		       struct stats_interval *out)
{
	double s2 = 0.0, s3 = 0.0;

	acceleration_add(jackknife, n_jackknife, &s2, &s3);
	return bca_finish(estimate, replicates, n_replicates, acceleration_of(s2, s3), level, out);
}

/* ------------------------------------------------------------ statistics */

/* k-th smallest of x[0..n) by quickselect; reorders x (smaller before, larger after). */
double stats_select_inplace(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = x[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				double t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

double stats_median_inplace(double *x, size_t n)
{
	double hi = stats_select_inplace(x, n, n / 2), lo;

	if (n % 2)
		return hi;
	/* the largest of the lower half */
	lo = x[0];
	for (size_t i = 1; i < n / 2; i++)
		if (x[i] > lo)
			lo = x[i];
	return (lo + hi) / 2.0;
}

static double resampled_mean(struct rng *r, const double *x, size_t n);

/* ------------------------------------------------------------ large samples */

#define RESAMPLE_MAX 10000 /* values; above, the expansion when smooth */
#define SMOOTH_MAX   0.05  /* |skewness| and |excess kurtosis| of the mean */

/* The bootstrap distribution of the mean of x: mean, sd and shape. */
struct mean_law {
	double mean, sd, skew, kurt;
};

/* Fill law and say whether it is smooth enough to draw from (else resample). */
static bool mean_law_of(const double *x, size_t n, struct mean_law *law)
{
	double m = stats_mean(x, n), m2 = 0.0, m3 = 0.0, m4 = 0.0, dn = (double)n;

	if (n < RESAMPLE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - m, d2 = d * d;

		m2 += d2;
		m3 += d2 * d;
		m4 += d2 * d2;
	}
	m2 /= dn;
	m3 /= dn;
	m4 /= dn;
	law->mean = m;
	law->sd = sqrt(m2 / dn);
	if (!isfinite(m4)) /* moments overflow: resample */
		return false;
	if (!(m2 > 0.0)) { /* constant: every replicate is the mean */
		law->skew = law->kurt = 0.0;
	} else {
		law->skew = m3 / pow(m2, 1.5) / sqrt(dn);
		law->kurt = (m4 / (m2 * m2) - 3.0) / dn;
	}
	return isfinite(law->sd) && fabs(law->skew) < SMOOTH_MAX && fabs(law->kurt) < SMOOTH_MAX;
}

/* One replicate of the mean: a normal deviate through the Cornish-Fisher expansion. */
static double mean_law_draw(struct rng *r, const struct mean_law *law)
{
	double u = ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
	double z = stats_normal_quantile(u), z2 = z * z, g1 = law->skew, g2 = law->kurt;
	double w = z + g1 / 6.0 * (z2 - 1.0) + g2 / 24.0 * z * (z2 - 3.0) -
		   g1 * g1 / 36.0 * z * (2.0 * z2 - 5.0);

	return law->mean + law->sd * w;
}

/* Replicates of the mean: drawn from its law when smooth, else by resampling. */
static double replicate_mean(struct rng *r, const double *x, size_t n, const struct mean_law *law)
{
	return law ? mean_law_draw(r, law) : resampled_mean(r, x, n);
}

static void resample(struct rng *r, const double *x, size_t n, double *into)
{
	for (size_t i = 0; i < n; i++)
		into[i] = x[rng_below(r, n)];
}

static double resampled_mean(struct rng *r, const double *x, size_t n)
{
	double s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += x[rng_below(r, n)];
	return s / (double)n;
}

/* Leave-one-out means. */
static void jackknife_mean(const double *x, size_t n, double *jack)
{
	double sum = stats_mean(x, n) * (double)n;

	for (size_t i = 0; i < n; i++)
		jack[i] = (sum - x[i]) / (double)(n - 1);
}

/* Median of the sorted array s without its element at index skip. */
static double median_without(const double *s, size_t n, size_t skip)
{
	size_t m = n - 1, lo = (m - 1) / 2, hi = m / 2;
	double a = s[lo + (lo >= skip)], b = s[hi + (hi >= skip)];

	return (a + b) / 2.0;
}

int stats_bootstrap_mean(const double *x, size_t n, double level, size_t resamples, uint64_t seed,
			 struct stats_interval *out)
{
	double *reps = malloc((resamples ? resamples : 1) * sizeof(*reps));
	double *jack = malloc((n ? n : 1) * sizeof(*jack));
	struct mean_law law;
	struct rng r;
	bool smooth;
	int err = -ENOMEM;

	interval_clear(out);
	if (!reps || !jack)
		goto out;
	err = -EINVAL;
	if (n < 2)
		goto out;
	rng_seed(&r, seed);
	smooth = mean_law_of(x, n, &law);
	for (size_t b = 0; b < resamples; b++)
		reps[b] = replicate_mean(&r, x, n, smooth ? &law : NULL);
	jackknife_mean(x, n, jack);
	err = stats_bca_interval(stats_mean(x, n), reps, resamples, jack, n, level, out);
out:
	free(reps);
	free(jack);
	return err;
}

int stats_bootstrap_median(const double *x, size_t n, double level, size_t resamples, uint64_t seed,
			   struct stats_interval *out)
{
	double *reps = malloc((resamples ? resamples : 1) * sizeof(*reps));
	double *jack = malloc((n ? n : 1) * sizeof(*jack));
	double *work = malloc((n ? n : 1) * sizeof(*work));
	double *sorted = stats_sorted_copy(x, n);
	struct rng r;
	int err = -ENOMEM;

	interval_clear(out);
	if (!reps || !jack || !work || !sorted)
		goto out;
	err = -EINVAL;
	if (n < 2)
		goto out;
	rng_seed(&r, seed);
	for (size_t b = 0; b < resamples; b++) {
		resample(&r, x, n, work);
		reps[b] = stats_median_inplace(work, n);
	}
	for (size_t i = 0; i < n; i++)
		jack[i] = median_without(sorted, n, i);
	err = stats_bca_interval(stats_quantile_sorted(sorted, n, 0.5), reps, resamples, jack, n,
				 level, out);
out:
	free(reps);
	free(jack);
	free(work);
	free(sorted);
	return err;
}

/*
 * Acceleration sums of one group's jackknife ratios, computed as they are
 * needed rather than stored (two arrays of n doubles for 10^7 values): the
 * leave-one-out mean of x is (sum - x_i) / (n - 1), and the ratio puts it
 * over `other` (numerator) or under it (denominator).
 */
static void ratio_acceleration_add(const double *x, size_t n, double other, bool numerator,
				   double *sum2, double *sum3)
{
	double sum = stats_mean(x, n) * (double)n, mean = 0.0, c = 0.0;
	double f = (double)(n - 1) / (double)n, s2 = 0.0, s3 = 0.0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			double loo = (sum - x[i]) / (double)(n - 1);
			double jack = numerator ? loo / other : other / loo, d;

			if (pass == 0) { /* Neumaier's compensated sum, as stats_mean */
				double t = mean + jack;

				c += fabs(mean) >= fabs(jack) ? (mean - t) + jack
							      : (jack - t) + mean;
				mean = t;
				continue;
			}
			d = mean - jack;
			s2 += d * d;
			s3 += d * d * d;
		}
		if (pass == 0)
			mean = (mean + c) / (double)n;
	}
	*sum2 += f * f * s2;
	*sum3 += f * f * f * s3;
}

int stats_bootstrap_ratio_of_means(const double *a, size_t na, const double *b, size_t nb,
				   double level, size_t resamples, uint64_t seed,
				   struct stats_interval *out)
{
	double *reps = malloc((resamples ? resamples : 1) * sizeof(*reps));
	double ma, mb, s2 = 0.0, s3 = 0.0;
	struct mean_law la, lb;
	bool smooth_a, smooth_b;
	struct rng r;
	int err = -ENOMEM;

	interval_clear(out);
	if (!reps)
		goto out;
	err = -EINVAL;
	if (na < 2 || nb < 2)
		goto out;
	ma = stats_mean(a, na);
	mb = stats_mean(b, nb);
	err = -EDOM;
	if (mb == 0.0)
		goto out;
	rng_seed(&r, seed);
	smooth_a = mean_law_of(a, na, &la);
	smooth_b = mean_law_of(b, nb, &lb);
	for (size_t k = 0; k < resamples; k++) {
		double ra = replicate_mean(&r, a, na, smooth_a ? &la : NULL);
		double rb = replicate_mean(&r, b, nb, smooth_b ? &lb : NULL);

		reps[k] = ra / rb;
	}
	/* jackknife within each sample; the acceleration pools both groups */
	ratio_acceleration_add(a, na, mb, true, &s2, &s3);
	ratio_acceleration_add(b, nb, ma, false, &s2, &s3);
	err = bca_finish(ma / mb, reps, resamples, acceleration_of(s2, s3), level, out);
out:
	free(reps);
	return err;
}

int stats_t_interval_mean(const double *x, size_t n, double level, struct stats_interval *out)
{
	double m, half;

	interval_clear(out);
	if (n < 2 || !(level > 0.0 && level < 1.0))
		return -EINVAL;
	m = stats_mean(x, n);
	half =
	    stats_t_quantile(0.5 + level / 2.0, (double)(n - 1)) * stats_sd(x, n) / sqrt((double)n);
	out->estimate = m;
	out->low = m - half;
	out->high = m + half;
	return 0;
}
