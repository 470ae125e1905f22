/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fit.c's entry point for summary.c (not part of the causal API): fit the
 * model of struct causal_fit to a finished series and mark its thin points.
 */
#ifndef LEVER_CAUSAL_FIT_H
#define LEVER_CAUSAL_FIT_H

#include <stddef.h>

#include "causal/causal.h"

/*
 * Fit s's curve (its points and their intervals must be final), refit every
 * bootstrap resample of the points for the fit's intervals (reps: n_buckets
 * rows of B values, row i the resampled program speedups of bucket i, row 0
 * unused; NULL: no intervals), then set the thin-evidence bits of the points
 * and the line. Returns 0, or -1 when out of memory.
 */
int causal_fit_series(struct causal_series *s, const double *reps, size_t B, double level);

#endif
