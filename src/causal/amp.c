/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Load amplification (AMP, dissertation ch. 6): the scalability curve of
 * runs at several arrival speedups, and per-load views of a profile for
 * causal profiles at an amplified load. See causal.h for the definitions.
 *
 * The unit of repetition is the run (one arrival speedup per run): each
 * run's experiments at a level are pooled into one value per point (total
 * visits over total effective duration, as Coz pools experiments), so that
 * the intervals describe run-to-run variation.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"
#include "stats/stats.h"

#define AMP_LEVEL	    CAUSAL_AMP_LEVEL
#define AMP_RESAMPLES	    2000
#define AMP_SEED	    0x616d70 /* fixed: the report is reproducible */
#define UNSTABLE_MARGIN	    1.05     /* arrivals beyond departures by 5% */
#define UNSTABLE_MIN_EXCESS 5.0

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct arrival speedups, ascending, into a->levels. */
static int collect_levels(const struct causal_profile *p, struct causal_amp *a)
{
	uint64_t *all = malloc((p->n_experiments ? p->n_experiments : 1) * sizeof(*all));
	size_t n = 0;

	if (!all)
		return -1;
	for (size_t i = 0; i < p->n_experiments; i++) {
		if (p->experiments[i].has_arrival_speedup)
			all[n++] = p->experiments[i].arrival_speedup_ns;
		else
			a->ignored_experiments++;
	}
	qsort(all, n, sizeof(*all), compare_u64);
	a->levels = calloc(n ? n : 1, sizeof(*a->levels));
	if (!a->levels) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!a->n_levels || a->levels[a->n_levels - 1].arrival_speedup_ns != all[i])
			a->levels[a->n_levels++].arrival_speedup_ns = all[i];
	free(all);
	a->baseline = a->n_levels && a->levels[0].arrival_speedup_ns == 0 ? 0 : -1;
	return 0;
}

/* One run's sums at one level, per point. */
struct run_sums {
	double duration;
	double visits[2]; /* throughput: deltas; latency: begin, end */
	double diff_dur;  /* latency: sum of difference x duration */
	bool seen;
};

/* Per-run values of each point at level k: value[point][run], n[point]. */
struct level_values {
	double **value;
	size_t *n;
};

static double run_value(const struct causal_profile *p, uint32_t point, const struct run_sums *s)
{
	if (p->points[point].kind == CAUSAL_POINT_LATENCY)
		/* W = L / lambda = (sum diff*dur / sum dur) / (begin / sum dur) */
		return s->visits[0] > 0 ? s->diff_dur / s->visits[0] : NAN;
	return s->duration > 0 && s->visits[0] > 0 ? s->visits[0] * 1e9 / s->duration : NAN;
}

static void add_experiment(const struct causal_profile *p, const struct causal_experiment *e,
			   struct run_sums *sums, struct causal_amp_level *lv)
{
	lv->experiments++;
	lv->duration_ns += (double)e->duration;
	lv->arrivals += (double)e->arrivals;
	lv->thread_time_ns += (double)e->arrival_threads * (double)e->duration;
	for (size_t j = 0; j < e->n_deltas; j++) {
		const struct causal_delta *d = &p->deltas[e->first_delta + j];
		struct run_sums *s = &sums[d->point];
		struct causal_amp_point *pt = &lv->points[d->point];

		s->seen = true;
		s->duration += (double)e->duration;
		if (p->points[d->point].kind == CAUSAL_POINT_LATENCY) {
			s->visits[0] += (double)d->arrivals;
			s->visits[1] += (double)d->departures;
			s->diff_dur += d->has_in_flight
					   ? (double)d->in_flight_ns
					   : (double)d->difference * (double)e->duration;
			pt->visits += (double)d->arrivals;
			pt->departures += (double)d->departures;
		} else {
			s->visits[0] += (double)d->delta;
			pt->visits += (double)d->delta;
			if (e->arrivals > 0)
				pt->visits_arriving += (double)d->delta;
		}
	}
}

/* Sums level k run by run into per-run values. */
static int fill_level(const struct causal_profile *p, struct causal_amp *a, size_t k,
		      struct level_values *v)
{
	struct causal_amp_level *lv = &a->levels[k];
	struct run_sums *sums = calloc(a->n_points ? a->n_points : 1, sizeof(*sums));

	if (!sums)
		return -1;
	for (size_t r = 0; r < p->n_runs; r++) {
		const struct causal_run *run = &p->runs[r];
		bool any = false;

		memset(sums, 0, (a->n_points ? a->n_points : 1) * sizeof(*sums));
		/* runs that appended to one file at once interleave: pick this run's */
		for (size_t i = 0; i < p->n_experiments && run->n_experiments; i++) {
			const struct causal_experiment *e = &p->experiments[i];

			if (e->run != r || !e->has_arrival_speedup ||
			    e->arrival_speedup_ns != lv->arrival_speedup_ns)
				continue;
			add_experiment(p, e, sums, lv);
			any = true;
		}
		if (!any)
			continue;
		lv->runs++;
		for (size_t j = 0; j < a->n_points; j++) {
			double x = sums[j].seen ? run_value(p, (uint32_t)j, &sums[j]) : NAN;

			if (!isnan(x))
				v->value[j][v->n[j]++] = x;
		}
	}
	free(sums);
	return 0;
}

static void summarize_point(struct causal_amp_point *pt, const double *x, size_t n)
{
	struct stats_interval ci;

	pt->runs = (unsigned)n;
	if (!n)
		return;
	pt->value = stats_mean(x, n);
	pt->low = pt->high = pt->value;
	if (n >= 2 && stats_t_interval_mean(x, n, AMP_LEVEL, &ci) == 0) {
		pt->low = ci.low;
		pt->high = ci.high;
	}
}

/* Relative performance of level values x against baseline values b. */
static void relate_point(struct causal_amp_point *pt, bool latency, const double *x, size_t n,
			 const double *b, size_t nb)
{
	struct stats_interval ci;
	const double *num = latency ? b : x, *den = latency ? x : b;
	size_t nn = latency ? nb : n, nd = latency ? n : nb;
	double mn, md;

	if (!n || !nb)
		return;
	mn = stats_mean(num, nn);
	md = stats_mean(den, nd);
	if (!(md > 0) || !(mn > 0))
		return;
	pt->has_relative = true;
	pt->relative = mn / md;
	pt->rel_low = pt->rel_high = pt->relative;
	if (nn >= 2 && nd >= 2 &&
	    stats_bootstrap_ratio_of_means(num, nn, den, nd, AMP_LEVEL, AMP_RESAMPLES, AMP_SEED,
					   &ci) == 0) {
		pt->rel_low = ci.low;
		pt->rel_high = ci.high;
	}
}

/*
 * Arrivals outrun departures: for a latency pair, more begins than ends
 * (unstable: Little's law needs a stable system); for a throughput point,
 * more arrivals per visit than at the baseline load, where the system is
 * assumed to keep up (saturated: the throughput measured there is the
 * bottleneck's capacity, which is what saturation looks like, not a fault).
 */
static void mark_unstable(const struct causal_profile *p, struct causal_amp *a)
{
	const struct causal_amp_level *base = a->baseline >= 0 ? &a->levels[a->baseline] : NULL;

	for (size_t k = 0; k < a->n_levels; k++) {
		struct causal_amp_level *lv = &a->levels[k];

		for (size_t j = 0; j < a->n_points; j++) {
			struct causal_amp_point *pt = &lv->points[j];

			if (p->points[j].kind == CAUSAL_POINT_LATENCY) {
				pt->unstable = pt->visits > pt->departures * UNSTABLE_MARGIN &&
					       pt->visits - pt->departures >= UNSTABLE_MIN_EXCESS;
			} else if (base && base != lv && pt->visits_arriving > 0 &&
				   base->points[j].visits_arriving > 0 && base->arrivals > 0) {
				/* only while arrivals come: a run's drain says nothing */
				double ratio = lv->arrivals / pt->visits_arriving;
				double ratio0 = base->arrivals / base->points[j].visits_arriving;

				pt->saturated = ratio > ratio0 * UNSTABLE_MARGIN &&
						lv->arrivals - pt->visits_arriving * ratio0 >=
						    UNSTABLE_MIN_EXCESS;
			}
		}
	}
}

/* Inter-arrival periods, load, and the guard rails on them. */
static void compute_loads(struct causal_amp *a)
{
	for (size_t k = 0; k < a->n_levels; k++) {
		struct causal_amp_level *lv = &a->levels[k];

		lv->load = -1;
		/* time spent arriving per arrival: windows where nobody arrived do not count */
		if (lv->arrivals > 0 && lv->thread_time_ns > 0)
			lv->period_ns = lv->thread_time_ns / lv->arrivals;
		if (lv->arrival_speedup_ns && lv->arrivals == 0 && !a->no_arrivals_ns)
			a->no_arrivals_ns = lv->arrival_speedup_ns;
	}
	if (a->baseline >= 0)
		a->base_period_ns = a->levels[a->baseline].period_ns;
	for (size_t k = 0; k < a->n_levels; k++) {
		struct causal_amp_level *lv = &a->levels[k];
		double d = (double)lv->arrival_speedup_ns;
		/* without a baseline: this level's real period is its effective one + d */
		double p0 = a->base_period_ns > 0 ? a->base_period_ns
			    : lv->period_ns > 0	  ? lv->period_ns + d
						  : 0;

		if (p0 > 0)
			lv->load = d / p0;
		if (a->base_period_ns > 0 && d >= a->base_period_ns && !a->beyond_period_ns)
			a->beyond_period_ns = lv->arrival_speedup_ns;
	}
}

static void free_values(struct level_values *v, size_t n_points)
{
	if (v->value)
		for (size_t j = 0; j < n_points; j++)
			free(v->value[j]);
	free(v->value);
	free(v->n);
}

static int alloc_values(struct level_values *v, size_t n_points, size_t n_runs)
{
	v->value = calloc(n_points ? n_points : 1, sizeof(*v->value));
	v->n = calloc(n_points ? n_points : 1, sizeof(*v->n));
	if (!v->value || !v->n)
		return -1;
	for (size_t j = 0; j < n_points; j++)
		if (!(v->value[j] = calloc(n_runs ? n_runs : 1, sizeof(double))))
			return -1;
	return 0;
}

int causal_amp_analyze(const struct causal_profile *p, struct causal_amp *out)
{
	struct level_values *vals = NULL;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->baseline = -1;
	out->n_points = p->n_points;
	if (collect_levels(p, out))
		goto fail;
	if (!out->n_levels) {
		causal_amp_free(out);
		return 1;
	}
	vals = calloc(out->n_levels, sizeof(*vals));
	if (!vals)
		goto fail;
	for (size_t k = 0; k < out->n_levels; k++) {
		out->levels[k].points =
		    calloc(p->n_points ? p->n_points : 1, sizeof(struct causal_amp_point));
		if (!out->levels[k].points || alloc_values(&vals[k], p->n_points, p->n_runs) ||
		    fill_level(p, out, k, &vals[k]))
			goto fail;
		for (size_t j = 0; j < p->n_points; j++)
			summarize_point(&out->levels[k].points[j], vals[k].value[j], vals[k].n[j]);
	}
	if (out->baseline >= 0)
		for (size_t k = 0; k < out->n_levels; k++)
			for (size_t j = 0; j < p->n_points; j++)
				relate_point(&out->levels[k].points[j],
					     p->points[j].kind == CAUSAL_POINT_LATENCY,
					     vals[k].value[j], vals[k].n[j],
					     vals[out->baseline].value[j],
					     vals[out->baseline].n[j]);
	compute_loads(out);
	mark_unstable(p, out);
	ret = 0;
fail:
	if (vals)
		for (size_t k = 0; k < out->n_levels; k++)
			free_values(&vals[k], p->n_points);
	free(vals);
	if (ret)
		causal_amp_free(out);
	return ret;
}

void causal_amp_free(struct causal_amp *a)
{
	if (a->levels)
		for (size_t k = 0; k < a->n_levels; k++)
			free(a->levels[k].points);
	free(a->levels);
	a->levels = NULL;
	a->n_levels = 0;
}

int causal_amp_level_view(const struct causal_profile *p, uint64_t arrival_speedup_ns,
			  struct causal_profile *view)
{
	struct causal_experiment *e;
	size_t n = 0;

	*view = *p; /* shares runs, deltas, points and strings with p */
	e = malloc((p->n_experiments ? p->n_experiments : 1) * sizeof(*e));
	if (!e)
		return -1;
	for (size_t i = 0; i < p->n_experiments; i++)
		if (p->experiments[i].has_arrival_speedup &&
		    p->experiments[i].arrival_speedup_ns == arrival_speedup_ns)
			e[n++] = p->experiments[i];
	view->experiments = e;
	view->n_experiments = n;
	view->cap_experiments = n;
	return 0;
}

void causal_amp_view_free(struct causal_profile *view)
{
	free(view->experiments);
	view->experiments = NULL;
	view->n_experiments = 0;
}

void causal_amp_format_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns == 0)
		snprintf(buf, size, "0");
	else if (ns >= 1000000)
		snprintf(buf, size, "%.4g ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, size, "%.4g us", (double)ns / 1e3);
	else
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
}

static void format_value(char *buf, size_t size, bool latency, double v)
{
	if (latency)
		snprintf(buf, size, "%.4g ms", v / 1e6);
	else
		snprintf(buf, size, "%.4g/s", v);
}

/* "101.8/s [100.4, 103.1]": the unit once, so that a row fits 80 columns. */
static void format_cell(char *buf, size_t size, bool latency, const struct causal_amp_point *pt)
{
	double scale = latency ? 1e-6 : 1;
	char v[32];

	format_value(v, sizeof(v), latency, pt->value);
	snprintf(buf, size, "%s [%.4g, %.4g]", v, pt->low * scale, pt->high * scale);
}

static void print_point_table(FILE *out, const struct causal_profile *p, const struct causal_amp *a,
			      size_t j)
{
	bool latency = p->points[j].kind == CAUSAL_POINT_LATENCY;
	char d[32], load[16], rel[48], cell[112];

	fprintf(out, "\n  %s (%s)\n", causal_profile_string(p, p->points[j].name),
		latency ? "latency, Little's law; relative = W at 0 / W" : "throughput");
	fprintf(out, "    %-8s %6s %4s  %-26s %s\n", "arrival", "load", "runs",
		latency ? "latency [95% CI]" : "rate [95% CI]", "relative [95% CI]");
	for (size_t k = 0; k < a->n_levels; k++) {
		const struct causal_amp_level *lv = &a->levels[k];
		const struct causal_amp_point *pt = &lv->points[j];

		causal_amp_format_ns(d, sizeof(d), lv->arrival_speedup_ns);
		if (lv->load >= 0)
			snprintf(load, sizeof(load), "%.1f%%", lv->load * 100);
		else
			snprintf(load, sizeof(load), "?");
		if (!pt->runs) {
			fprintf(out, "    %-8s %6s %4u  (no visits)\n", d, load, 0U);
			continue;
		}
		format_cell(cell, sizeof(cell), latency, pt);
		if (pt->has_relative)
			snprintf(rel, sizeof(rel), "%.3fx [%.3f, %.3f]", pt->relative, pt->rel_low,
				 pt->rel_high);
		else
			snprintf(rel, sizeof(rel), "-");
		fprintf(out, "    %-8s %6s %4u  %-26s %s%s\n", d, load, pt->runs, cell, rel,
			pt->unstable	? " !"
			: pt->saturated ? " ^"
					: "");
	}
}

static bool any_unstable(const struct causal_amp *a, bool saturated)
{
	for (size_t k = 0; k < a->n_levels; k++)
		for (size_t j = 0; j < a->n_points; j++) {
			const struct causal_amp_point *pt = &a->levels[k].points[j];

			if (saturated ? pt->saturated : pt->unstable)
				return true;
		}
	return false;
}

void causal_amp_report_text(FILE *out, const struct causal_profile *p, const struct causal_amp *a)
{
	char period[32];

	fprintf(out, "Load amplification (AMP): %zu arrival speedup%s\n", a->n_levels,
		a->n_levels == 1 ? "" : "s");
	if (a->base_period_ns > 0) {
		causal_amp_format_ns(period, sizeof(period), (uint64_t)(a->base_period_ns + 0.5));
		fprintf(out,
			"  load = arrival speedup / inter-arrival period at 0\n"
			"         (%s per arriving thread); the arrival rate is 1/(1 - load)\n"
			"         times the test's\n",
			period);
	} else {
		fprintf(out,
			"  load = arrival speedup / (effective inter-arrival period + arrival\n"
			"         speedup) of each level (no baseline run at 0)\n");
	}
	if (a->baseline >= 0)
		fprintf(out, "  relative: performance against arrival speedup 0 (> 1 is better);\n"
			     "            bootstrap CIs need 2+ runs per level\n");
	for (size_t j = 0; j < a->n_points; j++)
		print_point_table(out, p, a, j);
	if (any_unstable(a, false))
		fprintf(out,
			"  ! unstable: arrivals outrun departures at that load (queues grow), so "
			"the\n    latency (Little's law) is not meaningful there\n");
	if (any_unstable(a, true))
		fprintf(out,
			"  ^ at capacity: arrivals outrun departures at that load; the rate is "
			"the\n    bottleneck's capacity (more load cannot raise it)\n");
	fputc('\n', out);
}

void causal_amp_warn(FILE *err, const struct causal_profile *p, const struct causal_amp *a)
{
	char d[32], period[32];

	if (a->no_arrivals_ns) {
		causal_amp_format_ns(d, sizeof(d), a->no_arrivals_ns);
		fprintf(
		    err,
		    "lever causal report: warning: no arrivals were counted at arrival speedup "
		    "%s: no arrival point (LEVER_ARRIVAL, COZ_ARRIVAL, LEVER_BEGIN) was visited, "
		    "so nothing was amplified\n",
		    d);
	}
	if (a->beyond_period_ns) {
		causal_amp_format_ns(d, sizeof(d), a->beyond_period_ns);
		causal_amp_format_ns(period, sizeof(period), (uint64_t)(a->base_period_ns + 0.5));
		fprintf(
		    err,
		    "lever causal report: warning: arrival speedup %s reaches the inter-arrival "
		    "period measured at 0 (%s): the load asked for is beyond what virtual "
		    "speedup can create\n",
		    d, period);
	}
	if (a->baseline < 0)
		fprintf(err, "lever causal report: warning: no run at arrival speedup 0: the "
			     "scalability curve has no baseline\n");
	for (size_t k = 0; k < a->n_levels; k++)
		for (size_t j = 0; j < a->n_points; j++) {
			if (!a->levels[k].points[j].unstable)
				continue;
			causal_amp_format_ns(d, sizeof(d), a->levels[k].arrival_speedup_ns);
			fprintf(
			    err,
			    "lever causal report: warning: at arrival speedup %s arrivals outrun "
			    "departures at %s: the system is unstable at that load (queues grow), "
			    "so its latency is not meaningful\n",
			    d, causal_profile_string(p, p->points[j].name));
		}
}
