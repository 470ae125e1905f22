/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Four tests of NIST SP 800-22 rev1a ("A Statistical Test Suite for Random
 * and Pseudorandom Number Generators"): frequency (monobit, §2.1), frequency
 * within a block (§2.2), runs (§2.3) and cumulative sums (§2.13). The
 * Stabilizer paper (§3.2) applies the suite to address bits 6-17 of heap
 * objects. Each returns the test statistic and the p-value; a sequence is
 * taken as random at level alpha when p >= alpha (NIST uses 0.01).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_sf_erf.h>
#include <gsl/gsl_sf_gamma.h>

#include "stats/internal.h"
#include "stats/stats.h"

static void nist_fail(struct stats_test *out)
{
	out->statistic = NAN;
	out->df1 = out->df2 = NAN;
	out->p = NAN;
}

static size_t count_ones(const uint8_t *bits, size_t n)
{
	size_t ones = 0;

	for (size_t i = 0; i < n; i++)
		ones += bits[i] != 0;
	return ones;
}

int stats_nist_frequency(const uint8_t *bits, size_t n, struct stats_test *out)
{
	double s_n, s_obs;

	nist_fail(out);
	if (n < 2)
		return -EINVAL;
	s_n = 2.0 * (double)count_ones(bits, n) - (double)n;
	s_obs = fabs(s_n) / sqrt((double)n);
	out->statistic = s_obs;
	out->p = gsl_sf_erfc(s_obs / M_SQRT2);
	return 0;
}

int stats_nist_block_frequency(const uint8_t *bits, size_t n, size_t m, struct stats_test *out)
{
	size_t blocks;
	double chi2 = 0.0;

	nist_fail(out);
	if (m < 2 || n / m < 1)
		return -EINVAL;
	stats_gsl_quiet();
	blocks = n / m; /* bits past the last whole block are not used */
	for (size_t b = 0; b < blocks; b++) {
		double pi = (double)count_ones(bits + b * m, m) / (double)m - 0.5;

		chi2 += pi * pi;
	}
	chi2 *= 4.0 * (double)m;
	out->statistic = chi2;
	out->df1 = (double)blocks;
	out->p = gsl_sf_gamma_inc_Q((double)blocks / 2.0, chi2 / 2.0);
	return 0;
}

int stats_nist_runs(const uint8_t *bits, size_t n, struct stats_test *out)
{
	double pi, v_obs = 1.0, expect;

	nist_fail(out);
	if (n < 2)
		return -EINVAL;
	pi = (double)count_ones(bits, n) / (double)n;
	for (size_t k = 0; k + 1 < n; k++)
		v_obs += (bits[k] != 0) != (bits[k + 1] != 0);
	out->statistic = v_obs;
	/* The frequency prerequisite (§2.3.4 step 2): otherwise the test is not run, p = 0. */
	if (fabs(pi - 0.5) >= 2.0 / sqrt((double)n)) {
		out->p = 0.0;
		return -EDOM;
	}
	expect = 2.0 * (double)n * pi * (1.0 - pi);
	out->p =
	    gsl_sf_erfc(fabs(v_obs - expect) / (2.0 * sqrt(2.0 * (double)n) * pi * (1.0 - pi)));
	return 0;
}

/* Largest |partial sum| of the +-1 walk, forward or from the end. */
static long max_excursion(const uint8_t *bits, size_t n, bool backward)
{
	long s = 0, z = 0;

	for (size_t i = 0; i < n; i++) {
		s += bits[backward ? n - 1 - i : i] ? 1 : -1;
		if (labs(s) > z)
			z = labs(s);
	}
	return z;
}

int stats_nist_cusum(const uint8_t *bits, size_t n, bool backward, struct stats_test *out)
{
	long z, ln;
	double sum1 = 0.0, sum2 = 0.0, root_n;

	nist_fail(out);
	if (n < 2)
		return -EINVAL;
	z = max_excursion(bits, n, backward);
	ln = (long)n;
	root_n = sqrt((double)n);
	out->statistic = (double)z;
	/* §2.13.4 step 4; the summation limits are C integer divisions, as in NIST's code */
	for (long k = (-ln / z + 1) / 4; k <= (ln / z - 1) / 4; k++)
		sum1 += stats_normal_cdf((double)((4 * k + 1) * z) / root_n) -
			stats_normal_cdf((double)((4 * k - 1) * z) / root_n);
	for (long k = (-ln / z - 3) / 4; k <= (ln / z - 1) / 4; k++)
		sum2 += stats_normal_cdf((double)((4 * k + 3) * z) / root_n) -
			stats_normal_cdf((double)((4 * k + 1) * z) / root_n);
	out->p = 1.0 - sum1 + sum2;
	if (out->p > 1.0)
		out->p = 1.0;
	if (out->p < 0.0)
		out->p = 0.0;
	return 0;
}
