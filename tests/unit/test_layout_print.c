/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/layout output: the pahole-style annotated layout (offsets, sizes,
 * holes, padding, cache-line markers, samples beside), the suggested
 * struct (by misses, and by threads with aligned(64) group starts), the
 * ranked list, checked against golden text; the suggested struct pasted
 * into C gets the printed offsets; the JSON report parsed with jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "layout/layout.h"

static const char foo_annotated[] =
    "/* foo: 273 samples; raw = at the field, adj = with its basic blocks */\n"
    "struct foo {\n"
    "\tlong long                  a;                    /*     0     8 */ /* raw      111 adj      "
    "111 */\n"
    "\tstruct bar *               b;                    /*     8     8 */ /* raw       15 adj      "
    " 15 */\n"
    "\tuint64_t                   c;                    /*    16     8 */ /* raw       19 adj      "
    " 19 */\n"
    "\tint                        d;                    /*    24     4 */ /* raw      128 adj      "
    "128 */\n"
    "\n"
    "\t/* size: 32, cachelines: 1, members: 4 */\n"
    "\t/* padding: 4 */\n"
    "\t/* last cacheline: 32 bytes */\n"
    "};\n";

static const char foo_suggested[] =
    "/* foo, suggested by misses: saves 145 samples (estimate E; 162 on the original order), "
    "modelled samples 128 -> 128, size 32 -> 32 */\n"
    "struct foo {\n"
    "\tint                        d;                    /*     0     4 */\n"
    "\n"
    "\t/* XXX 4 bytes hole, try to pack */\n"
    "\n"
    "\tlong long                  a;                    /*     8     8 */\n"
    "\tuint64_t                   c;                    /*    16     8 */\n"
    "\tstruct bar *               b;                    /*    24     8 */\n"
    "\n"
    "\t/* size: 32, cachelines: 1, members: 4 */\n"
    "\t/* sum members: 28, holes: 1, sum holes: 4 */\n"
    "\t/* last cacheline: 32 bytes */\n"
    "};\n";

static const char foo_ranking[] = "In struct foo you will save 145 samples (by misses)\n";

static const char conn_annotated[] =
    "/* conn: 0 samples; raw = at the field, adj = with its basic blocks */\n"
    "struct conn {\n"
    "\tchar                       state;                /*     0     1 */ /* raw        0 adj      "
    "  0 */\n"
    "\n"
    "\t/* XXX 7 bytes hole, try to pack */\n"
    "\n"
    "\tlong                       hits;                 /*     8     8 */ /* raw       40 adj      "
    " 40 */\n"
    "\tchar                       buf[60];              /*    16    60 */ /* raw        0 adj      "
    "  0 */\n"
    "\t/* --- cacheline 1 boundary (64 bytes) was 12 bytes ago --- */\n"
    "\tint                        fd;                   /*    76     4 */ /* raw       50 adj      "
    " 50 */\n"
    "\tlong                       misses;               /*    80     8 */ /* raw       30 adj      "
    " 30 */\n"
    "\tlong                       gets;                 /*    88     8 */ /* raw       30 adj      "
    " 30 */\n"
    "\tunsigned char              data[];               /*    96     0 */ /* raw        0 adj      "
    "  0 */\n"
    "\n"
    "\t/* size: 96, cachelines: 2, members: 7 */\n"
    "\t/* sum members: 89, holes: 1, sum holes: 7 */\n"
    "\t/* last cacheline: 32 bytes */\n"
    "};\n";

static const char conn_suggested[] =
    "/* conn, suggested by threads: saves 70 samples (estimate E; 100 on the original order), "
    "modelled samples 90 -> 80, size 96 -> 192 */\n"
    "/* cross-thread sharing per object 50 -> 0 samples: each thread group starts a cache line "
    "*/\n"
    "struct conn {\n"
    "\tint                        fd __attribute__((aligned(64))); /*     0     4 */\n"
    "\n"
    "\t/* XXX 4 bytes hole, try to pack */\n"
    "\n"
    "\tlong                       hits;                 /*     8     8 */\n"
    "\n"
    "\t/* XXX 48 bytes hole, try to pack */\n"
    "\n"
    "\t/* --- cacheline 1 boundary (64 bytes) --- */\n"
    "\tlong                       misses __attribute__((aligned(64))); /*    64     8 */\n"
    "\tlong                       gets;                 /*    72     8 */\n"
    "\n"
    "\t/* XXX 48 bytes hole, try to pack */\n"
    "\n"
    "\t/* --- cacheline 2 boundary (128 bytes) --- */\n"
    "\tchar                       state __attribute__((aligned(64))); /*   128     1 */\n"
    "\tchar                       buf[60];              /*   129    60 */\n"
    "\tunsigned char              data[];               /*   189     0 */\n"
    "\n"
    "\t/* size: 192, cachelines: 3, members: 7 */\n"
    "\t/* sum members: 89, holes: 3, sum holes: 100 */\n"
    "\t/* padding: 3 */\n"
    "};\n";

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *capture_begin(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *capture_end(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

static void add(struct layout_struct *s, const char *type, const char *name, const char *suffix,
		uint32_t size, uint32_t align)
{
	uint32_t end = 0;

	if (s->n_fields)
		end = s->fields[s->n_fields - 1].offset + s->fields[s->n_fields - 1].size;
	end = (end + align - 1) / align * align;
	assert_int_equal(layout_struct_add_field(s, type, name, suffix, end, size, align), 0);
}

static void set_counts(struct layout_field *f, uint64_t n, uint32_t tid, uint64_t writes)
{
	f->raw = f->adj = n;
	if (tid) {
		f->n_threads = 1;
		f->threads[0] = (struct layout_thread_weight){tid, n, writes};
	}
}

/* Thesis Table 3.2 with its counts. */
static struct layout_struct *foo(void)
{
	struct layout_struct *s = layout_struct_new("foo");

	add(s, "long long", "a", NULL, 8, 8);
	add(s, "struct bar *", "b", NULL, 8, 8);
	add(s, "uint64_t", "c", NULL, 8, 8);
	add(s, "int", "d", NULL, 4, 4);
	assert_int_equal(layout_struct_finish(s), 0);
	set_counts(&s->fields[0], 111, 0, 0);
	set_counts(&s->fields[1], 15, 0, 0);
	set_counts(&s->fields[2], 19, 0, 0);
	set_counts(&s->fields[3], 128, 0, 0);
	s->total_raw = 273;
	return s;
}

/* Holes, a field across a line boundary, a flexible member, two writer threads. */
static struct layout_struct *conn(void)
{
	struct layout_struct *s = layout_struct_new("conn");

	add(s, "char", "state", NULL, 1, 1);
	add(s, "long", "hits", NULL, 8, 8);
	add(s, "char", "buf", "[60]", 60, 1);
	add(s, "int", "fd", NULL, 4, 4);
	add(s, "long", "misses", NULL, 8, 8);
	add(s, "long", "gets", NULL, 8, 8);
	add(s, "unsigned char", "data", "[]", 0, 1);
	assert_int_equal(layout_struct_finish(s), 0);
	set_counts(&s->fields[1], 40, 1, 0);
	set_counts(&s->fields[3], 50, 1, 50);
	set_counts(&s->fields[4], 30, 2, 30);
	set_counts(&s->fields[5], 30, 2, 30);
	/* all on the object at 0x1000 */
	for (uint32_t i = 0; i < s->n_fields; i++)
		if (s->fields[i].n_threads)
			assert_int_equal(layout_struct_add_object_access(
					     s, 0x1000, i, s->fields[i].threads[0].tid,
					     s->fields[i].raw, s->fields[i].threads[0].writes > 0),
					 0);
	layout_struct_objects_finish(s);
	return s;
}

static void test_annotated_table_3_2(void **state)
{
	struct layout_struct *s = foo();
	struct capture c;

	(void)state;
	layout_print_annotated(capture_begin(&c), s, NULL);
	assert_string_equal(capture_end(&c), foo_annotated);
	free(c.text);
	layout_struct_free(s);
}

static void test_suggestion_and_ranking_table_3_2(void **state)
{
	struct layout_struct *s = foo();
	struct layout_params params;
	struct layout_suggestion sg;
	struct layout_units u;
	struct capture c;

	(void)state;
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	layout_print_suggestion(capture_begin(&c), &sg, NULL);
	assert_string_equal(capture_end(&c), foo_suggested);
	free(c.text);
	layout_print_ranking(capture_begin(&c), &sg, 1, NULL);
	assert_string_equal(capture_end(&c), foo_ranking);
	free(c.text);
	/* the thesis's interval: samples × 16384 */
	layout_units_for(NULL, 16384, &u);
	layout_print_ranking(capture_begin(&c), &sg, 1, &u);
	assert_string_equal(capture_end(&c), "In struct foo you will save 145 samples (by "
					     "misses; about 2.376e+06 events at period 16384)\n");
	free(c.text);
	/* issue 17 B4: each source's counts by what it measures */
	layout_units_for("pmu", 16384, &u);
	layout_print_ranking(capture_begin(&c), &sg, 1, &u);
	assert_string_equal(capture_end(&c), "In struct foo you will save 145 sampled misses (by "
					     "misses; about 2.376e+06 misses at period 16384)\n");
	free(c.text);
	layout_units_for("clock", 1000000, &u);
	layout_print_ranking(capture_begin(&c), &sg, 1, &u);
	assert_string_equal(capture_end(&c), "In struct foo you will save 145 samples (by misses; "
					     "about 1.45e+08 ns of CPU time at period 1000000)\n");
	free(c.text);
	layout_print_suggestion(capture_begin(&c), &sg, &u);
	assert_non_null(strstr(capture_end(&c),
			       "saves 145 samples (estimate E; 162 on the original "
			       "order), modelled samples 128 -> 128"));
	free(c.text);
	layout_units_for("instr", 64, &u);
	layout_print_suggestion(capture_begin(&c), &sg, &u);
	assert_non_null(strstr(capture_end(&c),
			       "saves 145 simulated misses (estimate E; 162 on the "
			       "original order), modelled simulated misses "
			       "128 -> 128"));
	free(c.text);
	layout_print_annotated(capture_begin(&c), s, &u);
	assert_non_null(strstr(capture_end(&c), "/* foo: 273 simulated misses; raw"));
	free(c.text);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

static void test_annotated_holes_boundaries_flexible(void **state)
{
	struct layout_struct *s = conn();
	struct capture c;

	(void)state;
	layout_print_annotated(capture_begin(&c), s, NULL);
	assert_string_equal(capture_end(&c), conn_annotated);
	free(c.text);
	layout_struct_free(s);
}

/* The printed suggestion, pasted into C: the compiler agrees with its offsets. */
struct conn_pasted {
	int fd __attribute__((aligned(64)));
	long hits;
	long misses __attribute__((aligned(64)));
	long gets;
	char state __attribute__((aligned(64)));
	char buf[60];
	unsigned char data[];
};

static void test_thread_suggestion_pastes(void **state)
{
	struct layout_struct *s = conn();
	struct layout_params params;
	struct layout_suggestion sg;
	struct capture c;

	(void)state;
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.algorithm, LAYOUT_ALGO_THREADS);
	layout_print_suggestion(capture_begin(&c), &sg, NULL);
	assert_string_equal(capture_end(&c), conn_suggested);
	free(c.text);
	assert_int_equal(sg.offsets[1], offsetof(struct conn_pasted, hits));
	assert_int_equal(sg.offsets[2], offsetof(struct conn_pasted, misses));
	assert_int_equal(sg.offsets[3], offsetof(struct conn_pasted, gets));
	assert_int_equal(sg.offsets[4], offsetof(struct conn_pasted, state));
	assert_int_equal(sg.offsets[5], offsetof(struct conn_pasted, buf));
	assert_int_equal(sg.offsets[6], offsetof(struct conn_pasted, data));
	assert_int_equal(sg.size, sizeof(struct conn_pasted));
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

/* fd (thread 1 writes) shares line 1 with misses and gets (thread 2 writes). */
static void test_false_sharing_report(void **state)
{
	struct layout_struct *s = conn();
	struct layout_params params;
	struct layout_suggestion sg;
	struct layout_false_sharing pairs[2];
	struct capture c;

	(void)state;
	layout_params_default(&params);
	layout_print_false_sharing(capture_begin(&c), s, &params, NULL);
	assert_string_equal(
	    capture_end(&c),
	    "/* false sharing in conn, cacheline 1: fd written by thread 1, misses "
	    "used by thread 2 (30 samples in 1 object) */\n"
	    "/* false sharing in conn, cacheline 1: fd written by thread 1, gets used "
	    "by thread 2 (30 samples in 1 object) */\n"
	    "/* false sharing in conn, cacheline 1: misses written by thread 2, fd "
	    "used by thread 1 (30 samples in 1 object) */\n"
	    "/* false sharing in conn, cacheline 1: gets written by thread 2, fd used "
	    "by thread 1 (30 samples in 1 object) */\n");
	free(c.text);
	/* issue 17 B2: below the significance rule, pairs are counted, not listed */
	params.sharing_min_samples = 31;
	layout_print_false_sharing(capture_begin(&c), s, &params, NULL);
	assert_string_equal(capture_end(&c),
			    "/* 4 false-sharing pairs in conn left out (120 samples in all): below "
			    "31 samples or 1% of the struct's (--sharing-min-samples, "
			    "--sharing-min-share), or past the first 64 */\n");
	free(c.text);
	params.sharing_min_samples = 0;
	s->total_raw = 3001; /* 30 is under 1% of it */
	layout_print_false_sharing(capture_begin(&c), s, &params, NULL);
	assert_non_null(strstr(capture_end(&c), "4 false-sharing pairs in conn left out"));
	free(c.text);
	s->total_raw = 0;
	/* hits is only read by thread 1: alone on line 0 it shares nothing */
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(layout_find_false_sharing(s, sg.order, sg.line_start, pairs, 2), 0);
	/* max bounds what is filled, not what is counted */
	for (size_t i = 0; i < s->n_fields; i++)
		sg.order[i] = (uint32_t)i;
	assert_int_equal(layout_find_false_sharing(s, sg.order, NULL, pairs, 2), 4);
	assert_int_equal(pairs[1].other_field, 5);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

static void test_keep_original_says_so(void **state)
{
	struct layout_struct *s = foo();
	struct layout_params params;
	struct layout_suggestion sg;
	struct capture c;

	(void)state;
	/* now already in miss order: 111, 15, 10, 1 */
	set_counts(&s->fields[2], 10, 0, 0);
	set_counts(&s->fields[3], 1, 0, 0);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	layout_print_suggestion(capture_begin(&c), &sg, NULL);
	assert_string_equal(capture_end(&c), "/* foo: keep the current layout: it is already in "
					     "miss order (estimate E 26 samples) */\n");
	free(c.text);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

static void test_json_report(void **state)
{
	struct layout_struct *s[2] = {foo(), conn()};
	struct layout_params params;
	struct layout_suggestion sg[2];
	struct capture c;
	struct layout_units u;
	json_error_t error;
	json_t *root, *structs, *first, *order;

	(void)state;
	layout_params_default(&params);
	for (int i = 0; i < 2; i++)
		assert_int_equal(layout_suggest(s[i], &params, &sg[i]), 0);
	layout_units_for("clock", 16384, &u);
	layout_write_json(capture_begin(&c), sg, 2, &u);
	root = json_loads(capture_end(&c), 0, &error);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "format")),
			    "lever-layout-report");
	assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "period")), 16384);
	assert_string_equal(json_string_value(json_object_get(root, "source")), "clock");
	assert_string_equal(json_string_value(json_object_get(root, "unit")), "samples");
	assert_string_equal(json_string_value(json_object_get(root, "period_unit")),
			    "ns of CPU time");
	structs = json_object_get(root, "structs");
	assert_int_equal(json_array_size(structs), 2);
	first = json_array_get(structs, 0);
	assert_string_equal(json_string_value(json_object_get(first, "struct")), "foo");
	assert_int_equal(json_integer_value(json_object_get(
			     json_array_get(json_object_get(first, "fields"), 3), "raw")),
			 128);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(first, "suggestion"), "saved")),
	    145);
	order = json_object_get(json_object_get(first, "suggestion"), "order");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 0), "name")),
			    "d");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(order, 3), "offset")),
			 24);
	order = json_object_get(json_object_get(json_array_get(structs, 1), "suggestion"), "order");
	assert_true(json_is_true(json_object_get(json_array_get(order, 2), "line_start")));
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_array_get(
		    json_object_get(
			json_array_get(json_object_get(json_array_get(structs, 1), "fields"), 3),
			"threads"),
		    0),
		"writes")),
	    50);
	json_decref(root);
	free(c.text);
	for (int i = 0; i < 2; i++) {
		layout_suggestion_clear(&sg[i]);
		layout_struct_free(s[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_annotated_table_3_2),
	    cmocka_unit_test(test_suggestion_and_ranking_table_3_2),
	    cmocka_unit_test(test_annotated_holes_boundaries_flexible),
	    cmocka_unit_test(test_thread_suggestion_pastes),
	    cmocka_unit_test(test_false_sharing_report),
	    cmocka_unit_test(test_keep_original_says_so),
	    cmocka_unit_test(test_json_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
