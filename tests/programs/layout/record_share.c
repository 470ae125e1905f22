// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A designed false-sharing pair for `lever layout record` (issue 17): two
 * threads each increment their own field of one 64-byte-aligned struct,
 * `a` (offset 0) and `b` (offset 8), on the same cache line. No byte is
 * shared, the line is: the report must call it false sharing, by field
 * (Algorithm F's threads) and by data address. Each increment is one
 * read-modify-write instruction, `addq $1, (reg)` (written in asm so that
 * the compiler neither folds the loop nor splits it into a load and a
 * store): the instruction samples land on writes, and its base register
 * still holds the struct's address when a sample is taken.
 *   record_share [STEPS]   (default 200 million per thread)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct counters {
	long a; /* thread 1 */
	long b; /* thread 2 */
	char pad[48];
} __attribute__((aligned(64)));

static struct counters shared;
static long steps = 200000000;

static void *count_a(void *arg)
{
	struct counters *c = arg;

	for (long i = 0; i < steps; i++)
		__asm__ volatile("addq $1, %0" : "+m"(c->a));
	return NULL;
}

static void *count_b(void *arg)
{
	struct counters *c = arg;

	for (long i = 0; i < steps; i++)
		__asm__ volatile("addq $1, %0" : "+m"(c->b));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ta, tb;

	if (argc > 1)
		steps = atol(argv[1]);
	if (pthread_create(&ta, NULL, count_a, &shared) ||
	    pthread_create(&tb, NULL, count_b, &shared))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("counters %p a %ld b %ld\n", (void *)&shared, shared.a, shared.b);
	return 0;
}
