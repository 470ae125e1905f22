/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (g) Work inside a shared library (libbenchwork.so, built by the bench),
 * called from an in-scope line. Each round runs two threads and joins both:
 * thread a calls the library for 10 units (the chosen line: the call) and
 * then works 5 units itself; thread b works 10 units. Shortening the library
 * call by s speeds the program up by min(s, 0.5) * 2/3 on two idle cores.
 */
#include <pthread.h>

#include "common.h"

void libwork_spin(long n);

static struct bench_args args = {.rounds = 400, .unit = 240000, .scale = 1.0};

/* clang-format off */
static void *thread_a(void *unused)
{
	libwork_spin(bench_scaled(&args, 10)); /* LINE:chosen */
	SPIN(bench_units(&args, 5)); /* LINE:own */
	return unused;
}

static void *thread_b(void *unused)
{
	SPIN(bench_units(&args, 10)); /* LINE:other */
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
		    pthread_create(&b, NULL, thread_b, NULL))
			return 1;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		COZ_PROGRESS_NAMED("round");
	}
	bench_report("library", args.rounds, bench_now() - start, -1);
	return 0;
}
