/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The results of lever bench (doc/bench.md): the statistics of one
 * command's runs (wall time described by stats_describe_sample, a BCa
 * interval of the mean, user/system time, peak RSS, failures), hyperfine's
 * summary with lever's lines and warnings, and the exports: JSON with
 * hyperfine's fields plus lever's, CSV and Markdown with hyperfine's
 * columns, and the HTML page.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"

/* ------------------------------------------------------------ statistics */

int measure_bench_summarize(struct measure_bench_summary *s, const struct measure_result *r,
			    uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->user_v = malloc(r->n * sizeof(double));
	s->sys_v = malloc(r->n * sizeof(double));
	s->rss_v = malloc(r->n * sizeof(double));
	s->exit_v = malloc(r->n * sizeof(double));
	s->offset_v = malloc(r->n * sizeof(double));
	if (!s->user_v || !s->sys_v || !s->rss_v || !s->exit_v || !s->offset_v)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		s->user_v[i] = r->runs[i].user;
		s->sys_v[i] = r->runs[i].sys;
		s->rss_v[i] = r->runs[i].max_rss;
		s->exit_v[i] = r->runs[i].exit_code;
		s->offset_v[i] = (double)r->runs[i].env_offset;
		s->failures += r->runs[i].exit_code != 0;
	}
	stats_describe_sample(&s->wall, r->command->display, r->wall, r->n, 0.95);
	stats_bootstrap_mean(r->wall, r->n, 0.95, 10000, seed, &s->ci_bca);
	s->user = stats_mean(s->user_v, r->n);
	s->sys = stats_mean(s->sys_v, r->n);
	s->rss_mean = stats_mean(s->rss_v, r->n);
	s->rss_max = stats_max(s->rss_v, r->n);
	return 0;
}

void measure_bench_summary_free(struct measure_bench_summary *s)
{
	free(s->user_v);
	free(s->sys_v);
	free(s->rss_v);
	free(s->exit_v);
	free(s->offset_v);
}

/* ------------------------------------------------------------ warnings */

static void print_warnings(const struct measure_bench_summary *s, const struct measure_result *r,
			   FILE *f)
{
	const struct stats_summary *w = &s->wall.summary;

	if (s->wall.outliers)
		fprintf(
		    f,
		    "\n  Warning: %zu statistical outlier%s (modified Z-score > 10). Other "
		    "programs "
		    "or a first cold run may have disturbed the measurement; consider --warmup, "
		    "--prepare or a quieter system.\n",
		    s->wall.outliers, s->wall.outliers == 1 ? "" : "s");
	if (r->n > 1 && r->wall[0] > w->median + 5 * (w->mad > 0 ? w->mad : w->sd) &&
	    r->wall[0] == w->max)
		fprintf(f, "\n  Warning: the first run was much slower than the rest (caches?); "
			   "consider --warmup.\n");
	if (w->mean < 5e-3)
		fprintf(f,
			"\n  Warning: the command takes less than 5 ms; process start-up dominates "
			"the measurement.\n");
	if (s->failures)
		fprintf(
		    f, "\n  Warning: %zu run%s exited with a non-zero status (--ignore-failure).\n",
		    s->failures, s->failures == 1 ? "" : "s");
}

/* ------------------------------------------------------------ text */

void measure_bench_report_text(const struct measure_bench_report *b, FILE *f)
{
	const struct measure_bench_summary *s = b->s;
	const struct measure_result *r = b->r;
	const struct stats_summary *w = &s->wall.summary;
	double scale;
	const char *unit = report_time_unit(w->mean, &scale);
	char t1[48], t2[48], t3[48], t4[48], norm[160], how[512];

#define T(v, buf) report_format_time_in((v), unit, scale, buf, sizeof(buf))
	fprintf(f, "Benchmark: %s\n", r->command->display);
	fprintf(f, "  Time (mean ± σ):     %s ± %s    [User: %s, System: %s]\n", T(w->mean, t1),
		T(w->sd, t2), report_format_time(s->user, t3, sizeof(t3)),
		report_format_time(s->sys, t4, sizeof(t4)));
	fprintf(f, "  Range (min … max):   %s … %s    %zu runs\n", T(w->min, t1), T(w->max, t2),
		r->n);
	fprintf(f, "  Median ± MAD:        %s ± %s\n", T(w->median, t1), T(w->mad, t2));
	fprintf(f, "  95%% CI of mean:      [%s, %s] (BCa bootstrap); CV %.2f%%\n",
		T(s->ci_bca.low, t1), T(s->ci_bca.high, t2), w->cv * 100);
	fprintf(f, "  Peak RSS:            %s mean, %s max\n",
		report_format_bytes(s->rss_mean, t1, sizeof(t1)),
		report_format_bytes(s->rss_max, t2, sizeof(t2)));
	fprintf(f, "  Normality:           %s\n",
		stats_normality_text(&s->wall, b->alpha, norm, sizeof(norm)));
	fprintf(f, "  Randomization:       %s\n",
		measure_randomization_text(b->run, r, how, sizeof(how)));
	if (r->command->program)
		fprintf(f, "  Program:             %s\n", r->command->program);
#undef T
	print_warnings(s, r, f);
}

/* ------------------------------------------------------------ exports */

static void export_json(const struct measure_bench_report *b, FILE *f)
{
	const struct measure_bench_summary *s = b->s;
	const struct measure_result *r = b->r;
	const struct measure_options *run = b->run;
	const struct stats_summary *w = &s->wall.summary;
	struct report_json j;

	report_json_init(&j, f);
	report_json_object_begin(&j);
	report_json_key(&j, "results");
	report_json_array_begin(&j);
	report_json_object_begin(&j);
	report_json_kv_string(&j, "command", r->command->display);
	report_json_kv_number(&j, "mean", w->mean);
	report_json_kv_number(&j, "stddev", w->sd);
	report_json_kv_number(&j, "median", w->median);
	report_json_kv_number(&j, "user", s->user);
	report_json_kv_number(&j, "system", s->sys);
	report_json_kv_number(&j, "min", w->min);
	report_json_kv_number(&j, "max", w->max);
	report_json_key(&j, "times");
	report_json_number_array(&j, r->wall, r->n);
	report_json_key(&j, "user_times");
	report_json_number_array(&j, s->user_v, r->n);
	report_json_key(&j, "system_times");
	report_json_number_array(&j, s->sys_v, r->n);
	report_json_key(&j, "memory_usage_byte");
	report_json_number_array(&j, s->rss_v, r->n);
	report_json_key(&j, "exit_codes");
	report_json_number_array(&j, s->exit_v, r->n);
	report_json_key(&j, "env_offsets");
	report_json_number_array(&j, s->offset_v, r->n);
	report_json_key(&j, "lever");
	measure_sample_json(&s->wall, &j, false);
	report_json_key(&j, "ci_mean_bca");
	report_json_number_array(&j, (double[]){s->ci_bca.low, s->ci_bca.high}, 2);
	report_json_kv_integer(&j, "seed", (long long)run->seed);
	report_json_kv_bool(&j, "randomize_env", run->randomize_env);
	report_json_kv_bool(&j, "randomize_heap", run->randomize_heap);
	report_json_kv_bool(&j, "randomize_code", run->randomize_code);
	report_json_kv_bool(&j, "randomize_stack", run->randomize_stack);
	report_json_kv_bool(&j, "randomize_link", run->randomize_link);
	report_json_key(&j, "randomization");
	measure_randomization_json(run, r, 1, &j);
	report_json_object_end(&j);
	report_json_array_end(&j);
	report_json_object_end(&j);
	report_json_finish(&j);
}

static struct report_table *summary_table(const struct measure_bench_summary *s,
					  const struct measure_result *r, bool csv)
{
	static const char *const csv_head[] = {"command", "mean",   "stddev", "median",
					       "user",	  "system", "min",    "max"};
	static const char *const md_head[] = {"Command",    "Mean [s]", "Min [s]",   "Max [s]",
					      "Median [s]", "User [s]", "System [s]"};
	const struct stats_summary *w = &s->wall.summary;
	struct report_table *t = csv ? report_table_new(8, csv_head) : report_table_new(7, md_head);

	if (!t)
		return NULL;
	report_table_row(t);
	if (csv) {
		report_table_cell(t, r->command->display);
		report_table_cellf(t, "%.9g", w->mean);
		report_table_cellf(t, "%.9g", w->sd);
		report_table_cellf(t, "%.9g", w->median);
		report_table_cellf(t, "%.9g", s->user);
		report_table_cellf(t, "%.9g", s->sys);
		report_table_cellf(t, "%.9g", w->min);
		report_table_cellf(t, "%.9g", w->max);
	} else {
		for (size_t c = 1; c < 7; c++)
			report_table_align(t, c, REPORT_RIGHT);
		report_table_cellf(t, "`%s`", r->command->display);
		report_table_cellf(t, "%.4f ± %.4f", w->mean, w->sd);
		report_table_cellf(t, "%.4f", w->min);
		report_table_cellf(t, "%.4f", w->max);
		report_table_cellf(t, "%.4f", w->median);
		report_table_cellf(t, "%.4f", s->user);
		report_table_cellf(t, "%.4f", s->sys);
	}
	return t;
}

void measure_bench_report_export(const struct measure_bench_report *b, enum measure_export kind,
				 FILE *f)
{
	struct report_table *t;

	if (kind == MEASURE_EXPORT_JSON) {
		export_json(b, f);
		return;
	}
	t = summary_table(b->s, b->r, kind == MEASURE_EXPORT_CSV);
	if (t && kind == MEASURE_EXPORT_CSV)
		report_table_print_csv(t, f);
	else if (t)
		report_table_print_markdown(t, f);
	report_table_free(t);
}

/* ------------------------------------------------------------ HTML */

static void html_body(FILE *f, const void *arg)
{
	const struct measure_bench_report *b = arg;
	struct measure_value_format vf = {1.0};
	struct report_table *t = measure_sample_table(&b->s->wall, 1, &vf, b->alpha);

	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
	measure_randomization_html(b->run, b->r, 1, f);
}

int measure_bench_report_html(const struct measure_bench_report *b, const char *path)
{
	struct report_series series = {b->r->command->display, b->r->wall, b->r->n};
	struct measure_value_format vf = {1.0};

	return measure_write_html(path, "lever bench", &series, 1, &vf, html_body, b);
}
