/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Checking a record against an annotation (spec §3.2, §5.4.2) and predicting
 * from one (§3.3). Every call is routed to the first item whose scope holds;
 * calls in no scope are counted as unroutable (spec §7.2 item 5). Per scope:
 *  - a distribution Norm(mu(x), v): standardised residuals
 *    z = (y - mu(x)) / sqrt(v), one-sample t-test of mean z = 0; for `R`
 *    (a lower bound) only a mean significantly below counts; for `M` only
 *    calls within mu +- 3 sqrt(v) (the main trend's band) are tested;
 *  - a mixture: each call goes to its most likely component, then a chi^2
 *    goodness-of-fit test of the component counts against the
 *    probabilities (normalised to 1, spec §7.2 item 4), and a t-test per
 *    component.
 * With a tolerance T > 0 (an equivalence margin), a distribution's scope
 * fails only when the calls' mean relative deviation from mu(x) is
 * significantly beyond +-T: a regression test that a change of a few
 * percent, or a loaded machine's, need not trip (margin_test).
 * The tests share the level alpha by Bonferroni (over the function's tests,
 * or a caller's family of them), so a conforming run fails with probability
 * at most alpha overall. The function passes when every
 * tested scope does.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "annotate/internal.h"
#include "stats/stats.h"

/* Feature values of one call: annotation names through their definitions. */
struct call_lookup {
	const struct annotate_annotation *a;
	const struct annotate_symbol *s;
	size_t row;
};

static bool lookup_call(void *ctx, const char *name, double *v)
{
	struct call_lookup *cl = ctx;
	long f = -1;

	for (size_t i = 0; i < cl->a->n_decls && f < 0; i++)
		if (strcmp(cl->a->decls[i].name, name) == 0)
			f = annotate_symbol_feature(cl->s, cl->a->decls[i].definition);
	if (f < 0)
		f = annotate_symbol_feature(cl->s, name);
	if (f < 0)
		return false;
	*v = cl->s->features[f].values[cl->row];
	return !isnan(*v);
}

/* A unit of checking: one distribution, or one mixture (its components). */
struct unit {
	const struct annotate_scope *scope;
	const struct annotate_item *items; /* a distribution, or the components */
	size_t n_items;
	bool mixture;
	const struct annotate_item
	    *first_top; /* for top-level mixtures: items are not contiguous */
	size_t *rows, n;
};

static int build_units(const struct annotate_annotation *a, struct unit **out, size_t *n_out)
{
	struct unit *u = calloc(a->n_items + 1, sizeof(*u));
	size_t n = 0;
	long top_mixture = -1;

	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_items; i++) {
		const struct annotate_item *it = &a->items[i];

		if (it->n_children) {
			u[n++] = (struct unit){.scope = it->scope,
					       .items = it->children,
					       .n_items = it->n_children,
					       .mixture = true};
		} else if (it->has_prob && !it->scope) {
			/* top-level components are contiguous in the parsed form */
			if (top_mixture < 0 ||
			    u[top_mixture].items + u[top_mixture].n_items != it) {
				top_mixture = (long)n;
				u[n++] = (struct unit){.items = it, .mixture = true};
			}
			u[top_mixture].n_items++;
		} else if (it->mean) {
			u[n++] = (struct unit){.scope = it->scope, .items = it, .n_items = 1};
		}
	}
	*out = u;
	*n_out = n;
	return 0;
}

size_t annotate_check_units(const struct annotate_annotation *a)
{
	struct unit *u;
	size_t n = 0;

	if (build_units(a, &u, &n) == 0)
		free(u);
	return n;
}

static int eval_item(const struct annotate_item *it, annotate_lookup_fn lookup, void *ctx,
		     double *mean, double *var)
{
	int rc = annotate_eval(it->mean, lookup, ctx, mean);

	return rc ? rc : annotate_eval(it->variance, lookup, ctx, var);
}

/* Most likely component of a mixture for value y. */
static long best_component(const struct unit *u, annotate_lookup_fn lookup, void *ctx, double y)
{
	double best = -INFINITY;
	long which = -1;

	for (size_t k = 0; k < u->n_items; k++) {
		double m, v, ll;

		if (eval_item(&u->items[k], lookup, ctx, &m, &v))
			continue;
		v = fmax(v, 1e-12);
		ll =
		    log(fmax(u->items[k].prob, 1e-12)) - 0.5 * log(v) - 0.5 * (y - m) * (y - m) / v;
		if (ll > best) {
			best = ll;
			which = (long)k;
		}
	}
	return which;
}

struct zs {
	double *z;
	size_t n;
};

/* t statistic of mean z = 0 and its p-value (two-sided, or lower tail). */
static void t_test(const double *z, size_t n, bool lower_only, double *t, double *p)
{
	double m = stats_mean(z, n), sd = stats_sd(z, n);

	if (!(sd > 0)) {
		*t = m == 0 ? 0 : copysign(INFINITY, m);
		*p = m == 0 ? 1 : (lower_only && m > 0 ? 1 : 0);
		return;
	}
	*t = m / (sd / sqrt((double)n));
	*p = lower_only ? stats_t_cdf(*t, (double)n - 1) : stats_t_p_two_sided(*t, (double)n - 1);
}

/*
 * The equivalence margin (--tolerance T): u = (y - mu) / |mu| per call; the
 * scope fails when mean u is significantly above T (a t-test of mean u <= T,
 * upper tail) or, unless the item is a lower bound, significantly below -T.
 * Each tail runs at half the level, so T -> 0 keeps the test two-sided at
 * the level. The p-value reported is twice the smaller tail's (at most 1).
 */
static void margin_test(const double *u, size_t n, double tol, bool lower_bound_only, double *t,
			double *p)
{
	double m = stats_mean(u, n), sd = stats_sd(u, n), se = sd / sqrt((double)n);
	double p_up, p_down, t_up, t_down;

	if (!(sd > 0)) {
		bool out = lower_bound_only ? m < -tol : fabs(m) > tol;

		*t = out ? copysign(INFINITY, m) : 0;
		*p = out ? 0 : 1;
		return;
	}
	t_up = (m - tol) / se;
	t_down = (m + tol) / se;
	p_up = lower_bound_only ? 1 : 1 - stats_t_cdf(t_up, (double)n - 1);
	p_down = stats_t_cdf(t_down, (double)n - 1);
	*t = p_up <= p_down ? t_up : t_down;
	*p = lower_bound_only ? p_down : fmin(1, 2 * fmin(p_up, p_down));
}

static char *item_text(const struct annotate_scope *scope, const struct annotate_item *it,
		       size_t n_items, bool mixture)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct annotate_item shown = {0};

	if (!f)
		return NULL;
	if (mixture) {
		shown.scope = (struct annotate_scope *)scope;
		shown.children = (struct annotate_item *)it;
		shown.n_children = n_items;
		annotate_print_item(f, &shown, 6);
	} else {
		annotate_print_item(f, it, 6);
	}
	fclose(f);
	if (buf && len && buf[len - 1] == '\n')
		buf[len - 1] = 0;
	return buf;
}

static int check_distribution(struct annotate_check_scope *cs, const struct unit *u,
			      struct call_lookup *cl, const double *ycol, double level,
			      const struct annotate_check_params *p)
{
	double *z = malloc((u->n ? u->n : 1) * sizeof(double));
	double *rel = malloc((u->n ? u->n : 1) * sizeof(double));
	double sum_y = 0, sum_mu = 0;
	size_t k = 0, n_rel = 0;
	char h = u->items[0].heuristic;

	if (!z || !rel) {
		free(z);
		free(rel);
		return -ENOMEM;
	}
	for (size_t i = 0; i < u->n; i++) {
		double m, v;

		cl->row = u->rows[i];
		if (eval_item(&u->items[0], lookup_call, cl, &m, &v))
			continue;
		double y = ycol[u->rows[i]];

		if (v <= 0) {
			/* Norm(c, 0): exact; any difference is a violation */
			z[k++] = y == m ? 0 : copysign(INFINITY, y - m);
		} else {
			double zi = (y - m) / sqrt(v);

			if (h == 'M' && fabs(zi) > 3)
				continue;
			z[k++] = zi;
		}
		sum_y += y;
		sum_mu += m;
		if (m != 0)
			rel[n_rel++] = (y - m) / fabs(m);
	}
	cs->n = k;
	cs->ratio = k && sum_mu != 0 ? sum_y / sum_mu : NAN;
	cs->test = h == 'R' ? "t (one-sided, lower bound)" : "t";
	if (p->tolerance > 0) {
		/* calls predicted at exactly 0 have no relative deviation */
		cs->n = n_rel;
		cs->test = h == 'R' ? "t margin (lower bound)" : "t margin (two one-sided)";
		if (n_rel >= p->min_points) {
			cs->tested = true;
			margin_test(rel, n_rel, p->tolerance, h == 'R', &cs->statistic, &cs->p);
			cs->pass = cs->p >= level;
		}
	} else if (k >= p->min_points) {
		bool infinite = false;

		for (size_t i = 0; i < k; i++)
			infinite |= isinf(z[i]) && (h != 'R' || z[i] < 0);
		cs->tested = true;
		if (infinite) {
			cs->statistic = INFINITY;
			cs->p = 0;
		} else {
			for (size_t i = 0; i < k; i++)
				if (isinf(z[i]))
					z[i] = 1e6; /* above an R bound: allowed */
			t_test(z, k, h == 'R', &cs->statistic, &cs->p);
		}
		cs->pass = cs->p >= level;
	}
	free(z);
	free(rel);
	return 0;
}

static int check_mixture(struct annotate_check_scope *cs, const struct unit *u,
			 struct call_lookup *cl, const double *ycol, double level,
			 const struct annotate_check_params *p)
{
	size_t *count = calloc(u->n_items, sizeof(size_t)), k = 0;
	double total = 0, chi2 = 0;

	if (!count)
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++) {
		long c;

		cl->row = u->rows[i];
		c = best_component(u, lookup_call, cl, ycol[u->rows[i]]);
		if (c >= 0) {
			count[c]++;
			k++;
		}
	}
	for (size_t j = 0; j < u->n_items; j++)
		total += u->items[j].prob;
	cs->n = k;
	cs->test = "chi2";
	if (k >= p->min_points && total > 0 && u->n_items > 1) {
		for (size_t j = 0; j < u->n_items; j++) {
			double e = (double)k * u->items[j].prob / total;

			chi2 +=
			    e > 0 ? (count[j] - e) * (count[j] - e) / e : (count[j] ? INFINITY : 0);
		}
		cs->tested = true;
		cs->statistic = chi2;
		cs->p = gsl_cdf_chisq_Q(chi2, (double)(u->n_items - 1));
		cs->pass = cs->p >= level;
	}
	free(count);
	return 0;
}

int annotate_check(const struct annotate_annotation *a, const struct annotate_symbol *s,
		   const struct annotate_check_params *p, struct annotate_check_result *out)
{
	struct unit *units = NULL;
	size_t n_units = 0, tested = 0;
	struct call_lookup cl = {.a = a, .s = s};
	const double *ycol;
	int rc;

	memset(out, 0, sizeof(*out));
	out->signature = strdup(a->signature);
	out->metric = a->metric;
	out->found = s != NULL;
	out->pass = true;
	if (!out->signature)
		return -ENOMEM;
	if (!s)
		return 0;
	if ((rc = build_units(a, &units, &n_units)))
		return rc;
	ycol = s->metrics[a->metric];
	for (size_t u = 0; u < n_units; u++) {
		units[u].rows = malloc((s->n_calls ? s->n_calls : 1) * sizeof(size_t));
		if (!units[u].rows) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < s->n_calls; i++) {
		bool routed = false;

		if (isnan(ycol[i]))
			continue;
		out->n++;
		cl.row = i;
		for (size_t u = 0; u < n_units && !routed; u++)
			if (!units[u].scope ||
			    annotate_scope_holds(units[u].scope, lookup_call, &cl) == 1) {
				units[u].rows[units[u].n++] = i;
				routed = true;
			}
		out->unroutable += !routed;
	}
	out->scopes = calloc(n_units ? n_units : 1, sizeof(*out->scopes));
	if (!out->scopes) {
		rc = -ENOMEM;
		goto out;
	}
	out->n_scopes = n_units;
	for (size_t u = 0; u < n_units; u++)
		tested += units[u].n >= p->min_points;
	for (size_t u = 0; u < n_units && !rc; u++) {
		struct annotate_check_scope *cs = &out->scopes[u];
		double level = p->alpha / (double)(tested > p->family ? tested
						   : p->family	      ? p->family
								      : 1);

		cs->text =
		    item_text(units[u].scope, units[u].items, units[u].n_items, units[u].mixture);
		cs->statistic = cs->p = cs->ratio = NAN;
		cs->pass = true;
		rc = units[u].mixture ? check_mixture(cs, &units[u], &cl, ycol, level, p)
				      : check_distribution(cs, &units[u], &cl, ycol, level, p);
		out->pass &= cs->pass;
	}
out:
	for (size_t u = 0; u < n_units; u++)
		free(units[u].rows);
	free(units);
	return rc;
}

void annotate_check_result_free(struct annotate_check_result *r)
{
	for (size_t i = 0; i < r->n_scopes; i++)
		free(r->scopes[i].text);
	free(r->scopes);
	free(r->signature);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------ prediction */

static double mixture_cdf(const struct annotate_prediction *p, double x)
{
	double c = 0, total = 0;

	for (size_t k = 0; k < p->n_components; k++) {
		double sd = sqrt(fmax(p->variance[k], 0));

		c += p->prob[k] * (sd > 0 ? gsl_cdf_gaussian_P(x - p->mean[k], sd)
					  : (x >= p->mean[k] ? 1.0 : 0.0));
		total += p->prob[k];
	}
	return c / total;
}

/* The q quantile of the mixture, by bisection on its CDF. */
static double mixture_quantile(const struct annotate_prediction *p, double q)
{
	double lo = INFINITY, hi = -INFINITY;

	for (size_t k = 0; k < p->n_components; k++) {
		double sd = sqrt(fmax(p->variance[k], 0));

		lo = fmin(lo, p->mean[k] - 10 * sd - 1);
		hi = fmax(hi, p->mean[k] + 10 * sd + 1);
	}
	for (int i = 0; i < 200; i++) {
		double mid = 0.5 * (lo + hi);

		if (mixture_cdf(p, mid) < q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

int annotate_predict(const struct annotate_annotation *a, annotate_lookup_fn lookup, void *ctx,
		     struct annotate_prediction *out)
{
	struct unit *units = NULL;
	size_t n_units = 0;
	const struct unit *u = NULL;
	double total = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = build_units(a, &units, &n_units)))
		return rc;
	for (size_t i = 0; i < n_units && !u; i++) {
		int h = units[i].scope ? annotate_scope_holds(units[i].scope, lookup, ctx) : 1;

		if (h == 1)
			u = &units[i];
	}
	rc = u ? 0 : -ENOENT;
	for (size_t k = 0; u && k < u->n_items && k < 16 && !rc; k++) {
		const struct annotate_item *it = &u->items[k];

		out->prob[k] = u->mixture ? it->prob : 1.0;
		rc = eval_item(it, lookup, ctx, &out->mean[k], &out->variance[k]);
		out->heuristic = it->heuristic;
		out->n_components++;
		total += out->prob[k];
	}
	if (!rc && out->n_components && total > 0) {
		for (size_t k = 0; k < out->n_components; k++)
			out->mean_total += out->prob[k] * out->mean[k] / total;
		out->low = mixture_quantile(out, 0.025);
		out->high = mixture_quantile(out, 0.975);
	}
	free(units);
	return rc;
}
