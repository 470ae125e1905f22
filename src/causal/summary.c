/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Summarise a profile into per-line speedup curves (paper §2 "Producing a
 * causal profile"; spec coz.md §9, §10):
 *
 *  - experiments with the same selected line and speedup are combined by
 *    adding durations and visits (rates are never averaged);
 *  - each (line, progress point) is compared with its own 0% bucket;
 *  - throughput: p = duration / visits, program speedup = 1 - p_s / p_0;
 *  - latency (Little's law): W = mean in-flight / arrival rate
 *    = (sum difference*duration / sum duration) / (sum arrivals / sum duration),
 *    improvement = (W_0 - W_s) / W_0;
 *  - phase correction (paper eq. 8): the speedup measured while the line ran
 *    only applies to the fraction t_A/T of the run in which it runs, with
 *    t_A estimated as t_obs * s / s_obs from the line's 0% experiments (see
 *    phase_factor()); the factor is capped at 1 (t_A <= T);
 *  - far-out experiments are set aside first (see trim_bucket()): an
 *    experiment whose cost per visit lies beyond Tukey's far-out fences
 *    (3 IQR past the quartiles, the IQR at least one visit's worth) of its
 *    bucket was disturbed from outside (another process took the CPUs for
 *    a while), and one such experiment can move a sum-based estimate by
 *    tens of points;
 *  - buckets with fewer than min_visits visits (arrivals) are dropped, then
 *    lines without a 0% bucket or with fewer than min_speedups speedups;
 *  - confidence intervals: a percentile bootstrap that resamples the
 *    experiments of each bucket (the 0% one included, so the baseline's noise
 *    counts), recomputing every point and the slope;
 *  - each curve gets a fitted model that can level off and the points and
 *    lines that rest on too little are marked (fit.c);
 *  - lines are ranked by impact (Coz's viewer's default: the largest mean
 *    program speedup over [0, x]), or by the least-squares slope of their
 *    curve (the paper; program speedups clamped to [-100%, +200%] for the
 *    fit only).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/causal.h"
#include "causal/fit.h"
#include "stats/stats.h"

/* One point record, keyed for grouping. */
struct entry {
	uint32_t selected;
	uint32_t point;
	int pct;
	double duration;
	double visits;
	double departures;
	double difference_dur;
	double selected_samples;
};

static int compare_entries(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->selected != y->selected)
		return x->selected < y->selected ? -1 : 1;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->pct > y->pct) - (x->pct < y->pct);
}

/*
 * A latency experiment's L x duration: lever's time-averaged in-flight
 * count when recorded, else the number in flight at the end (Coz's
 * difference), which stands for the whole experiment.
 */
static double in_flight_dur(const struct causal_delta *d, const struct causal_experiment *e)
{
	if (d->has_in_flight)
		return (double)d->in_flight_ns;
	return (double)d->difference * (double)e->duration;
}

static struct entry *collect_entries(const struct causal_profile *p, size_t *n_out)
{
	struct entry *entries = malloc((p->n_deltas ? p->n_deltas : 1) * sizeof(*entries));
	size_t n = 0;

	if (!entries)
		return NULL;
	for (size_t i = 0; i < p->n_experiments; i++) {
		const struct causal_experiment *e = &p->experiments[i];

		for (size_t k = 0; k < e->n_deltas; k++) {
			const struct causal_delta *d = &p->deltas[e->first_delta + k];
			bool latency = p->points[d->point].kind == CAUSAL_POINT_LATENCY;

			entries[n++] = (struct entry){
			    .selected = e->selected,
			    .point = d->point,
			    .pct = e->speedup_pct,
			    .duration = (double)e->duration,
			    .visits = (double)(latency ? d->arrivals : d->delta),
			    .departures = (double)d->departures,
			    .difference_dur = in_flight_dur(d, e),
			    .selected_samples = (double)e->selected_samples,
			};
		}
	}
	qsort(entries, n, sizeof(*entries), compare_entries);
	*n_out = n;
	return entries;
}

static bool same_series(const struct entry *a, const struct entry *b)
{
	return a->selected == b->selected && a->point == b->point;
}

/* Add one entry (one experiment's point record) to a bucket's sums. */
static void bucket_add(struct causal_bucket *b, const struct entry *e)
{
	b->experiments++;
	b->duration += e->duration;
	b->visits += e->visits;
	b->departures += e->departures;
	b->difference_dur += e->difference_dur;
	b->selected_samples += e->selected_samples;
}

/* One experiment's cost per visit (see bucket_cost()); +inf without visits. */
static double entry_cost(const struct entry *e, bool latency)
{
	if (!(e->visits > 0))
		return INFINITY;
	return (latency ? e->difference_dur : e->duration) / e->visits;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Move the far-out experiments of one bucket, entries[0..n), to its end and
 * return how many are kept. Only where the fences mean something: at least
 * TRIM_MIN_EXPERIMENTS experiments and a median of TRIM_MIN_VISITS visits
 * or more (with fewer, the cost per experiment is too coarse), and a
 * nonzero spread. An experiment without visits in such a bucket counts as
 * infinitely slow, so it is always beyond the upper fence.
 *
 * Visits are counts: an experiment of fixed length catches one visit more or
 * less depending on where its ends fall between two visits, so its cost
 * d / v is only resolved to about d / v^2, the cost of one visit at its
 * count. Most experiments of a bucket can catch the same count and their
 * quartiles then lie a fraction of that apart: the fences set aside every
 * experiment one visit off the usual count, none of them disturbed
 * (bench/causal's library at 0%: 7 of 24, 8 visits each and 7 or 9 for the
 * ones set aside, which moved the whole curve 3 points down). So the spread
 * the fences use is at least one visit's worth at the median: median cost /
 * median visits.
 */
#define TRIM_MIN_EXPERIMENTS 8
#define TRIM_MIN_VISITS	     5
#define TRIM_FENCE_IQR	     3.0

static size_t trim_bucket(struct entry *entries, size_t n, bool latency)
{
	double *cost, *visits, v_med, q1, q3, iqr, lo, hi;
	size_t kept = 0;

	if (n < TRIM_MIN_EXPERIMENTS)
		return n;
	cost = malloc(n * sizeof(*cost));
	visits = malloc(n * sizeof(*visits));
	if (!cost || !visits)
		goto keep_all;
	for (size_t k = 0; k < n; k++) {
		cost[k] = entry_cost(&entries[k], latency);
		visits[k] = entries[k].visits;
	}
	qsort(visits, n, sizeof(*visits), compare_doubles);
	v_med = stats_quantile_sorted(visits, n, 0.5);
	if (v_med < TRIM_MIN_VISITS)
		goto keep_all;
	qsort(cost, n, sizeof(*cost), compare_doubles);
	q1 = stats_quantile_sorted(cost, n, 0.25);
	q3 = stats_quantile_sorted(cost, n, 0.75);
	if (!isfinite(q3))
		goto keep_all;
	iqr = fmax(q3 - q1, stats_quantile_sorted(cost, n, 0.5) / v_med);
	if (!(iqr > 0))
		goto keep_all;
	lo = q1 - TRIM_FENCE_IQR * iqr;
	hi = q3 + TRIM_FENCE_IQR * iqr;
	for (size_t k = 0; k < n; k++) {
		double c = entry_cost(&entries[k], latency);

		if (c >= lo && c <= hi) {
			struct entry t = entries[kept];

			entries[kept++] = entries[k];
			entries[k] = t;
		}
	}
	free(cost);
	free(visits);
	return kept;
keep_all:
	free(cost);
	free(visits);
	return n;
}

/*
 * Fold entries[0..n) (one series, sorted by pct) into buckets with enough
 * visits, setting far-out experiments aside when trim is on (they stay in
 * the array behind the bucket's kept ones); base is the index of entries[0]
 * in the whole entry array.
 */
static size_t fold_buckets(struct entry *entries, size_t n, size_t base, double min_visits,
			   bool trim, bool latency, struct causal_bucket *out, size_t *dropped,
			   size_t *trimmed)
{
	size_t nb = 0;

	for (size_t i = 0; i < n;) {
		struct causal_bucket b = {.speedup_pct = entries[i].pct, .first_entry = base + i};
		size_t end = i, kept;

		while (end < n && entries[end].pct == b.speedup_pct)
			end++;
		kept = trim ? trim_bucket(entries + i, end - i, latency) : end - i;
		b.trimmed = (unsigned)(end - i - kept);
		*trimmed += b.trimmed;
		for (size_t k = i; k < i + kept; k++)
			bucket_add(&b, &entries[k]);
		i = end;
		if (b.visits < min_visits || !(b.visits > 0) || !(b.duration > 0)) {
			(*dropped)++;
			continue;
		}
		out[nb++] = b;
	}
	return nb;
}

/* The quantity whose relative change is the program speedup. */
static double bucket_cost(const struct causal_bucket *b, bool latency)
{
	if (latency)
		return b->difference_dur / b->visits; /* Little's law: L / lambda */
	return b->duration / b->visits;		      /* period between visits */
}

/* What the phase correction needs: s per line is looked up per series. */
struct phase {
	bool on;
	double line_samples; /* s */
	double runtime;	     /* T, ns */
};

/*
 * The phase correction factor (t_obs / s_obs) * (s / T), capped at 1 (t_A
 * cannot exceed T); NaN if the bucket has no samples of the line. It is taken
 * from the line's 0% bucket and applied to all its points: t_A/T, the share
 * of the run in which the line runs, does not depend on the virtual speedup,
 * and only at 0% is the effective duration t_obs the real time in which the
 * s_obs samples were taken. At a speedup x the inserted delays shrink the
 * effective duration by up to a factor 1 - x while the samples stay, so a
 * per-bucket factor would pull every curve down towards 0 at 100% (a line
 * that always runs would get the factor 1 - x instead of 1).
 */
static double phase_factor(const struct causal_bucket *b, const struct phase *ph)
{
	double f;

	if (!(b->selected_samples > 0))
		return NAN;
	f = b->duration / b->selected_samples * ph->line_samples / ph->runtime;
	return f > 1.0 ? 1.0 : f;
}

/* A bucket's program speedup against the baseline cost, before any correction. */
static double bucket_speedup(const struct causal_bucket *b, double base, bool latency)
{
	return 1.0 - bucket_cost(b, latency) / base;
}

/* Program speedups beyond these count as these in the slope (Coz's viewer plots only this range).
 */
#define SLOPE_MIN_Y -1.0
#define SLOPE_MAX_Y 2.0

static double clamp_y(double y)
{
	return y < SLOPE_MIN_Y ? SLOPE_MIN_Y : y > SLOPE_MAX_Y ? SLOPE_MAX_Y : y;
}

/*
 * Least-squares slope of program speedup y[i] on line speedup x[i] (both
 * fractions), with program speedups clamped to [-100%, +200%]: one glitched
 * bucket (a few visits that fell in an unusual moment, -7000% say) then
 * cannot decide a line's rank, while a line that really slows the program
 * (contention) still slopes steeply down. NaN if any y is not finite.
 */
static double fit_slope(const double *x, const double *y, size_t n, double *intercept)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, denom, b;

	for (size_t i = 0; i < n; i++) {
		double yc;

		if (!isfinite(y[i]))
			return NAN;
		yc = clamp_y(y[i]);
		sx += x[i];
		sy += yc;
		sxx += x[i] * x[i];
		sxy += x[i] * yc;
	}
	denom = (double)n * sxx - sx * sx;
	b = n < 2 || fabs(denom) < 1e-12 ? 0 : ((double)n * sxy - sx * sy) / denom;
	if (intercept)
		*intercept = n ? (sy - b * sx) / (double)n : 0;
	return b;
}

/*
 * Coz's viewer's impact: walking the piecewise-linear curve from 0%, the
 * largest mean program speedup over [0, x] (area under the curve divided by
 * x). Unlike the viewer's, it can be negative, so that lines that only hurt
 * rank last.
 */
static double curve_impact(const struct causal_bucket *b, size_t n)
{
	double area = 0, best = -INFINITY;

	for (size_t i = 1; i < n; i++) {
		double x0 = b[i - 1].speedup_pct / 100.0, x1 = b[i].speedup_pct / 100.0;

		area += (b[i - 1].program_speedup + b[i].program_speedup) / 2 * (x1 - x0);
		if (x1 > 0 && area / x1 > best)
			best = area / x1;
	}
	return isfinite(best) ? best : 0;
}

/* Slope of the series' buckets' program speedups. */
static double series_slope(struct causal_series *s, double *xs, double *ys)
{
	for (size_t i = 0; i < s->n_buckets; i++) {
		xs[i] = s->buckets[i].speedup_pct / 100.0;
		ys[i] = s->buckets[i].program_speedup;
	}
	return fit_slope(xs, ys, s->n_buckets, &s->intercept);
}

/* Turn folded buckets into a series; false if the line has no usable baseline. */
static bool finish_series(struct causal_series *s, bool latency, const struct phase *ph,
			  size_t *dropped)
{
	double base, factor;
	size_t kept = 0;
	double *xs, *ys;

	if (s->n_buckets == 0 || s->buckets[0].speedup_pct != 0)
		return false;
	base = bucket_cost(&s->buckets[0], latency);
	if (!(base > 0) || !isfinite(base))
		return false;
	s->experiments = 0;
	s->max_speedup = -INFINITY;
	factor = ph->on ? phase_factor(&s->buckets[0], ph) : 1.0;
	s->phase_corrected = ph->on && isfinite(factor);
	if (!s->phase_corrected)
		factor = 1.0;
	for (size_t i = 0; i < s->n_buckets; i++) {
		struct causal_bucket *b = &s->buckets[i];
		double y = 0;

		b->phase_factor = factor;
		if (i > 0) {
			b->raw_speedup = bucket_speedup(b, base, latency);
			y = b->raw_speedup * factor;
			if (!isfinite(y)) {
				(*dropped)++;
				continue;
			}
		}
		b->program_speedup = y;
		b->ci_low = b->ci_high = y; /* until the bootstrap says otherwise */
		s->buckets[kept++] = *b;
		s->experiments += b->experiments;
		if (b->program_speedup > s->max_speedup)
			s->max_speedup = b->program_speedup;
	}
	s->n_buckets = kept;
	s->impact = curve_impact(s->buckets, kept);
	xs = malloc((kept + 1) * sizeof(*xs));
	ys = malloc((kept + 1) * sizeof(*ys));
	s->slope = xs && ys ? series_slope(s, xs, ys) : NAN;
	s->slope_low = s->slope_high = s->slope;
	free(xs);
	free(ys);
	return true;
}

/* ------------------------------------------------------------ bootstrap */

struct bootstrap {
	const struct entry *entries;
	unsigned resamples;
	double level;
	uint64_t seed;
};

/* A bucket's sums over experiments drawn with replacement from its own. */
static void resample_bucket(const struct causal_bucket *b, const struct entry *entries,
			    struct rng *r, struct causal_bucket *out)
{
	*out = (struct causal_bucket){.speedup_pct = b->speedup_pct};
	for (unsigned k = 0; k < b->experiments; k++)
		bucket_add(out, &entries[b->first_entry + rng_below(r, b->experiments)]);
}

/* FNV-1a, to give each series a seed of its own (its interval then does not
 * depend on which other lines the profile has). */
static uint64_t mix_string(uint64_t h, const char *s)
{
	return fnv1a(fnv1a(h, s, strlen(s)), "\xff", 1); /* 0xff ends the string */
}

/* Percentile interval of the finite values in v[0..n) (sorted in place). */
static void percentile_interval(double *v, size_t n, double level, double *lo, double *hi)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (isfinite(v[i]))
			v[m++] = v[i];
	}
	if (m < 2 || m < n / 2) { /* mostly unusable resamples: no interval */
		*lo = *hi = NAN;
		return;
	}
	qsort(v, m, sizeof(*v), compare_doubles);
	*lo = stats_quantile_sorted(v, m, (1 - level) / 2);
	*hi = stats_quantile_sorted(v, m, 1 - (1 - level) / 2);
}

/*
 * The program speedup of bucket i of s from resampled sums. The phase
 * correction factor stays the one of the point estimate: a resample of a
 * bucket with few samples of the line can have none, which would leave the
 * factor undefined; the interval is about the progress rates.
 */
static double resampled_speedup(const struct causal_series *s, size_t i,
				const struct causal_bucket *rb, double base, bool latency)
{
	double y = bucket_speedup(rb, base, latency);

	return isfinite(y) ? y * s->buckets[i].phase_factor : NAN;
}

/*
 * Point intervals: each resample redraws the experiments of every bucket
 * (the 0% one too, so the baseline's noise counts) and recomputes the points
 * against the resampled baseline. reps is n_buckets x B, scratch B.
 */
static void bootstrap_points(struct causal_series *s, bool latency, const struct bootstrap *bs,
			     struct rng *r, double *reps, double *scratch)
{
	size_t nb = s->n_buckets, B = bs->resamples;
	struct causal_bucket rb;

	for (size_t k = 0; k < B; k++) {
		double base;

		resample_bucket(&s->buckets[0], bs->entries, r, &rb);
		base = bucket_cost(&rb, latency);
		for (size_t i = 1; i < nb; i++) {
			resample_bucket(&s->buckets[i], bs->entries, r, &rb);
			reps[i * B + k] =
			    base > 0 ? resampled_speedup(s, i, &rb, base, latency) : NAN;
		}
	}
	/* on a copy: the fit refits each resample k across the buckets, in order */
	for (size_t i = 1; i < nb; i++) {
		memcpy(scratch, reps + i * B, B * sizeof(*scratch));
		percentile_interval(scratch, B, bs->level, &s->buckets[i].ci_low,
				    &s->buckets[i].ci_high);
	}
}

/*
 * Slope interval: a pairs bootstrap over the experiments at nonzero
 * speedups (drawn from all of them, so a speedup measured once can be drawn
 * twice or not at all: the scatter between speedups counts, not only within
 * them), with the 0% bucket resampled on its own. pool lists every such
 * experiment as bucket index and entry index; tmp has n_buckets buckets.
 */
static void bootstrap_slope(struct causal_series *s, bool latency, const struct bootstrap *bs,
			    struct rng *r, size_t (*pool)[2], size_t n_pool,
			    struct causal_bucket *tmp, double *xs, double *ys, double *slopes)
{
	size_t nb = s->n_buckets, B = bs->resamples;

	for (size_t k = 0; k < B; k++) {
		double base;
		size_t m = 1;

		resample_bucket(&s->buckets[0], bs->entries, r, &tmp[0]);
		base = bucket_cost(&tmp[0], latency);
		for (size_t i = 1; i < nb; i++)
			tmp[i] = (struct causal_bucket){.speedup_pct = s->buckets[i].speedup_pct};
		for (size_t j = 0; j < n_pool; j++) {
			size_t *e = pool[rng_below(r, n_pool)];

			bucket_add(&tmp[e[0]], &bs->entries[e[1]]);
		}
		xs[0] = ys[0] = 0;
		for (size_t i = 1; i < nb; i++) {
			if (!tmp[i].experiments)
				continue;
			xs[m] = tmp[i].speedup_pct / 100.0;
			ys[m++] = base > 0 ? resampled_speedup(s, i, &tmp[i], base, latency) : NAN;
		}
		slopes[k] = m >= 3 ? fit_slope(xs, ys, m, NULL) : NAN;
	}
	percentile_interval(slopes, B, bs->level, &s->slope_low, &s->slope_high);
	s->contention = s->slope_high < 0;
}

/* Bootstrap intervals for every point and the slope of s; -1 when out of memory. */
static int bootstrap_series(const struct causal_profile *p, struct causal_series *s, bool latency,
			    const struct bootstrap *bs)
{
	size_t nb = s->n_buckets, B = bs->resamples, n_pool = 0;
	double *reps = malloc(nb * B * sizeof(*reps));
	double *slopes = malloc(B * sizeof(*slopes));
	double *xs = malloc(nb * sizeof(*xs)), *ys = malloc(nb * sizeof(*ys));
	struct causal_bucket *tmp = malloc(nb * sizeof(*tmp));
	size_t(*pool)[2] = malloc((s->experiments + 1) * sizeof(*pool));
	struct rng r;
	uint64_t h = FNV1A_INIT ^ bs->seed;
	int ret = -1;

	if (!reps || !slopes || !xs || !ys || !tmp || !pool)
		goto out;
	for (size_t i = 1; i < nb; i++) {
		for (unsigned k = 0; k < s->buckets[i].experiments; k++) {
			pool[n_pool][0] = i;
			pool[n_pool++][1] = s->buckets[i].first_entry + k;
		}
	}
	h = mix_string(h, causal_profile_string(p, s->selected));
	h = mix_string(h, causal_profile_string(p, p->points[s->point].name));
	rng_seed(&r, h);
	bootstrap_points(s, latency, bs, &r, reps, slopes);
	if (causal_fit_series(s, reps, B, bs->level))
		goto out;
	bootstrap_slope(s, latency, bs, &r, pool, n_pool, tmp, xs, ys, slopes);
	ret = 0;
out:
	free(reps);
	free(slopes);
	free(xs);
	free(ys);
	free(tmp);
	free(pool);
	return ret;
}

/* ------------------------------------------------------------ ranking */

struct sort_context {
	const struct causal_profile *p;
	enum causal_sort sort;
};

static int compare_by_name(const struct causal_profile *p, const struct causal_series *x,
			   const struct causal_series *y)
{
	int c;

	if (x->selected != y->selected) {
		c = strcmp(causal_profile_string(p, x->selected),
			   causal_profile_string(p, y->selected));
		if (c)
			return c;
	}
	if (x->point == y->point)
		return 0;
	c = strcmp(causal_profile_string(p, p->points[x->point].name),
		   causal_profile_string(p, p->points[y->point].name));
	if (c)
		return c;
	return x->point < y->point ? -1 : 1;
}

/* Descending by key; NaN last. */
static int compare_desc(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a < b) - (a > b);
}

static int compare_series(const void *a, const void *b, void *arg)
{
	const struct sort_context *ctx = arg;
	const struct causal_series *x = a, *y = b;
	int c = 0;

	/* a line whose curve rests on too little is no lead: firm lines first */
	if (ctx->sort != CAUSAL_SORT_NAME)
		c = (x->thin != 0) - (y->thin != 0);
	if (c)
		return c;
	if (ctx->sort == CAUSAL_SORT_SLOPE)
		c = compare_desc(x->slope, y->slope);
	else if (ctx->sort == CAUSAL_SORT_IMPACT)
		c = compare_desc(x->impact, y->impact);
	return c ? c : compare_by_name(ctx->p, x, y);
}

void causal_summary_sort(const struct causal_profile *p, struct causal_summary *s,
			 enum causal_sort sort)
{
	struct sort_context ctx = {p, sort};

	s->sort = sort;
	if (s->n_series > 1)
		qsort_r(s->series, s->n_series, sizeof(*s->series), compare_series, &ctx);
}

/* ------------------------------------------------------------ the unmodified runtime */

/*
 * The phase correction's T must be the run's length in the unmodified
 * program, the clock in which the line's samples s accumulate (a line's own
 * virtual speedup does not change how long it runs: it is sampled as often).
 * A run's effective runtime (runtime - delay) is instead the time of the
 * virtually sped-up program: every experiment at a nonzero speedup shortened
 * it. In Coz's random mode half the experiments are at 5..100%, so T came out
 * ~25% short and every factor ~1/0.75 too large (issue 18: a serial phase of
 * half the run got 0.72, not 0.5). Nor is the real (wall) runtime right: it
 * holds the pauses the threads took, which lengthen a parallel phase.
 *
 * So each nonzero experiment's effective duration is replaced by its
 * unmodified estimate, its visits times the cost per visit of the same
 * line's 0% experiments (measured in the same phase of the program, since the
 * line runs there): T = runtime - delay + sum (visits x p_0 - duration).
 * Per progress point; throughput points only (latency experiments keep their
 * effective duration).
 */
struct baseline {
	uint32_t selected, point;
	double cost; /* duration / visits of the 0% experiments */
};

static int compare_baselines(const void *a, const void *b)
{
	const struct baseline *x = a, *y = b;

	if (x->selected != y->selected)
		return x->selected < y->selected ? -1 : 1;
	return (x->point > y->point) - (x->point < y->point);
}

/* The 0% cost per visit of every (line, point) with one; entries sorted by series. */
static struct baseline *collect_baselines(const struct entry *entries, size_t n, size_t *n_out)
{
	struct baseline *b = malloc((n ? n : 1) * sizeof(*b));
	size_t nb = 0;

	if (!b)
		return NULL;
	for (size_t i = 0; i < n;) {
		double dur = 0, visits = 0;
		size_t j = i;

		while (j < n && same_series(&entries[i], &entries[j])) {
			if (entries[j].pct == 0) {
				dur += entries[j].duration;
				visits += entries[j].visits;
			}
			j++;
		}
		if (visits > 0 && dur > 0)
			b[nb++] =
			    (struct baseline){entries[i].selected, entries[i].point, dur / visits};
		i = j;
	}
	*n_out = nb;
	return b;
}

/*
 * extra[point * n_runs + run]: what the run's nonzero experiments took off
 * its effective runtime, measured at that point (see above). NULL when out
 * of memory (the caller falls back to the effective runtime).
 */
static double *unmodified_extra(const struct causal_profile *p, const struct entry *entries,
				size_t n)
{
	size_t nb, cells = p->n_points * p->n_runs;
	struct baseline *base = collect_baselines(entries, n, &nb);
	double *extra = calloc(cells ? cells : 1, sizeof(*extra));

	if (!base || !extra) {
		free(base);
		free(extra);
		return NULL;
	}
	for (size_t i = 0; i < p->n_experiments; i++) {
		const struct causal_experiment *e = &p->experiments[i];

		if (e->speedup_pct == 0)
			continue;
		for (size_t k = 0; k < e->n_deltas; k++) {
			const struct causal_delta *d = &p->deltas[e->first_delta + k];
			struct baseline key = {e->selected, d->point, 0}, *b;

			if (p->points[d->point].kind != CAUSAL_POINT_THROUGHPUT || d->delta <= 0)
				continue;
			b = bsearch(&key, base, nb, sizeof(*base), compare_baselines);
			if (b)
				extra[d->point * p->n_runs + e->run] +=
				    (double)d->delta * b->cost - (double)e->duration;
		}
	}
	free(base);
	return extra;
}

/*
 * T for a line at a point: the unmodified runtimes of the runs in which the
 * line has samples or was selected, each at most the run's real runtime
 * (pauses only lengthen a run) and at least 0.
 */
static int64_t line_unmodified_runtime(const struct causal_profile *p, uint32_t location,
				       uint32_t point, const double *extra)
{
	bool *in = calloc(p->n_runs ? p->n_runs : 1, sizeof(*in));
	double sum = 0;

	if (!in || !extra) {
		free(in);
		return causal_profile_line_runtime(p, location);
	}
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].location == location)
			in[p->samples[i].run] = true;
	for (size_t i = 0; i < p->n_experiments; i++)
		if (p->experiments[i].selected == location)
			in[p->experiments[i].run] = true;
	for (size_t r = 0; r < p->n_runs; r++) {
		const struct causal_run *run = &p->runs[r];
		double t;

		if (!in[r] || !run->has_runtime)
			continue;
		t = (double)causal_run_effective_runtime(run) + extra[point * p->n_runs + r];
		t = t > (double)run->runtime_ns ? (double)run->runtime_ns : t;
		sum += t > 0 ? t : 0;
	}
	free(in);
	return sum < (double)INT64_MAX ? (int64_t)sum : INT64_MAX;
}

/* ------------------------------------------------------------ the summary */

static int add_series(struct causal_summary *out, size_t *cap, const struct causal_series *s)
{
	if (out->n_series == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct causal_series *a = realloc(out->series, c * sizeof(*a));

		if (!a)
			return -1;
		out->series = a;
		*cap = c;
	}
	out->series[out->n_series++] = *s;
	return 0;
}

static void apply_defaults(const struct causal_summary_options *opt,
			   struct causal_summary_options *o)
{
	*o = opt ? *opt : (struct causal_summary_options){0};
	if (!o->min_speedups)
		o->min_speedups = CAUSAL_DEFAULT_MIN_SPEEDUPS;
	if (!(o->min_visits > 0))
		o->min_visits = CAUSAL_DEFAULT_MIN_VISITS;
	if (!o->resamples)
		o->resamples = CAUSAL_DEFAULT_RESAMPLES;
	if (!(o->level > 0 && o->level < 1))
		o->level = CAUSAL_DEFAULT_LEVEL;
}

/*
 * One (line, point) series from its entries [i, j): false (and nothing
 * added) if it is dropped; -1 when out of memory.
 */
static int build_series(const struct causal_profile *p, const struct causal_summary_options *o,
			const struct bootstrap *bs, struct entry *entries, size_t i, size_t j,
			const double *extra, struct causal_summary *out, size_t *cap)
{
	struct causal_series s = {.selected = entries[i].selected, .point = entries[i].point};
	bool latency = p->points[s.point].kind == CAUSAL_POINT_LATENCY;
	size_t trimmed = 0;
	struct phase ph;

	s.line_samples = causal_profile_line_samples(p, s.selected);
	s.line_runtime_ns = line_unmodified_runtime(p, s.selected, s.point, extra);
	ph.line_samples = (double)s.line_samples;
	ph.runtime = (double)s.line_runtime_ns;
	ph.on = out->phase_correction && s.line_samples > 0 && s.line_runtime_ns > 0;
	s.buckets = malloc((j - i) * sizeof(*s.buckets));
	if (!s.buckets)
		return -1;
	s.n_buckets = fold_buckets(entries + i, j - i, i, o->min_visits, !o->no_trim, latency,
				   s.buckets, &out->dropped_buckets, &trimmed);
	if (!finish_series(&s, latency, &ph, &out->dropped_buckets)) {
		out->dropped_no_baseline++;
		free(s.buckets);
		return 0;
	}
	if (s.n_buckets < o->min_speedups) {
		out->dropped_few_speedups++;
		free(s.buckets);
		return 0;
	}
	if (bootstrap_series(p, &s, latency, bs) || add_series(out, cap, &s)) {
		free(s.buckets);
		return -1;
	}
	out->trimmed_experiments += trimmed;
	return 0;
}

int causal_summarize(const struct causal_profile *p, const struct causal_summary_options *opt,
		     struct causal_summary *out)
{
	struct causal_summary_options o;
	struct bootstrap bs;
	struct entry *entries;
	double *extra;
	size_t n, cap = 0;

	if (opt && opt->method == CAUSAL_METHOD_COZ_VIEWER)
		return causal_summarize_coz_viewer(p, opt, out);
	apply_defaults(opt, &o);
	memset(out, 0, sizeof(*out));
	out->phase_correction = !o.no_phase_correction;
	out->trim = !o.no_trim;
	out->runtime_ns = causal_profile_total_runtime(p);
	out->sort = o.sort;
	out->resamples = o.resamples;
	out->level = o.level;
	out->seed = o.seed;
	entries = collect_entries(p, &n);
	if (!entries)
		return -1;
	bs = (struct bootstrap){entries, o.resamples, o.level, o.seed};
	/* before the series' trimming reorders the entries within their buckets */
	extra = unmodified_extra(p, entries, n);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && same_series(&entries[i], &entries[j]))
			j++;
		if (build_series(p, &o, &bs, entries, i, j, extra, out, &cap)) {
			free(entries);
			free(extra);
			causal_summary_free(out);
			return -1;
		}
		i = j;
	}
	free(entries);
	free(extra);
	causal_summary_sort(p, out, o.sort);
	return 0;
}

void causal_summary_free(struct causal_summary *s)
{
	for (size_t i = 0; i < s->n_series; i++)
		free(s->series[i].buckets);
	free(s->series);
	memset(s, 0, sizeof(*s));
}

const char *causal_sort_name(enum causal_sort sort)
{
	return sort == CAUSAL_SORT_SLOPE ? "slope" : sort == CAUSAL_SORT_NAME ? "name" : "impact";
}

const char *causal_point_kind_name(enum causal_point_kind kind)
{
	return kind == CAUSAL_POINT_LATENCY ? "latency" : "throughput";
}

const char *causal_profile_sampler(const struct causal_profile *p, uint64_t *period_ns)
{
	const struct causal_run *first = NULL;

	for (size_t i = 0; i < p->n_runs; i++) {
		const struct causal_run *r = &p->runs[i];

		if (!r->has_lever_header)
			return NULL;
		if (!first)
			first = r;
		else if (strcmp(r->sampler, first->sampler) || r->period_ns != first->period_ns)
			return NULL;
	}
	if (!first || !first->sampler[0])
		return NULL;
	if (period_ns)
		*period_ns = first->period_ns;
	return first->sampler;
}
