/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A test tool for issue 15's must-show 3 (tests/e2e/annotate_double_probe.sh):
 * in a record where every function was probed twice (two symbols of the same
 * name, the second declared after all the first ones), are the two probes'
 * distributions statistically equivalent, metric by metric and feature by
 * feature?
 *
 * The test is Schuirmann's two one-sided tests (TOST) on Welch's t (the
 * t distribution and moments from src/stats): equivalent when the
 * difference of the means lies within ±margin with confidence 1 - alpha,
 * i.e. both one-sided nulls (difference <= -margin, difference >= +margin)
 * are rejected at alpha. The margin is stated in units of the pooled
 * standard deviation (default 0.5, a "medium" standardised effect): a
 * shift smaller than half a standard deviation of the metric's own spread
 * counts as no difference. Two samples with no spread at all are equivalent
 * only when equal.
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
 * usage: record_equivalence [--margin D] [--alpha A] [--ks T] [--skip NAME]... RECORD
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

static struct verdict tost(const double *a, size_t na, const double *b, size_t nb, double margin_sd,
			   double alpha)
{
	struct verdict v = {.na = na, .nb = nb, .p = 1};
	double va, vb, se, df, t_low, t_high;

	if (na == 0 && nb == 0) {
		v.equivalent = true; /* missing in every call of both: the same */
		v.p = 0;
		return v;
	}
	if (na < 2 || nb < 2)
		return v;
	va = stats_variance(a, na);
	vb = stats_variance(b, nb);
	v.diff = stats_mean(a, na) - stats_mean(b, nb);
	v.margin = margin_sd * sqrt((va + vb) / 2);
	se = sqrt(va / (double)na + vb / (double)nb);
	if (!(se > 0)) {
		v.equivalent = v.diff == 0;
		v.p = v.equivalent ? 0 : 1;
		return v;
	}
	df = (va / na + vb / nb) * (va / na + vb / nb) /
	     ((va / na) * (va / na) / (double)(na - 1) + (vb / nb) * (vb / nb) / (double)(nb - 1));
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

	if (is_skipped(column)) {
		free(a);
		free(b);
		return true;
	}
	if (!a || !b) {
		fprintf(stderr, "record_equivalence: out of memory\n");
		exit(2);
	}
	v = tost(a, ca ? present(ca, sa->n_calls, a) : 0, b, cb ? present(cb, sb->n_calls, b) : 0,
		 margin, alpha);
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

int main(int argc, char **argv)
{
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
		else if (strcmp(argv[i], "--ks") == 0)
			ks_tolerance = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--skip") == 0 && n_skipped < 16)
			skipped[n_skipped++] = argv[i + 1];
		else
			break;
	}
	if (i + 1 != argc || !(margin > 0) || !(alpha > 0 && alpha < 1) ||
	    !(ks_tolerance > 0 && ks_tolerance <= 1)) {
		fprintf(
		    stderr,
		    "usage: record_equivalence [--margin D] [--alpha A] [--ks T] [--skip NAME]... "
		    "RECORD\n");
		return 2;
	}
	if (annotate_record_read_file(argv[i], &rec, err, sizeof(err))) {
		fprintf(stderr, "record_equivalence: %s\n", err);
		return 2;
	}
	printf("TOST (Welch), margin %.3g pooled sd, alpha %.3g; KS distance at most %.3g\n",
	       margin, alpha, ks_tolerance);
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
