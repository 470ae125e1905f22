/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * causal: the analysis side of causal profiling (what `lever causal report`
 * runs). It reads profiles written by liblever-causal.so or by Coz into an
 * in-memory model, and summarises them into per-line speedup curves.
 *
 * The model (struct causal_profile) is format-neutral:
 *
 *   runs         one per `startup` record (a run of the profiled program)
 *   experiments  one per `experiment` record, in file order, each in one run
 *   deltas       the point records that follow an experiment (throughput or
 *                latency), a contiguous range per experiment
 *   points       progress points, unique by (kind, name)
 *   samples      per run, the latest cumulative sample count per line
 *   strings      every file:line location and point name, interned; records
 *                refer to them by id
 *
 * Readers never crash on bad input: a malformed line is skipped and counted,
 * with a diagnostic naming the file and line (or, in strict mode, the read
 * stops with that message as the error).
 */
#ifndef LEVER_CAUSAL_H
#define LEVER_CAUSAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- model */

enum causal_point_kind {
	CAUSAL_POINT_THROUGHPUT = 1, /* throughput-point, or progress-point (old name) */
	CAUSAL_POINT_LATENCY = 2,    /* latency-point (begin/end pair) */
};

struct causal_point {
	uint32_t name; /* string id */
	enum causal_point_kind kind;
};

/* One point record: the change of one progress point during one experiment. */
struct causal_delta {
	uint32_t point;	      /* index into profile->points */
	int64_t delta;	      /* throughput: visits during the experiment */
	int64_t arrivals;     /* latency: begin visits during the experiment */
	int64_t departures;   /* latency: end visits during the experiment */
	int64_t difference;   /* latency: begin - end totals at the experiment's end (signed) */
	bool has_in_flight;   /* latency: in_flight_ns was recorded (lever's in-flight-ns) */
	int64_t in_flight_ns; /* latency: mean number in flight x duration, ns */
};

struct causal_experiment {
	uint32_t run;	   /* index into profile->runs */
	uint32_t selected; /* string id of the selected "file:line" */
	double speedup;	   /* as written, 0..1 */
	int speedup_pct;   /* speedup in whole percent, 0..100 */
	int64_t duration;  /* effective duration in ns, always > 0 (others are dropped) */
	int64_t selected_samples;
	/* load amplification (AMP); has_arrival_speedup is false in plain runs */
	bool has_arrival_speedup;
	uint64_t arrival_speedup_ns; /* per arrival, fixed for the run */
	int64_t arrivals;	     /* arrivals counted during the experiment */
	int64_t arrival_threads;     /* threads that arrived during it (0: not recorded) */
	size_t first_delta;	     /* index into profile->deltas */
	size_t n_deltas;
	uint32_t source; /* string id of the file the record came from */
	uint64_t lineno; /* line of the experiment record in that file */
};

/* Latest cumulative sample count of one line in one run. */
struct causal_sample_count {
	uint32_t run;
	uint32_t location; /* string id of "file:line" */
	int64_t count;
};

struct causal_run {
	uint32_t source;     /* string id of the file the run came from */
	uint64_t lineno;     /* line of its first record */
	bool has_startup;    /* false for records before any startup line */
	uint64_t startup_ns; /* wall clock at profiler start */
	bool has_runtime;
	int64_t runtime_ns; /* latest `runtime` record: ns since startup */
	int64_t delay_ns;   /* its `delay`: ns the experiments inserted (estimated if absent) */
	double estimated_delay_ns; /* the estimate so far: selected samples x speedup x period */
	bool has_shutdown;
	uint64_t shutdown_ns;
	int64_t shutdown_samples;
	/* lever's own header record (`lever version=1 sampler=... period=... seed=...`) */
	bool has_lever_header;
	unsigned lever_version;
	char sampler[16];
	uint64_t period_ns;
	bool has_seed;
	uint64_t seed;
	size_t n_experiments; /* not contiguous: runs appending at once interleave */
};

struct causal_read_stats {
	uint64_t lines;		  /* lines read, including blank and bad ones */
	uint64_t records;	  /* records understood */
	uint64_t unknown_records; /* lines with an unknown record type (skipped) */
	uint64_t malformed;	  /* malformed lines (skipped) */
	uint64_t cut_records; /* a last line without its end (skipped; counted in malformed too) */
	uint64_t dropped_duration; /* experiments with duration <= 0 (dropped) */
	uint64_t orphan_points;	   /* point records with no experiment before them */
	uint64_t diagnostics_lost; /* diagnostics beyond CAUSAL_MAX_DIAGS */
};

#define CAUSAL_MAX_DIAGS 16

struct causal_tables; /* private lookup tables */

struct causal_profile {
	struct causal_run *runs;
	size_t n_runs, cap_runs;
	struct causal_experiment *experiments;
	size_t n_experiments, cap_experiments;
	struct causal_delta *deltas;
	size_t n_deltas, cap_deltas;
	struct causal_point *points;
	size_t n_points, cap_points;
	struct causal_sample_count *samples;
	size_t n_samples, cap_samples;

	struct causal_read_stats stats;
	char *diagnostics[CAUSAL_MAX_DIAGS]; /* "FILE:LINE: message" */
	size_t n_diagnostics;
	char error[512]; /* why the last read failed */

	struct causal_tables *tables;
};

struct causal_read_options {
	bool strict; /* stop at the first malformed line instead of skipping it */
};

void causal_profile_init(struct causal_profile *p);
void causal_profile_free(struct causal_profile *p);

/*
 * Append the runs in a file to p: Coz's legacy tab-separated format (see
 * doc/formats/profile.md) or Coz's JSON Lines, told apart by the file's first
 * non-blank line (`{` starts JSON). Returns 0, or -1 with p->error set (cannot
 * open or read the file, out of memory, or a malformed line in strict mode).
 * opt may be NULL.
 */
int causal_profile_read_file(struct causal_profile *p, const char *path,
			     const struct causal_read_options *opt);
/* Same, from an open stream; name is used in messages. */
int causal_profile_read_stream(struct causal_profile *p, FILE *in, const char *name,
			       const struct causal_read_options *opt);
/* Same, from memory (the buffer need not be NUL-terminated). */
int causal_profile_read_buffer(struct causal_profile *p, const char *buf, size_t len,
			       const char *name, const struct causal_read_options *opt);

/*
 * Whether text (a file's first lines) starts like a causal profile: its first
 * non-blank line is one of the format's records, or a JSON Lines record.
 * For commands that must not write a report over a profile.
 */
bool causal_profile_sniff(const char *text);

/* The text of an interned string id ("" for an unknown id). */
const char *causal_profile_string(const struct causal_profile *p, uint32_t id);
/* The id of text if interned, else UINT32_MAX. */
uint32_t causal_profile_find_string(const struct causal_profile *p, const char *text);

/* Latest samples of location (string id) summed over all runs; 0 if none. */
int64_t causal_profile_line_samples(const struct causal_profile *p, uint32_t location);
/* Sum of the latest `runtime` of every run, in ns. */
int64_t causal_profile_total_runtime(const struct causal_profile *p);
/*
 * A run's runtime in the program's own time: without the delays lever's
 * experiments inserted (virtual speedup stretches the real run by them).
 */
int64_t causal_run_effective_runtime(const struct causal_run *run);
/*
 * The effective runtimes of the runs in which location (string id) has
 * samples or was selected: the T that goes with its s in the phase
 * correction, also when unrelated profiles are merged.
 */
int64_t causal_profile_line_runtime(const struct causal_profile *p, uint32_t location);

/* ---------------------------------------------------------------- summary */

/* All experiments of one selected line at one speedup, for one progress point. */
struct causal_bucket {
	int speedup_pct;
	unsigned experiments;	 /* the experiments summed (far-out ones not counted) */
	unsigned trimmed;	 /* far-out experiments set aside (see causal_summarize()) */
	double duration;	 /* sum of effective durations, ns */
	double visits;		 /* throughput: sum of deltas; latency: sum of arrivals */
	double departures;	 /* latency: sum of departures */
	double difference_dur;	 /* latency: sum of difference * duration */
	double selected_samples; /* sum of the selected line's samples during the experiments */
	double raw_speedup;	 /* program speedup before phase correction (fraction) */
	double phase_factor; /* phase correction applied, (t_obs/s_obs)(s/T) of the 0% bucket; 1 if
				none */
	double program_speedup; /* predicted program speedup (fraction); 0 for the 0% bucket */
	double ci_low, ci_high; /* bootstrap confidence interval of program_speedup */
	double fit, fit_low, fit_high; /* the fitted curve here, with its bootstrap interval */
	unsigned thin;		       /* why the point rests on too little: CAUSAL_THIN_* bits */
	size_t first_entry;	       /* private: the bucket's experiments, for the bootstrap */
};

/*
 * Thin evidence (doc/causal-report.md "Thin evidence"): a point whose number
 * should not be read as a measurement. A point is thin when it rests on
 * fewer than CAUSAL_THIN_EXPERIMENTS experiments, or fewer than
 * CAUSAL_THIN_VISITS progress-point visits (arrivals), or when its interval
 * is wider than CAUSAL_THIN_WIDTH (program speedup, a fraction: 10 points).
 * A line is thin when its fitted effect's interval is wider than that, or
 * when every one of its nonzero points is thin.
 */
#define CAUSAL_THIN_EXPERIMENTS 3
#define CAUSAL_THIN_VISITS	30
#define CAUSAL_THIN_WIDTH	0.10

enum causal_thin_reason {
	CAUSAL_THIN_FEW_EXPERIMENTS = 1,
	CAUSAL_THIN_FEW_VISITS = 2,
	CAUSAL_THIN_WIDE = 4,
	CAUSAL_THIN_POINTS = 8, /* a line: all its points are thin */
};

/*
 * The names of the reasons in bits, comma-separated ("few experiments, wide
 * interval"), into buf; "" for none. Returns buf.
 */
const char *causal_thin_text(unsigned thin, char *buf, size_t size);

/*
 * The model fitted to a line's curve (doc/causal-report.md "The fitted
 * curve"): y = slope * min(x, knee), which rises (or falls) linearly and
 * levels off at the knee, as the true curves do once another path becomes
 * critical (the paper's Figure 1). The linear model is knee = 1. Weighted
 * least squares on the points (weights 1/se^2 from their bootstrap
 * intervals); the knee is the measured speedup that fits best; the levelling model is kept
 * only when its AIC (chi^2 + 2 x 2 parameters) beats the line's (chi^2 +
 * 2 x 1), the chi^2 values divided by the levelling model's chi^2 / (n - 2)
 * when that exceeds 1 (quasi-AIC: points that scatter more than their
 * intervals say).
 */
struct causal_fit {
	bool levels_off; /* the levelling model was chosen (knee < largest speedup) */
	double slope;	 /* rise per unit of line speedup up to the knee */
	double knee;	 /* line speedup (fraction) where the curve levels off; 1: never */
	double effect;	 /* fitted program speedup at 100% line speedup */
	double effect_low, effect_high; /* its bootstrap interval */
	double chi2;			/* of the chosen model */
	double dispersion; /* chi2 / (points - parameters); intervals widen by its root if > 1 */
};

/* The fitted program speedup at line speedup x (fraction). */
double causal_fit_at(const struct causal_fit *f, double x);

/* The curve of one (selected line, progress point). */
struct causal_series {
	uint32_t selected;	       /* string id */
	uint32_t point;		       /* index into profile->points */
	struct causal_bucket *buckets; /* sorted by speedup_pct, first is 0% */
	size_t n_buckets;
	unsigned experiments;	      /* over the kept buckets */
	double slope;		      /* least-squares slope of program vs line speedup (clamped) */
	double slope_low, slope_high; /* its bootstrap confidence interval */
	double intercept;	      /* of the fitted line, for charts */
	double impact;		      /* largest mean program speedup over [0, x] (Coz's viewer) */
	double max_speedup;	      /* largest program speedup among the buckets */
	bool contention;	      /* the slope's interval lies entirely below 0 */
	bool phase_corrected;	      /* the phase correction was applied to its points */
	struct causal_fit fit;	      /* the model fitted to the curve */
	unsigned thin;		      /* CAUSAL_THIN_* bits: the line's curve rests on too little */
	int64_t line_samples;	      /* s: the line's samples over all runs (0 if unknown) */
	int64_t line_runtime_ns;      /* T: runtime of the runs with the line (0 if unknown) */
};

enum causal_sort {
	CAUSAL_SORT_IMPACT = 0, /* largest impact first (Coz's viewer's default; the default) */
	CAUSAL_SORT_SLOPE,	/* steepest rise first (the paper's regression slope) */
	CAUSAL_SORT_NAME,	/* by file:line, then progress point */
};

/*
 * How the curves are computed from a profile (doc/causal-report.md "Coz's
 * viewer's method"): lever's analysis (the default), or exactly what Coz's
 * web viewer computes from the same records (viewer.c; spec anchors.md
 * §1.8), so that lever's numbers can be set beside what Coz users see.
 */
enum causal_method {
	CAUSAL_METHOD_LEVER = 0,
	CAUSAL_METHOD_COZ_VIEWER,
};

/* Coz's viewer's filters (spec anchors.md §1.8). */
#define CAUSAL_VIEWER_MIN_DELTA	 5    /* visits (arrivals) an aggregated point needs */
#define CAUSAL_VIEWER_MIN_POINTS 10   /* the "Minimum Points" slider's default */
#define CAUSAL_VIEWER_MIN_Y	 -1.0 /* program speedups outside [MIN_Y, MAX_Y] are dropped */
#define CAUSAL_VIEWER_MAX_Y	 2.0

struct causal_summary_options {
	enum causal_method method;
	/*
	 * distinct speedups a line needs; 0 = default (5). With the viewer's
	 * method: the Minimum Points to start from (0 = default, 10), lowered
	 * one by one until some line shows, as the viewer does
	 */
	unsigned min_speedups;
	double min_visits;	  /* visits (or arrivals) a bucket needs; 0 = default (5) */
	bool no_phase_correction; /* skip the phase correction (on by default) */
	bool no_trim;		  /* keep far-out experiments (set aside by default) */
	unsigned resamples;	  /* bootstrap resamples; 0 = default (1000) */
	double level;		  /* confidence level; 0 = default (0.95) */
	uint64_t seed;		  /* seed of the bootstrap generator (results repeat) */
	enum causal_sort sort;
};

struct causal_summary {
	struct causal_series *series; /* sorted as options->sort says */
	size_t n_series;
	size_t dropped_no_baseline;  /* (line, point) pairs without a usable 0% bucket */
	size_t dropped_few_speedups; /* pairs with fewer than min_speedups speedups */
	size_t dropped_buckets;	     /* buckets with too few visits (or no samples to correct) */
	size_t trimmed_experiments;  /* far-out experiments set aside, over all series */
	bool phase_correction;	     /* the correction was asked for */
	bool trim;		     /* far-out experiments were set aside */
	int64_t runtime_ns;	     /* T: the runs' runtimes summed (0 if not recorded) */
	enum causal_sort sort;	     /* how series is sorted */
	enum causal_method method;   /* how the curves were computed */
	/* the viewer's method: the Minimum Points it settled on, and what its filters dropped */
	unsigned viewer_min_points;
	size_t dropped_coz_h;	     /* experiments whose selected line is in coz.h */
	size_t dropped_out_of_range; /* points that were NaN, infinite or outside [-1, 2] */
	unsigned resamples;
	double level;
	uint64_t seed;
};

#define CAUSAL_DEFAULT_MIN_SPEEDUPS 5
#define CAUSAL_DEFAULT_MIN_VISITS   5
#define CAUSAL_DEFAULT_RESAMPLES    1000
#define CAUSAL_DEFAULT_LEVEL	    0.95

/*
 * Group experiments by (selected line, point, speedup), sum durations and
 * deltas, and compute the program speedup of each bucket against the line's
 * own 0% bucket (throughput: 1 - p_s/p_0 with p = duration/visits; latency:
 * Little's law, (W_0 - W_s)/W_0). Buckets with too few visits are dropped.
 * Unless turned off, each bucket's speedup is multiplied by the phase
 * correction (t_obs/s_obs)(s/T) (paper eq. 8; spec coz.md §9), estimated
 * from the line's 0% experiments, when the profile has the `samples` and
 * `runtime` records it needs. Every point gets a percentile bootstrap
 * interval (experiments resampled within each bucket) and every slope one
 * from a pairs bootstrap over the line's experiments; the seed is fixed. Lines are ranked by the
 * least-squares slope of their curve, fitted with program speedups clamped to
 * [-100%, +200%] so that one glitched bucket cannot decide the rank, or by
 * impact or name. With opt->method CAUSAL_METHOD_COZ_VIEWER it is
 * causal_summarize_coz_viewer() instead. Returns 0, or -1 when out of memory.
 */
int causal_summarize(const struct causal_profile *p, const struct causal_summary_options *opt,
		     struct causal_summary *out);
void causal_summary_free(struct causal_summary *s);

/*
 * The viewer's method (viewer.c): what Coz's web viewer plots for the same
 * profile. Records are summed per (selected line, point, speedup) with no
 * trimming; samples and runtime records are ignored (no phase correction);
 * points with fewer than CAUSAL_VIEWER_MIN_DELTA visits, NaN or infinite
 * ones and ones outside [-1, 2] are dropped; a line needs Minimum Points
 * points (lowered until some line has them); lines in coz.h are dropped;
 * lines rank by the viewer's impact. No intervals, fit or thin marks
 * (NaN, or 0). causal_summarize() calls it when opt->method says so.
 * Returns 0, or -1 when out of memory.
 */
int causal_summarize_coz_viewer(const struct causal_profile *p,
				const struct causal_summary_options *opt,
				struct causal_summary *out);
/* Name of a method: "lever" or "coz-viewer" (as `--method` spells it). */
const char *causal_method_name(enum causal_method method);

/* Sort the series again (stable for equal keys: by name). */
void causal_summary_sort(const struct causal_profile *p, struct causal_summary *s,
			 enum causal_sort sort);

/* Name of a sort key: "impact", "slope" or "name" (as `--sort` spells it). */
const char *causal_sort_name(enum causal_sort sort);
/* Name of a point kind: "throughput" or "latency". */
const char *causal_point_kind_name(enum causal_point_kind kind);
/* The sampler all of lever's runs used ("perf", "timer"), or NULL if unknown or mixed. */
const char *causal_profile_sampler(const struct causal_profile *p, uint64_t *period_ns);

/* ---------------------------------------------------------------- text report */

struct causal_amp_profiles;

struct causal_report_options {
	size_t top;   /* lines to print, 0 = all */
	bool ascii;   /* curves in ASCII instead of Unicode blocks */
	bool detail;  /* also each line's points, with their intervals */
	char **files; /* the profiles read, for the summary */
	size_t n_files;
	/* load amplification: the scalability curve and per-load curves (JSON, HTML); NULL: none */
	const struct causal_amp_profiles *amp;
};

/*
 * Print the summary as one table per progress point (line, slope with its
 * interval, max predicted speedup, points, an inline curve), readable at 80
 * columns; with detail, each line's points follow.
 */
void causal_report_text(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt);
/* The report as JSON (doc/formats/causal-report-json.md). */
void causal_report_json(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt);
/* One self-contained HTML page with a chart per line (inline SVG and a little JS). */
void causal_report_html(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt);

/* ================================================================ AMP (amp.c)
 * Load amplification: runs of `lever causal --arrival-speedup=D` (one D per
 * run, recorded in every experiment) grouped by D. For each level and each
 * progress point, one value per run (throughput: visits per effective
 * second; latency: W = L / lambda by Little's law), their mean with a 95%
 * t interval, and the performance relative to the baseline level D = 0 with
 * a 95% BCa bootstrap interval (throughput: rate / rate_0; latency: W_0 / W;
 * > 1 is better). Load x = D / p_0, where p_0 is the inter-arrival period of
 * one arriving thread at D = 0 (spec/amp.md §3.5: x = 0 is the test load, x
 * = 1 an inter-arrival time of zero; the arrival rate is 1 / (1 - x) times
 * the test's).
 */

#define CAUSAL_AMP_LEVEL 0.95 /* confidence level of the scalability curve's intervals */

struct causal_amp_point {
	unsigned runs;	  /* runs with a value */
	double value;	  /* mean over runs: visits/s, or latency in ns */
	double low, high; /* 95% t interval of the mean (= value with one run) */
	bool has_relative;
	double relative, rel_low, rel_high; /* against the baseline; interval needs 2+ runs each */
	double visits;			    /* throughput: sum of deltas; latency: begin visits */
	double departures;		    /* latency: end visits */
	double visits_arriving; /* visits in experiments during which something arrived */
	/* latency: arrivals outrun departures, so queues grow and W = L / lambda does not hold */
	bool unstable;
	/*
	 * throughput: more arrivals per visit than at D = 0 (arrivals outrun
	 * departures): the load is beyond the bottleneck's capacity, and the
	 * rate measured is that capacity (the dissertation's Figure 6.4 oracle,
	 * min(arrival rate, capacity)): a valid value, not an unstable one
	 */
	bool saturated;
};

struct causal_amp_level {
	uint64_t arrival_speedup_ns;
	unsigned runs, experiments;
	double duration_ns; /* sum of effective durations */
	double arrivals;
	double thread_time_ns; /* sum of arrival-threads x duration (for period_ns) */
	double period_ns; /* effective inter-arrival period of one arriving thread (0: unknown) */
	double load;	  /* x, or -1 when unknown */
	struct causal_amp_point *points; /* one per profile point */
};

struct causal_amp {
	struct causal_amp_level *levels; /* ascending arrival speedup */
	size_t n_levels, n_points;
	long baseline;		    /* index of the D = 0 level, or -1 */
	double base_period_ns;	    /* p_0 (0: unknown) */
	uint64_t no_arrivals_ns;    /* a level D > 0 where nothing arrived (0: none) */
	uint64_t beyond_period_ns;  /* smallest D >= p_0 (0: none) */
	size_t ignored_experiments; /* experiments without arrival-speedup */
};

/*
 * Groups the experiments that carry arrival-speedup by level. Returns 0, 1
 * when the profile has none (not an AMP profile), or -1 when out of memory.
 */
int causal_amp_analyze(const struct causal_profile *p, struct causal_amp *out);
void causal_amp_free(struct causal_amp *a);
/*
 * A view of p with only the experiments at one arrival speedup, for
 * causal_summarize (one causal profile per load, each against its own
 * same-load baseline). It shares p's other arrays; free it with
 * causal_amp_view_free, never causal_profile_free. Returns 0 or -1 (memory).
 */
int causal_amp_level_view(const struct causal_profile *p, uint64_t arrival_speedup_ns,
			  struct causal_profile *view);
void causal_amp_view_free(struct causal_profile *view);
/* The scalability tables, one per progress point. */
void causal_amp_report_text(FILE *out, const struct causal_profile *p, const struct causal_amp *a);
/* The guard rails (unstable levels, loads beyond the period, no arrivals) on err. */
void causal_amp_warn(FILE *err, const struct causal_profile *p, const struct causal_amp *a);
/* "750 us", "1.5 ms": an arrival speedup for people. */
void causal_amp_format_ns(char *buf, size_t size, uint64_t ns);

/* ---------------------------------------------------------------- AMP reports (amp_profiles.c) */

/* One line's curves at every load level: series[k] is level k's, or NULL. */
struct causal_amp_line {
	uint32_t selected; /* string id */
	uint32_t point;	   /* index into profile->points */
	const struct causal_series **series;
	double slope, impact; /* largest over the levels (NaN: none), for ranking */
};

/*
 * Everything the reports show of an AMP profile: the scalability curve and,
 * when lines were sped up at several loads (and every experiment carries a
 * load), one causal summary per level, each from that level's experiments
 * only (its own same-load 0% baseline), and the lines regrouped across the
 * levels, ranked by the largest slope or impact over the levels, or by name.
 */
struct causal_amp_profiles {
	struct causal_amp amp;
	bool per_load;
	struct causal_profile *views;	  /* per level when per_load, else NULL */
	struct causal_summary *summaries; /* per level when per_load, else NULL */
	struct causal_amp_line *lines;	  /* when per_load */
	size_t n_lines;
};

/*
 * Returns 0, 1 when p is not an AMP profile (out is then empty), or -1 when
 * out of memory. opt as for causal_summarize (its sort ranks the lines).
 */
int causal_amp_profiles_build(const struct causal_profile *p,
			      const struct causal_summary_options *opt,
			      struct causal_amp_profiles *out);
void causal_amp_profiles_free(struct causal_amp_profiles *ap);
/* True when some experiment sped a line up (not AMP alone). */
bool causal_profile_has_line_speedups(const struct causal_profile *p);

/*
 * Before `lever causal` runs program with only its main executable in scope
 * (scope_check.c): 0 when the source scope (tab-separated patterns, NULL for
 * all) matches one of its source files and fixed_line (FILE:LINE, or NULL) is
 * a line with code among them, or when it has no line information (the
 * runtime explains that); -1 after printing why not and what files it has.
 */
int causal_check_program_scope(const char *who, const char *program, const char *debug_root,
			       const char *source_scope, const char *fixed_line);

#endif
