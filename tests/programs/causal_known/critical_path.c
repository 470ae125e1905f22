/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Known-answer program for the causal profiler: each round runs work_a (two
 * units) and work_b (one unit) in two threads and then visits a progress
 * point. Speeding up work_a's line by s shortens a round by min(s, 50%)
 * (work_b then becomes the critical path); speeding up work_b's line does
 * nothing. Usage: critical_path ROUNDS UNIT_ITERATIONS [A_SCALE]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lever.h"

static long unit;
static double a_scale = 1.0;

static void *work_a(void *arg)
{
	long n = (long)(2 * unit * a_scale);

	for (volatile long x = 0; x < n; x++) { /* LINE:a */
	}
	return NULL;
}

static void *work_b(void *arg)
{
	for (volatile long y = 0; y < unit; y++) { /* LINE:b */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;

	unit = argc > 2 ? atol(argv[2]) : 2000000;
	if (argc > 3)
		a_scale = atof(argv[3]);
	for (long r = 0; r < rounds; r++) {
		pthread_t a, b;

		pthread_create(&a, NULL, work_a, NULL);
		pthread_create(&b, NULL, work_b, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		LEVER_PROGRESS;
	}
	printf("%ld rounds\n", rounds);
	return 0;
}
