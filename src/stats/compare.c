/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The two-sample decision of lever compare, bench and stats (spec
 * stabilizer.md, statistics): describe each sample (summary, Shapiro-Wilk,
 * t interval of the mean, outliers), choose the test (Welch's t when both
 * sides are normal or large enough for the central limit theorem, else
 * Mann-Whitney U), run it, estimate the speedup mean(A)/mean(B) with a BCa
 * bootstrap interval, and state the verdict in plain words. No output
 * format lives here: callers print the struct as text, JSON or HTML.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats/stats.h"

char *stats_format_p(double p, char *buf, size_t size)
{
	if (isnan(p))
		snprintf(buf, size, "n/a");
	else if (p < 1e-4)
		snprintf(buf, size, "%.1e", p);
	else
		snprintf(buf, size, "%.3g", p);
	return buf;
}

int stats_describe_sample(struct stats_sample_description *d, const char *name, const double *x,
			  size_t n, double level)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->x = x;
	d->n = n;
	if (stats_summarize(x, n, &d->summary))
		return -EINVAL;
	d->normality_err = stats_shapiro_wilk(x, n, &d->normality);
	stats_t_interval_mean(x, n, level, &d->ci_mean);
	d->outliers = stats_outliers(x, n, 10.0, NULL);
	return 0;
}

char *stats_normality_text(const struct stats_sample_description *d, double alpha, char *buf,
			   size_t size)
{
	char p[32];

	if (d->normality_err == -EDOM)
		snprintf(buf, size, "constant sample: normality undefined");
	else if (d->normality_err && d->n < STATS_SW_MIN_N)
		snprintf(buf, size, "too few values to test normality (n < %d)", STATS_SW_MIN_N);
	else if (d->normality_err)
		snprintf(buf, size, "not tested (Shapiro-Wilk covers n <= %d)", STATS_SW_MAX_N);
	else
		snprintf(buf, size, "%s (Shapiro-Wilk W = %.4f, p = %s)",
			 d->normality.p < alpha ? "NOT normal" : "consistent with normal",
			 d->normality.statistic, stats_format_p(d->normality.p, p, sizeof(p)));
	return buf;
}

void stats_compare_options_init(struct stats_compare_options *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.05;
	o->level = 0.95;
	o->test = STATS_TEST_AUTO;
	o->resamples = 10000;
}

const char *stats_compare_test_name(enum stats_compare_test t)
{
	switch (t) {
	case STATS_TEST_WELCH:
		return "Welch's t-test";
	case STATS_TEST_STUDENT:
		return "Student's t-test";
	case STATS_TEST_MANN_WHITNEY:
		return "Mann-Whitney U test";
	default:
		return "auto";
	}
}

const char *stats_compare_test_id(enum stats_compare_test t)
{
	switch (t) {
	case STATS_TEST_WELCH:
		return "welch";
	case STATS_TEST_STUDENT:
		return "student";
	case STATS_TEST_MANN_WHITNEY:
		return "mann-whitney";
	default:
		return "auto";
	}
}

static bool looks_normal(const struct stats_sample_description *d, double alpha)
{
	return !d->normality_err && d->normality.p >= alpha;
}

/* A side fit for the t-test: consistent with normal, or so large that its mean is (CLT). */
static bool fit_for_t(const struct stats_sample_description *d, double alpha)
{
	return looks_normal(d, alpha) || d->n > STATS_SW_MAX_N;
}

static void side_reason(const struct stats_sample_description *d, char *buf, size_t size)
{
	char p[32];

	if (d->n > STATS_SW_MAX_N)
		snprintf(buf, size,
			 "has n = %zu > %d (its mean is normal by the central limit theorem)", d->n,
			 STATS_SW_MAX_N);
	else
		snprintf(buf, size, "is consistent with normal (Shapiro-Wilk p = %s)",
			 stats_format_p(d->normality.p, p, sizeof(p)));
}

/* The automatic choice: Welch when both sides are fit for it, else Mann-Whitney. */
static enum stats_compare_test choose_test(struct stats_comparison *c)
{
	double alpha = c->opt->alpha;
	char ra[120], rb[160];

	if (fit_for_t(&c->a, alpha) && fit_for_t(&c->b, alpha)) {
		side_reason(&c->a, ra, sizeof(ra));
		side_reason(&c->b, rb, sizeof(rb));
		snprintf(c->reason, sizeof(c->reason), "A %s; B %s (alpha = %g)", ra, rb, alpha);
		return STATS_TEST_WELCH;
	}
	stats_normality_text(fit_for_t(&c->a, alpha) ? &c->b : &c->a, alpha, rb, sizeof(rb));
	snprintf(c->reason, sizeof(c->reason), "%s is %s", fit_for_t(&c->a, alpha) ? "B" : "A", rb);
	return STATS_TEST_MANN_WHITNEY;
}

static int run_test(struct stats_comparison *c)
{
	const struct stats_sample_description *a = &c->a, *b = &c->b;

	switch (c->test) {
	case STATS_TEST_WELCH:
		return stats_t_test_welch(a->x, a->n, b->x, b->n, &c->result);
	case STATS_TEST_STUDENT:
		return stats_t_test_student(a->x, a->n, b->x, b->n, &c->result);
	default:
		return stats_mann_whitney(a->x, a->n, b->x, b->n, &c->result, &c->exact);
	}
}

/* Resamples for the bootstrap: fewer for huge samples, to bound the work. */
static size_t resamples_for(size_t requested, size_t n)
{
	size_t cap = n ? (size_t)(1e8 / (double)n) : requested;

	if (cap < 200)
		cap = 200;
	return requested < cap ? requested : cap;
}

static bool all_positive(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0.0))
			return false;
	return true;
}

/*
 * mean(A)/mean(B) with its BCa interval. A ratio of means is a speedup only
 * for positive values (times): otherwise it is undefined (NaN), not a
 * "-250% slower". On a degenerate bootstrap distribution (a few distinct
 * values, most resamples alike) BCa's corrections can put the interval
 * beside its own estimate; such an interval is no interval, and is left
 * undefined rather than shown.
 */
static void estimate_speedup(struct stats_comparison *c, const struct stats_compare_options *o)
{
	const struct stats_sample_description *a = &c->a, *b = &c->b;
	struct stats_interval *s = &c->speedup;

	s->estimate = s->low = s->high = NAN;
	if (!all_positive(a->x, a->n) || !all_positive(b->x, b->n)) {
		c->speedup_undefined = "the values must be positive";
		return;
	}
	stats_bootstrap_ratio_of_means(a->x, a->n, b->x, b->n, o->level,
				       resamples_for(o->resamples, a->n + b->n), o->seed, s);
	s->estimate = a->summary.mean / b->summary.mean;
	if (!(s->low <= s->estimate && s->estimate <= s->high)) {
		s->low = s->high = NAN;
		c->interval_undefined = "the bootstrap distribution is degenerate";
	}
}

/* "B is 3.1% ± 0.8% faster than A" from the speedup mean(A)/mean(B) and its interval. */
static void effect_text(const struct stats_comparison *c, char *buf, size_t size)
{
	double s = c->speedup.estimate, lo = c->speedup.low, hi = c->speedup.high;
	bool faster = s >= 1.0;
	double pct = faster ? (s - 1.0) * 100.0 : (1.0 / s - 1.0) * 100.0;
	double half = faster ? (hi - lo) * 50.0 : (1.0 / lo - 1.0 / hi) * 50.0;

	if (!isfinite(s)) {
		snprintf(buf, size, "the speedup is undefined (%s)",
			 c->speedup_undefined ? c->speedup_undefined : "a mean is zero");
		return;
	}
	if (isfinite(half))
		snprintf(buf, size, "B is %.1f%% ± %.1f%% %s than A", pct, half,
			 faster ? "faster" : "slower");
	else
		snprintf(buf, size, "B is %.1f%% %s than A", pct, faster ? "faster" : "slower");
}

static void make_verdict(struct stats_comparison *c)
{
	char effect[160], p[32];

	if (c->test_err) {
		snprintf(c->verdict, sizeof(c->verdict),
			 c->test_err == -EDOM
			     ? "cannot test: the samples have no variation"
			     : "cannot test: too few values (need at least 2 per side)");
		return;
	}
	effect_text(c, effect, sizeof(effect));
	c->significant = c->result.p < c->opt->alpha;
	snprintf(c->verdict, sizeof(c->verdict), "%s, p = %s; %s at alpha = %g", effect,
		 stats_format_p(c->result.p, p, sizeof(p)),
		 c->significant ? "significant" : "NOT significant (no evidence of a difference)",
		 c->opt->alpha);
}

int stats_compare_samples(struct stats_comparison *c, const struct stats_compare_options *o,
			  const char *name_a, const double *a, size_t na, const char *name_b,
			  const double *b, size_t nb)
{
	memset(c, 0, sizeof(*c));
	c->opt = o;
	if (stats_describe_sample(&c->a, name_a, a, na, o->level) ||
	    stats_describe_sample(&c->b, name_b, b, nb, o->level))
		return -EINVAL;
	if (o->test == STATS_TEST_AUTO) {
		c->test = choose_test(c);
	} else {
		c->test = o->test;
		snprintf(c->reason, sizeof(c->reason), "chosen with --test");
	}
	c->test_err = run_test(c);
	stats_brown_forsythe((const double *const[]){a, b}, (const size_t[]){na, nb}, 2,
			     &c->variance);
	estimate_speedup(c, o);
	make_verdict(c);
	return 0;
}
