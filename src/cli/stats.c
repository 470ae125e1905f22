/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever stats FILE...: descriptive statistics and normality of the samples
 * in sample files (doc/formats/samples.md), and with several files the
 * Brown-Forsythe test of equal variances across them. The analysis is in
 * src/measure (stats_report.c) over src/stats.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"
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
	struct measure_value_format format;
	double alpha;
	bool drop_max, json;
	const char *html;
};

static int stats_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever stats: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever stats --help' for usage.\n");
	return MEASURE_EXIT_USAGE;
}

static int analyse(struct stats_samples *files, size_t k, const struct stats_cli *o)
{
	struct measure_sample_set set;
	int rc = 0, err;

	if (measure_sample_set_describe(&set, files, k)) {
		fprintf(stderr, "lever stats: out of memory\n");
		measure_sample_set_free(&set);
		return 1;
	}
	if (o->json)
		measure_sample_set_json(&set, o->alpha, o->drop_max, stdout);
	else
		measure_sample_set_text(&set, &o->format, o->alpha, stdout);
	if (o->html && (err = measure_sample_set_html(&set, o->html, &o->format, o->alpha))) {
		fprintf(stderr, "lever stats: cannot write %s: %s\n", o->html, strerror(-err));
		rc = 1;
	}
	measure_sample_set_free(&set);
	return rc;
}

static int read_files(char **paths, size_t k, const struct stats_cli *o,
		      struct stats_samples *files)
{
	char err[512];

	for (size_t i = 0; i < k; i++) {
		if (stats_samples_read_file(paths[i], &files[i], err, sizeof(err)) ||
		    measure_check_times(paths[i], files[i].values, files[i].n, &o->format, err,
					sizeof(err))) {
			fprintf(stderr, "lever stats: %s\n", err);
			return 1;
		}
		if (o->drop_max)
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
			if (measure_parse_unit(optarg, &o.format))
				return stats_usage_error("unknown unit '%s' (s, ms, us, ns, none)",
							 optarg);
			break;
		case OPT_ALPHA:
			if (measure_parse_alpha(optarg, &o.alpha))
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
	rc = read_files(argv + optind, k, &o, files);
	if (!rc)
		rc = analyse(files, k, &o);
	for (size_t i = 0; i < k; i++)
		stats_samples_free(&files[i]);
	free(files);
	return rc;
}
