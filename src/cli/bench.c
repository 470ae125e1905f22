/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever bench [OPTIONS] -- COMMAND [ARGS...]: run a command repeatedly and
 * describe its running time (hyperfine's job, with Stabilizer's statistics):
 * warm-up runs, run limits, prepare and cleanup commands, a random-size
 * environment per run, wall/user/system time and peak RSS per run, outliers,
 * normality, a confidence interval of the mean, and exports to JSON, CSV and
 * Markdown.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_common.h"
#include "cli/commands.h"

static const char bench_usage[] =
    "usage: lever bench [OPTIONS] -- COMMAND [ARGS...]\n"
    "       lever bench [OPTIONS] 'COMMAND STRING'\n"
    "\n"
    "Run COMMAND repeatedly and report its running time: mean ± standard deviation,\n"
    "user and system time, min/max, median ± MAD, a confidence interval of the mean,\n"
    "peak memory (RSS), outliers, and whether the times look normally distributed\n"
    "(Shapiro-Wilk). Every run gets an environment variable of random length\n"
    "(LEVER_RANDOMIZED_ENVIRONMENT_OFFSET, 0-4095 bytes), which moves the stack and\n"
    "so randomizes the layout bias a fixed environment would bake into every run;\n"
    "--randomize adds Stabilizer's heap, code and stack randomization per run.\n"
    "After '--' the command and its arguments are executed directly; a single\n"
    "string is split into words, or run by /bin/sh -c if it has shell syntax.\n"
    "The command's output is discarded unless --show-output.\n"
    "\n" BENCH_OPTIONS_HELP "\n"
    "Output:\n"
    "      --export-json FILE      all runs and statistics as JSON (hyperfine's\n"
    "                              fields plus lever's)\n"
    "      --export-csv FILE       summary as CSV (hyperfine's columns)\n"
    "      --export-markdown FILE  summary as a Markdown table\n"
    "      --html FILE             self-contained HTML report: distribution, Q-Q plot\n"
    "      --alpha A               significance level of the normality test (0.05)\n"
    "  -h, --help                  show this help\n"
    "\n"
    "Exit status: 0; 1 if the command (or prepare/cleanup) fails or cannot run;\n"
    "2 for a usage error. See doc/bench.md.\n";

struct bench_cli {
	struct bench_options run;
	const char *export_json, *export_csv, *export_markdown, *html;
	double alpha;
};

enum { OPT_EXPORT_JSON = 0x300, OPT_EXPORT_CSV, OPT_EXPORT_MARKDOWN, OPT_HTML, OPT_ALPHA };

static const struct option own_options[] = {
    {"export-json", required_argument, NULL, OPT_EXPORT_JSON},
    {"export-csv", required_argument, NULL, OPT_EXPORT_CSV},
    {"export-markdown", required_argument, NULL, OPT_EXPORT_MARKDOWN},
    {"html", required_argument, NULL, OPT_HTML},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"help", no_argument, NULL, 'h'},
};

static int bench_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever bench --help' for usage.\n");
	return EXIT_USAGE;
}

static int own_option(struct bench_cli *o, int c, const char *arg)
{
	switch (c) {
	case OPT_EXPORT_JSON:
		o->export_json = arg;
		return 1;
	case OPT_EXPORT_CSV:
		o->export_csv = arg;
		return 1;
	case OPT_EXPORT_MARKDOWN:
		o->export_markdown = arg;
		return 1;
	case OPT_HTML:
		o->html = arg;
		return 1;
	case OPT_ALPHA:
		return parse_alpha(arg, &o->alpha)
			   ? bench_usage_error("--alpha '%s': need 0 < A < 1", arg)
			   : 1;
	}
	return 0;
}

/* Options up to the command; returns -1 to go on, else an exit status. */
static int parse_args(struct bench_cli *o, int argc, char **argv)
{
	struct option *options =
	    bench_options_merge(own_options, sizeof(own_options) / sizeof(own_options[0]));
	int c, rc = -1;

	if (!options)
		return 1;
	optind = 1;
	while (rc < 0 && (c = getopt_long(argc, argv, "+:w:m:M:n:p:c:ih", options, NULL)) != -1) {
		int r;

		if (c == 'h') {
			fputs(bench_usage, stdout);
			rc = 0;
		} else if (c == ':') {
			rc = bench_usage_error("option '%s' needs a value", argv[optind - 1]);
		} else if (c == '?') {
			rc = bench_usage_error("unknown option '%s'", argv[optind - 1]);
		} else if ((r = own_option(o, c, optarg)) != 0) {
			rc = r == 1 ? -1 : r;
		} else {
			r = bench_options_parse(&o->run, "lever bench", c, optarg);
			rc = r == 1
				 ? -1
				 : (r ? r
				      : bench_usage_error("unknown option '%s'", argv[optind - 1]));
		}
	}
	free(options);
	return rc;
}

/* ------------------------------------------------------------ statistics */

struct bench_stats {
	struct sample_description wall;
	struct stats_interval ci_bca;
	double user, sys, rss_mean, rss_max;
	size_t failures;
	double *user_v, *sys_v, *rss_v, *exit_v, *offset_v;
};

static int bench_stats_compute(struct bench_stats *s, const struct bench_result *r, uint64_t seed)
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
	describe_sample(&s->wall, r->command->display, r->wall, r->n, 0.95);
	stats_bootstrap_mean(r->wall, r->n, 0.95, 10000, seed, &s->ci_bca);
	s->user = stats_mean(s->user_v, r->n);
	s->sys = stats_mean(s->sys_v, r->n);
	s->rss_mean = stats_mean(s->rss_v, r->n);
	s->rss_max = stats_max(s->rss_v, r->n);
	return 0;
}

static void bench_stats_free(struct bench_stats *s)
{
	free(s->user_v);
	free(s->sys_v);
	free(s->rss_v);
	free(s->exit_v);
	free(s->offset_v);
}

/* ------------------------------------------------------------ output */

static void print_summary(const struct bench_stats *s, const struct bench_cli *o,
			  const struct bench_result *r)
{
	const struct stats_summary *w = &s->wall.summary;
	double scale;
	const char *unit = report_time_unit(w->mean, &scale);
	char a[48], b[48], c[48], d[48], norm[160], layout[512];

#define T(v, buf) report_format_time_in((v), unit, scale, buf, sizeof(buf))
	printf("Benchmark: %s\n", r->command->display);
	printf("  Time (mean ± σ):     %s ± %s    [User: %s, System: %s]\n", T(w->mean, a),
	       T(w->sd, b), report_format_time(s->user, c, sizeof(c)),
	       report_format_time(s->sys, d, sizeof(d)));
	printf("  Range (min … max):   %s … %s    %zu runs\n", T(w->min, a), T(w->max, b), r->n);
	printf("  Median ± MAD:        %s ± %s\n", T(w->median, a), T(w->mad, b));
	printf("  95%% CI of mean:      [%s, %s] (BCa bootstrap); CV %.2f%%\n", T(s->ci_bca.low, a),
	       T(s->ci_bca.high, b), w->cv * 100);
	printf("  Peak RSS:            %s mean, %s max\n",
	       report_format_bytes(s->rss_mean, a, sizeof(a)),
	       report_format_bytes(s->rss_max, b, sizeof(b)));
	printf("  Normality:           %s\n",
	       normality_text(&s->wall, o->alpha, norm, sizeof(norm)));
	printf("  Layout:              %s\n",
	       bench_layout_text(&o->run, r, layout, sizeof(layout)));
	if (r->command->program)
		printf("  Program:             %s\n", r->command->program);
#undef T
}

static void print_warnings(const struct bench_stats *s, const struct bench_result *r)
{
	const struct stats_summary *w = &s->wall.summary;

	if (s->wall.outliers)
		printf("\n  Warning: %zu statistical outlier%s (modified Z-score > 10). Other "
		       "programs "
		       "or a first cold run may have disturbed the measurement; consider --warmup, "
		       "--prepare or a quieter system.\n",
		       s->wall.outliers, s->wall.outliers == 1 ? "" : "s");
	if (r->n > 1 && r->wall[0] > w->median + 5 * (w->mad > 0 ? w->mad : w->sd) &&
	    r->wall[0] == w->max)
		printf("\n  Warning: the first run was much slower than the rest (caches?); "
		       "consider --warmup.\n");
	if (w->mean < 5e-3)
		printf("\n  Warning: the command takes less than 5 ms; process start-up dominates "
		       "the measurement.\n");
	if (s->failures)
		printf("\n  Warning: %zu run%s exited with a non-zero status (--ignore-failure).\n",
		       s->failures, s->failures == 1 ? "" : "s");
}

static void export_json(FILE *f, const struct bench_stats *s, const struct bench_result *r,
			const struct bench_cli *o)
{
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
	sample_description_json(&s->wall, &j, false);
	report_json_key(&j, "ci_mean_bca");
	report_json_number_array(&j, (double[]){s->ci_bca.low, s->ci_bca.high}, 2);
	report_json_kv_integer(&j, "seed", (long long)o->run.seed);
	report_json_kv_bool(&j, "randomize_env", o->run.randomize_env);
	report_json_kv_bool(&j, "randomize_heap", o->run.randomize_heap);
	report_json_kv_bool(&j, "randomize_code", o->run.randomize_code);
	report_json_kv_bool(&j, "randomize_stack", o->run.randomize_stack);
	report_json_kv_bool(&j, "randomize_link", o->run.randomize_link);
	report_json_key(&j, "layout");
	bench_layout_json(&o->run, r, 1, &j);
	report_json_object_end(&j);
	report_json_array_end(&j);
	report_json_object_end(&j);
	report_json_finish(&j);
}

static struct report_table *summary_table(const struct bench_stats *s, const struct bench_result *r,
					  bool csv)
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

static int write_export(const char *path, int kind, const struct bench_stats *s,
			const struct bench_result *r, const struct bench_cli *o)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	struct report_table *t;

	if (!f) {
		fprintf(stderr, "lever bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (kind == OPT_EXPORT_JSON) {
		export_json(f, s, r, o);
	} else {
		t = summary_table(s, r, kind == OPT_EXPORT_CSV);
		if (t && kind == OPT_EXPORT_CSV)
			report_table_print_csv(t, f);
		else if (t)
			report_table_print_markdown(t, f);
		report_table_free(t);
	}
	if (f != stdout && fclose(f)) {
		fprintf(stderr, "lever bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

struct html_arg {
	const struct bench_stats *s;
	const struct bench_cli *o;
	const struct bench_result *r;
};

static void html_body(FILE *f, const void *arg)
{
	const struct html_arg *h = arg;
	struct value_format vf = {1.0};
	struct report_table *t = sample_table(&h->s->wall, 1, &vf, h->o->alpha);

	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
	bench_layout_html(&h->o->run, h->r, 1, f);
}

static int outputs(const struct bench_stats *s, const struct bench_result *r,
		   const struct bench_cli *o)
{
	int rc = 0;

	if (o->export_json)
		rc |= write_export(o->export_json, OPT_EXPORT_JSON, s, r, o);
	if (o->export_csv)
		rc |= write_export(o->export_csv, OPT_EXPORT_CSV, s, r, o);
	if (o->export_markdown)
		rc |= write_export(o->export_markdown, OPT_EXPORT_MARKDOWN, s, r, o);
	if (o->html) {
		struct report_series series = {r->command->display, r->wall, r->n};
		struct value_format vf = {1.0};
		struct html_arg h = {s, o, r};
		int err = write_html_report(o->html, "lever bench", &series, 1, &vf, html_body, &h);

		if (err) {
			fprintf(stderr, "lever bench: cannot write %s: %s\n", o->html,
				strerror(-err));
			rc = 1;
		}
	}
	return rc;
}

/* ------------------------------------------------------------ entry */

static int command_from_args(struct bench_command *c, int argc, char **argv)
{
	if (argc == 1)
		return bench_command_from_string(c, argv[0]);
	return bench_command_from_argv(c, argv, argc);
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli o = {.alpha = 0.05};
	struct bench_command cmd;
	struct bench_result res = {0};
	struct bench_session session;
	struct bench_stats s = {0};
	int rc;

	bench_options_init(&o.run);
	rc = parse_args(&o, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return bench_usage_error("%s",
					 "no command given: lever bench [OPTIONS] -- COMMAND");
	if (command_from_args(&cmd, argc - optind, argv + optind)) {
		bench_command_free(&cmd);
		return bench_usage_error("%s", "the command is empty or has unbalanced quotes");
	}
	rc = bench_options_check(&o.run, "lever bench");
	if (rc) {
		bench_command_free(&cmd);
		return rc;
	}
	rc = bench_check_programs(&o.run, &cmd, 1, "lever bench");
	if (!rc)
		rc = bench_session_init(&session, &o.run, "lever bench");
	if (!rc)
		rc = bench_measure(&session, &cmd, 1, &res);
	if (!rc && res.n < 2) {
		fprintf(stderr, "lever bench: only %zu run; need at least 2\n", res.n);
		rc = 1;
	}
	if (!rc && bench_stats_compute(&s, &res, o.run.seed) == 0) {
		print_summary(&s, &o, &res);
		print_warnings(&s, &res);
		rc = outputs(&s, &res, &o);
	}
	bench_stats_free(&s);
	bench_result_free(&res);
	bench_command_free(&cmd);
	return rc;
}
