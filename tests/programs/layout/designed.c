/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The designed program of issue 17's must-show 2 (spec autocpa.md §8.8):
 * answers known in advance for `lever layout record` and `report`.
 *
 *  - struct record: four hot fields (hot_a..hot_d), each on its own cache
 *    line among cold arrays. The main thread reads the four hot fields of
 *    every element of an array much larger than the caches, in a scrambled
 *    order: four line misses per element, one once the hot fields share a
 *    line (the suggestion saves 3 of 4, what the thesis's estimate E says).
 *  - struct counters: `left` and `right` on one line, written by two
 *    threads at the same time (stores only: every store that finds the
 *    line taken by the other thread misses), after the scan (false
 *    sharing); the
 *    suggestion puts them on separate lines.
 *
 * The layouts come from the file named by DESIGNED_LAYOUT when it is
 * defined (-DDESIGNED_LAYOUT='"suggested.h"'), so that a test can paste
 * `lever layout report`'s suggestion and rebuild. It must define both
 * structs with the same members; only their order and alignment change.
 *
 * usage: designed [PASSES [ELEMENTS [INCREMENTS [LOCKSTEP]]]]; prints a checksum that
 * is the same for every layout.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DESIGNED_LAYOUT
#include DESIGNED_LAYOUT
#else
struct record {
	long hot_a;
	char cold_1[56];
	long hot_b;
	char cold_2[56];
	long hot_c;
	char cold_3[56];
	long hot_d;
	char cold_4[56];
};

struct counters {
	volatile long left;
	volatile long right;
};
#endif

static struct counters counters;
static unsigned long increments = 2000000;
static pthread_barrier_t start_together;

/*
 * Lockstep (LOCKSTEP > 0): the threads take turns, LOCKSTEP increments
 * each, through `turn` (on a line of its own, not a struct field), so that
 * their writes interleave however the machine schedules them; a test on a
 * loaded machine needs that. 0 (the default): they run free, as a real
 * program would, and interleave only when they really run at once.
 */
static unsigned long lockstep;
static _Alignas(64) unsigned long turn;

static void wait_turn(unsigned long parity)
{
	for (unsigned spins = 0; __atomic_load_n(&turn, __ATOMIC_ACQUIRE) % 2 != parity; spins++)
		if (spins > 1000)
			sched_yield();
}

static void *count_left(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start_together);
	for (unsigned long i = 0; i < increments; i++) {
		if (lockstep && i % lockstep == 0)
			wait_turn(0);
		counters.left = i + 1;
		if (lockstep && (i % lockstep == lockstep - 1 || i == increments - 1))
			__atomic_fetch_add(&turn, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *count_right(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start_together);
	for (unsigned long i = 0; i < increments; i++) {
		if (lockstep && i % lockstep == 0)
			wait_turn(1);
		counters.right = i + 1;
		if (lockstep && (i % lockstep == lockstep - 1 || i == increments - 1))
			__atomic_fetch_add(&turn, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Cold means rarely used, not never: one element in 256 also gets its cold
 * arrays written. (Were every element's cold bytes written right after its
 * hot field, those writes would hit in the original layout and miss once
 * the hot fields move away: misses the record cannot show and the estimate
 * cannot count.)
 */
static void fill(struct record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r[i].hot_a = (long)i;
		r[i].hot_b = (long)(i * 3);
		r[i].hot_c = (long)(i ^ 0x55);
		r[i].hot_d = 1;
		if (i % 256 == 0) {
			r[i].cold_1[0] = r[i].cold_2[0] = (char)i;
			r[i].cold_3[0] = r[i].cold_4[0] = (char)i;
		}
	}
}

/* Visits every element once per pass, in an order the prefetchers cannot follow. */
static long scan(const struct record *r, size_t n, unsigned passes)
{
	const size_t stride = 40503; /* odd: a permutation of a power-of-two n */
	long sum = 0;

	for (unsigned p = 0; p < passes; p++) {
		size_t k = p;

		for (size_t i = 0; i < n; i++) {
			const struct record *e = &r[k & (n - 1)];

			sum += e->hot_a + e->hot_b + e->hot_c + e->hot_d;
			k += stride;
		}
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned passes = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 8;
	size_t n = argc > 2 ? (size_t)strtoul(argv[2], NULL, 0) : 65536;
	pthread_t left, right;
	struct record *r;
	long sum;

	if (argc > 3)
		increments = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		lockstep = strtoul(argv[4], NULL, 0);
	if (!n || (n & (n - 1))) {
		fprintf(stderr, "designed: ELEMENTS must be a power of two\n");
		return 2;
	}
	r = aligned_alloc(64, n * sizeof(*r));
	if (r)
		memset(r, 0, n * sizeof(*r));
	if (!r) {
		fprintf(stderr, "designed: out of memory\n");
		return 1;
	}
	fill(r, n);
	sum = scan(r, n, passes);
	/* after the scan, so that the two threads have the CPUs to themselves and overlap */
	pthread_barrier_init(&start_together, NULL, 2);
	if (pthread_create(&left, NULL, count_left, NULL) ||
	    pthread_create(&right, NULL, count_right, NULL)) {
		fprintf(stderr, "designed: cannot start the threads\n");
		return 1;
	}
	pthread_join(left, NULL);
	pthread_join(right, NULL);
	printf("checksum %ld %ld %ld\n", sum, (long)counters.left, (long)counters.right);
	free(r);
	return 0;
}
