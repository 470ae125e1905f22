/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever causal report: read causal profiles (lever's or Coz's, tab-separated
 * or JSON Lines) and report them per line as a table, JSON or an HTML page.
 * The analysis itself is in src/causal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/causal.h"
#include "cli/commands.h"
#include "report/report.h"

#define EXIT_USAGE 2

static const char report_usage[] =
    "usage: lever causal report [OPTIONS] [PROFILE...]\n"
    "\n"
    "Summarise causal profiles (default ./profile.coz; several files are merged).\n"
    "Reads Coz's tab-separated format (lever's and Coz's profiles) and Coz's JSON\n"
    "Lines, told apart per file. For each line: the predicted program speedup at\n"
    "each line speedup, with bootstrap confidence intervals, the slope of the\n"
    "fitted line (steepest first) and a flag for contention (slope below 0).\n"
    "\n"
    "Profiles of `lever causal --arrival-speedup` runs (load amplification, e.g.\n"
    "from `lever causal sweep`) first get the scalability curve: per progress\n"
    "point, throughput or latency at each arrival speedup with 95% CIs over runs,\n"
    "and relative to arrival speedup 0; then one causal profile per load level,\n"
    "each line's curve against its own same-load baseline (in the table, in JSON\n"
    "and as charts in the HTML page).\n"
    "\n"
    "  --sort KEY              rank by slope (default; the paper), impact (Coz's\n"
    "                          viewer: area under the curve) or name\n"
    "  --min-speedups N        distinct speedups a line needs (default 5)\n"
    "  --no-phase-correction   do not apply the phase correction (paper eq. 8)\n"
    "  --no-trim               keep far-out experiments (by default an experiment\n"
    "                          whose cost per visit lies beyond 3 IQR past the\n"
    "                          quartiles of its speedup's experiments is set aside:\n"
    "                          something outside the program stalled it)\n"
    "  --seed N                seed of the bootstrap (default 0; same seed, same output)\n"
    "  --resamples N           bootstrap resamples (default 1000)\n"
    "  --confidence P          confidence level in percent (default 95)\n"
    "  --top N                 lines per progress point in the table (default 10;\n"
    "                          0 = all); --json and --html always have all\n"
    "  --detail                also print each line's points with their intervals\n"
    "  --ascii                 draw curves in ASCII (default when the locale is\n"
    "                          not UTF-8)\n"
    "  --json                  print the report as JSON instead of the table\n"
    "                          (doc/formats/causal-report-json.md)\n"
    "  --html FILE             also write a self-contained HTML page with a chart\n"
    "                          per line\n"
    "  --force                 let --html replace an existing profile or samples file\n"
    "  --strict                fail on the first malformed line instead of skipping it\n"
    "  -h, --help              show this help\n";

struct report_options {
	struct causal_summary_options summary;
	struct causal_report_options report;
	struct causal_read_options read;
	bool json;
	bool ascii_given;
	const char *html;
	bool force;
};

enum {
	ROPT_MIN_SPEEDUPS = 256,
	ROPT_TOP,
	ROPT_STRICT,
	ROPT_SORT,
	ROPT_NO_PHASE,
	ROPT_NO_TRIM,
	ROPT_SEED,
	ROPT_RESAMPLES,
	ROPT_CONFIDENCE,
	ROPT_DETAIL,
	ROPT_ASCII,
	ROPT_JSON,
	ROPT_HTML,
	ROPT_FORCE,
};

static const struct option report_long_options[] = {
    {"min-speedups", required_argument, NULL, ROPT_MIN_SPEEDUPS},
    {"top", required_argument, NULL, ROPT_TOP},
    {"strict", no_argument, NULL, ROPT_STRICT},
    {"sort", required_argument, NULL, ROPT_SORT},
    {"no-phase-correction", no_argument, NULL, ROPT_NO_PHASE},
    {"no-trim", no_argument, NULL, ROPT_NO_TRIM},
    {"seed", required_argument, NULL, ROPT_SEED},
    {"resamples", required_argument, NULL, ROPT_RESAMPLES},
    {"confidence", required_argument, NULL, ROPT_CONFIDENCE},
    {"detail", no_argument, NULL, ROPT_DETAIL},
    {"ascii", no_argument, NULL, ROPT_ASCII},
    {"json", no_argument, NULL, ROPT_JSON},
    {"html", required_argument, NULL, ROPT_HTML},
    {"force", no_argument, NULL, ROPT_FORCE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int report_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever causal report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever causal report --help' for usage.\n");
	return EXIT_USAGE;
}

/* Returns 0, -1 after --help, or an exit status. */
static int parse_report_options(struct report_options *o, int argc, char **argv)
{
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", report_long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(report_usage, stdout);
			return -1;
		case ROPT_MIN_SPEEDUPS:
			if (!parse_u64_range(optarg, 1, 101, &v))
				return report_usage_error("--min-speedups: '%s' is not 1..101",
							  optarg);
			o->summary.min_speedups = (unsigned)v;
			break;
		case ROPT_TOP:
			if (!parse_u64_range(optarg, 0, 1000000000, &v))
				return report_usage_error("--top: '%s' is not a count", optarg);
			o->report.top = v;
			break;
		case ROPT_STRICT:
			o->read.strict = true;
			break;
		case ROPT_SORT:
			if (strcmp(optarg, "slope") == 0)
				o->summary.sort = CAUSAL_SORT_SLOPE;
			else if (strcmp(optarg, "impact") == 0)
				o->summary.sort = CAUSAL_SORT_IMPACT;
			else if (strcmp(optarg, "name") == 0)
				o->summary.sort = CAUSAL_SORT_NAME;
			else
				return report_usage_error(
				    "--sort: '%s' is not slope, impact or name", optarg);
			break;
		case ROPT_NO_PHASE:
			o->summary.no_phase_correction = true;
			break;
		case ROPT_NO_TRIM:
			o->summary.no_trim = true;
			break;
		case ROPT_SEED:
			if (!parse_u64_range(optarg, 0, INT64_MAX, &v))
				return report_usage_error("--seed: '%s' is not a seed", optarg);
			o->summary.seed = v;
			break;
		case ROPT_RESAMPLES:
			if (!parse_u64_range(optarg, 100, 1000000, &v))
				return report_usage_error("--resamples: '%s' is not 100..1000000",
							  optarg);
			o->summary.resamples = (unsigned)v;
			break;
		case ROPT_CONFIDENCE:
			if (!parse_u64_range(optarg, 50, 99, &v))
				return report_usage_error("--confidence: '%s' is not 50..99",
							  optarg);
			o->summary.level = (double)v / 100.0;
			break;
		case ROPT_DETAIL:
			o->report.detail = true;
			break;
		case ROPT_ASCII:
			o->report.ascii = true;
			o->ascii_given = true;
			break;
		case ROPT_JSON:
			o->json = true;
			break;
		case ROPT_HTML:
			o->html = optarg;
			break;
		case ROPT_FORCE:
			o->force = true;
			break;
		case ':':
			return report_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return report_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return 0;
}

static void warn_read(const struct causal_profile *p, const struct causal_read_stats *before,
		      const char *path)
{
	const struct causal_read_stats *s = &p->stats;

	if (s->dropped_duration > before->dropped_duration)
		fprintf(stderr,
			"lever causal report: warning: %s: skipped %llu experiment(s) with "
			"duration <= 0\n",
			path, (unsigned long long)(s->dropped_duration - before->dropped_duration));
	if (s->unknown_records > before->unknown_records)
		fprintf(
		    stderr,
		    "lever causal report: warning: %s: skipped %llu record(s) of unknown type\n",
		    path, (unsigned long long)(s->unknown_records - before->unknown_records));
	if (s->malformed > before->malformed)
		fprintf(stderr,
			"lever causal report: warning: %s: skipped %llu malformed line(s)\n", path,
			(unsigned long long)(s->malformed - before->malformed));
}

static int read_profiles(struct causal_profile *p, char **paths, int n,
			 const struct causal_read_options *opt)
{
	for (int i = 0; i < n; i++) {
		struct causal_read_stats before = p->stats;
		size_t diags = p->n_diagnostics;

		if (causal_profile_read_file(p, paths[i], opt)) {
			fprintf(stderr, "lever causal report: %s\n", p->error);
			return 1;
		}
		for (size_t k = diags, shown = 0; k < p->n_diagnostics && shown < 5; k++) {
			if (strstr(p->diagnostics[k], "unknown type"))
				continue; /* summarised by warn_read */
			fprintf(stderr, "lever causal report: warning: %s\n", p->diagnostics[k]);
			shown++;
		}
		warn_read(p, &before, paths[i]);
		if (p->stats.records == before.records) {
			fprintf(stderr, "lever causal report: %s: no profile records found\n",
				paths[i]);
			return 1;
		}
	}
	return 0;
}

/* Is the character set UTF-8, as the first of LC_ALL, LC_CTYPE and LANG that is set says? */
static bool locale_is_utf8(void)
{
	static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return false;
}

static int write_html(const char *path, const struct causal_profile *p,
		      const struct causal_summary *s, const struct causal_report_options *opt)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "lever causal report: %s: cannot write: %s\n", path,
			strerror(errno));
		return 1;
	}
	causal_report_html(f, p, s, opt);
	if (fclose(f)) {
		fprintf(stderr, "lever causal report: %s: write error: %s\n", path,
			strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * The table of an AMP profile: the scalability curve, then one causal
 * profile per load when lines were sped up at several loads. Returns true
 * when that is the whole table (also for AMP alone: no line was sped up).
 */
static bool print_amp_text(const struct causal_profile *p, const struct causal_amp_profiles *ap,
			   const struct causal_report_options *opt)
{
	char d[32];

	causal_amp_report_text(stdout, p, &ap->amp);
	if (!causal_profile_has_line_speedups(p))
		return true;
	if (!ap->per_load)
		return false;
	for (size_t k = 0; k < ap->amp.n_levels; k++) {
		const struct causal_amp_level *lv = &ap->amp.levels[k];

		causal_amp_format_ns(d, sizeof(d), lv->arrival_speedup_ns);
		printf("== arrival speedup %s", d);
		if (lv->load >= 0)
			printf(" (load %.1f%%)", lv->load * 100);
		printf(" ==\n");
		causal_report_text(stdout, &ap->views[k], &ap->summaries[k], opt);
	}
	return true;
}

static int write_outputs(const struct report_options *o, const struct causal_profile *p,
			 const struct causal_summary *s, const struct causal_amp_profiles *ap)
{
	struct causal_report_options all = o->report;

	all.top = 0;
	all.amp = ap;
	if (o->json)
		causal_report_json(stdout, p, s, &all);
	else if (!ap || !print_amp_text(p, ap, &o->report))
		causal_report_text(stdout, p, s, &o->report);
	if (o->html && write_html(o->html, p, s, &all))
		return 1;
	if (o->html && !o->json)
		printf("\nHTML report: %s\n", o->html);
	return 0;
}

int cmd_causal_report(int argc, char **argv)
{
	struct report_options o = {.report = {.top = 10}};
	char *default_path[] = {"profile.coz"};
	struct causal_profile prof;
	struct causal_summary sum;
	struct causal_amp_profiles ampp;
	char **paths, err[8192];
	int n, ret, amp = 1;

	ret = parse_report_options(&o, argc, argv);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!o.ascii_given)
		o.report.ascii = !locale_is_utf8();
	paths = optind < argc ? argv + optind : default_path;
	n = optind < argc ? argc - optind : 1;
	o.report.files = paths;
	o.report.n_files = (size_t)n;
	if (report_output_check(o.html, (const char *const *)paths, (size_t)n, o.force, err,
				sizeof(err))) {
		fprintf(stderr, "lever causal report: %s\n", err);
		return 1;
	}
	causal_profile_init(&prof);
	ret = read_profiles(&prof, paths, n, &o.read);
	if (ret)
		goto out;
	amp = causal_amp_profiles_build(&prof, &o.summary, &ampp);
	if (amp < 0 || causal_summarize(&prof, &o.summary, &sum)) {
		fprintf(stderr, "lever causal report: out of memory\n");
		ret = 1;
		goto out_amp;
	}
	if (amp == 0)
		causal_amp_warn(stderr, &prof, &ampp.amp);
	ret = write_outputs(&o, &prof, &sum, amp == 0 ? &ampp : NULL);
	causal_summary_free(&sum);
out_amp:
	if (amp == 0)
		causal_amp_profiles_free(&ampp);
out:
	causal_profile_free(&prof);
	return ret;
}
