/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The reports of lever compare: one comparison of A and B (decided by
 * stats_compare_samples in src/stats) shown as text, JSON, Markdown and an
 * HTML page, with the randomization of the runs when commands were run.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"

void measure_compare_options_init(struct measure_compare_options *o)
{
	stats_compare_options_init(&o->stats);
	o->format.to_seconds = 1.0;
}

/* Two values in the same unit, for "mean ± sd". */
static char *format_pair(const struct measure_value_format *vf, double v, double pm, char *buf,
			 size_t size)
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

static void print_side(const struct stats_sample_description *d, const char *label,
		       const struct stats_compare_options *o, const struct measure_value_format *vf,
		       FILE *f)
{
	char ms[128], med[128], norm[160], lo[48], hi[48];

	fprintf(f, "  %s: %s\n", label, d->name);
	fprintf(f, "     mean ± sd      %s   (%zu values)\n",
		format_pair(vf, d->summary.mean, d->summary.sd, ms, sizeof(ms)), d->n);
	fprintf(f, "     median ± MAD   %s\n",
		format_pair(vf, d->summary.median, d->summary.mad, med, sizeof(med)));
	fprintf(f, "     %.0f%% CI of mean  [%s, %s]\n", o->level * 100,
		measure_format_value(vf, d->ci_mean.low, lo, sizeof(lo)),
		measure_format_value(vf, d->ci_mean.high, hi, sizeof(hi)));
	fprintf(f, "     normality      %s\n",
		stats_normality_text(d, o->alpha, norm, sizeof(norm)));
	if (d->outliers)
		fprintf(f, "     outliers       %zu (modified Z-score > 10)\n", d->outliers);
}

static void print_test_line(const struct stats_comparison *c, FILE *f)
{
	char p[32];

	if (c->test_err) {
		fprintf(f, "  test:    %s could not be computed\n",
			stats_compare_test_name(c->test));
		return;
	}
	if (c->test == STATS_TEST_MANN_WHITNEY)
		fprintf(f, "  test:    %s (%s): U = %.1f, p = %s\n",
			stats_compare_test_name(c->test),
			c->exact ? "exact" : "normal approximation", c->result.statistic,
			stats_format_p(c->result.p, p, sizeof(p)));
	else
		fprintf(f, "  test:    %s: t = %.3f, df = %.1f, p = %s\n",
			stats_compare_test_name(c->test), c->result.statistic, c->result.df1,
			stats_format_p(c->result.p, p, sizeof(p)));
	fprintf(f, "           why: %s\n", c->reason);
}

void measure_comparison_text(const struct stats_comparison *c,
			     const struct measure_value_format *vf, FILE *f)
{
	print_side(&c->a, "A", c->opt, vf, f);
	print_side(&c->b, "B", c->opt, vf, f);
	fputc('\n', f);
	print_test_line(c, f);
	if (!isnan(c->variance.p)) {
		char p[32];

		fprintf(f, "  spread:  sd(B)/sd(A) = %.3f; Brown-Forsythe F = %.3f, p = %s (%s)\n",
			c->b.summary.sd / c->a.summary.sd, c->variance.statistic,
			stats_format_p(c->variance.p, p, sizeof(p)),
			c->variance.p < c->opt->alpha ? "the variances differ"
						      : "no evidence the variances differ");
	}
	if (isfinite(c->speedup.low))
		fprintf(
		    f,
		    "  speedup: mean(A)/mean(B) = %.4f, %.0f%% CI [%.4f, %.4f] (BCa bootstrap)\n",
		    c->speedup.estimate, c->opt->level * 100, c->speedup.low, c->speedup.high);
	else if (isfinite(c->speedup.estimate))
		fprintf(f, "  speedup: mean(A)/mean(B) = %.4f, no confidence interval (%s)\n",
			c->speedup.estimate, c->interval_undefined);
	else
		fprintf(f, "  speedup: undefined (%s)\n",
			c->speedup_undefined ? c->speedup_undefined : "a mean is zero");
	fprintf(f, "\n  %s\n", c->verdict);
}

void measure_comparison_json_fields(const struct stats_comparison *c, struct report_json *j)
{
	report_json_key(j, "a");
	measure_sample_json(&c->a, j, true);
	report_json_key(j, "b");
	measure_sample_json(&c->b, j, true);
	report_json_kv_number(j, "alpha", c->opt->alpha);
	report_json_key(j, "test");
	report_json_object_begin(j);
	report_json_kv_string(j, "name", stats_compare_test_id(c->test));
	report_json_kv_string(j, "reason", c->reason);
	report_json_kv_number(j, "statistic", c->result.statistic);
	report_json_kv_number(j, "df", c->result.df1);
	report_json_kv_number(j, "p", c->result.p);
	if (c->test == STATS_TEST_MANN_WHITNEY)
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

void measure_comparison_html(const struct stats_comparison *c,
			     const struct measure_value_format *vf, FILE *f)
{
	struct stats_sample_description both[2] = {c->a, c->b};
	struct report_table *t = measure_sample_table(both, 2, vf, c->opt->alpha);
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
		measure_comparison_text(c, vf, mem);
		fclose(mem);
		report_html_pre(f, text);
		free(text);
	}
}

/* ------------------------------------------------------------ lever compare's outputs */

static void randomization_text(const struct measure_comparison_report *r, FILE *f)
{
	char line[512];

	fprintf(f, "\nRandomization:\n");
	for (int i = 0; i < 2; i++) {
		fprintf(f, "  %s: %s\n", i ? "B" : "A",
			measure_randomization_text(r->run, &r->res[i], line, sizeof(line)));
		if (r->res[i].command->program)
			fprintf(f, "     program %s\n", r->res[i].command->program);
	}
}

void measure_comparison_report_text(const struct measure_comparison_report *r, FILE *f)
{
	fprintf(f, "%s\n\n", r->title);
	measure_comparison_text(r->c, r->vf, f);
	if (r->res)
		randomization_text(r, f);
}

void measure_comparison_report_json(const struct measure_comparison_report *r, FILE *f)
{
	struct report_json j;

	report_json_init(&j, f);
	report_json_object_begin(&j);
	measure_comparison_json_fields(r->c, &j);
	if (r->res) {
		report_json_key(&j, "randomization");
		measure_randomization_json(r->run, r->res, 2, &j);
	}
	report_json_object_end(&j);
	report_json_finish(&j);
}

int measure_comparison_report_markdown(const struct measure_comparison_report *r, FILE *f)
{
	const struct stats_comparison *c = r->c;
	struct stats_sample_description d[2] = {c->a, c->b};
	struct report_table *t = measure_sample_table(d, 2, r->vf, c->opt->alpha);
	char p1[32], p2[32];

	if (!t)
		return -ENOMEM;
	report_table_print_markdown(t, f);
	report_table_free(t);
	fprintf(f, "\n%s: p = %s. Brown-Forsythe (equal variances): p = %s.\n\n%s\n",
		stats_compare_test_name(c->test), stats_format_p(c->result.p, p1, sizeof(p1)),
		stats_format_p(c->variance.p, p2, sizeof(p2)), c->verdict);
	return ferror(f) ? -EIO : 0;
}

static void report_html_body(FILE *f, const void *arg)
{
	const struct measure_comparison_report *r = arg;

	measure_comparison_html(r->c, r->vf, f);
	if (r->res)
		measure_randomization_html(r->run, r->res, 2, f);
}

int measure_comparison_report_html(const struct measure_comparison_report *r, const char *path)
{
	const struct stats_comparison *c = r->c;
	struct report_series s[2] = {{c->a.name, c->a.x, c->a.n}, {c->b.name, c->b.x, c->b.n}};

	return measure_write_html(path, r->title, s, 2, r->vf, report_html_body, r);
}
