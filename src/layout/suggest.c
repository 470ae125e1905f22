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
 * the remaining fields around them. A field fixed at its offset (constraint
 * file) refuses a layout that moves it; a frozen struct (another binary
 * uses it, or the constraint file keeps it) is reported, never reordered
 * (constraints.c).
 *
 * Sharing is judged per object (issue 17 B1): F's benefit and the
 * false-sharing pairs come from what threads did to the fields of one
 * object (its data addresses), never from two threads touching one field
 * of different objects. G changes a layout only for a benefit above the
 * counts' noise, and grows a struct only for a benefit that is a delta
 * (modelled misses or per-object sharing), never for estimate E alone
 * (issue 17 B3; E is positive even when nothing moves, spec §2.7E).
 */
#include <math.h>
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
	params->sigmas = 2.0;
	/* 4 = the smallest count whose 2σ Poisson interval excludes 0 */
	params->sharing_min_samples = 4;
	params->sharing_min_share = 0.01;
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

/* Per field index: the line it starts in, in the layout of order and line_start. */
static uint32_t *lines_of_fields(const struct layout_struct *s, const uint32_t *order,
				 const bool *line_start)
{
	struct line_walk w;
	uint32_t *line = malloc((s->n_fields ? s->n_fields : 1) * sizeof(*line));

	if (!line || !walk_begin(&w, s, order, line_start)) {
		free(line);
		return NULL;
	}
	for (size_t k = 0; k < w.n; k++)
		line[order[k]] = w.offsets[k] / LAYOUT_LINE_SIZE;
	free(w.offsets);
	return line;
}

/* One thread's samples and writes on one line of one object. */
struct line_thread {
	uint32_t line, tid;
	uint64_t weight, writes;
};

/* Fold the accesses of one object (a[0..n)) into per (line, thread) entries. */
static size_t object_lines(const struct layout_object_access *a, size_t n, const uint32_t *line,
			   struct line_thread *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < m; k++)
			if (out[k].line == line[a[i].field] && out[k].tid == a[i].tid)
				break;
		if (k == m)
			out[m++] = (struct line_thread){.line = line[a[i].field], .tid = a[i].tid};
		out[k].weight += a[i].weight;
		out[k].writes += a[i].writes;
	}
	return m;
}

/* spec §2.7F step 5 on one object: thread pairs on a line, one of them writing it. */
static uint64_t object_sharing(const struct line_thread *lt, size_t m)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < m; i++)
		for (size_t j = i + 1; j < m; j++)
			if (lt[i].line == lt[j].line && (lt[i].writes || lt[j].writes))
				sum += lt[i].weight < lt[j].weight ? lt[i].weight : lt[j].weight;
	return sum;
}

/* The end of the object that starts at index i of s->objects. */
static size_t object_end(const struct layout_struct *s, size_t i)
{
	size_t j = i + 1;

	while (j < s->n_objects && s->objects[j].object == s->objects[i].object)
		j++;
	return j;
}

uint64_t layout_sharing_weight(const struct layout_struct *s, const uint32_t *order,
			       const bool *line_start)
{
	uint32_t *line;
	struct line_thread *lt;
	uint64_t sum = 0;

	if (!s->n_objects)
		return 0;
	line = lines_of_fields(s, order, line_start);
	lt = malloc(s->n_objects * sizeof(*lt));
	if (line && lt)
		for (size_t i = 0; i < s->n_objects;) {
			size_t j = object_end(s, i);

			sum += object_sharing(lt, object_lines(s->objects + i, j - i, line, lt));
			i = j;
		}
	free(line);
	free(lt);
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

/* Is `gain`, a difference of sampled counts totalling `counts`, above their noise? */
static bool above_noise(uint64_t gain, uint64_t counts, double sigmas, uint64_t *noise)
{
	double floor = sigmas * sqrt((double)counts);

	*noise = (uint64_t)ceil(floor);
	return gain > 0 && (double)gain > floor;
}

/* Does the layout move a field whose offset the constraints fix? Which one, in *field. */
static bool moves_fixed_field(const struct layout_struct *s, const uint32_t *order,
			      const uint32_t *offsets, uint32_t *field)
{
	for (size_t k = 0; k < s->n_fields; k++)
		if (s->fields[order[k]].at_offset && offsets[k] != s->fields[order[k]].offset) {
			*field = order[k];
			return true;
		}
	return false;
}

/* The same for an order not yet placed (F's); true when it cannot tell (ENOMEM). */
static bool order_moves_fixed(const struct layout_struct *s, const uint32_t *order,
			      const bool *lines)
{
	uint32_t *offsets = malloc((s->n_fields ? s->n_fields : 1) * sizeof(*offsets)), field;
	bool moves = true;

	if (offsets) {
		layout_place(s, order, lines, offsets);
		moves = moves_fixed_field(s, order, offsets, &field);
	}
	free(offsets);
	return moves;
}

/*
 * D under G's rules: kept only for a benefit above its noise, and, when
 * it grows the struct, for a drop of the modelled misses above theirs.
 */
static void choose_by_misses(const struct layout_struct *s, const struct layout_params *params,
			     struct layout_suggestion *out)
{
	size_t n = s->n_fields;
	uint64_t saved = layout_estimate_saved(s, out->order, NULL);
	uint64_t modelled = layout_modelled_misses(s, out->order, NULL);
	uint32_t size = layout_place(s, out->order, NULL, out->offsets);
	uint64_t drop = out->modelled_before > modelled ? out->modelled_before - modelled : 0;

	out->saved = saved;
	out->algorithm = LAYOUT_ALGO_ORIGINAL;
	out->benefit = 0;
	if (is_identity(out->order, NULL, n)) {
		out->keep = LAYOUT_KEEP_NO_MOVE;
		return;
	}
	out->rejected_size = size;
	out->rejected_saved = saved;
	out->rejected_modelled = modelled;
	if (moves_fixed_field(s, out->order, out->offsets, &out->moved_field)) {
		out->keep = LAYOUT_KEEP_MOVES_FIXED;
		return;
	}
	if (!above_noise(saved, saved, params->sigmas, &out->noise)) {
		out->keep = LAYOUT_KEEP_BELOW_NOISE;
		return;
	}
	if (size > s->size &&
	    !above_noise(drop, out->modelled_before + modelled, params->sigmas, &out->noise)) {
		out->keep = LAYOUT_KEEP_WOULD_GROW;
		return;
	}
	out->algorithm = LAYOUT_ALGO_MISSES;
	out->keep = LAYOUT_KEEP_NOTHING;
	out->benefit = saved;
}

/*
 * F under G's rules: its padding is paid for only by the cross-thread
 * sharing it avoids, judged per object. Each unit of sharing weight is a
 * round trip of the line between two threads, a miss in each; spreading
 * fields over lines costs the rise of the modelled misses (fields that
 * missed together now miss apart). F is chosen only when the misses it
 * avoids exceed that cost by more than their noise, and its benefit (spec
 * §2.7F step 5: avoided + E) exceeds D's.
 */
static void choose_by_threads(const struct layout_struct *s, const struct layout_params *params,
			      const uint32_t *order, const bool *lines,
			      struct layout_suggestion *out)
{
	size_t n = s->n_fields;
	uint64_t after = layout_sharing_weight(s, order, lines), noise;
	uint64_t avoided = out->sharing_before > after ? out->sharing_before - after : 0;
	uint64_t modelled = layout_modelled_misses(s, order, lines);
	uint64_t rise = modelled > out->modelled_before ? modelled - out->modelled_before : 0;
	uint64_t benefit = avoided + layout_estimate_saved(s, order, lines);
	uint64_t gain = 2 * avoided > rise ? 2 * avoided - rise : 0;

	out->threads_considered = true;
	out->threads_avoided = avoided;
	out->threads_rise = rise;
	if (!above_noise(gain, 2 * avoided + rise, params->sigmas, &noise) ||
	    benefit <= out->benefit || order_moves_fixed(s, order, lines))
		return;
	memcpy(out->order, order, n * sizeof(*order));
	memcpy(out->line_start, lines, n * sizeof(*lines));
	out->algorithm = LAYOUT_ALGO_THREADS;
	out->keep = LAYOUT_KEEP_NOTHING;
	out->saved = layout_estimate_saved(s, out->order, out->line_start);
	out->benefit = benefit;
}

int layout_suggest(const struct layout_struct *s, const struct layout_params *params,
		   struct layout_suggestion *out)
{
	size_t n = s->n_fields;
	uint32_t *identity = calloc(n ? n : 1, sizeof(*identity));
	uint32_t *thread_order = malloc((n ? n : 1) * sizeof(*thread_order));
	bool *thread_lines = calloc(n ? n : 1, sizeof(*thread_lines));

	memset(out, 0, sizeof(*out));
	out->s = s;
	out->order = malloc((n ? n : 1) * sizeof(*out->order));
	out->line_start = calloc(n ? n : 1, sizeof(*out->line_start));
	out->offsets = malloc((n ? n : 1) * sizeof(*out->offsets));
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
	choose_by_misses(s, params, out);
	if (layout_order_by_threads(s, params, thread_order, thread_lines) &&
	    !is_identity(thread_order, thread_lines, n))
		choose_by_threads(s, params, thread_order, thread_lines, out);
	/* ABI: reported with what it would save, never reordered */
	if (s->frozen) {
		out->rejected_saved = out->algorithm != LAYOUT_ALGO_ORIGINAL ? out->benefit : 0;
		out->algorithm = LAYOUT_ALGO_ORIGINAL;
		out->keep = LAYOUT_KEEP_FROZEN;
		out->benefit = 0;
	}
	/* kept: the printed layout and every "after" figure are the original's */
	if (out->algorithm == LAYOUT_ALGO_ORIGINAL) {
		memcpy(out->order, identity, n * sizeof(*identity));
		memset(out->line_start, 0, n * sizeof(*out->line_start));
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

struct pair_list {
	struct layout_false_sharing *v;
	size_t n, cap;
	bool failed;
};

/* Add one object's weight to the pair (written field, other field, writer, other). */
static void add_pair(struct pair_list *l, const struct layout_false_sharing *p)
{
	for (size_t i = 0; i < l->n; i++) {
		struct layout_false_sharing *q = &l->v[i];

		if (q->written_field == p->written_field && q->other_field == p->other_field &&
		    q->writer_tid == p->writer_tid && q->other_tid == p->other_tid) {
			q->weight += p->weight;
			q->objects++;
			return;
		}
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct layout_false_sharing *g = realloc(l->v, cap * sizeof(*g));

		if (!g) {
			l->failed = true;
			return;
		}
		l->v = g;
		l->cap = cap;
	}
	l->v[l->n] = *p;
	l->v[l->n++].objects = 1;
}

/* One object's pairs: a field written by t, another on its line used by u != t. */
static void object_pairs(const struct layout_object_access *a, size_t n, const uint32_t *line,
			 struct pair_list *l)
{
	for (size_t i = 0; i < n; i++) {
		if (!a[i].writes)
			continue;
		for (size_t k = 0; k < n; k++) {
			uint64_t w = a[i].writes, o = a[k].weight;

			if (a[k].field == a[i].field || a[k].tid == a[i].tid ||
			    line[a[k].field] != line[a[i].field] || !o)
				continue;
			add_pair(l, &(struct layout_false_sharing){.line = line[a[i].field],
								   .written_field = a[i].field,
								   .other_field = a[k].field,
								   .writer_tid = a[i].tid,
								   .other_tid = a[k].tid,
								   .weight = w < o ? w : o});
		}
	}
}

static int compare_pairs(const void *x, const void *y)
{
	const struct layout_false_sharing *a = x, *b = y;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->written_field != b->written_field)
		return a->written_field < b->written_field ? -1 : 1;
	if (a->other_field != b->other_field)
		return a->other_field < b->other_field ? -1 : 1;
	if (a->writer_tid != b->writer_tid)
		return a->writer_tid < b->writer_tid ? -1 : 1;
	return a->other_tid < b->other_tid ? -1 : a->other_tid > b->other_tid;
}

size_t layout_find_false_sharing(const struct layout_struct *s, const uint32_t *order,
				 const bool *line_start, struct layout_false_sharing *out,
				 size_t max)
{
	struct pair_list l = {0};
	uint32_t *line;
	size_t count;

	if (!s->n_objects)
		return 0;
	line = lines_of_fields(s, order, line_start);
	if (!line)
		return 0;
	for (size_t i = 0; i < s->n_objects && !l.failed;) {
		size_t j = object_end(s, i);

		object_pairs(s->objects + i, j - i, line, &l);
		i = j;
	}
	free(line);
	count = l.failed ? 0 : l.n;
	if (count) {
		qsort(l.v, count, sizeof(*l.v), compare_pairs);
		if (out && max)
			memcpy(out, l.v, (count < max ? count : max) * sizeof(*out));
	}
	free(l.v);
	return count;
}
