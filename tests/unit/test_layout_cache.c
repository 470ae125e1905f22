/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/layout cache model (spec autocpa.md §8.4) against answers computed by
 * hand: cold misses and a straddling access, LRU conflict misses in a tiny
 * cache, read sharing without invalidation, a false-sharing pair (two
 * cores writing different bytes of one line) and a true-sharing pair (the
 * same bytes), per-field counts, and bad configurations and events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "layout/layout.h"

/* One set of two ways in L1, one set of four in L2, a roomy LLC. */
static struct layout_cache *tiny_cache(uint32_t cores)
{
	struct layout_cache_config c = {
	    .cores = cores,
	    .l1 = {128, 2},
	    .l2 = {256, 4},
	    .llc = {64 * 1024, 16},
	};
	struct layout_cache *m = layout_cache_new(&c);

	assert_non_null(m);
	return m;
}

static void touch(struct layout_cache *m, uint32_t core, uint64_t addr, uint32_t size, bool write,
		  int32_t field)
{
	struct layout_cache_event e = {.core = core,
				       .addr = addr,
				       .size = size,
				       .write = write,
				       .struct_index = field < 0 ? -1 : 0,
				       .field_index = field};

	assert_int_equal(layout_cache_access(m, &e), 0);
}

static void test_cold_misses_and_straddling(void **state)
{
	struct layout_cache_config c;
	struct layout_cache *m;
	const struct layout_cache_counts *t;

	(void)state;
	layout_cache_config_default(&c);
	m = layout_cache_new(&c);
	assert_non_null(m);
	touch(m, 0, 0x1000, 8, false, -1);  /* cold in every level */
	touch(m, 0, 0x1008, 8, false, -1);  /* same line: hit */
	touch(m, 0, 0x1038, 16, false, -1); /* 0x1038..0x1047: hit + cold miss */
	t = layout_cache_totals(m);
	assert_int_equal(t->accesses, 3);
	assert_int_equal(t->l1_load_miss, 2);
	assert_int_equal(t->l2_miss, 2);
	assert_int_equal(t->llc_miss, 2);
	assert_int_equal(t->cold_miss, 2);
	assert_int_equal(t->l1_store_miss, 0);
	assert_int_equal(t->coherence_miss, 0);
	/* another core: cold for it, but the shared LLC has the line */
	touch(m, 1, 0x1000, 8, false, -1);
	assert_int_equal(t->l1_load_miss, 3);
	assert_int_equal(t->l2_miss, 3);
	assert_int_equal(t->llc_miss, 2);
	assert_int_equal(t->cold_miss, 3);
	layout_cache_free(m);
}

static void test_conflict_misses_lru(void **state)
{
	struct layout_cache *m = tiny_cache(1);
	const struct layout_cache_counts *t = layout_cache_totals(m);

	(void)state;
	/* lines A, B, C in L1's single 2-way set: C evicts A (least recently used) */
	touch(m, 0, 0 * 64, 8, false, -1);
	touch(m, 0, 1 * 64, 8, false, -1);
	touch(m, 0, 2 * 64, 8, false, -1);
	assert_int_equal(t->l1_load_miss, 3);
	touch(m, 0, 1 * 64, 8, false, -1); /* B: still there, now most recent */
	assert_int_equal(t->l1_load_miss, 3);
	touch(m, 0, 0 * 64, 8, false, -1); /* A: conflict miss, evicts C; L2 hit */
	assert_int_equal(t->l1_load_miss, 4);
	assert_int_equal(t->cold_miss, 3);
	assert_int_equal(t->l2_miss, 3);
	touch(m, 0, 1 * 64, 8, false, -1); /* B: hit (A evicted C, not B) */
	touch(m, 0, 2 * 64, 8, false, -1); /* C: miss, L2 hit */
	assert_int_equal(t->l1_load_miss, 5);
	assert_int_equal(t->l2_miss, 3);
	assert_int_equal(t->llc_miss, 3);
	assert_int_equal(t->coherence_miss, 0);
	layout_cache_free(m);
}

static void test_read_sharing_keeps_copies(void **state)
{
	struct layout_cache *m = tiny_cache(2);
	const struct layout_cache_counts *t = layout_cache_totals(m);

	(void)state;
	touch(m, 0, 0x40, 8, false, -1);
	touch(m, 1, 0x40, 8, false, -1);
	touch(m, 0, 0x40, 8, false, -1);
	touch(m, 1, 0x40, 8, false, -1);
	assert_int_equal(t->l1_load_miss, 2);
	assert_int_equal(t->inval, 0);
	assert_int_equal(t->hitm, 0);
	/* a write invalidates the reader, and a read of the written line is a HITM */
	touch(m, 0, 0x40, 8, true, -1);
	assert_int_equal(t->inval, 1);
	touch(m, 1, 0x40, 8, false, -1);
	assert_int_equal(t->hitm, 1); /* none on the write: core 1 held it Shared */
	assert_int_equal(t->true_sharing_miss, 1);
	layout_cache_free(m);
}

/* Two cores alternately write fields a (bytes 0–7) and b (8–15) of one line. */
static void ping_pong(struct layout_cache *m, uint32_t offset_b, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		touch(m, 0, 0x1000, 8, true, 0);
		touch(m, 1, 0x1000 + offset_b, 8, true, offset_b ? 1 : 0);
	}
}

static void test_false_sharing_pair(void **state)
{
	struct layout_cache *m = tiny_cache(2);
	const struct layout_cache_counts *t = layout_cache_totals(m);
	struct layout_cache_counts a, b;

	(void)state;
	ping_pong(m, 8, 3);
	/* 6 store misses: 2 cold, then every write finds the line stolen */
	assert_int_equal(t->l1_store_miss, 6);
	assert_int_equal(t->cold_miss, 2);
	assert_int_equal(t->coherence_miss, 4);
	assert_int_equal(t->false_sharing_miss, 4);
	assert_int_equal(t->true_sharing_miss, 0);
	/* each write but the first invalidates the other core's Modified copy */
	assert_int_equal(t->inval, 5);
	assert_int_equal(t->hitm, 5);
	a = layout_cache_field_counts(m, 0, 0);
	b = layout_cache_field_counts(m, 0, 1);
	assert_int_equal(a.accesses, 3);
	assert_int_equal(a.false_sharing_miss, 2);
	assert_int_equal(a.cold_miss, 1);
	assert_int_equal(b.accesses, 3);
	assert_int_equal(b.false_sharing_miss, 2);
	assert_int_equal(layout_cache_field_counts(m, 0, 2).accesses, 0);
	layout_cache_free(m);

	/* the same pair 64 bytes apart: separate lines, no sharing at all */
	m = tiny_cache(2);
	t = layout_cache_totals(m);
	ping_pong(m, 64, 3);
	assert_int_equal(t->l1_store_miss, 2);
	assert_int_equal(t->coherence_miss, 0);
	assert_int_equal(t->inval, 0);
	layout_cache_free(m);
}

static void test_true_sharing_pair(void **state)
{
	struct layout_cache *m = tiny_cache(2);
	const struct layout_cache_counts *t = layout_cache_totals(m);

	(void)state;
	ping_pong(m, 0, 3);
	assert_int_equal(t->l1_store_miss, 6);
	assert_int_equal(t->coherence_miss, 4);
	assert_int_equal(t->true_sharing_miss, 4);
	assert_int_equal(t->false_sharing_miss, 0);
	assert_int_equal(layout_cache_field_counts(m, 0, 0).true_sharing_miss, 4);
	layout_cache_free(m);
}

/* A line a core evicted is no longer its: a later write elsewhere invalidates nothing. */
static void test_eviction_leaves_sharer_set(void **state)
{
	struct layout_cache *m = tiny_cache(2);
	const struct layout_cache_counts *t = layout_cache_totals(m);

	(void)state;
	touch(m, 0, 0, 8, false, -1);
	for (uint64_t line = 1; line <= 4; line++) /* push line 0 out of L1 and L2 */
		touch(m, 0, line * 64, 8, false, -1);
	touch(m, 1, 0, 8, true, -1);
	assert_int_equal(t->inval, 0);
	touch(m, 0, 0, 8, false, -1); /* a replacement miss, not coherence */
	assert_int_equal(t->coherence_miss, 0);
	assert_int_equal(t->hitm, 1);
	layout_cache_free(m);
}

static void test_bad_configuration_and_events(void **state)
{
	struct layout_cache_config c;
	struct layout_cache *m;
	struct layout_cache_event e = {.core = 2, .addr = 0, .size = 8, .struct_index = -1};

	(void)state;
	layout_cache_config_default(&c);
	c.cores = 0;
	assert_null(layout_cache_new(&c));
	c.cores = 65;
	assert_null(layout_cache_new(&c));
	c.cores = 2;
	c.l1.size = 100; /* not a multiple of ways × 64 */
	assert_null(layout_cache_new(&c));
	c.l1.size = 32 * 1024;
	c.l2.ways = 0;
	assert_null(layout_cache_new(&c));
	c.l2.ways = 4;
	m = layout_cache_new(&c);
	assert_non_null(m);
	assert_int_equal(layout_cache_access(m, &e), -1); /* core 2 of 2 */
	e.core = 1;
	e.size = 0;
	assert_int_equal(layout_cache_access(m, &e), -1);
	e.size = 8;
	e.addr = UINT64_MAX - 3; /* wraps */
	assert_int_equal(layout_cache_access(m, &e), -1);
	assert_int_equal(layout_cache_totals(m)->accesses, 0);
	layout_cache_free(m);
}

/* Many lines: the directory grows and keeps every line's state. */
static void test_directory_growth(void **state)
{
	struct layout_cache_config c;
	struct layout_cache *m;
	const struct layout_cache_counts *t;

	(void)state;
	layout_cache_config_default(&c);
	c.cores = 2;
	m = layout_cache_new(&c);
	assert_non_null(m);
	t = layout_cache_totals(m);
	for (uint64_t line = 0; line < 5000; line++)
		touch(m, 0, line * 64, 8, true, -1);
	for (uint64_t line = 0; line < 5000; line++)
		touch(m, 1, line * 64 + 8, 8, true, -1);
	assert_int_equal(t->cold_miss, 10000);
	/* core 0 still holds the last 4096 lines in its L2 (its L1's 512 are among them) */
	assert_int_equal(t->inval, 4096);
	for (uint64_t line = 4999; line >= 4990; line--)
		touch(m, 0, line * 64, 8, false, -1);
	assert_int_equal(t->false_sharing_miss, 10);
	layout_cache_free(m);
}

/* Many (struct, field) pairs: each keeps its own counts as the table grows. */
static void test_many_field_counters(void **state)
{
	struct layout_cache *m = tiny_cache(1);

	(void)state;
	for (int32_t st = 0; st < 10; st++)
		for (int32_t f = 0; f < 30; f++)
			for (int32_t k = 0; k <= f % 3; k++) {
				struct layout_cache_event e = {.addr = (uint64_t)(st * 30 + f) * 64,
							       .size = 4,
							       .struct_index = st,
							       .field_index = f};
				assert_int_equal(layout_cache_access(m, &e), 0);
			}
	for (uint32_t st = 0; st < 10; st++)
		for (uint32_t f = 0; f < 30; f++) {
			struct layout_cache_counts c = layout_cache_field_counts(m, st, f);
			assert_int_equal(c.accesses, f % 3 + 1);
			assert_int_equal(c.cold_miss, 1);
		}
	assert_int_equal(layout_cache_field_counts(m, 10, 0).accesses, 0);
	layout_cache_free(m);
}

/*
 * The pipeline against the model: 1024 line-aligned objects of twelve
 * 8-byte fields; one basic block reads f2, f8 and f9 of each object, four
 * sweeps, more lines than L1 holds. The model's L1 misses per field become
 * the samples (period 1); the suggestion, applied, must cut the model's
 * misses by estimator E: the original misses f2's line and f8's (f9 hits
 * behind f8); Algorithm 3 credits f9 with f8's misses, D puts f2, f8, f9 in
 * one line, E = raw(f8) + raw(f9) = one miss per object and sweep.
 */
#define N_OBJECTS 1024
#define SWEEPS	  4
#define STRIDE	  128

static const uint32_t touched_fields[3] = {2, 8, 9};

/* Misses of the sweeps with field i at offsets[i]; fills per-field L1 misses. */
static uint64_t simulate_sweeps(const uint32_t *offsets, uint64_t *field_misses)
{
	struct layout_cache_config c;
	struct layout_cache *m;
	uint64_t total;

	layout_cache_config_default(&c);
	c.cores = 1;
	m = layout_cache_new(&c);
	assert_non_null(m);
	for (int sweep = 0; sweep < SWEEPS; sweep++)
		for (uint64_t obj = 0; obj < N_OBJECTS; obj++)
			for (int k = 0; k < 3; k++) {
				uint32_t f = touched_fields[k];
				struct layout_cache_event e = {.core = 0,
							       .addr = 0x100000 + obj * STRIDE +
								       offsets[f],
							       .size = 8,
							       .struct_index = 0,
							       .field_index = (int32_t)f};
				assert_int_equal(layout_cache_access(m, &e), 0);
			}
	for (uint32_t f = 0; f < 12; f++)
		field_misses[f] = layout_cache_field_counts(m, 0, f).l1_load_miss;
	total = layout_cache_totals(m)->l1_load_miss;
	layout_cache_free(m);
	return total;
}

static void test_suggestion_cuts_model_misses_by_estimate(void **state)
{
	static const char *names[12] = {"f0", "f1", "f2", "f3", "f4",  "f5",
					"f6", "f7", "f8", "f9", "f10", "f11"};
	struct layout_struct *s = layout_struct_new("twelve");
	struct layout_reference refs[3];
	struct layout_sample samples[3];
	struct layout_block block = {0x10, 0x20};
	struct layout_program p = {.n_structs = 1,
				   .structs = &s,
				   .refs = refs,
				   .n_refs = 3,
				   .blocks = &block,
				   .n_blocks = 1};
	struct layout_params params;
	struct layout_suggestion sg;
	uint32_t offsets[12], new_offsets[12];
	uint64_t misses[12], after_misses[12], before, after;

	(void)state;
	for (uint32_t i = 0; i < 12; i++) {
		assert_int_equal(layout_struct_add_field(s, "long", names[i], NULL, 8 * i, 8, 8),
				 0);
		offsets[i] = 8 * i;
	}
	assert_int_equal(layout_struct_finish(s), 0);
	before = simulate_sweeps(offsets, misses);
	assert_int_equal(before, 2 * N_OBJECTS * SWEEPS);
	assert_int_equal(misses[9], 0); /* hidden behind f8's miss */
	for (int k = 0; k < 3; k++) {
		refs[k] = (struct layout_reference){.pc = 0x10 + 8 * (uint64_t)k,
						    .field_index = touched_fields[k]};
		samples[k] =
		    (struct layout_sample){.pc = refs[k].pc, .count = misses[touched_fields[k]]};
	}
	assert_int_equal(layout_annotate(&p, samples, 3, LAYOUT_ADJUST_THESIS), 0);
	assert_int_equal(s->fields[9].adj, N_OBJECTS * SWEEPS);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	for (size_t k = 0; k < 12; k++)
		new_offsets[sg.order[k]] = sg.offsets[k];
	after = simulate_sweeps(new_offsets, after_misses);
	assert_int_equal(sg.saved, N_OBJECTS * SWEEPS);
	/* the issue asks for the estimate within 20%; on this design it is exact */
	assert_int_equal(before - after, sg.saved);
	layout_suggestion_clear(&sg);
	layout_struct_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cold_misses_and_straddling),
	    cmocka_unit_test(test_conflict_misses_lru),
	    cmocka_unit_test(test_read_sharing_keeps_copies),
	    cmocka_unit_test(test_false_sharing_pair),
	    cmocka_unit_test(test_true_sharing_pair),
	    cmocka_unit_test(test_eviction_leaves_sharer_set),
	    cmocka_unit_test(test_bad_configuration_and_events),
	    cmocka_unit_test(test_directory_growth),
	    cmocka_unit_test(test_many_field_counters),
	    cmocka_unit_test(test_suggestion_cuts_model_misses_by_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
