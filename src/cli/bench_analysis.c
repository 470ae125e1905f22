/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Describing and comparing samples of timings, for lever bench, compare and
 * stats: summary statistics, normality, the choice between Welch's t-test
 * and Mann-Whitney, the speedup with a BCa interval, and the verdict in
 * plain words; text, JSON and HTML output.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_common.h"

char *format_value(const struct value_format *vf, double v, char *buf, size_t size)
{
	if (vf->to_seconds > 0)
		return report_format_time(v * vf->to_seconds, buf, size);
	snprintf(buf, size, "%.6g", v);
	return buf;
}

/* Two values in the same unit, for "mean ± sd". */
static char *format_pair(const struct value_format *vf, double v, double pm, char *buf, size_t size)
{
	char a[48], b[48];

	if (vf->to_seconds > 0) {
		double scale;
		const char *unit = report_time_unit(v * vf->to_seconds, &scale);

		report_format_time_in(v * vf->to_seconds, unit, scale, a, sizeof(a));
		report_format_time_in(pm * vf->to_seconds, unit, scale, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%.6g", v);
		snprintf(b, sizeof(b), "%.3g", pm);
	}
	snprintf(buf, size, "%s ± %s", a, b);
	return buf;
}

int describe_sample(struct sample_description *d, const char *name, const double *x, size_t n,
		    double level)
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

char *normality_text(const struct sample_description *d, double alpha, char *buf, size_t size)
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
			 d->normality.statistic, report_format_p(d->normality.p, p, sizeof(p)));
	return buf;
}

void compare_options_init(struct compare_options *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.05;
	o->level = 0.95;
	o->test = TEST_AUTO;
	o->resamples = 10000;
	o->format.to_seconds = 1.0;
}

const char *compare_test_name(enum compare_test t)
{
	switch (t) {
	case TEST_WELCH:
		return "Welch's t-test";
	case TEST_STUDENT:
		return "Student's t-test";
	case TEST_MANN_WHITNEY:
		return "Mann-Whitney U test";
	default:
		return "auto";
	}
}

static bool looks_normal(const struct sample_description *d, double alpha)
{
	return !d->normality_err && d->normality.p >= alpha;
}

/* A side fit for the t-test: consistent with normal, or so large that its mean is (CLT). */
static bool fit_for_t(const struct sample_description *d, double alpha)
{
	return looks_normal(d, alpha) || d->n > STATS_SW_MAX_N;
}

static void side_reason(const struct sample_description *d, double alpha, char *buf, size_t size)
{
	char p[32];

	if (d->n > STATS_SW_MAX_N)
		snprintf(buf, size,
			 "has n = %zu > %d (its mean is normal by the central limit theorem)", d->n,
			 STATS_SW_MAX_N);
	else
		snprintf(buf, size, "is consistent with normal (Shapiro-Wilk p = %s)",
			 report_format_p(d->normality.p, p, sizeof(p)));
}

/* The automatic choice: Welch when both sides are fit for it, else Mann-Whitney. */
static enum compare_test choose_test(struct comparison *c)
{
	double alpha = c->opt->alpha;
	char ra[120], rb[160];

	if (fit_for_t(&c->a, alpha) && fit_for_t(&c->b, alpha)) {
		side_reason(&c->a, alpha, ra, sizeof(ra));
		side_reason(&c->b, alpha, rb, sizeof(rb));
		snprintf(c->reason, sizeof(c->reason), "A %s; B %s (alpha = %g)", ra, rb, alpha);
		return TEST_WELCH;
	}
	normality_text(fit_for_t(&c->a, alpha) ? &c->b : &c->a, alpha, rb, sizeof(rb));
	snprintf(c->reason, sizeof(c->reason), "%s is %s", fit_for_t(&c->a, alpha) ? "B" : "A", rb);
	return TEST_MANN_WHITNEY;
}

static int run_test(struct comparison *c)
{
	const struct sample_description *a = &c->a, *b = &c->b;

	switch (c->test) {
	case TEST_WELCH:
		return stats_t_test_welch(a->x, a->n, b->x, b->n, &c->result);
	case TEST_STUDENT:
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

/* "B is 3.1% ± 0.8% faster than A" from the speedup mean(A)/mean(B) and its interval. */
static void effect_text(const struct comparison *c, char *buf, size_t size)
{
	double s = c->speedup.estimate, lo = c->speedup.low, hi = c->speedup.high;
	bool faster = s >= 1.0;
	double pct = faster ? (s - 1.0) * 100.0 : (1.0 / s - 1.0) * 100.0;
	double half = faster ? (hi - lo) * 50.0 : (1.0 / lo - 1.0 / hi) * 50.0;

	if (!isfinite(s)) {
		snprintf(buf, size, "the speedup is undefined");
		return;
	}
	if (isfinite(half))
		snprintf(buf, size, "B is %.1f%% ± %.1f%% %s than A", pct, half,
			 faster ? "faster" : "slower");
	else
		snprintf(buf, size, "B is %.1f%% %s than A", pct, faster ? "faster" : "slower");
}

static void make_verdict(struct comparison *c)
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
		 report_format_p(c->result.p, p, sizeof(p)),
		 c->significant ? "significant" : "NOT significant (no evidence of a difference)",
		 c->opt->alpha);
}

int compare_samples(struct comparison *c, const struct compare_options *o, const char *name_a,
		    const double *a, size_t na, const char *name_b, const double *b, size_t nb)
{
	memset(c, 0, sizeof(*c));
	c->opt = o;
	if (describe_sample(&c->a, name_a, a, na, o->level) ||
	    describe_sample(&c->b, name_b, b, nb, o->level))
		return -EINVAL;
	if (o->test == TEST_AUTO) {
		c->test = choose_test(c);
	} else {
		c->test = o->test;
		snprintf(c->reason, sizeof(c->reason), "chosen with --test");
	}
	c->test_err = run_test(c);
	stats_brown_forsythe((const double *const[]){a, b}, (const size_t[]){na, nb}, 2,
			     &c->variance);
	stats_bootstrap_ratio_of_means(a, na, b, nb, o->level, resamples_for(o->resamples, na + nb),
				       o->seed, &c->speedup);
	make_verdict(c);
	return 0;
}

/* ------------------------------------------------------------ output */

static void print_side(const struct sample_description *d, const char *label,
		       const struct compare_options *o, FILE *f)
{
	const struct value_format *vf = &o->format;
	char ms[128], med[128], norm[160], lo[48], hi[48];

	fprintf(f, "  %s: %s\n", label, d->name);
	fprintf(f, "     mean ± sd      %s   (%zu values)\n",
		format_pair(vf, d->summary.mean, d->summary.sd, ms, sizeof(ms)), d->n);
	fprintf(f, "     median ± MAD   %s\n",
		format_pair(vf, d->summary.median, d->summary.mad, med, sizeof(med)));
	fprintf(f, "     %.0f%% CI of mean  [%s, %s]\n", o->level * 100,
		format_value(vf, d->ci_mean.low, lo, sizeof(lo)),
		format_value(vf, d->ci_mean.high, hi, sizeof(hi)));
	fprintf(f, "     normality      %s\n", normality_text(d, o->alpha, norm, sizeof(norm)));
	if (d->outliers)
		fprintf(f, "     outliers       %zu (modified Z-score > 10)\n", d->outliers);
}

static void print_test_line(const struct comparison *c, FILE *f)
{
	char p[32];

	if (c->test_err) {
		fprintf(f, "  test:    %s could not be computed\n", compare_test_name(c->test));
		return;
	}
	if (c->test == TEST_MANN_WHITNEY)
		fprintf(f, "  test:    %s (%s): U = %.1f, p = %s\n", compare_test_name(c->test),
			c->exact ? "exact" : "normal approximation", c->result.statistic,
			report_format_p(c->result.p, p, sizeof(p)));
	else
		fprintf(f, "  test:    %s: t = %.3f, df = %.1f, p = %s\n",
			compare_test_name(c->test), c->result.statistic, c->result.df1,
			report_format_p(c->result.p, p, sizeof(p)));
	fprintf(f, "           why: %s\n", c->reason);
}

void comparison_print_text(const struct comparison *c, FILE *f)
{
	print_side(&c->a, "A", c->opt, f);
	print_side(&c->b, "B", c->opt, f);
	fputc('\n', f);
	print_test_line(c, f);
	if (!isnan(c->variance.p)) {
		char p[32];

		fprintf(f, "  spread:  sd(B)/sd(A) = %.3f; Brown-Forsythe F = %.3f, p = %s (%s)\n",
			c->b.summary.sd / c->a.summary.sd, c->variance.statistic,
			report_format_p(c->variance.p, p, sizeof(p)),
			c->variance.p < c->opt->alpha ? "the variances differ"
						      : "no evidence the variances differ");
	}
	if (isfinite(c->speedup.estimate))
		fprintf(
		    f,
		    "  speedup: mean(A)/mean(B) = %.4f, %.0f%% CI [%.4f, %.4f] (BCa bootstrap)\n",
		    c->speedup.estimate, c->opt->level * 100, c->speedup.low, c->speedup.high);
	fprintf(f, "\n  %s\n", c->verdict);
}

void sample_description_json(const struct sample_description *d, struct report_json *j,
			     bool with_values)
{
	const struct stats_summary *s = &d->summary;

	report_json_object_begin(j);
	report_json_kv_string(j, "name", d->name);
	report_json_kv_integer(j, "n", (long long)d->n);
	report_json_kv_number(j, "mean", s->mean);
	report_json_kv_number(j, "stddev", s->sd);
	report_json_kv_number(j, "median", s->median);
	report_json_kv_number(j, "mad", s->mad);
	report_json_kv_number(j, "min", s->min);
	report_json_kv_number(j, "q1", s->q1);
	report_json_kv_number(j, "q3", s->q3);
	report_json_kv_number(j, "max", s->max);
	report_json_kv_number(j, "cv", s->cv);
	report_json_key(j, "ci_mean");
	report_json_number_array(j, (double[]){d->ci_mean.low, d->ci_mean.high}, 2);
	report_json_key(j, "shapiro_wilk");
	report_json_object_begin(j);
	report_json_kv_number(j, "W", d->normality.statistic);
	report_json_kv_number(j, "p", d->normality.p);
	report_json_object_end(j);
	report_json_kv_integer(j, "outliers", (long long)d->outliers);
	if (with_values) {
		report_json_key(j, "values");
		report_json_number_array(j, d->x, d->n);
	}
	report_json_object_end(j);
}

static const char *test_id(enum compare_test t)
{
	return t == TEST_WELCH ? "welch" : (t == TEST_STUDENT ? "student" : "mann-whitney");
}

void comparison_print_json_fields(const struct comparison *c, struct report_json *j)
{
	report_json_key(j, "a");
	sample_description_json(&c->a, j, true);
	report_json_key(j, "b");
	sample_description_json(&c->b, j, true);
	report_json_kv_number(j, "alpha", c->opt->alpha);
	report_json_key(j, "test");
	report_json_object_begin(j);
	report_json_kv_string(j, "name", test_id(c->test));
	report_json_kv_string(j, "reason", c->reason);
	report_json_kv_number(j, "statistic", c->result.statistic);
	report_json_kv_number(j, "df", c->result.df1);
	report_json_kv_number(j, "p", c->result.p);
	if (c->test == TEST_MANN_WHITNEY)
		report_json_kv_bool(j, "exact", c->exact);
	report_json_object_end(j);
	report_json_key(j, "speedup");
	report_json_object_begin(j);
	report_json_kv_string(j, "definition", "mean(A) / mean(B)");
	report_json_kv_number(j, "estimate", c->speedup.estimate);
	report_json_kv_number(j, "low", c->speedup.low);
	report_json_kv_number(j, "high", c->speedup.high);
	report_json_kv_number(j, "level", c->opt->level);
	report_json_kv_string(j, "method", "BCa bootstrap");
	report_json_object_end(j);
	report_json_key(j, "brown_forsythe");
	report_json_object_begin(j);
	report_json_kv_number(j, "F", c->variance.statistic);
	report_json_kv_number(j, "p", c->variance.p);
	report_json_object_end(j);
	report_json_kv_bool(j, "significant", c->significant);
	report_json_kv_string(j, "verdict", c->verdict);
}

void comparison_print_json(const struct comparison *c, struct report_json *j)
{
	report_json_object_begin(j);
	comparison_print_json_fields(c, j);
	report_json_object_end(j);
}

struct report_table *sample_table(const struct sample_description *d, size_t k,
				  const struct value_format *vf, double alpha)
{
	static const char *const head[] = {"sample", "n",   "mean", "sd",   "median", "MAD",
					   "min",    "max", "CV",   "SW W", "SW p",   "normal?"};
	struct report_table *t = report_table_new(12, head);
	char b[64];

	if (!t)
		return NULL;
	for (size_t c = 1; c < 11; c++)
		report_table_align(t, c, REPORT_RIGHT);
	for (size_t i = 0; i < k; i++) {
		const struct stats_summary *s = &d[i].summary;

		report_table_row(t);
		report_table_cell(t, d[i].name);
		report_table_cellf(t, "%zu", d[i].n);
		report_table_cell(t, format_value(vf, s->mean, b, sizeof(b)));
		report_table_cell(t, format_value(vf, s->sd, b, sizeof(b)));
		report_table_cell(t, format_value(vf, s->median, b, sizeof(b)));
		report_table_cell(t, format_value(vf, s->mad, b, sizeof(b)));
		report_table_cell(t, format_value(vf, s->min, b, sizeof(b)));
		report_table_cell(t, format_value(vf, s->max, b, sizeof(b)));
		report_table_cellf(t, "%.2f%%", s->cv * 100);
		report_table_cellf(t, d[i].normality_err ? "-" : "%.4f", d[i].normality.statistic);
		report_table_cell(
		    t, d[i].normality_err ? "-" : report_format_p(d[i].normality.p, b, sizeof(b)));
		report_table_cell(
		    t, d[i].normality_err ? "n/a" : (d[i].normality.p < alpha ? "no" : "yes"));
	}
	return t;
}

static void comparison_html_body(FILE *f, const void *arg)
{
	const struct comparison *c = arg;
	struct sample_description both[2] = {c->a, c->b};
	struct report_table *t = sample_table(both, 2, &c->opt->format, c->opt->alpha);
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	fputs("<p class=\"verdict\">", f);
	report_html_escape(f, c->verdict);
	fputs("</p>\n", f);
	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
	mem = open_memstream(&text, &len);
	if (mem) {
		comparison_print_text(c, mem);
		fclose(mem);
		report_html_pre(f, text);
		free(text);
	}
}

void comparison_print_html(const struct comparison *c, FILE *f)
{
	comparison_html_body(f, c);
}

/* ------------------------------------------------------------ HTML report */

int write_html_report(const char *path, const char *title, const struct report_series *series,
		      size_t k, const struct value_format *vf, void (*body)(FILE *, const void *),
		      const void *arg)
{
	FILE *f = fopen(path, "w");
	double scale = 1.0, ref = NAN, first = NAN;
	const char *unit = "";

	if (!f)
		return -errno;
	if (k && series[0].n)
		first = stats_mean(series[0].values, series[0].n);
	if (vf->to_seconds > 0)
		unit = report_time_unit(first * vf->to_seconds, &scale);
	report_html_begin(f, title);
	report_html_heading(f, 1, title);
	if (body)
		body(f, arg);
	report_html_heading(f, 2, "Distributions");
	report_svg_distribution(f, series, k, scale * (vf->to_seconds > 0 ? vf->to_seconds : 1.0),
				vf->to_seconds > 0 ? unit : "value");
	report_html_heading(f, 2, "Normal Q-Q plots");
	report_html_paragraph(f, "Each sample is shifted to a mean of zero and divided by the "
				 "standard deviation of the last sample, as in the Stabilizer "
				 "paper's Fig. 5; dashed lines show where samples from a normal "
				 "distribution would fall (a steeper line means more variance).");
	if (k && series[k - 1].n > 1)
		ref = stats_sd(series[k - 1].values, series[k - 1].n);
	report_svg_qq(f, series, k, ref);
	report_html_end(f);
	return fclose(f) ? -errno : 0;
}
