/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One-dimensional clustering of a metric by kernel density (spec §4.3.5):
 * local maxima of the density are centroids, the minima between them
 * boundaries. The seed uses akde1d, an adaptive Gaussian mixture fitted by
 * EM from random starts; here it is Terrell & Scott's sample-point
 * variable-bandwidth estimator (which the seed cites), each point's
 * bandwidth its distance to the ceil(sqrt(n))-th nearest neighbour (at least
 * 0.1% of the range): narrow where the data are dense, wide where they are
 * sparse (so a sparse mode is one bump, not one per call), so that
 * tight modes a few bandwidths apart stay apart even in groups of 15 calls
 * (the main-trend heuristic), and deterministic: the same record always
 * gives the same clusters (spec §7.3 asks for determinism).
 *
 * Ripples are not clusters: two maxima separated by a minimum above 80% of
 * the lower one merge, so do adjacent clusters whose calls are closer than
 * half the smaller standard deviation, and a cluster with fewer than max(3, 2% of the
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
#define GAP_SD	  0.5

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

/* Distance from x[i] to its k-th nearest neighbour in the sorted data. */
static double knn_distance(const double *x, size_t n, size_t i, size_t k)
{
	size_t lo = i, hi = i;
	double d = 0;

	for (size_t step = 0; step < k && (lo > 0 || hi + 1 < n); step++) {
		double dl = lo > 0 ? x[i] - x[lo - 1] : INFINITY;
		double dh = hi + 1 < n ? x[hi + 1] - x[i] : INFINITY;

		if (dl <= dh) {
			d = dl;
			lo--;
		} else {
			d = dh;
			hi++;
		}
	}
	return d;
}

static int grid_density(const double *x, size_t n, double *grid_x, double *dens)
{
	double *h = malloc(n * sizeof(double));
	double floor_h = 1e-3 * (x[n - 1] - x[0]), hmax = 0, lo, hi;
	size_t k = (size_t)ceil(sqrt((double)n));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		h[i] = fmax(floor_h, knn_distance(x, n, i, k));
		hmax = fmax(hmax, h[i]);
	}
	lo = x[0] - 3 * hmax;
	hi = x[n - 1] + 3 * hmax;
	for (size_t g = 0; g < GRID; g++) {
		grid_x[g] = lo + (hi - lo) * (double)g / (GRID - 1);
		dens[g] = density_at(x, h, n, hmax, grid_x[g]);
	}
	free(h);
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
	/*
	 * Adjacent clusters whose calls nearly touch are one: the gap between
	 * them is below half the smaller standard deviation (the smaller, so that
	 * one wide cluster cannot swallow its neighbours one by one). Narrow
	 * kernels ripple inside one normal cloud; real modes leave a gap.
	 */
	for (bool merged = true; merged && nb > 0;) {
		merged = false;
		for (size_t q = 0; q < nb && !merged; q++) {
			double lo_a = q ? gx[bound[q - 1]] : -INFINITY, cut = gx[bound[q]];
			double hi_b = q + 1 < nb ? gx[bound[q + 1]] : INFINITY;
			double max_a = -INFINITY, min_b = INFINITY, sd_a, sd_b;
			size_t a0 = n, a1 = 0, b0 = n, b1 = 0;

			for (size_t i = 0; i < n; i++) {
				if (x[i] > lo_a && x[i] <= cut) {
					a0 = i < a0 ? i : a0;
					a1 = i + 1;
					max_a = x[i];
				} else if (x[i] > cut && x[i] <= hi_b) {
					b0 = i < b0 ? i : b0;
					b1 = i + 1;
					min_b = fmin(min_b, x[i]);
				}
			}
			sd_a = a1 > a0 + 1 ? gsl_stats_sd(x + a0, 1, a1 - a0) : 0;
			sd_b = b1 > b0 + 1 ? gsl_stats_sd(x + b0, 1, b1 - b0) : 0;
			if (a1 > a0 && b1 > b0 && min_b - max_a >= GAP_SD * fmin(sd_a, sd_b))
				continue;
			size_t drop_m = d[maxima[q]] < d[maxima[q + 1]] ? q : q + 1;

			memmove(&bound[q], &bound[q + 1], (nb - q - 1) * sizeof(size_t));
			nb--;
			memmove(&maxima[drop_m], &maxima[drop_m + 1],
				(nmax - drop_m - 1) * sizeof(size_t));
			nmax--;
			merged = true;
		}
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
			/* join the neighbour whose centroid is nearer; its maximum stays */
			size_t drop_b = q == nb	 ? q - 1
					: q == 0 ? 0
					: (gx[maxima[q]] - gx[maxima[q - 1]] <
					   gx[maxima[q + 1]] - gx[maxima[q]])
					    ? q - 1
					    : q;

			memmove(&bound[drop_b], &bound[drop_b + 1],
				(nb - drop_b - 1) * sizeof(size_t));
			nb--;
			memmove(&maxima[q], &maxima[q + 1], (nmax - q - 1) * sizeof(size_t));
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
