/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the reports show of a load-amplified profile, computed once for the
 * table, JSON and HTML: the scalability curve (amp.c) and, when lines were
 * sped up at several loads, one causal summary per load level, each over
 * that level's experiments only (spec amp.md §3.8: never a baseline from
 * another load), with each line's curves regrouped across the levels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"

bool causal_profile_has_line_speedups(const struct causal_profile *p)
{
	for (size_t i = 0; i < p->n_experiments; i++)
		if (p->experiments[i].speedup_pct > 0)
			return true;
	return false;
}

/* The line (selected, point) in lines[0..n), or NULL. */
static struct causal_amp_line *find_line(struct causal_amp_line *lines, size_t n, uint32_t selected,
					 uint32_t point)
{
	for (size_t i = 0; i < n; i++)
		if (lines[i].selected == selected && lines[i].point == point)
			return &lines[i];
	return NULL;
}

static double max_or_nan(double a, double b)
{
	if (isnan(a))
		return b;
	return isnan(b) || a >= b ? a : b;
}

static int add_level_series(struct causal_amp_profiles *ap, size_t *cap, size_t k,
			    const struct causal_series *c)
{
	struct causal_amp_line *l = find_line(ap->lines, ap->n_lines, c->selected, c->point);

	if (!l) {
		if (ap->n_lines == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct causal_amp_line *m = realloc(ap->lines, nc * sizeof(*m));

			if (!m)
				return -1;
			ap->lines = m;
			*cap = nc;
		}
		l = &ap->lines[ap->n_lines];
		*l = (struct causal_amp_line){c->selected, c->point, NULL, NAN, NAN};
		l->series = calloc(ap->amp.n_levels, sizeof(*l->series));
		if (!l->series)
			return -1;
		ap->n_lines++;
	}
	l->series[k] = c;
	l->slope = max_or_nan(l->slope, c->slope);
	l->impact = max_or_nan(l->impact, c->impact);
	return 0;
}

struct line_sort {
	const struct causal_profile *p;
	enum causal_sort sort;
};

/* Descending by key, NaN last. */
static int compare_desc(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a < b) - (a > b);
}

static int compare_lines(const void *a, const void *b, void *arg)
{
	const struct line_sort *ctx = arg;
	const struct causal_amp_line *x = a, *y = b;
	int c = 0;

	if (ctx->sort == CAUSAL_SORT_SLOPE)
		c = compare_desc(x->slope, y->slope);
	else if (ctx->sort == CAUSAL_SORT_IMPACT)
		c = compare_desc(x->impact, y->impact);
	if (!c)
		c = strcmp(causal_profile_string(ctx->p, x->selected),
			   causal_profile_string(ctx->p, y->selected));
	if (!c)
		c = strcmp(causal_profile_string(ctx->p, ctx->p->points[x->point].name),
			   causal_profile_string(ctx->p, ctx->p->points[y->point].name));
	return c ? c : (x->point > y->point) - (x->point < y->point);
}

static int summarize_levels(const struct causal_profile *p,
			    const struct causal_summary_options *opt,
			    struct causal_amp_profiles *ap)
{
	size_t n = ap->amp.n_levels, cap = 0;
	struct line_sort ctx = {p, opt ? opt->sort : CAUSAL_SORT_IMPACT};

	ap->views = calloc(n, sizeof(*ap->views));
	ap->summaries = calloc(n, sizeof(*ap->summaries));
	if (!ap->views || !ap->summaries)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (causal_amp_level_view(p, ap->amp.levels[k].arrival_speedup_ns, &ap->views[k])) {
			memset(&ap->views[k], 0, sizeof(ap->views[k])); /* it may hold p's arrays */
			return -1;
		}
		if (causal_summarize(&ap->views[k], opt, &ap->summaries[k])) {
			/* nothing to free in a failed summary; mark the view as the last */
			causal_amp_view_free(&ap->views[k]);
			return -1;
		}
	}
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < ap->summaries[k].n_series; i++)
			if (add_level_series(ap, &cap, k, &ap->summaries[k].series[i]))
				return -1;
	if (ap->n_lines > 1)
		qsort_r(ap->lines, ap->n_lines, sizeof(*ap->lines), compare_lines, &ctx);
	return 0;
}

int causal_amp_profiles_build(const struct causal_profile *p,
			      const struct causal_summary_options *opt,
			      struct causal_amp_profiles *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = causal_amp_analyze(p, &out->amp);
	if (r)
		return r;
	/* AMP alone has no line curves; experiments without a load cannot be split */
	out->per_load = causal_profile_has_line_speedups(p) && out->amp.n_levels > 1 &&
			!out->amp.ignored_experiments;
	if (out->per_load && summarize_levels(p, opt, out)) {
		causal_amp_profiles_free(out);
		return -1;
	}
	return 0;
}

void causal_amp_profiles_free(struct causal_amp_profiles *ap)
{
	for (size_t i = 0; i < ap->n_lines; i++)
		free(ap->lines[i].series);
	free(ap->lines);
	/* views and summaries are filled in order: stop at the first empty view */
	for (size_t k = 0; ap->views && k < ap->amp.n_levels && ap->views[k].experiments; k++) {
		causal_summary_free(&ap->summaries[k]);
		causal_amp_view_free(&ap->views[k]);
	}
	free(ap->views);
	free(ap->summaries);
	causal_amp_free(&ap->amp);
	memset(ap, 0, sizeof(*ap));
}
