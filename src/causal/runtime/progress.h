/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Progress points of the causal runtime (paper §3.3). */
#ifndef LEVER_CAUSAL_PROGRESS_H
#define LEVER_CAUSAL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "causal/runtime/in_flight.h"

#define PROGRESS_MAX_POINTS 256
#define PROGRESS_NAME_MAX   512

enum progress_kind {
	PROGRESS_SOURCE,     /* LEVER_PROGRESS / COZ_PROGRESS: counted by the program */
	PROGRESS_LATENCY,    /* LEVER_BEGIN/END pair */
	PROGRESS_BREAKPOINT, /* --progress FILE:LINE, counted by a breakpoint */
	PROGRESS_SAMPLED,    /* --sampled-progress FILE:LINE: samples in the line */
	PROGRESS_END_TO_END, /* --end-to-end */
};

/* Coz's counter ABI: programs increment count with a relaxed atomic add. */
typedef struct {
	size_t count;
	size_t backoff;
} coz_counter_t;

enum { COUNTER_THROUGHPUT = 1, COUNTER_BEGIN = 2, COUNTER_END = 3, COUNTER_ARRIVAL = 4 };

struct progress_snapshot {
	uint64_t value[PROGRESS_MAX_POINTS];
	uint64_t end_value[PROGRESS_MAX_POINTS]; /* latency: END counter */
	size_t n;
};

/* Starts integrating at now_ns. */
void progress_in_flight_start(struct in_flight *f, uint64_t now_ns);
/* Adds the numbers in flight since the last sample, weighted by the time since then. */
void progress_in_flight_sample(struct in_flight *f, uint64_t now_ns);
/* Ends the experiment's integration: the global delay raised during it, ns. */
void progress_in_flight_stop(struct in_flight *f, uint64_t pause_ns);
/*
 * The global delay G was raised by ns: the requests in flight now are held
 * for that time in wall time but not in the virtual program's (async-signal
 * safe; called by whichever thread raises G).
 */
void progress_note_pause(uint64_t ns);
/* Whether any latency point exists (the experiment then samples more often). */
bool progress_has_latency(void);

/* Registers command-line points (needs the line map). */
void progress_resolve_command_line(const char *counted_list, const char *sampled_list);
/* Visits the end-to-end point (once, after main returns). */
void progress_visit_end_to_end(void);
void progress_register_end_to_end(void);
size_t progress_count(void);
void progress_snapshot_take(struct progress_snapshot *s);
/*
 * Writes one record per point for the interval between two snapshots; a
 * latency point's in-flight-ns is the time average of f over the
 * experiment's virtual time times duration (its effective duration, ns).
 */
void progress_write_records(const struct progress_snapshot *a, const struct progress_snapshot *b,
			    const struct in_flight *f, int64_t duration,
			    void (*emit)(const char *line, void *ctx), void *ctx);
/* Smallest visit delta over all points (arrivals for latency points). */
uint64_t progress_min_delta(const struct progress_snapshot *a, const struct progress_snapshot *b);
/* Per-thread breakpoint counters (uprobes cannot be inherited by new threads). */
struct thread_state;
void progress_thread_start(struct thread_state *t);
void progress_thread_stop(struct thread_state *t);
void progress_forget_after_fork(struct thread_state *t);
void progress_after_fork_child(struct thread_state *self);

/* Total visits so far over all points (for the no-experiment diagnosis). */
uint64_t progress_total_visits(void);

#endif
