/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The run options of lever bench and lever compare as entries of their
 * option tables (cli/options.h): one list, so that both commands parse and
 * document them alike. RUN_OPTIONS(o) expands to the entries for a struct
 * measure_options *o (src/measure); the values that are more than a number
 * are read by the measure room's parsers through the callbacks below.
 */
#ifndef LEVER_CLI_RUN_OPTIONS_H
#define LEVER_CLI_RUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "cli/options.h"
#include "measure/measure.h"

/* cli_callback: opt->value is the struct measure_options. */
int run_option_runs(const struct cli_option *opt, const char *arg, void *ctx);
int run_option_min_time(const struct cli_option *opt, const char *arg, void *ctx);
int run_option_randomize(const struct cli_option *opt, const char *arg, void *ctx);
int run_option_rerandomize(const struct cli_option *opt, const char *arg, void *ctx);
/*
 * The report files of bench, compare and stats (outs, NULL entries skipped),
 * before anything is read or run: never one of the inputs, never an existing
 * profile or samples file unless force (issue 14 point 9), and writable. 0,
 * or 1 after saying which one and why (prefixed with who).
 */
int check_report_outputs(const char *who, const char *const *outs, size_t n_outs,
			 const char *const *inputs, size_t n_inputs, bool force);

/* --alpha A, 0 < A < 1: opt->value is the double. */
int run_option_alpha(const struct cli_option *opt, const char *arg, void *ctx);
/* --unit: the choices of CLI_ENUM, and the chosen one as a value format. */
extern const char *const run_unit_names[];
struct measure_value_format run_unit_format(int unit);

#define RUN_COUNT_WHAT "a whole number of runs of at least 2, in digits (1000, not 1e3)"

#define RUN_OPTIONS(o)                                                                             \
	CLI_GROUP("Running"),                                                                      \
	    CLI_UINT('w', "warmup", &(o)->warmup, "N", 0, 100000000,                               \
		     "runs before measuring, not recorded (default 0)",                            \
		     .what = "a whole number of runs, in digits"),                                 \
	    CLI_UINT('m', "min-runs", &(o)->min_runs, "N", 2, 100000000,                           \
		     "at least N measured runs (default 10)", .what = RUN_COUNT_WHAT),             \
	    CLI_UINT('M', "max-runs", &(o)->max_runs, "N", 2, 100000000,                           \
		     "at most N measured runs (default: no limit)", .what = RUN_COUNT_WHAT),       \
	    CLI_CALLBACK('n', "runs", "N", run_option_runs, "exactly N measured runs",             \
			 .value = (o), .what = RUN_COUNT_WHAT),                                    \
	    CLI_CALLBACK(0, "min-time", "DUR", run_option_min_time,                                \
			 "measure for at least DUR (default 3s), within the run\n"                 \
			 "limits; DUR is a number with ns, us, ms or s (default s)",               \
			 .value = (o), .what = "a duration (such as 500ms or 3s)"),                \
	    CLI_STRING('p', "prepare", &(o)->prepare, "CMD",                                       \
		       "run the shell command CMD before every run"),                              \
	    CLI_STRING('c', "cleanup", &(o)->cleanup, "CMD",                                       \
		       "run the shell command CMD after the last run"),                            \
	    CLI_CALLBACK(0, "randomize", "LIST", run_option_randomize,                             \
			 "randomize each run, comma-separated: env (default; a\n"                  \
			 "random-size environment variable, 0-4095 bytes), heap,\n"                \
			 "code, stack (lever stabilize --heap/--code/--stack with\n"               \
			 "a fresh seed per run; code and stack need a program\n"                   \
			 "built with lever cc), link (the program must be linked\n"                \
			 "by lever cc --randomize-link; its link seed is\n"                        \
			 "reported), none",                                                        \
			 .value = (o), .what = "a list of env, heap, code, stack, link or none"),  \
	    CLI_CALLBACK(0, "rerandomize", "DUR", run_option_rerandomize,                          \
			 "re-randomize code and stack every DUR while a run goes\n"                \
			 "on (default 500ms, 1ms to 1h), or 'off': once per run",                  \
			 .value = (o), .what = "a duration from 1ms to 1h, or off"),               \
	    CLI_FLAG('i', "ignore-failure", &(o)->ignore_failure,                                  \
		     "keep going when the command exits non-zero or times out"),                   \
	    CLI_DURATION(0, "timeout", &(o)->timeout_ns, "DUR", NSEC_PER_SEC, NSEC_PER_MSEC,       \
			 10000000ULL * NSEC_PER_SEC,                                               \
			 "stop a run (or prepare, cleanup) that takes longer than\n"               \
			 "DUR (ns, us, ms or s; default unit s) and end the\n"                     \
			 "measurement there, reporting the runs done; with -i the\n"               \
			 "run is left out and the measurement goes on"),                           \
	    CLI_FLAG(0, "show-output", &(o)->show_output,                                          \
		     "let the command write to the terminal"),                                     \
	    CLI_FLAG(0, "no-progress", &(o)->no_progress,                                          \
		     "no progress bar (it is shown only on a terminal anyway)"),                   \
	    CLI_UINT(0, "seed", &(o)->seed, "N", 0, UINT64_MAX,                                    \
		     "random seed for environment offsets, Stabilizer seeds\n"                     \
		     "and the bootstrap",                                                          \
		     .what = "a seed (0..2^64-1, in digits)", .given = &(o)->seed_given)

#endif
