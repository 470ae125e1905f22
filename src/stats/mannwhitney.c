/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Mann-Whitney U (Wilcoxon rank-sum) test. Without ties and with both
 * samples under 50 values the p-value comes from the exact null distribution
 * of U, counted by dynamic programming; otherwise from the normal
 * approximation with the tie-corrected variance and a continuity correction.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/internal.h"
#include "stats/stats.h"

#define EXACT_LIMIT 50

struct ranked {
	double value;
	size_t index;
};

static int compare_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	return (a->value > b->value) - (a->value < b->value);
}

double stats_midranks(const double *x, size_t n, double *ranks)
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	double ties = 0.0;

	if (!r)
		return NAN;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){x[i], i};
	qsort(r, n, sizeof(*r), compare_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		double t, mid;

		while (j < n && r[j].value == r[i].value)
			j++;
		t = (double)(j - i);
		mid = ((double)i + (double)j + 1.0) / 2.0; /* mean of ranks i+1 .. j */
		for (size_t k = i; k < j; k++)
			ranks[r[k].index] = mid;
		ties += t * t * t - t;
		i = j;
	}
	free(r);
	return ties;
}

/*
 * Number of ways, over all arrangements of m 'a's and n 'b's, to get each U
 * value: f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u), computed row by row into
 * a table of m*n+1 counts (as doubles: exact for the sizes allowed here up to
 * 2^53 and close enough beyond, since only ratios are used).
 */
static double *u_distribution(size_t m, size_t n)
{
	size_t umax = m * n;
	/* prev[j][u] for the current i, j = 0..n */
	double *cur = calloc((n + 1) * (umax + 1), sizeof(double));
	double *prev = calloc((n + 1) * (umax + 1), sizeof(double));
	double *result = NULL;

	if (!cur || !prev)
		goto out;
	for (size_t j = 0; j <= n; j++)
		prev[j * (umax + 1)] = 1.0; /* i = 0: one arrangement, U = 0 */
	for (size_t i = 1; i <= m; i++) {
		memset(cur, 0, (n + 1) * (umax + 1) * sizeof(double));
		cur[0] = 1.0; /* j = 0 */
		for (size_t j = 1; j <= n; j++) {
			double *row = cur + j * (umax + 1);
			const double *left = cur + (j - 1) * (umax + 1); /* (i, j-1) */
			const double *up = prev + j * (umax + 1);	 /* (i-1, j): +j */

			for (size_t u = 0; u <= i * j; u++)
				row[u] = left[u] + (u >= j ? up[u - j] : 0.0);
		}
		double *t = prev;
		prev = cur;
		cur = t;
	}
	result = malloc((umax + 1) * sizeof(double));
	if (result)
		memcpy(result, prev + n * (umax + 1), (umax + 1) * sizeof(double));
out:
	free(cur);
	free(prev);
	return result;
}

/* Two-sided exact p-value of U for sample sizes m and n, as R's wilcox.test. */
static double exact_p(double u, size_t m, size_t n)
{
	double *f = u_distribution(m, n), total = 0.0, tail = 0.0, p;
	size_t umax = m * n;

	if (!f)
		return NAN;
	for (size_t k = 0; k <= umax; k++)
		total += f[k];
	if (u > (double)umax / 2.0) {
		for (size_t k = (size_t)u; k <= umax; k++) /* P(U >= u) */
			tail += f[k];
	} else {
		for (size_t k = 0; k <= (size_t)u; k++) /* P(U <= u) */
			tail += f[k];
	}
	free(f);
	p = 2.0 * tail / total;
	return p > 1.0 ? 1.0 : p;
}

static double normal_p(double u, size_t m, size_t n, double ties)
{
	double dm = (double)m, dn = (double)n, total = dm + dn;
	double z = u - dm * dn / 2.0;
	double var = dm * dn / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));

	if (!(var > 0.0))
		return NAN;
	z = (z - copysign(0.5, z) * (z != 0.0)) / sqrt(var);
	return fmin(1.0, 2.0 * stats_normal_sf(fabs(z)));
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_test *out, bool *exact)
{
	size_t n = na + nb;
	double *all, *ranks, ties, ra = 0.0, u;
	bool use_exact;

	out->statistic = out->df1 = out->df2 = out->p = NAN;
	if (exact)
		*exact = false;
	if (na == 0 || nb == 0)
		return -EINVAL;
	all = malloc(n * sizeof(*all));
	ranks = malloc(n * sizeof(*ranks));
	if (!all || !ranks) {
		free(all);
		free(ranks);
		return -ENOMEM;
	}
	memcpy(all, a, na * sizeof(*a));
	memcpy(all + na, b, nb * sizeof(*b));
	ties = stats_midranks(all, n, ranks);
	for (size_t i = 0; i < na; i++)
		ra += ranks[i];
	free(all);
	free(ranks);
	u = ra - (double)na * ((double)na + 1.0) / 2.0;
	out->statistic = u;
	use_exact = ties == 0.0 && na < EXACT_LIMIT && nb < EXACT_LIMIT;
	out->p = use_exact ? exact_p(u, na, nb) : normal_p(u, na, nb, ties);
	if (exact)
		*exact = use_exact;
	if (isnan(out->p))
		return n < 2 ? -EINVAL : -EDOM;
	return 0;
}
