/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers shared by the files of src/stats; not part of the module's interface. */
#ifndef LEVER_STATS_INTERNAL_H
#define LEVER_STATS_INTERNAL_H

#include <stddef.h>

/* GSL aborts on domain errors by default; lever checks its inputs instead. */
void stats_gsl_quiet(void);

/* Evaluate c[0] + c[1] x + ... + c[n-1] x^(n-1). */
double stats_poly(const double *c, size_t n, double x);

/* Midranks (ties get the mean of their ranks, 1-based) of x; returns the tie term sum(t^3 - t). */
double stats_midranks(const double *x, size_t n, double *ranks);

/* Median of x[0..n), n >= 1, by quickselect; reorders x. */
double stats_median_inplace(double *x, size_t n);

#endif
