/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (a) Critical path between two threads. Each round starts two threads and
 * joins both: thread a does 10 units (the chosen line), thread b 6 units. The
 * round lasts as long as a until a is 40% shorter, then b bounds it: really
 * shortening a's line by s speeds the program up by min(s, 0.4) on two idle
 * cores. Throughput point: one visit per round.
 */
#include <pthread.h>

#include "common.h"

static struct bench_args args = {.rounds = 600, .unit = 240000, .scale = 1.0};

/* clang-format off */
static void *thread_a(void *unused)
{
	SPIN(bench_scaled(&args, 10)); /* LINE:chosen */
	return unused;
}

static void *thread_b(void *unused)
{
	SPIN(bench_units(&args, 6)); /* LINE:other */
	return unused;
}
/* clang-format on */

int main(int argc, char **argv)
{
	int status = bench_parse(argc, argv, &args);
	double start;

	if (status)
		return status;
	start = bench_now();
	for (long r = 0; r < args.rounds; r++) {
		pthread_t a, b;

		if (pthread_create(&a, NULL, thread_a, NULL) ||
		    pthread_create(&b, NULL, thread_b, NULL)) {
			fprintf(stderr, "critical_path: cannot create threads\n");
			return 1;
		}
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		COZ_PROGRESS_NAMED("round");
	}
	bench_report("critical_path", args.rounds, bench_now() - start, -1);
	return 0;
}
