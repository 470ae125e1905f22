/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Coz's viewer's method (spec anchors.md §1.8; coz.md §8.4, §9): the curves
 * and ranking Coz's web viewer computes from a profile, so that `lever causal
 * report --method=coz-viewer` shows what a Coz user sees, beside lever's own
 * analysis (summary.c) of the same records.
 *
 *  - experiments whose selected line is in coz.h are dropped;
 *  - records are summed per (selected line, progress point, speedup) over
 *    all experiments and runs, none set aside; `samples`, `runtime` and
 *    `startup` records are ignored, so there is no phase correction;
 *  - throughput: period = duration / delta; latency (Little's law):
 *    W = mean difference / (arrivals / duration), the difference averaged
 *    weighted by duration (Coz's end-of-experiment count: lever's in-flight
 *    integral is not a field the viewer knows);
 *  - program speedup = (baseline - value) / baseline against the 0%
 *    aggregate, negated for latency (less is better);
 *  - an aggregate with fewer than MIN_DELTA visits (arrivals) is not a
 *    point; without a 0% point the (line, point) has no curve; NaN and
 *    infinite speedups and those outside [-1, 2] are dropped;
 *  - a (line, point) needs Minimum Points points (the slider, 10 by
 *    default), lowered one by one until some line shows;
 *  - lines rank by impact: the largest normalised area under the
 *    piecewise-linear curve, area(0..x) / x, at least 0, the largest over
 *    the line's progress points.
 *
 * The viewer has no intervals, fitted model or thin marks: those fields are
 * NaN (0 for the flags). The least-squares slope is kept, for reference
 * (`coz plot --text` prints one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"

/* One aggregate of the viewer: a (selected line, point, speedup) key and its sums. */
struct aggregate {
	uint32_t selected, point;
	int pct;
	unsigned experiments;
	double duration, visits, departures, difference_dur;
};

static int compare_aggregates(const void *a, const void *b)
{
	const struct aggregate *x = a, *y = b;

	if (x->selected != y->selected)
		return x->selected < y->selected ? -1 : 1;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->pct > y->pct) - (x->pct < y->pct);
}

/* Whether a "file:line" is in coz.h (the macros' own lines, never a lead). */
static bool in_coz_h(const char *selected)
{
	return strncmp(selected, "coz.h:", 6) == 0 || strstr(selected, "/coz.h:") != NULL;
}

/* One record per point record, sorted by key; NULL when out of memory. */
static struct aggregate *collect(const struct causal_profile *p, size_t *n_out,
				 size_t *dropped_coz_h)
{
	struct aggregate *a = malloc((p->n_deltas ? p->n_deltas : 1) * sizeof(*a));
	size_t n = 0;

	if (!a)
		return NULL;
	for (size_t i = 0; i < p->n_experiments; i++) {
		const struct causal_experiment *e = &p->experiments[i];

		if (in_coz_h(causal_profile_string(p, e->selected))) {
			(*dropped_coz_h)++;
			continue;
		}
		for (size_t k = 0; k < e->n_deltas; k++) {
			const struct causal_delta *d = &p->deltas[e->first_delta + k];
			bool latency = p->points[d->point].kind == CAUSAL_POINT_LATENCY;

			a[n++] = (struct aggregate){
			    .selected = e->selected,
			    .point = d->point,
			    .pct = e->speedup_pct,
			    .experiments = 1,
			    .duration = (double)e->duration,
			    .visits = (double)(latency ? d->arrivals : d->delta),
			    .departures = (double)d->departures,
			    .difference_dur = (double)d->difference * (double)e->duration,
			};
		}
	}
	qsort(a, n, sizeof(*a), compare_aggregates);
	*n_out = n;
	return a;
}

/* Sum the records with equal keys in place; returns the number of aggregates. */
static size_t merge_equal_keys(struct aggregate *a, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		struct aggregate *last = m ? &a[m - 1] : NULL;

		if (last && !compare_aggregates(last, &a[i])) {
			last->experiments += a[i].experiments;
			last->duration += a[i].duration;
			last->visits += a[i].visits;
			last->departures += a[i].departures;
			last->difference_dur += a[i].difference_dur;
		} else {
			a[m++] = a[i];
		}
	}
	return m;
}

/* The viewer's value of an aggregate: the period, or W by Little's law (NaN if undefined). */
static double aggregate_value(const struct aggregate *a, bool latency)
{
	if (!(a->visits >= CAUSAL_VIEWER_MIN_DELTA))
		return NAN;
	if (latency) /* (difference_dur / duration) / (arrivals / duration) */
		return a->difference_dur / a->visits;
	return a->duration / a->visits;
}

static double least_squares_slope(const struct causal_series *s)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, n = (double)s->n_buckets, d;

	for (size_t i = 0; i < s->n_buckets; i++) {
		double x = s->buckets[i].speedup_pct / 100.0, y = s->buckets[i].program_speedup;

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	d = n * sxx - sx * sx;
	if (s->n_buckets < 2 || fabs(d) < 1e-12)
		return NAN;
	return (n * sxy - sx * sy) / d;
}

/*
 * The viewer's impact of one curve: walking its points in order, the area
 * under the piecewise-linear curve from the first point to x, divided by x;
 * the largest such value, and never below 0 (the viewer starts from 0).
 */
static double viewer_impact(const struct causal_bucket *b, size_t n)
{
	double area = 0, best = 0;

	for (size_t i = 1; i < n; i++) {
		double x0 = b[i - 1].speedup_pct / 100.0, x1 = b[i].speedup_pct / 100.0;

		area += (b[i - 1].program_speedup + b[i].program_speedup) / 2 * (x1 - x0);
		if (area / x1 > best)
			best = area / x1;
	}
	return best;
}

static struct causal_bucket viewer_bucket(const struct aggregate *a, double y)
{
	return (struct causal_bucket){
	    .speedup_pct = a->pct,
	    .experiments = a->experiments,
	    .duration = a->duration,
	    .visits = a->visits,
	    .departures = a->departures,
	    .difference_dur = a->difference_dur,
	    .selected_samples = NAN,
	    .raw_speedup = y,
	    .phase_factor = 1,
	    .program_speedup = y,
	    .ci_low = NAN,
	    .ci_high = NAN,
	    .fit = NAN,
	    .fit_low = NAN,
	    .fit_high = NAN,
	};
}

/*
 * The curve of one (line, point) from its aggregates a[0..n), sorted by
 * speedup: false when it has no usable 0% point. buckets has room for n.
 */
static bool viewer_series(const struct causal_profile *p, const struct aggregate *a, size_t n,
			  struct causal_bucket *buckets, struct causal_series *s, size_t *dropped)
{
	bool latency = p->points[a[0].point].kind == CAUSAL_POINT_LATENCY;
	double base = a[0].pct == 0 ? aggregate_value(&a[0], latency) : NAN;
	double no_fit = NAN;

	*s = (struct causal_series){
	    .selected = a[0].selected, .point = a[0].point, .buckets = buckets};
	if (!isfinite(base) || base == 0)
		return false;
	s->max_speedup = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double v = aggregate_value(&a[i], latency), y = (base - v) / base;

		if (latency)
			y = -y;
		if (!isfinite(v) || !isfinite(y) || y < CAUSAL_VIEWER_MIN_Y ||
		    y > CAUSAL_VIEWER_MAX_Y) {
			(*dropped)++;
			continue;
		}
		buckets[s->n_buckets++] = viewer_bucket(&a[i], y);
		s->experiments += a[i].experiments;
		s->max_speedup = y > s->max_speedup ? y : s->max_speedup;
	}
	s->impact = viewer_impact(buckets, s->n_buckets);
	s->slope = least_squares_slope(s);
	s->slope_low = s->slope_high = s->intercept = no_fit;
	s->fit = (struct causal_fit){.slope = no_fit,
				     .knee = no_fit,
				     .effect = no_fit,
				     .effect_low = no_fit,
				     .effect_high = no_fit,
				     .chi2 = no_fit,
				     .dispersion = no_fit};
	return true;
}

/* Every (line, point) curve, with no Minimum Points filter yet. */
static int all_series(const struct causal_profile *p, struct aggregate *a, size_t n,
		      struct causal_summary *out)
{
	out->series = calloc(n ? n : 1, sizeof(*out->series));
	if (!out->series)
		return -1;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct causal_bucket *buckets;

		while (j < n && a[j].selected == a[i].selected && a[j].point == a[i].point)
			j++;
		buckets = malloc((j - i) * sizeof(*buckets));
		if (!buckets)
			return -1;
		if (viewer_series(p, a + i, j - i, buckets, &out->series[out->n_series],
				  &out->dropped_out_of_range))
			out->n_series++;
		else {
			out->dropped_no_baseline++;
			free(buckets);
		}
		i = j;
	}
	return 0;
}

/* How many curves have at least min_points points. */
static size_t curves_with(const struct causal_summary *s, unsigned min_points)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_series; i++)
		n += s->series[i].n_buckets >= min_points && s->series[i].n_buckets > 0;
	return n;
}

/* Keep the curves with min_points points or more (the others count as dropped). */
static void keep_curves_with(struct causal_summary *s, unsigned min_points)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_series; i++) {
		if (s->series[i].n_buckets >= min_points && s->series[i].n_buckets > 0) {
			s->series[kept++] = s->series[i];
		} else {
			free(s->series[i].buckets);
			s->dropped_few_speedups++;
		}
	}
	s->n_series = kept;
}

/* ------------------------------------------------------------ ranking */

struct ranked {
	struct causal_series series;
	double line_impact; /* the largest impact over the line's progress points */
};

struct rank_context {
	const struct causal_profile *p;
	enum causal_sort sort;
};

static int compare_names(const struct causal_profile *p, const struct causal_series *x,
			 const struct causal_series *y)
{
	int c =
	    strcmp(causal_profile_string(p, x->selected), causal_profile_string(p, y->selected));

	if (c)
		return c;
	return strcmp(causal_profile_string(p, p->points[x->point].name),
		      causal_profile_string(p, p->points[y->point].name));
}

static int compare_ranked(const void *a, const void *b, void *arg)
{
	const struct rank_context *ctx = arg;
	const struct ranked *x = a, *y = b;

	if (ctx->sort == CAUSAL_SORT_IMPACT && x->line_impact != y->line_impact)
		return x->line_impact < y->line_impact ? 1 : -1;
	if (ctx->sort == CAUSAL_SORT_SLOPE && x->series.slope != y->series.slope) {
		if (isnan(x->series.slope) || isnan(y->series.slope))
			return isnan(x->series.slope) - isnan(y->series.slope);
		return x->series.slope < y->series.slope ? 1 : -1;
	}
	return compare_names(ctx->p, &x->series, &y->series);
}

/*
 * Rank as the viewer does by default: lines by the largest impact over their
 * progress points (a line's curves stay together), then by name; or by
 * slope or name when asked.
 */
static int rank_series(const struct causal_profile *p, struct causal_summary *s,
		       enum causal_sort sort)
{
	struct ranked *r = malloc((s->n_series ? s->n_series : 1) * sizeof(*r));
	struct rank_context ctx = {p, sort};

	if (!r)
		return -1;
	for (size_t i = 0; i < s->n_series; i++) {
		r[i] = (struct ranked){s->series[i], s->series[i].impact};
		for (size_t k = 0; k < s->n_series; k++) {
			if (s->series[k].selected == s->series[i].selected &&
			    s->series[k].impact > r[i].line_impact)
				r[i].line_impact = s->series[k].impact;
		}
	}
	qsort_r(r, s->n_series, sizeof(*r), compare_ranked, &ctx);
	for (size_t i = 0; i < s->n_series; i++)
		s->series[i] = r[i].series;
	free(r);
	s->sort = sort;
	return 0;
}

int causal_summarize_coz_viewer(const struct causal_profile *p,
				const struct causal_summary_options *opt,
				struct causal_summary *out)
{
	unsigned min_points =
	    opt && opt->min_speedups ? opt->min_speedups : CAUSAL_VIEWER_MIN_POINTS;
	struct aggregate *a;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->method = CAUSAL_METHOD_COZ_VIEWER;
	out->runtime_ns = causal_profile_total_runtime(p);
	out->level = NAN;
	a = collect(p, &n, &out->dropped_coz_h);
	if (!a)
		return -1;
	n = merge_equal_keys(a, n);
	if (all_series(p, a, n, out)) {
		free(a);
		causal_summary_free(out);
		return -1;
	}
	free(a);
	/* the viewer lowers its Minimum Points slider until something shows */
	while (min_points > 1 && curves_with(out, min_points) == 0)
		min_points--;
	out->viewer_min_points = min_points;
	keep_curves_with(out, min_points);
	if (rank_series(p, out, opt ? opt->sort : CAUSAL_SORT_IMPACT)) {
		causal_summary_free(out);
		return -1;
	}
	return 0;
}

const char *causal_method_name(enum causal_method method)
{
	return method == CAUSAL_METHOD_COZ_VIEWER ? "coz-viewer" : "lever";
}
