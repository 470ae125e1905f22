/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A line visited by several threads, for `--progress FILE:LINE` (issue 14,
 * point 5): the breakpoint on the line marked LINE:visit must count each
 * visit once, as the source-level point on the next line does, whatever the
 * number of threads (a uprobe opened in one thread and inherited by the
 * threads it creates counted their visits twice). Workers are created in
 * waves (6, or the first argument) of 4 threads (or the second argument, at
 * most 4), so threads start while others run.
 * Prints the number of visits.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lever.h>

#define THREADS	    4
#define WAVES	    6
#define VISITS	    250
#define UNIT_ROUNDS 20000

static volatile uint64_t sink;

__attribute__((noinline)) static void step(uint64_t *x)
{
	for (int i = 0; i < UNIT_ROUNDS; i++)
		*x = *x * 6364136223846793005u + 1442695040888963407u;
	sink = *x;
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	for (int i = 0; i < VISITS; i++) {
		step(&x); /* LINE:visit */
		LEVER_PROGRESS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[THREADS];
	int waves = argc > 1 ? atoi(argv[1]) : WAVES;
	int n = argc > 2 ? atoi(argv[2]) : THREADS;

	if (n < 1 || n > THREADS)
		n = THREADS;

	for (int w = 0; w < waves; w++) {
		for (int i = 0; i < n; i++)
			pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)(i + 1));
		for (int i = 0; i < n; i++)
			pthread_join(threads[i], NULL);
	}
	printf("%d visits\n", waves * n * VISITS);
	return 0;
}
