/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `lever layout record --source=instr` (issue 17; doc/layout-instr.md): run
 * a program built with `lever cc --layout` and write the record its trace
 * gives through the cache model (src/layout/instr*.c), or, with --trace,
 * replay a trace already written. The other sources (pmu, clock) are
 * `lever layout record`'s own (layout.c); it hands --source=instr here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"
#include "layout/layout.h"
#include "report/report.h"

#define INSTR_USAGE                                                                                \
	"usage: lever layout record --source=instr [-c PERIOD] [--burst N] [--event EVENT]\n"      \
	"                           [--cores N] [-o FILE] [--force] -- PROGRAM [ARGS...]\n"        \
	"       lever layout record --source=instr --trace TRACE [OPTIONS] -- PROGRAM\n"           \
	"       lever layout record --source=instr --truth FILE -- PROGRAM"

static const char instr_description[] =
    "Runs PROGRAM, built with `lever cc --layout` (GCC), with its layout runtime\n"
    "logging struct field accesses (site, data address, thread): each thread logs\n"
    "BURST consecutive accesses of every PERIOD. The trace is replayed through the\n"
    "cache model (private L1/L2 per simulated core, one per thread modulo --cores,\n"
    "shared LLC, coherence, false-sharing classification), and the record gets the\n"
    "model's misses at each access site per thread: exact when every access is\n"
    "logged (-c 1 --burst 1), scaled by PERIOD/BURST (the record's period) when not.\n";

static const char *const source_names[] = {"instr", NULL};

struct instr_cli {
	struct layout_instr_run run;
	int source, event;
	uint64_t period, burst, cores;
	bool source_given, force;
	const char *output, *trace, *truth;
};

static int parse_instr_options(struct instr_cli *o, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "source", &o->source, "SOURCE", source_names,
		     "instr: programs built with lever cc --layout", .given = &o->source_given),
	    CLI_UINT('c', "count", &o->period, "PERIOD", 1, INT32_MAX,
		     "a window of accesses per thread (default 65536)"),
	    CLI_UINT(0, "burst", &o->burst, "N", 1, INT32_MAX,
		     "accesses logged at the start of each window\n"
		     "(default 1024; N = PERIOD logs every access)"),
	    CLI_ENUM(0, "event", &o->event, "EVENT", layout_instr_event_names,
		     "what the samples count: l1 (L1 load and store misses,\n"
		     "default), l1-load, l2, llc, coherence"),
	    CLI_UINT(0, "cores", &o->cores, "N", 1, 64, "simulated cores (default 4)"),
	    CLI_STRING(0, "trace", &o->trace, "TRACE",
		       "replay this trace of PROGRAM instead of running it"),
	    CLI_STRING(0, "truth", &o->truth, "FILE",
		       "write the plugin's (function, struct, field) table of\n"
		       "PROGRAM to FILE, the truth for static references\n"
		       "(layout_static_score.py --truth), and run nothing"),
	    CLI_STRING('o', "output", &o->output, "FILE", "the record (default layout.record)"),
	    CLI_FLAG(0, "force", &o->force, "replace an existing record"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout record --source=instr",
	    .usage = INSTR_USAGE,
	    .description = instr_description,
	    .options = table,
	    .epilogue = "Exit status: PROGRAM's, or 1 if nothing could be recorded, 2 on a usage\n"
			"error. See doc/layout-instr.md.",
	    .takes_program = true,
	    .help_column = 24,
	};
	int first = 0, ret;

	ret = cli_parse(&cmd, argc, argv, o, &first);
	if (ret)
		return ret;
	if (!o->source_given)
		return cli_usage_error(&cmd, "these options are --source=instr's");
	if (o->burst > o->period)
		return cli_usage_error(&cmd, "--burst %llu is more than the period %llu",
				       (unsigned long long)o->burst, (unsigned long long)o->period);
	o->run.argv = argv + first;
	o->run.period = (uint32_t)o->period;
	o->run.burst = (uint32_t)o->burst;
	o->run.replay.event = (enum layout_instr_event)o->event;
	o->run.replay.cache.cores = (uint32_t)o->cores;
	return 0;
}

/* Replay a trace written earlier by PROGRAM. */
static int replay_trace(const struct instr_cli *o, FILE *f)
{
	struct layout_instr_summary sum;
	char err[1024];

	if (layout_instr_collect(o->trace, o->run.argv[0], f, &o->run.replay, &sum, err,
				 sizeof(err)) < 0) {
		fprintf(stderr, "lever layout record: %s\n", err);
		return -1;
	}
	layout_instr_print_summary(stderr, "lever layout record", &sum);
	return 0;
}

static int write_truth(const struct instr_cli *o)
{
	char err[1024] = "";
	FILE *f = strcmp(o->truth, "-") == 0 ? stdout : fopen(o->truth, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "lever layout record: %s: %m\n", o->truth);
		return 1;
	}
	rc = layout_instr_write_truth(o->run.argv[0], f, err, sizeof(err));
	if (f != stdout && fclose(f))
		rc = -1;
	if (rc < 0) {
		fprintf(stderr, "lever layout record: %s\n",
			err[0] ? err : "cannot write the truth");
		return 1;
	}
	return 0;
}

int layout_record_instr(int argc, char **argv)
{
	struct instr_cli o = {.output = "layout.record"};
	char err[600], tmp[4096];
	int rc, status = 0;
	FILE *f;

	layout_instr_run_default(&o.run);
	o.period = o.run.period;
	o.burst = o.run.burst;
	o.cores = o.run.replay.cache.cores;
	rc = parse_instr_options(&o, argc, argv);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (o.truth)
		return write_truth(&o);
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
	rc = o.trace ? replay_trace(&o, f) : layout_instr_record(&o.run, f, &status);
	if (fclose(f))
		rc = -1;
	if (rc || rename(tmp, o.output)) {
		unlink(tmp);
		return 1;
	}
	fprintf(stderr, "lever layout record: wrote %s\n", o.output);
	return launch_exit_status(status);
}
