// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Algorithms D, E, F and G of spec autocpa.md §2.7: a field order by
 * adjusted misses (D, with the spec's deterministic tie rule and the
 * "enhanced" ordering-aware variant), the thesis's saved-misses estimate
 * (E, computed by the spec's precise formula, not the thesis-era packing
 * code), the modelled delta the spec recommends beside it, thread groups
 * on separate lines (F, the spec's interpretation), and the choice of the
 * best suggestion per struct and the ranking across structs (G).
 *
 * ABI constraints (spec §5.6): a flexible array member stays last, and a
 * pinned field keeps its original position; every algorithm only orders
 * the remaining fields around them.
 */
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

void layout_params_default(struct layout_params *params)
{
	params->tolerance = 0.0;
	/* spec §2.7F: "for example 90%" */
	params->dominant_share = 0.9;
	params->threshold = 0;
	params->pack_holes = false;
}

static bool field_is_fixed(const struct layout_field *f)
{
	return f->pinned || f->flexible;
}

/*
 * Merge the free fields (in their chosen sequence) with the fixed ones:
 * a fixed field keeps its original index as its position.
 */
static void merge_fixed(const struct layout_struct *s, const uint32_t *free_seq, uint32_t *order)
{
	size_t next = 0;

	for (size_t pos = 0; pos < s->n_fields; pos++)
		order[pos] = field_is_fixed(&s->fields[pos]) ? (uint32_t)pos : free_seq[next++];
}

static double mean_order(const struct layout_field *f)
{
	return f->adj ? f->order_sum / (double)f->adj : 0.0;
}

/* spec §2.7D [I]: key (-adj, original ordinal); zero counts keep their order. */
static int compare_by_misses(const void *a, const void *b, void *ctx)
{
	const struct layout_struct *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct layout_field *fx = &s->fields[x], *fy = &s->fields[y];

	if (fx->adj != fy->adj)
		return fx->adj > fy->adj ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The enhanced variant inside a group of close counts: access order, then ordinal. */
static int compare_by_access_order(const void *a, const void *b, void *ctx)
{
	const struct layout_struct *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double ox = mean_order(&s->fields[x]), oy = mean_order(&s->fields[y]);

	if (ox != oy)
		return ox < oy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The thesis leaves "close frequency" undefined; here a group starts at
 * its hottest field and takes every following nonzero count within
 * `tolerance` of it (spec §2.7D [I] "optional tolerance").
 */
static void order_close_counts(const struct layout_struct *s, uint32_t *seq, size_t n,
			       double tolerance)
{
	size_t start = 0;

	while (start < n && s->fields[seq[start]].adj) {
		double top = (double)s->fields[seq[start]].adj;
		size_t end = start + 1;

		while (end < n && s->fields[seq[end]].adj &&
		       (double)s->fields[seq[end]].adj >= top * (1.0 - tolerance))
			end++;
		qsort_r(seq + start, end - start, sizeof(*seq), compare_by_access_order, (void *)s);
		start = end;
	}
}

/* Sort a list of free field indexes as algorithm D does. */
static void sort_free_fields(const struct layout_struct *s, const struct layout_params *params,
			     uint32_t *seq, size_t n)
{
	if (!n)
		return;
	qsort_r(seq, n, sizeof(*seq), compare_by_misses, (void *)s);
	if (params->tolerance > 0)
		order_close_counts(s, seq, n, params->tolerance);
}

/* Move order[j] to position k (k < j), shifting the fields between. */
static void move_to(uint32_t *order, size_t k, size_t j)
{
	uint32_t f = order[j];

	memmove(order + k + 1, order + k, (j - k) * sizeof(*order));
	order[k] = f;
}

static void move_back(uint32_t *order, size_t k, size_t j)
{
	uint32_t f = order[k];

	memmove(order + k, order + k + 1, (j - k) * sizeof(*order));
	order[j] = f;
}

/* Whether a field without samples at position j fits the hole before position k. */
static bool fits_hole(const struct layout_struct *s, const uint32_t *order, const uint32_t *offsets,
		      size_t k, size_t j)
{
	const struct layout_field *prev = &s->fields[order[k - 1]], *f = &s->fields[order[j]];
	uint32_t start = offsets[k - 1] + prev->size;
	uint32_t at = (start + f->align - 1) / f->align * f->align;

	if (field_is_fixed(f) || f->adj || at + f->size > offsets[k])
		return false;
	/* a pinned field between would lose its position */
	for (size_t i = k; i < j; i++)
		if (field_is_fixed(&s->fields[order[i]]))
			return false;
	return true;
}

/* One accepted move, or false when no hole can take a cold field. */
static bool pack_one(const struct layout_struct *s, uint32_t *order, uint32_t *offsets)
{
	size_t n = s->n_fields;
	uint32_t size = layout_place(s, order, NULL, offsets);
	uint64_t modelled = layout_modelled_misses(s, order, NULL);

	for (size_t k = 1; k < n; k++) {
		if (offsets[k] == offsets[k - 1] + s->fields[order[k - 1]].size)
			continue;
		for (size_t j = k + 1; j < n; j++) {
			if (!fits_hole(s, order, offsets, k, j))
				continue;
			move_to(order, k, j);
			if (layout_place(s, order, NULL, offsets) <= size &&
			    layout_modelled_misses(s, order, NULL) <= modelled)
				return true;
			move_back(order, k, j);
			layout_place(s, order, NULL, offsets);
		}
	}
	return false;
}

static void pack_cold_into_holes(const struct layout_struct *s, uint32_t *order)
{
	uint32_t *offsets = malloc(s->n_fields * sizeof(*offsets));

	if (!offsets)
		return;
	/*
	 * A move only takes a cold field earlier, but it shifts the fields it
	 * passes; n² moves bound the loop whatever the holes do meanwhile.
	 */
	for (size_t round = 0; round < s->n_fields * s->n_fields; round++)
		if (!pack_one(s, order, offsets))
			break;
	free(offsets);
}

void layout_order_by_misses(const struct layout_struct *s, const struct layout_params *params,
			    uint32_t *order)
{
	size_t n = 0;

	uint32_t *seq = malloc(s->n_fields * sizeof(*seq));

	if (!seq) {
		for (size_t i = 0; i < s->n_fields; i++)
			order[i] = (uint32_t)i;
		return;
	}
	for (size_t i = 0; i < s->n_fields; i++)
		if (!field_is_fixed(&s->fields[i]))
			seq[n++] = (uint32_t)i;
	sort_free_fields(s, params, seq, n);
	merge_fixed(s, seq, order);
	free(seq);
	if (params->pack_holes)
		pack_cold_into_holes(s, order);
}

/*
 * Walk a laid-out order line by line (a field belongs to the line of its
 * first byte, spec §2.7E step 3) and call `visit` per field with whether
 * it is the first of its line.
 */
struct line_walk {
	uint32_t *offsets;
	size_t n;
};

static bool walk_begin(struct line_walk *w, const struct layout_struct *s, const uint32_t *order,
		       const bool *line_start)
{
	w->n = s->n_fields;
	w->offsets = malloc(s->n_fields * sizeof(*w->offsets));
	if (!w->offsets)
		return false;
	layout_place(s, order, line_start, w->offsets);
	return true;
}

uint64_t layout_estimate_saved(const struct layout_struct *s, const uint32_t *order,
			       const bool *line_start)
{
	struct line_walk w;
	uint64_t total = 0, firsts = 0;
	long last_line = -1;

	if (!walk_begin(&w, s, order, line_start))
		return 0;
	/*
	 * saved = Σ raw − Σ_lines raw(first field in line): the thesis's
	 * "all fields except the first of each line", on raw counts, over the
	 * suggested layout placed with SysV alignment (spec §2.7E [I]).
	 */
	for (size_t k = 0; k < w.n; k++) {
		long line = (long)(w.offsets[k] / LAYOUT_LINE_SIZE);
		uint64_t raw = s->fields[order[k]].raw;

		total += raw;
		if (line != last_line)
			firsts += raw;
		last_line = line;
	}
	free(w.offsets);
	return total - firsts;
}

uint64_t layout_modelled_misses(const struct layout_struct *s, const uint32_t *order,
				const bool *line_start)
{
	struct line_walk w;
	uint64_t sum = 0, line_max = 0;
	long last_line = -1;

	if (!walk_begin(&w, s, order, line_start))
		return 0;
	for (size_t k = 0; k < w.n; k++) {
		long line = (long)(w.offsets[k] / LAYOUT_LINE_SIZE);
		uint64_t adj = s->fields[order[k]].adj;

		if (line != last_line) {
			sum += line_max;
			line_max = 0;
		}
		if (adj > line_max)
			line_max = adj;
		last_line = line;
	}
	free(w.offsets);
	return sum + line_max;
}

/* Per-line thread weights, summed over the fields in [from, to) of order. */
static uint64_t line_sharing(const struct layout_struct *s, const uint32_t *order, size_t from,
			     size_t to)
{
	uint32_t tids[LAYOUT_MAX_THREADS * 4];
	uint64_t weights[LAYOUT_MAX_THREADS * 4];
	size_t n = 0;
	uint64_t sum = 0;

	for (size_t k = from; k < to; k++) {
		const struct layout_field *f = &s->fields[order[k]];

		for (size_t t = 0; t < f->n_threads; t++) {
			size_t i;

			for (i = 0; i < n; i++)
				if (tids[i] == f->threads[t].tid)
					break;
			if (i == n) {
				if (n == sizeof(tids) / sizeof(tids[0]))
					i = n - 1;
				else {
					tids[n] = f->threads[t].tid;
					weights[n++] = 0;
				}
			}
			weights[i] += f->threads[t].weight;
		}
	}
	/* spec §2.7F step 5: Σ over thread pairs both touching the line of min(w_t, w_u) */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			sum += weights[i] < weights[j] ? weights[i] : weights[j];
	return sum;
}

uint64_t layout_sharing_weight(const struct layout_struct *s, const uint32_t *order,
			       const bool *line_start)
{
	struct line_walk w;
	uint64_t sum = 0;
	size_t from = 0;

	if (!walk_begin(&w, s, order, line_start))
		return 0;
	for (size_t k = 1; k <= w.n; k++) {
		if (k == w.n ||
		    w.offsets[k] / LAYOUT_LINE_SIZE != w.offsets[from] / LAYOUT_LINE_SIZE) {
			sum += line_sharing(s, order, from, k);
			from = k;
		}
	}
	free(w.offsets);
	return sum;
}

/* ---------------------------------------------------------------- F */

/* A field's thread signature: the dominant thread, or its whole sorted set. */
struct signature {
	size_t n;
	uint32_t tids[LAYOUT_MAX_THREADS];
};

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void field_signature(const struct layout_field *f, double dominant_share,
			    struct signature *sig)
{
	uint64_t total = 0, best = 0;
	uint32_t best_tid = 0;

	sig->n = 0;
	for (size_t t = 0; t < f->n_threads; t++) {
		total += f->threads[t].weight;
		if (f->threads[t].weight > best) {
			best = f->threads[t].weight;
			best_tid = f->threads[t].tid;
		}
	}
	if (!total)
		return; /* no thread information: the shared group */
	if ((double)best >= dominant_share * (double)total) {
		sig->tids[sig->n++] = best_tid;
		return;
	}
	for (size_t t = 0; t < f->n_threads; t++)
		if (f->threads[t].weight)
			sig->tids[sig->n++] = f->threads[t].tid;
	qsort(sig->tids, sig->n, sizeof(sig->tids[0]), compare_u32);
}

struct thread_group {
	struct signature sig;
	uint64_t weight;
	uint32_t first_field;
	size_t n;
	uint32_t *fields;
};

static int compare_groups(const void *a, const void *b)
{
	const struct thread_group *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->first_field < y->first_field ? -1 : x->first_field > y->first_field;
}

static size_t count_threads(const struct layout_struct *s)
{
	uint32_t seen[LAYOUT_MAX_THREADS];
	size_t n = 0;

	for (size_t i = 0; i < s->n_fields; i++)
		for (size_t t = 0; t < s->fields[i].n_threads; t++) {
			size_t k;
			for (k = 0; k < n; k++)
				if (seen[k] == s->fields[i].threads[t].tid)
					break;
			if (k == n && n < LAYOUT_MAX_THREADS)
				seen[n++] = s->fields[i].threads[t].tid;
		}
	return n;
}

/* Group the free fields by signature; returns the number of groups or -1. */
static long build_groups(const struct layout_struct *s, const struct layout_params *params,
			 struct thread_group *groups, uint32_t *storage)
{
	size_t n_groups = 0, used = 0;

	for (size_t i = 0; i < s->n_fields; i++) {
		struct signature sig;
		size_t g;

		if (field_is_fixed(&s->fields[i]))
			continue;
		field_signature(&s->fields[i], params->dominant_share, &sig);
		for (g = 0; g < n_groups; g++)
			if (groups[g].sig.n == sig.n &&
			    !memcmp(groups[g].sig.tids, sig.tids, sig.n * sizeof(sig.tids[0])))
				break;
		if (g == n_groups) {
			groups[g] = (struct thread_group){.sig = sig, .first_field = (uint32_t)i};
			n_groups++;
		}
		groups[g].weight += s->fields[i].adj;
		groups[g].n++;
	}
	/* Give each group a slice of storage, then fill the slices. */
	for (size_t g = 0; g < n_groups; g++) {
		groups[g].fields = storage + used;
		used += groups[g].n;
		groups[g].n = 0;
	}
	for (size_t i = 0; i < s->n_fields; i++) {
		struct signature sig;

		if (field_is_fixed(&s->fields[i]))
			continue;
		field_signature(&s->fields[i], params->dominant_share, &sig);
		for (size_t g = 0; g < n_groups; g++)
			if (groups[g].sig.n == sig.n &&
			    !memcmp(groups[g].sig.tids, sig.tids, sig.n * sizeof(sig.tids[0]))) {
				groups[g].fields[groups[g].n++] = (uint32_t)i;
				break;
			}
	}
	return (long)n_groups;
}

bool layout_order_by_threads(const struct layout_struct *s, const struct layout_params *params,
			     uint32_t *order, bool *line_start)
{
	struct thread_group *groups;
	uint32_t *storage, *seq;
	size_t next = 0;
	long n_groups;

	if (count_threads(s) < 2)
		return false;
	groups = calloc(s->n_fields, sizeof(*groups));
	storage = malloc(s->n_fields * sizeof(*storage));
	seq = malloc(s->n_fields * sizeof(*seq));
	if (!groups || !storage || !seq) {
		free(groups);
		free(storage);
		free(seq);
		return false;
	}
	n_groups = build_groups(s, params, groups, storage);
	qsort(groups, (size_t)n_groups, sizeof(*groups), compare_groups);
	memset(line_start, 0, s->n_fields * sizeof(*line_start));
	/* spec §2.7F steps 3–4: heaviest group first, D's order inside, each on fresh lines */
	for (long g = 0; g < n_groups; g++) {
		sort_free_fields(s, params, groups[g].fields, groups[g].n);
		if (groups[g].n)
			line_start[groups[g].fields[0]] = n_groups > 1;
		for (size_t k = 0; k < groups[g].n; k++)
			seq[next++] = groups[g].fields[k];
	}
	merge_fixed(s, seq, order);
	free(groups);
	free(storage);
	free(seq);
	return n_groups > 1;
}

/* ---------------------------------------------------------------- G */

static bool is_identity(const uint32_t *order, const bool *line_start, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (order[i] != i || (line_start && line_start[i]))
			return false;
	return true;
}

void layout_suggestion_clear(struct layout_suggestion *sg)
{
	free(sg->order);
	free(sg->line_start);
	free(sg->offsets);
	memset(sg, 0, sizeof(*sg));
}

int layout_suggest(const struct layout_struct *s, const struct layout_params *params,
		   struct layout_suggestion *out)
{
	size_t n = s->n_fields;
	uint32_t *identity = calloc(n ? n : 1, sizeof(*identity));
	uint32_t *thread_order = malloc(n * sizeof(*thread_order));
	bool *thread_lines = calloc(n, sizeof(*thread_lines));
	uint64_t thread_benefit = 0;

	memset(out, 0, sizeof(*out));
	out->s = s;
	out->order = malloc(n * sizeof(*out->order));
	out->line_start = calloc(n, sizeof(*out->line_start));
	out->offsets = malloc(n * sizeof(*out->offsets));
	if (!identity || !thread_order || !thread_lines || !out->order || !out->line_start ||
	    !out->offsets) {
		free(identity);
		free(thread_order);
		free(thread_lines);
		layout_suggestion_clear(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		identity[i] = (uint32_t)i;
	out->original_saved = layout_estimate_saved(s, identity, NULL);
	out->modelled_before = layout_modelled_misses(s, identity, NULL);
	out->sharing_before = layout_sharing_weight(s, identity, NULL);

	layout_order_by_misses(s, params, out->order);
	out->algorithm = LAYOUT_ALGO_MISSES;
	out->saved = layout_estimate_saved(s, out->order, NULL);
	out->benefit = out->saved;
	/*
	 * Estimator E is positive even when nothing moves (spec §2.7E
	 * critique); a suggestion equal to the original has nothing to apply,
	 * so it competes and ranks with benefit 0 (its E stays in `saved`).
	 */
	if (is_identity(out->order, NULL, n)) {
		out->algorithm = LAYOUT_ALGO_ORIGINAL;
		out->benefit = 0;
	}

	/* F's benefit: sharing avoided plus E's term on its layout (spec §2.7F step 5). */
	if (layout_order_by_threads(s, params, thread_order, thread_lines)) {
		uint64_t after = layout_sharing_weight(s, thread_order, thread_lines);
		uint64_t avoided = out->sharing_before > after ? out->sharing_before - after : 0;

		thread_benefit = avoided + layout_estimate_saved(s, thread_order, thread_lines);
		/* on a tie D wins: it does not grow the struct */
		if (thread_benefit > out->benefit && !is_identity(thread_order, thread_lines, n)) {
			memcpy(out->order, thread_order, n * sizeof(*thread_order));
			memcpy(out->line_start, thread_lines, n * sizeof(*thread_lines));
			out->algorithm = LAYOUT_ALGO_THREADS;
			out->saved = layout_estimate_saved(s, out->order, out->line_start);
			out->benefit = thread_benefit;
		}
	}
	out->size = layout_place(s, out->order, out->line_start, out->offsets);
	out->modelled_after = layout_modelled_misses(s, out->order, out->line_start);
	out->sharing_after = layout_sharing_weight(s, out->order, out->line_start);
	free(identity);
	free(thread_order);
	free(thread_lines);
	return 0;
}

static int compare_suggestions(const void *a, const void *b)
{
	const struct layout_suggestion *x = a, *y = b;

	if (x->benefit != y->benefit)
		return x->benefit > y->benefit ? -1 : 1;
	return strcmp(x->s->name, y->s->name);
}

size_t layout_rank(struct layout_suggestion *sg, size_t n, const struct layout_params *params)
{
	size_t passing = 0;

	if (n)
		qsort(sg, n, sizeof(*sg), compare_suggestions);
	/* the thesis reordered structs that saved more than its cut-off (§2.7G step 5) */
	while (passing < n && sg[passing].benefit > params->threshold)
		passing++;
	return passing;
}

/* ---------------------------------------------------------------- false sharing */

static void pairs_of_fields(const struct layout_struct *s, uint32_t line, uint32_t fw, uint32_t fo,
			    struct layout_false_sharing *out, size_t max, size_t *count)
{
	const struct layout_field *w = &s->fields[fw], *o = &s->fields[fo];

	for (size_t t = 0; t < w->n_threads; t++) {
		if (!w->threads[t].writes)
			continue;
		for (size_t u = 0; u < o->n_threads; u++) {
			uint64_t a = w->threads[t].writes, b = o->threads[u].weight;

			if (o->threads[u].tid == w->threads[t].tid || !b)
				continue;
			if (*count < max)
				out[*count] =
				    (struct layout_false_sharing){.line = line,
								  .written_field = fw,
								  .other_field = fo,
								  .writer_tid = w->threads[t].tid,
								  .other_tid = o->threads[u].tid,
								  .weight = a < b ? a : b};
			(*count)++;
		}
	}
}

size_t layout_find_false_sharing(const struct layout_struct *s, const uint32_t *order,
				 const bool *line_start, struct layout_false_sharing *out,
				 size_t max)
{
	struct line_walk w;
	size_t count = 0;

	if (!walk_begin(&w, s, order, line_start))
		return 0;
	for (size_t i = 0; i < w.n; i++)
		for (size_t k = 0; k < w.n; k++) {
			uint32_t line = w.offsets[i] / LAYOUT_LINE_SIZE;

			if (k != i && w.offsets[k] / LAYOUT_LINE_SIZE == line)
				pairs_of_fields(s, line, order[i], order[k], out, max, &count);
		}
	free(w.offsets);
	return count;
}
