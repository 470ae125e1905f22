/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Inside liblever-annotate.so: what the metric counters (metrics.c) share
 * with the interposers that feed them (interpose_malloc.c, interpose_new.c,
 * interpose_locks.c). spec/freud.md §4.2.2, §5.3.3.
 *
 * Every counter is cumulative and per thread (TLS, initial-exec), written
 * only by its own thread, so a call's metric is the difference of two reads
 * (metrics.h). Locks follow the spec's [IDEA] formulation: W(t), the total
 * time spent blocked acquiring, and H(t), the total time during which the
 * thread held at least one lock (closed intervals plus the open one), so
 * each lock event costs O(1) whatever the depth of instrumented calls.
 */
#ifndef LEVER_ANNOTATE_RUNTIME_METRICS_INTERNAL_H
#define LEVER_ANNOTATE_RUNTIME_METRICS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "annotate/runtime/metrics.h"

#define ANN_HIDDEN __attribute__((visibility("hidden")))
#define ANN_EXPORT __attribute__((visibility("default")))
#define ANN_TLS	   __thread __attribute__((tls_model("initial-exec")))

struct ann_thread_counters {
	uint64_t mem;	     /* bytes allocated */
	uint64_t wait;	     /* ns blocked acquiring locks, W(t) */
	uint64_t hold;	     /* ns of closed holding intervals */
	uint64_t hold_since; /* start of the open interval, when held > 0 */
	uint32_t held;	     /* locks held now (recursive ones count each time) */
};

extern ANN_TLS struct ann_thread_counters ann_counters ANN_HIDDEN;
/* The metrics asked for (ann_metrics_init), read by every interposer. */
extern _Atomic unsigned ann_metrics_enabled ANN_HIDDEN;

/* The clock of the time metric (metrics.c: calibrated TSC or CLOCK_MONOTONIC). */
enum ann_clock_source { ANN_CLOCK_MONOTONIC, ANN_CLOCK_TSC };

struct ann_clock {
	enum ann_clock_source source;
	uint64_t tsc0; /* TSC at calibration */
	uint64_t ns0;  /* CLOCK_MONOTONIC at tsc0 */
	uint64_t mult; /* ns per tick, times 2^32 */
};
extern struct ann_clock ann_clock ANN_HIDDEN;
/* "tsc" or "monotonic": the clock ann_metrics_init chose, for messages and tests. */
const char *ann_metrics_clock_name(void) ANN_HIDDEN;

static inline uint64_t ann_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ann_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* A TSC reading in nanoseconds, when the chosen clock is the TSC. */
static inline uint64_t ann_tsc_ns(uint64_t tsc)
{
	return ann_clock.ns0 +
	       (uint64_t)((unsigned __int128)(tsc - ann_clock.tsc0) * ann_clock.mult >> 32);
}

/* Nanoseconds on the chosen clock (comparable with CLOCK_MONOTONIC). */
static inline uint64_t ann_clock_ns(void)
{
	if (ann_clock.source == ANN_CLOCK_TSC)
		return ann_tsc_ns(ann_rdtsc());
	return ann_monotonic_ns();
}

static inline bool ann_metric_on(enum ann_metric m)
{
	return atomic_load_explicit(&ann_metrics_enabled, memory_order_relaxed) & ANN_METRIC_BIT(m);
}

/*
 * A successful allocation of n bytes, unless an interposer nested inside
 * this one already counted it (operator new calling malloc, reallocarray
 * calling realloc): the innermost interposed entry counts, outer ones only
 * when nothing inner did. `before` is ann_counters.mem before the real call.
 */
static inline void ann_count_alloc(uint64_t before, uint64_t n)
{
	if (ann_counters.mem == before && ann_metric_on(ANN_MEM))
		ann_counters.mem = before + n;
}

/*
 * The signal fences keep the compiler from reordering the two stores, so a
 * signal handler's probe reading the counters in between sees either the
 * state before or the state after (an interrupted update stays frozen for
 * the handler's whole call, so its entry and exit agree).
 */
static inline void ann_lock_acquired(uint64_t now)
{
	if (ann_counters.held == 0)
		ann_counters.hold_since = now;
	atomic_signal_fence(memory_order_seq_cst);
	ann_counters.held++;
}

static inline void ann_lock_released(uint64_t now)
{
	if (ann_counters.held == 0)
		return; /* acquired before we were watching, or through a path we do not see */
	if (ann_counters.held == 1) {
		ann_counters.hold += now - ann_counters.hold_since;
		atomic_signal_fence(memory_order_seq_cst);
	}
	ann_counters.held--;
}

/* A real function of the next object: versioned first, guarded against recursion. */
void *ann_real_symbol(const char *name, const char *version) ANN_HIDDEN;
/* True while this thread is inside ann_real_symbol (dlsym may allocate). */
bool ann_resolving(void) ANN_HIDDEN;

#endif
