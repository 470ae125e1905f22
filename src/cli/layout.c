/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever layout: struct-layout analysis (AutoCPA, spec autocpa.md). Only
 * `lever layout report` exists yet: it reads a layout record
 * (doc/formats/layout-record.md), runs the thesis's algorithms (src/layout)
 * and prints each struct as pahole does with its samples, the false
 * sharing found, the suggested layout as C, and the ranked savings.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/commands.h"
#include "layout/layout.h"

#define EXIT_USAGE 2

static const char layout_usage[] =
    "usage: lever layout report [OPTIONS] RECORD\n"
    "\n"
    "Struct-layout analysis (AutoCPA). `lever layout record` is under construction;\n"
    "`report` reads a layout record (doc/formats/layout-record.md: struct layouts,\n"
    "the static table of which instruction touches which field, basic blocks and\n"
    "sampled miss counts per pc) and, per struct with samples:\n"
    "  - the layout as pahole prints it, with raw and block-adjusted samples per field\n"
    "  - false sharing: fields on one line written by one thread, used by another\n"
    "  - the suggested order as a C struct to paste, with its estimated saving\n"
    "then the structs ranked by saving (\"In struct S you will save N misses\").\n"
    "\n"
    "  --adjust MODE     basic-block adjustment: thesis (default; Algorithm 3),\n"
    "                    repo-quirks (the thesis-era code: no line filter), none\n"
    "  --tolerance PCT   counts within PCT% of each other tie and keep their\n"
    "                    access order (default 0: exact counts)\n"
    "  --dominant PCT    a thread owning PCT% of a field's samples owns the field\n"
    "                    when grouping by thread (default 90)\n"
    "  --threshold N     suggest only structs that save more than N samples\n"
    "                    (the thesis used 500 for Redis, 50 for Memcached; default 0)\n"
    "  --pack            fill holes with fields that have no samples (as pahole\n"
    "                    --reorganize), when that grows neither size nor misses\n"
    "  --json            one JSON document instead of text\n"
    "  -h, --help        show this help\n";

enum { OPT_ADJUST = 256, OPT_TOLERANCE, OPT_DOMINANT, OPT_THRESHOLD, OPT_PACK, OPT_JSON };

static const struct option layout_long_options[] = {
    {"adjust", required_argument, NULL, OPT_ADJUST},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"dominant", required_argument, NULL, OPT_DOMINANT},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"pack", no_argument, NULL, OPT_PACK},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct layout_options {
	enum layout_adjust_mode adjust;
	struct layout_params params;
	bool json;
	const char *record;
};

static int layout_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lever layout report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nRun 'lever layout --help' for usage.\n");
	return EXIT_USAGE;
}

static bool parse_percent(const char *text, double *out)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || *end || !(v >= 0 && v <= 100))
		return false;
	*out = v / 100.0;
	return true;
}

static int parse_adjust(const char *text, enum layout_adjust_mode *out)
{
	if (strcmp(text, "thesis") == 0)
		*out = LAYOUT_ADJUST_THESIS;
	else if (strcmp(text, "repo-quirks") == 0)
		*out = LAYOUT_ADJUST_REPO_QUIRKS;
	else if (strcmp(text, "none") == 0)
		*out = LAYOUT_ADJUST_NONE;
	else
		return -1;
	return 0;
}

/* Returns 0, -1 after --help, or an exit status. */
static int parse_layout_options(struct layout_options *o, int argc, char **argv)
{
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", layout_long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(layout_usage, stdout);
			return -1;
		case OPT_ADJUST:
			if (parse_adjust(optarg, &o->adjust))
				return layout_usage_error(
				    "--adjust: '%s' is not thesis, repo-quirks or none", optarg);
			break;
		case OPT_TOLERANCE:
			if (!parse_percent(optarg, &o->params.tolerance))
				return layout_usage_error("--tolerance: '%s' is not 0..100",
							  optarg);
			break;
		case OPT_DOMINANT:
			if (!parse_percent(optarg, &o->params.dominant_share) ||
			    o->params.dominant_share <= 0.5)
				return layout_usage_error(
				    "--dominant: '%s' is not above 50, up to 100", optarg);
			break;
		case OPT_THRESHOLD:
			if (!parse_u64_range(optarg, 0, UINT64_MAX, &v))
				return layout_usage_error("--threshold: '%s' is not a count",
							  optarg);
			o->params.threshold = v;
			break;
		case OPT_PACK:
			o->params.pack_holes = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case ':':
			return layout_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return layout_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return layout_usage_error("%s", optind == argc ? "which record? (one RECORD file)"
							       : "one RECORD file, please");
	o->record = argv[optind];
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
	if (layout_annotate(&rec.program, rec.samples, rec.n_samples, o->adjust)) {
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
	struct layout_options o = {.adjust = LAYOUT_ADJUST_THESIS};
	int rc;

	layout_params_default(&o.params);
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(layout_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "report") != 0) {
		fprintf(stderr,
			"lever layout: unknown subcommand '%s' (only 'report' exists; 'record' is "
			"under construction)\nRun 'lever layout --help' for usage.\n",
			argv[1]);
		return EXIT_USAGE;
	}
	rc = parse_layout_options(&o, argc - 1, argv + 1);
	if (rc)
		return rc < 0 ? 0 : rc;
	return layout_report(&o);
}
