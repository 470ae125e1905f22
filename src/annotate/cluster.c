/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One-dimensional clustering of a metric by kernel density (spec §4.3.5):
 * local maxima of the density are centroids, the minima between them
 * boundaries. The seed uses akde1d, an adaptive Gaussian mixture fitted by
 * EM from random starts; here the variable bandwidth is Abramson's
 * square-root law on a Silverman pilot (Terrell & Scott's variable-kernel
 * family, which the seed cites), which adapts the bandwidth to the local
 * density in the same way and is deterministic: the same record always
 * gives the same clusters (spec §7.3 asks for determinism).
 *
 * Ripples are not clusters: two maxima separated by a minimum above 80% of
 * the lower one merge, and a cluster with fewer than max(3, 2% of the
 * calls) joins its neighbour.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>
#include <gsl/gsl_statistics_double.h>

#include "annotate/internal.h"

#define GRID	  2048
#define RIPPLE	  0.8
#define MIN_SHARE 0.02

/* Silverman's rule of thumb on sorted data. */
static double pilot_bandwidth(const double *sorted, size_t n)
{
	double sd = gsl_stats_sd(sorted, 1, n);
	double iqr = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.75) -
		     gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.25);
	double spread = iqr > 0 ? fmin(sd, iqr / 1.34) : sd;
	double h = 0.9 * spread * pow((double)n, -0.2);

	return h > 0 ? h : (sorted[n - 1] - sorted[0]) / (double)n;
}

/* Gaussian kernel sums over the sorted data within 6 bandwidths. */
static double density_at(const double *x, const double *h, size_t n, double hmax, double at)
{
	size_t lo = 0, hi = n;
	double sum = 0;

	/* first point with x >= at - 6 hmax */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x[mid] < at - 6 * hmax)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && x[i] <= at + 6 * hmax; i++) {
		double u = (at - x[i]) / h[i];

		sum += exp(-0.5 * u * u) / h[i];
	}
	return sum / ((double)n * sqrt(2 * M_PI));
}

struct extremum {
	size_t at;
	double d;
};

static int grid_density(const double *x, size_t n, double *grid_x, double *dens)
{
	double *h = malloc(n * sizeof(double)), *pilot = malloc(n * sizeof(double));
	double hp = pilot_bandwidth(x, n), logg = 0, hmax = 0, lo, hi;

	if (!h || !pilot) {
		free(h);
		free(pilot);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		h[i] = hp;
	/* the pilot density at the points, then Abramson's local bandwidths */
	for (size_t i = 0; i < n; i++) {
		pilot[i] = density_at(x, h, n, hp, x[i]);
		logg += log(pilot[i]);
	}
	logg /= (double)n;
	for (size_t i = 0; i < n; i++) {
		h[i] = hp * sqrt(exp(logg) / pilot[i]);
		hmax = fmax(hmax, h[i]);
	}
	lo = x[0] - 3 * hp;
	hi = x[n - 1] + 3 * hp;
	for (size_t g = 0; g < GRID; g++) {
		grid_x[g] = lo + (hi - lo) * (double)g / (GRID - 1);
		dens[g] = density_at(x, h, n, hmax, grid_x[g]);
	}
	free(h);
	free(pilot);
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int annotate_kde_clusters(const double *y, size_t n, struct annotate_cluster **out)
{
	double *x, *gx, *d;
	size_t *maxima, nmax = 0, *bound, nb;
	struct annotate_cluster *cl;
	int rc = 0;

	*out = NULL;
	if (n == 0)
		return -EINVAL;
	x = malloc(n * sizeof(double));
	gx = malloc(GRID * sizeof(double));
	d = malloc(GRID * sizeof(double));
	maxima = malloc(GRID * sizeof(size_t));
	bound = malloc(GRID * sizeof(size_t));
	cl = calloc(GRID, sizeof(*cl));
	if (!x || !gx || !d || !maxima || !bound || !cl) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(x, y, n * sizeof(double));
	qsort(x, n, sizeof(double), annotate_cmp_double);
	if (n < 3 || x[0] == x[n - 1]) {
		maxima[nmax++] = 0;
		nb = 0;
		goto assemble_single;
	}
	if ((rc = grid_density(x, n, gx, d)))
		goto out;
	for (size_t g = 1; g + 1 < GRID; g++)
		if (d[g] > d[g - 1] && d[g] >= d[g + 1])
			maxima[nmax++] = g;
	if (nmax == 0)
		maxima[nmax++] = GRID / 2;
	/* merge ripples: drop the lower maximum when the valley is shallow */
	for (bool merged = true; merged && nmax > 1;) {
		merged = false;
		for (size_t i = 0; i + 1 < nmax; i++) {
			size_t a = maxima[i], b = maxima[i + 1], v = a;

			for (size_t g = a; g <= b; g++)
				if (d[g] < d[v])
					v = g;
			if (d[v] > RIPPLE * fmin(d[a], d[b])) {
				size_t drop = d[a] < d[b] ? i : i + 1;

				memmove(&maxima[drop], &maxima[drop + 1],
					(nmax - drop - 1) * sizeof(size_t));
				nmax--;
				merged = true;
				break;
			}
		}
	}
	/* boundaries: the lowest density between consecutive maxima */
	nb = 0;
	for (size_t i = 0; i + 1 < nmax; i++) {
		size_t v = maxima[i];

		for (size_t g = maxima[i]; g <= maxima[i + 1]; g++)
			if (d[g] < d[v])
				v = g;
		bound[nb++] = v;
	}
	/* small clusters join their neighbour (drop the boundary on the smaller side) */
	for (bool merged = true; merged && nb > 0;) {
		size_t min_count = (size_t)fmax(3.0, ceil(MIN_SHARE * (double)n));

		merged = false;
		for (size_t q = 0; q <= nb && !merged; q++) {
			double lo = q ? gx[bound[q - 1]] : -INFINITY,
			       hi = q < nb ? gx[bound[q]] : INFINITY;
			size_t count = 0;

			for (size_t i = 0; i < n; i++)
				count += x[i] > lo && x[i] <= hi;
			if (count >= min_count)
				continue;
			/* remove the boundary towards the nearer maximum */
			size_t drop_b = q == nb ? q - 1
					: q == 0
					    ? 0
					    : (d[maxima[q - 1]] > d[maxima[q + 1]] ? q - 1 : q);
			size_t drop_m =
			    d[maxima[drop_b]] < d[maxima[drop_b + 1]] ? drop_b : drop_b + 1;

			memmove(&bound[drop_b], &bound[drop_b + 1],
				(nb - drop_b - 1) * sizeof(size_t));
			nb--;
			memmove(&maxima[drop_m], &maxima[drop_m + 1],
				(nmax - drop_m - 1) * sizeof(size_t));
			nmax--;
			merged = true;
		}
	}
	qsort(maxima, nmax, sizeof(size_t), cmp_size);
assemble_single:
	for (size_t q = 0; q <= nb; q++) {
		double lo = q ? gx[bound[q - 1]] : -INFINITY, hi = q < nb ? gx[bound[q]] : INFINITY;
		double centre = nb || n >= 3 ? (x[0] == x[n - 1] ? x[0] : gx[maxima[q]]) : x[0];
		double ss = 0;
		size_t count = 0;

		if (nb == 0 && (n < 3 || x[0] == x[n - 1]))
			centre = gsl_stats_mean(x, 1, n);
		for (size_t i = 0; i < n; i++)
			if (x[i] > lo && x[i] <= hi) {
				ss += (x[i] - centre) * (x[i] - centre);
				count++;
			}
		cl[q] = (struct annotate_cluster){.lo = lo,
						  .hi = hi,
						  .centroid = centre,
						  .variance = count ? ss / (double)count : 0,
						  .count = count};
	}
	*out = cl;
	cl = NULL;
	rc = (int)nb + 1;
out:
	free(x);
	free(gx);
	free(d);
	free(maxima);
	free(bound);
	free(cl);
	return rc;
}
