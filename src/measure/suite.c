/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever compare --suite FILE: several benchmarks under two configurations.
 * Each benchmark gets its own comparison (as lever compare --samples); the
 * suite gets a one-way within-subjects ANOVA (benchmark = subject,
 * configuration = treatment), which is the Stabilizer paper's §6 analysis,
 * and the multiple-testing caveat: with m tests at level alpha, about
 * m * alpha come out significant by chance alone. The ratios
 * mean(B)/mean(A) and sd(B)/sd(A) of each benchmark, with the median and
 * extremes of the first across the suite, give overheads (B = a randomized
 * configuration, A = its baseline) and the spread of Table 1.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"

static double time_ratio(const struct stats_comparison *c)
{
	return c->b.summary.mean / c->a.summary.mean;
}

static double sd_ratio(const struct stats_comparison *c)
{
	return c->b.summary.sd / c->a.summary.sd;
}

/* Median and extremes of mean(B)/mean(A) across the benchmarks. */
static int suite_ratios(struct measure_suite *r)
{
	size_t nb = r->suite.n_benchmarks;
	double *x = malloc(nb * sizeof(*x));

	if (!x)
		return -ENOMEM;
	for (size_t b = 0; b < nb; b++) {
		x[b] = time_ratio(&r->cmp[b]);
		if (x[b] < x[r->ratio_min])
			r->ratio_min = b;
		if (x[b] > x[r->ratio_max])
			r->ratio_max = b;
	}
	r->ratio_median = stats_median(x, nb);
	free(x);
	return 0;
}

static int pick_configs(struct measure_suite *r, const char *configs)
{
	const struct stats_suite *s = &r->suite;
	char a[256], *comma;

	if (!configs) {
		if (s->n_configs != 2) {
			fprintf(stderr, "lever compare: %s has %zu configurations (", s->name,
				s->n_configs);
			for (size_t i = 0; i < s->n_configs; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", s->configs[i]);
			fprintf(stderr, "); choose two with --configs A,B\n");
			return MEASURE_EXIT_USAGE;
		}
		r->config[0] = 0;
		r->config[1] = 1;
		return 0;
	}
	snprintf(a, sizeof(a), "%s", configs);
	comma = strchr(a, ',');
	if (!comma || strchr(comma + 1, ',')) {
		fprintf(stderr, "lever compare: --configs '%s': expected A,B\n", configs);
		return MEASURE_EXIT_USAGE;
	}
	*comma = '\0';
	r->config[0] = stats_suite_find_config(s, a);
	r->config[1] = stats_suite_find_config(s, comma + 1);
	for (int i = 0; i < 2; i++) {
		if (r->config[i] < 0) {
			fprintf(stderr, "lever compare: %s has no configuration '%s'\n", s->name,
				i ? comma + 1 : a);
			return MEASURE_EXIT_USAGE;
		}
	}
	if (r->config[0] == r->config[1]) {
		fprintf(stderr, "lever compare: --configs names the same configuration twice\n");
		return MEASURE_EXIT_USAGE;
	}
	return 0;
}

static int compare_cells(struct measure_suite *r, const struct measure_compare_options *o)
{
	const struct stats_suite *s = &r->suite;
	size_t nb = s->n_benchmarks;

	r->cmp = calloc(nb, sizeof(*r->cmp));
	r->cells = calloc(2 * nb, sizeof(*r->cells));
	r->sizes = calloc(2 * nb, sizeof(*r->sizes));
	if (!r->cmp || !r->cells || !r->sizes)
		return -ENOMEM;
	for (size_t b = 0; b < nb; b++) {
		for (int side = 0; side < 2; side++) {
			r->cells[2 * b + side] = stats_suite_cell(s, b, (size_t)r->config[side],
								  &r->sizes[2 * b + side]);
			if (!r->cells[2 * b + side])
				return -ENOMEM;
			if (r->sizes[2 * b + side] < 2) {
				fprintf(stderr,
					"lever compare: %s: benchmark %s has %zu runs of %s; need "
					"at least 2\n",
					s->name, s->benchmarks[b], r->sizes[2 * b + side],
					s->configs[r->config[side]]);
				return -EINVAL;
			}
		}
		stats_compare_samples(&r->cmp[b], &o->stats, s->configs[r->config[0]],
				      r->cells[2 * b], r->sizes[2 * b], s->configs[r->config[1]],
				      r->cells[2 * b + 1], r->sizes[2 * b + 1]);
		r->significant += r->cmp[b].significant;
		r->faster += r->cmp[b].significant && r->cmp[b].speedup.estimate > 1.0;
	}
	return 0;
}

/* The ANOVA over the runs of the two chosen configurations. */
static void suite_anova(struct measure_suite *r)
{
	const struct stats_suite *s = &r->suite;
	double *y = malloc(s->n * sizeof(*y));
	size_t *subj = malloc(s->n * sizeof(*subj)), *treat = malloc(s->n * sizeof(*treat)), n = 0;

	r->anova_err = -ENOMEM;
	if (y && subj && treat) {
		for (size_t i = 0; i < s->n; i++) {
			long c = (long)s->config[i];

			if (c != r->config[0] && c != r->config[1])
				continue;
			y[n] = s->time[i];
			subj[n] = s->benchmark[i];
			treat[n] = c == r->config[1];
			n++;
		}
		r->anova_err = stats_anova_within(y, subj, treat, n, s->n_benchmarks, 2, &r->anova);
	}
	free(y);
	free(subj);
	free(treat);
}

static struct report_table *suite_table(const struct measure_suite *r,
					const struct measure_compare_options *o)
{
	static const char *const head[] = {"benchmark", "n A",	  "n B",  "mean A", "mean B",
					   "speedup",	"CI",	  "test", "p",	    "sig",
					   "SW p A",	"SW p B", "BF p"};
	struct report_table *t = report_table_new(13, head);
	char b1[48], b2[48];

	if (!t)
		return NULL;
	for (size_t c = 1; c < 13; c++)
		report_table_align(t, c, c == 9 ? REPORT_LEFT : REPORT_RIGHT);
	for (size_t b = 0; b < r->suite.n_benchmarks; b++) {
		const struct stats_comparison *c = &r->cmp[b];

		report_table_row(t);
		report_table_cell(t, r->suite.benchmarks[b]);
		report_table_cellf(t, "%zu", c->a.n);
		report_table_cellf(t, "%zu", c->b.n);
		report_table_cell(
		    t, measure_format_value(&o->format, c->a.summary.mean, b1, sizeof(b1)));
		report_table_cell(
		    t, measure_format_value(&o->format, c->b.summary.mean, b2, sizeof(b2)));
		report_table_cellf(t, "%.4f%s", c->speedup.estimate,
				   c->speedup.estimate < 1.0 ? "*" : "");
		report_table_cellf(t, "[%.4f, %.4f]", c->speedup.low, c->speedup.high);
		report_table_cell(t, c->test == STATS_TEST_MANN_WHITNEY
					 ? "MW"
					 : (c->test == STATS_TEST_STUDENT ? "t" : "Welch"));
		report_table_cell(t, report_format_p(c->result.p, b1, sizeof(b1)));
		report_table_cell(t, c->significant ? "yes" : "no");
		report_table_cell(t, report_format_p(c->a.normality.p, b1, sizeof(b1)));
		report_table_cell(t, report_format_p(c->b.normality.p, b1, sizeof(b1)));
		report_table_cell(t, report_format_p(c->variance.p, b1, sizeof(b1)));
	}
	return t;
}

static void anova_text(const struct measure_suite *r, const struct measure_compare_options *o,
		       char *buf, size_t size)
{
	char p[32];

	if (r->anova_err) {
		snprintf(buf, size, "within-subjects ANOVA: not computable (%s)",
			 r->anova_err == -EDOM
			     ? "no variation"
			     : "every benchmark needs runs of both configurations");
		return;
	}
	snprintf(buf, size,
		 "Within-subjects ANOVA (benchmark = subject, configuration = treatment): "
		 "F(%.0f, %.0f) = %.3f, p = %s: the configuration's effect across the suite is %s "
		 "at alpha = %g.",
		 r->anova.df_treatment, r->anova.df_error, r->anova.f,
		 report_format_p(r->anova.p, p, sizeof(p)),
		 r->anova.p < o->stats.alpha ? "significant" : "NOT significant", o->stats.alpha);
}

static void caveat_text(const struct measure_suite *r, const struct measure_compare_options *o,
			char *buf, size_t size)
{
	size_t m = r->suite.n_benchmarks;

	snprintf(
	    buf, size,
	    "%zu of %zu per-benchmark tests are significant (%zu faster, %zu slower). "
	    "Multiple testing: with %zu tests at alpha = %g, about %.2f would be significant by "
	    "chance alone even if B changed nothing (expected false positives = tests x alpha); "
	    "rely on the ANOVA for the suite-wide question.",
	    r->significant, m, r->faster, r->significant - r->faster, m, o->stats.alpha,
	    (double)m * o->stats.alpha);
}

static void ratio_text(const struct measure_suite *r, char *buf, size_t size)
{
	const struct stats_comparison *cmp = r->cmp;

	snprintf(buf, size,
		 "Time ratio mean(B)/mean(A) across the %zu benchmarks: median %.4f, min %.4f "
		 "(%s), max %.4f (%s).",
		 r->suite.n_benchmarks, r->ratio_median, time_ratio(&cmp[r->ratio_min]),
		 r->suite.benchmarks[r->ratio_min], time_ratio(&cmp[r->ratio_max]),
		 r->suite.benchmarks[r->ratio_max]);
}

static void print_text(const struct measure_suite *r, const struct measure_compare_options *o)
{
	struct report_table *t = suite_table(r, o);
	char buf[512];

	printf("lever compare: suite %s, A = %s, B = %s%s\n\n", r->suite.name,
	       r->suite.configs[r->config[0]], r->suite.configs[r->config[1]],
	       r->drop_max ? " (largest run of each cell dropped)" : "");
	if (t) {
		report_table_print_text(t, stdout, "  ");
		report_table_free(t);
	}
	printf(
	    "  speedup = mean(A)/mean(B), * = B slower; CI: %.0f%% BCa bootstrap; test: Welch if\n"
	    "  both sides look normal, else Mann-Whitney (MW); SW p: Shapiro-Wilk normality of\n"
	    "  A and B; BF p: Brown-Forsythe test of equal variances of A and B\n\n",
	    o->stats.level * 100);
	ratio_text(r, buf, sizeof(buf));
	printf("%s\n\n", buf);
	anova_text(r, o, buf, sizeof(buf));
	printf("%s\n\n", buf);
	caveat_text(r, o, buf, sizeof(buf));
	printf("%s\n", buf);
}

/* A p-value for Markdown, bold below alpha as in the paper's Table 1. */
static void markdown_p(FILE *f, double p, double alpha)
{
	char buf[32];

	report_format_p(p, buf, sizeof(buf));
	fprintf(f, p < alpha ? " **%s** |" : " %s |", buf);
}

static void markdown_row(FILE *f, const struct measure_suite *r, size_t b,
			 const struct measure_compare_options *o)
{
	const struct stats_comparison *c = &r->cmp[b];
	char m1[48], m2[48];

	fprintf(f, "| %s | %zu | %zu | %s | %s | %.4f | %.3f |", r->suite.benchmarks[b], c->a.n,
		c->b.n, measure_format_value(&o->format, c->a.summary.mean, m1, sizeof(m1)),
		measure_format_value(&o->format, c->b.summary.mean, m2, sizeof(m2)), time_ratio(c),
		sd_ratio(c));
	markdown_p(f, c->a.normality.p, o->stats.alpha);
	markdown_p(f, c->b.normality.p, o->stats.alpha);
	markdown_p(f, c->variance.p, o->stats.alpha);
	fprintf(f, " %s |",
		c->test == STATS_TEST_MANN_WHITNEY
		    ? "MW"
		    : (c->test == STATS_TEST_STUDENT ? "t" : "Welch"));
	markdown_p(f, c->result.p, o->stats.alpha);
	fputc('\n', f);
}

/* The suite as a Markdown table in the form of the paper's Table 1, then the verdicts. */
static int write_markdown(const struct measure_suite *r, const char *path,
			  const struct measure_compare_options *o)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	char buf[512];
	int err;

	if (!f)
		return -errno;
	fprintf(f, "A = %s, B = %s%s; bold: p < %g.\n\n", r->suite.configs[r->config[0]],
		r->suite.configs[r->config[1]],
		r->drop_max ? "; the largest run of each cell dropped" : "", o->stats.alpha);
	fputs("| benchmark | runs A | runs B | mean A | mean B | B/A | sd B/A | SW p A | SW p B "
	      "| BF p | test | p |\n",
	      f);
	fputs("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n", f);
	for (size_t b = 0; b < r->suite.n_benchmarks; b++)
		markdown_row(f, r, b, o);
	fputs("\nB/A = mean(B)/mean(A); sd B/A = sd(B)/sd(A); SW p: Shapiro-Wilk normality; "
	      "BF p: Brown-Forsythe equal variances of A and B; test: Welch if both sides look "
	      "normal, else Mann-Whitney (MW), with its p.\n\n",
	      f);
	ratio_text(r, buf, sizeof(buf));
	fprintf(f, "%s\n\n", buf);
	anova_text(r, o, buf, sizeof(buf));
	fprintf(f, "%s\n\n", buf);
	caveat_text(r, o, buf, sizeof(buf));
	fprintf(f, "%s\n", buf);
	err = ferror(f) ? -EIO : 0;
	if (f != stdout && fclose(f))
		err = -errno;
	return err;
}

static void print_json(const struct measure_suite *r, const struct measure_compare_options *o)
{
	struct report_json j;
	char buf[512];

	report_json_init(&j, stdout);
	report_json_object_begin(&j);
	report_json_kv_string(&j, "suite", r->suite.name);
	report_json_kv_string(&j, "a", r->suite.configs[r->config[0]]);
	report_json_kv_string(&j, "b", r->suite.configs[r->config[1]]);
	report_json_kv_bool(&j, "drop_max", r->drop_max);
	report_json_kv_number(&j, "alpha", o->stats.alpha);
	report_json_key(&j, "benchmarks");
	report_json_array_begin(&j);
	for (size_t b = 0; b < r->suite.n_benchmarks; b++) {
		report_json_object_begin(&j);
		report_json_kv_string(&j, "benchmark", r->suite.benchmarks[b]);
		report_json_kv_number(&j, "time_ratio", time_ratio(&r->cmp[b]));
		report_json_kv_number(&j, "sd_ratio", sd_ratio(&r->cmp[b]));
		report_json_key(&j, "comparison");
		report_json_object_begin(&j);
		measure_comparison_json_fields(&r->cmp[b], &j);
		report_json_object_end(&j);
		report_json_object_end(&j);
	}
	report_json_array_end(&j);
	report_json_key(&j, "time_ratio");
	report_json_object_begin(&j);
	report_json_kv_number(&j, "median", r->ratio_median);
	report_json_kv_number(&j, "min", time_ratio(&r->cmp[r->ratio_min]));
	report_json_kv_string(&j, "min_benchmark", r->suite.benchmarks[r->ratio_min]);
	report_json_kv_number(&j, "max", time_ratio(&r->cmp[r->ratio_max]));
	report_json_kv_string(&j, "max_benchmark", r->suite.benchmarks[r->ratio_max]);
	report_json_object_end(&j);
	report_json_key(&j, "anova");
	report_json_object_begin(&j);
	report_json_kv_string(&j, "design",
			      "one-way within subjects: time ~ config + Error(benchmark/config)");
	report_json_kv_number(&j, "F", r->anova.f);
	report_json_kv_number(&j, "df1", r->anova.df_treatment);
	report_json_kv_number(&j, "df2", r->anova.df_error);
	report_json_kv_number(&j, "ss_config", r->anova.ss_treatment);
	report_json_kv_number(&j, "ss_error", r->anova.ss_error);
	report_json_kv_number(&j, "p", r->anova.p);
	report_json_object_end(&j);
	report_json_kv_integer(&j, "tests", (long long)r->suite.n_benchmarks);
	report_json_kv_integer(&j, "significant", (long long)r->significant);
	report_json_kv_number(&j, "expected_false_positives",
			      (double)r->suite.n_benchmarks * o->stats.alpha);
	caveat_text(r, o, buf, sizeof(buf));
	report_json_kv_string(&j, "caveat", buf);
	report_json_object_end(&j);
	report_json_finish(&j);
}

struct suite_html {
	const struct measure_suite *r;
	const struct measure_compare_options *o;
};

static void suite_html_body(FILE *f, const void *arg)
{
	const struct suite_html *h = arg;
	struct report_table *t = suite_table(h->r, h->o);
	char buf[512];

	anova_text(h->r, h->o, buf, sizeof(buf));
	fputs("<p class=\"verdict\">", f);
	report_html_escape(f, buf);
	fputs("</p>\n", f);
	caveat_text(h->r, h->o, buf, sizeof(buf));
	report_html_paragraph(f, buf);
	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
	report_html_paragraph(f,
			      "Charts: each benchmark's runs divided by the mean of its A runs.");
}

/* HTML: times relative to each benchmark's mean under A, so the suite shares one axis. */
static int write_html(struct measure_suite *r, const char *path,
		      const struct measure_compare_options *o)
{
	size_t nb = r->suite.n_benchmarks, k = 2 * nb;
	struct report_series *series = calloc(k, sizeof(*series));
	double **rel = calloc(k, sizeof(*rel));
	char **names = calloc(k, sizeof(*names));
	struct measure_value_format plain = {0};
	struct suite_html h = {r, o};
	int err = -ENOMEM;

	if (!series || !rel || !names)
		goto out;
	for (size_t i = 0; i < k; i++) {
		double base = r->cmp[i / 2].a.summary.mean;

		rel[i] = malloc(r->sizes[i] * sizeof(**rel));
		if (!rel[i] || asprintf(&names[i], "%s %s", r->suite.benchmarks[i / 2],
					r->suite.configs[r->config[i % 2]]) < 0) {
			names[i] = NULL;
			goto out;
		}
		for (size_t j = 0; j < r->sizes[i]; j++)
			rel[i][j] = r->cells[i][j] / base;
		series[i] = (struct report_series){names[i], rel[i], r->sizes[i]};
	}
	err = measure_write_html(path, "lever compare: suite", series, k, &plain, suite_html_body,
				 &h);
out:
	for (size_t i = 0; rel && names && i < k; i++) {
		free(rel[i]);
		free(names[i]);
	}
	free(rel);
	free(names);
	free(series);
	return err;
}

void measure_suite_free(struct measure_suite *r)
{
	for (size_t i = 0; r->cells && i < 2 * r->suite.n_benchmarks; i++)
		free(r->cells[i]);
	free(r->cells);
	free(r->sizes);
	free(r->cmp);
	stats_suite_free(&r->suite);
	memset(r, 0, sizeof(*r));
}

int measure_suite_analyse(struct measure_suite *r, const char *configs, bool drop_max,
			  const struct measure_compare_options *o)
{
	int rc = pick_configs(r, configs);

	if (rc)
		return rc;
	r->drop_max = drop_max;
	if (drop_max)
		r->dropped = stats_suite_drop_max(&r->suite);
	if (compare_cells(r, o) || suite_ratios(r))
		return 1;
	suite_anova(r);
	return 0;
}

int measure_suite_compare(const char *path, const char *configs,
			  const struct measure_suite_outputs *want,
			  const struct measure_compare_options *o)
{
	struct measure_suite r;
	char err[512];
	int rc = 1;

	memset(&r, 0, sizeof(r));
	if (stats_suite_read_file(path, &r.suite, err, sizeof(err)) ||
	    measure_check_times(path, r.suite.time, r.suite.n, &o->format, err, sizeof(err))) {
		fprintf(stderr, "lever compare: %s\n", err);
		goto out;
	}
	rc = measure_suite_analyse(&r, configs, want->drop_max, o);
	if (rc)
		goto out;
	if (want->json)
		print_json(&r, o);
	else if (!want->markdown || strcmp(want->markdown, "-"))
		print_text(&r, o);
	if (want->html) {
		int e = write_html(&r, want->html, o);

		if (e) {
			fprintf(stderr, "lever compare: cannot write %s: %s\n", want->html,
				strerror(-e));
			rc = 1;
		}
	}
	if (want->markdown) {
		int e = write_markdown(&r, want->markdown, o);

		if (e) {
			fprintf(stderr, "lever compare: cannot write %s: %s\n", want->markdown,
				strerror(-e));
			rc = 1;
		}
	}
out:
	measure_suite_free(&r);
	return rc;
}
