// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Cache lines shared between threads, from the data addresses of a record
 * (`access` lines; spec autocpa.md §8.6 "data address histograms", §8.7
 * false-sharing report; what perf c2c shows from HITM samples). Algorithm
 * F finds false sharing by field and thread; this finds it by address, so
 * that two objects of one struct — or of different structs — that happen to
 * share a line are seen too. A line is shared when two threads touched it
 * and one of them wrote; it is false sharing when no writer's bytes overlap
 * the other thread's bytes (each access covers the size of the field its pc
 * references, one byte when the pc has no reference).
 */
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

#define LINE_SHIFT 6

/* Bytes of a line an access covers: from its offset, the field's size (capped at the line). */
static uint64_t byte_mask(uint64_t addr, uint32_t size)
{
	uint32_t off = (uint32_t)(addr & (LAYOUT_LINE_SIZE - 1)), end = off + (size ? size : 1);

	if (end > LAYOUT_LINE_SIZE)
		end = LAYOUT_LINE_SIZE;
	return (end - off == 64 ? ~0ull : ((1ull << (end - off)) - 1)) << off;
}

static const struct layout_reference *ref_at(const struct layout_program *p, uint64_t pc)
{
	for (size_t i = 0; i < p->n_refs; i++)
		if (p->refs[i].pc == pc)
			return &p->refs[i];
	return NULL;
}

static int compare_by_line(const void *x, const void *y)
{
	const struct layout_access *a = *(const struct layout_access *const *)x;
	const struct layout_access *b = *(const struct layout_access *const *)y;
	uint64_t la = a->addr >> LINE_SHIFT, lb = b->addr >> LINE_SHIFT;

	if (la != lb)
		return la < lb ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid ? 1 : 0;
}

/* Fold one access into its line's per-thread entry. */
static void add_access(const struct layout_program *p, const struct layout_access *a,
		       struct layout_shared_line *line)
{
	const struct layout_reference *ref = ref_at(p, a->pc);
	uint32_t size = 1;
	struct layout_line_thread *t = NULL;

	if (ref)
		size = p->structs[ref->struct_index]->fields[ref->field_index].size;
	for (size_t i = 0; i < line->n_threads; i++)
		if (line->threads[i].tid == a->tid)
			t = &line->threads[i];
	if (!t) {
		if (line->n_threads == LAYOUT_MAX_THREADS)
			t = &line->threads[LAYOUT_MAX_THREADS -
					   1]; /* folded, as in the data model */
		else
			t = memset(&line->threads[line->n_threads++], 0, sizeof(*t));
		t->tid = a->tid;
	}
	t->count += a->count;
	t->bytes |= byte_mask(a->addr, size);
	if (a->write) {
		t->writes += a->count;
		t->written |= byte_mask(a->addr, size);
	}
	if (ref && !t->has_field) {
		t->has_field = true;
		t->struct_index = ref->struct_index;
		t->field_index = ref->field_index;
	}
	line->count += a->count;
}

/* Shared: two threads, one writes; false: no writer's bytes meet another thread's. */
static void classify(struct layout_shared_line *line)
{
	line->shared = false;
	line->false_sharing = true;
	for (size_t i = 0; i < line->n_threads; i++)
		for (size_t k = 0; k < line->n_threads; k++) {
			const struct layout_line_thread *w = &line->threads[i],
							*o = &line->threads[k];

			if (i == k || !w->writes)
				continue;
			/* each unordered pair once: from its first writer's side */
			if (k > i || !o->writes)
				line->sharing += w->count < o->count ? w->count : o->count;
			line->shared = true;
			if (w->written & o->bytes)
				line->false_sharing = false;
		}
	if (!line->shared)
		line->false_sharing = false;
}

static int compare_lines(const void *x, const void *y)
{
	const struct layout_shared_line *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line ? 1 : 0;
}

size_t layout_find_shared_lines(const struct layout_record *rec, struct layout_shared_line *out,
				size_t max)
{
	const struct layout_access **by_line;
	struct layout_shared_line *lines = NULL, cur;
	size_t n = 0, cap = 0;

	if (!rec->n_accesses)
		return 0;
	by_line = malloc(rec->n_accesses * sizeof(*by_line));
	if (!by_line)
		return 0;
	for (size_t i = 0; i < rec->n_accesses; i++)
		by_line[i] = &rec->accesses[i];
	qsort(by_line, rec->n_accesses, sizeof(*by_line), compare_by_line);
	for (size_t i = 0; i < rec->n_accesses;) {
		uint64_t line = by_line[i]->addr >> LINE_SHIFT;

		memset(&cur, 0, sizeof(cur));
		cur.line = line << LINE_SHIFT;
		for (; i < rec->n_accesses && by_line[i]->addr >> LINE_SHIFT == line; i++)
			add_access(&rec->program, by_line[i], &cur);
		classify(&cur);
		if (!cur.shared)
			continue;
		if (n == cap) {
			struct layout_shared_line *g;

			cap = cap ? 2 * cap : 64;
			g = realloc(lines, cap * sizeof(*g));
			if (!g)
				break;
			lines = g;
		}
		lines[n++] = cur;
	}
	free(by_line);
	if (n)
		qsort(lines, n, sizeof(*lines), compare_lines);
	if (out && n && max) /* lines is NULL when none is shared */
		memcpy(out, lines, (n < max ? n : max) * sizeof(*out));
	free(lines);
	return n;
}

/* "bytes 8-15" of a mask (first to last byte set). */
static void print_bytes(FILE *f, uint64_t mask)
{
	int lo = __builtin_ctzll(mask), hi = 63 - __builtin_clzll(mask);

	fprintf(f, lo == hi ? "byte %d" : "bytes %d-%d", lo, hi);
}

/* The line passes params' significance rule (issue 17 B2), against all addressed samples. */
static bool line_is_significant(const struct layout_shared_line *l, uint64_t total,
				const struct layout_params *params)
{
	return l->sharing >= params->sharing_min_samples &&
	       (double)l->sharing >= params->sharing_min_share * (double)total;
}

static void print_line(FILE *f, const struct layout_record *rec, const struct layout_shared_line *l,
		       const char *unit)
{
	fprintf(f, "%s sharing of data line %#llx (%llu %s):", l->false_sharing ? "false" : "true",
		(unsigned long long)l->line, (unsigned long long)l->count, unit);
	for (size_t k = 0; k < l->n_threads; k++) {
		const struct layout_line_thread *t = &l->threads[k];

		fprintf(f, "%s thread %u ", k ? ";" : "", t->tid);
		print_bytes(f, t->bytes);
		if (t->has_field)
			fprintf(f, " (%s.%s)", rec->program.structs[t->struct_index]->name,
				rec->program.structs[t->struct_index]->fields[t->field_index].name);
		fprintf(f, ", %llu %s, %llu writes", (unsigned long long)t->count, unit,
			(unsigned long long)t->writes);
	}
	fprintf(f, "\n");
}

void layout_print_shared_lines(FILE *f, const struct layout_record *rec, size_t max,
			       const struct layout_params *params)
{
	size_t n = layout_find_shared_lines(rec, NULL, 0), shown = 0, below = 0;
	struct layout_shared_line *lines = n ? calloc(n, sizeof(*lines)) : NULL;
	uint64_t total = 0, below_samples = 0;
	struct layout_units u;

	if (!lines)
		return;
	/* counted in what the record's source measures (issue 17 B4) */
	layout_units_for(rec->source, rec->period, &u);
	layout_find_shared_lines(rec, lines, n);
	for (size_t i = 0; i < rec->n_accesses; i++)
		total += rec->accesses[i].count;
	for (size_t i = 0; i < n; i++) {
		if (!line_is_significant(&lines[i], total, params)) {
			below++;
			below_samples += lines[i].count;
		} else if (shown < max) {
			print_line(f, rec, &lines[i], u.count);
			shown++;
		}
	}
	if (n - below > shown)
		fprintf(f, "... %zu more shared lines\n", n - below - shown);
	if (below)
		fprintf(f,
			"%zu shared line%s left out (%llu %s on them): their sharing (two "
			"threads, one writing: the smaller count) is below %llu %s or %.3g%% "
			"of the %llu addressed %s (--sharing-min-samples, "
			"--sharing-min-share)\n",
			below, below == 1 ? "" : "s", (unsigned long long)below_samples, u.count,
			(unsigned long long)params->sharing_min_samples, u.count,
			100.0 * params->sharing_min_share, (unsigned long long)total, u.count);
	free(lines);
}

static int compare_ref_pc(const void *key, const void *elem)
{
	uint64_t pc = *(const uint64_t *)key;
	const struct layout_reference *r = elem;

	return pc < r->pc ? -1 : pc > r->pc;
}

/* Every reference at an access's pc credits its struct's object (as Algorithm 2 credits fields). */
static int add_objects_of(struct layout_program *p, const struct layout_access *a)
{
	const struct layout_reference *r =
	    bsearch(&a->pc, p->refs, p->n_refs, sizeof(*p->refs), compare_ref_pc);

	if (!r)
		return 0;
	while (r > p->refs && r[-1].pc == a->pc)
		r--;
	for (; r < p->refs + p->n_refs && r->pc == a->pc; r++) {
		struct layout_struct *s = p->structs[r->struct_index];
		uint64_t object = a->addr - s->fields[r->field_index].offset;

		if (layout_struct_add_object_access(s, object, r->field_index, a->tid, a->count,
						    a->write))
			return -1;
	}
	return 0;
}

int layout_record_objects(struct layout_record *rec)
{
	struct layout_program *p = &rec->program;

	for (size_t i = 0; i < rec->n_accesses; i++)
		if (add_objects_of(p, &rec->accesses[i]))
			return -1;
	for (size_t i = 0; i < p->n_structs; i++)
		layout_struct_objects_finish(p->structs[i]);
	return 0;
}
