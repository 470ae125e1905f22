/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Weak stand-ins for the two halves other parts of the runtime provide
 * (features_eval.c: the feature interpreter of features.h; metrics.c: the
 * counters of metrics.h), so that the probes link and run before those land.
 * The real definitions, when linked in, replace these.
 *
 * - ann_features_eval: reports a malformed program (-1): every feature is
 *   then missing ('?'), never invented.
 * - ann_metrics_read: wall time (CLOCK_MONOTONIC) and thread CPU time only;
 *   other metrics stay 0.
 */
#include <time.h>

#include "annotate/runtime/features.h"
#include "annotate/runtime/metrics.h"

__attribute__((weak)) int ann_features_eval(const struct ann_op *ops, uint32_t n_ops,
					    const struct ann_entry_regs *regs, uint64_t module_base,
					    double *values, uint32_t n_values)
{
	(void)ops;
	(void)n_ops;
	(void)regs;
	(void)module_base;
	for (uint32_t i = 0; i < n_values; i++)
		values[i] = __builtin_nan("");
	return -1;
}

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
