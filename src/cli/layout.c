/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever layout: struct-layout analysis (AutoCPA, spec autocpa.md). Only
 * `lever layout report` exists yet: it reads a layout record
 * (doc/formats/layout-record.md), runs the thesis's algorithms (src/layout)
 * and prints each struct as pahole does with its samples, the false
 * sharing found, the suggested layout as C, and the ranked savings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "layout/layout.h"

#define REPORT_USAGE "usage: lever layout report [OPTIONS] RECORD"

static const char report_description[] =
    "Struct-layout analysis (AutoCPA). `lever layout record` is under construction;\n"
    "`report` reads a layout record (doc/formats/layout-record.md: struct layouts,\n"
    "the static table of which instruction touches which field, basic blocks and\n"
    "sampled miss counts per pc) and, per struct with samples:\n"
    "  - the layout as pahole prints it, with raw and block-adjusted samples per field\n"
    "  - false sharing: fields on one line written by one thread, used by another\n"
    "  - the suggested order as a C struct to paste, with its estimated saving\n"
    "then the structs ranked by saving (\"In struct S you will save N misses\").\n";

static const char *const adjust_names[] = {"thesis", "repo-quirks", "none", NULL};
static const enum layout_adjust_mode adjust_modes[] = {
    LAYOUT_ADJUST_THESIS, LAYOUT_ADJUST_REPO_QUIRKS, LAYOUT_ADJUST_NONE};

struct layout_options {
	int adjust;			    /* index in adjust_names */
	double tolerance_pct, dominant_pct; /* PCT as given, for params */
	bool tolerance_given, dominant_given;
	struct layout_params params;
	bool json;
	const char *record;
};

/* 0, CLI_HELP after --help, or an exit status. */
static int parse_layout_options(struct layout_options *o, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "adjust", &o->adjust, "MODE", adjust_names,
		     "basic-block adjustment: thesis (default; Algorithm 3),\n"
		     "repo-quirks (the thesis-era code: no line filter), none"),
	    CLI_DOUBLE(0, "tolerance", &o->tolerance_pct, "PCT", 0, 100,
		       "counts within PCT% of each other tie and keep their\n"
		       "access order (default 0: exact counts)",
		       .given = &o->tolerance_given, .what = "a percentage 0..100"),
	    CLI_DOUBLE(0, "dominant", &o->dominant_pct, "PCT", 50, 100,
		       "a thread owning PCT% of a field's samples owns the field\n"
		       "when grouping by thread (default 90)",
		       .fmin_open = true, .given = &o->dominant_given,
		       .what = "a percentage above 50, up to 100"),
	    CLI_UINT(0, "threshold", &o->params.threshold, "N", 0, UINT64_MAX,
		     "suggest only structs that save more than N samples (the\n"
		     "thesis used 500 for Redis, 50 for Memcached; default 0)",
		     .what = "a count"),
	    CLI_FLAG(0, "pack", &o->params.pack_holes,
		     "fill holes with fields that have no samples (as pahole\n"
		     "--reorganize), when that grows neither size nor misses"),
	    CLI_FLAG(0, "json", &o->json, "one JSON document instead of text"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout report",
	    .usage = REPORT_USAGE,
	    .description = report_description,
	    .options = table,
	    .help_column = 24,
	};
	int first = 0, ret;

	ret = cli_parse(&cmd, argc, argv, o, &first);
	if (ret)
		return ret;
	if (first != argc - 1)
		return cli_usage_error(&cmd, "%s",
				       first == argc ? "which record? (one RECORD file)"
						     : "one RECORD file, please");
	if (o->tolerance_given)
		o->params.tolerance = o->tolerance_pct / 100.0;
	if (o->dominant_given)
		o->params.dominant_share = o->dominant_pct / 100.0;
	o->record = argv[first];
	return 0;
}

static void print_text(FILE *out, const struct layout_options *o, const struct layout_record *rec,
		       struct layout_suggestion *sg, size_t n, size_t passing)
{
	uint64_t total = 0;

	for (size_t i = 0; i < rec->n_samples; i++)
		total += rec->samples[i].count;
	fprintf(out, "%s: %llu samples", o->record, (unsigned long long)total);
	if (rec->period)
		fprintf(out, " (1 per %llu events)", (unsigned long long)rec->period);
	fprintf(out, ", %llu without a reference (dropped); %zu of %zu structs sampled\n",
		(unsigned long long)rec->program.unattributed, n, rec->program.n_structs);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "\n");
		layout_print_annotated(out, sg[i].s);
		layout_print_false_sharing(out, sg[i].s);
		fprintf(out, "\n");
		if (i < passing || sg[i].algorithm == LAYOUT_ALGO_ORIGINAL)
			layout_print_suggestion(out, &sg[i]);
		else
			fprintf(out, "/* %s: saves %llu samples, not above --threshold %llu */\n",
				sg[i].s->name, (unsigned long long)sg[i].benefit,
				(unsigned long long)o->params.threshold);
	}
	fprintf(out, "\n");
	if (passing)
		layout_print_ranking(out, sg, passing, rec->period);
	else
		fprintf(out, "No struct saves more than %llu samples.\n",
			(unsigned long long)o->params.threshold);
}

static int layout_report(struct layout_options *o)
{
	struct layout_record rec;
	struct layout_suggestion *sg;
	char err[512];
	size_t n = 0, passing;
	FILE *f = fopen(o->record, "r");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "lever layout report: %s: %m\n", o->record);
		return 1;
	}
	rc = layout_record_read(f, o->record, &rec, err, sizeof(err));
	fclose(f);
	if (rc) {
		fprintf(stderr, "lever layout report: %s\n", err);
		return 1;
	}
	if (layout_annotate(&rec.program, rec.samples, rec.n_samples, adjust_modes[o->adjust])) {
		fprintf(stderr, "lever layout report: out of memory\n");
		layout_record_free(&rec);
		return 1;
	}
	sg = calloc(rec.program.n_structs ? rec.program.n_structs : 1, sizeof(*sg));
	for (size_t i = 0; sg && i < rec.program.n_structs && rc == 0; i++)
		if (rec.program.structs[i]->total_raw)
			rc = layout_suggest(rec.program.structs[i], &o->params, &sg[n++]);
	if (!sg || rc) {
		fprintf(stderr, "lever layout report: out of memory\n");
		rc = 1;
	} else {
		passing = layout_rank(sg, n, &o->params);
		if (o->json)
			layout_write_json(stdout, sg, n, rec.period);
		else
			print_text(stdout, o, &rec, sg, n, passing);
	}
	for (size_t i = 0; sg && i < n; i++)
		layout_suggestion_clear(&sg[i]);
	free(sg);
	layout_record_free(&rec);
	return rc;
}

int cmd_layout(int argc, char **argv)
{
	struct layout_options o = {0};
	int rc;

	layout_params_default(&o.params);
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		char *help_argv[] = {argv[0], "--help", NULL};

		if (argc < 2) {
			fprintf(stderr, "lever layout: which subcommand? (only 'report' exists)\n"
					"Run 'lever layout --help' for usage.\n");
			return EXIT_USAGE;
		}
		return parse_layout_options(&o, 2, help_argv) == CLI_HELP ? 0 : EXIT_USAGE;
	}
	/* until `record` has its pmu and clock sources here, it is instr's alone */
	if (strcmp(argv[1], "record") == 0)
		return layout_record_instr(argc - 1, argv + 1);
	if (strcmp(argv[1], "report") != 0) {
		fprintf(stderr,
			"lever layout: unknown subcommand '%s' (only 'report' and 'record "
			"--source=instr' exist)\nRun 'lever layout --help' for usage.\n",
			argv[1]);
		return EXIT_USAGE;
	}
	rc = parse_layout_options(&o, argc - 1, argv + 1);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	return layout_report(&o);
}
