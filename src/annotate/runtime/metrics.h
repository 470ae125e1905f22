/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The contract between the probes of liblever-annotate.so and its metric
 * counters (spec/freud.md §4.2.2): every metric of a call is the difference
 * of two per-thread snapshots, one at entry and one at exit, so metrics are
 * inclusive of callees. The probe's own cost is subtracted by the probe code.
 *
 * The order of the metrics is that of enum annotate_metric in
 * annotate/annotate.h (time, cpu, mem, wait, hold, pfaults, Pfaults, cs).
 */
#ifndef LEVER_ANNOTATE_RUNTIME_METRICS_H
#define LEVER_ANNOTATE_RUNTIME_METRICS_H

#include <stdint.h>

enum ann_metric {
	ANN_TIME,    /* wall clock, ns */
	ANN_CPU,     /* thread CPU time, ns */
	ANN_MEM,     /* bytes allocated by this thread (malloc API, operator new) */
	ANN_WAIT,    /* ns this thread waited for locks */
	ANN_HOLD,    /* ns this thread held locks */
	ANN_PFAULTS, /* minor page faults of this thread */
	ANN_PFAULTS_MAJOR,
	ANN_CS, /* context switches of this thread (voluntary + involuntary) */
	ANN_N_METRICS
};

#define ANN_METRIC_BIT(m) (1u << (m))

struct ann_metrics_snapshot {
	uint64_t v[ANN_N_METRICS];
};

/* Once at start-up, before any probe fires: which metrics are wanted. */
int ann_metrics_init(unsigned mask);
/*
 * The calling thread's counters for the metrics in mask (others left as
 * they are). Async-signal-safe, no allocation.
 */
void ann_metrics_read(struct ann_metrics_snapshot *out, unsigned mask);
/*
 * The same, sharing one TSC read with the probe that times itself: the
 * clock metrics (time, hold) are those of the TSC reading tsc when the clock
 * is the TSC, the others are read now; with tsc 0 the TSC is read last,
 * after the other metrics. Returns the TSC reading used.
 */
uint64_t ann_metrics_read_tsc(struct ann_metrics_snapshot *out, unsigned mask, uint64_t tsc);

#endif
