/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * annotate/internal.h: what the files of src/annotate share and nobody else
 * includes: regression classes (regress.c), the tree and heuristics
 * (derive.c) and clustering (cluster.c).
 */
#ifndef LEVER_ANNOTATE_INTERNAL_H
#define LEVER_ANNOTATE_INTERNAL_H

#include "annotate/annotate.h"

int annotate_cmp_double(const void *a, const void *b);
double annotate_transform(enum annotate_transform t, double x);
double annotate_term_value(const struct annotate_term *t, const struct annotate_symbol *s,
			   size_t row);
double annotate_model_predict(const struct annotate_model *m, const struct annotate_symbol *s,
			      size_t row);
void annotate_model_free(struct annotate_model *m);
/* y[i] is the metric of call rows[i]; feats are regressor candidates. */
int annotate_best_regression(const struct annotate_symbol *s, const double *y, const size_t *rows,
			     size_t n, const size_t *feats, size_t nf,
			     const struct annotate_params *par, struct annotate_model *best);
int annotate_refit(const struct annotate_symbol *s, const double *y, const size_t *rows, size_t n,
		   const struct annotate_model *m, struct annotate_model *out);

#endif
