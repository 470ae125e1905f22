/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Known-answer program for latency points (LEVER_BEGIN/LEVER_END, the
 * latency-point record of doc/formats/profile.md): WORKERS threads each run
 * requests back to back, one at a time, a request being a sleep of
 * REQUEST_US microseconds between LEVER_BEGIN and LEVER_END. So by
 * construction the requests in flight are never fewer than 0 nor more than
 * WORKERS (nearly always exactly WORKERS), begins and ends within any window
 * differ by at most WORKERS, and the latency Little's law derives from the
 * records is the mean latency measured here with the clock read around each
 * request. The main thread spins meanwhile, to give the profiler lines to
 * select. Prints "requests=N latency_ns=MEAN workers=WORKERS".
 * Usage: latency WORKERS REQUEST_US RUN_MS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lever.h"

static long request_us;
static atomic_bool stop;
static _Atomic uint64_t requests, latency_total_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One request: the clock is read outside BEGIN/END, so the measured latency
 * brackets the one the records describe. */
static void *worker(void *arg)
{
	struct timespec req = {.tv_sec = request_us / 1000000,
			       .tv_nsec = request_us % 1000000 * 1000};

	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		LEVER_BEGIN("request");
		nanosleep(&req, NULL);
		LEVER_END("request");
		atomic_fetch_add(&latency_total_ns, now_ns() - t0);
		atomic_fetch_add(&requests, 1);
	}
	return NULL;
}

static void spin_until(uint64_t deadline)
{
	while (now_ns() < deadline)
		for (volatile int i = 0; i < 10000; i++)
			;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 4;
	long run_ms = argc > 3 ? atol(argv[3]) : 3000;
	pthread_t threads[64];

	request_us = argc > 2 ? atol(argv[2]) : 2000;
	if (workers < 1 || workers > 64 || request_us < 1 || run_ms < 1) {
		fprintf(stderr, "usage: latency WORKERS(1-64) REQUEST_US RUN_MS\n");
		return 2;
	}
	for (int i = 0; i < workers; i++)
		pthread_create(&threads[i], NULL, worker, NULL);
	spin_until(now_ns() + (uint64_t)run_ms * 1000000u);
	atomic_store(&stop, true);
	for (int i = 0; i < workers; i++)
		pthread_join(threads[i], NULL);
	printf("requests=%llu latency_ns=%llu workers=%d\n", (unsigned long long)requests,
	       (unsigned long long)(requests ? latency_total_ns / requests : 0), workers);
	return 0;
}
