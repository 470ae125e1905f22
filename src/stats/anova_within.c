/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One-way within-subjects ANOVA with unbalanced replicates, by projection
 * onto the subject x treatment stratum (what R's aov(y ~ t + Error(s/t))
 * does): each observation is replaced by its cell mean minus its subject
 * mean, each treatment contrast 1{t = j} by 1{t = j} - n_sj / n_s, and the
 * treatment sum of squares is what the contrasts explain of the projected y
 * in a regression without intercept. The rest of the stratum is the error:
 * df = cells - subjects - (k - 1).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_multifit.h>

#include "stats/internal.h"
#include "stats/stats.h"

struct cells {
	size_t n_subjects, k;
	double *sum, *count; /* per cell, subject-major */
	double *subject_sum, *subject_count;
};

static void cells_free(struct cells *c)
{
	free(c->sum);
	free(c->count);
	free(c->subject_sum);
	free(c->subject_count);
}

static int cells_fill(struct cells *c, const double *y, const size_t *subject,
		      const size_t *treatment, size_t n)
{
	size_t ncell = c->n_subjects * c->k;

	c->sum = calloc(ncell, sizeof(double));
	c->count = calloc(ncell, sizeof(double));
	c->subject_sum = calloc(c->n_subjects, sizeof(double));
	c->subject_count = calloc(c->n_subjects, sizeof(double));
	if (!c->sum || !c->count || !c->subject_sum || !c->subject_count)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t s = subject[i], t = treatment[i];

		if (s >= c->n_subjects || t >= c->k || !isfinite(y[i]))
			return -EINVAL;
		c->sum[s * c->k + t] += y[i];
		c->count[s * c->k + t] += 1.0;
		c->subject_sum[s] += y[i];
		c->subject_count[s] += 1.0;
	}
	for (size_t i = 0; i < ncell; i++)
		if (c->count[i] == 0.0)
			return -EINVAL; /* every subject needs every treatment */
	return 0;
}

/* Projected response and contrasts, then the no-intercept fit. */
static int stratum_fit(const struct cells *c, const size_t *subject, const size_t *treatment,
		       size_t n, double *ss_model, double *ss_total)
{
	size_t p = c->k - 1;
	gsl_matrix *X = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
	gsl_vector *z = gsl_vector_alloc(n), *beta = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, p);
	double chisq;
	int err = -ENOMEM;

	if (!X || !cov || !z || !beta || !w)
		goto out;
	*ss_total = 0.0;
	for (size_t i = 0; i < n; i++) {
		size_t s = subject[i], t = treatment[i];
		double zi = c->sum[s * c->k + t] / c->count[s * c->k + t] -
			    c->subject_sum[s] / c->subject_count[s];

		gsl_vector_set(z, i, zi);
		*ss_total += zi * zi;
		for (size_t j = 0; j < p; j++) {
			double share = c->count[s * c->k + j + 1] / c->subject_count[s];

			gsl_matrix_set(X, i, j, (t == j + 1 ? 1.0 : 0.0) - share);
		}
	}
	stats_gsl_quiet();
	err = gsl_multifit_linear(X, z, beta, cov, &chisq, w) ? -EDOM : 0;
	if (!err)
		*ss_model = *ss_total - chisq;
out:
	gsl_matrix_free(X);
	gsl_matrix_free(cov);
	gsl_vector_free(z);
	gsl_vector_free(beta);
	if (w)
		gsl_multifit_linear_free(w);
	return err;
}

int stats_anova_within(const double *y, const size_t *subject, const size_t *treatment, size_t n,
		       size_t n_subjects, size_t k, struct stats_rm_anova *out)
{
	struct cells c = {.n_subjects = n_subjects, .k = k};
	double ss_model = NAN, ss_total = NAN;
	int err;

	out->ss_treatment = out->ss_error = out->f = out->p = NAN;
	out->df_treatment = out->df_error = NAN;
	if (k < 2 || n_subjects < 2 || n == 0)
		return -EINVAL;
	err = cells_fill(&c, y, subject, treatment, n);
	if (!err)
		err = stratum_fit(&c, subject, treatment, n, &ss_model, &ss_total);
	cells_free(&c);
	if (err)
		return err;
	out->df_treatment = (double)(k - 1);
	out->df_error = (double)(n_subjects * k - n_subjects - (k - 1));
	out->ss_treatment = ss_model;
	out->ss_error = ss_total - ss_model;
	if (!(out->ss_error > 0.0))
		return -EDOM;
	out->f = (ss_model / out->df_treatment) / (out->ss_error / out->df_error);
	out->p = stats_f_sf(out->f, out->df_treatment, out->df_error);
	return 0;
}
