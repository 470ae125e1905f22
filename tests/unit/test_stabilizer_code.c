/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Code randomization: placement of copies in the code area (code_area.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "base/base.h"
#include "stabilizer/runtime/code.h"

#define GRANULES 4096

static uint64_t bitmap[GRANULES / 64];

static int count_used(void)
{
	int n = 0;

	for (size_t i = 0; i < GRANULES; i++)
		n += (bitmap[i / 64] >> (i % 64)) & 1;
	return n;
}

/* Allocations never overlap, stay inside, and a single hole is found. */
static void test_random_placement_no_overlap(void **state)
{
	struct rng r;
	long pos[200];

	memset(bitmap, 0, sizeof(bitmap));
	rng_seed(&r, 7);
	for (size_t i = 0; i < ARRAY_SIZE(pos); i++) {
		pos[i] = code_bitmap_alloc_random(bitmap, GRANULES, 8, rng_next(&r));
		assert_true(pos[i] >= 0 && pos[i] + 8 <= GRANULES);
	}
	assert_int_equal(count_used(), 8 * ARRAY_SIZE(pos));
	while (code_bitmap_alloc_first(bitmap, GRANULES, 1) >= 0)
		;
	assert_int_equal(count_used(), GRANULES);
	assert_int_equal(code_bitmap_alloc_random(bitmap, GRANULES, 1, rng_next(&r)), -1);
	code_bitmap_free(bitmap, (size_t)pos[3], 8);
	assert_int_equal(count_used(), GRANULES - 8);
	assert_int_equal(code_bitmap_alloc_random(bitmap, GRANULES, 8, rng_next(&r)), pos[3]);
	code_bitmap_free(bitmap, (size_t)pos[3], 8);
	assert_int_equal(code_bitmap_alloc_first(bitmap, GRANULES, 8), pos[3]);
	assert_int_equal(code_bitmap_alloc_random(bitmap, GRANULES, 0, 1), -1);
	assert_int_equal(code_bitmap_alloc_random(bitmap, GRANULES, GRANULES + 1, 1), -1);
}

/* In a mostly empty area each placement is uniform: every 1/16th of the area
 * gets a fair share of 1600 one-granule placements (each freed again). */
static void test_random_placement_spread(void **state)
{
	struct rng r;
	int bucket[16] = {0};

	memset(bitmap, 0, sizeof(bitmap));
	rng_seed(&r, 11);
	for (int i = 0; i < 1600; i++) {
		long p = code_bitmap_alloc_random(bitmap, GRANULES, 1, rng_next(&r));

		assert_true(p >= 0);
		bucket[p / (GRANULES / 16)]++;
		code_bitmap_free(bitmap, (size_t)p, 1);
	}
	for (int b = 0; b < 16; b++)
		assert_true(bucket[b] > 50 && bucket[b] < 150);
	assert_int_equal(count_used(), 0);
}

/* Two seeds place the same sequence of copies differently. */
static void test_seed_changes_placement(void **state)
{
	long first[2];

	for (int s = 0; s < 2; s++) {
		struct rng r;

		memset(bitmap, 0, sizeof(bitmap));
		rng_seed(&r, 100 + (uint64_t)s);
		first[s] = code_bitmap_alloc_random(bitmap, GRANULES, 4, rng_next(&r));
	}
	assert_true(first[0] != first[1]);
}

/*
 * A crowded area (random tries mostly miss): three holes of 10, 12 and 70
 * granules, the last crossing a word boundary and ending at an area size
 * that is not a multiple of 64. Placements of 10 granules land only where
 * they fit, each of the 1 + 3 + 61 valid positions about equally often.
 */
static void test_crowded_placement_uniform(void **state)
{
	enum { TOTAL = 4000 };
	static const size_t holes[][2] = {{100, 10}, {2000, 12}, {TOTAL - 70, 70}};
	static int hits[TOTAL];
	struct rng r;
	int valid = 0;

	memset(hits, 0, sizeof(hits));
	rng_seed(&r, 5);
	for (int i = 0; i < 6500; i++) {
		long p;

		memset(bitmap, 0xff, sizeof(bitmap));
		for (size_t h = 0; h < ARRAY_SIZE(holes); h++)
			code_bitmap_free(bitmap, holes[h][0], holes[h][1]);
		p = code_bitmap_alloc_random(bitmap, TOTAL, 10, rng_next(&r));
		assert_true(p >= 0);
		hits[p]++;
	}
	for (size_t h = 0; h < ARRAY_SIZE(holes); h++)
		for (size_t q = holes[h][0]; q + 10 <= holes[h][0] + holes[h][1]; q++) {
			/* 6500 / 65 = 100 expected per position */
			assert_in_range(hits[q], 50, 160);
			valid++;
			hits[q] = 0;
		}
	assert_int_equal(valid, 65);
	for (size_t q = 0; q < TOTAL; q++)
		assert_int_equal(hits[q], 0);
	/* first fit takes the lowest hole that is large enough */
	memset(bitmap, 0xff, sizeof(bitmap));
	for (size_t h = 0; h < ARRAY_SIZE(holes); h++)
		code_bitmap_free(bitmap, holes[h][0], holes[h][1]);
	assert_int_equal(code_bitmap_alloc_first(bitmap, TOTAL, 11), 2000);
	assert_int_equal(code_bitmap_alloc_first(bitmap, TOTAL, 11), TOTAL - 70);
	assert_int_equal(code_bitmap_alloc_first(bitmap, TOTAL, 60), -1);
	assert_int_equal(code_bitmap_alloc_random(bitmap, TOTAL, 60, 3), -1);
}

/* code_area_write reaches read-only executable memory (the W^X path). */
static void test_write_read_only_code(void **state)
{
	struct code_area a = {.mem_fd = -1};
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const uint8_t ret42[] = {0xb8, 42, 0, 0, 0, 0xc3}; /* mov $42,%eax; ret */
	int (*fn)(void);

	assert_true(page != MAP_FAILED);
	assert_true(code_area_write(&a, (uintptr_t)page + 64, ret42, sizeof(ret42)));
	fn = (int (*)(void))(uintptr_t)(page + 64);
	assert_int_equal(fn(), 42);
	code_area_after_fork(&a);
	assert_int_equal(a.mem_fd, -1);
	munmap(page, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_placement_no_overlap),
	    cmocka_unit_test(test_random_placement_spread),
	    cmocka_unit_test(test_seed_changes_placement),
	    cmocka_unit_test(test_crowded_placement_uniform),
	    cmocka_unit_test(test_write_read_only_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
