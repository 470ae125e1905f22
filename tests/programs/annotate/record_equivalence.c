/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A test tool for issue 15's must-show 3 (tests/e2e/annotate_double_probe.sh):
 * in a record where every function was probed twice (two symbols of the same
 * name, the second declared after all the first ones), are the two probes'
 * distributions statistically equivalent, metric by metric and feature by
 * feature?
 *
 * The test is Schuirmann's two one-sided tests (TOST) on Yuen's t, the
 * Welch test of trimmed means (Wilcox, "Introduction to Robust Estimation
 * and Hypothesis Testing", §5.3; the t distribution and moments from
 * src/stats): equivalent when the difference of the 10% trimmed
 * means lies within ±margin with confidence 1 - alpha, i.e. both one-sided
 * nulls (difference <= -margin, difference >= +margin) are rejected at
 * alpha. Trimmed, because times on a loaded machine have a heavy right tail
 * (a call the scheduler preempts, or whose SMT sibling wakes, takes many
 * times its usual time): one such call moves a mean and inflates a variance
 * far more than it says about the probes, and the plain Welch test then
 * fails to show what holds for nine calls in ten. The margin is stated in
 * units of the pooled winsorized standard deviation (default 0.5, a
 * "medium" standardised effect): a shift smaller than half a standard
 * deviation of the metric's own spread counts as no difference. Two samples
 * with no spread at all are equivalent only when equal. Only the time metric
 * is trimmed: bytes and features do not depend on the machine's load, and
 * on them (down to 25 calls of a feature only some calls have) the plain
 * test keeps its power. --trim F changes the fraction cut from each end of
 * the times (0: Welch's test on plain means).
 *
 * TOST compares means; a second condition compares the whole distributions:
 * the two-sample Kolmogorov-Smirnov distance D (the largest gap between the
 * two empirical distribution functions) must not exceed a tolerance
 * (default 0.1: no value splits the two probes' calls differently by more
 * than a tenth of them). Both must hold; --ks 1 leaves the distance as
 * information only, a tiny --ks asks for identical samples.
 *
 * --skip NAME leaves a metric or feature out (repeatable).
 *
 * --time-floor X (µs) or --time-floor auto: the margin for the time metric
 * is at least X. The outer probe times the inner probe's handlers at every
 * call, but the inner probe's register saves and restores and its return it
 * cannot time: it subtracts them as a constant U calibrated at start-up
 * (unmeasured-ns in the record's `# probe-cost` lines). That part's true
 * cost moves with the machine's load (an SMT sibling waking or sleeping):
 * calibrations here range over 26-70 ns, and with the load switched on and
 * off every 0.15 s the outer probe read up to 1.1 U more than the inner one
 * (10% trimmed means), a shift it cannot see. `auto` takes twice the largest
 * unmeasured-ns of the record: times equivalent within what the probe
 * estimates rather than measures. Everything the outer probe does time
 * (thread lookup, sampling, features, formatting, flushes: 150 ns and more a
 * call) stays judged: with the timed windows of nested probes not subtracted
 * (shadow.c's record_call subtracting only the inside constant), the time of
 * every one of the twenty functions fails.
 *
 * usage: record_equivalence [--margin D] [--alpha A] [--trim F] [--ks T] [--time-floor X|auto]
 *                           [--skip NAME]... RECORD
 * Prints one line per pair and column; exit 0 if all are equivalent, 1 if
 * some is not, 2 on an error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"
#include "stats/stats.h"

struct verdict {
	double diff, margin, p, ks;
	size_t na, nb;
	bool equivalent;
};

/* The non-missing values of a column. */
static size_t present(const double *col, size_t n, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(col[i]))
			out[k++] = col[i];
	return k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The two-sample Kolmogorov-Smirnov distance of a and b (sorted in place). */
static double ks_distance(double *a, size_t na, double *b, size_t nb)
{
	size_t i = 0, j = 0;
	double d = 0;

	qsort(a, na, sizeof(*a), cmp_double);
	qsort(b, nb, sizeof(*b), cmp_double);
	while (i < na && j < nb) {
		double x = fmin(a[i], b[j]);

		while (i < na && a[i] == x)
			i++;
		while (j < nb && b[j] == x)
			j++;
		d = fmax(d, fabs((double)i / (double)na - (double)j / (double)nb));
	}
	return d;
}

static double ks_tolerance = 0.1;
static double trim = 0.1; /* of the times */
static double time_floor; /* µs */

/*
 * Yuen's pieces for x (sorted): the trimmed mean, the winsorized variance
 * (the values cut from each end replaced by the nearest kept one), the
 * squared standard error of the trimmed mean d = (n-1) s_w^2 / (h (h-1)),
 * and h, the number of values kept.
 */
static void trimmed_moments(const double *x, size_t n, double trim, double *mean, double *var_w,
			    double *d, size_t *h)
{
	size_t g = (size_t)floor(trim * (double)n), keep;
	double lo, hi, sum = 0, sum2 = 0, wmean;

	if (2 * g + 2 > n)
		g = n > 2 ? (n - 2) / 2 : 0; /* keep at least two */
	keep = n - 2 * g;
	lo = x[g];
	hi = x[n - g - 1];
	*mean = stats_mean(x + g, keep);
	for (size_t i = 0; i < n; i++)
		sum += fmin(fmax(x[i], lo), hi);
	wmean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double e = fmin(fmax(x[i], lo), hi) - wmean;

		sum2 += e * e;
	}
	*var_w = sum2 / (double)(n - 1);
	*d = (double)(n - 1) * *var_w / ((double)keep * (double)(keep - 1));
	*h = keep;
}

static struct verdict tost(const double *a, size_t na, const double *b, size_t nb, double margin_sd,
			   double trim, double floor, double alpha)
{
	struct verdict v = {.na = na, .nb = nb, .p = 1};
	double ma, mb, va, vb, da, db, se, df, t_low, t_high;
	size_t ha, hb;

	if (na == 0 && nb == 0) {
		v.equivalent = true; /* missing in every call of both: the same */
		v.p = 0;
		return v;
	}
	if (na < 2 || nb < 2)
		return v;
	trimmed_moments(a, na, trim, &ma, &va, &da, &ha);
	trimmed_moments(b, nb, trim, &mb, &vb, &db, &hb);
	v.diff = ma - mb;
	v.margin = fmax(margin_sd * sqrt((va + vb) / 2), floor);
	se = sqrt(da + db);
	if (!(se > 0)) {
		/* no spread at all: the margin says how far apart the constants may be */
		v.equivalent = fabs(v.diff) <= floor;
		v.p = v.equivalent ? 0 : 1;
		return v;
	}
	df = (da + db) * (da + db) / (da * da / (double)(ha - 1) + db * db / (double)(hb - 1));
	t_low = (v.diff + v.margin) / se;  /* H0: diff <= -margin */
	t_high = (v.diff - v.margin) / se; /* H0: diff >= +margin */
	v.p = fmax(1 - stats_t_cdf(t_low, df), stats_t_cdf(t_high, df));
	v.equivalent = v.p < alpha;
	return v;
}

static const char *skipped[16];
static int n_skipped;

static bool is_skipped(const char *column)
{
	for (int i = 0; i < n_skipped; i++)
		if (strcmp(skipped[i], column) == 0)
			return true;
	return false;
}

static bool report(const char *symbol, const char *column, const double *ca,
		   const struct annotate_symbol *sa, const double *cb,
		   const struct annotate_symbol *sb, double margin, double alpha)
{
	double *a = malloc((sa->n_calls + 1) * sizeof(*a));
	double *b = malloc((sb->n_calls + 1) * sizeof(*b));
	struct verdict v;
	size_t na, nb;
	bool is_time;

	if (is_skipped(column)) {
		free(a);
		free(b);
		return true;
	}
	if (!a || !b) {
		fprintf(stderr, "record_equivalence: out of memory\n");
		exit(2);
	}
	na = ca ? present(ca, sa->n_calls, a) : 0;
	nb = cb ? present(cb, sb->n_calls, b) : 0;
	qsort(a, na, sizeof(*a), cmp_double);
	qsort(b, nb, sizeof(*b), cmp_double);
	is_time = strcmp(column, "time") == 0;
	v = tost(a, na, b, nb, margin, is_time ? trim : 0, is_time ? time_floor : 0, alpha);
	v.ks = v.na && v.nb ? ks_distance(a, v.na, b, v.nb) : v.na == v.nb ? 0 : 1;
	v.equivalent &= v.ks <= ks_tolerance;
	printf("%-12s %-40.40s %-24.24s n=%zu/%zu diff=%-11.5g margin=%-11.5g p=%-9.3g D=%.3f\n",
	       v.equivalent ? "equivalent" : "NOT", symbol, column, v.na, v.nb, v.diff, v.margin,
	       v.p, v.ks);
	free(a);
	free(b);
	return v.equivalent;
}

/* A metric some call has (the reader keeps a column of NaN for the others). */
static bool recorded(const double *col, size_t n)
{
	for (size_t i = 0; col && i < n; i++)
		if (!isnan(col[i]))
			return true;
	return false;
}

/* The symbol's twin: the same name, declared after it. */
static const struct annotate_symbol *twin(const struct annotate_record *r, size_t i)
{
	for (size_t j = i + 1; j < r->n_symbols; j++)
		if (strcmp(r->symbols[j].name, r->symbols[i].name) == 0)
			return &r->symbols[j];
	return NULL;
}

static bool compare_pair(const struct annotate_symbol *a, const struct annotate_symbol *b,
			 double margin, double alpha)
{
	bool all = true;

	for (int m = 0; m < ANNOTATE_N_METRICS; m++)
		if (recorded(a->metrics[m], a->n_calls) || recorded(b->metrics[m], b->n_calls))
			all &= report(a->name, annotate_metric_name((enum annotate_metric)m),
				      a->metrics[m], a, b->metrics[m], b, margin, alpha);
	for (size_t f = 0; f < a->n_features; f++) {
		long g = annotate_symbol_feature(b, a->features[f].name);

		if (g < 0) {
			printf("%-12s %-40.40s %-28.28s only in the first probe\n", "NOT", a->name,
			       a->features[f].name);
			all = false;
			continue;
		}
		all &= report(a->name, a->features[f].name, a->features[f].values, a,
			      b->features[g].values, b, margin, alpha);
	}
	return all;
}

/* Twice the largest unmeasured-ns of the record's `# probe-cost` lines, in µs; -1 if none. */
static double calibrated_floor(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	double most = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long u;
		const char *at = strstr(line, " unmeasured-ns=");

		if (strncmp(line, "# probe-cost ", 13) == 0 && at &&
		    sscanf(at, " unmeasured-ns=%llu", &u) == 1)
			most = fmax(most, 2 * (double)u / 1000);
	}
	fclose(f);
	return most;
}

int main(int argc, char **argv)
{
	const char *floor_arg = NULL;
	double margin = 0.5, alpha = 0.05;
	struct annotate_record rec;
	size_t pairs = 0;
	bool all = true;
	char err[512];
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "--margin") == 0)
			margin = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--alpha") == 0)
			alpha = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--trim") == 0)
			trim = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--ks") == 0)
			ks_tolerance = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--time-floor") == 0)
			floor_arg = argv[i + 1];
		else if (strcmp(argv[i], "--skip") == 0 && n_skipped < 16)
			skipped[n_skipped++] = argv[i + 1];
		else
			break;
	}
	if (i + 1 != argc || !(margin > 0) || !(alpha > 0 && alpha < 1) ||
	    !(ks_tolerance > 0 && ks_tolerance <= 1) || !(trim >= 0 && trim < 0.5)) {
		fprintf(stderr,
			"usage: record_equivalence [--margin D] [--alpha A] [--trim F] [--ks T] "
			"[--time-floor X|auto] [--skip NAME]... RECORD\n");
		return 2;
	}
	if (floor_arg) {
		time_floor =
		    strcmp(floor_arg, "auto") == 0 ? calibrated_floor(argv[i]) : atof(floor_arg);
		if (!(time_floor >= 0)) {
			fprintf(stderr,
				"record_equivalence: %s: no time floor (no `# probe-cost` "
				"line in the record?)\n",
				floor_arg);
			return 2;
		}
	}
	if (annotate_record_read_file(argv[i], &rec, err, sizeof(err))) {
		fprintf(stderr, "record_equivalence: %s\n", err);
		return 2;
	}
	printf("TOST (Welch; on time Yuen's, %.0f%% trimmed means), margin %.3g pooled winsorized "
	       "sd (time: at "
	       "least %.3g µs), alpha %.3g; KS distance at most %.3g\n",
	       trim * 100, margin, time_floor, alpha, ks_tolerance);
	for (size_t s = 0; s < rec.n_symbols; s++) {
		const struct annotate_symbol *b = twin(&rec, s);
		bool is_second = false;

		for (size_t k = 0; k < s; k++)
			is_second |= strcmp(rec.symbols[k].name, rec.symbols[s].name) == 0;
		if (is_second)
			continue;
		if (!b) {
			printf("%-12s %-40.40s probed once\n", "NOT", rec.symbols[s].name);
			all = false;
			continue;
		}
		all &= compare_pair(&rec.symbols[s], b, margin, alpha);
		pairs++;
	}
	printf("%zu pairs: %s\n", pairs, all ? "all equivalent" : "NOT all equivalent");
	annotate_record_free(&rec);
	return all && pairs ? 0 : 1;
}
