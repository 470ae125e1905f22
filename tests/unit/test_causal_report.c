/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The full causal report (src/causal): aggregation, phase correction, Little's
 * law, bootstrap intervals and their determinism, ranking, the contention
 * flag, the JSON Lines reader (and a fuzz loop over it), and the JSON and HTML
 * outputs.
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
#include <jansson.h>

#include "base/base.h"
#include "fuzz_edit.h"
#include "causal/causal.h"
#include "causal_test_util.h"

/* One experiment with one throughput point `p`. */
static void exp_tp(char **buf, size_t *len, const char *line, int pct, long duration, long visits,
		   long samples)
{
	append(buf, len,
	       "experiment\tselected=%s\tspeedup=%d.%02d\tduration=%ld\tselected-samples=%ld\n"
	       "throughput-point\tname=p\tdelta=%ld\n",
	       line, pct / 100, pct % 100, duration, samples, visits);
}

static const struct causal_bucket *bucket_at(const struct causal_series *c, int pct)
{
	for (size_t i = 0; i < c->n_buckets; i++) {
		if (c->buckets[i].speedup_pct == pct)
			return &c->buckets[i];
	}
	fail_msg("no bucket at %d%%", pct);
	return NULL;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* ------------------------------------------------------------ aggregation */

static void test_aggregation_sums_not_rates(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	exp_tp(&buf, &len, "a.c:1", 0, 1000, 50, 1); /* p0 = 20 */
	/* 50%: 100 ns / 10 visits and 400 ns / 20 visits: p = 500 / 30, not the rates' mean */
	exp_tp(&buf, &len, "a.c:1", 50, 100, 10, 1);
	exp_tp(&buf, &len, "a.c:1", 50, 400, 20, 1);
	for (int pct = 10; pct <= 30; pct += 10)
		exp_tp(&buf, &len, "a.c:1", pct, 1000, 50, 1);
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	assert_int_equal(s.n_series, 1);
	c = series_of(&p, &s, "a.c:1");
	assert_int_equal(bucket_at(c, 50)->experiments, 2);
	NEAR(bucket_at(c, 50)->duration, 500);
	NEAR(bucket_at(c, 50)->visits, 30);
	NEAR(bucket_at(c, 50)->program_speedup, 1.0 - (500.0 / 30) / 20);
	NEAR(bucket_at(c, 0)->program_speedup, 0);
	NEAR(bucket_at(c, 20)->program_speedup, 0);
	/* several files (here: the same buffer twice) merge: sums double, speedups stay */
	assert_int_equal(causal_profile_read_buffer(&p, buf, len, "u.coz", NULL), 0);
	causal_summary_free(&s);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	c = series_of(&p, &s, "a.c:1");
	assert_int_equal(p.n_runs, 2);
	assert_int_equal(bucket_at(c, 50)->experiments, 4);
	NEAR(bucket_at(c, 50)->program_speedup, 1.0 - (500.0 / 30) / 20);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ far-out experiments */

/*
 * Ten experiments per speedup with 20 visits each, costs 100..109 ns per
 * visit, plus one experiment stalled from outside (3 visits in the time of
 * 20) at 50%: it is set aside, the others are summed as before; --no-trim
 * keeps it. A bucket whose experiments see few visits is never trimmed.
 */
static void test_far_out_experiments(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;
	double sum50 = 0;

	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25) {
		for (int k = 0; k < 10; k++) {
			long cost = (100 - pct / 2) + k; /* ns per visit */

			exp_tp(&buf, &len, "a.c:1", pct, cost * 20, 20, 1);
			if (pct == 50)
				sum50 += (double)cost * 20;
		}
	}
	exp_tp(&buf, &len, "a.c:1", 50, 75 * 20, 3, 1); /* the stalled one: 500 ns per visit */
	/* few visits per experiment: 2 each, one far out, nothing set aside */
	for (int pct = 0; pct <= 100; pct += 25) {
		for (int k = 0; k < 10; k++)
			exp_tp(&buf, &len, "b.c:1", pct, 200 + k, 2, 1);
		if (pct == 50)
			exp_tp(&buf, &len, "b.c:1", pct, 5000, 2, 1);
	}
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 100}, &s), 0);
	assert_true(s.trim);
	assert_int_equal(s.trimmed_experiments, 1);
	c = series_of(&p, &s, "a.c:1");
	assert_int_equal(bucket_at(c, 50)->experiments, 10);
	assert_int_equal(bucket_at(c, 50)->trimmed, 1);
	NEAR(bucket_at(c, 50)->duration, sum50);
	NEAR(bucket_at(c, 50)->visits, 200);
	assert_int_equal(bucket_at(c, 0)->trimmed, 0);
	c = series_of(&p, &s, "b.c:1");
	assert_int_equal(bucket_at(c, 50)->experiments, 11);
	assert_int_equal(bucket_at(c, 50)->trimmed, 0);
	causal_summary_free(&s);

	assert_int_equal(
	    causal_summarize(
		&p, &(struct causal_summary_options){.resamples = 100, .no_trim = true}, &s),
	    0);
	assert_false(s.trim);
	assert_int_equal(s.trimmed_experiments, 0);
	c = series_of(&p, &s, "a.c:1");
	assert_int_equal(bucket_at(c, 50)->experiments, 11);
	NEAR(bucket_at(c, 50)->visits, 203);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/*
 * Visits are counts: experiments of one length catch 8 visits, or 7 or 9
 * when their ends fall differently between two visits (bench/causal's
 * library at 0%). Most catch 8 and their costs lie 2 ns apart, so the
 * quartiles do too; the ones a visit off are no more disturbed than the
 * rest and stay. One experiment stalled to 2 visits is still set aside.
 */
static void test_far_out_counts_visits(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25) {
		long d = 500000 - pct * 1000; /* ns per experiment */

		for (int k = 0; k < 16; k++)
			exp_tp(&buf, &len, "a.c:1", pct, d + k, 8, 1);
		for (int k = 0; k < 3; k++) {
			exp_tp(&buf, &len, "a.c:1", pct, d + k, 7, 1);
			exp_tp(&buf, &len, "a.c:1", pct, d + k, 9, 1);
		}
	}
	exp_tp(&buf, &len, "a.c:1", 0, 500000, 2, 1); /* stalled */
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 100}, &s), 0);
	c = series_of(&p, &s, "a.c:1");
	assert_int_equal(bucket_at(c, 0)->trimmed, 1);
	assert_int_equal(bucket_at(c, 0)->experiments, 22);
	NEAR(bucket_at(c, 0)->visits, 22 * 8);
	for (int pct = 25; pct <= 100; pct += 25) {
		assert_int_equal(bucket_at(c, pct)->trimmed, 0);
		assert_int_equal(bucket_at(c, pct)->experiments, 22);
	}
	assert_int_equal(s.trimmed_experiments, 1);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ phase correction */

/*
 * Hand-computed: T = 10000 ns (runtime), s = 100 samples of a.c:1 over the
 * run. At 0%: 1000 ns, 100 visits (p0 = 10) and 50 samples of the line:
 * t_A = t_obs * s / s_obs = 1000 * 100 / 50 = 2000 ns, factor t_A / T = 0.2.
 * At x%: 800 ns, 100 visits: raw speedup 1 - 8/10 = 0.2, corrected 0.04,
 * whatever the bucket's own samples (its effective duration is shortened by
 * the delays, so it does not estimate t_A).
 */
static void test_phase_correction(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	exp_tp(&buf, &len, "a.c:1", 0, 1000, 100, 50);
	exp_tp(&buf, &len, "a.c:1", 20, 800, 100, 40);
	exp_tp(&buf, &len, "a.c:1", 40, 800, 100, 40);
	exp_tp(&buf, &len, "a.c:1", 60, 800, 100, 400);
	exp_tp(&buf, &len, "a.c:1", 80, 800, 100, 4);
	exp_tp(&buf, &len, "a.c:1", 100, 800, 100, 0);
	exp_tp(&buf, &len, "b.c:1", 0, 1000, 100, 1); /* factor 20: capped at 1 */
	for (int pct = 25; pct <= 100; pct += 25)
		exp_tp(&buf, &len, "b.c:1", pct, 500, 100, 1);
	append(&buf, &len, "runtime\ttime=4000\nsamples\tlocation=a.c:1\tcount=30\n");
	/* cumulative records: the latest of the run counts */
	append(&buf, &len, "runtime\ttime=10000\nsamples\tlocation=a.c:1\tcount=100\n");
	append(&buf, &len, "samples\tlocation=b.c:1\tcount=200\n");
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	assert_true(s.phase_correction);
	assert_int_equal(s.runtime_ns, 10000);
	c = series_of(&p, &s, "a.c:1");
	assert_true(c->phase_corrected);
	assert_int_equal(c->line_samples, 100);
	assert_int_equal(c->n_buckets, 6);
	for (int pct = 20; pct <= 100; pct += 20) {
		NEAR(bucket_at(c, pct)->raw_speedup, 0.2);
		NEAR(bucket_at(c, pct)->phase_factor, 0.2);
		NEAR(bucket_at(c, pct)->program_speedup, 0.04);
	}
	c = series_of(&p, &s, "b.c:1");
	assert_true(c->phase_corrected);
	NEAR(bucket_at(c, 50)->phase_factor, 1.0);
	NEAR(bucket_at(c, 50)->program_speedup, 0.5);

	/* another program's run merged in: its runtime is not a.c:1's T */
	{
		static const char other[] = "startup\ttime=2\nruntime\ttime=1000000\n"
					    "samples\tlocation=z.c:9\tcount=5\n";

		assert_int_equal(
		    causal_profile_read_buffer(&p, other, strlen(other), "z.coz", NULL), 0);
		causal_summary_free(&s);
		assert_int_equal(
		    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s),
		    0);
		assert_int_equal(s.runtime_ns, 1010000);
		c = series_of(&p, &s, "a.c:1");
		assert_int_equal(c->line_runtime_ns, 10000);
		NEAR(bucket_at(c, 20)->program_speedup, 0.04);
	}
	causal_summary_free(&s);

	/* turned off: the raw speedups */
	assert_int_equal(
	    causal_summarize(
		&p, &(struct causal_summary_options){.resamples = 200, .no_phase_correction = true},
		&s),
	    0);
	assert_false(s.phase_correction);
	c = series_of(&p, &s, "a.c:1");
	assert_false(c->phase_corrected);
	NEAR(bucket_at(c, 20)->program_speedup, 0.2);
	NEAR(bucket_at(c, 100)->program_speedup, 0.2);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/*
 * lever's runtime record also says how much delay the experiments inserted:
 * the run was stretched by it, so T starts from the runtime without it (14000
 * ns real, 4000 of them delay: 10000, where the real 14000 would have given a
 * factor of 1/7), and gets back what the virtual speedups took off.
 */
/*
 * Coz's profiles do not record the delay: it is estimated from the run's
 * experiments, selected samples x speedup x Coz's 1 ms period (lever's own
 * period when its header gives one).
 */
static void test_inserted_delay_estimated(void **state)
{
	struct causal_profile p;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	exp_tp(&buf, &len, "a.c:1", 0, 1000000, 100, 50);
	exp_tp(&buf, &len, "a.c:1", 50, 800000, 100, 40); /* 40 x 0.5 x 1 ms = 20 ms */
	exp_tp(&buf, &len, "a.c:1", 25, 800000, 100, 8);  /* 8 x 0.25 x 1 ms = 2 ms */
	append(&buf, &len, "runtime\ttime=100000000\n");
	append(&buf, &len, "startup\ttime=2\tlever=1\tsampler=perf\tperiod=2000000\n");
	exp_tp(&buf, &len, "a.c:1", 50, 800000, 100, 10); /* 10 x 0.5 x 2 ms = 10 ms */
	append(&buf, &len, "runtime\ttime=50000000\n");
	load(&p, buf, len);
	assert_int_equal(p.n_runs, 2);
	assert_int_equal(p.runs[0].delay_ns, 22000000);
	assert_int_equal(causal_run_effective_runtime(&p.runs[0]), 78000000);
	assert_int_equal(p.runs[1].delay_ns, 10000000);
	assert_int_equal(causal_run_effective_runtime(&p.runs[1]), 40000000);
	causal_profile_free(&p);
	free(buf);
}

/*
 * A serial phase then a parallel phase with two threads (issue 18), in Coz's
 * random mode, modelled as lever's runtime measures them: per experiment of
 * 250 ms of the unmodified program, at line speedup x,
 *  - serial.c:1 (one thread): wall 250, delay 250 x, effective 250 (1 - x),
 *    250 selected samples;
 *  - par.c:1 (two threads, each pausing for the other's samples): wall
 *    250 (1 + x), delay 2 x 250 x, effective 250 (1 - x), 500 samples;
 *  - one visit per ms of the unmodified program in both phases.
 * Each phase is half of the run, so really shortening either line by x
 * speeds the program up by x / 2: both slopes 0.5, both factors 0.5. With T
 * the effective runtime (the sped-up program's) the factors came out 0.71.
 */
static void test_phase_correction_two_phases(void **state)
{
	static const int pcts[] = {0, 20, 0, 40, 0, 60, 0, 80};
	struct causal_profile p;
	struct causal_summary s;
	char *buf = NULL;
	size_t len = 0;

	for (int run = 0; run < 4; run++) {
		double wall = 0, delay = 0;

		append(&buf, &len, "startup\ttime=%d\tlever=1\tsampler=perf\tperiod=1000000\n",
		       run + 1);
		for (int k = 0; k < 8; k++) {
			int pct = pcts[(k + 2 * run) % 8];
			double x = pct / 100.0;

			exp_tp(&buf, &len, "serial.c:1", pct, lround(250e6 * (1 - x)), 250, 250);
			wall += 250e6;
			delay += 250e6 * x;
		}
		for (int k = 0; k < 8; k++) {
			int pct = pcts[(k + 2 * run + 1) % 8];
			double x = pct / 100.0;

			exp_tp(&buf, &len, "par.c:1", pct, lround(250e6 * (1 - x)), 250, 500);
			wall += 250e6 * (1 + x);
			delay += 2 * 250e6 * x;
		}
		append(&buf, &len,
		       "runtime\ttime=%.0f\tdelay=%.0f\nsamples\tlocation=serial.c:1\tcount=2000\n"
		       "samples\tlocation=par.c:1\tcount=4000\n",
		       wall, delay);
	}
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	for (const char *const *line = (const char *const[]){"serial.c:1", "par.c:1", NULL}; *line;
	     line++) {
		const struct causal_series *c = series_of(&p, &s, *line);

		assert_true(c->phase_corrected);
		assert_int_equal(c->line_runtime_ns, 4 * 4000000000LL);
		NEAR(bucket_at(c, 40)->phase_factor, 0.5);
		assert_true(fabs(c->slope - 0.5) < 0.05);
		NEAR(bucket_at(c, 80)->program_speedup, 0.4);
	}
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

static void test_phase_correction_without_inserted_delay(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	exp_tp(&buf, &len, "a.c:1", 0, 1000, 100, 50);
	for (int pct = 20; pct <= 100; pct += 20)
		exp_tp(&buf, &len, "a.c:1", pct, 800, 100, 40);
	append(&buf, &len, "runtime\ttime=14000\tdelay=4000\nsamples\tlocation=a.c:1\tcount=100\n");
	load(&p, buf, len);
	assert_int_equal(p.runs[0].delay_ns, 4000);
	assert_int_equal(causal_run_effective_runtime(&p.runs[0]), 10000);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	c = series_of(&p, &s, "a.c:1");
	assert_true(c->phase_corrected);
	/*
	 * T is the unmodified runtime: the effective 10000 plus what the five
	 * nonzero experiments took off it, 100 visits x the 0% cost of 10 ns
	 * - 800 ns each: 11000. Factor (1000 / 50) x 100 / 11000.
	 */
	assert_int_equal(c->line_runtime_ns, 11000);
	NEAR(bucket_at(c, 40)->phase_factor, 2000.0 / 11000);
	NEAR(bucket_at(c, 40)->program_speedup, 0.2 * 2000.0 / 11000);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);

	/* a malformed delay is a malformed record, not a silent 0 */
	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(
			     &p, "startup\ttime=1\nruntime\ttime=5\tdelay=x\n",
			     strlen("startup\ttime=1\nruntime\ttime=5\tdelay=x\n"), "d.coz", NULL),
			 0);
	assert_int_equal(p.stats.malformed, 1);
	assert_false(p.runs[0].has_runtime);
	causal_profile_free(&p);
}

/* Without samples/runtime records (Coz's viewer's case) there is nothing to correct with. */
static void test_phase_correction_needs_records(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25)
		exp_tp(&buf, &len, "a.c:1", pct, 1000 - 2 * pct, 100, 10);
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	assert_true(s.phase_correction);
	assert_false(s.series[0].phase_corrected);
	NEAR(bucket_at(&s.series[0], 50)->program_speedup, 0.1);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ Little's law */

static void test_littles_law_weighting(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	/*
	 * W = L / lambda = (sum diff*dur / sum dur) / (sum arrivals / sum dur).
	 * 0%: (10*1000 + 20*3000) / (100 + 300) = 175 ns. 50%: 7*2000/200 = 70 ns.
	 * Improvement (W0 - W) / W0 = 0.6.
	 */
	append(&buf, &len, "startup\ttime=1\n");
	append(&buf, &len,
	       "experiment\tselected=l.c:1\tspeedup=0.00\tduration=1000\n"
	       "latency-point\tname=req\tarrivals=100\tdepartures=99\tdifference=10\n"
	       "experiment\tselected=l.c:1\tspeedup=0.00\tduration=3000\n"
	       "latency-point\tname=req\tarrivals=300\tdepartures=300\tdifference=20\n"
	       "experiment\tselected=l.c:1\tspeedup=0.50\tduration=2000\n"
	       "latency-point\tname=req\tarrivals=200\tdepartures=200\tdifference=7\n");
	for (int pct = 10; pct <= 30; pct += 10)
		append(&buf, &len,
		       "experiment\tselected=l.c:1\tspeedup=0.%02d\tduration=1000\n"
		       "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference=%d\n",
		       pct, 17);
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	c = series_of(&p, &s, "l.c:1");
	assert_int_equal(p.points[c->point].kind, CAUSAL_POINT_LATENCY);
	NEAR(bucket_at(c, 50)->program_speedup, 0.6);
	NEAR(bucket_at(c, 10)->program_speedup, 1.0 - 170.0 / 175.0);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/*
 * lever's in-flight-ns (the number in flight averaged over the experiment,
 * times its duration) is L x duration itself: it replaces difference x
 * duration, the number in flight at the end only. Here the end values say
 * 10 and 20 in flight but the averages were 4 and 6: W_0 = (4*1000 +
 * 6*3000) / 400 = 55 ns, W at 50% = 3.5*2000 / 200 = 35 ns: (55 - 35) / 55.
 * (With the end values it would be 0.6, as above.) A malformed one makes
 * the record malformed.
 */
static void test_littles_law_in_flight(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *c;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	append(&buf, &len,
	       "experiment\tselected=l.c:1\tspeedup=0.00\tduration=1000\n"
	       "latency-point\tname=req\tarrivals=100\tdepartures=99\tdifference=10\t"
	       "in-flight-ns=4000\n"
	       "experiment\tselected=l.c:1\tspeedup=0.00\tduration=3000\n"
	       "latency-point\tname=req\tarrivals=300\tdepartures=300\tdifference=20\t"
	       "in-flight-ns=18000\n"
	       "experiment\tselected=l.c:1\tspeedup=0.50\tduration=2000\n"
	       "latency-point\tname=req\tarrivals=200\tdepartures=200\tdifference=7\t"
	       "in-flight-ns=7000\n");
	for (int pct = 10; pct <= 30; pct += 10)
		append(&buf, &len,
		       "experiment\tselected=l.c:1\tspeedup=0.%02d\tduration=1000\n"
		       "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference=17\t"
		       "in-flight-ns=5500\n",
		       pct);
	load(&p, buf, len);
	assert_true(p.deltas[0].has_in_flight);
	assert_int_equal(p.deltas[0].in_flight_ns, 4000);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	c = series_of(&p, &s, "l.c:1");
	NEAR(bucket_at(c, 50)->program_speedup, (55.0 - 35.0) / 55.0);
	NEAR(bucket_at(c, 10)->program_speedup, 0.0);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);

	causal_profile_init(&p);
	{
		static const char bad[] =
		    "startup\ttime=1\nexperiment\tselected=l.c:1\tspeedup=0.00\tduration=10\n"
		    "latency-point\tname=req\tarrivals=1\tdepartures=1\tdifference=0\t"
		    "in-flight-ns=x\n";

		assert_int_equal(causal_profile_read_buffer(&p, bad, strlen(bad), "b.coz", NULL),
				 0);
	}
	assert_int_equal(p.stats.malformed, 1);
	assert_int_equal(p.n_deltas, 0);
	causal_profile_free(&p);
}

/* ------------------------------------------------------------ bootstrap, ranking, contention */

/*
 * Lines with noisy experiments: `up` gains 30% of the line speedup, `down`
 * loses 50% of it (contention), `flat` nothing; each bucket has 4
 * experiments whose periods vary by up to +-5%.
 */
static char *noisy_profile(size_t *len)
{
	static const struct {
		const char *line;
		double gain;
	} lines[] = {{"up.c:1", 0.3}, {"down.c:2", -0.5}, {"flat.c:3", 0.0}};
	char *buf = NULL;
	struct rng r;

	*len = 0;
	rng_seed(&r, 99);
	append(&buf, len, "startup\ttime=1\n");
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		for (int pct = 0; pct <= 100; pct += 10) {
			for (int k = 0; k < 4; k++) {
				double period = 100.0 * (1 - lines[i].gain * pct / 100.0) *
						(0.95 + 0.1 * rng_double(&r));

				exp_tp(&buf, len, lines[i].line, pct, (long)(period * 100), 100, 1);
			}
		}
	}
	return buf;
}

static void test_bootstrap_deterministic(void **state)
{
	struct causal_profile p;
	struct causal_summary a, b, c;
	size_t len;
	char *buf = noisy_profile(&len);
	bool differs = false;

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, &(struct causal_summary_options){.seed = 7}, &a), 0);
	assert_int_equal(causal_summarize(&p, &(struct causal_summary_options){.seed = 7}, &b), 0);
	assert_int_equal(causal_summarize(&p, &(struct causal_summary_options){.seed = 8}, &c), 0);
	assert_int_equal(a.n_series, 3);
	for (size_t i = 0; i < a.n_series; i++) {
		const struct causal_series *x = &a.series[i], *y = &b.series[i], *z = &c.series[i];

		assert_true(x->slope_low == y->slope_low && x->slope_high == y->slope_high);
		assert_true(x->slope_low < x->slope && x->slope < x->slope_high);
		differs |= x->slope_low != z->slope_low;
		for (size_t k = 1; k < x->n_buckets; k++) {
			assert_true(x->buckets[k].ci_low == y->buckets[k].ci_low);
			assert_true(x->buckets[k].ci_high == y->buckets[k].ci_high);
			assert_true(x->buckets[k].ci_low <= x->buckets[k].ci_high);
			differs |= x->buckets[k].ci_high != z->buckets[k].ci_high;
		}
	}
	assert_true(differs); /* another seed, other resamples */
	causal_summary_free(&a);
	causal_summary_free(&b);
	causal_summary_free(&c);
	causal_profile_free(&p);
	free(buf);
}

static void test_contention_flag(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	size_t len;
	char *buf = noisy_profile(&len);

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	assert_true(series_of(&p, &s, "down.c:2")->contention);
	assert_true(series_of(&p, &s, "down.c:2")->slope_high < 0);
	assert_false(series_of(&p, &s, "up.c:1")->contention);
	assert_false(series_of(&p, &s, "flat.c:3")->contention);
	/* the flat line's interval covers 0, the rising one's lies above it */
	assert_true(series_of(&p, &s, "flat.c:3")->slope_low < 0);
	assert_true(series_of(&p, &s, "flat.c:3")->slope_high > 0);
	assert_true(series_of(&p, &s, "up.c:1")->slope_low > 0.2);
	/* slope order: up, flat, down */
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "up.c:1");
	assert_string_equal(causal_profile_string(&p, s.series[2].selected), "down.c:2");
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/*
 * Ranking: `early` gains 20% as soon as the line is 20% faster and no more
 * (slope ~0.12, impact 0.18); `late` gains 0.3 x (slope 0.3, impact 0.15).
 * By slope late is first, by impact (the default) early, by name early.
 */
static void test_ranking(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	char *buf = NULL;
	size_t len = 0;
	const struct causal_series *e, *l;

	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 10) {
		double x = pct / 100.0;

		exp_tp(&buf, &len, "early.c:1", pct, (long)(10000 * (1 - (x < 0.2 ? x : 0.2))), 100,
		       1);
		exp_tp(&buf, &len, "late.c:1", pct, (long)(10000 * (1 - 0.3 * x)), 100, 1);
	}
	load(&p, buf, len);
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.resamples = 200}, &s), 0);
	e = series_of(&p, &s, "early.c:1");
	l = series_of(&p, &s, "late.c:1");
	NEAR(e->impact, 0.18);
	NEAR(l->impact, 0.15);
	NEAR(l->slope, 0.3);
	assert_true(e->slope < l->slope);
	NEAR(l->intercept, 0);
	/* by impact by default (Coz's viewer): early first */
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "early.c:1");
	causal_summary_sort(&p, &s, CAUSAL_SORT_IMPACT);
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "early.c:1");
	causal_summary_sort(&p, &s, CAUSAL_SORT_SLOPE);
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "late.c:1");
	causal_summary_sort(&p, &s, CAUSAL_SORT_NAME);
	assert_string_equal(causal_profile_string(&p, s.series[0].selected), "early.c:1");
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ JSON Lines */

static const char jsonl_profile[] =
    "{\"type\":\"startup\",\"time\":1}\n"
    "{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0.0,\"duration\":1000,"
    "\"selected_samples\":5}\n"
    "{\"type\":\"throughput-point\",\"name\":\"p\",\"delta\":100}\n"
    "\n"
    "{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0.25,\"duration\":900,"
    "\"selected_samples\":5}\n"
    "{\"type\":\"throughput_point\",\"name\":\"p\",\"delta\":100}\n"
    "{\"type\":\"latency-point\",\"name\":\"req\",\"arrivals\":10,\"departures\":9,"
    "\"difference\":2}\n"
    "{\"type\":\"samples\",\"location\":\"a.c:1\",\"count\":42}\n"
    "{\"type\":\"runtime\",\"time\":5000}\n";

static const char legacy_profile[] =
    "startup\ttime=1\n"
    "experiment\tselected=a.c:1\tspeedup=0.00\tduration=1000\tselected-samples=5\n"
    "throughput-point\tname=p\tdelta=100\n"
    "experiment\tselected=a.c:1\tspeedup=0.25\tduration=900\tselected-samples=5\n"
    "throughput-point\tname=p\tdelta=100\n"
    "latency-point\tname=req\tarrivals=10\tdepartures=9\tdifference=2\n"
    "samples\tlocation=a.c:1\tcount=42\n"
    "runtime\ttime=5000\n";

static void assert_same_model(const struct causal_profile *a, const struct causal_profile *b)
{
	assert_int_equal(a->n_runs, b->n_runs);
	assert_int_equal(a->n_experiments, b->n_experiments);
	assert_int_equal(a->n_deltas, b->n_deltas);
	assert_int_equal(a->n_points, b->n_points);
	for (size_t i = 0; i < a->n_experiments; i++) {
		assert_int_equal(a->experiments[i].speedup_pct, b->experiments[i].speedup_pct);
		assert_int_equal(a->experiments[i].duration, b->experiments[i].duration);
		assert_int_equal(a->experiments[i].selected_samples,
				 b->experiments[i].selected_samples);
	}
	for (size_t i = 0; i < a->n_deltas; i++) {
		assert_int_equal(a->deltas[i].delta, b->deltas[i].delta);
		assert_int_equal(a->deltas[i].arrivals, b->deltas[i].arrivals);
		assert_int_equal(a->deltas[i].difference, b->deltas[i].difference);
	}
	assert_int_equal(causal_profile_total_runtime(a), causal_profile_total_runtime(b));
	assert_int_equal(causal_profile_line_samples(a, causal_profile_find_string(a, "a.c:1")),
			 causal_profile_line_samples(b, causal_profile_find_string(b, "a.c:1")));
}

static void test_jsonl_reader(void **state)
{
	struct causal_profile j, l;

	causal_profile_init(&j);
	causal_profile_init(&l);
	assert_int_equal(
	    causal_profile_read_buffer(&j, jsonl_profile, strlen(jsonl_profile), "p.jsonl", NULL),
	    0);
	assert_int_equal(
	    causal_profile_read_buffer(&l, legacy_profile, strlen(legacy_profile), "p.coz", NULL),
	    0);
	assert_int_equal(j.stats.malformed, 0);
	assert_int_equal(j.n_experiments, 2);
	assert_int_equal(j.experiments[1].speedup_pct, 25);
	assert_same_model(&j, &l);
	/* formats are told apart per file: a legacy file after a JSON one reads too */
	assert_int_equal(
	    causal_profile_read_buffer(&j, legacy_profile, strlen(legacy_profile), "q.coz", NULL),
	    0);
	assert_int_equal(j.n_runs, 2);
	assert_int_equal(j.stats.malformed, 0);
	causal_profile_free(&j);
	causal_profile_free(&l);
}

static const struct {
	const char *line;
	const char *message;
} bad_json[] = {
    {"{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":2,\"duration\":5}",
     "speedup=2 is not a number in 0..1"},
    {"{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0.5}", "without duration="},
    {"{\"type\":\"throughput-point\",\"name\":\"p\",\"delta\":-1}", "is negative"},
    {"{\"type\":\"throughput-point\",\"name\":\"p\",\"delta\":[1]}",
     "\"delta\" is not a string or a number"},
    {"{\"type\":\"throughput-point\",\"name\":\"p\",\"delta\":1.5}", "is not an integer"},
    {"{\"type\":\"experiment\",\"selected\":\"a\\tb\"}", "control character"},
    {"{\"type\":\"experiment\",\"a=b\":1}", "cannot be a field name"},
    {"{\"time\":1}", "without a \"type\" string"},
    {"[1,2]", "not an object"},
    {"{\"type\":\"startup\",\"time\":1", "not valid JSON"},
    {"{\"type\":\"startup\",\"type\":\"runtime\"}", "not valid JSON"},
    {"startup\ttime=1", "not valid JSON"},
    {"{\"type\":\"runtime\",\"time\":99999999999999999999}", "not valid JSON"},
};

static void test_jsonl_malformed(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_json); i++) {
		struct causal_profile p;
		char text[512];
		bool found = false;

		snprintf(text, sizeof(text),
			 "{\"type\":\"startup\",\"time\":1}\n"
			 "{\"type\":\"experiment\",\"selected\":\"f.c:1\",\"speedup\":0,"
			 "\"duration\":10}\n"
			 "%s\n",
			 bad_json[i].line);
		causal_profile_init(&p);
		assert_int_equal(
		    causal_profile_read_buffer(&p, text, strlen(text), "b.jsonl", NULL), 0);
		for (size_t k = 0; k < p.n_diagnostics; k++)
			found |= strstr(p.diagnostics[k], "b.jsonl:3: ") &&
				 strstr(p.diagnostics[k], bad_json[i].message);
		if (!found || p.stats.malformed != 1)
			fail_msg("line '%s': %s", bad_json[i].line,
				 p.n_diagnostics ? p.diagnostics[0] : "(no diagnostic)");
		causal_profile_free(&p);
		/* strict: the read fails with that message */
		causal_profile_init(&p);
		assert_int_equal(
		    causal_profile_read_buffer(&p, text, strlen(text), "b.jsonl",
					       &(struct causal_read_options){.strict = true}),
		    -1);
		assert_non_null(strstr(p.error, "b.jsonl:3: "));
		causal_profile_free(&p);
	}
}

/* ------------------------------------------------------------ outputs */

static void test_json_output(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	size_t len;
	char *buf = noisy_profile(&len), *out;
	json_error_t err;
	json_t *root, *series, *first, *pts;

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	out = report_to_string(causal_report_json, &p, &s, "t.coz");
	root = json_loads(out, 0, &err);
	if (!root)
		fail_msg("JSON does not parse: %s", err.text);
	assert_int_equal(json_integer_value(json_object_get(root, "lever_causal_report")), 2);
	assert_true(json_is_true(json_object_get(root, "phase_correction")));
	assert_int_equal(json_integer_value(json_object_get(root, "runs")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "experiments")), 3 * 11 * 4);
	assert_true(json_is_null(json_object_get(root, "sampler")));
	series = json_object_get(root, "series");
	assert_int_equal(json_array_size(series), 3);
	first = json_array_get(series, 0);
	assert_string_equal(json_string_value(json_object_get(first, "line")), "up.c:1");
	assert_string_equal(json_string_value(json_object_get(first, "point")), "p");
	assert_string_equal(json_string_value(json_object_get(first, "kind")), "throughput");
	assert_true(json_is_number(json_object_get(first, "slope")));
	assert_int_equal(json_array_size(json_object_get(first, "slope_ci")), 2);
	assert_true(json_is_number(json_object_get(first, "impact")));
	assert_true(json_is_number(json_object_get(first, "max_speedup")));
	assert_true(json_is_false(json_object_get(first, "contention")));
	assert_int_equal(json_integer_value(json_object_get(first, "experiments")), 44);
	pts = json_object_get(first, "points");
	assert_int_equal(json_array_size(pts), 11);
	assert_true(json_number_value(json_object_get(json_array_get(pts, 0), "line_speedup")) ==
		    0);
	assert_true(json_number_value(json_object_get(json_array_get(pts, 0), "program_speedup")) ==
		    0);
	assert_true(
	    fabs(json_number_value(json_object_get(json_array_get(pts, 5), "line_speedup")) - 0.5) <
	    1e-12);
	for (const char *const *k =
		 (const char *const[]){"ci", "experiments", "visits", "duration_ns", NULL};
	     *k; k++)
		assert_non_null(json_object_get(json_array_get(pts, 5), *k));
	assert_true(json_is_true(json_object_get(json_array_get(series, 2), "contention")));
	json_decref(root);
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

static void test_html_output(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	size_t len;
	char *buf = noisy_profile(&len), *out;
	size_t charts = 0;

	load(&p, buf, len);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	out = report_to_string(causal_report_html, &p, &s, "t.coz");
	for (const char *c = out; (c = strstr(c, "<svg")); c++)
		charts++;
	assert_int_equal(charts, 3);
	assert_non_null(strstr(out, "<script>"));
	assert_non_null(strstr(out, "id=\"sort\""));
	assert_non_null(strstr(out, "id=\"point\""));
	assert_non_null(strstr(out, "contention</span>"));
	/* self-contained: nothing to fetch */
	assert_null(strstr(out, "src="));
	assert_null(strstr(out, "href="));
	assert_null(strstr(out, "@import"));
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ fuzz (JSON Lines) */

static void report_everything(const char *buf, size_t len)
{
	struct causal_profile p;
	struct causal_summary s;
	FILE *devnull = fopen("/dev/null", "w");

	causal_profile_init(&p);
	(void)causal_profile_read_buffer(&p, buf, len, "fuzz.jsonl", NULL);
	if (causal_summarize(&p,
			     &(struct causal_summary_options){
				 .min_speedups = 1, .min_visits = 1, .resamples = 100},
			     &s) == 0) {
		causal_report_text(devnull, &p, &s,
				   &(struct causal_report_options){.detail = true});
		causal_report_json(devnull, &p, &s, NULL);
		causal_report_html(devnull, &p, &s, NULL);
		causal_summary_free(&s);
	}
	causal_profile_free(&p);
	fclose(devnull);
}

static void test_fuzz_jsonl(void **state)
{
	static const char *tokens[] = {"{",
				       "}",
				       "\"type\":",
				       "\"experiment\"",
				       "\"throughput-point\"",
				       "\"latency-point\"",
				       "\"samples\"",
				       "\"runtime\"",
				       ",",
				       ":",
				       "\"",
				       "\\u0000",
				       "\\t",
				       "null",
				       "[]",
				       "1e308",
				       "-0.5",
				       "18446744073709551615",
				       "9223372036854775807",
				       "\n"};
	const struct fuzz_edits edits_of = {NULL, 0, tokens, ARRAY_SIZE(tokens), 2};
	size_t base_len = strlen(jsonl_profile);
	char buf[4096];
	struct rng r;

	rng_seed(&r, 4242);
	for (int iter = 0; iter < 6000; iter++) {
		size_t len = base_len;
		int edits = 1 + (int)rng_below(&r, 8);

		memcpy(buf, jsonl_profile, len);
		for (int k = 0; k < edits; k++)
			fuzz_edit(&r, &edits_of, buf, &len, sizeof(buf));
		report_everything(buf, len);
	}
	/* and random bytes after a JSON first line */
	for (int iter = 0; iter < 2000; iter++) {
		size_t len = 1 + rng_below(&r, sizeof(buf) - 1);

		buf[0] = '{';
		for (size_t i = 1; i < len; i++)
			buf[i] = (char)rng_next(&r);
		report_everything(buf, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aggregation_sums_not_rates),
	    cmocka_unit_test(test_far_out_experiments),
	    cmocka_unit_test(test_far_out_counts_visits),
	    cmocka_unit_test(test_phase_correction),
	    cmocka_unit_test(test_phase_correction_needs_records),
	    cmocka_unit_test(test_phase_correction_without_inserted_delay),
	    cmocka_unit_test(test_phase_correction_two_phases),
	    cmocka_unit_test(test_inserted_delay_estimated),
	    cmocka_unit_test(test_littles_law_weighting),
	    cmocka_unit_test(test_littles_law_in_flight),
	    cmocka_unit_test(test_bootstrap_deterministic),
	    cmocka_unit_test(test_contention_flag),
	    cmocka_unit_test(test_ranking),
	    cmocka_unit_test(test_jsonl_reader),
	    cmocka_unit_test(test_jsonl_malformed),
	    cmocka_unit_test(test_json_output),
	    cmocka_unit_test(test_html_output),
	    cmocka_unit_test(test_fuzz_jsonl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
