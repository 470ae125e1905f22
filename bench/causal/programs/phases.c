/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (d) Serial and parallel phases. Each round has a serial phase (the main
 * thread alone, 4 units) and a parallel phase (two threads, 4 units each on
 * the chosen line, joined). The chosen line runs only in the parallel phase,
 * half of each round: shortening it by s speeds the program up by s/2 on two
 * idle cores. A profiler that credited the line's effect to the whole run
 * without correcting for the phase it runs in would report twice that.
 */
#include <pthread.h>

#include "common.h"

#define WORKERS 2

static struct bench_args args = {.rounds = 500, .unit = 240000, .scale = 1.0};

/* clang-format off */
static void *parallel_part(void *unused)
{
	SPIN(bench_scaled(&args, 4)); /* LINE:chosen */
	return unused;
}

static void serial_part(void)
{
	SPIN(bench_units(&args, 4)); /* LINE:serial */
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
		pthread_t t[WORKERS];

		serial_part();
		for (int i = 0; i < WORKERS; i++)
			if (pthread_create(&t[i], NULL, parallel_part, NULL))
				return 1;
		for (int i = 0; i < WORKERS; i++)
			pthread_join(t[i], NULL);
		COZ_PROGRESS_NAMED("round");
	}
	bench_report("phases", args.rounds, bench_now() - start, -1);
	return 0;
}
