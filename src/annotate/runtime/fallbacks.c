/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Weak stand-ins for the counters of metrics.h (metrics.c, ann-metrics), so
 * that the probes link and run before those land; the real definitions,
 * when linked in, replace these. ann_metrics_read: wall time
 * (CLOCK_MONOTONIC) and thread CPU time only; other metrics stay 0.
 */
#include <time.h>

#include "annotate/runtime/metrics.h"

__attribute__((weak)) int ann_metrics_init(unsigned mask)
{
	(void)mask;
	return 0;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((weak)) void ann_metrics_read(struct ann_metrics_snapshot *out, unsigned mask)
{
	if (mask & ANN_METRIC_BIT(ANN_TIME))
		out->v[ANN_TIME] = clock_ns(CLOCK_MONOTONIC);
	if (mask & ANN_METRIC_BIT(ANN_CPU))
		out->v[ANN_CPU] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
