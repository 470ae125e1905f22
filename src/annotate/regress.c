/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Regression classes of Freud (spec §4.3.3): for one set of calls, fit the
 * linear, n log n and quadratic classes with interaction terms (the repo's
 * term construction), each refined by backward elimination on p-values
 * (GOOD_PVALUE, DROP_K, MIN_DET), and choose among them by BIC with a
 * penalty of BIC_DIFF per degree (linear 1, n log n 1.5, quadratic 2; spec
 * §7.2 item 9). The least-squares fits are GSL's (src/stats), on centred and
 * scaled columns, since quadratic interaction terms reach 1e18 and more.
 *
 * With many candidate features the full set of pairwise interactions cannot
 * be fitted (it has more terms than calls), so main terms are first screened
 * by their marginal correlation with the metric (screen_terms), eliminated,
 * and interactions are tried only among the survivors
 * (max_interaction_features). Below those limits nothing is screened.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_statistics_double.h>

#include "annotate/internal.h"
#include "stats/stats.h"

static const double class_degree[ANNOTATE_N_CLASSES] = {0.0, 1.0, 1.5, 2.0};

double annotate_transform(enum annotate_transform t, double x)
{
	switch (t) {
	case ANNOTATE_X:
		return x;
	case ANNOTATE_X2:
		return x * x;
	case ANNOTATE_XLOGX:
		return x > 0 ? x * log2(x) : 0.0;
	}
	return NAN;
}

double annotate_term_value(const struct annotate_term *t, const struct annotate_symbol *s,
			   size_t row)
{
	double v = 1.0;

	for (int i = 0; i < t->n_factors; i++)
		v *= annotate_transform(t->transform[i], s->features[t->feature[i]].values[row]);
	return v;
}

double annotate_model_predict(const struct annotate_model *m, const struct annotate_symbol *s,
			      size_t row)
{
	double y = m->intercept;

	for (size_t i = 0; i < m->n_terms; i++)
		y += m->terms[i].coef * annotate_term_value(&m->terms[i], s, row);
	return y;
}

/* ------------------------------------------------------------ term sets */

struct terms {
	struct annotate_term *t;
	size_t n, cap;
};

static int add_term(struct terms *ts, int nf, size_t f0, enum annotate_transform t0, size_t f1,
		    enum annotate_transform t1)
{
	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 32;
		struct annotate_term *nt = realloc(ts->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		ts->t = nt;
		ts->cap = cap;
	}
	ts->t[ts->n++] =
	    (struct annotate_term){.n_factors = nf, .feature = {f0, f1}, .transform = {t0, t1}};
	return 0;
}

/* The class's own transform of a feature (x for linear). */
static enum annotate_transform class_transform(enum annotate_class c)
{
	return c == ANNOTATE_QUADRATIC ? ANNOTATE_X2
	       : c == ANNOTATE_NLOGN   ? ANNOTATE_XLOGX
				       : ANNOTATE_X;
}

static bool nonnegative(const struct annotate_symbol *s, size_t f, const size_t *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s->features[f].values[rows[i]] < 0)
			return false;
	return true;
}

/* The transforms a class applies to feature f: x, and x^2 or x log x. */
static int feature_transforms(enum annotate_class c, const struct annotate_symbol *s, size_t f,
			      const size_t *rows, size_t n, enum annotate_transform out[2])
{
	int k = 0;

	out[k++] = ANNOTATE_X;
	if (c == ANNOTATE_QUADRATIC || (c == ANNOTATE_NLOGN && nonnegative(s, f, rows, n)))
		out[k++] = class_transform(c);
	return k;
}

static int main_terms(struct terms *ts, enum annotate_class c, const struct annotate_symbol *s,
		      const size_t *feats, size_t nf, const size_t *rows, size_t n)
{
	for (size_t i = 0; i < nf; i++) {
		enum annotate_transform tr[2];
		int k = feature_transforms(c, s, feats[i], rows, n, tr);

		for (int j = 0; j < k; j++)
			if (add_term(ts, 1, feats[i], tr[j], 0, ANNOTATE_X))
				return -ENOMEM;
	}
	return 0;
}

/* Main terms, and for every pair every product of their transforms. */
static int full_terms(struct terms *ts, enum annotate_class c, const struct annotate_symbol *s,
		      const size_t *feats, size_t nf, const size_t *rows, size_t n)
{
	if (main_terms(ts, c, s, feats, nf, rows, n))
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		enum annotate_transform ti[2];
		int ki = feature_transforms(c, s, feats[i], rows, n, ti);

		for (size_t j = i + 1; j < nf; j++) {
			enum annotate_transform tj[2];
			int kj = feature_transforms(c, s, feats[j], rows, n, tj);

			for (int a = 0; a < ki; a++)
				for (int b = 0; b < kj; b++)
					if (add_term(ts, 2, feats[i], ti[a], feats[j], tj[b]))
						return -ENOMEM;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ one fit */

struct fit {
	struct stats_ols ols;
	double *mean, *scale; /* per term */
	bool ok;
};

static void fit_free(struct fit *f)
{
	if (f->ols.beta)
		stats_ols_free(&f->ols);
	free(f->mean);
	free(f->scale);
	memset(f, 0, sizeof(*f));
}

/*
 * OLS of y on an intercept and the terms, on centred and scaled columns.
 * A term constant over the rows makes the fit fail (the caller drops it).
 */
static int fit_terms(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		     const struct annotate_term *t, size_t nt, struct fit *f)
{
	size_t p = nt + 1;
	double *x = malloc(n * p * sizeof(double)), *col = malloc(n * sizeof(double));
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->mean = calloc(nt ? nt : 1, sizeof(double));
	f->scale = calloc(nt ? nt : 1, sizeof(double));
	if (!x || !col || !f->mean || !f->scale) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		x[i * p] = 1.0;
	for (size_t j = 0; j < nt; j++) {
		for (size_t i = 0; i < n; i++)
			col[i] = annotate_term_value(&t[j], s, rows[i]);
		f->mean[j] = gsl_stats_mean(col, 1, n);
		f->scale[j] = gsl_stats_sd_m(col, 1, n, f->mean[j]);
		if (!(f->scale[j] > 0) || !isfinite(f->scale[j])) {
			rc = -EDOM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			x[i * p + j + 1] = (col[i] - f->mean[j]) / f->scale[j];
	}
	rc = stats_ols_fit(x, y, n, p, true, &f->ols);
	f->ok = rc == 0 && isfinite(f->ols.r_squared);
	if (rc == 0 && !f->ok)
		rc = -EDOM;
out:
	free(x);
	free(col);
	return rc;
}

/* Back to the original units: coefficients, intercept, p-values. */
static void fit_to_model(const struct fit *f, const struct annotate_term *t, size_t nt,
			 enum annotate_class cls, struct annotate_model *m)
{
	m->cls = cls;
	m->intercept = f->ols.beta[0];
	m->n_terms = nt;
	for (size_t j = 0; j < nt; j++) {
		m->terms[j] = t[j];
		m->terms[j].coef = f->ols.beta[j + 1] / f->scale[j];
		m->terms[j].pvalue = f->ols.pvalue[j + 1];
		m->intercept -= m->terms[j].coef * f->mean[j];
	}
	m->variance = f->ols.sigma * f->ols.sigma;
	m->r_squared = f->ols.r_squared;
	m->bic = f->ols.bic;
	m->n = f->ols.n;
	m->cv_r_squared = NAN;
}

/* ------------------------------------------------------------ backward elimination */

static bool same_factor(const struct annotate_term *main, size_t f, enum annotate_transform t)
{
	return main->n_factors == 1 && main->feature[0] == f && main->transform[0] == t;
}

/*
 * Keep the significant terms, and the main terms of the factors of
 * significant interactions. Returns the new count (terms compacted in place).
 */
static size_t keep_significant(struct annotate_term *t, size_t nt, const double *pv, double good)
{
	bool *keep = calloc(nt, sizeof(bool));
	size_t k = 0;

	if (!keep)
		return nt;
	for (size_t j = 0; j < nt; j++) {
		if (!(pv[j] < good))
			continue;
		keep[j] = true;
		for (int a = 0; a < t[j].n_factors && t[j].n_factors > 1; a++)
			for (size_t m = 0; m < nt; m++)
				if (same_factor(&t[m], t[j].feature[a], t[j].transform[a]))
					keep[m] = true;
	}
	for (size_t j = 0; j < nt; j++)
		if (keep[j])
			t[k++] = t[j];
	free(keep);
	return k;
}

/* Drop the `k` terms with the largest p-values. */
static size_t drop_worst(struct annotate_term *t, size_t nt, const double *pv, size_t k)
{
	double *sorted = malloc(nt * sizeof(double));
	double cut;
	size_t out = 0, dropped = 0;

	if (!sorted)
		return 0;
	memcpy(sorted, pv, nt * sizeof(double));
	for (size_t j = 0; j < nt; j++)
		if (isnan(sorted[j]))
			sorted[j] = 2.0;
	qsort(sorted, nt, sizeof(double), annotate_cmp_double);
	cut = sorted[nt > k ? nt - k : 0];
	for (size_t j = 0; j < nt; j++) {
		double p = isnan(pv[j]) ? 2.0 : pv[j];

		if (p >= cut && dropped < k)
			dropped++;
		else
			t[out++] = t[j];
	}
	free(sorted);
	return out;
}

/*
 * Backward elimination (spec §4.3.3): fail when R^2 < MIN_DET or no term is
 * left; keep only significant terms while some are; drop the DROP_K worst
 * while none is; succeed when the kept set stops shrinking.
 */
static int eliminate(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		     struct terms *ts, enum annotate_class cls, const struct annotate_params *par,
		     struct annotate_model *out)
{
	for (;;) {
		struct fit f;
		double *pv;
		size_t kept;
		int rc;

		if (ts->n == 0 || ts->n + 1 >= n)
			return -ENOENT;
		rc = fit_terms(s, y, rows, n, ts->t, ts->n, &f);
		if (rc == -EDOM) {
			/* a constant or non-finite term: drop the constant ones */
			size_t k = 0;

			for (size_t j = 0; j < ts->n; j++)
				if (f.scale && f.scale[j] > 0 && isfinite(f.scale[j]))
					ts->t[k++] = ts->t[j];
			fit_free(&f);
			if (k == ts->n)
				return -ENOENT;
			ts->n = k;
			continue;
		}
		if (rc) {
			fit_free(&f);
			return rc;
		}
		if (f.ols.r_squared < par->min_det) {
			fit_free(&f);
			return -ENOENT;
		}
		pv = f.ols.pvalue + 1;
		kept = keep_significant(ts->t, ts->n, pv, par->good_pvalue);
		if (kept == ts->n) {
			out->terms = malloc(ts->n * sizeof(*out->terms));
			if (!out->terms) {
				fit_free(&f);
				return -ENOMEM;
			}
			fit_to_model(&f, ts->t, ts->n, cls, out);
			fit_free(&f);
			return 0;
		}
		if (kept == 0) {
			/* keep_significant left ts intact only if all were kept */
			kept = drop_worst(ts->t, ts->n, pv, par->drop_k);
		}
		fit_free(&f);
		ts->n = kept;
	}
}

/* ------------------------------------------------------------ screening */

struct scored {
	double score;
	size_t index;
};

static int cmp_scored_desc(const void *a, const void *b)
{
	double x = ((const struct scored *)a)->score, y = ((const struct scored *)b)->score;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Centre a column and scale it to unit length, so that the correlation of
 * two such columns is their dot product (BLAS ddot): correlating thousands
 * of columns with gsl_stats_correlation, which divides per element, was
 * a third of the analysis of a wide record. Returns false for a constant.
 */
static bool unit_column(double *col, size_t n)
{
	gsl_vector_view v = gsl_vector_view_array(col, n);
	double mean = gsl_stats_mean(col, 1, n), norm;

	gsl_vector_add_constant(&v.vector, -mean);
	norm = gsl_blas_dnrm2(&v.vector);
	if (!(norm > 0) || !isfinite(norm))
		return false;
	gsl_vector_scale(&v.vector, 1.0 / norm);
	return true;
}

static double unit_dot(const double *a, const double *b, size_t n)
{
	gsl_vector_const_view va = gsl_vector_const_view_array(a, n);
	gsl_vector_const_view vb = gsl_vector_const_view_array(b, n);
	double d;

	gsl_blas_ddot(&va.vector, &vb.vector, &d);
	return d;
}

/* Keep the `keep` terms most correlated with y (in absolute value). */
static int screen(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		  struct terms *ts, size_t keep)
{
	struct scored *sc;
	double *col, *yu;
	struct annotate_term *kept;
	bool y_varies;

	if (ts->n <= keep)
		return 0;
	sc = malloc(ts->n * sizeof(*sc));
	col = malloc(n * sizeof(double));
	yu = malloc(n * sizeof(double));
	kept = malloc(keep * sizeof(*kept));
	if (!sc || !col || !yu || !kept) {
		free(sc);
		free(col);
		free(yu);
		free(kept);
		return -ENOMEM;
	}
	memcpy(yu, y, n * sizeof(double));
	y_varies = unit_column(yu, n);
	for (size_t j = 0; j < ts->n; j++) {
		for (size_t i = 0; i < n; i++)
			col[i] = annotate_term_value(&ts->t[j], s, rows[i]);
		sc[j].score = y_varies && unit_column(col, n) ? fabs(unit_dot(col, yu, n)) : 0;
		if (!isfinite(sc[j].score))
			sc[j].score = 0;
		sc[j].index = j;
	}
	qsort(sc, ts->n, sizeof(*sc), cmp_scored_desc);
	for (size_t j = 0; j < keep; j++)
		kept[j] = ts->t[sc[j].index];
	memcpy(ts->t, kept, keep * sizeof(*kept));
	ts->n = keep;
	free(sc);
	free(col);
	free(yu);
	free(kept);
	return 0;
}

/* The distinct features of a model's terms, most significant first. */
static size_t model_features(const struct annotate_model *m, size_t *out, size_t max)
{
	struct scored *sc = malloc((m->n_terms ? m->n_terms : 1) * sizeof(*sc));
	size_t n = 0;

	if (!sc)
		return 0;
	for (size_t j = 0; j < m->n_terms; j++) {
		sc[j].score = -m->terms[j].pvalue;
		sc[j].index = j;
	}
	qsort(sc, m->n_terms, sizeof(*sc), cmp_scored_desc);
	for (size_t j = 0; j < m->n_terms && n < max; j++) {
		const struct annotate_term *t = &m->terms[sc[j].index];

		for (int a = 0; a < t->n_factors && n < max; a++) {
			bool seen = false;

			for (size_t k = 0; k < n; k++)
				seen |= out[k] == t->feature[a];
			if (!seen)
				out[n++] = t->feature[a];
		}
	}
	free(sc);
	return n;
}

/*
 * Drop terms collinear with an earlier (simpler) one, |r| > 0.9999: an
 * interaction with a feature that barely varies relative to its mean (a
 * pointer value) is the other factor again, and the pair would only trade
 * significance back and forth in the elimination.
 */
static int drop_collinear(const struct annotate_symbol *s, const size_t *rows, size_t n,
			  struct terms *ts)
{
	double *cols = malloc(ts->n * n * sizeof(double));
	size_t k = 0;

	if (!cols)
		return -ENOMEM;
	for (size_t j = 0; j < ts->n; j++) {
		double *col = cols + k * n;
		bool dup = false;

		for (size_t i = 0; i < n; i++)
			col[i] = annotate_term_value(&ts->t[j], s, rows[i]);
		if (!unit_column(col, n))
			continue; /* constant: eliminate() would drop it anyway */
		for (size_t q = 0; q < k && !dup; q++)
			dup = fabs(unit_dot(cols + q * n, col, n)) > 0.9999;
		if (!dup)
			ts->t[k++] = ts->t[j];
	}
	ts->n = k;
	free(cols);
	return 0;
}

/*
 * The interaction stage tries the screened model's features, and fills the
 * free places with the features most correlated with its residuals: an
 * interaction (a*b) leaves a residual that a feature of small share (c)
 * cannot be seen behind in main-term screening.
 */
static int fill_by_residual(const struct annotate_symbol *s, const double *y, const size_t *rows,
			    size_t n, const size_t *feats, size_t nf,
			    const struct annotate_model *m, size_t *chosen, size_t *nc, size_t max)
{
	double *res = malloc(n * sizeof(double)), *col = malloc(n * sizeof(double));
	struct scored *sc = malloc(nf * sizeof(*sc));

	if (!res || !col || !sc) {
		free(res);
		free(col);
		free(sc);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - annotate_model_predict(m, s, rows[i]);
	bool res_varies = unit_column(res, n);

	for (size_t j = 0; j < nf; j++) {
		for (size_t i = 0; i < n; i++)
			col[i] = s->features[feats[j]].values[rows[i]];
		sc[j].score = res_varies && unit_column(col, n) ? fabs(unit_dot(col, res, n)) : 0;
		if (!isfinite(sc[j].score))
			sc[j].score = 0;
		sc[j].index = feats[j];
	}
	qsort(sc, nf, sizeof(*sc), cmp_scored_desc);
	for (size_t j = 0; j < nf && *nc < max; j++) {
		bool in = false;

		for (size_t k = 0; k < *nc; k++)
			in |= chosen[k] == sc[j].index;
		if (!in)
			chosen[(*nc)++] = sc[j].index;
	}
	free(res);
	free(col);
	free(sc);
	return 0;
}

/*
 * Main terms only, for many features: screen by correlation with y, then
 * eliminate; then screen the terms left out against the residuals (a
 * feature with a small share of the variance hides behind the big ones in
 * the first screen), and eliminate again over both.
 */
static int screened_main_model(const struct annotate_symbol *s, const double *y, const size_t *rows,
			       size_t n, const size_t *feats, size_t nf, enum annotate_class cls,
			       const struct annotate_params *par, struct annotate_model *out)
{
	struct terms all = {0}, ts = {0};
	double *res = NULL;
	int rc = main_terms(&all, cls, s, feats, nf, rows, n);

	if (!rc && !(ts.t = malloc(all.n * sizeof(*ts.t))))
		rc = -ENOMEM;
	if (!rc) {
		memcpy(ts.t, all.t, all.n * sizeof(*ts.t));
		ts.n = ts.cap = all.n;
		rc = screen(s, y, rows, n, &ts, par->screen_terms);
	}
	if (!rc)
		rc = eliminate(s, y, rows, n, &ts, cls, par, out);
	if (!rc && (res = malloc(n * sizeof(double)))) {
		struct terms rest = {0};
		struct annotate_model second = {0};

		for (size_t i = 0; i < n; i++)
			res[i] = y[i] - annotate_model_predict(out, s, rows[i]);
		/* the terms not in the model, screened against the residuals */
		for (size_t j = 0; j < all.n && !rc; j++) {
			bool in = false;

			for (size_t m = 0; m < out->n_terms; m++)
				in |= memcmp(&out->terms[m].feature, &all.t[j].feature,
					     sizeof(all.t[j].feature)) == 0 &&
				      out->terms[m].transform[0] == all.t[j].transform[0];
			if (!in)
				rc = add_term(&rest, 1, all.t[j].feature[0], all.t[j].transform[0],
					      0, ANNOTATE_X);
		}
		if (!rc)
			rc = screen(s, res, rows, n, &rest, par->screen_terms);
		for (size_t m = 0; m < out->n_terms && !rc; m++)
			rc = add_term(&rest, 1, out->terms[m].feature[0],
				      out->terms[m].transform[0], 0, ANNOTATE_X);
		if (!rc && eliminate(s, y, rows, n, &rest, cls, par, &second) == 0 &&
		    second.n_terms >= out->n_terms) {
			free(out->terms);
			*out = second;
		} else {
			free(second.terms);
		}
		free(rest.t);
	} else if (!rc) {
		rc = -ENOMEM;
	}
	free(res);
	free(all.t);
	free(ts.t);
	return rc;
}

/*
 * After the interaction stage, the main terms of the features left out are
 * screened against the model's residuals and the best added for one more
 * elimination: what the big terms hid is now in plain view.
 */
static int augment_by_residual(const struct annotate_symbol *s, const double *y, const size_t *rows,
			       size_t n, const size_t *feats, size_t nf, enum annotate_class cls,
			       const struct annotate_params *par, struct annotate_model *m)
{
	struct terms rest = {0};
	struct annotate_model better = {0};
	double *res = malloc(n * sizeof(double));
	int rc = 0;

	if (!res)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - annotate_model_predict(m, s, rows[i]);
	for (size_t j = 0; j < nf && !rc; j++) {
		bool in = false;

		for (size_t t = 0; t < m->n_terms; t++)
			for (int a = 0; a < m->terms[t].n_factors; a++)
				in |= m->terms[t].feature[a] == feats[j];
		if (!in)
			rc = add_term(&rest, 1, feats[j], ANNOTATE_X, 0, ANNOTATE_X);
	}
	if (!rc)
		rc = screen(s, res, rows, n, &rest, par->max_interaction_features);
	for (size_t t = 0; t < m->n_terms && !rc; t++) {
		if (rest.n == rest.cap && add_term(&rest, 1, 0, ANNOTATE_X, 0, ANNOTATE_X) == 0)
			rest.n--;
		if (rest.n < rest.cap)
			rest.t[rest.n++] = m->terms[t];
		else
			rc = -ENOMEM;
	}
	if (!rc && eliminate(s, y, rows, n, &rest, cls, par, &better) == 0 &&
	    better.n_terms > m->n_terms && better.bic < m->bic) {
		free(m->terms);
		*m = better;
	} else {
		free(better.terms);
	}
	free(rest.t);
	free(res);
	return rc;
}

/* One class: screening if needed, then elimination over the full term set. */
static int fit_class(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		     const size_t *feats, size_t nf, enum annotate_class cls,
		     const struct annotate_params *par, struct annotate_model *out)
{
	struct terms ts = {0};
	size_t *chosen = NULL, nc = nf;
	const size_t *all_feats = feats;
	int rc;

	memset(out, 0, sizeof(*out));
	if (nf > par->max_interaction_features) {
		struct annotate_model screened = {0};

		rc = screened_main_model(s, y, rows, n, feats, nf, cls, par, &screened);
		if (rc)
			return rc;
		chosen = malloc(par->max_interaction_features * sizeof(size_t));
		if (!chosen) {
			free(screened.terms);
			return -ENOMEM;
		}
		nc = model_features(&screened, chosen, par->max_interaction_features);
		rc = fill_by_residual(s, y, rows, n, feats, nf, &screened, chosen, &nc,
				      par->max_interaction_features);
		free(screened.terms);
		if (rc) {
			free(chosen);
			return rc;
		}
		feats = chosen;
	}
	rc = full_terms(&ts, cls, s, feats, nc, rows, n);
	if (!rc)
		rc = drop_collinear(s, rows, n, &ts);
	if (!rc && ts.n + 2 >= n)
		rc = screen(s, y, rows, n, &ts, n / 2 > 1 ? n / 2 - 1 : 1);
	if (!rc)
		rc = eliminate(s, y, rows, n, &ts, cls, par, out);
	if (!rc && chosen)
		rc = augment_by_residual(s, y, rows, n, all_feats, nf, cls, par, out);
	free(ts.t);
	free(chosen);
	return rc;
}

void annotate_model_free(struct annotate_model *m)
{
	free(m->terms);
	m->terms = NULL;
	m->n_terms = 0;
}

/*
 * The best regression over the classes (spec §4.3.3, §7.2 item 9): the
 * lowest-degree success, replaced by a higher-degree one only when its BIC is
 * lower by more than BIC_DIFF per degree of difference.
 */
int annotate_best_regression(const struct annotate_symbol *s, const double *y, const size_t *rows,
			     size_t n, const size_t *feats, size_t nf,
			     const struct annotate_params *par, struct annotate_model *best)
{
	bool have = false;

	memset(best, 0, sizeof(*best));
	if (nf == 0 || n < 3)
		return -ENOENT;
	for (int c = ANNOTATE_LINEAR; c < ANNOTATE_N_CLASSES; c++) {
		struct annotate_model m;
		int rc = fit_class(s, y, rows, n, feats, nf, (enum annotate_class)c, par, &m);

		if (rc == -ENOMEM)
			return rc;
		if (rc || m.n_terms == 0) {
			annotate_model_free(&m);
			continue;
		}
		if (!have) {
			*best = m;
			have = true;
		} else if (m.bic < best->bic - par->bic_diff * (class_degree[m.cls] -
								class_degree[best->cls])) {
			annotate_model_free(best);
			*best = m;
		} else {
			annotate_model_free(&m);
		}
	}
	return have ? 0 : -ENOENT;
}

/* Refit a model's terms on other rows (cross-validation); -ENOENT if it cannot. */
int annotate_refit(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		   const struct annotate_model *m, struct annotate_model *out)
{
	struct fit f;
	int rc;

	memset(out, 0, sizeof(*out));
	if (m->n_terms + 1 >= n)
		return -ENOENT;
	rc = fit_terms(s, y, rows, n, m->terms, m->n_terms, &f);
	if (!rc) {
		out->terms = malloc((m->n_terms ? m->n_terms : 1) * sizeof(*out->terms));
		if (!out->terms)
			rc = -ENOMEM;
		else
			fit_to_model(&f, m->terms, m->n_terms, m->cls, out);
	}
	fit_free(&f);
	return rc;
}

int annotate_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y ? 1 : 0;
}
