/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/layout, data model and algorithms A–G (spec autocpa.md §2.6–2.7):
 * the thesis's worked vectors (Table 3.2 → d, a, c, b with estimate 145;
 * the twelve-field case → 76), the alphabet example of Algorithm 3, the
 * thread example of Algorithm F, and the ABI constraints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layout/layout.h"

struct field_spec {
	const char *type, *name, *suffix;
	uint32_t size, align;
};

static uint32_t next_offset(const struct layout_struct *s, uint32_t align)
{
	uint32_t end = 0;

	if (s->n_fields)
		end = s->fields[s->n_fields - 1].offset + s->fields[s->n_fields - 1].size;
	return (end + align - 1) / align * align;
}

static struct layout_struct *build(const char *name, const struct field_spec *f, size_t n)
{
	struct layout_struct *s = layout_struct_new(name);

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(layout_struct_add_field(s, f[i].type, f[i].name, f[i].suffix,
							 next_offset(s, f[i].align), f[i].size,
							 f[i].align),
				 0);
	assert_int_equal(layout_struct_finish(s), 0);
	return s;
}

/* Thesis Table 3.2. */
static const struct field_spec table_3_2[] = {
    {"long long", "a", NULL, 8, 8},
    {"struct bar *", "b", NULL, 8, 8},
    {"uint64_t", "c", NULL, 8, 8},
    {"int", "d", NULL, 4, 4},
};

static struct layout_struct *twelve_fields(void)
{
	static const char *names[12] = {"f0", "f1", "f2", "f3", "f4",  "f5",
					"f6", "f7", "f8", "f9", "f10", "f11"};
	struct field_spec f[12];

	for (int i = 0; i < 12; i++)
		f[i] = (struct field_spec){"long", names[i], NULL, 8, 8};
	return build("twelve", f, 12);
}

/* Give each field `counts[i]` samples through Algorithm 2 (one reference per field). */
static void annotate_counts(struct layout_struct *s, const uint64_t *counts)
{
	struct layout_reference refs[64];
	struct layout_sample samples[64];
	struct layout_program p = {.n_structs = 1, .structs = &s, .refs = refs};

	assert_true(s->n_fields <= 64);
	for (size_t i = 0; i < s->n_fields; i++) {
		refs[i] =
		    (struct layout_reference){.pc = 0x1000 + 16 * i, .field_index = (uint32_t)i};
		samples[i] = (struct layout_sample){.pc = refs[i].pc, .count = counts[i]};
	}
	p.n_refs = s->n_fields;
	assert_int_equal(layout_annotate(&p, samples, s->n_fields, LAYOUT_ADJUST_THESIS), 0);
	assert_int_equal(p.unattributed, 0);
}

static void assert_order(const struct layout_struct *s, const uint32_t *order, const char *expect)
{
	char got[256] = "";

	for (size_t k = 0; k < s->n_fields; k++) {
		strcat(got, k ? " " : "");
		strcat(got, s->fields[order[k]].name);
	}
	assert_string_equal(got, expect);
}

static void test_model_checks_offsets_and_flexible_member(void **state)
{
	struct layout_struct *s = layout_struct_new("s");

	(void)state;
	assert_int_equal(layout_struct_add_field(s, "char", "c", NULL, 0, 1, 1), 0);
	/* an int after a char is at 4, not 1 */
	assert_int_equal(layout_struct_add_field(s, "int", "i", NULL, 1, 4, 4), -1);
	assert_int_equal(layout_struct_add_field(s, "int", "i", NULL, 4, 4, 4), 0);
	assert_int_equal(layout_struct_add_field(s, "char", "data", "[]", 8, 0, 1), 0);
	assert_true(s->fields[2].flexible);
	/* nothing after a flexible array member */
	assert_int_equal(layout_struct_add_field(s, "int", "late", NULL, 8, 4, 4), -1);
	assert_int_equal(layout_struct_finish(s), 0);
	assert_int_equal(s->size, 8);
	assert_int_equal(s->align, 4);
	assert_int_equal(layout_field_index(s, "i"), 1);
	assert_int_equal(layout_field_index(s, "nope"), -1);
	layout_struct_free(s);
}

static void test_place_pads_and_rounds(void **state)
{
	struct layout_struct *s = build("t", table_3_2, 4);
	uint32_t order[4] = {3, 0, 2, 1}, offsets[4];

	(void)state;
	assert_int_equal(s->size, 32); /* 28 bytes of fields, rounded to 8 */
	assert_int_equal(layout_place(s, order, NULL, offsets), 32);
	assert_int_equal(offsets[0], 0);
	assert_int_equal(offsets[1], 8); /* 4 bytes of padding after d */
	assert_int_equal(offsets[2], 16);
	assert_int_equal(offsets[3], 24);
	layout_struct_free(s);
}

/* MUST SHOW (issue 17 point 1): Table 3.2 → d, a, c, b with estimate 145. */
static void test_thesis_table_3_2_vector(void **state)
{
	static const uint64_t counts[4] = {111, 15, 19, 128};
	struct layout_struct *s = build("foo", table_3_2, 4);
	struct layout_params params;
	struct layout_suggestion sg;
	uint32_t identity[4] = {0, 1, 2, 3};

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_order(s, sg.order, "d a c b");
	assert_int_equal(sg.saved, 145);
	assert_int_equal(sg.benefit, 145);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_MISSES);
	/* spec §2.7E: 162 on the original order; modelled delta 128 − 128 = 0 */
	assert_int_equal(sg.original_saved, 162);
	assert_int_equal(layout_estimate_saved(s, identity, NULL), 162);
	assert_int_equal(sg.modelled_before, 128);
	assert_int_equal(sg.modelled_after, 128);
	assert_int_equal(sg.size, 32);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/* MUST SHOW (issue 17 point 1): the twelve-field example → 76. */
static void test_twelve_field_vector(void **state)
{
	static const uint64_t counts[12] = {5, 0, 50, 0, 0, 0, 0, 0, 40, 30, 0, 1};
	struct layout_struct *s = twelve_fields();
	struct layout_params params;
	struct layout_suggestion sg;

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_order(s, sg.order, "f2 f8 f9 f0 f11 f1 f3 f4 f5 f6 f7 f10");
	assert_int_equal(sg.offsets[8], 64); /* f5 opens the second line */
	assert_int_equal(sg.saved, 76);
	assert_int_equal(sg.original_saved, 81);
	/* modelled (50 + 40) − (50 + 0) = 40 */
	assert_int_equal(sg.modelled_before, 90);
	assert_int_equal(sg.modelled_after, 50);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/*
 * The thesis's alphabet example of Algorithm 3: samples land only on `a`;
 * `b`, read later in the same block on the same line, gets a's count.
 */
static const struct field_spec alphabet[] = {
    {"long", "a", NULL, 8, 8}, {"long", "b", NULL, 8, 8},      {"long", "c", NULL, 8, 8},
    {"long", "d", NULL, 8, 8}, {"char", "pad", "[32]", 32, 1}, {"long", "far", NULL, 8, 8},
};

struct alphabet_program {
	struct layout_struct *structs[2];
	struct layout_reference refs[8];
	struct layout_block blocks[2];
	struct layout_program p;
};

static void alphabet_program(struct alphabet_program *ap)
{
	static const struct field_spec other[] = {{"int", "x", NULL, 4, 4}};

	ap->structs[0] = build("alphabet", alphabet, 6);
	ap->structs[1] = build("other", other, 1);
	/* block 1: a (sampled), then b, far (line 1), other.x; block 2: c */
	ap->refs[0] = (struct layout_reference){.pc = 0x100, .field_index = 0};
	ap->refs[1] = (struct layout_reference){.pc = 0x108, .field_index = 1, .write = true};
	ap->refs[2] = (struct layout_reference){.pc = 0x110, .field_index = 5};
	ap->refs[3] = (struct layout_reference){.pc = 0x118, .struct_index = 1};
	ap->refs[4] = (struct layout_reference){.pc = 0x130, .field_index = 2};
	/* a second reference to `a` later in the block must not credit it twice */
	ap->refs[5] = (struct layout_reference){.pc = 0x11c, .field_index = 0};
	ap->blocks[0] = (struct layout_block){0x100, 0x11c};
	ap->blocks[1] = (struct layout_block){0x130, 0x140};
	ap->p = (struct layout_program){.n_structs = 2,
					.structs = ap->structs,
					.n_refs = 6,
					.refs = ap->refs,
					.n_blocks = 2,
					.blocks = ap->blocks};
}

static void alphabet_free(struct alphabet_program *ap)
{
	layout_struct_free(ap->structs[0]);
	layout_struct_free(ap->structs[1]);
}

static void test_alphabet_block_adjustment_thesis(void **state)
{
	struct alphabet_program ap;
	const struct layout_sample samples[] = {
	    {.pc = 0x100, .count = 90, .tid = 7},
	    {.pc = 0x999, .count = 4},		 /* no reference: dropped, counted */
	    {.pc = 0x130, .count = 3, .tid = 8}, /* c, alone in its block */
	};
	const struct layout_field *f;

	(void)state;
	alphabet_program(&ap);
	assert_int_equal(layout_annotate(&ap.p, samples, 3, LAYOUT_ADJUST_THESIS), 0);
	f = ap.structs[0]->fields;
	assert_int_equal(f[0].raw, 90);
	assert_int_equal(f[0].adj, 90); /* read twice in the block, credited once */
	assert_int_equal(f[1].raw, 0);
	assert_int_equal(f[1].adj, 90); /* b gets a's count */
	assert_int_equal(f[2].raw, 3);
	assert_int_equal(f[2].adj, 3);			   /* c: another block */
	assert_int_equal(f[5].adj, 0);			   /* far: another line */
	assert_int_equal(ap.structs[1]->fields[0].adj, 0); /* another struct */
	assert_int_equal(ap.p.unattributed, 4);
	assert_int_equal(ap.structs[0]->total_raw, 93);
	/* C: patterns {a, b} × 90 and {c} × 3; b second in its block */
	assert_int_equal(ap.structs[0]->n_patterns, 2);
	assert_int_equal(ap.structs[0]->patterns[0].bits[0], 0x3);
	assert_int_equal(ap.structs[0]->patterns[0].count, 90);
	assert_int_equal(ap.structs[0]->patterns[1].bits[0], 0x4);
	assert_int_equal(ap.structs[0]->patterns[1].count, 3);
	assert_true(f[0].order_sum == 0.0);
	assert_true(f[1].order_sum == 90.0);
	/* threads: b written by tid 7, c read by tid 8 */
	assert_int_equal(f[1].n_threads, 1);
	assert_int_equal(f[1].threads[0].tid, 7);
	assert_int_equal(f[1].threads[0].weight, 90);
	assert_int_equal(f[1].threads[0].writes, 90);
	assert_int_equal(f[0].threads[0].writes, 0);
	assert_int_equal(f[2].threads[0].tid, 8);
	alphabet_free(&ap);
}

static void test_alphabet_block_adjustment_repo_quirks(void **state)
{
	struct alphabet_program ap;
	const struct layout_sample samples[] = {{.pc = 0x100, .count = 90}};

	(void)state;
	alphabet_program(&ap);
	assert_int_equal(layout_annotate(&ap.p, samples, 1, LAYOUT_ADJUST_REPO_QUIRKS), 0);
	assert_int_equal(ap.structs[0]->fields[1].adj, 90);
	assert_int_equal(ap.structs[0]->fields[5].adj, 90); /* no line filter */
	assert_int_equal(ap.structs[1]->fields[0].adj, 90); /* its own struct */
	assert_int_equal(ap.structs[1]->fields[0].raw, 0);
	alphabet_free(&ap);
}

static void test_adjust_none_is_algorithm_2_only(void **state)
{
	struct alphabet_program ap;
	const struct layout_sample samples[] = {{.pc = 0x100, .count = 90}};

	(void)state;
	alphabet_program(&ap);
	assert_int_equal(layout_annotate(&ap.p, samples, 1, LAYOUT_ADJUST_NONE), 0);
	assert_int_equal(ap.structs[0]->fields[0].adj, 90);
	assert_int_equal(ap.structs[0]->fields[1].adj, 0);
	alphabet_free(&ap);
}

static void test_annotate_refuses_bad_reference(void **state)
{
	struct alphabet_program ap;

	(void)state;
	alphabet_program(&ap);
	ap.refs[2].field_index = 6;
	assert_int_equal(layout_annotate(&ap.p, NULL, 0, LAYOUT_ADJUST_THESIS), -1);
	alphabet_free(&ap);
}

/* D, enhanced: close counts are ordered by their access order in blocks. */
static void test_ordering_aware_tolerance(void **state)
{
	static const struct field_spec f[] = {
	    {"long", "x", NULL, 8, 8}, {"long", "y", NULL, 8, 8}, {"long", "z", NULL, 8, 8}};
	struct layout_struct *s = build("close", f, 3);
	struct layout_params params;
	uint32_t order[3];

	(void)state;
	/* y slightly hotter than x, but x always comes first in the block */
	s->fields[0].adj = 100;
	s->fields[0].order_sum = 0;
	s->fields[1].adj = 104;
	s->fields[1].order_sum = 104;
	s->fields[2].adj = 10;
	layout_params_default(&params);
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "y x z");
	params.tolerance = 0.05;
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "x y z");
	layout_struct_free(s);
}

/* Padding-aware packing: cold chars fill the hole after a hot char. */
static void test_pack_holes_with_cold_fields(void **state)
{
	static const struct field_spec f[] = {
	    {"char", "tag", NULL, 1, 1},	   {"long", "key", NULL, 8, 8},
	    {"char", "cold1", NULL, 1, 1},	   {"long", "value", NULL, 8, 8},
	    {"short", "cold2", NULL, 2, 2},	   {"long", "next", NULL, 8, 8},
	    {"unsigned char", "data", "[]", 0, 1},
	};
	static const uint64_t counts[7] = {100, 90, 0, 80, 0, 70, 0};
	struct layout_struct *s = build("entry", f, 7);
	struct layout_params params;
	uint32_t order[7], offsets[7];

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "tag key value next cold1 cold2 data");
	assert_int_equal(layout_place(s, order, NULL, offsets), 40);
	params.pack_holes = true;
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "tag cold1 cold2 key value next data");
	assert_int_equal(layout_place(s, order, NULL, offsets), 32);
	assert_int_equal(offsets[2], 2); /* the short at its alignment */
	/* hot fields keep their relative order and the estimate its value */
	assert_int_equal(layout_estimate_saved(s, order, NULL), 90 + 80 + 70);
	layout_struct_free(s);
}

/* ABI: the flexible array member stays last, a pinned field keeps its place. */
static void test_constraints_flexible_and_pinned(void **state)
{
	static const struct field_spec f[] = {
	    {"struct base", "super", NULL, 16, 8}, {"int", "cold", NULL, 4, 4},
	    {"long", "hot", NULL, 8, 8},	   {"long", "warm", NULL, 8, 8},
	    {"unsigned char", "data", "[]", 0, 1},
	};
	static const uint64_t counts[5] = {1, 0, 50, 20, 99};
	struct layout_struct *s = build("bipbuf", f, 5);
	struct layout_params params;
	uint32_t order[5];

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	/* data is the hottest, but a flexible array member stays last */
	assert_true(s->fields[4].flexible);
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "hot warm super cold data");
	assert_int_equal(layout_pin_field(s, "super"), 0);
	assert_int_equal(layout_pin_field(s, "nope"), -1);
	layout_order_by_misses(s, &params, order);
	assert_order(s, order, "super hot warm cold data");
	layout_struct_free(s);
}

/*
 * The thesis's thread example (§2.7F): a, b, c on line 1 and i, j, k on
 * line 2; thread 1 touches {a, b, k}, thread 2 {c, i, j}: they end up on
 * separate lines, {a, b, k} together and {c, i, j} together.
 */
static void test_thread_example_separates_lines(void **state)
{
	static const char *names[16] = {"a", "b", "c", "d", "e", "f", "g", "h",
					"i", "j", "k", "l", "m", "n", "o", "p"};
	struct field_spec f[16];
	struct layout_struct *s;
	struct layout_reference refs[6];
	struct layout_sample samples[6];
	struct layout_program p = {.n_structs = 1, .refs = refs, .n_refs = 6};
	static const char *touch[6] = {"a", "b", "k", "c", "i", "j"};
	struct layout_params params;
	struct layout_suggestion sg;
	uint32_t line[16];

	(void)state;
	for (int i = 0; i < 16; i++)
		f[i] = (struct field_spec){"long", names[i], NULL, 8, 8};
	s = build("alphabet", f, 16);
	p.structs = &s;
	for (int i = 0; i < 6; i++) {
		refs[i] = (struct layout_reference){.pc = 0x100 + 8 * (uint64_t)i,
						    .field_index =
							(uint32_t)layout_field_index(s, touch[i]),
						    .write = true};
		samples[i] = (struct layout_sample){
		    .pc = refs[i].pc, .count = 10 + (uint64_t)i, .tid = i < 3 ? 1 : 2};
	}
	assert_int_equal(layout_annotate(&p, samples, 6, LAYOUT_ADJUST_THESIS), 0);
	/* every access is to one object: its lines are what the threads share */
	for (int i = 0; i < 6; i++)
		assert_int_equal(layout_struct_add_object_access(s, 0x1000, refs[i].field_index,
								 samples[i].tid, samples[i].count,
								 true),
				 0);
	layout_struct_objects_finish(s);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	for (size_t k = 0; k < 16; k++)
		line[sg.order[k]] = sg.offsets[k] / LAYOUT_LINE_SIZE;
	assert_int_equal(line[0], line[1]);  /* a, b */
	assert_int_equal(line[0], line[10]); /* a, k */
	assert_int_equal(line[2], line[8]);  /* c, i */
	assert_int_equal(line[2], line[9]);  /* c, j */
	assert_int_not_equal(line[0], line[2]);
	/* line 0: min(a + b, c) = min(21, 13); line 1: min(k, i + j) = min(12, 29) */
	assert_int_equal(sg.sharing_before, 13 + 12);
	assert_int_equal(sg.sharing_after, 0);
	assert_true(sg.size >= s->size);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/*
 * A false-sharing pair already in miss order: D would leave the struct as
 * it is (benefit 0, whatever E says), so F's separation must win.
 */
static void test_false_sharing_pair_in_miss_order_goes_to_threads(void **state)
{
	static const struct field_spec f[] = {{"long", "hits", NULL, 8, 8},
					      {"long", "misses", NULL, 8, 8},
					      {"char", "name", "[48]", 48, 1}};
	struct layout_struct *s = build("counters", f, 3);
	struct layout_reference refs[2] = {{.pc = 0x10, .field_index = 0, .write = true},
					   {.pc = 0x20, .field_index = 1, .write = true}};
	struct layout_sample samples[2] = {{.pc = 0x10, .count = 400, .tid = 1},
					   {.pc = 0x20, .count = 300, .tid = 2}};
	struct layout_program p = {.n_structs = 1, .structs = &s, .n_refs = 2, .refs = refs};
	struct layout_params params;
	struct layout_suggestion sg;

	(void)state;
	assert_int_equal(layout_annotate(&p, samples, 2, LAYOUT_ADJUST_THESIS), 0);
	/* both threads write their field of the same object */
	assert_int_equal(layout_struct_add_object_access(s, 0x2000, 0, 1, 400, true), 0);
	assert_int_equal(layout_struct_add_object_access(s, 0x2000, 1, 2, 300, true), 0);
	layout_struct_objects_finish(s);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	assert_int_equal(sg.sharing_before, 300);
	assert_int_equal(sg.sharing_after, 0);
	assert_int_equal(sg.benefit, 300);
	assert_string_equal(s->fields[sg.order[1]].name, "misses");
	assert_int_equal(sg.offsets[1], 64);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/*
 * Issue 17 B1: two threads writing the same fields of *different* objects
 * share no line. F must not pad the struct for them: sharing is judged per
 * object, so their sharing weight is 0 and the layout is kept; the same
 * counts on one object are sharing, and F separates them.
 */
static void test_sharing_is_judged_per_object(void **state)
{
	static const struct field_spec f[] = {{"long", "hits", NULL, 8, 8},
					      {"long", "misses", NULL, 8, 8},
					      {"char", "name", "[48]", 48, 1}};
	struct layout_struct *s = build("counters", f, 3);
	uint64_t counts[3] = {400, 300, 0};
	struct layout_params params;
	struct layout_suggestion sg;
	struct layout_false_sharing pair;
	uint32_t identity[3] = {0, 1, 2};

	(void)state;
	annotate_counts(s, counts);
	s->fields[0].n_threads = s->fields[1].n_threads = 1;
	s->fields[0].threads[0] = (struct layout_thread_weight){1, 400, 400};
	s->fields[1].threads[0] = (struct layout_thread_weight){2, 300, 300};
	/* thread 1 writes hits of the objects at 0x1000 and 0x1100, thread 2 misses of 0x2000 */
	assert_int_equal(layout_struct_add_object_access(s, 0x1000, 0, 1, 200, true), 0);
	assert_int_equal(layout_struct_add_object_access(s, 0x1100, 0, 1, 200, true), 0);
	assert_int_equal(layout_struct_add_object_access(s, 0x2000, 1, 2, 300, true), 0);
	layout_struct_objects_finish(s);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.sharing_before, 0);
	assert_int_not_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	assert_int_equal(sg.size, s->size);
	assert_true(sg.threads_considered);
	assert_int_equal(sg.threads_avoided, 0);
	assert_int_equal(layout_find_false_sharing(s, identity, NULL, &pair, 1), 0);
	layout_suggestion_clear(&sg);

	/*
	 * thread 2 also writes misses of 0x1000: 200 round trips of its line,
	 * 400 misses avoided, for a rise of the modelled misses from 400
	 * (one line) to 700 (hits and misses apart)
	 */
	assert_int_equal(layout_struct_add_object_access(s, 0x1000, 1, 2, 250, true), 0);
	layout_struct_objects_finish(s);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.sharing_before, 200);
	assert_int_equal(sg.threads_rise, 300);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	assert_int_equal(sg.sharing_after, 0);
	assert_int_equal(layout_find_false_sharing(s, identity, NULL, &pair, 1), 2);
	assert_int_equal(pair.weight, 200);
	assert_int_equal(pair.objects, 1);
	layout_suggestion_clear(&sg);

	/* 100 round trips would not pay for the 300 misses more that spreading costs */
	s->objects[1].weight = s->objects[1].writes = 100;
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.threads_avoided, 100);
	assert_int_not_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	layout_suggestion_clear(&sg);

	/* read-only on both sides: no line bounces, no sharing */
	for (size_t i = 0; i < s->n_objects; i++)
		s->objects[i].writes = 0;
	assert_int_equal(layout_sharing_weight(s, identity, NULL), 0);
	layout_struct_free(s);
}

/*
 * Issue 17 B3: a reorder is suggested only for a benefit above its noise,
 * and one that grows the struct only when the modelled misses drop.
 * `int a; int b; long c;` (16 bytes) with b hot, c warm: D's order b, c, a
 * takes 24 bytes and leaves the one line as hot as before.
 */
static void test_no_growth_without_benefit(void **state)
{
	static const struct field_spec f[] = {
	    {"int", "a", NULL, 4, 4}, {"int", "b", NULL, 4, 4}, {"long", "c", NULL, 8, 8}};
	struct layout_struct *s = build("small", f, 3);
	uint64_t grow[3] = {0, 10, 5}, noise[3] = {0, 3, 1};
	struct layout_params params;
	struct layout_suggestion sg;

	(void)state;
	layout_params_default(&params);
	annotate_counts(s, grow);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg.keep, LAYOUT_KEEP_WOULD_GROW);
	assert_int_equal(sg.rejected_size, 24);
	assert_int_equal(sg.size, 16);
	assert_int_equal(sg.benefit, 0);
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(sg.order[k], k);
	layout_suggestion_clear(&sg);

	/* E = 1 sample: below 2·√1, nothing is worth moving */
	layout_struct_free(s);
	s = build("small", f, 3);
	annotate_counts(s, noise);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg.keep, LAYOUT_KEEP_BELOW_NOISE);
	assert_int_equal(sg.rejected_saved, 1);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/* Apply constraint text to a program of one struct; returns the reader's result. */
static int constrain(struct layout_struct *s, const char *text, char *err, size_t err_size)
{
	struct layout_program p = {.n_structs = 1, .structs = &s};
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = layout_constraints_read(f, "c.txt", &p, NULL, err, err_size);
	fclose(f);
	return rc;
}

#define CONSTRAINTS_HEAD "lever-layout-constraints 1\n"

/*
 * Likely casts guessed from the types (issue 17): memcached's item and chunk
 * headers share their first fields' offsets and sizes (some names differ),
 * so those keep their offsets in both, while a field after them may still
 * move; a struct that only starts like them in one field is left alone; a
 * struct or union first member stays first; `unpin` undoes it.
 */
static void test_likely_casts_pinned(void **state)
{
	static const struct field_spec item[] = {
	    {"struct item *", "next", NULL, 8, 8}, {"struct item *", "prev", NULL, 8, 8},
	    {"int", "time", NULL, 4, 4},	   {"int", "nbytes", NULL, 4, 4},
	    {"long", "cold", NULL, 8, 8},	   {"long", "hot", NULL, 8, 8}};
	static const struct field_spec chunk[] = {{"struct chunk *", "next", NULL, 8, 8},
						  {"struct chunk *", "prev", NULL, 8, 8},
						  {"int", "size", NULL, 4, 4},
						  {"int", "nbytes", NULL, 4, 4},
						  {"char", "data", "[4]", 4, 1}};
	static const struct field_spec lone[] = {{"struct lone *", "next", NULL, 8, 8},
						 {"int", "a", NULL, 4, 4},
						 {"int", "b", NULL, 4, 4},
						 {"long", "c", NULL, 8, 8}};
	static const struct field_spec derived[] = {{"struct base", "base", NULL, 16, 8},
						    {"long", "x", NULL, 8, 8}};
	struct layout_struct *s[4] = {build("item", item, 6), build("chunk", chunk, 5),
				      build("lone", lone, 4), build("derived", derived, 2)};
	struct layout_program p = {.n_structs = 4, .structs = s};
	uint64_t counts[6] = {1, 1, 1, 1, 1, 500};
	struct layout_params params;
	struct layout_suggestion sg;
	char err[256];

	(void)state;
	assert_int_equal(layout_pin_likely_casts(&p, NULL), 0);
	for (size_t i = 0; i < 4; i++) {
		assert_true(s[0]->fields[i].pinned && s[0]->fields[i].at_offset);
		assert_true(s[1]->fields[i].pinned && s[1]->fields[i].at_offset);
	}
	assert_false(s[0]->fields[4].pinned || s[0]->fields[5].pinned);
	assert_false(s[1]->fields[4].pinned);
	for (size_t i = 0; i < 4; i++) /* item's first field only: not a shared header */
		assert_false(s[2]->fields[i].pinned);
	assert_true(s[3]->fields[0].pinned);
	assert_false(s[3]->fields[0].at_offset);

	/* the hot field moves ahead of the cold one, the header stays */
	annotate_counts(s[0], counts);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s[0], &params, &sg), 0);
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(sg.order[k], k);
	assert_int_equal(sg.order[4], 5);
	layout_suggestion_clear(&sg);

	assert_int_equal(constrain(s[0], CONSTRAINTS_HEAD "unpin item\n", err, sizeof(err)), 0);
	for (size_t i = 0; i < s[0]->n_fields; i++)
		assert_false(s[0]->fields[i].pinned || s[0]->fields[i].at_offset);
	assert_int_equal(constrain(s[0], CONSTRAINTS_HEAD "unpin item now\n", err, sizeof(err)),
			 -1);
	assert_string_equal(err, "c.txt:2: expected: unpin STRUCT");
	for (size_t i = 0; i < 4; i++)
		layout_struct_free(s[i]);
}

/*
 * Issue 17 ABI constraints: a `keep` struct is reported but never
 * reordered, with the file's reason; `fixed` keeps a field's offset (D's
 * order that would move it is refused), `first`/`last` keep a field where
 * it is; bad files give FILE:LINE errors.
 */
static void test_constraint_file(void **state)
{
	uint64_t counts[4] = {111, 15, 19, 128};
	struct layout_struct *s = build("foo", table_3_2, 4);
	struct layout_params params;
	struct layout_suggestion sg;
	char err[256];

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	assert_int_equal(constrain(s,
				   CONSTRAINTS_HEAD "# on-disk header\n\n"
						    "keep foo written to disk by v1 tools\n"
						    "keep absent\n",
				   err, sizeof(err)),
			 0);
	assert_string_equal(s->frozen, "c.txt:4 says so: written to disk by v1 tools");
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg.keep, LAYOUT_KEEP_FROZEN);
	assert_int_equal(sg.benefit, 0);
	assert_int_equal(sg.rejected_saved, 145); /* what it would have saved, reported */
	assert_int_equal(sg.size, 32);
	layout_suggestion_clear(&sg);
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "reorder foo\n", err, sizeof(err)), 0);
	assert_null(s->frozen);

	/* b fixed at 8: D goes around it (d b a c), b stays at 8 */
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "fixed foo b\n", err, sizeof(err)), 0);
	assert_true(s->fields[1].pinned && s->fields[1].at_offset);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_MISSES);
	assert_int_equal(sg.order[1], 1);
	assert_int_equal(sg.offsets[1], 8);
	layout_suggestion_clear(&sg);

	assert_int_equal(
	    constrain(s, CONSTRAINTS_HEAD "first foo a\nlast foo d\n", err, sizeof(err)), 0);
	assert_true(s->fields[0].pinned && s->fields[3].pinned);

	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "first foo c\n", err, sizeof(err)), -1);
	assert_string_equal(err,
			    "c.txt:2: c is not where the constraint keeps it: `first` and `last` "
			    "keep a field where it is (first)");
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "fixed foo zz\n", err, sizeof(err)), -1);
	assert_string_equal(err, "c.txt:2: struct foo has no field zz");
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "pin foo a\n", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.txt:2: unknown constraint 'pin'"));
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "fixed foo\n", err, sizeof(err)), -1);
	assert_string_equal(err, "c.txt:2: expected: fixed STRUCT FIELD");
	assert_int_equal(constrain(s, "keep foo\n", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.txt:1: not a constraint file"));
	assert_int_equal(constrain(s, "lever-layout-constraints 9\n", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.txt:1: version 9"));
	assert_int_equal(constrain(s, "", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.txt:1: empty"));
	layout_struct_free(s);
}

/*
 * `fixed` keeps the offset, not only the position: `char x; int y; char z;
 * long w` with z hot puts z and x before y, and w (pinned at position 3)
 * would move from 16 to 8 — refused, and said why.
 */
static void test_fixed_offset_refuses_moving_it(void **state)
{
	static const struct field_spec f[] = {{"char", "x", NULL, 1, 1},
					      {"int", "y", NULL, 4, 4},
					      {"char", "z", NULL, 1, 1},
					      {"long", "w", NULL, 8, 8}};
	uint64_t counts[4] = {5, 0, 50, 0};
	struct layout_struct *s = build("pad", f, 4);
	struct layout_params params;
	struct layout_suggestion sg;
	char err[256];

	(void)state;
	annotate_counts(s, counts);
	layout_params_default(&params);
	assert_int_equal(layout_pin_field(s, "w"), 0); /* a record's `pinned`: position only */
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_MISSES);
	assert_int_equal(sg.offsets[3], 8);
	layout_suggestion_clear(&sg);
	assert_int_equal(constrain(s, CONSTRAINTS_HEAD "fixed pad w\n", err, sizeof(err)), 0);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg.keep, LAYOUT_KEEP_MOVES_FIXED);
	assert_int_equal(sg.moved_field, 3);
	assert_int_equal(sg.offsets[3], 16);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/* A struct the code of a shared object references keeps its layout: that library's ABI. */
static void test_struct_shared_with_a_library(void **state)
{
	uint64_t counts[4] = {111, 15, 19, 128};
	struct layout_struct *s = build("foo", table_3_2, 4);
	struct layout_reference refs[2] = {{.pc = 0x10, .field_index = 0},
					   {.pc = LAYOUT_MODULE_PC(1, 0x20), .field_index = 3}};
	struct layout_module modules[2] = {{.path = "/bin/prog", .build_id = ""},
					   {.path = "/lib/libfoo.so", .build_id = ""}};
	struct layout_record rec = {.program = {.n_structs = 1, .structs = &s, .refs = refs},
				    .modules = modules};
	struct layout_params params;
	struct layout_suggestion sg;

	(void)state;
	annotate_counts(s, counts);
	rec.program.n_refs = 1; /* the program's code only */
	rec.n_modules = 2;
	assert_int_equal(layout_mark_shared_structs(&rec), 0);
	assert_null(s->frozen);
	rec.program.n_refs = 2;
	assert_int_equal(layout_mark_shared_structs(&rec), 0);
	assert_non_null(s->frozen);
	assert_non_null(strstr(s->frozen, "the code of /lib/libfoo.so uses it"));
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg.keep, LAYOUT_KEEP_FROZEN);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/* G: the ranked list, the cut-off, and no benefit for "leave it as is". */
static void test_rank_and_threshold(void **state)
{
	static const uint64_t big[4] = {111, 15, 19, 128};
	static const uint64_t ordered[4] = {40, 30, 20, 0};
	struct layout_struct *a = build("zeta", table_3_2, 4);
	struct layout_struct *b = build("alpha", table_3_2, 4);
	struct layout_params params;
	struct layout_suggestion sg[2];

	(void)state;
	annotate_counts(a, big);
	annotate_counts(b, ordered); /* already in miss order */
	layout_params_default(&params);
	assert_int_equal(layout_suggest(b, &params, &sg[0]), 0);
	assert_int_equal(layout_suggest(a, &params, &sg[1]), 0);
	assert_int_equal(sg[0].algorithm, LAYOUT_ALGO_ORIGINAL);
	assert_int_equal(sg[0].benefit, 0);
	assert_int_equal(sg[0].saved, 50);
	assert_int_equal(layout_rank(sg, 2, &params), 1);
	assert_string_equal(sg[0].s->name, "zeta");
	params.threshold = 145; /* "saved more than" the cut-off */
	assert_int_equal(layout_rank(sg, 2, &params), 0);
	layout_suggestion_clear(&sg[0]);
	layout_suggestion_clear(&sg[1]);
	layout_struct_free(a);
	layout_struct_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_checks_offsets_and_flexible_member),
	    cmocka_unit_test(test_place_pads_and_rounds),
	    cmocka_unit_test(test_thesis_table_3_2_vector),
	    cmocka_unit_test(test_twelve_field_vector),
	    cmocka_unit_test(test_alphabet_block_adjustment_thesis),
	    cmocka_unit_test(test_alphabet_block_adjustment_repo_quirks),
	    cmocka_unit_test(test_adjust_none_is_algorithm_2_only),
	    cmocka_unit_test(test_annotate_refuses_bad_reference),
	    cmocka_unit_test(test_ordering_aware_tolerance),
	    cmocka_unit_test(test_pack_holes_with_cold_fields),
	    cmocka_unit_test(test_constraints_flexible_and_pinned),
	    cmocka_unit_test(test_thread_example_separates_lines),
	    cmocka_unit_test(test_false_sharing_pair_in_miss_order_goes_to_threads),
	    cmocka_unit_test(test_sharing_is_judged_per_object),
	    cmocka_unit_test(test_no_growth_without_benefit),
	    cmocka_unit_test(test_constraint_file),
	    cmocka_unit_test(test_likely_casts_pinned),
	    cmocka_unit_test(test_fixed_offset_refuses_moving_it),
	    cmocka_unit_test(test_struct_shared_with_a_library),
	    cmocka_unit_test(test_rank_and_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
