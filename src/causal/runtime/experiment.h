/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef LEVER_CAUSAL_EXPERIMENT_H
#define LEVER_CAUSAL_EXPERIMENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct experiment_stats {
	uint64_t experiments; /* written */
	uint64_t useful;      /* with at least min-visits on every point */
	uint64_t nonpositive; /* effective duration <= 0: not written */
	uint64_t paid_ns;     /* delay subtracted from the durations written */
	uint64_t unpaid_ns;   /* delay not paid by the slowest thread, not subtracted */
	uint64_t map_ready_ns;
};

/*
 * The run's length for runtime records: from when sampling began to now, or
 * to the program's exit if it has begun. Not from lever's start-up: with
 * --fixed-line or --progress the line map is built before main, and that
 * time, like the profiler's own wind-down after the exit (its next poll, the
 * settling of the pauses owed), holds no sample of the program. The phase
 * correction divides the line's samples by this T: in bench/causal's
 * library and phases runs it ran 15-17 ms (0.7-0.8%) past the program's own
 * elapsed time, which lowered the factor of a line that runs all the time.
 */
static inline uint64_t experiment_run_length_ns(uint64_t run_start, uint64_t exiting, uint64_t now)
{
	uint64_t end = exiting && exiting < now ? exiting : now;

	return end > run_start ? end - run_start : 0;
}

void experiment_prepare(void);
bool experiment_start_profiler(pthread_t *thread);
const struct experiment_stats *experiment_stats(void);

#endif
