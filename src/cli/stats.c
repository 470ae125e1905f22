/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever stats FILE...: descriptive statistics and normality of the samples
 * in sample files (doc/formats/samples.md), and with several files the
 * Brown-Forsythe test of equal variances across them. The analysis is in
 * src/measure (stats_report.c) over src/stats.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/run_options.h"

static const char stats_description[] =
    "Descriptive statistics and normality of the samples in each FILE (one number\n"
    "per line, '#' comments; '-' is standard input; see doc/formats/samples.md):\n"
    "n, mean, standard deviation, median, MAD, min, max, coefficient of variation,\n"
    "quartiles, confidence interval of the mean, Shapiro-Wilk normality test and\n"
    "outliers. With several files, also the Brown-Forsythe test of equal variances.\n"
    "Values in a time unit must be positive.\n";

struct stats_cli {
	struct measure_value_format format;
	double alpha;
	bool drop_max, json, force;
	const char *html;
	int unit;
};

/* Returns 0 with *first the first FILE, CLI_HELP after --help, or an exit status. */
static int parse_args(struct stats_cli *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_ENUM('u', "unit", &o->unit, "UNIT", run_unit_names,
		     "the unit of the values: s (default), ms, us, ns, or none\n"
		     "for plain numbers"),
	    CLI_CALLBACK(0, "alpha", "A", run_option_alpha, "significance level (default 0.05)",
			 .value = &o->alpha, .what = "a level 0 < A < 1"),
	    CLI_FLAG(0, "drop-max", &o->drop_max,
		     "drop the largest value of each file first (the cleaning\n"
		     "the Stabilizer authors applied; off by default)"),
	    CLI_FLAG(0, "json", &o->json, "write JSON to standard output instead of text"),
	    CLI_STRING(0, "html", &o->html, "FILE",
		       "also write a self-contained HTML report with\n"
		       "distributions and Q-Q plots"),
	    CLI_FLAG(0, "force", &o->force,
		     "let --html replace an existing profile or samples file"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever stats",
	    .usage = "usage: lever stats [OPTIONS] FILE...",
	    .description = stats_description,
	    .options = table,
	    .epilogue = "Exit status: 0; 1 if a file cannot be read; 2 for a usage error.\n"
			"See doc/stats.md.\n",
	};
	int rc = cli_parse(&cmd, argc, argv, NULL, first);

	if (!rc && *first >= argc)
		rc = cli_usage_error(&cmd, "no sample file given");
	o->format = run_unit_format(o->unit);
	return rc;
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

static int stats_main(int argc, char **argv)
{
	struct stats_cli o = {.alpha = 0.05};
	struct stats_samples *files;
	size_t k;
	int rc, first;

	rc = parse_args(&o, argc, argv, &first);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	k = (size_t)(argc - first);
	if (check_report_outputs("lever stats", &o.html, 1, (const char *const *)(argv + first), k,
				 o.force))
		return 1;
	files = calloc(k, sizeof(*files));
	if (!files)
		return 1;
	rc = read_files(argv + first, k, &o, files);
	if (!rc)
		rc = analyse(files, k, &o);
	for (size_t i = 0; i < k; i++)
		stats_samples_free(&files[i]);
	free(files);
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	int rc = stats_main(argc, argv);

	return measure_finish_stdout("lever stats") ? 1 : rc;
}
