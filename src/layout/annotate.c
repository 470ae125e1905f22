// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Algorithms A, B and C of spec autocpa.md §2.7: samples are mapped to
 * struct fields through the static reference table (thesis Algorithm 2),
 * then credited forward through their basic block to the other fields the
 * block touches on the same cache line (Algorithm 3), which also gives the
 * access pattern (fields touched together), their order in the block and
 * the threads that touch each field.
 */
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

static int compare_refs(const void *a, const void *b)
{
	const struct layout_reference *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	if (x->struct_index != y->struct_index)
		return x->struct_index < y->struct_index ? -1 : 1;
	return x->field_index < y->field_index ? -1 : x->field_index > y->field_index;
}

static int compare_blocks(const void *a, const void *b)
{
	const struct layout_block *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* First reference with pc >= `pc`. */
static size_t refs_lower_bound(const struct layout_program *p, uint64_t pc)
{
	size_t lo = 0, hi = p->n_refs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->refs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The block containing pc, or NULL (then only the pc itself is credited). */
static const struct layout_block *block_of(const struct layout_program *p, uint64_t pc)
{
	size_t lo = 0, hi = p->n_blocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->blocks[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || p->blocks[lo - 1].hi < pc)
		return NULL;
	return &p->blocks[lo - 1];
}

static void credit_thread(struct layout_field *f, uint32_t tid, uint64_t count, bool write)
{
	size_t i;

	if (!tid)
		return;
	for (i = 0; i < f->n_threads; i++)
		if (f->threads[i].tid == tid)
			break;
	if (i == f->n_threads) {
		if (f->n_threads == LAYOUT_MAX_THREADS)
			i = LAYOUT_MAX_THREADS - 1; /* fold the rest into the last slot */
		else
			f->threads[f->n_threads++] = (struct layout_thread_weight){.tid = tid};
	}
	f->threads[i].weight += count;
	if (write)
		f->threads[i].writes += count;
}

/* The fields one sample has credited so far, to credit each once. */
struct touched {
	size_t n, cap;
	struct {
		uint32_t s, f;
	} * items;
};

static int touched_add(struct touched *t, uint32_t s, uint32_t f)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].s == s && t->items[i].f == f)
			return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		void *grown = realloc(t->items, cap * sizeof(*t->items));
		if (!grown)
			return -1;
		t->items = grown;
		t->cap = cap;
	}
	t->items[t->n].s = s;
	t->items[t->n].f = f;
	t->n++;
	return 1;
}

/* Algorithm C: count the set of the sample struct's fields touched together. */
static int add_pattern(struct layout_struct *s, const struct touched *t, uint32_t struct_index,
		       uint64_t count)
{
	size_t words = (s->n_fields + 63) / 64;
	uint64_t *bits = calloc(words, sizeof(*bits));
	struct layout_pattern *grown;

	if (!bits)
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].s == struct_index)
			bits[t->items[i].f / 64] |= 1ull << (t->items[i].f % 64);
	for (size_t i = 0; i < s->n_patterns; i++) {
		if (memcmp(s->patterns[i].bits, bits, words * sizeof(*bits)) == 0) {
			s->patterns[i].count += count;
			free(bits);
			return 0;
		}
	}
	grown = realloc(s->patterns, (s->n_patterns + 1) * sizeof(*grown));
	if (!grown) {
		free(bits);
		return -1;
	}
	s->patterns = grown;
	s->patterns[s->n_patterns++] = (struct layout_pattern){.bits = bits, .count = count};
	return 0;
}

static uint32_t line_of(const struct layout_program *p, const struct layout_reference *r)
{
	return p->structs[r->struct_index]->fields[r->field_index].offset / LAYOUT_LINE_SIZE;
}

/*
 * Algorithm 3's filter. The thesis credits "other accesses to the same
 * cache line of that structure" with update_stats(datatype, ...) on the
 * sample's datatype, so only the sample's struct on the sample's line; the
 * thesis-era code drops the line test and credits each reference's own
 * struct (spec §2.7B [R] items 1 and 2).
 */
static bool block_ref_credited(const struct layout_program *p,
			       const struct layout_reference *sample,
			       const struct layout_reference *a, enum layout_adjust_mode mode)
{
	if (mode == LAYOUT_ADJUST_REPO_QUIRKS)
		return true;
	return a->struct_index == sample->struct_index && line_of(p, a) == line_of(p, sample);
}

static void credit(struct layout_program *p, const struct layout_reference *r,
		   const struct layout_sample *smp, uint32_t rank)
{
	struct layout_field *f = &p->structs[r->struct_index]->fields[r->field_index];

	f->adj += smp->count;
	f->order_sum += (double)rank * (double)smp->count;
	credit_thread(f, smp->tid, smp->count, r->write);
}

static int annotate_one(struct layout_program *p, const struct layout_reference *r,
			const struct layout_sample *smp, enum layout_adjust_mode mode,
			struct touched *t)
{
	struct layout_struct *s = p->structs[r->struct_index];
	const struct layout_block *b;
	uint32_t rank = 0;

	/* Algorithm 2: the raw count, at the sample's own reference only. */
	s->fields[r->field_index].raw += smp->count;
	s->total_raw += smp->count;
	t->n = 0;
	if (touched_add(t, r->struct_index, r->field_index) < 0)
		return -1;
	credit(p, r, smp, rank++);

	b = mode == LAYOUT_ADJUST_NONE ? NULL : block_of(p, smp->pc);
	/*
	 * Algorithm 3 scans (pc, block end]: the sample pc was counted above
	 * (spec §2.7B [R] item 3); a field already credited by this sample is
	 * not credited again, so adj never counts one miss twice.
	 */
	for (size_t i = b ? refs_lower_bound(p, smp->pc + 1) : p->n_refs;
	     i < p->n_refs && p->refs[i].pc <= b->hi; i++) {
		const struct layout_reference *a = &p->refs[i];
		int added;

		if (!block_ref_credited(p, r, a, mode))
			continue;
		added = touched_add(t, a->struct_index, a->field_index);
		if (added < 0)
			return -1;
		if (added)
			credit(p, a, smp, rank++);
	}
	return add_pattern(s, t, r->struct_index, smp->count);
}

int layout_annotate(struct layout_program *p, const struct layout_sample *samples, size_t n_samples,
		    enum layout_adjust_mode mode)
{
	struct touched t = {0};
	int rc = 0;

	for (size_t i = 0; i < p->n_refs; i++)
		if (p->refs[i].struct_index >= p->n_structs ||
		    p->refs[i].field_index >= p->structs[p->refs[i].struct_index]->n_fields)
			return -1;
	if (p->n_refs)
		qsort(p->refs, p->n_refs, sizeof(*p->refs), compare_refs);
	if (p->n_blocks)
		qsort(p->blocks, p->n_blocks, sizeof(*p->blocks), compare_blocks);
	for (size_t k = 0; k < n_samples && rc == 0; k++) {
		const struct layout_sample *smp = &samples[k];
		size_t i = refs_lower_bound(p, smp->pc);

		/* Algorithm 2 drops samples without a reference; count them. */
		if (i == p->n_refs || p->refs[i].pc != smp->pc) {
			p->unattributed += smp->count;
			continue;
		}
		/* Every reference at the pc receives the full count (§2.7A [R]). */
		for (; i < p->n_refs && p->refs[i].pc == smp->pc && rc == 0; i++)
			rc = annotate_one(p, &p->refs[i], smp, mode, &t);
	}
	free(t.items);
	return rc;
}
