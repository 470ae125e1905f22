/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Little's law in a virtually sped-up program (paper §3.3, §3.4). Its
 * latency W = L / lambda is the virtual program's: lambda is arrivals over
 * the effective duration, and L must be the time average of the number in
 * flight over that same virtual time. A virtual speedup inserts pauses (the
 * global delay G) while requests are in flight: a request being served by
 * the selected line is in flight for the line's whole real time, of which
 * the virtual program removes G. Averaging over wall time kept that time in
 * L. So the in-flight count integrated over the rises of G (weighted by the
 * number in flight when G was raised) is taken off the wall-time integral,
 * and the rest is averaged over wall time less G. That is exact for requests
 * whose threads wait blocked while G rises (they skip the pauses). A thread
 * that owes pauses and pays them inside its own request (at the first
 * interposed call after its BEGIN) is held in flight for them too, and no
 * global count can tell: Coz's counters say how many requests are in flight,
 * not whose (bench/causal/README.md, `latency`).
 *
 * Each sample counts for the time since the previous one (right endpoint).
 * The profiler thread's samples are not evenly spread when the CPUs are
 * busy (it wakes late while the clients think), and both endpoints are
 * biased in the bench's closed loop: W at 0% comes out 6% above the
 * program's own mean latency this way, 19% with the left endpoint.
 */
#include <string.h>

#include "causal/runtime/in_flight.h"

static size_t clamp_count(size_t count)
{
	return count < IN_FLIGHT_MAX_POINTS ? count : IN_FLIGHT_MAX_POINTS;
}

void in_flight_start(struct in_flight *f, uint64_t now_ns)
{
	memset(f, 0, sizeof(*f));
	f->last_ns = now_ns;
}

void in_flight_step(struct in_flight *f, uint64_t now_ns, const int64_t *n, size_t count)
{
	uint64_t dt = now_ns > f->last_ns ? now_ns - f->last_ns : 0;

	count = clamp_count(count);
	f->last_ns = now_ns > f->last_ns ? now_ns : f->last_ns;
	f->time += dt;
	for (size_t i = 0; i < count; i++)
		f->sum[i] += (double)n[i] * (double)dt;
}

void in_flight_stop(struct in_flight *f, uint64_t pause_ns, const int64_t *paused, size_t count)
{
	count = clamp_count(count);
	f->pause_ns = pause_ns;
	for (size_t i = 0; i < count; i++)
		f->paused[i] = paused[i];
}

static long long round_ll(double v)
{
	/* by hand: the runtime does not link libm */
	return v > 9.2e18    ? (long long)9.2e18
	       : v < -9.2e18 ? (long long)-9.2e18
			     : (long long)(v + (v < 0 ? -0.5 : 0.5));
}

long long in_flight_value(const struct in_flight *f, size_t i, int64_t duration, long long fallback)
{
	double wall, virt, held;

	if (!f || !f->time || i >= IN_FLIGHT_MAX_POINTS)
		return fallback;
	wall = (double)f->time;
	virt = wall - (double)f->pause_ns;
	held = f->sum[i] - (double)f->paused[i];
	if (!(virt > 0)) /* pauses beyond the sampled window: nothing to average over */
		return round_ll(f->sum[i] / wall * (double)duration);
	return round_ll((held > 0 ? held : 0) / virt * (double)duration);
}
