/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Little's law's L in a virtually sped-up program (src/causal/runtime/
 * in_flight.c), on timelines worked out by hand: what the runtime writes as
 * in-flight-ns must be the sum of the requests' virtual latencies, so that
 * W = L / lambda is the latency of the program with the line really faster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "causal/runtime/in_flight.h"

#define MS 1000000ULL

static void step(struct in_flight *f, uint64_t t_ms, int64_t n)
{
	in_flight_step(f, t_ms * MS, &n, 1);
}

/*
 * A closed loop, one client and one server, the line made 100% faster. Per
 * cycle of 5 ms wall time: the request is in flight for 4 ms (1 ms of
 * parsing, then 3 ms in the selected line, for which the server raises G by
 * 3 ms while the request is still in flight; the blocked client skips those
 * pauses), then the client thinks for 1 ms. With the line really gone the
 * cycle is 1 ms in flight and 1 ms thinking: 10 cycles take 20 ms of virtual
 * time (the effective duration) and hold 10 ms of in-flight time. Averaged
 * over wall time instead, L = 4/5 and L x duration = 16 ms: W 60% too long.
 */
static void closed_loop_virtual_time(void **state)
{
	struct in_flight f;
	int64_t paused;
	uint64_t t = 0;

	(void)state;
	/* each sampled number counts for the time since the previous sample */
	in_flight_start(&f, 0);
	for (int c = 0; c < 10; c++) {
		for (uint64_t k = 1; k <= 4; k++)
			step(&f, t + k, 1); /* the request, in flight for 4 ms */
		step(&f, t + 5, 0);	    /* answered: the client thinks */
		t += 5;
	}
	paused = 10 * 3 * (int64_t)MS; /* 3 ms of G per cycle, 1 in flight */
	in_flight_stop(&f, 10 * 3 * MS, &paused, 1);
	assert_int_equal(in_flight_value(&f, 0, 20 * (int64_t)MS, -1), 10 * (int64_t)MS);
}

/* At 0% nothing is paused: the wall-time integral, each sample standing for the time since the
 * last. */
static void unpaused_is_the_wall_time_average(void **state)
{
	struct in_flight f;
	int64_t none = 0;

	(void)state;
	in_flight_start(&f, 0);
	step(&f, 1, 0);
	step(&f, 5, 1); /* a late sample: 1 in flight for 4 ms */
	step(&f, 6, 2);
	step(&f, 8, 0);
	in_flight_stop(&f, 0, &none, 1);
	/* 6 ms in flight (4 + 2) over 8 ms; duration = wall time */
	assert_int_equal(in_flight_value(&f, 0, 8 * (int64_t)MS, -1), 6 * (int64_t)MS);
}

/* The average is over virtual time and scaled to the effective duration given. */
static void average_scaled_to_duration(void **state)
{
	struct in_flight f;
	int64_t paused = 0;

	(void)state;
	in_flight_start(&f, 0);
	for (uint64_t k = 1; k <= 10; k++)
		step(&f, k, 2);
	/* 4 ms of G raised while nothing of this point was in flight */
	in_flight_stop(&f, 4 * MS, &paused, 1);
	/* 20 ms in flight over 6 ms of virtual time: L = 10/3; duration 6 ms */
	assert_int_equal(in_flight_value(&f, 0, 6 * (int64_t)MS, -1), 20 * (int64_t)MS);
}

/* Nothing sampled: the fallback; a point registered later adds from its first sample. */
static void new_point_and_fallback(void **state)
{
	struct in_flight f;
	int64_t one = 1, n[2] = {1, 1}, paused[2] = {0, 0};

	(void)state;
	in_flight_start(&f, 0);
	assert_int_equal(in_flight_value(&f, 0, 5 * (int64_t)MS, 77), 77);
	in_flight_step(&f, 2 * MS, &one, 1);
	in_flight_step(&f, 4 * MS, n, 2);
	in_flight_stop(&f, 0, paused, 2);
	assert_int_equal(in_flight_value(&f, 0, 4 * (int64_t)MS, -1), 4 * (int64_t)MS);
	assert_int_equal(in_flight_value(&f, 1, 4 * (int64_t)MS, -1), 2 * (int64_t)MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(closed_loop_virtual_time),
	    cmocka_unit_test(unpaused_is_the_wall_time_average),
	    cmocka_unit_test(average_scaled_to_duration),
	    cmocka_unit_test(new_point_and_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
