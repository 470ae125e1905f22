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

/* The k-th smallest of x[0..n), k < n, by quickselect; reorders x around it. */
double stats_select_inplace(double *x, size_t n, size_t k);

/* Median of x[0..n), n >= 1, by quickselect; reorders x. */
double stats_median_inplace(double *x, size_t n);

/*
 * Formats "NAME:LINE: message" (or "NAME: message" when line is 0) into err
 * and returns -EINVAL: the error convention of the sample and suite readers.
 */
int stats_read_error(char *err, size_t size, const char *name, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
