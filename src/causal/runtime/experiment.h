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

void experiment_prepare(void);
bool experiment_start_profiler(pthread_t *thread);
const struct experiment_stats *experiment_stats(void);

#endif
