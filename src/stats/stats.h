/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stats: statistics and numerics for lever's analysis side.
 *
 * Descriptive statistics, distributions (GSL underneath), normality and
 * variance tests, two-sample tests, one-way and within-subjects ANOVA,
 * bootstrap confidence intervals, ordinary least squares, and the reader of
 * sample files (doc/formats/samples.md).
 *
 * Conventions: functions never modify their input arrays unless they say so;
 * a routine that cannot compute its result (too few values, constant data,
 * no memory) returns a negative errno-style code (-EINVAL, -EDOM, -ENOMEM)
 * and leaves NaN in its outputs. Quantiles are R's type 7 (linear
 * interpolation), variances use n - 1.
 */
#ifndef LEVER_STATS_H
#define LEVER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ descriptive */

double stats_mean(const double *x, size_t n);
/* Sample variance (n - 1 in the denominator); NaN for n < 2. */
double stats_variance(const double *x, size_t n);
double stats_sd(const double *x, size_t n);
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);
/* Sort a copy; returns NULL when out of memory. Free with free(). */
double *stats_sorted_copy(const double *x, size_t n);
/* Quantile p in [0, 1] of sorted data (R type 7). */
double stats_quantile_sorted(const double *sorted, size_t n, double p);
double stats_median(const double *x, size_t n);
/*
 * Median absolute deviation from the median, scaled by 1.4826 so that it
 * estimates the standard deviation of normal data (R's mad()).
 */
double stats_mad(const double *x, size_t n);

struct stats_summary {
	size_t n;
	double mean, sd, min, max;
	double q1, median, q3; /* quartiles, type 7 */
	double mad;	       /* scaled, as stats_mad() */
	double cv;	       /* sd / |mean|, NaN if the mean is 0 */
	double sem;	       /* sd / sqrt(n) */
};
int stats_summarize(const double *x, size_t n, struct stats_summary *out);

/*
 * Outliers by modified Z-score: |x - median| / MAD > threshold, with MAD
 * scaled as stats_mad() (hyperfine's rule uses threshold 10). If mask is not
 * NULL, mask[i] is set for each outlier. Returns the count (0 if MAD = 0).
 */
size_t stats_outliers(const double *x, size_t n, double threshold, bool *mask);

/*
 * Remove the largest value (the first one if it repeats), keeping the order
 * of the others; returns the new length. This is the cleaning the
 * Stabilizer authors applied to every cell before testing (spec §7.8).
 */
size_t stats_drop_max(double *x, size_t n);

/* ------------------------------------------------------------ distributions */

double stats_normal_cdf(double z);
/* Upper tail 1 - Phi(z), accurate far into the tail. */
double stats_normal_sf(double z);
/* Phi^-1(p), Wichura's AS 241 (as GSL implements it). */
double stats_normal_quantile(double p);
double stats_t_cdf(double t, double df);
/* Two-sided p-value P(|T| >= |t|) for Student's t with df degrees of freedom. */
double stats_t_p_two_sided(double t, double df);
double stats_t_quantile(double p, double df);
/* Upper tail P(F >= f) of the F(df1, df2) distribution. */
double stats_f_sf(double f, double df1, double df2);

/* ------------------------------------------------------------ tests */

/* Shapiro-Wilk W test of normality (Royston 1995, AS R94), 3 <= n <= 5000. */
#define STATS_SW_MIN_N 3
#define STATS_SW_MAX_N 5000
struct stats_test {
	double statistic; /* W, t, F, U or z, as the test defines */
	double df1, df2;  /* degrees of freedom where they apply, else NaN */
	double p;	  /* p-value (two-sided for the two-sample tests) */
};
int stats_shapiro_wilk(const double *x, size_t n, struct stats_test *out);

/*
 * Brown-Forsythe test of equal variances across k groups: one-way ANOVA on
 * |x - median(group)|. groups[i] has sizes[i] values. F(k-1, N-k).
 */
int stats_brown_forsythe(const double *const *groups, const size_t *sizes, size_t k,
			 struct stats_test *out);

/* One-way ANOVA across k groups: F(k-1, N-k). */
int stats_anova_oneway(const double *const *groups, const size_t *sizes, size_t k,
		       struct stats_test *out);

/* Student's (pooled variance) two-sample t-test, df = n1 + n2 - 2. */
int stats_t_test_student(const double *a, size_t na, const double *b, size_t nb,
			 struct stats_test *out);
/* Welch's unequal-variance t-test, Welch-Satterthwaite df. */
int stats_t_test_welch(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out);

/*
 * Mann-Whitney U (Wilcoxon rank-sum) test, two-sided. statistic is
 * U_a = R_a - na(na+1)/2 (R's W). Exact distribution when there are no ties
 * and na, nb < 50; otherwise the normal approximation with tie correction and
 * 0.5 continuity correction (what R's wilcox.test and SciPy do).
 * exact (may be NULL) tells which was used.
 */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out, bool *exact);

/*
 * One-way within-subjects (repeated measures) ANOVA with unbalanced
 * replicates: y[i] measured on subject subject[i] (0..n_subjects-1) under
 * treatment treatment[i] (0..k-1). Equivalent to R's
 * aov(y ~ t + Error(s/t)); the treatment is tested in the subject x treatment
 * stratum, F(k-1, cells - subjects - (k-1)). Every subject must have every
 * treatment at least once.
 */
struct stats_rm_anova {
	double ss_treatment, ss_error;
	double df_treatment, df_error;
	double f, p;
};
int stats_anova_within(const double *y, const size_t *subject, const size_t *treatment, size_t n,
		       size_t n_subjects, size_t k, struct stats_rm_anova *out);

/* ------------------------------------------------------------ randomness (NIST SP 800-22) */

/*
 * Tests of NIST SP 800-22 rev1a on a sequence of n bits (bits[i] is 0 or
 * non-zero); p >= 0.01 is NIST's "random". statistic: s_obs (frequency,
 * §2.1), chi^2 with df1 = the number of blocks (block frequency, §2.2, m
 * bits per block; NIST asks m >= 20, m > n / 100 and fewer than 100 blocks),
 * V_n(obs) (runs, §2.3) and z (cumulative sums, §2.13, forward or backward).
 * The runs test is not applicable when the frequency of ones is too far
 * from 1/2 (its prerequisite): it then returns -EDOM with p = 0.
 */
int stats_nist_frequency(const uint8_t *bits, size_t n, struct stats_test *out);
int stats_nist_block_frequency(const uint8_t *bits, size_t n, size_t m, struct stats_test *out);
int stats_nist_runs(const uint8_t *bits, size_t n, struct stats_test *out);
int stats_nist_cusum(const uint8_t *bits, size_t n, bool backward, struct stats_test *out);

/* ------------------------------------------------------------ bootstrap */

/*
 * Bias-corrected and accelerated (BCa) bootstrap confidence intervals, with
 * `resamples` resamples drawn from a generator seeded with `seed`, for a
 * two-sided level `level` (e.g. 0.95). The acceleration comes from the
 * jackknife. For the ratio of means the two samples are resampled
 * independently (stratified bootstrap).
 */
struct stats_interval {
	double estimate, low, high;
	double bias_z0;	     /* bias correction z0 */
	double acceleration; /* a */
};
int stats_bootstrap_mean(const double *x, size_t n, double level, size_t resamples, uint64_t seed,
			 struct stats_interval *out);
int stats_bootstrap_median(const double *x, size_t n, double level, size_t resamples, uint64_t seed,
			   struct stats_interval *out);
/* mean(a) / mean(b), the speedup of b over a when these are times. */
int stats_bootstrap_ratio_of_means(const double *a, size_t na, const double *b, size_t nb,
				   double level, size_t resamples, uint64_t seed,
				   struct stats_interval *out);
/*
 * The BCa interval from bootstrap replicates (sorted in place) and jackknife
 * values of the statistic; exposed for tests and for other statistics.
 */
int stats_bca_interval(double estimate, double *replicates, size_t n_replicates,
		       const double *jackknife, size_t n_jackknife, double level,
		       struct stats_interval *out);

/* Confidence interval of the mean from Student's t. */
int stats_t_interval_mean(const double *x, size_t n, double level, struct stats_interval *out);

/* ------------------------------------------------------------ two-sample decision */

/* A p-value for people: "n/a", "3.2e-05" below 1e-4, else 3 significant digits. */
char *stats_format_p(double p, char *buf, size_t size);

/* One sample described for a comparison: x is borrowed, not copied. */
struct stats_sample_description {
	const char *name;
	const double *x;
	size_t n;
	struct stats_summary summary;
	struct stats_test normality;   /* Shapiro-Wilk */
	int normality_err;	       /* 0, -EINVAL (n out of range), -EDOM (constant) */
	struct stats_interval ci_mean; /* Student's t interval at the caller's level */
	size_t outliers;	       /* modified Z-score > 10 (hyperfine's rule) */
};
/* 0, or -EINVAL for an empty sample. */
int stats_describe_sample(struct stats_sample_description *d, const char *name, const double *x,
			  size_t n, double level);
/* "consistent with normal (Shapiro-Wilk W = 0.97, p = 0.41)" and the like. */
char *stats_normality_text(const struct stats_sample_description *d, double alpha, char *buf,
			   size_t size);

enum stats_compare_test {
	STATS_TEST_AUTO,
	STATS_TEST_WELCH,
	STATS_TEST_STUDENT,
	STATS_TEST_MANN_WHITNEY
};

struct stats_compare_options {
	double alpha, level;
	enum stats_compare_test test; /* STATS_TEST_AUTO: chosen by normality */
	size_t resamples;	      /* of the speedup's bootstrap (capped for huge samples) */
	uint64_t seed;
};
/* alpha 0.05, level 0.95, automatic test, 10000 resamples, seed 0. */
void stats_compare_options_init(struct stats_compare_options *o);

/*
 * A two-sample comparison of A (baseline) and B: the test chosen (and why,
 * in words), its result, the speedup mean(A)/mean(B) with its BCa interval,
 * Brown-Forsythe on the variances, and the verdict sentence.
 */
struct stats_comparison {
	struct stats_sample_description a, b;
	const struct stats_compare_options *opt;
	enum stats_compare_test test; /* the one used */
	char reason[384];
	struct stats_test result;
	int test_err; /* of the test: -EDOM no variation, -EINVAL too few values */
	bool exact;   /* Mann-Whitney: exact distribution, not the normal approximation */
	struct stats_interval speedup;	/* mean(a) / mean(b), BCa; NaN when undefined: */
	const char *speedup_undefined;	/* why the estimate is NaN (values not positive) */
	const char *interval_undefined; /* why low and high are NaN (a degenerate bootstrap) */
	struct stats_test variance;	/* Brown-Forsythe: do the variances differ? */
	bool significant;
	char verdict[320];
};
/* 0, or -EINVAL when a side is empty. o must outlive c. */
int stats_compare_samples(struct stats_comparison *c, const struct stats_compare_options *o,
			  const char *name_a, const double *a, size_t na, const char *name_b,
			  const double *b, size_t nb);
/* "Welch's t-test"; stats_compare_test_id: "welch" (the --test and JSON name). */
const char *stats_compare_test_name(enum stats_compare_test t);
const char *stats_compare_test_id(enum stats_compare_test t);

/* ------------------------------------------------------------ regression */

/*
 * Ordinary least squares y = X beta + e, X row-major n x p (include a column
 * of ones for an intercept). Standard errors, t statistics and two-sided
 * p-values use sigma^2 = RSS / (n - p). r_squared is the centred R^2 when
 * has_intercept, else the uncentred one (as R's summary.lm). bic follows R:
 * -2 log L + (p + 1) log n, counting sigma as a parameter.
 */
struct stats_ols {
	size_t n, p;
	double *beta, *se, *t, *pvalue; /* p values each */
	double rss, sigma, r_squared, adj_r_squared;
	double log_likelihood, aic, bic;
};
int stats_ols_fit(const double *x, const double *y, size_t n, size_t p, bool has_intercept,
		  struct stats_ols *out);
void stats_ols_free(struct stats_ols *fit);

/* ------------------------------------------------------------ sample files */

/*
 * A sample file (doc/formats/samples.md): one number per line; blank lines
 * and '#' comments are ignored; every value must be finite.
 */
#define STATS_SAMPLES_MAX_LINE	4096
#define STATS_SAMPLES_MAX_COUNT 50000000u

struct stats_samples {
	char *name; /* file name, as given */
	double *values;
	size_t n, capacity;
};

/*
 * Read a sample file ("-" is standard input). On error returns a negative
 * code and writes "FILE:LINE: message" into err (err_size bytes).
 */
int stats_samples_read_file(const char *path, struct stats_samples *out, char *err,
			    size_t err_size);
/* The same parser over a buffer (which need not be NUL-terminated). */
int stats_samples_read_buffer(const char *name, const char *buf, size_t len,
			      struct stats_samples *out, char *err, size_t err_size);
void stats_samples_free(struct stats_samples *s);

/*
 * A suite file (doc/formats/samples.md): CSV with a header naming the columns
 * "benchmark", "time" and the configuration ("config", "configuration",
 * "tune" or "ext"; or the one remaining column), one run per line. The
 * Stabilizer authors' anova_data.csv and qq_data.csv are suite files.
 */
struct stats_suite {
	char *name;
	size_t n; /* runs */
	double *time;
	size_t *benchmark, *config; /* per run: indices into the name lists */
	char **benchmarks, **configs;
	size_t n_benchmarks, n_configs;
	size_t capacity;
};
int stats_suite_read_file(const char *path, struct stats_suite *out, char *err, size_t err_size);
int stats_suite_read_buffer(const char *name, const char *buf, size_t len, struct stats_suite *out,
			    char *err, size_t err_size);
/* Index of a benchmark or configuration by name; -1 if absent. */
long stats_suite_find_config(const struct stats_suite *s, const char *name);
/*
 * The runs of one cell (benchmark b, configuration c), in file order, into a
 * new array (free() it); *n_out is its length.
 */
double *stats_suite_cell(const struct stats_suite *s, size_t b, size_t c, size_t *n_out);
/*
 * Drop the largest run of every cell: the authors' cleaning (spec §7.8),
 * applied only when asked for. Returns the number of runs removed.
 */
size_t stats_suite_drop_max(struct stats_suite *s);
void stats_suite_free(struct stats_suite *s);

#endif
