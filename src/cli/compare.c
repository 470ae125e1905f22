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
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"
#include "cli/commands.h"

static const char compare_usage[] =
    "usage: lever compare [OPTIONS] -- 'CMD_A' 'CMD_B'\n"
    "       lever compare [OPTIONS] --samples A.txt B.txt\n"
    "       lever compare [OPTIONS] --suite FILE\n"
    "\n"
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
    "positives among the per-benchmark tests is printed.\n"
    "\n"
    "Analysis:\n"
    "      --samples           the two arguments are sample files\n"
    "      --suite FILE        compare the configurations of a suite file\n"
    "      --configs A,B       the suite's baseline and new configuration (default:\n"
    "                          the two in the file, in order of appearance)\n"
    "      --drop-max          drop the largest run of each sample or suite cell first\n"
    "                          (the cleaning the Stabilizer authors applied; off by\n"
    "                          default)\n"
    "      --alpha A           significance level (default 0.05)\n"
    "      --test T            auto (default), welch, student or mann-whitney\n"
    "      --bootstrap N       bootstrap resamples (default 10000)\n"
    "  -u, --unit UNIT         unit of sample and suite values: s (default), ms, us, ns,\n"
    "                          none\n"
    "      --json              write JSON to standard output instead of text\n"
    "      --html FILE         also write a self-contained HTML report\n"
    "      --export-markdown FILE  also write the table as Markdown ('-': standard\n"
    "                          output, instead of the text); for a suite, with\n"
    "                          mean(B)/mean(A), sd(B)/sd(A) and p < alpha in bold\n"
    "\n" MEASURE_OPTIONS_HELP "  -h, --help              show this help\n"
    "\n"
    "With two commands the defaults are 30 runs of each and at least 3 s.\n"
    "A command without shell syntax is split into words and run directly;\n"
    "otherwise it runs under /bin/sh -c.\n"
    "Exit status: 0 when the comparison was made (whatever its verdict); 1 on an\n"
    "error (unreadable file, failing command); 2 for a usage error.\n"
    "See doc/compare.md.\n";

enum compare_mode { MODE_COMMANDS, MODE_SAMPLES, MODE_SUITE };

struct compare_cli {
	enum compare_mode mode;
	struct measure_compare_options cmp;
	struct measure_options run;
	const char *suite, *configs, *html, *markdown;
	bool drop_max, json;
	bool seed_given;
};

enum {
	OPT_SAMPLES = 0x200,
	OPT_SUITE,
	OPT_CONFIGS,
	OPT_DROP_MAX,
	OPT_ALPHA,
	OPT_TEST,
	OPT_BOOTSTRAP,
	OPT_JSON,
	OPT_HTML,
	OPT_MARKDOWN,
};

static const struct option own_options[] = {
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"configs", required_argument, NULL, OPT_CONFIGS},
    {"drop-max", no_argument, NULL, OPT_DROP_MAX},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"test", required_argument, NULL, OPT_TEST},
    {"bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
    {"unit", required_argument, NULL, 'u'},
    {"json", no_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"export-markdown", required_argument, NULL, OPT_MARKDOWN},
    {"help", no_argument, NULL, 'h'},
};

static int compare_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever compare: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever compare --help' for usage.\n");
	return MEASURE_EXIT_USAGE;
}

static int parse_test(const char *text, enum stats_compare_test *t)
{
	static const struct {
		const char *name;
		enum stats_compare_test t;
	} tests[] = {{"auto", STATS_TEST_AUTO},
		     {"welch", STATS_TEST_WELCH},
		     {"student", STATS_TEST_STUDENT},
		     {"mann-whitney", STATS_TEST_MANN_WHITNEY}};

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (strcmp(text, tests[i].name) == 0) {
			*t = tests[i].t;
			return 0;
		}
	return -1;
}

static int own_option(struct compare_cli *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case OPT_SAMPLES:
		o->mode = MODE_SAMPLES;
		return 1;
	case OPT_SUITE:
		o->mode = MODE_SUITE;
		o->suite = arg;
		return 1;
	case OPT_CONFIGS:
		o->configs = arg;
		return 1;
	case OPT_DROP_MAX:
		o->drop_max = true;
		return 1;
	case OPT_ALPHA:
		return measure_parse_alpha(arg, &o->cmp.stats.alpha)
			   ? compare_usage_error("--alpha '%s': need 0 < A < 1", arg)
			   : 1;
	case OPT_TEST:
		return parse_test(arg, &o->cmp.stats.test)
			   ? compare_usage_error(
				 "--test '%s': auto, welch, student or mann-whitney", arg)
			   : 1;
	case OPT_BOOTSTRAP:
		errno = 0;
		o->cmp.stats.resamples = strtoul(arg, &end, 10);
		if (errno || *end || o->cmp.stats.resamples < 100 ||
		    o->cmp.stats.resamples > 10000000)
			return compare_usage_error("--bootstrap '%s': need 100..10000000", arg);
		return 1;
	case 'u':
		return measure_parse_unit(arg, &o->cmp.format)
			   ? compare_usage_error("unknown unit '%s' (s, ms, us, ns, none)", arg)
			   : 1;
	case OPT_JSON:
		o->json = true;
		return 1;
	case OPT_HTML:
		o->html = arg;
		return 1;
	case OPT_MARKDOWN:
		o->markdown = arg;
		return 1;
	}
	return 0;
}

/* Parse options; returns -1 to go on, else an exit status. */
static int parse_args(struct compare_cli *o, int argc, char **argv)
{
	struct option *options =
	    measure_options_merge(own_options, sizeof(own_options) / sizeof(own_options[0]));
	int c, rc = -1, index = -1;

	if (!options)
		return 1;
	optind = 1;
	while (rc < 0 &&
	       (c = getopt_long(argc, argv, ":w:m:M:n:p:c:iu:h", options, &index)) != -1) {
		int r;

		if (c == 'h') {
			fputs(compare_usage, stdout);
			rc = 0;
		} else if (c == ':') {
			rc = compare_usage_error("option '%s' needs a value", argv[optind - 1]);
		} else if (c == '?') {
			rc = compare_usage_error("unknown option '%s'", argv[optind - 1]);
		} else if ((r = own_option(o, c, optarg)) != 0) {
			index = -1;
			rc = r == 1 ? -1 : r;
		} else {
			if (index >= 0 && strcmp(options[index].name, "seed") == 0)
				o->seed_given = true;
			r = measure_options_parse(&o->run, "lever compare", c, optarg);
			rc = r == 1 ? -1
				    : (r ? r
					 : compare_usage_error("unknown option '%s'",
							       argv[optind - 1]));
			index = -1;
		}
	}
	free(options);
	return rc;
}

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

static int compare_commands(struct compare_cli *o, char **texts)
{
	struct measure_command cmd[2];
	struct measure_result res[2];
	struct measure_session session;
	struct stats_comparison c;
	int rc = 1;

	memset(res, 0, sizeof(res));
	memset(cmd, 0, sizeof(cmd));
	if (measure_command_from_string(&cmd[0], texts[0]) ||
	    measure_command_from_string(&cmd[1], texts[1])) {
		fprintf(stderr, "lever compare: a command is empty or has unbalanced quotes\n");
		measure_command_free(&cmd[0]);
		measure_command_free(&cmd[1]);
		return MEASURE_EXIT_USAGE;
	}
	rc = measure_randomization_check(&o->run, cmd, 2, "lever compare");
	if (!rc)
		rc = measure_session_init(&session, &o->run, "lever compare");
	if (!rc)
		rc = measure_commands(&session, cmd, 2, res);
	if (!rc) {
		stats_compare_samples(&c, &o->cmp.stats, cmd[0].display, res[0].wall, res[0].n,
				      cmd[1].display, res[1].wall, res[1].n);
		rc = output_comparison(o, &c, "lever compare: commands (interleaved runs)", res);
	}
	for (int i = 0; i < 2; i++) {
		measure_result_free(&res[i]);
		measure_command_free(&cmd[i]);
	}
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_cli o;
	int rc, nargs;

	memset(&o, 0, sizeof(o));
	measure_compare_options_init(&o.cmp);
	measure_options_init(&o.run);
	o.run.min_runs = 30;
	rc = parse_args(&o, argc, argv);
	if (rc >= 0)
		return rc;
	rc = measure_options_check(&o.run, "lever compare");
	if (rc)
		return rc;
	if (o.mode != MODE_COMMANDS && (measure_options_stabilizer(&o.run) || o.run.randomize_link))
		return compare_usage_error("%s", "--randomize=heap/code/stack/link randomizes runs "
						 "of commands; --samples and --suite run none");
	/* the analysis of files is reproducible unless --seed says otherwise */
	o.cmp.stats.seed = o.seed_given || o.mode == MODE_COMMANDS ? o.run.seed : 1;
	nargs = argc - optind;
	if (o.json && o.markdown && !strcmp(o.markdown, "-"))
		return compare_usage_error("%s", "--json and --export-markdown - both want "
						 "standard output");
	switch (o.mode) {
	case MODE_SUITE: {
		struct measure_suite_outputs want = {o.drop_max, o.json, o.html, o.markdown};

		if (nargs)
			return compare_usage_error("unexpected argument '%s' with --suite",
						   argv[optind]);
		return measure_suite_compare(o.suite, o.configs, &want, &o.cmp);
	}
	case MODE_SAMPLES:
		if (nargs != 2)
			return compare_usage_error("%s", "--samples needs two files: A.txt B.txt");
		return compare_files(&o, argv + optind);
	default:
		if (nargs != 2)
			return compare_usage_error(
			    "%s",
			    "need two commands: lever compare -- 'CMD_A' 'CMD_B' (or --samples "
			    "or --suite)");
		return compare_commands(&o, argv + optind);
	}
}
