/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever layout: struct-layout analysis (AutoCPA, spec autocpa.md).
 *   record  run a program under perf_event_open and write a layout record
 *           (doc/formats/layout-record.md; src/layout/collect.c)
 *   report  the thesis's algorithms on a record: each struct as pahole
 *           prints it with its samples, false sharing, the suggested layout
 *           as C, the ranked savings; --json, --html (a heat map)
 *   merge   records of one build summed (fleet scale, spec §2.4)
 *   export  per-field samples as a pprof profile (--pprof)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"
#include "layout/layout.h"
#include "report/report.h"

#define REPORT_USAGE "usage: lever layout report [OPTIONS] RECORD"

static const char report_description[] =
    "Struct-layout analysis (AutoCPA). Subcommands: record, report, refs, merge,\n"
    "export (lever layout SUBCOMMAND --help). `report` reads a layout record\n"
    "(doc/formats/layout-record.md: struct layouts,\n"
    "the static table of which instruction touches which field, basic blocks and\n"
    "sampled miss counts per pc) and, per struct with samples:\n"
    "  - the layout as pahole prints it, with raw and block-adjusted samples per field\n"
    "  - false sharing: fields of one object, on one line, written by one thread and\n"
    "    used by another (judged from the data addresses; significant ones only)\n"
    "  - the suggested order as a C struct to paste, with its estimated saving, or\n"
    "    why the layout is kept (no benefit above noise, growth, ABI, constraints)\n"
    "then the structs ranked by saving (\"In struct S you will save N misses\").\n"
    "`lever layout refs BINARY` writes the structs, references and blocks of a\n"
    "record from a binary's DWARF and code (lever layout refs --help).\n";

static const char *const adjust_names[] = {"thesis", "repo-quirks", "none", NULL};
static const enum layout_adjust_mode adjust_modes[] = {
    LAYOUT_ADJUST_THESIS, LAYOUT_ADJUST_REPO_QUIRKS, LAYOUT_ADJUST_NONE};

struct layout_options {
	int adjust;			    /* index in adjust_names */
	double tolerance_pct, dominant_pct; /* PCT as given, for params */
	bool tolerance_given, dominant_given;
	double share_pct, sigmas;
	bool share_given, sigmas_given;
	struct layout_params params;
	bool json, force;
	const char *html;
	const char *constraints;
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
	    CLI_DOUBLE(0, "sigmas", &o->sigmas, "Z", 0, 10,
		       "change a layout only for a benefit B above Z*sqrt(B) (Poisson\n"
		       "noise of sampled counts; default 2: B > 4)",
		       .given = &o->sigmas_given, .what = "a number 0..10"),
	    CLI_UINT(0, "sharing-min-samples", &o->params.sharing_min_samples, "N", 0, UINT64_MAX,
		     "report a false-sharing pair or shared data line only with\n"
		     "at least N samples (default 4)",
		     .what = "a count"),
	    CLI_DOUBLE(0, "sharing-min-share", &o->share_pct, "PCT", 0, 100,
		       "... and at least PCT% of its struct's samples (of all\n"
		       "addressed samples for a data line; default 1)",
		       .given = &o->share_given, .what = "a percentage 0..100"),
	    CLI_FLAG(0, "pack", &o->params.pack_holes,
		     "fill holes with fields that have no samples (as pahole\n"
		     "--reorganize), when that grows neither size nor misses"),
	    CLI_STRING(0, "constraints", &o->constraints, "FILE",
		       "ABI constraints: structs to keep, fields fixed at their\n"
		       "offset or first/last (doc/formats/layout-constraints.md)"),
	    CLI_FLAG(0, "json", &o->json, "one JSON document instead of text"),
	    CLI_STRING(0, "html", &o->html, "FILE",
		       "also write a self-contained HTML heat map of each struct\n"
		       "(fields by cache line, coloured by samples; suggestion beside)"),
	    CLI_FLAG(0, "force", &o->force, "let --html replace a record or other data file"),
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

	ret = cli_parse_operands(&cmd, argc, argv, o, &first, 1, 1,
				 "which record? (one RECORD file)", "one RECORD file, please");
	if (ret)
		return ret;
	if (o->tolerance_given)
		o->params.tolerance = o->tolerance_pct / 100.0;
	if (o->dominant_given)
		o->params.dominant_share = o->dominant_pct / 100.0;
	if (o->sigmas_given)
		o->params.sigmas = o->sigmas;
	if (o->share_given)
		o->params.sharing_min_share = o->share_pct / 100.0;
	o->record = argv[first];
	return 0;
}

static void print_text(FILE *out, const struct layout_options *o, const struct layout_record *rec,
		       struct layout_suggestion *sg, size_t n, size_t passing)
{
	uint64_t total = 0;
	struct layout_units u;

	layout_units_for(rec->source, rec->period, &u);
	for (size_t i = 0; i < rec->n_samples; i++)
		total += rec->samples[i].count;
	fprintf(out, "%s: %llu %s", o->record, (unsigned long long)total, u.count);
	if (rec->period)
		fprintf(out, " (1 per %llu %s)", (unsigned long long)rec->period, u.scaled);
	fprintf(out, ", %llu without a reference (dropped); %zu of %zu structs sampled\n",
		(unsigned long long)rec->program.unattributed, n, rec->program.n_structs);
	/* what the collector could not use, so that nothing is lost unseen */
	if (rec->source && strcmp(rec->source, "instr") == 0)
		fprintf(out,
			"recorded by instr (%s): %llu accesses replayed through the cache model, "
			"%llu naming no site, %llu of unrecordable structs\n",
			rec->event, (unsigned long long)layout_record_stat(rec, "samples"),
			(unsigned long long)layout_record_stat(rec, "no-site"),
			(unsigned long long)layout_record_stat(rec, "unrecordable-struct"));
	else if (rec->source)
		fprintf(out,
			"recorded by %s (%s): %llu samples, %llu without a memory operand, %llu "
			"lost, throttled %llu times\n",
			rec->source, rec->event,
			(unsigned long long)layout_record_stat(rec, "samples"),
			(unsigned long long)layout_record_stat(rec, "no-memory-operand"),
			(unsigned long long)layout_record_stat(rec, "lost"),
			(unsigned long long)layout_record_stat(rec, "throttled"));
	if (!rec->program.n_structs && rec->n_samples)
		fprintf(out,
			"the record has no structs: the program has no DWARF (build it with -g), "
			"or its static part was left out\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "\n");
		layout_print_annotated(out, sg[i].s, &u);
		layout_print_false_sharing(out, sg[i].s, &o->params, &u);
		fprintf(out, "\n");
		if (i < passing || sg[i].algorithm == LAYOUT_ALGO_ORIGINAL)
			layout_print_suggestion(out, &sg[i], &u);
		else
			fprintf(out, "/* %s: saves %llu %s, not above --threshold %llu */\n",
				sg[i].s->name, (unsigned long long)sg[i].benefit, u.count,
				(unsigned long long)o->params.threshold);
	}
	/* by data address: lines two threads touch, one writing (version-2 access lines) */
	if (layout_find_shared_lines(rec, NULL, 0)) {
		fprintf(out, "\n");
		layout_print_shared_lines(out, rec, 10, &o->params);
	}
	fprintf(out, "\n");
	if (passing)
		layout_print_ranking(out, sg, passing, &u);
	else
		fprintf(out, "No struct saves more than %llu %s.\n",
			(unsigned long long)o->params.threshold, u.count);
}

static int write_html(const struct layout_options *o, const struct layout_record *rec,
		      const struct layout_suggestion *sg, size_t n)
{
	FILE *f = strcmp(o->html, "-") ? fopen(o->html, "w") : stdout;
	int rc;

	if (!f) {
		fprintf(stderr, "lever layout report: %s: %m\n", o->html);
		return -1;
	}
	rc = layout_write_html(f, o->record, rec, sg, n, &o->params);
	if (f != stdout && fclose(f))
		rc = -1;
	if (rc)
		fprintf(stderr, "lever layout report: %s: write error\n", o->html);
	return rc;
}

/* The user's constraint file on rec's structs; 0, or -1 after saying why. */
static int read_constraints(const char *path, struct layout_record *rec)
{
	char err[600];
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		fprintf(stderr, "lever layout report: %s: %m\n", path);
		return -1;
	}
	rc = layout_constraints_read(f, path, &rec->program, stderr, err, sizeof(err));
	fclose(f);
	if (rc)
		fprintf(stderr, "lever layout report: %s\n", err);
	return rc;
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
	if (o->html && report_output_check(o->html, &o->record, 1, o->force, cli_data_kind, err,
					   sizeof(err))) {
		fclose(f);
		fprintf(stderr, "lever layout report: %s\n", err);
		return 1;
	}
	rc = layout_record_read(f, o->record, &rec, err, sizeof(err));
	fclose(f);
	if (rc) {
		fprintf(stderr, "lever layout report: %s\n", err);
		return 1;
	}
	if (layout_annotate(&rec.program, rec.samples, rec.n_samples, adjust_modes[o->adjust]) ||
	    layout_record_objects(&rec) || layout_mark_shared_structs(&rec) ||
	    layout_pin_likely_casts(&rec.program, stderr)) {
		fprintf(stderr, "lever layout report: out of memory\n");
		layout_record_free(&rec);
		return 1;
	}
	if (o->constraints && read_constraints(o->constraints, &rec)) {
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
		if (o->html && write_html(o, &rec, sg, n))
			rc = 1;
		if (o->json) {
			struct layout_units u;

			layout_units_for(rec.source, rec.period, &u);
			layout_write_json(stdout, sg, n, &u);
		} else
			print_text(stdout, o, &rec, sg, n, passing);
	}
	for (size_t i = 0; sg && i < n; i++)
		layout_suggestion_clear(&sg[i]);
	free(sg);
	layout_record_free(&rec);
	return rc;
}

/* ------------------------------------------------------------ record */

#define RECORD_USAGE                                                                               \
	"usage: lever layout record [--source=pmu|clock|instr] [-a] [-g] [-F FREQ | -c PERIOD]\n"  \
	"                           [-o FILE] [--force] -- PROGRAM [ARGS...]"

static const char record_description[] =
    "Runs PROGRAM under perf_event_open, following its threads and children, and\n"
    "writes a layout record (doc/formats/layout-record.md, version 2): samples of\n"
    "memory accesses (pc, thread, data address) for `lever layout report`.\n"
    "  pmu    PEBS (cpu/mem-loads/, cpu/mem-stores/) or IBS (ibs_op): precise pcs and\n"
    "         data addresses; self-tested at start: without one, a message and clock\n"
    "         (an error when --source=pmu is given)\n"
    "  clock  cpu-clock samples with the user registers: the memory operand of the\n"
    "         sampled instruction (the one before the interrupted pc, --skid) decoded\n"
    "         and its address computed from the registers. No PMU needed.\n"
    "  instr  programs built with `lever cc --layout` (GCC): every struct field access,\n"
    "         sampled, replayed through the cache model (its own options:\n"
    "         lever layout record --source=instr --help)\n"
    "Lost samples (ring buffer full) and throttling are counted and reported.\n";

static const char *const source_names[] = {"clock", "pmu", "instr", NULL};
static const char *const skid_names[] = {"previous", "none", NULL};

struct record_options {
	struct layout_collect_options c;
	int source, skid;
	bool source_given, freq_given, period_given, force;
	uint64_t freq, period, pages;
	const char *output;
};

static int parse_record_options(struct record_options *o, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "source", &o->source, "SOURCE", source_names,
		     "pmu, clock (default: pmu when the self-test passes,\n"
		     "else clock) or instr",
		     .given = &o->source_given),
	    CLI_FLAG('a', "all-cpus", &o->c.system_wide,
		     "sample every process on every CPU while PROGRAM runs\n"
		     "(root or CAP_PERFMON)"),
	    CLI_FLAG(0, "per-task", &o->c.per_task,
		     "clock: follow PROGRAM's threads with per-task events,\n"
		     "as without root, rather than with one event per CPU\n"
		     "whose other processes' samples are left out (cheaper\n"
		     "for programs that switch often; root or CAP_PERFMON)"),
	    CLI_UINT('F', "freq", &o->freq, "FREQ", 1, 100000,
		     "samples per second of CPU time (default 1000)", .given = &o->freq_given),
	    CLI_UINT('c', "count", &o->period, "PERIOD", 1, UINT64_MAX / 2,
		     "one sample per PERIOD events (pmu) or nanoseconds of\n"
		     "CPU time (clock)",
		     .given = &o->period_given),
	    CLI_FLAG('g', "call-graph", &o->c.callchain,
		     "record user call chains (frame pointers: build with\n"
		     "-fno-omit-frame-pointer) as `chain` lines"),
	    CLI_ENUM(0, "skid", &o->skid, "MODE", skid_names,
		     "clock: the instruction a sample stands for: previous\n"
		     "(default; the one before the interrupted pc) or none"),
	    CLI_UINT('m', "mmap-pages", &o->pages, "PAGES", 1, 1u << 20,
		     "ring buffer pages per CPU, a power of two (default 128)"),
	    CLI_STRING('o', "output", &o->output, "FILE", "the record (default layout.record)"),
	    CLI_FLAG(0, "force", &o->force, "replace an existing record"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout record",
	    .usage = RECORD_USAGE,
	    .description = record_description,
	    .options = table,
	    .epilogue =
		"Exit status: PROGRAM's; 1 if nothing could be recorded, 2 on a usage\n"
		"error, 126/127 if PROGRAM cannot be run / is not found. See doc/layout.md.",
	    .takes_program = true,
	    .help_column = 24,
	};
	int first = 0, ret;

	ret = cli_parse(&cmd, argc, argv, o, &first);
	if (ret)
		return ret;
	if (o->freq_given && o->period_given)
		return cli_usage_error(&cmd, "-F and -c: one or the other");
	if (o->pages & (o->pages - 1))
		return cli_usage_error(&cmd, "--mmap-pages %llu is not a power of two",
				       (unsigned long long)o->pages);
	o->c.argv = argv + first;
	return 0;
}

/*
 * --source=instr has its own options (layout_record_instr.c): find it
 * among lever's options, before "--" or PROGRAM.
 */
static bool wants_instr(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--source=instr") == 0)
			return true;
		if (strcmp(argv[i], "--source") == 0 && i + 1 < argc)
			return strcmp(argv[i + 1], "instr") == 0;
	}
	return false;
}

static int layout_record(int argc, char **argv)
{
	struct record_options o = {.freq = 1000, .pages = 128, .output = "layout.record"};
	char err[600], tmp[4096];
	int rc, status = 0;
	FILE *f;

	if (wants_instr(argc, argv))
		return layout_record_instr(argc, argv);
	rc = parse_record_options(&o, argc, argv);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	o.c.who = "lever layout record";
	o.c.source = o.source_given ? (enum layout_source)o.source : LAYOUT_SOURCE_PMU;
	o.c.source_given = o.source_given;
	o.c.skid = (enum layout_skid)o.skid;
	o.c.ring_pages = (unsigned)o.pages;
	/* where the PMUs are described (sysfs); tests point it at a synthetic tree */
	o.c.pmu_root = getenv("LEVER_EVENT_SOURCE_DIR");
	o.c.output_name = o.output;
	if (o.period_given)
		o.c.period = o.period;
	else
		o.c.freq = o.freq;
	if (report_output_check(o.output, NULL, 0, o.force, cli_data_kind, err, sizeof(err))) {
		fprintf(stderr, "lever layout record: %s (--force replaces it)\n", err);
		return 1;
	}
	/* written beside and renamed: a failed run leaves an older record whole */
	snprintf(tmp, sizeof(tmp), "%s.tmp", o.output);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "lever layout record: %s: %m\n", tmp);
		return 1;
	}
	rc = layout_collect(&o.c, f, &status);
	if (fclose(f))
		rc = -1;
	if (rc || rename(tmp, o.output)) {
		unlink(tmp);
		return rc > 0 ? rc : 1;
	}
	fprintf(stderr, "lever layout record: wrote %s\n", o.output);
	return launch_exit_status(status);
}

/* ------------------------------------------------------------ merge */

#define MERGE_USAGE "usage: lever layout merge -o OUT [--force] RECORD RECORD..."

static int read_record(const char *who, const char *path, struct layout_record *rec)
{
	char err[600];
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		fprintf(stderr, "%s: %s: %m\n", who, path);
		return -1;
	}
	rc = layout_record_read(f, path, rec, err, sizeof(err));
	fclose(f);
	if (rc)
		fprintf(stderr, "%s: %s\n", who, err);
	return rc;
}

static int layout_merge(int argc, char **argv)
{
	const char *out = NULL;
	bool force = false;
	const struct cli_option table[] = {
	    CLI_STRING('o', "output", &out, "OUT", "the merged record (required)"),
	    CLI_FLAG(0, "force", &force, "replace an existing record OUT"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout merge",
	    .usage = MERGE_USAGE,
	    .description =
		"Sums records of one build (spec autocpa.md §2.4): the same program build ID,\n"
		"source, period and program's static part are required; samples, data\n"
		"addresses and counters are summed per (module, pc, thread); a shared\n"
		"object's static part is kept from whichever record holds it.\n",
	    .options = table,
	    .help_column = 24,
	};
	struct layout_record acc, next;
	char err[600];
	int first = 0, rc;
	FILE *f;

	rc = cli_parse(&cmd, argc, argv, NULL, &first);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (!out)
		return cli_usage_error(&cmd, "where to? (-o OUT)");
	if (argc - first < 2)
		return cli_usage_error(&cmd, "two or more RECORDs, please");
	if (report_output_check(out, (const char *const *)argv + first, (size_t)(argc - first),
				force, cli_data_kind, err, sizeof(err))) {
		fprintf(stderr, "lever layout merge: %s\n", err);
		return 1;
	}
	if (read_record(cmd.name, argv[first], &acc))
		return 1;
	for (int i = first + 1; i < argc; i++) {
		if (read_record(cmd.name, argv[i], &next)) {
			layout_record_free(&acc);
			return 1;
		}
		rc = layout_record_merge(&acc, &next, err, sizeof(err));
		layout_record_free(&next);
		if (!rc && *err)
			fprintf(stderr, "lever layout merge: %s: %s\n", argv[i], err);
		if (rc) {
			fprintf(stderr, "lever layout merge: %s: %s\n", argv[i], err);
			layout_record_free(&acc);
			return 1;
		}
	}
	f = fopen(out, "w");
	rc = f ? layout_record_write(f, &acc) : -1;
	if (f && fclose(f))
		rc = -1;
	if (rc)
		fprintf(stderr, "lever layout merge: %s: %m\n", out);
	layout_record_free(&acc);
	return rc ? 1 : 0;
}

/* ------------------------------------------------------------ export */

#define EXPORT_USAGE "usage: lever layout export --pprof FILE [--force] RECORD"

static int layout_export(int argc, char **argv)
{
	const char *pprof = NULL;
	bool force = false;
	const struct cli_option table[] = {
	    CLI_STRING(0, "pprof", &pprof, "FILE",
		       "per-field samples as a gzipped pprof profile (profile.proto):\n"
		       "data type and field as labels and as frames"),
	    CLI_FLAG(0, "force", &force, "replace an existing data file FILE"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout export",
	    .usage = EXPORT_USAGE,
	    .description = "Writes a record's samples per struct field for continuous-profiling\n"
			   "services (Parca, Grafana Pyroscope) and `go tool pprof`: each field\n"
			   "is a sample with labels data_type and field, raw and adjusted counts\n"
			   "(Algorithms 2 and 3) as the values.\n",
	    .options = table,
	    .help_column = 24,
	};
	struct layout_record rec;
	char err[600];
	int first = 0, rc;
	FILE *f;

	rc = cli_parse(&cmd, argc, argv, NULL, &first);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (!pprof)
		return cli_usage_error(&cmd, "what to export? (--pprof FILE)");
	if (first != argc - 1)
		return cli_usage_error(&cmd, "one RECORD, please");
	if (report_output_check(pprof, (const char *const *)argv + first, 1, force, cli_data_kind,
				err, sizeof(err))) {
		fprintf(stderr, "lever layout export: %s\n", err);
		return 1;
	}
	if (read_record(cmd.name, argv[first], &rec))
		return 1;
	if (layout_annotate(&rec.program, rec.samples, rec.n_samples, LAYOUT_ADJUST_THESIS)) {
		fprintf(stderr, "lever layout export: out of memory\n");
		layout_record_free(&rec);
		return 1;
	}
	f = fopen(pprof, "w");
	if (!f) {
		fprintf(stderr, "lever layout export: %s: %m\n", pprof);
		layout_record_free(&rec);
		return 1;
	}
	rc = layout_write_pprof(f, &rec, err, sizeof(err));
	if (fclose(f) && !rc) {
		rc = -1;
		snprintf(err, sizeof(err), "%s: write error", pprof);
	}
	if (rc)
		fprintf(stderr, "lever layout export: %s\n", err);
	layout_record_free(&rec);
	return rc ? 1 : 0;
}

/* ------------------------------------------------------------ dispatch */

int cmd_layout(int argc, char **argv)
{
	struct layout_options o = {0};
	int rc;

	layout_params_default(&o.params);
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		char *help_argv[] = {argv[0], "--help", NULL};

		if (argc < 2) {
			fprintf(stderr, "lever layout: which subcommand? (record, report, refs, "
					"merge, export)\nRun 'lever layout --help' for usage.\n");
			return EXIT_USAGE;
		}
		return parse_layout_options(&o, 2, help_argv) == CLI_HELP ? 0 : EXIT_USAGE;
	}
	if (strcmp(argv[1], "record") == 0)
		return layout_record(argc - 1, argv + 1);
	if (strcmp(argv[1], "merge") == 0)
		return layout_merge(argc - 1, argv + 1);
	if (strcmp(argv[1], "export") == 0)
		return layout_export(argc - 1, argv + 1);
	if (strcmp(argv[1], "refs") == 0)
		return cmd_layout_refs(argc - 1, argv + 1);
	if (strcmp(argv[1], "report") != 0) {
		fprintf(stderr,
			"lever layout: unknown subcommand '%s' (record, report, refs, merge, "
			"export)\nRun 'lever layout --help' for usage.\n",
			argv[1]);
		return EXIT_USAGE;
	}
	rc = parse_layout_options(&o, argc - 1, argv + 1);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	return layout_report(&o);
}
