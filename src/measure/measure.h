/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * measure: the library behind lever bench, lever compare and lever stats
 * (doc/bench.md, doc/compare.md, doc/stats.md; the statistics follow
 * spec/stabilizer.md). It runs commands repeatedly and measures them
 * (run.c), checks and describes their Stabilizer randomization
 * (randomization.c), compares a suite of benchmarks under two
 * configurations (suite.c), and writes the results as text, JSON, CSV,
 * Markdown and HTML (output.c, bench_report.c, compare_report.c,
 * stats_report.c). The statistical decision itself is in src/stats
 * (stats_compare_samples); this room only feeds it and shows its answer.
 */
#ifndef LEVER_MEASURE_H
#define LEVER_MEASURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "report/report.h"
#include "stats/stats.h"

/* The exit status of a usage error (bad option value), as every lever command. */
#define MEASURE_EXIT_USAGE 2

/* ------------------------------------------------------------ options */

struct measure_options {
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
	uint64_t timeout_ns; /* a run (or prepare, cleanup) longer than this is stopped; 0: none */
	bool no_progress;    /* no progress bar on stderr (it is shown only on a terminal anyway) */
	uint64_t seed;
	bool seed_given; /* --seed was on the command line */
};

/* Defaults: hyperfine's (10 runs, 3 s), env randomization on. */
void measure_options_init(struct measure_options *o);
/* Any part of the Stabilizer runtime per run (heap, code, stack)? */
bool measure_options_stabilizer(const struct measure_options *o);
/*
 * After all options: combinations that would do nothing (--rerandomize
 * without code or stack). 0, or MEASURE_EXIT_USAGE after printing the error.
 */
int measure_options_check(const struct measure_options *o, const char *command);

/*
 * The values of --runs (sets both limits; digits only, at least 2),
 * --min-time (a duration, default unit s), --randomize (a comma-separated
 * list of env, heap, code, stack, link, none) and --rerandomize (1ms..1h or
 * off): 0, or -1 for a value that is not one (nothing printed).
 */
int measure_parse_runs(struct measure_options *o, const char *arg);
int measure_parse_min_time(struct measure_options *o, const char *arg);
int measure_parse_randomize(struct measure_options *o, const char *arg);
int measure_parse_rerandomize(struct measure_options *o, const char *arg);

/* ------------------------------------------------------------ running */

struct measure_command {
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
int measure_command_from_string(struct measure_command *c, const char *text);
/* An argv given after "--": exec'd as is. */
int measure_command_from_argv(struct measure_command *c, char **argv, int argc);
void measure_command_free(struct measure_command *c);

struct measure_run {
	double wall, user, sys;	  /* seconds */
	double max_rss;		  /* bytes */
	int exit_code;		  /* exit status, or 128 + signal */
	int wait_status;	  /* as waitpid gave it: tells a signal from an exit status */
	size_t env_offset;	  /* bytes of the environment padding */
	uint64_t stabilizer_seed; /* LEVER_STABILIZE_SEED of the run (heap, code, stack) */
	uint64_t link_seed;	  /* the program's link seed at the run (--randomize=link) */
};

struct measure_result {
	const struct measure_command *command;
	struct measure_run *runs;
	size_t n, capacity;
	double *wall; /* copy of runs[].wall, for the statistics */
};

/* Run state shared by the commands being measured (RNG, timing, progress). */
struct measure_session {
	const struct measure_options *opt;
	const char *name; /* "lever bench" */
	struct rng rng;
	uint64_t iteration;
	bool tty;
	/* How the measurement ended when measure_commands returned 1 with runs worth reporting: */
	int stop_signal;	/* SIGINT or SIGTERM stopped it (the run going on is not counted) */
	size_t timed_out;	/* runs stopped by --timeout (not counted) */
	bool cleanup_failed;	/* the measurement is complete; the cleanup command failed */
	char runtime[PATH_MAX]; /* liblever-stabilizer.so, for runs with heap/code/stack */
};
/*
 * Each run's environment is built by the launcher (launch/launch.h): the
 * Stabilizer settings and the runtime in LD_PRELOAD for heap, code and
 * stack. 0, or 1 after printing an error (the runtime is missing).
 */
int measure_session_init(struct measure_session *s, const struct measure_options *o,
			 const char *name);

/*
 * Measure commands: warm-up runs of each, then measured runs interleaved
 * across the commands (A B A B ...) until the run limits and minimum time
 * say stop. results[i] belongs to commands[i]. Returns 0, or 1 after
 * printing an error (a failing command, prepare or cleanup). SIGINT and
 * SIGTERM stop the run going on (and its process group) and end the
 * measurement; a run longer than --timeout is stopped too. The results
 * then hold the runs completed, and measure_session_ending says whether
 * they are worth reporting and with which exit status.
 */
int measure_commands(struct measure_session *s, const struct measure_command *commands, size_t k,
		     struct measure_result *results);
void measure_result_free(struct measure_result *r);
/*
 * After measure_commands returned 1: true when the runs done are a
 * measurement to report (stopped by a signal or a timeout, or only the
 * cleanup failed), with *status the exit status to end with (128 + the
 * signal, else 1). False for errors that leave nothing to report.
 */
bool measure_session_ending(const struct measure_session *s, int *status);

/*
 * --randomize=code, stack, link (randomization.c): before the first run,
 * find each command's program (its first word, through PATH) and check that
 * lever cc built it (code: .rela.text, stack: lever_stack_pads, link: the
 * link seed lever cc --randomize-link records); reads the link seed. 0, or 1
 * after printing what is missing and how to build the program.
 */
int measure_randomization_check(const struct measure_options *o, struct measure_command *commands,
				size_t k, const char *name);
/*
 * The link seed recorded in the program at path; 0, or -1 if it has none.
 * Read again before every run: a --prepare command may relink it.
 */
int measure_program_link_seed(const char *path, uint64_t *seed);
/* The randomization of the runs of r (NULL: in general), one line of text. */
char *measure_randomization_text(const struct measure_options *o, const struct measure_result *r,
				 char *buf, size_t size);
/*
 * The same as a JSON object: randomize (list of parts), rerandomize_ns,
 * and per command its program, link seed (before the first run) and the
 * link and Stabilizer seeds of each run (seeds as decimal strings: they are
 * 64-bit).
 */
void measure_randomization_json(const struct measure_options *o,
				const struct measure_result *results, size_t k,
				struct report_json *j);
/* The same as HTML paragraphs. */
void measure_randomization_html(const struct measure_options *o,
				const struct measure_result *results, size_t k, FILE *f);

/* ------------------------------------------------------------ values and samples (output.c) */

/* How to show values: times (in seconds after multiplying by to_seconds) or plain numbers. */
struct measure_value_format {
	double to_seconds; /* 0: plain numbers */
};
char *measure_format_value(const struct measure_value_format *vf, double v, char *buf, size_t size);
/* --unit s|ms|us|ns|none; 0 or -1. */
int measure_parse_unit(const char *text, struct measure_value_format *vf);
/* --alpha A with 0 < A < 1; 0 or -1. */
int measure_parse_alpha(const char *text, double *alpha);
/*
 * Values read as times (vf a time unit) must be positive: a zero or negative
 * "time" is a mistake in the data, and would turn speedups into nonsense.
 * 0, or -EDOM with "NAME: value I is V: ..." in err. Plain numbers pass.
 */
int measure_check_times(const char *name, const double *x, size_t n,
			const struct measure_value_format *vf, char *err, size_t size);
/*
 * Can path be written? Checked before the runs, so that a typo in an
 * export path does not cost a whole measurement: 0 or -errno ("-": stdout).
 * An existing file is opened without being truncated.
 */
int measure_check_output(const char *path);
/*
 * Flush standard output at the end of a command: 0, or 1 after reporting a
 * write error (a full disk, > /dev/full) that would otherwise pass unseen.
 */
int measure_finish_stdout(const char *who);

void measure_sample_json(const struct stats_sample_description *d, struct report_json *j,
			 bool with_values);
/* One row of numbers per sample, for text, Markdown and HTML output. */
struct report_table *measure_sample_table(const struct stats_sample_description *d, size_t k,
					  const struct measure_value_format *vf, double alpha);

/* Write an HTML page with distributions and Q-Q plots; body(f, arg) adds the rest. */
int measure_write_html(const char *path, const char *title, const struct report_series *series,
		       size_t k, const struct measure_value_format *vf,
		       void (*body)(FILE *, const void *), const void *arg);

/* ------------------------------------------------------------ comparisons (compare_report.c) */

/* The options of lever compare's analysis: the decision's, and how to show values. */
struct measure_compare_options {
	struct stats_compare_options stats;
	struct measure_value_format format;
};
/* stats_compare_options_init, values in seconds. */
void measure_compare_options_init(struct measure_compare_options *o);

void measure_comparison_text(const struct stats_comparison *c,
			     const struct measure_value_format *vf, FILE *f);
/* The members of the comparison's JSON object, for a caller adding its own. */
void measure_comparison_json_fields(const struct stats_comparison *c, struct report_json *j);
void measure_comparison_html(const struct stats_comparison *c,
			     const struct measure_value_format *vf, FILE *f);

/*
 * The outputs of one comparison of lever compare. res: the two commands'
 * results when they were run (their randomization is shown), NULL for
 * sample files. run: the run options (NULL with res NULL).
 */
struct measure_comparison_report {
	const struct stats_comparison *c;
	const struct measure_value_format *vf;
	const char *title;
	const struct measure_options *run;
	const struct measure_result *res;
};
/* The text report (title, both sides, test, verdict, randomization). */
void measure_comparison_report_text(const struct measure_comparison_report *r, FILE *f);
/* One JSON object: the comparison and, with commands, their randomization. */
void measure_comparison_report_json(const struct measure_comparison_report *r, FILE *f);
/* Both samples as a Markdown table, then the test and the verdict; 0 or -errno. */
int measure_comparison_report_markdown(const struct measure_comparison_report *r, FILE *f);
/* The HTML page at path; 0 or -errno. */
int measure_comparison_report_html(const struct measure_comparison_report *r, const char *path);

/* ------------------------------------------------------------ lever bench results (bench_report.c)
 */

/* The statistics of one command's runs. */
struct measure_bench_summary {
	struct stats_sample_description wall;
	struct stats_interval ci_bca; /* of the mean wall time */
	double user, sys, rss_mean, rss_max;
	size_t failures;
	double *user_v, *sys_v, *rss_v, *exit_v, *offset_v; /* per run */
};
/* 0, or -ENOMEM / -EINVAL (no runs). Free with measure_bench_summary_free. */
int measure_bench_summarize(struct measure_bench_summary *s, const struct measure_result *r,
			    uint64_t seed);
void measure_bench_summary_free(struct measure_bench_summary *s);

/* What lever bench shows: the runs, their statistics and how they were run. */
struct measure_bench_report {
	const struct measure_bench_summary *s;
	const struct measure_result *r;
	const struct measure_options *run;
	double alpha; /* of the normality test */
};
/* hyperfine's summary plus lever's lines, then warnings (outliers, a slow first run...). */
void measure_bench_report_text(const struct measure_bench_report *b, FILE *f);
enum measure_export { MEASURE_EXPORT_JSON, MEASURE_EXPORT_CSV, MEASURE_EXPORT_MARKDOWN };
/* JSON (hyperfine's fields plus lever's), CSV or Markdown (hyperfine's columns). */
void measure_bench_report_export(const struct measure_bench_report *b, enum measure_export kind,
				 FILE *f);
/* The HTML page at path; 0 or -errno. */
int measure_bench_report_html(const struct measure_bench_report *b, const char *path);

/* ------------------------------------------------------------ lever stats (stats_report.c) */

/* k samples described, and Brown-Forsythe across them when k > 1. */
struct measure_sample_set {
	struct stats_sample_description *d;
	size_t k;
	struct stats_test brown_forsythe; /* NaN when k == 1 */
};
/* From k sample files; 0 or -ENOMEM. Free with measure_sample_set_free. */
int measure_sample_set_describe(struct measure_sample_set *set, const struct stats_samples *files,
				size_t k);
void measure_sample_set_free(struct measure_sample_set *set);
void measure_sample_set_text(const struct measure_sample_set *set,
			     const struct measure_value_format *vf, double alpha, FILE *f);
void measure_sample_set_json(const struct measure_sample_set *set, double alpha, bool drop_max,
			     FILE *f);
int measure_sample_set_html(const struct measure_sample_set *set, const char *path,
			    const struct measure_value_format *vf, double alpha);

/* ------------------------------------------------------------ suites (suite.c) */

/*
 * lever compare --suite: per-benchmark comparisons of two configurations,
 * the within-subjects ANOVA and the multiple-testing caveat.
 */
struct measure_suite_outputs {
	bool drop_max;		     /* drop the largest run of each cell first */
	bool json;		     /* JSON on stdout instead of text */
	const char *html, *markdown; /* files to write too, or NULL; markdown "-": stdout */
};
/*
 * One suite analysed: configurations A = config[0] (baseline) and B, a
 * comparison per benchmark (cmp[b], on cells[2b] and cells[2b + 1]), the
 * within-subjects ANOVA over the runs of A and B, how many benchmarks differ
 * significantly (and how many of those got faster), and the median and
 * extremes of mean(B)/mean(A) across the benchmarks.
 */
struct measure_suite {
	struct stats_suite suite;
	long config[2];
	struct stats_comparison *cmp;
	double **cells; /* [2 * benchmark + side] */
	size_t *sizes;
	struct stats_rm_anova anova;
	int anova_err;
	size_t significant, faster;
	bool drop_max;
	size_t dropped;
	double ratio_median;	     /* of mean(B)/mean(A) across the benchmarks */
	size_t ratio_min, ratio_max; /* the benchmarks with the extremes */
};
/*
 * Analyse r->suite (already read; r otherwise zeroed): configs "A,B" or NULL
 * for the file's two. 0; 1 on an error, MEASURE_EXIT_USAGE for bad configs
 * (both printed). Free with measure_suite_free (which frees r->suite too).
 */
int measure_suite_analyse(struct measure_suite *r, const char *configs, bool drop_max,
			  const struct measure_compare_options *o);
void measure_suite_free(struct measure_suite *r);
/* Read, analyse and print. Exit status: 0, 1 on an error, MEASURE_EXIT_USAGE for bad --configs. */
int measure_suite_compare(const char *path, const char *configs,
			  const struct measure_suite_outputs *want,
			  const struct measure_compare_options *o);

#endif
