/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Derivation of an annotation from a record (spec §4.3, §7.6): for one
 * symbol and metric,
 *  1. pre-processing (§4.3.1, §4.3.3): numeric features complete over the
 *     calls and not constant are regressor candidates; of each pair with
 *     |Pearson r| > CORRELATION_THRESHOLD the later is dropped (duplicates
 *     included); a feature missing in some calls stays a candidate for the
 *     nodes where it is complete (a field of one dynamic type, A.18: read
 *     for that type's calls only); enum and dynamic-type features give
 *     partition candidates,
 *     one part per value; branches executed exactly once per call give
 *     pivots by Algorithm 1 (pivot = the maximum of the lower class, §7.2
 *     item 6);
 *  2. the tree (Algorithm 2): a node is a leaf when its calls are constant or
 *     a regression is good; otherwise it is split on the first applicable
 *     candidate (enums and dynamic types first, then pivots: §7.2 item 8);
 *  3. when the tree models nothing and the metric is time-like, the R (least
 *     value per feature value) and M (dominant cluster per feature value)
 *     heuristics, feature by feature (§4.3.4);
 *  4. nodes still unmodelled are clustered (Algorithm 3 on the node's own
 *     calls, §7.2 item 7): scoped regressions when a feature separates the
 *     clusters, else a mixture.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_statistics_double.h>

#include "annotate/internal.h"
#include "report/report.h"

void annotate_params_default(struct annotate_params *p)
{
	*p = (struct annotate_params){
	    .correlation_threshold = 0.9,
	    .min_det = 0.75,
	    .good_pvalue = 2e-11,
	    .bic_diff = 10,
	    .drop_k = 5,
	    .min_part_points = 5,
	    .constant_tolerance = 0.01,
	    .cluster_overlap = 0.25,
	    .max_interaction_features = 8,
	    .screen_terms = 64,
	    .heuristics = true,
	    .clustering = true,
	    .max_depth = 8,
	};
}

const char *annotate_class_name(enum annotate_class c)
{
	static const char *const n[] = {"constant", "linear", "nlogn", "quadratic"};

	return (unsigned)c < ANNOTATE_N_CLASSES ? n[c] : "?";
}

/* ------------------------------------------------------------ context */

enum cand_kind { CAND_VALUES, CAND_PIVOT };

struct cand {
	enum cand_kind kind;
	size_t feature;
	double pivot;
};

struct pending {
	size_t *rows, n;
	struct annotate_atom *atoms;
	size_t n_atoms;
};

struct ctx {
	const struct annotate_symbol *s;
	const struct annotate_params *par;
	const double *y; /* the metric column */
	struct annotate_derivation *d;
	size_t *regs, n_regs;
	struct cand *cands;
	size_t n_cands;
	char heuristic;
	bool allow_constant;
	int next_group;
	struct pending *failed;
	size_t n_failed;
	int err;
};

static void logf_(struct annotate_derivation *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (d->log_cap - d->log_len < 512) {
		size_t cap = d->log_cap ? d->log_cap * 2 : 4096;
		char *nl = realloc(d->log, cap);

		if (!nl)
			return;
		d->log = nl;
		d->log_cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(d->log + d->log_len, d->log_cap - d->log_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->log_len +=
		    (size_t)n < d->log_cap - d->log_len ? (size_t)n : d->log_cap - d->log_len - 1;
}

static bool is_numeric(enum annotate_feature_kind k)
{
	return k != ANNOTATE_ENUM && k != ANNOTATE_DYNAMIC_TYPE && k != ANNOTATE_BRANCH;
}

static bool complete(const struct annotate_feature *f, const size_t *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(f->values[rows[i]]))
			return false;
	return true;
}

static size_t present_count(const struct annotate_feature *f, const size_t *rows, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !isnan(f->values[rows[i]]);
	return k;
}

static bool varies(const struct annotate_feature *f, const size_t *rows, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (f->values[rows[i]] != f->values[rows[0]])
			return true;
	return false;
}

/* ------------------------------------------------------------ names */

/* `j->items->len` becomes `j.items.len`: an identifier of the language. */
static char *short_name(const char *expr)
{
	size_t n = strlen(expr);
	char *out = malloc(n + 3), *o = out;

	if (!out)
		return NULL;
	if (isdigit((unsigned char)*expr))
		*o++ = 'f';
	for (const char *c = expr; *c; c++) {
		if (c[0] == '-' && c[1] == '>') {
			*o++ = '.';
			c++;
		} else if (isalnum((unsigned char)*c) || *c == '_' || *c == '.') {
			*o++ = *c;
		} else if (o > out && o[-1] != '_' && o[-1] != '.') {
			*o++ = '_';
		}
	}
	while (o > out && (o[-1] == '_' || o[-1] == '.'))
		o--;
	if (o == out)
		*o++ = 'x';
	*o = 0;
	if (*out == '_' || *out == '.')
		memmove(out, out + 1, strlen(out));
	return out;
}

static int make_names(struct annotate_derivation *d, const struct annotate_symbol *s)
{
	d->names = calloc(s->n_features ? s->n_features : 1, sizeof(char *));
	if (!d->names)
		return -ENOMEM;
	for (size_t f = 0; f < s->n_features; f++) {
		char *n = short_name(s->features[f].name);
		int k = 2;

		if (!n)
			return -ENOMEM;
		for (size_t g = 0; g < f; g++) {
			if (strcmp(d->names[g], n) != 0)
				continue;
			char *m = malloc(strlen(n) + 16);

			if (!m) {
				free(n);
				return -ENOMEM;
			}
			sprintf(m, "%s_%d", n, k++);
			free(n);
			n = m;
			g = (size_t)-1; /* check the new name from the start */
		}
		d->names[f] = n;
	}
	return 0;
}

/* ------------------------------------------------------------ pre-processing */

/*
 * Drop the later feature of every pair with |r| > threshold. The correlation
 * matrix is one symmetric rank-k update (BLAS dsyrk) of the standardised
 * columns.
 */
static int correlation_filter(struct ctx *c, const size_t *rows, size_t n)
{
	size_t k = c->n_regs, kept = 0;
	gsl_matrix *z, *r;
	bool *drop;

	if (k < 2 || n < 3)
		return 0;
	/* the complete features first; the others are not correlated here */
	for (size_t j = 0, front = 0; j < k; j++)
		if (complete(&c->s->features[c->regs[j]], rows, n)) {
			size_t t = c->regs[j];

			memmove(&c->regs[front + 1], &c->regs[front], (j - front) * sizeof(size_t));
			c->regs[front++] = t;
		}
	while (k > 0 && !complete(&c->s->features[c->regs[k - 1]], rows, n))
		k--;
	if (k < 2)
		return 0;
	/* one row per feature: GSL's CBLAS then walks both operands contiguously */
	z = gsl_matrix_alloc(k, n);
	r = gsl_matrix_alloc(k, k);
	drop = calloc(k, sizeof(bool));
	if (!z || !r || !drop) {
		gsl_matrix_free(z);
		gsl_matrix_free(r);
		free(drop);
		return -ENOMEM;
	}
	for (size_t j = 0; j < k; j++) {
		const double *v = c->s->features[c->regs[j]].values;
		double m = 0, ss = 0, sd;

		for (size_t i = 0; i < n; i++)
			m += v[rows[i]];
		m /= (double)n;
		for (size_t i = 0; i < n; i++)
			ss += (v[rows[i]] - m) * (v[rows[i]] - m);
		sd = sqrt(ss);
		for (size_t i = 0; i < n; i++)
			gsl_matrix_set(z, j, i, sd > 0 ? (v[rows[i]] - m) / sd : 0.0);
	}
	gsl_blas_dsyrk(CblasUpper, CblasNoTrans, 1.0, z, 0.0, r);
	for (size_t j = 0; j < k; j++) {
		for (size_t i = 0; i < j && !drop[j]; i++)
			if (!drop[i] &&
			    fabs(gsl_matrix_get(r, i, j)) > c->par->correlation_threshold)
				drop[j] = true;
		if (drop[j])
			logf_(c->d,
			      "pre-processing: %s dropped (|r| > %g with an earlier feature)\n",
			      c->d->names[c->regs[j]], c->par->correlation_threshold);
		else
			c->regs[kept++] = c->regs[j];
	}
	for (size_t j = k; j < c->n_regs; j++) /* the partial features, all kept */
		c->regs[kept++] = c->regs[j];
	c->n_regs = kept;
	gsl_matrix_free(z);
	gsl_matrix_free(r);
	free(drop);
	return 0;
}

static int add_cand(struct ctx *c, enum cand_kind kind, size_t f, double pivot)
{
	struct cand *nc;

	for (size_t i = 0; i < c->n_cands; i++)
		if (c->cands[i].kind == kind && c->cands[i].feature == f &&
		    (kind == CAND_VALUES || c->cands[i].pivot == pivot))
			return 0;
	nc = realloc(c->cands, (c->n_cands + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	c->cands = nc;
	nc[c->n_cands++] = (struct cand){.kind = kind, .feature = f, .pivot = pivot};
	return 0;
}

/*
 * Algorithm 1 for one branch and one feature: when the feature's values
 * under the two outcomes do not overlap, the pivot is the maximum of the
 * lower class, and the split is f <= pivot / f > pivot.
 */
static bool branch_pivot(const struct annotate_feature *b, const struct annotate_feature *f,
			 const size_t *rows, size_t n, double *pivot)
{
	double max_t = -INFINITY, min_t = INFINITY, max_n = -INFINITY, min_n = INFINITY;

	for (size_t i = 0; i < n; i++) {
		double v = f->values[rows[i]];

		if (b->values[rows[i]] != 0) {
			max_t = fmax(max_t, v);
			min_t = fmin(min_t, v);
		} else {
			max_n = fmax(max_n, v);
			min_n = fmin(min_n, v);
		}
	}
	if (max_n < min_t)
		*pivot = max_n;
	else if (max_t < min_n)
		*pivot = max_t;
	else
		return false;
	return true;
}

static bool branch_usable(const struct annotate_feature *b, const size_t *rows, size_t n)
{
	bool taken = false, not_taken = false;

	if (b->kind != ANNOTATE_BRANCH || b->repeated || !complete(b, rows, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		taken |= b->values[rows[i]] != 0;
		not_taken |= b->values[rows[i]] == 0;
	}
	return taken && not_taken;
}

static size_t distinct_count(const struct annotate_feature *f, const size_t *rows, size_t n,
			     size_t limit)
{
	double seen[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k <= limit && k < 64; i++) {
		double v = f->values[rows[i]];
		bool found = false;

		for (size_t j = 0; j < k && !found; j++)
			found = seen[j] == v;
		if (!found)
			seen[k++] = v;
	}
	return k;
}

#define MAX_ENUM_VALUES 32

static int preprocess(struct ctx *c, const size_t *rows, size_t n)
{
	const struct annotate_symbol *s = c->s;
	int rc;

	c->regs = malloc((s->n_features ? s->n_features : 1) * sizeof(size_t));
	if (!c->regs)
		return -ENOMEM;
	for (size_t f = 0; f < s->n_features; f++) {
		const struct annotate_feature *ft = &s->features[f];

		if (!is_numeric(ft->kind))
			continue;
		c->d->n_candidates++;
		if (!complete(ft, rows, n) && present_count(ft, rows, n) <= c->par->min_part_points)
			logf_(c->d, "pre-processing: %s dropped (missing values)\n",
			      c->d->names[f]);
		else if (!complete(ft, rows, n)) {
			logf_(c->d,
			      "pre-processing: %s has missing values: a candidate where it is "
			      "complete\n",
			      c->d->names[f]);
			c->regs[c->n_regs++] = f;
		} else if (!varies(ft, rows, n))
			logf_(c->d, "pre-processing: %s dropped (constant)\n", c->d->names[f]);
		else
			c->regs[c->n_regs++] = f;
	}
	if ((rc = correlation_filter(c, rows, n)))
		return rc;
	c->d->n_regressors = c->n_regs;
	/* enums and dynamic types first: they come from the code (spec §7.2 item 8) */
	for (size_t f = 0; f < s->n_features; f++) {
		const struct annotate_feature *ft = &s->features[f];
		size_t k;

		if (ft->kind != ANNOTATE_ENUM && ft->kind != ANNOTATE_DYNAMIC_TYPE)
			continue;
		if (!complete(ft, rows, n))
			continue;
		k = distinct_count(ft, rows, n, MAX_ENUM_VALUES);
		if (k >= 2 && k <= MAX_ENUM_VALUES && (rc = add_cand(c, CAND_VALUES, f, 0)))
			return rc;
	}
	for (size_t b = 0; b < s->n_features; b++) {
		if (!branch_usable(&s->features[b], rows, n))
			continue;
		for (size_t j = 0; j < s->n_features; j++) {
			double pivot;

			if (!is_numeric(s->features[j].kind) || !complete(&s->features[j], rows, n))
				continue;
			if (branch_pivot(&s->features[b], &s->features[j], rows, n, &pivot) &&
			    (rc = add_cand(c, CAND_PIVOT, j, pivot)))
				return rc;
		}
	}
	c->d->n_partitions = c->n_cands;
	return 0;
}

/* ------------------------------------------------------------ leaves */

static double *gather(const double *col, const size_t *rows, size_t n)
{
	double *y = malloc((n ? n : 1) * sizeof(double));

	for (size_t i = 0; y && i < n; i++)
		y[i] = col[rows[i]];
	return y;
}

static int add_leaf(struct ctx *c, const size_t *rows, size_t n, const struct annotate_atom *atoms,
		    size_t n_atoms, const struct annotate_model *m, bool has_prob, double prob,
		    int group)
{
	struct annotate_derivation *d = c->d;
	struct annotate_leaf *nl = realloc(d->leaves, (d->n_leaves + 1) * sizeof(*nl)), *l;

	if (!nl)
		return -ENOMEM;
	d->leaves = nl;
	l = &nl[d->n_leaves];
	memset(l, 0, sizeof(*l));
	l->atoms = malloc((n_atoms ? n_atoms : 1) * sizeof(*atoms));
	l->rows = malloc((n ? n : 1) * sizeof(size_t));
	if (!l->atoms || !l->rows) {
		free(l->atoms);
		free(l->rows);
		return -ENOMEM;
	}
	memcpy(l->atoms, atoms, n_atoms * sizeof(*atoms));
	memcpy(l->rows, rows, n * sizeof(size_t));
	l->n_atoms = n_atoms;
	l->n_rows = n;
	l->model = *m;
	l->has_prob = has_prob;
	l->prob = prob;
	l->group = group;
	l->heuristic = c->heuristic;
	l->lo = -INFINITY;
	l->hi = INFINITY;
	d->n_leaves++;
	return 0;
}

static struct annotate_model constant_model(const double *y, size_t n, double centre)
{
	struct annotate_model m = {
	    .cls = ANNOTATE_CONSTANT, .n = n, .r_squared = NAN, .bic = NAN, .cv_r_squared = NAN};
	double ss = 0;

	m.intercept = isnan(centre) ? gsl_stats_mean(y, 1, n) : centre;
	for (size_t i = 0; i < n; i++)
		ss += (y[i] - m.intercept) * (y[i] - m.intercept);
	m.variance = isnan(centre) ? (n > 1 ? ss / (double)(n - 1) : 0.0) : ss / (double)n;
	/* as R's BIC(lm(y ~ 1)): -2 log L + 2 log n */
	if (ss > 0)
		m.bic = (double)n * (log(2 * M_PI) + 1 + log(ss / (double)n)) + 2 * log((double)n);
	return m;
}

/* (max - min) / |mean| below the tolerance, or all zero. */
static bool is_constant(const double *y, size_t n, double tol)
{
	double lo = y[0], hi = y[0], mean = gsl_stats_mean(y, 1, n);

	for (size_t i = 1; i < n; i++) {
		lo = fmin(lo, y[i]);
		hi = fmax(hi, y[i]);
	}
	return hi == lo || (mean != 0 && (hi - lo) / fabs(mean) < tol);
}

/* Regressors complete and varying over these rows. */
static size_t usable_regs(const struct ctx *c, const size_t *rows, size_t n, size_t *out)
{
	size_t k = 0;

	for (size_t j = 0; j < c->n_regs; j++) {
		const struct annotate_feature *f = &c->s->features[c->regs[j]];

		if (complete(f, rows, n) && varies(f, rows, n))
			out[k++] = c->regs[j];
	}
	return k;
}

static void describe_scope(struct ctx *c, const struct annotate_atom *atoms, size_t n_atoms,
			   char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n_atoms && len < size; i++) {
		const struct annotate_atom *a = &atoms[i];
		static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
		int w;

		if (a->n == 3)
			w = snprintf(buf + len, size - len, "%s%g %s %s %s %g", i ? " && " : "",
				     a->op[0].num, ops[a->cmp[0]], a->op[1].name, ops[a->cmp[1]],
				     a->op[2].num);
		else
			w = snprintf(buf + len, size - len, "%s%s %s %g", i ? " && " : "",
				     a->op[0].name, ops[a->cmp[0]], a->op[1].num);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	(void)c;
}

/* ------------------------------------------------------------ the tree (Algorithm 2) */

static int push_failed(struct ctx *c, const size_t *rows, size_t n,
		       const struct annotate_atom *atoms, size_t n_atoms)
{
	struct pending *nf = realloc(c->failed, (c->n_failed + 1) * sizeof(*nf)), *p;

	if (!nf)
		return -ENOMEM;
	c->failed = nf;
	p = &nf[c->n_failed];
	p->rows = malloc((n ? n : 1) * sizeof(size_t));
	p->atoms = malloc((n_atoms ? n_atoms : 1) * sizeof(*atoms));
	if (!p->rows || !p->atoms) {
		free(p->rows);
		free(p->atoms);
		return -ENOMEM;
	}
	memcpy(p->rows, rows, n * sizeof(size_t));
	memcpy(p->atoms, atoms, n_atoms * sizeof(*atoms));
	p->n = n;
	p->n_atoms = n_atoms;
	c->n_failed++;
	return 0;
}

static void free_failed(struct ctx *c)
{
	for (size_t i = 0; i < c->n_failed; i++) {
		free(c->failed[i].rows);
		free(c->failed[i].atoms);
	}
	free(c->failed);
	c->failed = NULL;
	c->n_failed = 0;
}

static struct annotate_atom cmp_atom(const char *name, enum annotate_cmp op, double v)
{
	struct annotate_atom a = {.n = 2, .cmp = {op}};

	a.op[0].name = (char *)name;
	a.op[1].is_num = true;
	a.op[1].num = v;
	return a;
}

/* The parts of a candidate over these rows; returns the number of parts. */
static size_t split(const struct ctx *c, const struct cand *cd, const size_t *rows, size_t n,
		    size_t *part, double *values)
{
	const double *v = c->s->features[cd->feature].values;
	size_t k = 0;

	if (cd->kind == CAND_PIVOT) {
		for (size_t i = 0; i < n; i++)
			part[i] = v[rows[i]] <= cd->pivot ? 0 : 1;
		values[0] = values[1] = cd->pivot;
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < k && values[j] != v[rows[i]]; j++)
			;
		if (j == k) {
			if (k == MAX_ENUM_VALUES)
				return 0;
			values[k++] = v[rows[i]];
		}
		part[i] = j;
	}
	/* parts in ascending order of value, so scopes print in order */
	{
		double sorted[MAX_ENUM_VALUES];
		size_t rank[MAX_ENUM_VALUES];

		memcpy(sorted, values, k * sizeof(double));
		qsort(sorted, k, sizeof(double), annotate_cmp_double);
		for (size_t j = 0; j < k; j++)
			for (size_t r = 0; r < k; r++)
				if (sorted[r] == values[j])
					rank[j] = r;
		for (size_t i = 0; i < n; i++)
			part[i] = rank[part[i]];
		memcpy(values, sorted, k * sizeof(double));
	}
	return k;
}

static int node(struct ctx *c, const size_t *rows, size_t n, struct annotate_atom *atoms,
		size_t n_atoms, size_t depth, uint64_t used);

static int try_split(struct ctx *c, const size_t *rows, size_t n, struct annotate_atom *atoms,
		     size_t n_atoms, size_t depth, uint64_t used, bool *done)
{
	size_t *part = malloc(n * sizeof(size_t)), *sub = malloc(n * sizeof(size_t));
	double values[MAX_ENUM_VALUES];
	size_t counts[MAX_ENUM_VALUES];
	int rc = 0;

	*done = false;
	if (!part || !sub) {
		free(part);
		free(sub);
		return -ENOMEM;
	}
	for (size_t ci = 0; ci < c->n_cands && ci < 64 && !*done && !rc; ci++) {
		const struct cand *cd = &c->cands[ci];
		size_t k, big = 0;

		if (used & (1ull << ci))
			continue;
		k = split(c, cd, rows, n, part, values);
		memset(counts, 0, sizeof(counts));
		for (size_t i = 0; i < n && k; i++)
			counts[part[i]]++;
		for (size_t j = 0; j < k; j++)
			big += counts[j] >= c->par->min_part_points;
		if (big < 2)
			continue;
		*done = true;
		logf_(c->d, "split on %s (%s) into %zu parts\n", c->d->names[cd->feature],
		      cd->kind == CAND_PIVOT ? "branch pivot" : "values", k);
		for (size_t j = 0; j < k && !rc; j++) {
			size_t m = 0;

			if (counts[j] < c->par->min_part_points)
				continue;
			for (size_t i = 0; i < n; i++)
				if (part[i] == j)
					sub[m++] = rows[i];
			if (cd->kind == CAND_PIVOT)
				atoms[n_atoms] =
				    cmp_atom(c->d->names[cd->feature],
					     j == 0 ? ANNOTATE_LE : ANNOTATE_GT, cd->pivot);
			else
				atoms[n_atoms] =
				    cmp_atom(c->d->names[cd->feature], ANNOTATE_EQ, values[j]);
			rc = node(c, sub, m, atoms, n_atoms + 1, depth + 1, used | (1ull << ci));
		}
	}
	free(part);
	free(sub);
	return rc;
}

/* The first applicable candidate, its parts in part[]; -1 if none. */
static long first_applicable(const struct ctx *c, const size_t *rows, size_t n, uint64_t used,
			     size_t *part, size_t *k_out)
{
	double values[MAX_ENUM_VALUES];
	size_t counts[MAX_ENUM_VALUES];

	for (size_t ci = 0; ci < c->n_cands && ci < 64; ci++) {
		size_t k, big = 0;

		if (used & (1ull << ci))
			continue;
		k = split(c, &c->cands[ci], rows, n, part, values);
		memset(counts, 0, sizeof(counts));
		for (size_t i = 0; i < n && k; i++)
			counts[part[i]]++;
		for (size_t j = 0; j < k; j++)
			big += counts[j] >= c->par->min_part_points;
		if (big >= 2) {
			*k_out = k;
			return (long)ci;
		}
	}
	return -1;
}

/*
 * Partitions from enums, dynamic types and branches come from the code
 * (spec §4.3.2): when one applies, a regression over the whole node is
 * kept only if it beats the parts' own models by BIC (spec §7.2 item 8's
 * "best by BIC"), with the BIC_DIFF margin. A piecewise model is otherwise
 * often approximated well enough by interactions with the branch feature
 * to pass MIN_DET (A.15, A.16), which hides the two paths.
 */
static bool split_is_better(const struct ctx *c, const size_t *rows, size_t n, uint64_t used,
			    const struct annotate_model *whole)
{
	size_t *part = malloc(n * sizeof(size_t)), *sub = malloc(n * sizeof(size_t));
	size_t *feats = malloc((c->n_regs ? c->n_regs : 1) * sizeof(size_t)), k = 0;
	double *ys = malloc(n * sizeof(double)), bic = 0;
	bool better = false, all = true;

	/*
	 * A regression that already explains every call of the node to
	 * rounding (an exact metric such as mem, R2 = 1) leaves a split nothing
	 * to gain: a part whose calls are all equal would otherwise win by its
	 * BIC of minus infinity alone (A.14's a = 0 calls, cost 0, split off by
	 * the loop's entry branch), for the same predictions.
	 */
	if (whole->r_squared >= 1 - 1e-12)
		goto out;
	if (!part || !sub || !feats || !ys || first_applicable(c, rows, n, used, part, &k) < 0)
		goto out;
	for (size_t j = 0; j < k && all; j++) {
		size_t m = 0, nf;
		struct annotate_model pm;

		for (size_t i = 0; i < n; i++)
			if (part[i] == j) {
				sub[m] = rows[i];
				ys[m++] = c->y[rows[i]];
			}
		if (m < c->par->min_part_points)
			continue;
		if (is_constant(ys, m, c->par->constant_tolerance)) {
			pm = constant_model(ys, m, NAN);
			bic += isnan(pm.bic) ? -INFINITY : pm.bic;
			continue;
		}
		nf = usable_regs(c, sub, m, feats);
		if (annotate_best_regression(c->s, ys, sub, m, feats, nf, c->par, &pm)) {
			all = false;
			break;
		}
		bic += pm.bic;
		annotate_model_free(&pm);
	}
	better = all && bic + c->par->bic_diff < whole->bic;
out:
	free(part);
	free(sub);
	free(feats);
	free(ys);
	return better;
}

static int node(struct ctx *c, const size_t *rows, size_t n, struct annotate_atom *atoms,
		size_t n_atoms, size_t depth, uint64_t used)
{
	double *y;
	size_t *feats, nf;
	struct annotate_model m;
	char scope[512];
	bool done;
	int rc;

	describe_scope(c, atoms, n_atoms, scope, sizeof(scope));
	if (n <= c->par->min_part_points) {
		logf_(c->d, "[%s] %zu calls: too few\n", scope, n);
		return push_failed(c, rows, n, atoms, n_atoms);
	}
	y = gather(c->y, rows, n);
	feats = malloc((c->n_regs ? c->n_regs : 1) * sizeof(size_t));
	if (!y || !feats) {
		free(y);
		free(feats);
		return -ENOMEM;
	}
	if (c->allow_constant && is_constant(y, n, c->par->constant_tolerance)) {
		m = constant_model(y, n, NAN);
		logf_(c->d, "[%s] %zu calls: constant %g\n", scope, n, m.intercept);
		rc = add_leaf(c, rows, n, atoms, n_atoms, &m, false, 0, 0);
		goto out;
	}
	nf = usable_regs(c, rows, n, feats);
	rc = annotate_best_regression(c->s, y, rows, n, feats, nf, c->par, &m);
	if (rc == 0 && depth < c->par->max_depth && split_is_better(c, rows, n, used, &m)) {
		logf_(c->d, "[%s] %zu calls: a %s regression (BIC %.1f) loses to a split\n", scope,
		      n, annotate_class_name(m.cls), m.bic);
		annotate_model_free(&m);
		rc = try_split(c, rows, n, atoms, n_atoms, depth, used, &done);
		goto out;
	}
	if (rc == 0) {
		logf_(c->d, "[%s] %zu calls: %s regression, %zu terms, R2 %.4f, BIC %.1f\n", scope,
		      n, annotate_class_name(m.cls), m.n_terms, m.r_squared, m.bic);
		rc = add_leaf(c, rows, n, atoms, n_atoms, &m, false, 0, 0);
		if (rc)
			annotate_model_free(&m);
		goto out;
	}
	if (rc != -ENOENT)
		goto out;
	logf_(c->d, "[%s] %zu calls: no good regression among %zu features\n", scope, n, nf);
	rc = 0;
	if (depth < c->par->max_depth) {
		rc = try_split(c, rows, n, atoms, n_atoms, depth, used, &done);
		if (rc || done)
			goto out;
	}
	rc = push_failed(c, rows, n, atoms, n_atoms);
out:
	free(y);
	free(feats);
	return rc;
}

static int tree(struct ctx *c, const size_t *rows, size_t n)
{
	struct annotate_atom *atoms = malloc((c->par->max_depth + 2) * sizeof(*atoms));
	int rc;

	if (!atoms)
		return -ENOMEM;
	rc = node(c, rows, n, atoms, 0, 0, 0);
	free(atoms);
	return rc;
}

/* ------------------------------------------------------------ heuristics (spec §4.3.4) */

struct by_value {
	double v, y;
	size_t row;
};

static int cmp_by_value(const void *a, const void *b)
{
	const struct by_value *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	if (x->y != y->y)
		return x->y < y->y ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static struct by_value *sorted_by_feature(const struct ctx *c, size_t f, const size_t *rows,
					  size_t n)
{
	struct by_value *bv = malloc(n * sizeof(*bv));

	if (!bv)
		return NULL;
	for (size_t i = 0; i < n; i++)
		bv[i] =
		    (struct by_value){c->s->features[f].values[rows[i]], c->y[rows[i]], rows[i]};
	qsort(bv, n, sizeof(*bv), cmp_by_value);
	return bv;
}

/* R: the call with the least metric for each value of the feature. */
static size_t filter_least(const struct ctx *c, size_t f, const size_t *rows, size_t n, size_t *out)
{
	struct by_value *bv = sorted_by_feature(c, f, rows, n);
	size_t k = 0;

	if (!bv)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || bv[i].v != bv[i - 1].v)
			out[k++] = bv[i].row;
	free(bv);
	return k;
}

#define MAIN_TREND_MIN_GROUP 10

/* M: for each value of the feature, the calls in the dominant cluster. */
static size_t filter_main_trend(const struct ctx *c, size_t f, const size_t *rows, size_t n,
				size_t *out)
{
	struct by_value *bv = sorted_by_feature(c, f, rows, n);
	double *y = malloc(n * sizeof(double));
	size_t k = 0;

	if (!bv || !y) {
		free(bv);
		free(y);
		return 0;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i, best = 0;
		struct annotate_cluster *cl = NULL;
		int nc;

		while (j < n && bv[j].v == bv[i].v)
			j++;
		for (size_t t = i; t < j; t++)
			y[t - i] = bv[t].y;
		/*
		 * A group too small to show its main trend is left out: the repo
		 * keeps it whole, but then one small group's minority calls can
		 * sink the regression (A.19 at 150 calls).
		 */
		nc = j - i >= MAIN_TREND_MIN_GROUP ? annotate_kde_clusters(y, j - i, &cl) : 0;
		for (int q = 1; q < nc; q++)
			if (cl[q].count > cl[best].count)
				best = (size_t)q;
		for (size_t t = i; t < j && nc > 0; t++)
			if (bv[t].y > cl[best].lo && bv[t].y <= cl[best].hi)
				out[k++] = bv[t].row;
		free(cl);
		i = j;
	}
	free(bv);
	free(y);
	return k;
}

static int validate_leaf(struct annotate_derivation *d, struct annotate_leaf *l);

static void drop_leaves(struct annotate_derivation *d)
{
	for (size_t i = 0; i < d->n_leaves; i++) {
		free(d->leaves[i].atoms);
		free(d->leaves[i].rows);
		annotate_model_free(&d->leaves[i].model);
	}
	d->n_leaves = 0;
}

/*
 * A heuristic's model that does not beat the constant in cross-validation
 * (derive step 6) is no model: the next feature or heuristic is tried, and
 * if none has one the calls go to clustering. Its constant would not do --
 * it is the mean of filtered calls, not the distribution of the calls.
 */
static int heuristic_validated(struct ctx *c, bool *ok)
{
	struct annotate_derivation *d = c->d;
	size_t rejected = d->n_rejected;
	int rc = 0;

	for (size_t i = 0; i < d->n_leaves && !rc; i++)
		rc = validate_leaf(d, &d->leaves[i]);
	*ok = d->n_rejected == rejected;
	if (!rc && !*ok) {
		logf_(d, "heuristic %c: its model is discarded\n", c->heuristic);
		d->n_rejected = rejected;
		drop_leaves(d);
	}
	return rc;
}

static int heuristics(struct ctx *c, const size_t *rows, size_t n)
{
	static const char marks[2] = {'R', 'M'};
	size_t *sub = malloc(n * sizeof(size_t));
	int rc = 0;

	if (!sub)
		return -ENOMEM;
	c->allow_constant = false;
	for (int h = 0; h < 2 && !rc && c->d->n_leaves == 0; h++) {
		for (size_t j = 0; j < c->n_regs && !rc && c->d->n_leaves == 0; j++) {
			size_t f = c->regs[j];
			size_t m;
			struct pending *saved = c->failed;
			size_t n_saved = c->n_failed;

			if (!complete(&c->s->features[f], rows, n))
				continue;
			m = h == 0 ? filter_least(c, f, rows, n, sub)
				   : filter_main_trend(c, f, rows, n, sub);
			if (m == 0 || m == n) {
				if (m == 0 && h == 0)
					rc = -ENOMEM;
				continue;
			}
			logf_(c->d, "heuristic %c on %s: %zu of %zu calls\n", marks[h],
			      c->d->names[f], m, n);
			c->heuristic = marks[h];
			c->failed = NULL;
			c->n_failed = 0;
			rc = tree(c, sub, m);
			if (!rc && c->d->n_leaves > 0) {
				bool ok;

				rc = heuristic_validated(c, &ok);
			}
			free_failed(c);
			c->failed = saved;
			c->n_failed = n_saved;
		}
	}
	c->heuristic = 0;
	c->allow_constant = true;
	free(sub);
	return rc;
}

/* ------------------------------------------------------------ Algorithm 3 */

/* A feature whose ranges over the clusters do not overlap (beyond the tolerance). */
static long defining_feature(const struct ctx *c, const size_t *rows, size_t n,
			     const size_t *cluster_of, size_t nc, double *lo, double *hi)
{
	for (size_t j = 0; j < c->n_regs; j++) {
		const double *v = c->s->features[c->regs[j]].values;
		bool ok = complete(&c->s->features[c->regs[j]], rows, n);

		for (size_t q = 0; q < nc && ok; q++) {
			lo[q] = INFINITY;
			hi[q] = -INFINITY;
		}
		for (size_t i = 0; i < n; i++) {
			lo[cluster_of[i]] = fmin(lo[cluster_of[i]], v[rows[i]]);
			hi[cluster_of[i]] = fmax(hi[cluster_of[i]], v[rows[i]]);
		}
		for (size_t a = 0; a < nc && ok; a++)
			for (size_t b = a + 1; b < nc && ok; b++) {
				double overlap = fmin(hi[a], hi[b]) - fmax(lo[a], lo[b]);
				double smaller = fmin(hi[a] - lo[a], hi[b] - lo[b]);

				if (!isfinite(lo[a]) || !isfinite(lo[b]))
					continue;
				if (overlap >= 0 && !(overlap < c->par->cluster_overlap * smaller))
					ok = false;
			}
		if (ok)
			return (long)c->regs[j];
	}
	return -1;
}

static int cluster_node(struct ctx *c, const struct pending *p)
{
	size_t n = p->n, *cluster_of = malloc(n * sizeof(size_t)),
	       *sub = malloc(n * sizeof(size_t));
	size_t *feats = malloc((c->n_regs ? c->n_regs : 1) * sizeof(size_t));
	double *y = gather(c->y, p->rows, n), *ys = malloc(n * sizeof(double));
	struct annotate_cluster *cl = NULL;
	struct annotate_model *models = NULL;
	bool *good = NULL, any = false;
	struct annotate_atom *atoms = malloc((p->n_atoms + 1) * sizeof(*atoms));
	int nc, rc = 0, group;

	if (!cluster_of || !sub || !feats || !y || !ys || !atoms) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(atoms, p->atoms, p->n_atoms * sizeof(*atoms));
	nc = n ? annotate_kde_clusters(y, n, &cl) : 0;
	if (nc <= 0) {
		rc = nc < 0 ? nc : 0;
		goto out;
	}
	logf_(c->d, "clustering %zu calls: %d clusters\n", n, nc);
	models = calloc((size_t)nc, sizeof(*models));
	good = calloc((size_t)nc, sizeof(bool));
	if (!models || !good) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t q = 0;

		while (q + 1 < (size_t)nc && y[i] > cl[q].hi)
			q++;
		cluster_of[i] = q;
	}
	for (int q = 0; q < nc && nc > 1; q++) {
		size_t m = 0, nf;

		for (size_t i = 0; i < n; i++)
			if (cluster_of[i] == (size_t)q) {
				sub[m] = p->rows[i];
				ys[m++] = y[i];
			}
		if (m <= c->par->min_part_points)
			continue;
		nf = usable_regs(c, sub, m, feats);
		rc = annotate_best_regression(c->s, ys, sub, m, feats, nf, c->par, &models[q]);
		if (rc == -ENOMEM)
			goto out;
		good[q] = rc == 0;
		any |= good[q];
		rc = 0;
	}
	if (any) {
		double lo[64], hi[64];
		long f =
		    nc <= 64 ? defining_feature(c, p->rows, n, cluster_of, (size_t)nc, lo, hi) : -1;

		for (int q = 0; f >= 0 && q < nc && !rc; q++) {
			size_t m = 0;
			struct annotate_atom a = {.n = 3, .cmp = {ANNOTATE_LE, ANNOTATE_LE}};

			if (!good[q])
				continue;
			for (size_t i = 0; i < n; i++)
				if (cluster_of[i] == (size_t)q)
					sub[m++] = p->rows[i];
			a.op[0] = (struct annotate_operand){.is_num = true, .num = lo[q]};
			a.op[1].name = c->d->names[f];
			a.op[2] = (struct annotate_operand){.is_num = true, .num = hi[q]};
			atoms[p->n_atoms] = a;
			rc = add_leaf(c, sub, m, atoms, p->n_atoms + 1, &models[q], false, 0, 0);
			if (!rc)
				models[q].terms = NULL; /* owned by the leaf */
		}
		if (f >= 0) {
			logf_(c->d, "clusters separated by %s: scoped regressions\n",
			      c->d->names[f]);
			goto out;
		}
	}
	group = nc > 1 ? ++c->next_group : 0;
	for (int q = 0; q < nc && !rc; q++) {
		size_t m = 0;
		struct annotate_model cm;

		for (size_t i = 0; i < n; i++)
			if (cluster_of[i] == (size_t)q) {
				sub[m] = p->rows[i];
				ys[m++] = y[i];
			}
		cm = good[q] ? models[q] : constant_model(ys, m, cl[q].centroid);
		rc = add_leaf(c, sub, m, p->atoms, p->n_atoms, &cm, nc > 1, (double)m / (double)n,
			      group);
		if (!rc) {
			c->d->leaves[c->d->n_leaves - 1].lo = cl[q].lo;
			c->d->leaves[c->d->n_leaves - 1].hi = cl[q].hi;
			if (good[q])
				models[q].terms = NULL;
		}
	}
out:
	for (int q = 0; models && q < nc; q++)
		annotate_model_free(&models[q]);
	free(models);
	free(good);
	free(cl);
	free(cluster_of);
	free(sub);
	free(feats);
	free(y);
	free(ys);
	free(atoms);
	return rc;
}

/* ------------------------------------------------------------ cross-validation */

/*
 * k-fold refits of one leaf: adds squared errors and the values to the sums,
 * and to *sse_constant (when not NULL) the squared errors of the constant
 * model on the same folds (each held-out call predicted by the mean of the
 * training folds).
 */
static int cv_leaf(const struct annotate_derivation *d, const struct annotate_leaf *l, size_t folds,
		   double *sse, double *sy, double *syy, size_t *count, double *sse_constant)
{
	const double *col = d->symbol->metrics[d->metric];
	size_t n = l->n_rows, *train = malloc((n ? n : 1) * sizeof(size_t));
	double *ytr = malloc((n ? n : 1) * sizeof(double));

	if (!train || !ytr) {
		free(train);
		free(ytr);
		return -ENOMEM;
	}
	for (size_t k = 0; k < folds; k++) {
		size_t m = 0;
		struct annotate_model fit;

		for (size_t i = 0; i < n; i++)
			if (i % folds != k) {
				train[m] = l->rows[i];
				ytr[m++] = col[l->rows[i]];
			}
		if (l->model.n_terms == 0) {
			fit = constant_model(ytr, m ? m : 1, NAN);
		} else if (annotate_refit(d->symbol, ytr, train, m, &l->model, &fit)) {
			free(train);
			free(ytr);
			return -ENOENT;
		}
		for (size_t i = k; i < n; i += folds) {
			double y = col[l->rows[i]],
			       e = y - annotate_model_predict(&fit, d->symbol, l->rows[i]);

			if (sse_constant) {
				double mean = m ? gsl_stats_mean(ytr, 1, m) : 0;

				*sse_constant += (y - mean) * (y - mean);
			}
			*sse += e * e;
			*sy += y;
			*syy += y * y;
			(*count)++;
		}
		annotate_model_free(&fit);
	}
	free(train);
	free(ytr);
	return 0;
}

double annotate_cross_validate(const struct annotate_derivation *d, size_t folds)
{
	double sse = 0, sy = 0, syy = 0, tss;
	size_t count = 0;

	if (folds < 2)
		return NAN;
	for (size_t i = 0; i < d->n_leaves; i++) {
		if (d->leaves[i].has_prob || d->leaves[i].n_rows < 2 * folds)
			return NAN; /* a mixture has no cost function to validate */
		if (cv_leaf(d, &d->leaves[i], folds, &sse, &sy, &syy, &count, NULL))
			return NAN;
	}
	if (count < 2)
		return NAN;
	tss = syy - sy * sy / (double)count;
	return tss > 0 ? 1.0 - sse / tss : NAN;
}

/*
 * The leaf's cross-validated R^2 (10 folds, leaves of at least 20 calls), and
 * the rule of doc/annotate.md (derive step 6): a regression whose held-out
 * squared error is no smaller than the constant model's on the same folds
 * does not explain the metric -- its in-sample R^2 came from a few calls of
 * high leverage (an outlier alone at some feature value) -- so the leaf
 * falls back to the constant of its calls, Norm(mean, sample variance). A
 * regression that cannot be refitted without the held-out calls (a term
 * constant over the other nine folds) rests on those few calls alone and
 * falls back too.
 */
#define CV_FOLDS 10

static int validate_leaf(struct annotate_derivation *d, struct annotate_leaf *l)
{
	double sse = 0, sy = 0, syy = 0, sse_constant = 0, tss, cv_r2 = NAN;
	size_t count = 0;
	struct annotate_model constant;
	double *y;
	int rc;

	if (l->n_rows < 2 * CV_FOLDS)
		return 0;
	rc = cv_leaf(d, l, CV_FOLDS, &sse, &sy, &syy, &count, &sse_constant);
	if (rc == -ENOMEM)
		return rc;
	tss = !rc && count > 1 ? syy - sy * sy / (double)count : NAN;
	if (tss > 0)
		cv_r2 = 1.0 - sse / tss;
	l->model.cv_r_squared = cv_r2;
	if (l->model.n_terms == 0 || (!rc && sse < sse_constant))
		return 0;
	if (!(y = gather(d->symbol->metrics[d->metric], l->rows, l->n_rows)))
		return -ENOMEM;
	constant = constant_model(y, l->n_rows, NAN);
	free(y);
	logf_(d,
	      "%zu calls: %s regression, %zu terms, cross-validated R2 %.4g, no better than "
	      "the constant's %.4g: the constant instead\n",
	      l->n_rows, annotate_class_name(l->model.cls), l->model.n_terms, cv_r2,
	      tss > 0 ? 1.0 - sse_constant / tss : NAN);
	l->rejected = true;
	l->rejected_cls = l->model.cls;
	l->rejected_cv_r_squared = cv_r2;
	annotate_model_free(&l->model);
	l->model = constant;
	l->model.cv_r_squared = tss > 0 ? 1.0 - sse_constant / tss : NAN;
	d->n_rejected++;
	return 0;
}

/* ------------------------------------------------------------ entry point */

void annotate_derivation_free(struct annotate_derivation *d)
{
	for (size_t i = 0; i < d->n_leaves; i++) {
		free(d->leaves[i].atoms);
		free(d->leaves[i].rows);
		annotate_model_free(&d->leaves[i].model);
	}
	free(d->leaves);
	if (d->names && d->symbol)
		for (size_t f = 0; f < d->symbol->n_features; f++)
			free(d->names[f]);
	free(d->names);
	free(d->log);
	memset(d, 0, sizeof(*d));
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int annotate_derive(const struct annotate_symbol *s, enum annotate_metric metric,
		    const struct annotate_params *params, struct annotate_derivation *out)
{
	struct ctx c = {.s = s, .par = params, .d = out, .allow_constant = true};
	double t0 = now_seconds();
	size_t *rows, n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->symbol = s;
	out->metric = metric;
	if ((unsigned)metric >= ANNOTATE_N_METRICS || params->max_depth > 60)
		return -EINVAL;
	c.y = s->metrics[metric];
	rows = malloc((s->n_calls ? s->n_calls : 1) * sizeof(size_t));
	if (!rows || (rc = make_names(out, s))) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_calls; i++)
		if (isfinite(c.y[i]))
			rows[n++] = i;
	out->n_observations = n;
	if (n == 0) {
		free(rows);
		return -ENODATA;
	}
	rc = preprocess(&c, rows, n);
	if (!rc)
		rc = tree(&c, rows, n);
	if (!rc && out->n_leaves == 0 && params->heuristics &&
	    (params->heuristics_any_metric || annotate_metric_is_time_like(metric)))
		rc = heuristics(&c, rows, n);
	if (!rc && out->n_leaves > 0 && out->leaves[0].heuristic)
		free_failed(&c); /* the heuristic's model stands for the whole */
	/* nodes too small for a regression are too small for clusters too */
	for (size_t i = 0; !rc && params->clustering && i < c.n_failed; i++)
		if (c.failed[i].n > params->min_part_points)
			rc = cluster_node(&c, &c.failed[i]);
	for (size_t i = 0; !rc && i < out->n_leaves; i++)
		rc = validate_leaf(out, &out->leaves[i]);
	free_failed(&c);
	free(c.regs);
	free(c.cands);
	free(rows);
	out->seconds = now_seconds() - t0;
	return rc;
}

/* ------------------------------------------------------------ output */

static struct annotate_expr *num_expr(double v)
{
	struct annotate_expr *e = calloc(1, sizeof(*e));

	if (e) {
		e->kind = ANNOTATE_E_NUM;
		e->num = v;
	}
	return e;
}

static struct annotate_expr *op_expr(enum annotate_expr_kind k, struct annotate_expr *a,
				     struct annotate_expr *b)
{
	struct annotate_expr *e;

	if (!a || (!b && k != ANNOTATE_E_LOG && k != ANNOTATE_E_POW) ||
	    !(e = calloc(1, sizeof(*e)))) {
		annotate_expr_free(a);
		annotate_expr_free(b);
		return NULL;
	}
	e->kind = k;
	e->a = a;
	e->b = b;
	return e;
}

static struct annotate_expr *feature_expr(const char *name)
{
	struct annotate_expr *e = calloc(1, sizeof(*e));

	if (e && !(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	if (e)
		e->kind = ANNOTATE_E_FEATURE;
	return e;
}

static struct annotate_expr *factor_expr(const char *name, enum annotate_transform t)
{
	struct annotate_expr *e;

	switch (t) {
	case ANNOTATE_X2:
		e = op_expr(ANNOTATE_E_POW, feature_expr(name), NULL);
		if (e)
			e->num = 2;
		return e;
	case ANNOTATE_XLOGX:
		return op_expr(ANNOTATE_E_MUL, feature_expr(name),
			       op_expr(ANNOTATE_E_LOG, feature_expr(name), NULL));
	default:
		return feature_expr(name);
	}
}

/* intercept + c1*t1 - c2*t2 ..., negative coefficients as subtractions. */
static struct annotate_expr *model_expr(const struct annotate_derivation *d,
					const struct annotate_model *m)
{
	struct annotate_expr *e = num_expr(m->intercept);

	for (size_t j = 0; j < m->n_terms && e; j++) {
		const struct annotate_term *t = &m->terms[j];
		struct annotate_expr *te = num_expr(fabs(t->coef));

		for (int a = 0; a < t->n_factors; a++) {
			const char *name = d->names[t->feature[a]];

			if (t->transform[a] == ANNOTATE_XLOGX) /* c*x*log(x), no parentheses */
				te = op_expr(ANNOTATE_E_MUL,
					     op_expr(ANNOTATE_E_MUL, te, feature_expr(name)),
					     op_expr(ANNOTATE_E_LOG, feature_expr(name), NULL));
			else
				te =
				    op_expr(ANNOTATE_E_MUL, te, factor_expr(name, t->transform[a]));
		}
		e = op_expr(t->coef < 0 ? ANNOTATE_E_SUB : ANNOTATE_E_ADD, e, te);
	}
	return e;
}

static int leaf_scope(const struct annotate_leaf *l, struct annotate_scope **out)
{
	struct annotate_scope *s;

	*out = NULL;
	if (l->n_atoms == 0)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->atoms = calloc(l->n_atoms, sizeof(*s->atoms)))) {
		free(s);
		return -ENOMEM;
	}
	s->n_atoms = l->n_atoms;
	for (size_t i = 0; i < l->n_atoms; i++) {
		s->atoms[i] = l->atoms[i];
		for (int j = 0; j < l->atoms[i].n; j++)
			if (l->atoms[i].op[j].name &&
			    !(s->atoms[i].op[j].name = strdup(l->atoms[i].op[j].name)))
				return -ENOMEM; /* freed with the annotation */
	}
	*out = s;
	return 0;
}

static int leaf_item(const struct annotate_derivation *d, const struct annotate_leaf *l,
		     struct annotate_item *it, bool with_scope)
{
	memset(it, 0, sizeof(*it));
	it->has_prob = l->has_prob;
	it->prob = l->prob;
	it->heuristic = l->heuristic;
	it->mean = model_expr(d, &l->model);
	it->variance = num_expr(l->model.variance);
	if (!it->mean || !it->variance)
		return -ENOMEM;
	return with_scope ? leaf_scope(l, &it->scope) : 0;
}

static const char *decl_type(enum annotate_feature_kind k)
{
	return k == ANNOTATE_BOOL ? "bool" : k == ANNOTATE_FLOAT ? "float" : "int";
}

static bool feature_used(const struct annotate_derivation *d, size_t f)
{
	for (size_t i = 0; i < d->n_leaves; i++) {
		const struct annotate_leaf *l = &d->leaves[i];

		for (size_t j = 0; j < l->model.n_terms; j++)
			for (int a = 0; a < l->model.terms[j].n_factors; a++)
				if (l->model.terms[j].feature[a] == f)
					return true;
		for (size_t j = 0; j < l->n_atoms; j++)
			for (int a = 0; a < l->atoms[j].n; a++)
				if (l->atoms[j].op[a].name == d->names[f])
					return true;
	}
	return false;
}

static int add_decls(const struct annotate_derivation *d, struct annotate_annotation *a)
{
	const struct annotate_symbol *s = d->symbol;

	a->decls = calloc(s->n_features ? s->n_features : 1, sizeof(*a->decls));
	if (!a->decls)
		return -ENOMEM;
	for (size_t f = 0; f < s->n_features; f++) {
		struct annotate_decl *dc;

		if (!feature_used(d, f))
			continue;
		dc = &a->decls[a->n_decls++];
		dc->type = strdup(decl_type(s->features[f].kind));
		dc->name = strdup(d->names[f]);
		dc->definition = strdup(s->features[f].name);
		if (!dc->type || !dc->name || !dc->definition)
			return -ENOMEM;
	}
	return 0;
}

int annotate_derivation_annotation(const struct annotate_derivation *d,
				   struct annotate_annotation *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->signature = strdup(d->symbol->name);
	a->metric = d->metric;
	a->items = calloc(d->n_leaves ? d->n_leaves : 1, sizeof(*a->items));
	if (!a->signature || !a->items || (rc = add_decls(d, a))) {
		annotate_annotation_free(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n_leaves; i++) {
		const struct annotate_leaf *l = &d->leaves[i];
		struct annotate_item *it = &a->items[a->n_items++];

		if (l->group && l->n_atoms) {
			/* a mixture under a scope: one scoped item over its components */
			size_t j = i;

			if ((rc = leaf_scope(l, &it->scope)))
				break;
			while (j < d->n_leaves && d->leaves[j].group == l->group)
				j++;
			it->children = calloc(j - i, sizeof(*it->children));
			if (!it->children) {
				rc = -ENOMEM;
				break;
			}
			for (size_t k = i; k < j && !rc; k++)
				rc = leaf_item(d, &d->leaves[k], &it->children[it->n_children++],
					       false);
			i = j - 1;
		} else {
			rc = leaf_item(d, l, it, true);
		}
		if (rc)
			break;
	}
	if (rc)
		annotate_annotation_free(a);
	return rc;
}

static void json_model(struct report_json *j, const struct annotate_derivation *d,
		       const struct annotate_model *m)
{
	report_json_kv_string(j, "class", annotate_class_name(m->cls));
	report_json_kv_number(j, "intercept", m->intercept);
	report_json_key(j, "terms");
	report_json_array_begin(j);
	for (size_t t = 0; t < m->n_terms; t++) {
		static const char *const tr[] = {"x", "x^2", "x*log2(x)"};

		report_json_object_begin(j);
		report_json_key(j, "factors");
		report_json_array_begin(j);
		for (int a = 0; a < m->terms[t].n_factors; a++) {
			report_json_object_begin(j);
			report_json_kv_string(j, "feature", d->names[m->terms[t].feature[a]]);
			report_json_kv_string(j, "transform", tr[m->terms[t].transform[a]]);
			report_json_object_end(j);
		}
		report_json_array_end(j);
		report_json_kv_number(j, "coefficient", m->terms[t].coef);
		report_json_kv_number(j, "p", m->terms[t].pvalue);
		report_json_object_end(j);
	}
	report_json_array_end(j);
	report_json_kv_number(j, "variance", m->variance);
	report_json_kv_number(j, "r_squared", m->r_squared);
	report_json_kv_number(j, "cv_r_squared", m->cv_r_squared);
	report_json_kv_number(j, "bic", m->bic);
}

void annotate_derivation_json(FILE *f, const struct annotate_derivation *d)
{
	struct report_json j;
	struct annotate_annotation a;
	char *text = NULL;

	if (annotate_derivation_annotation(d, &a) == 0) {
		text = annotate_to_string(&a, 6);
		annotate_annotation_free(&a);
	}
	report_json_init(&j, f);
	report_json_object_begin(&j);
	report_json_kv_string(&j, "symbol", d->symbol->name);
	report_json_kv_string(&j, "metric", annotate_metric_name(d->metric));
	report_json_kv_integer(&j, "observations", (long long)d->n_observations);
	report_json_kv_integer(&j, "candidate_features", (long long)d->n_candidates);
	report_json_kv_integer(&j, "regressors", (long long)d->n_regressors);
	report_json_kv_integer(&j, "partition_candidates", (long long)d->n_partitions);
	report_json_kv_number(&j, "seconds", d->seconds);
	if (d->cv_folds) {
		report_json_kv_integer(&j, "cv_folds", (long long)d->cv_folds);
		report_json_kv_number(&j, "cv_r_squared", d->cv_r_squared);
	}
	report_json_kv_string(&j, "annotation", text ? text : "");
	report_json_key(&j, "leaves");
	report_json_array_begin(&j);
	for (size_t i = 0; i < d->n_leaves; i++) {
		const struct annotate_leaf *l = &d->leaves[i];
		char scope[512];

		describe_scope(NULL, l->atoms, l->n_atoms, scope, sizeof(scope));
		report_json_object_begin(&j);
		report_json_kv_string(&j, "scope", scope);
		report_json_key(&j, "probability");
		if (l->has_prob)
			report_json_number(&j, l->prob);
		else
			report_json_null(&j);
		report_json_kv_string(&j, "heuristic",
				      l->heuristic == 'R'   ? "R"
				      : l->heuristic == 'M' ? "M"
							    : "");
		report_json_kv_integer(&j, "calls", (long long)l->n_rows);
		json_model(&j, d, &l->model);
		report_json_key(&j, "rejected");
		if (l->rejected) {
			report_json_object_begin(&j);
			report_json_kv_string(&j, "class", annotate_class_name(l->rejected_cls));
			report_json_kv_number(&j, "cv_r_squared", l->rejected_cv_r_squared);
			report_json_object_end(&j);
		} else {
			report_json_null(&j);
		}
		report_json_object_end(&j);
	}
	report_json_array_end(&j);
	report_json_object_end(&j);
	fputc('\n', f);
	free(text);
}
