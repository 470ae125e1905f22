/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Summarise a profile into per-line speedup curves (paper §2 "Producing a
 * causal profile"; spec coz.md §10):
 *
 *  - experiments with the same selected line and speedup are combined by
 *    adding durations and visits (rates are never averaged);
 *  - each (line, progress point) is compared with its own 0% bucket;
 *  - throughput: p = duration / visits, program speedup = 1 - p_s / p_0;
 *  - latency (Little's law): W = mean in-flight / arrival rate
 *    = (sum difference*duration / sum duration) / (sum arrivals / sum duration),
 *    improvement = (W_0 - W_s) / W_0;
 *  - buckets with fewer than min_visits visits (arrivals) are dropped, then
 *    lines without a 0% bucket or with fewer than min_speedups speedups;
 *  - lines are ranked by the least-squares slope of their curve (with
 *    program speedups clamped to [-100%, +200%] for the fit only).
 *
 * Phase correction (paper §3.4.3) is not applied here; the full report does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"

/* One point record, keyed for grouping. */
struct entry {
	uint32_t selected;
	uint32_t point;
	int pct;
	double duration;
	double visits;
	double departures;
	double difference_dur;
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
			    .difference_dur = (double)d->difference * (double)e->duration,
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

/* Fold entries[0..n) (one series, sorted by pct) into buckets with enough visits. */
static size_t fold_buckets(const struct entry *entries, size_t n, double min_visits,
			   struct causal_bucket *out, size_t *dropped)
{
	size_t nb = 0;

	for (size_t i = 0; i < n;) {
		struct causal_bucket b = {.speedup_pct = entries[i].pct};

		for (; i < n && entries[i].pct == b.speedup_pct; i++) {
			b.experiments++;
			b.duration += entries[i].duration;
			b.visits += entries[i].visits;
			b.departures += entries[i].departures;
			b.difference_dur += entries[i].difference_dur;
		}
		if (b.visits < min_visits || !(b.visits > 0) || !(b.duration > 0)) {
			(*dropped)++;
			continue;
		}
		out[nb++] = b;
	}
	return nb;
}

/* The quantity whose relative change is the program speedup; 0 if unusable. */
static double bucket_cost(const struct causal_bucket *b, bool latency)
{
	if (latency)
		return b->difference_dur / b->visits; /* Little's law: L / lambda */
	return b->duration / b->visits;		      /* period between visits */
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
 * Least-squares slope of program vs line speedup, with program speedups
 * clamped to [-100%, +200%]: one glitched bucket (a few visits that fell in an
 * unusual moment, -7000% say) then cannot decide a line's rank, while a line
 * that really slows the program (contention) still slopes steeply down. The
 * buckets themselves keep their values.
 */
static double fit_slope(const struct causal_bucket *b, size_t n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, denom;

	for (size_t i = 0; i < n; i++) {
		double x = b[i].speedup_pct / 100.0;
		double y = clamp_y(b[i].program_speedup);

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	denom = (double)n * sxx - sx * sx;
	if (n < 2 || fabs(denom) < 1e-12)
		return 0;
	return ((double)n * sxy - sx * sy) / denom;
}

/* Turn folded buckets into a series; false if the line has no usable baseline. */
static bool finish_series(struct causal_series *s, bool latency)
{
	double base;
	size_t kept = 0;

	if (s->n_buckets == 0 || s->buckets[0].speedup_pct != 0)
		return false;
	base = bucket_cost(&s->buckets[0], latency);
	if (!(base > 0) || !isfinite(base))
		return false;
	s->experiments = 0;
	s->max_speedup = -INFINITY;
	for (size_t i = 0; i < s->n_buckets; i++) {
		struct causal_bucket *b = &s->buckets[i];
		double y = 1.0 - bucket_cost(b, latency) / base;

		if (!isfinite(y))
			continue;
		b->program_speedup = i == 0 ? 0.0 : y;
		s->buckets[kept++] = *b;
		s->experiments += b->experiments;
		if (b->program_speedup > s->max_speedup)
			s->max_speedup = b->program_speedup;
	}
	s->n_buckets = kept;
	s->slope = fit_slope(s->buckets, kept);
	return true;
}

static int compare_series(const void *a, const void *b)
{
	const struct causal_series *x = a, *y = b;

	if (x->slope != y->slope)
		return x->slope > y->slope ? -1 : 1;
	if (x->selected != y->selected)
		return x->selected < y->selected ? -1 : 1;
	return (x->point > y->point) - (x->point < y->point);
}

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

int causal_summarize(const struct causal_profile *p, const struct causal_summary_options *opt,
		     struct causal_summary *out)
{
	unsigned min_speedups =
	    opt && opt->min_speedups ? opt->min_speedups : CAUSAL_DEFAULT_MIN_SPEEDUPS;
	double min_visits =
	    opt && opt->min_visits > 0 ? opt->min_visits : CAUSAL_DEFAULT_MIN_VISITS;
	struct entry *entries;
	size_t n, cap = 0;

	memset(out, 0, sizeof(*out));
	entries = collect_entries(p, &n);
	if (!entries)
		return -1;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct causal_series s = {.selected = entries[i].selected,
					  .point = entries[i].point};
		bool latency = p->points[s.point].kind == CAUSAL_POINT_LATENCY;

		while (j < n && same_series(&entries[i], &entries[j]))
			j++;
		s.buckets = malloc((j - i) * sizeof(*s.buckets));
		if (!s.buckets)
			goto oom;
		s.n_buckets =
		    fold_buckets(entries + i, j - i, min_visits, s.buckets, &out->dropped_buckets);
		i = j;
		if (!finish_series(&s, latency)) {
			free(s.buckets);
			out->dropped_no_baseline++;
			continue;
		}
		if (s.n_buckets < min_speedups) {
			out->dropped_few_speedups++;
			free(s.buckets);
			continue;
		}
		if (add_series(out, &cap, &s)) {
			free(s.buckets);
			goto oom;
		}
	}
	free(entries);
	if (out->n_series)
		qsort(out->series, out->n_series, sizeof(*out->series), compare_series);
	return 0;
oom:
	free(entries);
	causal_summary_free(out);
	return -1;
}

void causal_summary_free(struct causal_summary *s)
{
	for (size_t i = 0; i < s->n_series; i++)
		free(s->series[i].buckets);
	free(s->series);
	memset(s, 0, sizeof(*s));
}
