/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Distributions: thin wrappers over GSL's normal, Student t and F functions,
 * with lever's conventions (NaN for invalid arguments instead of GSL's abort).
 */
#include <math.h>
#include <stdbool.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#include "stats/internal.h"
#include "stats/stats.h"

void stats_gsl_quiet(void)
{
	static bool done;

	if (!done) {
		gsl_set_error_handler_off();
		done = true;
	}
}

double stats_poly(const double *c, size_t n, double x)
{
	double r = 0.0;

	while (n--)
		r = r * x + c[n];
	return r;
}

double stats_normal_cdf(double z)
{
	if (isnan(z))
		return NAN;
	return gsl_cdf_ugaussian_P(z);
}

double stats_normal_sf(double z)
{
	if (isnan(z))
		return NAN;
	return gsl_cdf_ugaussian_Q(z);
}

double stats_normal_quantile(double p)
{
	if (!(p >= 0.0 && p <= 1.0))
		return NAN;
	if (p == 0.0)
		return -INFINITY;
	if (p == 1.0)
		return INFINITY;
	return gsl_cdf_ugaussian_Pinv(p);
}

double stats_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0.0))
		return NAN;
	stats_gsl_quiet();
	return gsl_cdf_tdist_P(t, df);
}

double stats_t_p_two_sided(double t, double df)
{
	double p;

	if (isnan(t) || !(df > 0.0))
		return NAN;
	stats_gsl_quiet();
	p = 2.0 * gsl_cdf_tdist_Q(fabs(t), df);
	return p > 1.0 ? 1.0 : p;
}

double stats_t_quantile(double p, double df)
{
	if (!(p > 0.0 && p < 1.0) || !(df > 0.0))
		return NAN;
	stats_gsl_quiet();
	return gsl_cdf_tdist_Pinv(p, df);
}

double stats_f_sf(double f, double df1, double df2)
{
	if (isnan(f) || !(df1 > 0.0) || !(df2 > 0.0))
		return NAN;
	if (f <= 0.0)
		return 1.0;
	if (isinf(f))
		return 0.0;
	stats_gsl_quiet();
	return gsl_cdf_fdist_Q(f, df1, df2);
}
