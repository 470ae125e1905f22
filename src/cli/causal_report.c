/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever causal report: read causal profiles (lever's or Coz's, tab-separated
 * or JSON Lines) and report them per line as a table, JSON or an HTML page.
 * The analysis itself is in src/causal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/causal.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "report/report.h"

static const char report_description[] =
    "Summarise causal profiles (default ./profile.coz; several files are merged).\n"
    "Reads Coz's tab-separated format (lever's and Coz's profiles) and Coz's JSON\n"
    "Lines, told apart per file. For each line: the predicted program speedup at\n"
    "each line speedup, with bootstrap confidence intervals, a fitted curve that\n"
    "can level off (its effect at 100% and shape), ranked by impact (the largest\n"
    "mean program speedup over 0..x, as Coz's viewer ranks), a flag for\n"
    "contention (slope below 0), and \"thin\" where a number rests on too few\n"
    "experiments or visits or has a wide interval. --method=coz-viewer shows\n"
    "instead what Coz's own viewer plots from the same profiles.\n"
    "\n"
    "Profiles of `lever causal --arrival-speedup` runs (load amplification, e.g.\n"
    "from `lever causal sweep`) first get the scalability curve: per progress\n"
    "point, throughput or latency at each arrival speedup with 95% CIs over runs,\n"
    "and relative to arrival speedup 0; then one causal profile per load level,\n"
    "each line's curve against its own same-load baseline (in the table, in JSON\n"
    "and as charts in the HTML page).\n";

/* In the order of enum causal_sort. */
static const char *const sort_keys[] = {"impact", "slope", "name", NULL};
/* In the order of enum causal_method. */
static const char *const method_keys[] = {"lever", "coz-viewer", NULL};

struct report_options {
	struct causal_summary_options summary;
	struct causal_report_options report;
	struct causal_read_options read;
	bool json;
	bool ascii_given;
	bool force;
	const char *html;
	/* as parsed, before they are placed in summary and report */
	int sort, method;
	uint64_t min_speedups, top, seed, resamples, confidence;
};

/* Returns 0 with *first the first PROFILE, CLI_HELP after --help, or an exit status. */
static int parse_report_options(struct report_options *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "method", &o->method, "M", method_keys,
		     "lever (default: lever's analysis) or coz-viewer\n"
		     "(exactly what Coz's web viewer plots from the same\n"
		     "records: no phase correction, no trimming, no\n"
		     "intervals; doc/causal-report.md)"),
	    CLI_ENUM(0, "sort", &o->sort, "KEY", sort_keys,
		     "rank by impact (default; Coz's viewer: the largest\n"
		     "mean program speedup over 0..x), slope (the paper's\n"
		     "regression slope) or name"),
	    CLI_UINT(0, "min-speedups", &o->min_speedups, "N", 1, 101,
		     "distinct speedups a line needs (default 5; with\n"
		     "coz-viewer the Minimum Points to start from, 10)",
		     .what = "1..101"),
	    CLI_FLAG(0, "no-phase-correction", &o->summary.no_phase_correction,
		     "do not apply the phase correction (paper eq. 8)"),
	    CLI_FLAG(0, "no-trim", &o->summary.no_trim,
		     "keep far-out experiments (by default an experiment\n"
		     "whose cost per visit lies beyond 3 IQR past the\n"
		     "quartiles of its speedup's experiments is set aside:\n"
		     "something outside the program stalled it)"),
	    CLI_UINT(0, "seed", &o->seed, "N", 0, INT64_MAX,
		     "seed of the bootstrap (default 0; same seed, same output)",
		     .what = "a seed (0..2^63-1)"),
	    CLI_UINT(0, "resamples", &o->resamples, "N", 100, 1000000,
		     "bootstrap resamples (default 1000)", .what = "100..1000000"),
	    CLI_PERCENT(0, "confidence", &o->confidence, "P", 50, 99,
			"confidence level in percent (default 95)", .what = "50..99"),
	    CLI_UINT(0, "top", &o->top, "N", 0, 1000000000,
		     "lines per progress point in the table (default 10;\n"
		     "0 = all); --json and --html always have all",
		     .what = "a count 0..1000000000"),
	    CLI_FLAG(0, "detail", &o->report.detail,
		     "also print each line's points with their intervals"),
	    CLI_FLAG(0, "ascii", &o->report.ascii,
		     "draw curves in ASCII (default when the locale is\n"
		     "not UTF-8)",
		     .given = &o->ascii_given),
	    CLI_FLAG(0, "json", &o->json,
		     "print the report as JSON instead of the table\n"
		     "(doc/formats/causal-report-json.md)"),
	    CLI_STRING(0, "html", &o->html, "FILE",
		       "also write a self-contained HTML page with a chart\n"
		       "per line",
		       .what = "a file name"),
	    CLI_FLAG(0, "force", &o->force,
		     "let --html replace an existing profile or samples file"),
	    CLI_FLAG(0, "strict", &o->read.strict,
		     "fail on the first malformed line instead of skipping it"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever causal report",
	    .usage = "usage: lever causal report [OPTIONS] [PROFILE...]",
	    .description = report_description,
	    .options = table,
	    .help_column = 26,
	};
	int ret = cli_parse(&cmd, argc, argv, o, first);

	if (ret)
		return ret;
	o->summary.method = (enum causal_method)o->method;
	if (o->summary.method == CAUSAL_METHOD_COZ_VIEWER && o->html) {
		fprintf(stderr,
			"lever causal report: --html draws lever's analysis (intervals, "
			"fitted curves); with --method=coz-viewer use the table or --json\n");
		return 2;
	}
	o->summary.sort = (enum causal_sort)o->sort;
	o->summary.min_speedups = (unsigned)o->min_speedups;
	o->summary.seed = o->seed;
	o->summary.resamples = (unsigned)o->resamples;
	o->summary.level = (double)o->confidence / 100.0;
	o->report.top = o->top;
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
	struct report_options o = {.top = 10};
	char *default_path[] = {"profile.coz"};
	struct causal_profile prof;
	struct causal_summary sum;
	struct causal_amp_profiles ampp;
	char **paths, err[8192];
	int n, ret, first = 0, amp = 1;

	ret = parse_report_options(&o, argc, argv, &first);
	if (ret)
		return ret == CLI_HELP ? 0 : ret;
	if (!o.ascii_given)
		o.report.ascii = !locale_is_utf8();
	paths = first < argc ? argv + first : default_path;
	n = first < argc ? argc - first : 1;
	o.report.files = paths;
	o.report.n_files = (size_t)n;
	if (report_output_check(o.html, (const char *const *)paths, (size_t)n, o.force,
				cli_data_kind, err, sizeof(err))) {
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
