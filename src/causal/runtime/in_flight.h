/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Little's law's L for latency points, integrated over an experiment's
 * effective (virtual) time. Pure arithmetic on numbers in flight given by
 * the caller (progress.c reads them from the points' counters), so that it
 * can be tested alone.
 */
#ifndef LEVER_CAUSAL_IN_FLIGHT_H
#define LEVER_CAUSAL_IN_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#define IN_FLIGHT_MAX_POINTS 256

/*
 * sum[i]: the number in flight at point i integrated over wall time, ns,
 * each sampled value standing for the time since the previous sample;
 * time: the wall time covered. paused[i]: the number in
 * flight integrated over the global delay G as it was raised during the
 * experiment (pause_ns in all), ns. The experiment's virtual time removes
 * those pauses, and with them the in-flight time they held.
 */
struct in_flight {
	double sum[IN_FLIGHT_MAX_POINTS];
	int64_t paused[IN_FLIGHT_MAX_POINTS];
	uint64_t time, last_ns, pause_ns;
};

/* Starts at now_ns. */
void in_flight_start(struct in_flight *f, uint64_t now_ns);
/* The numbers in flight now, counted for the time since the last step. */
void in_flight_step(struct in_flight *f, uint64_t now_ns, const int64_t *n, size_t count);
/* The global delay raised during the experiment, and its in-flight integral per point. */
void in_flight_stop(struct in_flight *f, uint64_t pause_ns, const int64_t *paused, size_t count);
/*
 * Point i's L x duration, ns: its time average over the experiment's virtual
 * time (wall time less the pauses) times duration (the effective duration);
 * fallback when nothing was sampled.
 */
long long in_flight_value(const struct in_flight *f, size_t i, int64_t duration,
			  long long fallback);

#endif
