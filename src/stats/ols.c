/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Ordinary least squares with GSL (SVD-based gsl_multifit_linear), and the
 * summaries R's summary.lm(), logLik() and BIC() give: standard errors, t and
 * two-sided p-values, R^2 (centred with an intercept), adjusted R^2, AIC, BIC.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_multifit.h>

#include "stats/internal.h"
#include "stats/stats.h"

static int ols_alloc(struct stats_ols *out, size_t n, size_t p)
{
	out->n = n;
	out->p = p;
	out->beta = calloc(p, sizeof(double));
	out->se = calloc(p, sizeof(double));
	out->t = calloc(p, sizeof(double));
	out->pvalue = calloc(p, sizeof(double));
	out->rss = out->sigma = out->r_squared = out->adj_r_squared = NAN;
	out->log_likelihood = out->aic = out->bic = NAN;
	return out->beta && out->se && out->t && out->pvalue ? 0 : -ENOMEM;
}

void stats_ols_free(struct stats_ols *fit)
{
	free(fit->beta);
	free(fit->se);
	free(fit->t);
	free(fit->pvalue);
	fit->beta = fit->se = fit->t = fit->pvalue = NULL;
}

static void ols_summaries(struct stats_ols *out, const double *y, bool has_intercept,
			  const gsl_matrix *cov)
{
	double dn = (double)out->n, dp = (double)out->p, df = dn - dp, tss = 0.0, my = 0.0;

	if (has_intercept)
		my = stats_mean(y, out->n);
	for (size_t i = 0; i < out->n; i++)
		tss += (y[i] - my) * (y[i] - my);
	out->sigma = df > 0 ? sqrt(out->rss / df) : NAN;
	for (size_t j = 0; j < out->p; j++) {
		/* GSL's cov is (X'X)^-1 scaled by chisq / (n - p) */
		out->se[j] = sqrt(gsl_matrix_get(cov, j, j));
		out->t[j] = out->beta[j] / out->se[j];
		out->pvalue[j] = df > 0 ? stats_t_p_two_sided(out->t[j], df) : NAN;
	}
	out->r_squared = tss > 0.0 ? 1.0 - out->rss / tss : NAN;
	out->adj_r_squared =
	    df > 0 ? 1.0 - (1.0 - out->r_squared) * (dn - (has_intercept ? 1.0 : 0.0)) / df : NAN;
	out->log_likelihood = -dn / 2.0 * (log(2.0 * M_PI) + log(out->rss / dn) + 1.0);
	out->aic = -2.0 * out->log_likelihood + 2.0 * (dp + 1.0);
	out->bic = -2.0 * out->log_likelihood + log(dn) * (dp + 1.0);
}

int stats_ols_fit(const double *x, const double *y, size_t n, size_t p, bool has_intercept,
		  struct stats_ols *out)
{
	gsl_matrix_const_view X = gsl_matrix_const_view_array(x, n, p);
	gsl_vector_const_view Y = gsl_vector_const_view_array(y, n);
	gsl_vector_view B;
	gsl_matrix *cov = NULL;
	gsl_multifit_linear_workspace *w = NULL;
	int err;

	if (p == 0 || n <= p) {
		ols_alloc(out, n, p);
		return -EINVAL;
	}
	err = ols_alloc(out, n, p);
	cov = gsl_matrix_alloc(p, p);
	w = gsl_multifit_linear_alloc(n, p);
	if (err || !cov || !w) {
		err = -ENOMEM;
		goto out;
	}
	B = gsl_vector_view_array(out->beta, p);
	stats_gsl_quiet();
	if (gsl_multifit_linear(&X.matrix, &Y.vector, &B.vector, cov, &out->rss, w)) {
		err = -EDOM;
		goto out;
	}
	ols_summaries(out, y, has_intercept, cov);
out:
	gsl_matrix_free(cov);
	if (w)
		gsl_multifit_linear_free(w);
	return err;
}
