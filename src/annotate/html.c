/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The HTML page of `lever annotate derive --html` (issue 16; the seed's
 * plots, spec §5.4.1): per function and metric the annotation's text, and
 * per feature of each scope's model a chart of the calls against that
 * feature with the fitted cost drawn over them, the model's other features
 * held at their medians over the scope. Mixtures (no cost function to draw,
 * as the seed says of A.20) get the distribution of each component. One
 * self-contained page: no script or style is fetched.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "annotate/internal.h"
#include "report/report.h"

#define CURVE_POINTS 60

/* The model's cost with feature values from vals[] (indexed by feature). */
static double model_at(const struct annotate_model *m, const double *vals)
{
	double y = m->intercept;

	for (size_t t = 0; t < m->n_terms; t++) {
		double v = m->terms[t].coef;

		for (int a = 0; a < m->terms[t].n_factors; a++)
			v *= annotate_transform(m->terms[t].transform[a],
						vals[m->terms[t].feature[a]]);
		y += v;
	}
	return y;
}

static double median_of(const struct annotate_symbol *s, size_t f, const size_t *rows, size_t n)
{
	double *v = malloc(n * sizeof(double)), m;

	if (!v)
		return NAN;
	for (size_t i = 0; i < n; i++)
		v[i] = s->features[f].values[rows[i]];
	qsort(v, n, sizeof(double), annotate_cmp_double);
	m = gsl_stats_median_from_sorted_data(v, 1, n);
	free(v);
	return m;
}

static bool model_uses(const struct annotate_model *m, size_t f)
{
	for (size_t t = 0; t < m->n_terms; t++)
		for (int a = 0; a < m->terms[t].n_factors; a++)
			if (m->terms[t].feature[a] == f)
				return true;
	return false;
}

/* One chart: the leaf's calls against feature f, and the fitted curve. */
static void leaf_chart(FILE *f, const struct annotate_derivation *d, const struct annotate_leaf *l,
		       size_t feat, const char *title)
{
	const struct annotate_symbol *s = d->symbol;
	const double *y = s->metrics[d->metric];
	struct report_xy_point *pts = malloc(l->n_rows * sizeof(*pts));
	struct report_xy_point curve[CURVE_POINTS];
	double *vals = calloc(s->n_features ? s->n_features : 1, sizeof(double));
	double lo = INFINITY, hi = -INFINITY;
	struct report_xy_series series[2];
	struct report_xy_multi_chart c = {0};

	if (!pts || !vals) {
		free(pts);
		free(vals);
		return;
	}
	for (size_t i = 0; i < l->n_rows; i++) {
		double x = s->features[feat].values[l->rows[i]];

		pts[i] = (struct report_xy_point){x, y[l->rows[i]], NAN, NAN};
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	for (size_t g = 0; g < s->n_features; g++)
		if (model_uses(&l->model, g))
			vals[g] = median_of(s, g, l->rows, l->n_rows);
	for (int k = 0; k < CURVE_POINTS; k++) {
		double x = lo + (hi - lo) * k / (CURVE_POINTS - 1);

		vals[feat] = x;
		curve[k] = (struct report_xy_point){x, model_at(&l->model, vals), NAN, NAN};
	}
	series[0] = (struct report_xy_series){"calls", pts, l->n_rows};
	series[1] = (struct report_xy_series){"model (other features at their medians)", curve,
					      CURVE_POINTS};
	c.series = series;
	c.k = 2;
	c.x_lo = lo;
	c.x_hi = hi > lo ? hi : lo + 1;
	c.y_clip_lo = -INFINITY;
	c.y_clip_hi = INFINITY;
	c.x_scale = c.y_scale = 1;
	c.y_ref = NAN;
	c.x_label = d->names[feat];
	c.y_label = annotate_metric_name(d->metric);
	c.title = title;
	report_svg_xy_multi(f, &c);
	free(pts);
	free(vals);
}

static void mixture_chart(FILE *f, const struct annotate_derivation *d, size_t first, size_t end)
{
	const double *y = d->symbol->metrics[d->metric];
	struct report_series *series = calloc(end - first, sizeof(*series));
	double **values = calloc(end - first, sizeof(*values));
	char(*names)[64] = calloc(end - first, sizeof(*names));

	for (size_t k = first; series && values && names && k < end; k++) {
		const struct annotate_leaf *l = &d->leaves[k];

		values[k - first] = malloc((l->n_rows ? l->n_rows : 1) * sizeof(double));
		if (!values[k - first])
			break;
		for (size_t i = 0; i < l->n_rows; i++)
			values[k - first][i] = y[l->rows[i]];
		snprintf(names[k - first], sizeof(names[0]), "p = %.3f", l->prob);
		series[k - first] =
		    (struct report_series){names[k - first], values[k - first], l->n_rows};
		if (k + 1 == end)
			report_svg_distribution(f, series, end - first, 1.0,
						annotate_metric_name(d->metric));
	}
	for (size_t k = 0; values && k < end - first; k++)
		free(values[k]);
	free(values);
	free(series);
	free(names);
}

static void describe_leaf(const struct annotate_derivation *d, const struct annotate_leaf *l,
			  char *buf, size_t size)
{
	static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < l->n_atoms && len < size; i++) {
		const struct annotate_atom *a = &l->atoms[i];
		int w = a->n == 3 ? snprintf(buf + len, size - len, "%s%g %s %s %s %g",
					     i ? " && " : "", a->op[0].num, ops[a->cmp[0]],
					     a->op[1].name, ops[a->cmp[1]], a->op[2].num)
				  : snprintf(buf + len, size - len, "%s%s %s %g", i ? " && " : "",
					     a->op[0].name, ops[a->cmp[0]], a->op[1].num);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	if (!l->n_atoms)
		snprintf(buf, size, "all calls");
	(void)d;
}

void annotate_html_begin(FILE *f, const char *title)
{
	report_html_begin(f, title);
	report_html_heading(f, 1, title);
	report_html_paragraph(f, "Performance annotations derived by lever annotate derive "
				 "(doc/annotate.md): Norm(mean, variance); log is log2.");
}

void annotate_html_end(FILE *f)
{
	report_html_end(f);
}

void annotate_derivation_html(FILE *f, const struct annotate_derivation *d)
{
	struct annotate_annotation a;
	char heading[800], scope[512];

	snprintf(heading, sizeof(heading), "%s.%s", d->symbol->name,
		 annotate_metric_name(d->metric));
	report_html_heading(f, 2, heading);
	if (annotate_derivation_annotation(d, &a) == 0) {
		char *text = annotate_to_string(&a, 6);

		if (text)
			report_html_pre(f, text);
		free(text);
		annotate_annotation_free(&a);
	}
	if (d->n_leaves == 0)
		report_html_paragraph(f, "No model found.");
	for (size_t i = 0; i < d->n_leaves; i++) {
		const struct annotate_leaf *l = &d->leaves[i];

		if (l->group) {
			size_t end = i;

			while (end < d->n_leaves && d->leaves[end].group == l->group)
				end++;
			describe_leaf(d, l, scope, sizeof(scope));
			snprintf(heading, sizeof(heading), "[%s]: a mixture of %zu components",
				 scope, end - i);
			report_html_heading(f, 3, heading);
			mixture_chart(f, d, i, end);
			i = end - 1;
			continue;
		}
		describe_leaf(d, l, scope, sizeof(scope));
		snprintf(heading, sizeof(heading), "[%s]: %s, %zu calls, R2 %.4f", scope,
			 annotate_class_name(l->model.cls), l->n_rows, l->model.r_squared);
		report_html_heading(f, 3, heading);
		if (l->rejected) {
			char note[256];

			snprintf(note, sizeof(note),
				 "The %s regression found was no better than the calls' mean in "
				 "10-fold cross-validation (R2 %.4g): the constant instead.",
				 annotate_class_name(l->rejected_cls), l->rejected_cv_r_squared);
			report_html_paragraph(f, note);
		}
		for (size_t g = 0; g < d->symbol->n_features; g++)
			if (model_uses(&l->model, g))
				leaf_chart(f, d, l, g, heading);
	}
}
