/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The model fitted to a line's causal curve, and the thin-evidence rule
 * (doc/causal-report.md "The fitted curve", "Thin evidence"; spec coz.md §10
 * on plotting and ranking).
 *
 * Coz draws a straight regression line (the paper) or a loess trend (its
 * viewer). Neither suits the curves causal profiles really have: speeding a
 * line up helps until another path becomes critical, then not at all (the
 * paper's Figure 1: +5% at a 5% speedup, +5% at 100%). A straight line
 * through such points is wrong at both ends, and its slope ranks a line that
 * helps at once below one that helps only a little. So the curve is fitted by
 *
 *	y = slope * min(x, knee)
 *
 * a line through the origin that levels off at the knee (knee = 1: it never
 * does). The points are weighted by their bootstrap intervals; the knee that
 * fits best is one of the speedups measured, and the levelling model is kept only
 * when it is better by Akaike's criterion (chi^2 + 2 x parameters, chi^2
 * scaled by the levelling model's dispersion when the points scatter more
 * than their intervals say: quasi-AIC) than the straight line, so that a
 * straight curve stays straight. The fit's intervals come from refitting the chosen model to
 * every bootstrap resample of the points.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"
#include "causal/fit.h"
#include "stats/stats.h"

#define KNEE_STEPS 100	 /* the knee's grid: 1%, 2%, ..., 100% */
#define MIN_SE	   0.001 /* 0.1 point: no point may weigh more than this allows */
#define DEFAULT_SE 0.01	 /* a point without an interval counts as +-1 point */

double causal_fit_at(const struct causal_fit *f, double x)
{
	return f->slope * (x < f->knee ? x : f->knee);
}

/* The points a fit sees: the nonzero speedups (the 0% point is 0 by definition). */
struct fit_points {
	double *x, *y, *w;
	size_t n;
};

/* Weighted least squares of y on min(x, knee) through the origin: the slope and chi^2. */
static double fit_knee(const struct fit_points *pt, double knee, double *chi2)
{
	double szz = 0, szy = 0, b, c = 0;

	for (size_t i = 0; i < pt->n; i++) {
		double z = pt->x[i] < knee ? pt->x[i] : knee;

		szz += pt->w[i] * z * z;
		szy += pt->w[i] * z * pt->y[i];
	}
	b = szz > 0 ? szy / szz : 0;
	for (size_t i = 0; i < pt->n; i++) {
		double z = pt->x[i] < knee ? pt->x[i] : knee, r = pt->y[i] - b * z;

		c += pt->w[i] * r * r;
	}
	*chi2 = c;
	return b;
}

/*
 * The best knee among the speedups measured below the largest (a knee
 * between two of them would claim more than the points say: the curve has
 * levelled off by the first speedup at which it is flat). NaN if there is
 * none to try.
 */
static double best_knee(const struct fit_points *pt, double xmax, double *slope, double *chi2)
{
	double best = NAN;

	*chi2 = INFINITY;
	for (size_t i = 0; i < pt->n; i++) {
		double knee = pt->x[i], c, b;

		if (knee >= xmax - 1e-9)
			continue;
		b = fit_knee(pt, knee, &c);
		if (c < *chi2 * (1 - 1e-9) || (c <= *chi2 * (1 + 1e-9) && knee < best)) {
			*chi2 = c;
			*slope = b;
			best = knee;
		}
	}
	return best;
}

static double largest_x(const struct fit_points *pt)
{
	double m = 0;

	for (size_t i = 0; i < pt->n; i++)
		m = pt->x[i] > m ? pt->x[i] : m;
	return m;
}

/* Choose between the straight line and the levelling model (f->levels_off and the rest). */
static void choose_model(const struct fit_points *pt, struct causal_fit *f)
{
	double lin_chi2, lev_chi2, lev_slope = 0, knee, dispersion;
	double xmax = largest_x(pt);

	memset(f, 0, sizeof(*f));
	f->knee = 1;
	f->slope = fit_knee(pt, 1, &lin_chi2);
	f->chi2 = lin_chi2;
	if (pt->n < 3) /* two parameters need a third point to be tested */
		return;
	knee = best_knee(pt, xmax, &lev_slope, &lev_chi2);
	/*
	 * Points scattered more than their intervals say (between runs, say)
	 * would let a second parameter win on noise: the chi^2 values are
	 * scaled by the larger model's dispersion first when it exceeds 1
	 * (quasi-AIC).
	 */
	dispersion = pt->n > 2 ? lev_chi2 / (double)(pt->n - 2) : 1;
	if (!(dispersion > 1))
		dispersion = 1;
	if (isnan(knee) || !(lev_chi2 / dispersion + 2 * 2 < lin_chi2 / dispersion + 2 * 1))
		return;
	f->levels_off = true;
	f->knee = knee;
	f->slope = lev_slope;
	f->chi2 = lev_chi2;
}

/* Refit the chosen model's shape (levelling or not) to other y values: its effect. */
static void refit(const struct fit_points *pt, const struct causal_fit *chosen,
		  struct causal_fit *out)
{
	double chi2, xmax = largest_x(pt);

	*out = *chosen;
	if (!chosen->levels_off) {
		out->slope = fit_knee(pt, 1, &chi2);
		return;
	}
	out->knee = best_knee(pt, xmax, &out->slope, &chi2);
	if (isnan(out->knee))
		out->knee = chosen->knee;
}

/* A point's standard error from its interval (a normal approximation). */
static double point_se(const struct causal_bucket *b, double level)
{
	double z = stats_normal_quantile(1 - (1 - level) / 2), se;

	se = (b->ci_high - b->ci_low) / (2 * z);
	if (!isfinite(se) || !(se > 0))
		return DEFAULT_SE;
	return se < MIN_SE ? MIN_SE : se;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Percentile interval of the finite values in v[0..n) (sorted in place). */
static void interval_of(double *v, size_t n, double level, double *lo, double *hi)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (isfinite(v[i]))
			v[m++] = v[i];
	}
	if (m < 2 || m < n / 2) {
		*lo = *hi = NAN;
		return;
	}
	qsort(v, m, sizeof(*v), compare_doubles);
	*lo = stats_quantile_sorted(v, m, (1 - level) / 2);
	*hi = stats_quantile_sorted(v, m, 1 - (1 - level) / 2);
}

/*
 * The bootstrap resamples experiments within each speedup, so it does not see
 * points that scatter around the curve more than their own intervals say (a
 * slow spell of the machine at one speedup): an interval is widened around
 * the estimate by the square root of the fit's dispersion when that exceeds 1,
 * as quasi-likelihood does.
 */
static void widen(double *lo, double *hi, double estimate, double dispersion)
{
	double k = dispersion > 1 ? sqrt(dispersion) : 1;

	*lo = estimate - k * (estimate - *lo);
	*hi = estimate + k * (*hi - estimate);
}

/*
 * Bootstrap the fit: refit every resample (reps: n_buckets rows of B, row 0
 * unused), then take the intervals of the effect and of the curve at each
 * bucket. -1 when out of memory.
 */
static int bootstrap_fit(struct causal_series *s, struct fit_points *pt, const double *reps,
			 size_t B, double level)
{
	size_t nb = s->n_buckets;
	double *effect = malloc((B ? B : 1) * sizeof(*effect));
	double *curve = malloc((nb * B > 0 ? nb * B : 1) * sizeof(*curve));
	double *y = pt->y;
	double *ry = malloc((pt->n ? pt->n : 1) * sizeof(*ry));

	if (!effect || !curve || !ry) {
		free(effect);
		free(curve);
		free(ry);
		return -1;
	}
	pt->y = ry;
	for (size_t k = 0; k < B; k++) {
		struct causal_fit f;
		bool ok = true;

		for (size_t i = 1; i < nb; i++) {
			ry[i - 1] = reps[i * B + k];
			ok &= isfinite(ry[i - 1]);
		}
		refit(pt, &s->fit, &f);
		effect[k] = ok ? causal_fit_at(&f, 1) : NAN;
		for (size_t i = 1; i < nb; i++)
			curve[i * B + k] = ok ? causal_fit_at(&f, pt->x[i - 1]) : NAN;
	}
	pt->y = y;
	interval_of(effect, B, level, &s->fit.effect_low, &s->fit.effect_high);
	widen(&s->fit.effect_low, &s->fit.effect_high, s->fit.effect, s->fit.dispersion);
	for (size_t i = 1; i < nb; i++) {
		struct causal_bucket *b = &s->buckets[i];

		interval_of(curve + i * B, B, level, &b->fit_low, &b->fit_high);
		widen(&b->fit_low, &b->fit_high, b->fit, s->fit.dispersion);
	}
	free(effect);
	free(curve);
	free(ry);
	return 0;
}

/* The thin-evidence bits of one point (see causal.h). */
static unsigned point_thin(const struct causal_bucket *b)
{
	unsigned why = 0;

	if (b->experiments < CAUSAL_THIN_EXPERIMENTS)
		why |= CAUSAL_THIN_FEW_EXPERIMENTS;
	if (b->visits < CAUSAL_THIN_VISITS)
		why |= CAUSAL_THIN_FEW_VISITS;
	if (!(b->ci_high - b->ci_low <= CAUSAL_THIN_WIDTH))
		why |= CAUSAL_THIN_WIDE;
	return why;
}

/* Mark thin points and the line (see causal.h). */
static void mark_thin(struct causal_series *s)
{
	size_t thin = 0, n = s->n_buckets ? s->n_buckets - 1 : 0;

	s->thin = 0;
	s->buckets[0].thin = 0;
	for (size_t i = 1; i < s->n_buckets; i++) {
		s->buckets[i].thin = point_thin(&s->buckets[i]);
		thin += s->buckets[i].thin != 0;
	}
	/*
	 * Many thin points can still make a firm fit together (Coz's random
	 * mode spreads a few experiments over 20 speedups): the fit's own
	 * interval decides, unless no point at all stands on its own.
	 */
	if (n && thin == n)
		s->thin |= CAUSAL_THIN_POINTS;
	if (!(s->fit.effect_high - s->fit.effect_low <= CAUSAL_THIN_WIDTH))
		s->thin |= CAUSAL_THIN_WIDE;
}

/*
 * One experiment's spread, sd = se x sqrt(n), as the median over the points
 * measured by CAUSAL_THIN_EXPERIMENTS experiments or more (their bootstrap
 * sees it); 0 if none is. A point measured by one or two experiments has
 * almost no interval of its own (only the baseline's noise): without a
 * floor of sd / sqrt(n) under its se it would outweigh all the others
 * (Coz's ferret profile: a fit decided by two single-experiment points).
 */
static double experiment_sd(const struct causal_series *s, double level)
{
	double *sd = malloc((s->n_buckets ? s->n_buckets : 1) * sizeof(*sd)), m;
	size_t n = 0;

	if (!sd)
		return 0;
	for (size_t i = 1; i < s->n_buckets; i++) {
		const struct causal_bucket *b = &s->buckets[i];

		if (b->experiments >= CAUSAL_THIN_EXPERIMENTS)
			sd[n++] = point_se(b, level) * sqrt(b->experiments);
	}
	m = n ? stats_median(sd, n) : 0;
	free(sd);
	return isfinite(m) ? m : 0;
}

int causal_fit_series(struct causal_series *s, const double *reps, size_t B, double level)
{
	double sigma;
	size_t nb = s->n_buckets, n = nb ? nb - 1 : 0;
	struct fit_points pt = {
	    .x = malloc((n ? n : 1) * sizeof(double)),
	    .y = malloc((n ? n : 1) * sizeof(double)),
	    .w = malloc((n ? n : 1) * sizeof(double)),
	    .n = n,
	};
	int ret = -1;

	if (!pt.x || !pt.y || !pt.w)
		goto out;
	sigma = experiment_sd(s, level);
	for (size_t i = 1; i < nb; i++) {
		double se = point_se(&s->buckets[i], level);
		double floor =
		    sigma / sqrt(s->buckets[i].experiments ? s->buckets[i].experiments : 1);

		se = se > floor ? se : floor;
		pt.x[i - 1] = s->buckets[i].speedup_pct / 100.0;
		pt.y[i - 1] = s->buckets[i].program_speedup;
		pt.w[i - 1] = 1 / (se * se);
	}
	choose_model(&pt, &s->fit);
	s->fit.dispersion = pt.n > (s->fit.levels_off ? 2u : 1u)
				? s->fit.chi2 / (double)(pt.n - (s->fit.levels_off ? 2 : 1))
				: 1;
	s->fit.effect = causal_fit_at(&s->fit, 1);
	s->fit.effect_low = s->fit.effect_high = s->fit.effect;
	for (size_t i = 0; i < nb; i++) {
		struct causal_bucket *b = &s->buckets[i];

		b->fit = b->fit_low = b->fit_high = causal_fit_at(&s->fit, b->speedup_pct / 100.0);
	}
	if (reps && B && bootstrap_fit(s, &pt, reps, B, level))
		goto out;
	mark_thin(s);
	ret = 0;
out:
	free(pt.x);
	free(pt.y);
	free(pt.w);
	return ret;
}

const char *causal_thin_text(unsigned thin, char *buf, size_t size)
{
	static const struct {
		unsigned bit;
		const char *text;
	} names[] = {
	    {CAUSAL_THIN_FEW_EXPERIMENTS, "few experiments"},
	    {CAUSAL_THIN_FEW_VISITS, "few visits"},
	    {CAUSAL_THIN_WIDE, "wide interval"},
	    {CAUSAL_THIN_POINTS, "thin points"},
	};
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n;

		if (!(thin & names[i].bit) || len >= size)
			continue;
		n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", names[i].text);
		len += n > 0 ? (size_t)n : 0;
	}
	return buf;
}
