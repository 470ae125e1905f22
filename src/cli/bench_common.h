/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by lever bench, lever compare and lever stats (bench_run.c,
 * bench_analysis.c, bench_options.c): running a command repeatedly and
 * measuring it, and describing and comparing samples of timings.
 */
#ifndef LEVER_CLI_BENCH_COMMON_H
#define LEVER_CLI_BENCH_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "report/report.h"
#include "stats/stats.h"

#define EXIT_USAGE 2

/* ------------------------------------------------------------ options */

struct bench_options {
	size_t warmup;
	size_t min_runs, max_runs; /* max_runs 0 = no limit */
	double min_time;	   /* seconds of measuring before stopping */
	const char *prepare;	   /* shell command before every run */
	const char *cleanup;	   /* shell command after the last run of each command */
	bool randomize_env;	   /* random-size environment variable per run */
	bool randomize_heap;	   /* each run under the shuffling heap, a fresh seed */
	bool randomize_code;	   /* functions relocated at random (lever cc programs) */
	bool randomize_stack;	   /* random stack pads (lever cc programs) */
	bool randomize_link;	   /* programs linked by lever cc --randomize-link */
	bool rerandomize_given;	   /* --rerandomize was on the command line */
	uint64_t rerandomize_ns;   /* code/stack re-randomization period; 0: once */
	bool show_output;
	bool ignore_failure;
	bool progress; /* progress bar on stderr (only if it is a terminal) */
	uint64_t seed;
};

/* Defaults: hyperfine's (10 runs, 3 s), env randomization on. */
void bench_options_init(struct bench_options *o);
/* Any part of the Stabilizer runtime per run (heap, code, stack)? */
bool bench_options_stabilizer(const struct bench_options *o);
/*
 * After all options: combinations that would do nothing (--rerandomize
 * without code or stack). 0, or EXIT_USAGE after printing the error.
 */
int bench_options_check(const struct bench_options *o, const char *command);

/*
 * Parse the options common to bench and compare (one getopt_long case);
 * returns 1 if handled, 0 if not ours, EXIT_USAGE on a bad value (after
 * printing the error prefixed with `command`).
 */
int bench_options_parse(struct bench_options *o, const char *command, int c, const char *arg);
/* getopt_long entries for bench_options_parse, terminated by a zero entry. */
extern const struct option bench_long_options[];
/* A command's own getopt_long entries followed by bench_long_options (calloc'ed). */
struct option *bench_options_merge(const struct option *own, size_t n_own);
#define BENCH_OPTIONS_HELP                                                                         \
	"Running:\n"                                                                               \
	"  -w, --warmup N          runs before measuring, not recorded (default 0)\n"              \
	"  -m, --min-runs N        at least N measured runs (default 10)\n"                        \
	"  -M, --max-runs N        at most N measured runs (default: no limit)\n"                  \
	"  -n, --runs N            exactly N measured runs\n"                                      \
	"      --min-time DUR      measure for at least DUR (default 3s), within the run\n"        \
	"                          limits; DUR is a number with ns, us, ms or s (default s)\n"     \
	"  -p, --prepare CMD       run the shell command CMD before every run\n"                   \
	"  -c, --cleanup CMD       run the shell command CMD after the last run\n"                 \
	"      --randomize=LIST    layout randomization, comma-separated: env (default; a\n"       \
	"                          random-size environment variable, 0-4095 bytes), heap,\n"       \
	"                          code, stack (lever stabilize --heap/--code/--stack with\n"      \
	"                          a fresh seed per run; code and stack need a program\n"          \
	"                          built with lever cc), link (the program must be linked\n"       \
	"                          by lever cc --randomize-link; its link seed is\n"               \
	"                          reported), none\n"                                              \
	"      --rerandomize=DUR   re-randomize code and stack every DUR while a run goes\n"       \
	"                          on (default 500ms, 1ms to 1h), or 'off': once per run\n"        \
	"  -i, --ignore-failure    keep going when the command exits non-zero\n"                   \
	"      --show-output       let the command write to the terminal\n"                        \
	"      --no-progress       no progress bar (it is shown only on a terminal anyway)\n"      \
	"      --seed N            random seed for environment offsets, Stabilizer seeds\n"        \
	"                          and the bootstrap\n"

/* ------------------------------------------------------------ running */

struct bench_command {
	char *display; /* as the user wrote it */
	char **argv;   /* argv to exec (NULL-terminated) */
	bool shell;    /* argv is {"/bin/sh", "-c", display} */
	char *program; /* the executable checked for --randomize=code/stack/link */
	bool link_seed_known;
	uint64_t link_seed; /* lever cc --randomize-link's seed, read from program */
};

/*
 * A command string: split into words (with '...', "..." and backslash
 * quoting) when it has no shell syntax, else run by /bin/sh -c.
 */
int bench_command_from_string(struct bench_command *c, const char *text);
/* An argv given after "--": exec'd as is. */
int bench_command_from_argv(struct bench_command *c, char **argv, int argc);
void bench_command_free(struct bench_command *c);

struct bench_run {
	double wall, user, sys;	  /* seconds */
	double max_rss;		  /* bytes */
	int exit_code;		  /* exit status, or 128 + signal */
	size_t env_offset;	  /* bytes of the environment padding */
	uint64_t stabilizer_seed; /* LEVER_STABILIZE_SEED of the run (heap, code, stack) */
	uint64_t link_seed;	  /* the program's link seed at the run (--randomize=link) */
};

struct bench_result {
	const struct bench_command *command;
	struct bench_run *runs;
	size_t n, capacity;
	double *wall; /* copy of runs[].wall, for the statistics */
};

/* Run state shared by the commands being measured (RNG, timing, progress). */
struct bench_session {
	const struct bench_options *opt;
	const char *name; /* "lever bench" */
	struct rng rng;
	uint64_t iteration;
	bool tty;
	char preload[8192]; /* LD_PRELOAD for the runs, with the runtime (heap/code/stack) */
};
/* 0, or 1 after printing an error (the Stabilizer runtime is missing). */
int bench_session_init(struct bench_session *s, const struct bench_options *o, const char *name);

/*
 * Measure commands: warm-up runs of each, then measured runs interleaved
 * across the commands (A B A B ...) until the run limits and minimum time
 * say stop. results[i] belongs to commands[i]. Returns 0, or 1 after
 * printing an error (a failing command, prepare or cleanup).
 */
int bench_measure(struct bench_session *s, const struct bench_command *commands, size_t k,
		  struct bench_result *results);
void bench_result_free(struct bench_result *r);

/*
 * --randomize=code, stack, link (bench_layout.c): before the first run,
 * find each command's program (its first word, through PATH) and check that
 * lever cc built it (code: .rela.text, stack: lever_stack_pads, link: the
 * link seed lever cc --randomize-link records); reads the link seed. 0, or 1
 * after printing what is missing and how to build the program.
 */
int bench_check_programs(const struct bench_options *o, struct bench_command *commands, size_t k,
			 const char *name);
/*
 * The link seed recorded in the program at path; 0, or -1 if it has none.
 * Read again before every run: a --prepare command may relink it.
 */
int bench_program_link_seed(const char *path, uint64_t *seed);
/* The layout randomization of the runs of r (NULL: in general), one line of text. */
char *bench_layout_text(const struct bench_options *o, const struct bench_result *r, char *buf,
			size_t size);
/*
 * The same as a JSON object: randomize (list of parts), rerandomize_ns,
 * and per command its program, link seed (before the first run) and the
 * link and Stabilizer seeds of each run (seeds as decimal strings: they are
 * 64-bit).
 */
void bench_layout_json(const struct bench_options *o, const struct bench_result *results, size_t k,
		       struct report_json *j);
/* The same as HTML paragraphs. */
void bench_layout_html(const struct bench_options *o, const struct bench_result *results, size_t k,
		       FILE *f);

/* ------------------------------------------------------------ analysis */

/* How to show values: times (in seconds after multiplying by to_seconds) or plain numbers. */
struct value_format {
	double to_seconds; /* 0: plain numbers */
};
char *format_value(const struct value_format *vf, double v, char *buf, size_t size);
/* --unit s|ms|us|ns|none; 0 or -1. (stats.c) */
int parse_value_unit(const char *text, struct value_format *vf);
/* --alpha A with 0 < A < 1; 0 or -1. (stats.c) */
int parse_alpha(const char *text, double *alpha);

struct sample_description {
	const char *name;
	const double *x;
	size_t n;
	struct stats_summary summary;
	struct stats_test normality; /* Shapiro-Wilk */
	int normality_err;	     /* 0, -EINVAL (n out of range), -EDOM (constant) */
	struct stats_interval ci_mean;
	size_t outliers;
};
int describe_sample(struct sample_description *d, const char *name, const double *x, size_t n,
		    double level);
/* "normal (Shapiro-Wilk W = 0.97, p = 0.41)" and the like. */
char *normality_text(const struct sample_description *d, double alpha, char *buf, size_t size);

enum compare_test { TEST_AUTO, TEST_WELCH, TEST_STUDENT, TEST_MANN_WHITNEY };

struct compare_options {
	double alpha, level;
	enum compare_test test;
	size_t resamples;
	uint64_t seed;
	struct value_format format;
};
void compare_options_init(struct compare_options *o);

struct comparison {
	struct sample_description a, b;
	const struct compare_options *opt;
	enum compare_test test; /* the one used */
	char reason[384];
	struct stats_test result;
	int test_err;
	bool exact;
	struct stats_interval speedup; /* mean(a) / mean(b), BCa */
	struct stats_test variance;    /* Brown-Forsythe: do the variances differ? */
	bool significant;
	char verdict[320];
};
int compare_samples(struct comparison *c, const struct compare_options *o, const char *name_a,
		    const double *a, size_t na, const char *name_b, const double *b, size_t nb);
const char *compare_test_name(enum compare_test t);
void comparison_print_text(const struct comparison *c, FILE *f);
void comparison_print_json(const struct comparison *c, struct report_json *j);
/* The members of comparison_print_json's object, for a caller adding its own. */
void comparison_print_json_fields(const struct comparison *c, struct report_json *j);
void comparison_print_html(const struct comparison *c, FILE *f);
void sample_description_json(const struct sample_description *d, struct report_json *j,
			     bool with_values);
/* One row of numbers per sample, for text, Markdown and HTML output. */
struct report_table *sample_table(const struct sample_description *d, size_t k,
				  const struct value_format *vf, double alpha);

/*
 * lever compare --suite (bench_suite.c): per-benchmark comparisons of two
 * configurations, the within-subjects ANOVA and the multiple-testing caveat.
 */
struct suite_outputs {
	bool drop_max;		     /* drop the largest run of each cell first */
	bool json;		     /* JSON on stdout instead of text */
	const char *html, *markdown; /* files to write too, or NULL; markdown "-": stdout */
};
int compare_suite(const char *path, const char *configs, const struct suite_outputs *want,
		  const struct compare_options *o);

/* Write an HTML page with distributions and Q-Q plots; body(f, arg) adds the rest. */
int write_html_report(const char *path, const char *title, const struct report_series *series,
		      size_t k, const struct value_format *vf, void (*body)(FILE *, const void *),
		      const void *arg);

#endif
