/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The layers of the Stabilizer runtime's shuffling heap, linked into the test
 * directly (without heap_api.c, which would replace the test's own malloc):
 * size classes, the base allocator's slabs (each fresh slab is handed out
 * as a permutation of its slots) and lanes (small classes sharing pages),
 * object lookup from interior pointers, pages given back, the
 * shuffling layer (no object handed out twice, freed objects not reused at
 * once, a seed reproduces the sequence) and large allocations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stabilizer/runtime/heap.h"

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static void test_size_classes(void **state)
{
	(void)state;
	assert_int_equal(heap_class_size(0), 16);
	assert_int_equal(heap_class_size(HEAP_N_CLASSES - 1), HEAP_SMALL_MAX);
	for (unsigned c = 1; c < HEAP_N_CLASSES; c++) {
		assert_true(heap_class_size(c) > heap_class_size(c - 1));
		assert_int_equal(heap_class_size(c) % HEAP_ALIGN, 0);
	}
	for (size_t n = 1; n <= HEAP_SMALL_MAX; n++) {
		unsigned c = heap_class_of_size(n);
		size_t size = heap_class_size(c);

		if (c >= HEAP_N_CLASSES || size < n || (c > 0 && heap_class_size(c - 1) >= n))
			fail_msg("size %zu: class %u of %zu bytes is not the smallest that fits", n,
				 c, size);
		if (n > 128 && (size - n) * 5 > size)
			fail_msg("size %zu: class of %zu bytes wastes more than 20%%", n, size);
	}
}

/* Objects per slab, as heap_base.c computes them. */
static size_t slab_objects(unsigned c)
{
	size_t size = heap_class_size(c), n = (256 * 1024 + size - 1) / size;

	return n < HEAP_SHUFFLE_N ? HEAP_SHUFFLE_N : n;
}

static void test_base_slabs(void **state)
{
	unsigned classes[] = {HEAP_LANE_CLASSES, 30, HEAP_N_CLASSES - 1};

	(void)state;
	for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++) {
		unsigned c = classes[k];
		struct heap_free_list local = {0}; /* a thread's, for class c */
		size_t size = heap_class_size(c), n = slab_objects(c), ascending = 0;
		uintptr_t *p = malloc(n * sizeof(*p)), *sorted = malloc(n * sizeof(*p));

		assert_non_null(p);
		assert_non_null(sorted);
		for (size_t i = 0; i < n; i++) {
			char *o = heap_base_malloc(c, &local);

			assert_non_null(o);
			assert_true(heap_base_owns(o));
			assert_int_equal(heap_class_of_ptr(o), c);
			assert_int_equal((uintptr_t)o % HEAP_ALIGN, 0);
			/* interior pointers lead back to the object */
			assert_ptr_equal(heap_object_start(o + size - 1, c), o);
			assert_ptr_equal(heap_object_start(o + size / 2, c), o);
			p[i] = (uintptr_t)o;
			ascending += i && p[i] > p[i - 1];
		}
		/* the first slab: every slot exactly once, not in address order */
		memcpy(sorted, p, n * sizeof(*p));
		qsort(sorted, n, sizeof(*sorted), cmp_ptr);
		for (size_t i = 1; i < n; i++)
			assert_int_equal(sorted[i] - sorted[i - 1], size);
		assert_true(ascending > n / 4 && ascending < 3 * n / 4);
		/* freed objects come back last-in first-out */
		heap_base_free(c, &local, (void *)p[3]);
		heap_base_free(c, &local, (void *)p[5]);
		assert_int_equal((uintptr_t)heap_base_malloc(c, &local), p[5]);
		assert_int_equal((uintptr_t)heap_base_malloc(c, &local), p[3]);
		free(p);
		free(sorted);
	}
}

/* Objects in one lane of class c, as heap_lane.c makes them (LANE_BYTES = 256). */
static size_t lane_objects(unsigned c)
{
	size_t size = heap_class_size(c), per = 256 / size ? 256 / size : 1;

	return HEAP_WINDOW_PERIODS / HEAP_LANE_PHASES * per;
}

static size_t window_of(const void *p)
{
	return (size_t)(((uintptr_t)p - (uintptr_t)heap_region) >> HEAP_WINDOW_SHIFT);
}

/*
 * The small classes come from lanes: a lane's objects are whole, distinct,
 * 16-aligned, found again from any interior pointer, handed out in no
 * address order, spread over the 64 pages of their window and over the
 * lines of a page; freed ones come back last-in first-out.
 */
static void test_base_lanes(void **state)
{
	unsigned classes[] = {0, 2, 7, 8, 13, HEAP_LANE_CLASSES - 1};

	(void)state;
	for (size_t j = 0; j < sizeof(classes) / sizeof(classes[0]); j++) {
		unsigned c = classes[j];
		struct heap_free_list local = {0};
		size_t size = heap_class_size(c), n = lane_objects(c), ascending = 0;
		uintptr_t *p = malloc(n * sizeof(*p));
		uint64_t pages = 0, lines = 0;

		assert_non_null(p);
		for (size_t i = 0; i < n; i++) {
			char *o = heap_base_malloc(c, &local);
			unsigned found;

			assert_non_null(o);
			assert_true(heap_base_owns(o));
			assert_int_equal(heap_class_of_ptr(o), c);
			assert_int_equal((uintptr_t)o % HEAP_ALIGN, 0);
			assert_ptr_equal(heap_object_start(o + size - 1, c), o);
			assert_ptr_equal(heap_base_locate(o + size / 2, &found), o);
			assert_int_equal(found, c);
			memset(o, 0x11, size); /* the whole object is usable */
			p[i] = (uintptr_t)o;
			ascending += i && p[i] > p[i - 1];
			pages |= (uint64_t)1 << ((p[i] >> 12) & 63);
			lines |= (uint64_t)1 << ((p[i] >> 6) & 63);
		}
		qsort(p, n, sizeof(*p), cmp_ptr);
		for (size_t i = 1; i < n; i++)
			assert_true(p[i] - p[i - 1] >= size); /* no two overlap */
		assert_true(ascending < 3 * n / 4);
		assert_int_equal(pages, UINT64_MAX);
		assert_int_equal(lines, UINT64_MAX);
		heap_base_free(c, &local, (void *)p[3]);
		heap_base_free(c, &local, (void *)p[5]);
		assert_int_equal((uintptr_t)heap_base_malloc(c, &local), p[5]);
		assert_int_equal((uintptr_t)heap_base_malloc(c, &local), p[3]);
		free(p);
	}
}

/*
 * Classes share windows (the point of the lanes, issue 14 point 14): the
 * first objects of eight classes that had none come from one window, so a
 * program with a few objects in many classes touches the pages of one.
 */
static void test_lanes_share_windows(void **state)
{
	unsigned classes[] = {1, 3, 4, 5, 6, 9, 10, 11};
	size_t first = SIZE_MAX;

	(void)state;
	for (size_t j = 0; j < sizeof(classes) / sizeof(classes[0]); j++) {
		struct heap_free_list local = {0};
		void *o = heap_base_malloc(classes[j], &local);

		assert_non_null(o);
		if (first == SIZE_MAX)
			first = window_of(o);
		assert_int_equal(window_of(o), first);
	}
}

#define MANY 20000

/*
 * free() finds an object's start by a multiply with an inverse of the class
 * size, not a division: exact over the whole span of every class (addresses
 * only, nothing is touched), at both ends of objects spread over the span.
 */
static void test_object_start_whole_span(void **state)
{
	(void)state;
	for (unsigned c = HEAP_LANE_CLASSES; c < HEAP_N_CLASSES; c++) {
		uint64_t size = heap_class_size(c), objects = HEAP_CLASS_SPAN / size;
		char *start = heap_region + c * HEAP_CLASS_SPAN;

		for (uint64_t i = 0; i < objects; i = i * 3 + 1) {
			for (uint64_t k = i; k < objects && k < i + 3; k++) {
				char *o = start + k * size;

				assert_ptr_equal(heap_object_start(o, c), o);
				assert_ptr_equal(heap_object_start(o + size - 1, c), o);
				assert_int_equal(heap_class_of_ptr(o + size - 1), c);
			}
		}
		assert_ptr_equal(heap_object_start(start + (objects - 1) * size + size - 1, c),
				 start + (objects - 1) * size);
	}
}

static void test_shuffle_no_duplicates(void **state)
{
	static uintptr_t p[MANY];
	unsigned c = heap_class_of_size(100);

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < MANY; i++) {
			p[i] = (uintptr_t)heap_shuffle_malloc(c);
			assert_true(p[i] != 0);
			memset((void *)p[i], 0x5a, heap_class_size(c));
		}
		qsort(p, MANY, sizeof(p[0]), cmp_ptr);
		for (size_t i = 1; i < MANY; i++)
			if (p[i] - p[i - 1] < heap_class_size(c))
				fail_msg("round %d: objects %#lx and %#lx overlap", round,
					 (unsigned long)p[i - 1], (unsigned long)p[i]);
		for (size_t i = 0; i < MANY; i++)
			heap_shuffle_free(c, (void *)p[i]);
	}
}

/* malloc, free, malloc: glibc hands the same object back; the shuffle almost never does. */
static void test_shuffle_delays_reuse(void **state)
{
	unsigned c = heap_class_of_size(40), reused = 0;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		void *p = heap_shuffle_malloc(c), *q;

		heap_shuffle_free(c, p);
		q = heap_shuffle_malloc(c);
		reused += p == q;
		heap_shuffle_free(c, q);
	}
	/* each is 1/256 likely: about 39 of 10000 */
	assert_true(reused < 150);
}

static void test_large(void **state)
{
	size_t aligns[] = {16, 64, 4096, 65536, 1 << 21};

	(void)state;
	for (size_t k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++) {
		size_t a = aligns[k];
		unsigned char *p = heap_large_alloc(300000, a, false), *q;

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % a, 0);
		assert_false(heap_base_owns(p));
		assert_true(heap_large_owns(p));
		assert_true(heap_large_usable(p) >= 300000);
		for (size_t i = 0; i < 300000; i++)
			p[i] = (unsigned char)(i * 7);
		q = heap_large_realloc(p, 5000000);
		assert_non_null(q);
		assert_true(heap_large_usable(q) >= 5000000);
		for (size_t i = 0; i < 300000; i++)
			if (q[i] != (unsigned char)(i * 7))
				fail_msg("realloc lost byte %zu", i);
		q = heap_large_realloc(q, 270000);
		assert_non_null(q);
		assert_int_equal(q[269999], (unsigned char)(269999 * 7));
		heap_large_free(q);
	}
}

/*
 * Freed large mappings are kept (within a budget) and reused: the next
 * request that fits gets one without a system call, with its old contents
 * unless zeroes are asked for (calloc).
 */
static void test_large_reuse(void **state)
{
	size_t size = 1 << 20;
	unsigned char *p, *q;
	size_t before;

	(void)state;
	p = heap_large_alloc(size, 16, false);
	assert_non_null(p);
	memset(p, 0x77, size);
	before = heap_large_cached_bytes();
	heap_large_free(p);
	assert_true(heap_large_cached_bytes() > before);
	q = heap_large_alloc(size, 16, true);
	assert_non_null(q);
	assert_int_equal(heap_large_cached_bytes(), before); /* the kept mapping was taken */
	for (size_t i = 0; i < size; i++)
		if (q[i])
			fail_msg("calloc'ed large block: byte %zu is %#x", i, q[i]);
	assert_true(heap_large_usable(q) >= size);
	heap_large_free(q);
	/* many frees: the cache stays within its budget (32 MiB) */
	for (int i = 0; i < 100; i++) {
		void *r = heap_large_alloc(size * 3 + (size_t)i * 4096, 16, false);

		assert_non_null(r);
		heap_large_free(r);
	}
	assert_true(heap_large_cached_bytes() <= ((size_t)32 << 20));
}

/*
 * A kept run serves smaller requests cut to their size, and the cuts join
 * again when freed: a loop of 300 KiB-2 MiB buffers stays in one run instead
 * of keeping one mapping per size range (3.5 times glibc's peak memory).
 */
static bool inside(const void *p, const char *run, size_t size)
{
	return (const char *)p >= run && (const char *)p < run + size;
}

static void test_large_runs(void **state)
{
	size_t big = (size_t)24 << 20, part = (size_t)9 << 20;
	char *run, *a, *b, *c;

	(void)state;
	/* freed, the 24 MiB run pushes older runs out until the rest is under 9 MiB */
	run = heap_large_alloc(big, 16, false);
	assert_non_null(run);
	memset(run, 1, big);
	heap_large_free(run);
	run -= 4096; /* the mapping starts in the page below the pointer */
	a = heap_large_alloc(part, 16, false);
	b = heap_large_alloc(part, 16, false);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(inside(a, run, big + 4096));
	assert_true(inside(b, run, big + 4096));
	assert_int_equal(a[8192], 1); /* the run's pages, not new ones */
	heap_large_free(a);
	heap_large_free(b);
	/* joined again: a request bigger than the pieces is served from the run */
	c = heap_large_alloc(big - ((size_t)1 << 20), 16, false);
	assert_non_null(c);
	assert_true(inside(c, run, big + 4096));
	heap_large_free(c);
	assert_true(heap_large_cached_bytes() <= ((size_t)32 << 20));
}

/*
 * The depot gives pages back: 8 MiB of one class allocated, written and
 * freed through a thread's stack leaves at most the stack and the pages
 * shared with the objects still held; the rest is returned (madvise), and
 * what comes back from the depot afterwards is usable memory again.
 */
static void returns_pages(unsigned c)
{
	size_t size = heap_class_size(c), n = (8u << 20) / size, before;
	struct heap_free_list local = {0};
	char **p = malloc(n * sizeof(*p));

	assert_non_null(p);
	before = heap_base_purged_bytes();
	for (size_t i = 0; i < n; i++) {
		p[i] = heap_base_malloc(c, &local);
		assert_non_null(p[i]);
		memset(p[i], 0x3c, size);
	}
	for (size_t i = 0; i < n; i++)
		heap_base_free(c, &local, p[i]);
	/* all but the last purge period (1 MiB) and the thread's stack */
	assert_true(heap_base_purged_bytes() - before >= (6u << 20));
	for (size_t i = 0; i < n; i++) {
		p[i] = heap_base_malloc(c, &local);
		assert_non_null(p[i]);
		memset(p[i], 0x5a, size);
	}
	for (size_t i = 0; i < n; i++)
		heap_base_free(c, &local, p[i]);
	free(p);
}

static void test_base_returns_pages(void **state)
{
	(void)state;
	returns_pages(heap_class_of_size(1000)); /* a class of its own */
	returns_pages(heap_class_of_size(100));	 /* a class in lanes */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size_classes),
	    cmocka_unit_test(test_lanes_share_windows), /* first: before any lane is taken */
	    cmocka_unit_test(test_base_slabs),
	    cmocka_unit_test(test_base_lanes),
	    cmocka_unit_test(test_base_returns_pages),
	    cmocka_unit_test(test_object_start_whole_span),
	    cmocka_unit_test(test_shuffle_no_duplicates),
	    cmocka_unit_test(test_shuffle_delays_reuse),
	    cmocka_unit_test(test_large),
	    cmocka_unit_test(test_large_reuse),
	    cmocka_unit_test(test_large_runs),
	};

	if (heap_base_init())
		return 1;
	heap_shuffle_init(42); /* before the base tests: it seeds the slab keys */
	heap_large_seed(42);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
