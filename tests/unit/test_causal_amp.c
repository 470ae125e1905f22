/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Load amplification analysis (src/causal/amp.c) on hand-made profiles whose
 * scalability curve is computed by hand in the comments: per-run pooling,
 * means and t intervals over runs, relative performance, load from the
 * measured inter-arrival period, Little's law under load, and the guard
 * rails (unstable, beyond the period, no arrivals, no baseline).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "causal/causal.h"

#define EXP(d, dur, arr, thr)                                                                      \
	"experiment\tselected=p.c:9\tspeedup=0.00\tduration=" dur                                  \
	"\tselected-samples=0\tarrival-speedup=" d "\tarrivals=" arr "\tarrival-threads=" thr "\n"

/*
 * Throughput point "done" (t) and latency pair "req" (l), 2 arriving threads.
 *  d = 0:     run 1: 1 s, 100 done                       -> 100/s
 *             run 2: 0.5 s + 0.5 s, 40 + 80 done          -> 120/s   mean 110/s
 *             arrivals 220 in 2 s by 2 threads: p0 = 2 * 2 s / 220 = 18.18 ms
 *             req: L = 5 (both runs' records), lambda = 100/s -> W = 50 ms
 *  d = 5 ms:  runs 3, 4: 1 s each, 150 and 170 done       -> mean 160/s, x 1.4545
 *             load 5 / 18.18 = 27.5%
 *             req: 200 begins, 150 ends, L = 60 -> W = 60 * 1 s / 200 = 300 ms,
 *             relative W0/W = 1/6; arrivals outrun departures: unstable
 *  d = 8 ms:  run 5: 1 s, 150 done but 250 arrivals: 1.67 arrivals per visit
 *             against 1 at d = 0: saturated (the rate is the capacity)
 *  d = 20 ms: run 6: nothing arrived; 20 ms >= p0
 */
static const char amp_profile[] = "startup\ttime=1\n" EXP(
    "0", "1000000000", "100",
    "2") "throughput-point\tname=done\tdelta=100\n"
	 "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference=5\n"
	 "startup\ttime=2\n" EXP(
	     "0", "500000000", "40",
	     "2") "throughput-point\tname=done\tdelta=40\n"
		  "latency-point\tname=req\tarrivals=50\tdepartures=50\tdifference=5\n" EXP(
		      "0", "500000000", "80",
		      "2") "throughput-point\tname=done\tdelta=80\n"
			   "latency-point\tname=req\tarrivals=50\tdepartures=50\tdifference=5\n"
			   "startup\ttime=3\n" EXP(
			       "5000000", "1000000000", "150",
			       "2") "throughput-point\tname=done\tdelta=150\n"
				    "latency-point\tname=req\tarrivals=200\tdepartures="
				    "150\tdifference=60\n"
				    "startup\ttime=4\n" EXP(
					"5000000", "1000000000", "170",
					"2") "throughput-point\tname=done\tdelta=170\n"
					     "latency-point\tname=req\tarrivals=200\tdepartures="
					     "150\tdifference=60\n"
					     "startup\ttime=5\n" EXP(
						 "8000000", "1000000000", "250",
						 "2") "throughput-point\tname=done\tdelta=150\n"
						      "startup\ttime=6\n" EXP(
							  "20000000", "1000000000", "0",
							  "0") "throughput-point\tname=done\tdelta="
							       "100\n";

static void read_profile(struct causal_profile *p, const char *text)
{
	causal_profile_init(p);
	assert_int_equal(causal_profile_read_buffer(p, text, strlen(text), "amp.coz", NULL), 0);
	assert_int_equal(p->stats.malformed, 0);
}

static size_t point_index(const struct causal_profile *p, const char *name)
{
	uint32_t id = causal_profile_find_string(p, name);

	for (size_t j = 0; j < p->n_points; j++)
		if (p->points[j].name == id)
			return j;
	fail_msg("no point %s", name);
	return 0;
}

static void reads_the_amp_keys(void **state)
{
	struct causal_profile p;

	read_profile(&p, amp_profile);
	assert_int_equal(p.n_experiments, 7);
	assert_true(p.experiments[0].has_arrival_speedup);
	assert_int_equal(p.experiments[0].arrival_speedup_ns, 0);
	assert_int_equal(p.experiments[3].arrival_speedup_ns, 5000000);
	assert_int_equal(p.experiments[3].arrivals, 150);
	assert_int_equal(p.experiments[3].arrival_threads, 2);
	causal_profile_free(&p);
}

static void malformed_amp_keys_are_rejected(void **state)
{
	static const char bad[] =
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=5\tarrival-speedup=-3\n"
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=5\tarrivals=x\n"
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=5\tarrival-threads=-1\n";
	struct causal_profile p;

	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(&p, bad, strlen(bad), "bad.coz", NULL), 0);
	assert_int_equal(p.stats.malformed, 3);
	assert_int_equal(p.n_experiments, 0);
	causal_profile_free(&p);
}

static void scalability_curve_by_hand(void **state)
{
	struct causal_profile p;
	struct causal_amp a;
	const struct causal_amp_point *t0, *t5, *t8, *l0, *l5;
	size_t done, req;

	read_profile(&p, amp_profile);
	assert_int_equal(causal_amp_analyze(&p, &a), 0);
	done = point_index(&p, "done");
	req = point_index(&p, "req");
	assert_int_equal(a.n_levels, 4);
	assert_int_equal(a.baseline, 0);
	assert_int_equal(a.levels[1].arrival_speedup_ns, 5000000);
	assert_int_equal(a.levels[0].runs, 2);
	assert_int_equal(a.levels[0].experiments, 3);

	t0 = &a.levels[0].points[done];
	assert_int_equal(t0->runs, 2);
	assert_float_equal(t0->value, 110.0, 1e-9);
	/* t interval, 1 df: 110 +- 12.7062 * 14.1421 / sqrt(2) = 110 +- 127.062 */
	assert_float_equal(t0->high - t0->value, 127.062, 1e-2);
	assert_float_equal(t0->value - t0->low, 127.062, 1e-2);
	assert_float_equal(t0->relative, 1.0, 1e-12);

	t5 = &a.levels[1].points[done];
	assert_float_equal(t5->value, 160.0, 1e-9);
	assert_float_equal(t5->relative, 160.0 / 110.0, 1e-9);
	assert_true(t5->rel_low <= t5->relative && t5->relative <= t5->rel_high);
	assert_true(t5->rel_low < t5->rel_high);
	assert_false(t5->unstable);

	assert_float_equal(a.base_period_ns, 2.0 * 2e9 / 220.0, 1e-3);
	assert_float_equal(a.levels[1].load, 5e6 / (2.0 * 2e9 / 220.0), 1e-9);
	assert_float_equal(a.levels[0].load, 0.0, 1e-12);

	/* Little's law: W = 5 * 1 s / 100 = 50 ms at 0; 300 ms at 5 ms */
	l0 = &a.levels[0].points[req];
	l5 = &a.levels[1].points[req];
	assert_float_equal(l0->value, 5e7, 1e-3);
	assert_float_equal(l5->value, 3e8, 1e-3);
	assert_float_equal(l5->relative, 1.0 / 6.0, 1e-9);
	assert_false(l0->unstable);
	assert_true(l5->unstable);

	t8 = &a.levels[2].points[done];
	assert_int_equal(t8->runs, 1);
	assert_float_equal(t8->low, t8->value, 1e-12); /* one run: no interval */
	/* beyond capacity: a throughput point is saturated (its rate is the capacity), not
	 * unstable: that is for latency, where Little's law needs a stable system */
	assert_true(t8->saturated);
	assert_false(t8->unstable);
	assert_false(t5->saturated);

	assert_int_equal(a.no_arrivals_ns, 20000000);
	assert_int_equal(a.beyond_period_ns, 20000000);
	causal_amp_free(&a);
	causal_profile_free(&p);
}

/* Runs appending to one profile at once: each run's experiments, wherever they lie. */
static void interleaved_tagged_runs(void **state)
{
	static const char text[] =
	    "startup\ttime=1\trun=A\n"
	    "startup\ttime=2\trun=B\n"
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=500000000\tselected-samples=0\t"
	    "arrival-speedup=0\tarrivals=40\tarrival-threads=2\trun=B\n"
	    "throughput-point\tname=done\tdelta=40\trun=B\n"
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=1000000000\tselected-samples=0\t"
	    "arrival-speedup=0\tarrivals=100\tarrival-threads=2\trun=A\n"
	    "throughput-point\tname=done\tdelta=100\trun=A\n"
	    "experiment\tselected=p.c:9\tspeedup=0.00\tduration=500000000\tselected-samples=0\t"
	    "arrival-speedup=0\tarrivals=80\tarrival-threads=2\trun=B\n"
	    "throughput-point\tname=done\tdelta=80\trun=B\n";
	struct causal_profile p;
	struct causal_amp a;

	read_profile(&p, text);
	assert_int_equal(causal_amp_analyze(&p, &a), 0);
	assert_int_equal(a.n_levels, 1);
	assert_int_equal(a.levels[0].runs, 2);
	assert_int_equal(a.levels[0].experiments, 3);
	/* run A 100/s, run B 120/s: the mean of the runs, as when they follow each other */
	assert_float_equal(a.levels[0].points[point_index(&p, "done")].value, 110.0, 1e-9);
	causal_amp_free(&a);
	causal_profile_free(&p);
}

static void warnings_name_the_levels(void **state)
{
	struct causal_profile p;
	struct causal_amp a;
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);

	read_profile(&p, amp_profile);
	assert_int_equal(causal_amp_analyze(&p, &a), 0);
	causal_amp_warn(err, &p, &a);
	fclose(err);
	assert_non_null(strstr(buf, "no arrivals were counted at arrival speedup 20 ms"));
	assert_non_null(strstr(buf, "reaches the inter-arrival period"));
	assert_non_null(strstr(buf, "at arrival speedup 5 ms arrivals outrun departures at req"));
	/* a throughput at capacity is not warned about: its value stands */
	assert_null(strstr(buf, "arrivals outrun departures at done"));
	assert_null(strstr(buf, "no baseline"));
	free(buf);
	causal_amp_free(&a);
	causal_profile_free(&p);
}

static void plain_profiles_are_not_amp(void **state)
{
	static const char plain[] = "startup\ttime=1\n"
				    "experiment\tselected=a.c:1\tspeedup=0.00\tduration=100\n"
				    "throughput-point\tname=x\tdelta=9\n";
	struct causal_profile p;
	struct causal_amp a;

	read_profile(&p, plain);
	assert_int_equal(causal_amp_analyze(&p, &a), 1);
	causal_profile_free(&p);
}

static void no_baseline_uses_each_levels_own_period(void **state)
{
	/* d = 5 ms, 100 arrivals by 1 thread in 1 s effective: p' = 10 ms, p = 15 ms */
	static const char text[] = "startup\ttime=1\n" EXP(
	    "5000000", "1000000000", "100", "1") "throughput-point\tname=done\tdelta=100\n";
	struct causal_profile p;
	struct causal_amp a;

	read_profile(&p, text);
	assert_int_equal(causal_amp_analyze(&p, &a), 0);
	assert_int_equal(a.baseline, -1);
	assert_float_equal(a.levels[0].load, 5.0 / 15.0, 1e-9);
	assert_false(a.levels[0].points[0].has_relative);
	causal_amp_free(&a);
	causal_profile_free(&p);
}

/*
 * Over a whole finite run everything that arrived is eventually done; the
 * windows after the last arrival (the drain, with arrival-threads=0) must not
 * hide that arrivals outran departures while they came, nor shorten the
 * period: d = 0: 100 arrivals, 100 done; d = 5 ms: 100 arrivals, 60 done,
 * then 40 done in a drain window.
 */
static void drain_windows_do_not_hide_instability(void **state)
{
	static const char text[] = "startup\ttime=1\n" EXP(
	    "0", "1000000000", "100",
	    "2") "throughput-point\tname=done\tdelta=100\n"
		 "startup\ttime=2\n" EXP("5000000", "1000000000", "100",
					 "2") "throughput-point\tname=done\tdelta="
					      "60\n" EXP("5000000", "1000000000", "0",
							 "0") "throughput-point\tname="
							      "done\tdelta=40\n";
	struct causal_profile p;
	struct causal_amp a;

	read_profile(&p, text);
	assert_int_equal(causal_amp_analyze(&p, &a), 0);
	assert_true(a.levels[1].points[0].saturated);
	assert_false(a.levels[1].points[0].unstable); /* a throughput at capacity is valid */
	assert_false(a.levels[0].points[0].saturated);
	/* 2 threads x 1 s / 100 arrivals at d = 0; at 5 ms the drain second does not count */
	assert_float_equal(a.levels[0].period_ns, 2e7, 1e-6);
	assert_float_equal(a.levels[1].period_ns, 2e7, 1e-6);
	causal_amp_free(&a);
	causal_profile_free(&p);
}

static void level_view_keeps_one_load(void **state)
{
	struct causal_profile p, view;

	read_profile(&p, amp_profile);
	assert_int_equal(causal_amp_level_view(&p, 5000000, &view), 0);
	assert_int_equal(view.n_experiments, 2);
	for (size_t i = 0; i < view.n_experiments; i++)
		assert_int_equal(view.experiments[i].arrival_speedup_ns, 5000000);
	assert_string_equal(causal_profile_string(&view, view.experiments[0].selected), "p.c:9");
	causal_amp_view_free(&view);
	assert_int_equal(p.n_experiments, 7);
	causal_profile_free(&p);
}

static void format_ns_for_people(void **state)
{
	char b[32];

	causal_amp_format_ns(b, sizeof(b), 0);
	assert_string_equal(b, "0");
	causal_amp_format_ns(b, sizeof(b), 750000);
	assert_string_equal(b, "750 us");
	causal_amp_format_ns(b, sizeof(b), 1500000);
	assert_string_equal(b, "1.5 ms");
	causal_amp_format_ns(b, sizeof(b), 1500);
	assert_string_equal(b, "1.5 us");
	causal_amp_format_ns(b, sizeof(b), 20000000);
	assert_string_equal(b, "20 ms");
	causal_amp_format_ns(b, sizeof(b), 250);
	assert_string_equal(b, "250 ns");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_the_amp_keys),
	    cmocka_unit_test(malformed_amp_keys_are_rejected),
	    cmocka_unit_test(scalability_curve_by_hand),
	    cmocka_unit_test(interleaved_tagged_runs),
	    cmocka_unit_test(warnings_name_the_levels),
	    cmocka_unit_test(plain_profiles_are_not_amp),
	    cmocka_unit_test(no_baseline_uses_each_levels_own_period),
	    cmocka_unit_test(drain_windows_do_not_hide_instability),
	    cmocka_unit_test(level_view_keeps_one_load),
	    cmocka_unit_test(format_ns_for_people),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
