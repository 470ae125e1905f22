/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever stats FILE...: descriptive statistics and normality of the samples
 * in sample files (doc/formats/samples.md), and with several files the
 * Brown-Forsythe test of equal variances across them.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_common.h"
#include "cli/commands.h"

static const char stats_usage[] =
    "usage: lever stats [OPTIONS] FILE...\n"
    "\n"
    "Descriptive statistics and normality of the samples in each FILE (one number\n"
    "per line, '#' comments; '-' is standard input; see doc/formats/samples.md):\n"
    "n, mean, standard deviation, median, MAD, min, max, coefficient of variation,\n"
    "quartiles, confidence interval of the mean, Shapiro-Wilk normality test and\n"
    "outliers. With several files, also the Brown-Forsythe test of equal variances.\n"
    "\n"
    "  -u, --unit UNIT     the unit of the values: s (default), ms, us, ns, or none\n"
    "                      for plain numbers\n"
    "      --alpha A       significance level (default 0.05)\n"
    "      --drop-max      drop the largest value of each file first (the cleaning\n"
    "                      the Stabilizer authors applied; off by default)\n"
    "      --json          write JSON to standard output instead of text\n"
    "      --html FILE     also write a self-contained HTML report with\n"
    "                      distributions and Q-Q plots\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0; 1 if a file cannot be read; 2 for a usage error.\n"
    "See doc/stats.md.\n";

struct stats_cli {
	struct value_format format;
	double alpha;
	bool drop_max, json;
	const char *html;
};

static int stats_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever stats: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever stats --help' for usage.\n");
	return EXIT_USAGE;
}

/* "s", "ms", "us", "ns" or "none" to a factor to seconds (0 = plain numbers). */
int parse_value_unit(const char *text, struct value_format *vf)
{
	static const struct {
		const char *name;
		double to_seconds;
	} units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"none", 0.0}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(text, units[i].name) == 0) {
			vf->to_seconds = units[i].to_seconds;
			return 0;
		}
	}
	return -1;
}

int parse_alpha(const char *text, double *alpha)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !(v > 0.0 && v < 1.0))
		return -1;
	*alpha = v;
	return 0;
}

static void print_text(const struct sample_description *d, size_t k, const struct stats_cli *o,
		       const struct stats_test *bf)
{
	char lo[48], hi[48], q1[48], q3[48], norm[160], p[32];

	for (size_t i = 0; i < k; i++) {
		printf("%s\n", d[i].name);
		printf("  n = %zu, mean = %s, sd = %s, CV = %.2f%%\n", d[i].n,
		       format_value(&o->format, d[i].summary.mean, lo, sizeof(lo)),
		       format_value(&o->format, d[i].summary.sd, hi, sizeof(hi)),
		       d[i].summary.cv * 100);
		printf("  min = %s, Q1 = %s, median = %s, ",
		       format_value(&o->format, d[i].summary.min, lo, sizeof(lo)),
		       format_value(&o->format, d[i].summary.q1, q1, sizeof(q1)),
		       format_value(&o->format, d[i].summary.median, hi, sizeof(hi)));
		printf("Q3 = %s, max = %s\n",
		       format_value(&o->format, d[i].summary.q3, q3, sizeof(q3)),
		       format_value(&o->format, d[i].summary.max, lo, sizeof(lo)));
		printf("  MAD = %s, 95%% CI of mean [%s, %s]\n",
		       format_value(&o->format, d[i].summary.mad, q1, sizeof(q1)),
		       format_value(&o->format, d[i].ci_mean.low, lo, sizeof(lo)),
		       format_value(&o->format, d[i].ci_mean.high, hi, sizeof(hi)));
		printf("  normality: %s\n", normality_text(&d[i], o->alpha, norm, sizeof(norm)));
		if (d[i].outliers)
			printf("  outliers: %zu (modified Z-score > 10)\n", d[i].outliers);
	}
	if (k > 1) {
		struct report_table *t = sample_table(d, k, &o->format, o->alpha);

		printf("\n");
		if (t) {
			report_table_print_text(t, stdout, "");
			report_table_free(t);
		}
		if (!isnan(bf->p))
			printf(
			    "\nBrown-Forsythe test of equal variances: F(%.0f, %.0f) = %.3f, p = %s"
			    " (%s at alpha = %g)\n",
			    bf->df1, bf->df2, bf->statistic, report_format_p(bf->p, p, sizeof(p)),
			    bf->p < o->alpha ? "variances differ" : "no evidence variances differ",
			    o->alpha);
	}
}

static void print_json(const struct sample_description *d, size_t k, const struct stats_cli *o,
		       const struct stats_test *bf)
{
	struct report_json j;

	report_json_init(&j, stdout);
	report_json_object_begin(&j);
	report_json_kv_number(&j, "alpha", o->alpha);
	report_json_kv_bool(&j, "drop_max", o->drop_max);
	report_json_key(&j, "samples");
	report_json_array_begin(&j);
	for (size_t i = 0; i < k; i++)
		sample_description_json(&d[i], &j, false);
	report_json_array_end(&j);
	if (k > 1) {
		report_json_key(&j, "brown_forsythe");
		report_json_object_begin(&j);
		report_json_kv_number(&j, "F", bf->statistic);
		report_json_kv_number(&j, "df1", bf->df1);
		report_json_kv_number(&j, "df2", bf->df2);
		report_json_kv_number(&j, "p", bf->p);
		report_json_object_end(&j);
	}
	report_json_object_end(&j);
	report_json_finish(&j);
}

struct stats_html {
	const struct sample_description *d;
	size_t k;
	const struct stats_cli *o;
};

static void stats_html_body(FILE *f, const void *arg)
{
	const struct stats_html *h = arg;
	struct report_table *t = sample_table(h->d, h->k, &h->o->format, h->o->alpha);

	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
}

static int analyse(struct stats_samples *files, size_t k, const struct stats_cli *o)
{
	struct sample_description *d = calloc(k, sizeof(*d));
	const double **groups = calloc(k, sizeof(*groups));
	size_t *sizes = calloc(k, sizeof(*sizes));
	struct report_series *series = calloc(k, sizeof(*series));
	struct stats_test bf = {NAN, NAN, NAN, NAN};
	int rc = 0;

	if (!d || !groups || !sizes || !series) {
		fprintf(stderr, "lever stats: out of memory\n");
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < k; i++) {
		describe_sample(&d[i], files[i].name, files[i].values, files[i].n, 0.95);
		groups[i] = files[i].values;
		sizes[i] = files[i].n;
		series[i] = (struct report_series){files[i].name, files[i].values, files[i].n};
	}
	if (k > 1)
		stats_brown_forsythe(groups, sizes, k, &bf);
	if (o->json)
		print_json(d, k, o, &bf);
	else
		print_text(d, k, o, &bf);
	if (o->html) {
		struct stats_html h = {d, k, o};
		int err = write_html_report(o->html, "lever stats", series, k, &o->format,
					    stats_html_body, &h);

		if (err) {
			fprintf(stderr, "lever stats: cannot write %s: %s\n", o->html,
				strerror(-err));
			rc = 1;
		}
	}
out:
	free(d);
	free(groups);
	free(sizes);
	free(series);
	return rc;
}

static int read_files(char **paths, size_t k, bool drop_max, struct stats_samples *files)
{
	char err[512];

	for (size_t i = 0; i < k; i++) {
		if (stats_samples_read_file(paths[i], &files[i], err, sizeof(err))) {
			fprintf(stderr, "lever stats: %s\n", err);
			return 1;
		}
		if (drop_max)
			files[i].n = stats_drop_max(files[i].values, files[i].n);
		if (files[i].n == 0) {
			fprintf(stderr, "lever stats: %s: no values left after --drop-max\n",
				paths[i]);
			return 1;
		}
	}
	return 0;
}

enum { OPT_ALPHA = 0x100, OPT_DROP_MAX, OPT_JSON, OPT_HTML };

static const struct option stats_options[] = {
    {"unit", required_argument, NULL, 'u'},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"drop-max", no_argument, NULL, OPT_DROP_MAX},
    {"json", no_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_stats(int argc, char **argv)
{
	struct stats_cli o = {.format = {1.0}, .alpha = 0.05};
	struct stats_samples *files;
	size_t k;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":u:h", stats_options, NULL)) != -1) {
		switch (c) {
		case 'u':
			if (parse_value_unit(optarg, &o.format))
				return stats_usage_error("unknown unit '%s' (s, ms, us, ns, none)",
							 optarg);
			break;
		case OPT_ALPHA:
			if (parse_alpha(optarg, &o.alpha))
				return stats_usage_error("--alpha '%s': need 0 < A < 1", optarg);
			break;
		case OPT_DROP_MAX:
			o.drop_max = true;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_HTML:
			o.html = optarg;
			break;
		case 'h':
			fputs(stats_usage, stdout);
			return 0;
		case ':':
			return stats_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return stats_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return stats_usage_error("%s", "no sample file given");
	k = (size_t)(argc - optind);
	files = calloc(k, sizeof(*files));
	if (!files)
		return 1;
	rc = read_files(argv + optind, k, o.drop_max, files);
	if (!rc)
		rc = analyse(files, k, &o);
	for (size_t i = 0; i < k; i++)
		stats_samples_free(&files[i]);
	free(files);
	return rc;
}
