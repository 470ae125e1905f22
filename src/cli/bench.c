/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever bench [OPTIONS] -- COMMAND [ARGS...]: run a command repeatedly and
 * describe its running time (hyperfine's job, with Stabilizer's statistics):
 * warm-up runs, run limits, prepare and cleanup commands, a random-size
 * environment per run, wall/user/system time and peak RSS per run, outliers,
 * normality, a confidence interval of the mean, and exports to JSON, CSV and
 * Markdown. The runs and the statistics are in src/measure.
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

static const char bench_description[] =
    "Run COMMAND repeatedly and report its running time: mean ± standard deviation,\n"
    "user and system time, min/max, median ± MAD, a confidence interval of the mean,\n"
    "peak memory (RSS), outliers, and whether the times look normally distributed\n"
    "(Shapiro-Wilk). Every run gets an environment variable of random length\n"
    "(LEVER_RANDOMIZED_ENVIRONMENT_OFFSET, 0-4095 bytes), which moves the stack and\n"
    "so randomizes the placement bias a fixed environment would bake into every run;\n"
    "--randomize adds Stabilizer's heap, code and stack randomization per run.\n"
    "After '--' the command and its arguments are executed directly; a single\n"
    "string is split into words, or run by /bin/sh -c if it has shell syntax.\n"
    "The command's output is discarded unless --show-output.\n";

struct bench_cli {
	struct measure_options run;
	const char *export_json, *export_csv, *export_markdown, *html;
	double alpha;
	bool force;
};

/* Returns 0 with *first the COMMAND, CLI_HELP after --help, or an exit status. */
static int parse_args(struct bench_cli *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    RUN_OPTIONS(&o->run),
	    CLI_GROUP("Output"),
	    CLI_STRING(0, "export-json", &o->export_json, "FILE",
		       "all runs and statistics as JSON (hyperfine's\n"
		       "fields plus lever's)"),
	    CLI_STRING(0, "export-csv", &o->export_csv, "FILE",
		       "summary as CSV (hyperfine's columns)"),
	    CLI_STRING(0, "export-markdown", &o->export_markdown, "FILE",
		       "summary as a Markdown table"),
	    CLI_STRING(0, "html", &o->html, "FILE",
		       "self-contained HTML report: distribution, Q-Q plot"),
	    CLI_CALLBACK(0, "alpha", "A", run_option_alpha,
			 "significance level of the normality test (0.05)", .value = &o->alpha,
			 .what = "a level 0 < A < 1"),
	    CLI_FLAG(0, "force", &o->force,
		     "let an export or --html replace an existing profile or\n"
		     "samples file"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever bench",
	    .usage = "usage: lever bench [OPTIONS] -- COMMAND [ARGS...]\n"
		     "       lever bench [OPTIONS] 'COMMAND STRING'",
	    .description = bench_description,
	    .options = table,
	    .epilogue =
		"Ctrl-C stops the run going on and still reports the runs done.\n"
		"Exit status: 0; 1 if the command (or prepare/cleanup) fails, cannot run or\n"
		"times out, or an output cannot be written; 128 + N after signal N\n"
		"(SIGINT: 130); 2 for a usage error. See doc/bench.md.\n",
	    .takes_program = true,
	};

	return cli_parse(&cmd, argc, argv, NULL, first);
}

/* ------------------------------------------------------------ output */

static int write_export(const struct measure_bench_report *b, const char *path,
			enum measure_export kind)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");

	if (!f) {
		fprintf(stderr, "lever bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	measure_bench_report_export(b, kind, f);
	if (f != stdout && fclose(f)) {
		fprintf(stderr, "lever bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int outputs(const struct measure_bench_report *b, const struct bench_cli *o)
{
	int rc = 0, err;

	if (o->export_json)
		rc |= write_export(b, o->export_json, MEASURE_EXPORT_JSON);
	if (o->export_csv)
		rc |= write_export(b, o->export_csv, MEASURE_EXPORT_CSV);
	if (o->export_markdown)
		rc |= write_export(b, o->export_markdown, MEASURE_EXPORT_MARKDOWN);
	if (o->html && (err = measure_bench_report_html(b, o->html))) {
		fprintf(stderr, "lever bench: cannot write %s: %s\n", o->html, strerror(-err));
		rc = 1;
	}
	return rc;
}

/* ------------------------------------------------------------ entry */

static int command_from_args(struct measure_command *c, int argc, char **argv)
{
	if (argc == 1)
		return measure_command_from_string(c, argv[0]);
	return measure_command_from_argv(c, argv, argc);
}

/* For the usage errors found after parsing: the common path. */
static const struct cli_command bench_command = {.name = "lever bench"};

/* Statistics and outputs of the runs in res; 0 or 1. */
static int report(const struct bench_cli *o, const struct measure_result *res)
{
	struct measure_bench_summary s = {0};
	int rc = 1;

	if (res->n < 2) {
		fprintf(stderr, "lever bench: only %zu run%s; need at least 2\n", res->n,
			res->n == 1 ? "" : "s");
	} else if (measure_bench_summarize(&s, res, o->run.seed) == 0) {
		struct measure_bench_report b = {&s, res, &o->run, o->alpha};

		measure_bench_report_text(&b, stdout);
		rc = outputs(&b, o);
	}
	measure_bench_summary_free(&s);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli o = {.alpha = 0.05};
	struct measure_command cmd;
	struct measure_result res = {0};
	struct measure_session session;
	int rc, first, ending;

	measure_options_init(&o.run);
	rc = parse_args(&o, argc, argv, &first);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (command_from_args(&cmd, argc - first, argv + first)) {
		measure_command_free(&cmd);
		return cli_usage_error(&bench_command, "%s",
				       "the command is empty or has unbalanced quotes");
	}
	rc = measure_options_check(&o.run, "lever bench");
	if (!rc) {
		const char *outs[] = {o.export_json, o.export_csv, o.export_markdown, o.html};

		rc = check_report_outputs("lever bench", outs, 4, NULL, 0, o.force);
	}
	if (!rc)
		rc = measure_randomization_check(&o.run, &cmd, 1, "lever bench");
	if (!rc)
		rc = measure_session_init(&session, &o.run, "lever bench");
	if (!rc) {
		rc = measure_commands(&session, &cmd, 1, &res);
		if (!rc)
			rc = report(&o, &res);
		else if (measure_session_ending(&session, &ending))
			rc = report(&o, &res) ? 1 : ending;
	}
	measure_result_free(&res);
	measure_command_free(&cmd);
	return measure_finish_stdout("lever bench") ? 1 : rc;
}
