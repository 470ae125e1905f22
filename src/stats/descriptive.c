/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Descriptive statistics: mean, variance, quantiles, median, MAD, outliers.
 * Sums use a compensated (Neumaier) accumulator and a two-pass variance so
 * that huge samples and large offsets keep their precision.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats/internal.h"
#include "stats/stats.h"

/* Neumaier's compensated sum. */
static double sum_compensated(const double *x, size_t n)
{
	double sum = 0.0, c = 0.0;

	for (size_t i = 0; i < n; i++) {
		double t = sum + x[i];

		if (fabs(sum) >= fabs(x[i]))
			c += (sum - t) + x[i];
		else
			c += (x[i] - t) + sum;
		sum = t;
	}
	return sum + c;
}

double stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	return sum_compensated(x, n) / (double)n;
}

double stats_variance(const double *x, size_t n)
{
	double mean, ss = 0.0, s = 0.0;

	if (n < 2)
		return NAN;
	mean = stats_mean(x, n);
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;

		ss += d * d;
		s += d;
	}
	/* corrected two-pass formula: removes the rounding error of the mean */
	return (ss - s * s / (double)n) / (double)(n - 1);
}

/*
 * The largest |x - mean| as a power of two, to scale deviations by exactly:
 * the squares of deviations of tiny (subnormal) or huge values underflow or
 * overflow although their standard deviation is representable.
 */
static double deviation_scale(const double *x, size_t n, double mean)
{
	double m = 0.0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(x[i] - mean));
	return m > 0.0 && isfinite(m) ? ldexp(1.0, ilogb(m)) : 1.0;
}

double stats_sd(const double *x, size_t n)
{
	double mean, scale, ss = 0.0, s = 0.0;

	if (n < 2)
		return NAN;
	mean = stats_mean(x, n);
	scale = deviation_scale(x, n, mean);
	for (size_t i = 0; i < n; i++) {
		double d = (x[i] - mean) / scale;

		ss += d * d;
		s += d;
	}
	return scale * sqrt((ss - s * s / (double)n) / (double)(n - 1));
}

double stats_min(const double *x, size_t n)
{
	double m = n ? x[0] : NAN;

	for (size_t i = 1; i < n; i++)
		if (x[i] < m)
			m = x[i];
	return m;
}

double stats_max(const double *x, size_t n)
{
	double m = n ? x[0] : NAN;

	for (size_t i = 1; i < n; i++)
		if (x[i] > m)
			m = x[i];
	return m;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A double's bits as an unsigned key in the same order (negatives flipped whole). */
static uint64_t order_key(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

/*
 * Least-significant-digit radix sort, 16 bits a pass, for large arrays:
 * qsort's comparison calls made a sort of 10^7 values take seconds, and
 * lever compare sorts each sample several times. Needs a second buffer.
 */
static int radix_sort(double *x, size_t n)
{
	size_t *count = malloc(((size_t)1 << 16) * sizeof(*count));
	double *tmp = malloc(n * sizeof(*tmp)), *from = x, *to = tmp, *t;

	if (!count || !tmp) {
		free(count);
		free(tmp);
		return -ENOMEM;
	}
	for (unsigned shift = 0; shift < 64; shift += 16) {
		size_t sum = 0;

		memset(count, 0, ((size_t)1 << 16) * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[order_key(from[i]) >> shift & 0xffff]++;
		for (size_t d = 0; d < 1u << 16; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[order_key(from[i]) >> shift & 0xffff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	/* four passes: the sorted values are back in x */
	free(count);
	free(tmp);
	return 0;
}

#define RADIX_MIN 65536 /* below, qsort is as fast and needs no second buffer */

double *stats_sorted_copy(const double *x, size_t n)
{
	double *s = malloc((n ? n : 1) * sizeof(*s));

	if (!s)
		return NULL;
	if (n)
		memcpy(s, x, n * sizeof(*s));
	if (n < RADIX_MIN || radix_sort(s, n))
		qsort(s, n, sizeof(*s), compare_double);
	return s;
}

double stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	double h, frac;
	size_t lo;

	if (n == 0 || !(p >= 0.0 && p <= 1.0))
		return NAN;
	h = (double)(n - 1) * p;
	lo = (size_t)floor(h);
	if (lo >= n - 1)
		return sorted[n - 1];
	frac = h - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double stats_median(const double *x, size_t n)
{
	double *s, m;

	if (n == 0)
		return NAN;
	/* selection, not a sort: linear time */
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof(*s));
	m = stats_median_inplace(s, n);
	free(s);
	return m;
}

#define MAD_SCALE 1.482602218505602 /* 1 / Phi^-1(3/4) */

/*
 * The p-quantile as stats_quantile_sorted computes it, by selection on x
 * (reordered): the lo-th smallest and the smallest after it.
 */
static double quantile_select(double *x, size_t n, double p)
{
	double h = (double)(n - 1) * p, frac, v, next;
	size_t lo = (size_t)floor(h);

	if (lo >= n - 1)
		return stats_select_inplace(x, n, n - 1);
	frac = h - (double)lo;
	v = stats_select_inplace(x, n, lo);
	next = x[lo + 1];
	for (size_t i = lo + 2; i < n; i++)
		if (x[i] < next)
			next = x[i];
	return v + frac * (next - v);
}

static double mad_around(const double *x, size_t n, double center)
{
	double *d = malloc(n * sizeof(*d)), m;

	if (!d)
		return NAN;
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(x[i] - center);
	m = stats_median_inplace(d, n);
	free(d);
	return MAD_SCALE * m;
}

double stats_mad(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	return mad_around(x, n, stats_median(x, n));
}

/* Quartiles and extremes with one copy and selections, no sort. */
int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	double *s;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->mean = out->sd = out->min = out->max = NAN;
	out->q1 = out->median = out->q3 = out->mad = out->cv = out->sem = NAN;
	if (n == 0)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	out->mean = stats_mean(x, n);
	out->sd = stats_sd(x, n);
	out->min = out->max = x[0];
	for (size_t i = 1; i < n; i++) {
		out->min = x[i] < out->min ? x[i] : out->min;
		out->max = x[i] > out->max ? x[i] : out->max;
	}
	out->q1 = quantile_select(s, n, 0.25);
	out->median = quantile_select(s, n, 0.5);
	out->q3 = quantile_select(s, n, 0.75);
	free(s);
	out->mad = mad_around(x, n, out->median);
	out->cv = out->mean != 0.0 ? out->sd / fabs(out->mean) : NAN;
	out->sem = out->sd / sqrt((double)n);
	return 0;
}

size_t stats_outliers(const double *x, size_t n, double threshold, bool *mask)
{
	double median, mad;
	size_t count = 0;

	if (mask && n)
		memset(mask, 0, n * sizeof(*mask));
	if (n < 3)
		return 0;
	median = stats_median(x, n);
	mad = mad_around(x, n, median);
	if (!(mad > 0.0))
		return 0;
	for (size_t i = 0; i < n; i++) {
		bool out = fabs(x[i] - median) / mad > threshold;

		if (mask)
			mask[i] = out;
		count += out;
	}
	return count;
}

size_t stats_drop_max(double *x, size_t n)
{
	size_t at = 0;

	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (x[i] > x[at])
			at = i;
	memmove(x + at, x + at + 1, (n - at - 1) * sizeof(*x));
	return n - 1;
}
