/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (c) A contended lock. The main thread's rounds are the progress point:
 * 2 units of private work, then 0.2 units under a mutex. A worker thread
 * loops on 1 unit of private work (the chosen line), 0.5 units more, then 2
 * units under the same mutex. Shortening the worker's private work makes it
 * take the lock more often, so the main thread waits longer for it: speeding
 * the chosen line up makes the program no faster, or slower (a flat or
 * falling curve, the sign of contention in a causal profile).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

static struct bench_args args = {.rounds = 1500, .unit = 240000, .scale = 1.0};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;

/* clang-format off */
static void *worker(void *unused)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		SPIN(bench_scaled(&args, 1)); /* LINE:chosen */
		SPIN(bench_units(&args, 0.5)); /* LINE:worker2 */
		pthread_mutex_lock(&lock);
		SPIN(bench_units(&args, 2)); /* LINE:worker_critical */
		pthread_mutex_unlock(&lock);
	}
	return unused;
}

static void main_round(void)
{
	SPIN(bench_units(&args, 2)); /* LINE:main_private */
	pthread_mutex_lock(&lock);
	SPIN(bench_units(&args, 0.2)); /* LINE:main_critical */
	pthread_mutex_unlock(&lock);
}
/* clang-format on */

int main(int argc, char **argv)
{
	int status = bench_parse(argc, argv, &args);
	pthread_t w;
	double start;

	if (status)
		return status;
	start = bench_now();
	if (pthread_create(&w, NULL, worker, NULL))
		return 1;
	for (long r = 0; r < args.rounds; r++) {
		main_round();
		COZ_PROGRESS_NAMED("round");
	}
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	bench_report("contention", args.rounds, bench_now() - start, -1);
	return 0;
}
