/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever compare: is B faster than A, and is the difference real?
 *   lever compare [OPTIONS] -- 'CMD_A' 'CMD_B'   runs interleaved A B A B ...
 *   lever compare [OPTIONS] --samples A.txt B.txt
 *   lever compare [OPTIONS] --suite FILE          benchmarks x two configurations
 * Each pair: normality of each side, Welch's t or Mann-Whitney chosen by it,
 * the speedup mean(A)/mean(B) with a BCa bootstrap interval, and a verdict.
 * A suite adds the within-subjects ANOVA (benchmark = subject) and the
 * multiple-testing caveat.
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

static const char compare_description[] =
    "Compare the running time of A (the baseline) and B. With two commands, runs\n"
    "them interleaved (A B A B ...) so that drift affects both, each run with a\n"
    "random-size environment; with --samples, reads timings from files (one number\n"
    "per line, doc/formats/samples.md). Tests each side for normality (Shapiro-Wilk),\n"
    "then compares with Welch's t-test if both look normal, else Mann-Whitney U,\n"
    "and reports the speedup mean(A)/mean(B) with a BCa bootstrap confidence\n"
    "interval and a verdict such as \"B is 3.1% ± 0.8% faster than A, p = 0.002;\n"
    "significant at alpha = 0.05\".\n"
    "\n"
    "With --suite, FILE holds runs of several benchmarks under two configurations\n"
    "(CSV with columns benchmark, time, config; see doc/formats/samples.md): each\n"
    "benchmark is compared as above, then a one-way within-subjects ANOVA across\n"
    "the suite tests the configuration's effect, and the expected number of false\n"
    "positives among the per-benchmark tests is printed.\n";

static const char *const test_names[] = {"auto", "welch", "student", "mann-whitney", NULL};

struct compare_cli {
	struct measure_compare_options cmp;
	struct measure_options run;
	const char *suite, *configs, *html, *markdown;
	bool samples, drop_max, json, force;
	int test, unit;
	uint64_t resamples;
};

/* Returns 0 with *first the first operand, CLI_HELP after --help, or an exit status. */
static int parse_args(struct compare_cli *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_GROUP("Analysis"),
	    CLI_FLAG(0, "samples", &o->samples, "the two arguments are sample files"),
	    CLI_STRING(0, "suite", &o->suite, "FILE", "compare the configurations of a suite file"),
	    CLI_STRING(0, "configs", &o->configs, "A,B",
		       "the suite's baseline and new configuration (default:\n"
		       "the two in the file, in order of appearance)"),
	    CLI_FLAG(0, "drop-max", &o->drop_max,
		     "drop the largest run of each sample or suite cell first\n"
		     "(the cleaning the Stabilizer authors applied; off by\n"
		     "default)"),
	    CLI_CALLBACK(0, "alpha", "A", run_option_alpha, "significance level (default 0.05)",
			 .value = &o->cmp.stats.alpha, .what = "a level 0 < A < 1"),
	    CLI_ENUM(0, "test", &o->test, "T", test_names,
		     "auto (default), welch, student or mann-whitney"),
	    CLI_UINT(0, "bootstrap", &o->resamples, "N", 100, 10000000,
		     "bootstrap resamples (default 10000)", .what = "100..10000000"),
	    CLI_ENUM('u', "unit", &o->unit, "UNIT", run_unit_names,
		     "unit of sample and suite values: s (default), ms, us, ns,\n"
		     "none"),
	    CLI_FLAG(0, "json", &o->json, "write JSON to standard output instead of text"),
	    CLI_STRING(0, "html", &o->html, "FILE", "also write a self-contained HTML report"),
	    CLI_STRING(0, "export-markdown", &o->markdown, "FILE",
		       "also write the table as Markdown ('-': standard\n"
		       "output, instead of the text); for a suite, with\n"
		       "mean(B)/mean(A), sd(B)/sd(A) and p < alpha in bold"),
	    CLI_FLAG(0, "force", &o->force,
		     "let --html or --export-markdown replace an existing\n"
		     "profile or samples file"),
	    RUN_OPTIONS(&o->run),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever compare",
	    .usage = "usage: lever compare [OPTIONS] -- 'CMD_A' 'CMD_B'\n"
		     "       lever compare [OPTIONS] --samples A.txt B.txt\n"
		     "       lever compare [OPTIONS] --suite FILE",
	    .description = compare_description,
	    .options = table,
	    .epilogue =
		"With two commands the defaults are 30 runs of each and at least 3 s.\n"
		"A command without shell syntax is split into words and run directly;\n"
		"otherwise it runs under /bin/sh -c.\n"
		"Ctrl-C stops the run going on and still compares the runs done.\n"
		"Exit status: 0 when the comparison was made (whatever its verdict); 1 on an\n"
		"error (unreadable file, failing command, timeout, unwritable output); 128 + N\n"
		"after signal N (SIGINT: 130); 2 for a usage error.\n"
		"See doc/compare.md.\n",
	};
	int rc = cli_parse(&cmd, argc, argv, NULL, first);

	if (rc)
		return rc;
	o->cmp.stats.test = (enum stats_compare_test)o->test;
	o->cmp.stats.resamples = o->resamples;
	o->cmp.format = run_unit_format(o->unit);
	return 0;
}

/* For the usage errors found after parsing (combinations, operands): the common path. */
static const struct cli_command compare_command = {.name = "lever compare"};

/* ------------------------------------------------------------ output */

static int output_comparison(const struct compare_cli *o, const struct stats_comparison *c,
			     const char *title, const struct measure_result *res)
{
	struct measure_comparison_report r = {c, &o->cmp.format, title, &o->run, res};
	int err = 0;

	if (o->markdown) {
		FILE *f = strcmp(o->markdown, "-") ? fopen(o->markdown, "w") : stdout;

		err = f ? measure_comparison_report_markdown(&r, f) : -errno;
		if (f && f != stdout && fclose(f) && !err)
			err = -errno;
		if (err) {
			fprintf(stderr, "lever compare: cannot write %s: %s\n", o->markdown,
				strerror(-err));
			return 1;
		}
	}
	if (o->json)
		measure_comparison_report_json(&r, stdout);
	else if (!o->markdown || strcmp(o->markdown, "-"))
		measure_comparison_report_text(&r, stdout);
	if (o->html && (err = measure_comparison_report_html(&r, o->html))) {
		fprintf(stderr, "lever compare: cannot write %s: %s\n", o->html, strerror(-err));
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ modes */

/* The output files, before anything is read or run: 0, or 1 after saying why not. */
static int check_outputs(const struct compare_cli *o, char **inputs, int n_inputs)
{
	const char *outs[] = {o->html, o->markdown};

	return check_report_outputs("lever compare", outs, 2, (const char *const *)inputs,
				    (size_t)n_inputs, o->force);
}
static int compare_files(struct compare_cli *o, char **paths)
{
	struct stats_samples s[2] = {{0}, {0}};
	struct stats_comparison c;
	char err[512];
	int rc = 1;

	for (int i = 0; i < 2; i++) {
		if (stats_samples_read_file(paths[i], &s[i], err, sizeof(err)) ||
		    measure_check_times(paths[i], s[i].values, s[i].n, &o->cmp.format, err,
					sizeof(err))) {
			fprintf(stderr, "lever compare: %s\n", err);
			goto out;
		}
		if (o->drop_max)
			s[i].n = stats_drop_max(s[i].values, s[i].n);
		if (s[i].n < 2) {
			fprintf(stderr, "lever compare: %s: need at least 2 values, have %zu\n",
				paths[i], s[i].n);
			goto out;
		}
	}
	stats_compare_samples(&c, &o->cmp.stats, paths[0], s[0].values, s[0].n, paths[1],
			      s[1].values, s[1].n);
	rc = output_comparison(o, &c, "lever compare: samples", NULL);
out:
	stats_samples_free(&s[0]);
	stats_samples_free(&s[1]);
	return rc;
}

/* The comparison of the runs in res; 0 or 1. */
static int compare_runs(struct compare_cli *o, const struct measure_result *res)
{
	struct stats_comparison c;

	if (res[0].n < 2 || res[1].n < 2) {
		fprintf(stderr, "lever compare: %zu and %zu runs; need at least 2 of each\n",
			res[0].n, res[1].n);
		return 1;
	}
	stats_compare_samples(&c, &o->cmp.stats, res[0].command->display, res[0].wall, res[0].n,
			      res[1].command->display, res[1].wall, res[1].n);
	return output_comparison(o, &c, "lever compare: commands (interleaved runs)", res);
}

static int compare_commands(struct compare_cli *o, char **texts)
{
	struct measure_command cmd[2];
	struct measure_result res[2];
	struct measure_session session;
	int rc = 1, ending;

	memset(res, 0, sizeof(res));
	memset(cmd, 0, sizeof(cmd));
	if (measure_command_from_string(&cmd[0], texts[0]) ||
	    measure_command_from_string(&cmd[1], texts[1])) {
		fprintf(stderr, "lever compare: a command is empty or has unbalanced quotes\n");
		measure_command_free(&cmd[0]);
		measure_command_free(&cmd[1]);
		return EXIT_USAGE;
	}
	rc = check_outputs(o, NULL, 0);
	if (!rc)
		rc = measure_randomization_check(&o->run, cmd, 2, "lever compare");
	if (!rc)
		rc = measure_session_init(&session, &o->run, "lever compare");
	if (!rc) {
		rc = measure_commands(&session, cmd, 2, res);
		if (!rc)
			rc = compare_runs(o, res);
		else if (measure_session_ending(&session, &ending))
			rc = compare_runs(o, res) ? 1 : ending;
	}
	for (int i = 0; i < 2; i++) {
		measure_result_free(&res[i]);
		measure_command_free(&cmd[i]);
	}
	return rc;
}

static int compare_main(int argc, char **argv)
{
	struct compare_cli o;
	int rc, nargs, first;

	memset(&o, 0, sizeof(o));
	measure_compare_options_init(&o.cmp);
	o.resamples = o.cmp.stats.resamples;
	measure_options_init(&o.run);
	o.run.min_runs = 30;
	rc = parse_args(&o, argc, argv, &first);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	rc = measure_options_check(&o.run, "lever compare");
	if (rc)
		return rc;
	if (o.samples && o.suite)
		return cli_usage_error(&compare_command, "%s",
				       "--samples and --suite exclude each other");
	if ((o.samples || o.suite) && (measure_options_stabilizer(&o.run) || o.run.randomize_link))
		return cli_usage_error(&compare_command, "%s",
				       "--randomize=heap/code/stack/link randomizes runs "
				       "of commands; --samples and --suite run none");
	/* the analysis of files is reproducible unless --seed says otherwise */
	o.cmp.stats.seed = o.run.seed_given || !(o.samples || o.suite) ? o.run.seed : 1;
	nargs = argc - first;
	if (o.json && o.markdown && !strcmp(o.markdown, "-"))
		return cli_usage_error(&compare_command, "%s",
				       "--json and --export-markdown - both want "
				       "standard output");
	if (o.suite) {
		struct measure_suite_outputs want = {o.drop_max, o.json, o.html, o.markdown};

		if (nargs)
			return cli_usage_error(
			    &compare_command, "unexpected argument '%s' with --suite", argv[first]);
		if (check_outputs(&o, (char **)&o.suite, 1))
			return 1;
		return measure_suite_compare(o.suite, o.configs, &want, &o.cmp);
	}
	if (o.samples) {
		if (nargs != 2)
			return cli_usage_error(&compare_command, "%s",
					       "--samples needs two files: A.txt B.txt");
		if (check_outputs(&o, argv + first, 2))
			return 1;
		return compare_files(&o, argv + first);
	}
	if (nargs != 2)
		return cli_usage_error(&compare_command, "%s",
				       "need two commands: lever compare -- 'CMD_A' 'CMD_B' (or "
				       "--samples or --suite)");
	return compare_commands(&o, argv + first);
}

int cmd_compare(int argc, char **argv)
{
	int rc = compare_main(argc, argv);

	return measure_finish_stdout("lever compare") ? 1 : rc;
}
