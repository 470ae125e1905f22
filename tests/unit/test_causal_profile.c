/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The causal profile reader (src/causal/profile.c) and the minimal summary
 * (src/causal/summary.c): every record of the legacy format, malformed input
 * (errors name file and line, never crash), Coz's sample profiles, and a fuzz
 * loop of random and mutated input.
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

#include "base/base.h"
#include "fuzz_edit.h"
#include "causal/causal.h"
#include "causal_test_util.h"

static int read_text(struct causal_profile *p, const char *text, bool strict)
{
	struct causal_read_options opt = {.strict = strict};

	return causal_profile_read_buffer(p, text, strlen(text), "t.coz", &opt);
}

static const char *str(const struct causal_profile *p, uint32_t id)
{
	return causal_profile_string(p, id);
}

static bool has_diagnostic(const struct causal_profile *p, const char *needle)
{
	for (size_t i = 0; i < p->n_diagnostics; i++) {
		if (strstr(p->diagnostics[i], needle))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ records */

static const char full_profile[] =
    "startup\ttime=1415880321185373496\n"
    "lever\tversion=1\tsampler=perf\tperiod=1000000\tseed=7\n"
    "experiment\tselected=a.c:10\tspeedup=0.25\tduration=100000000\tselected-samples=12\n"
    "throughput-point\tname=a.c:40\tdelta=9\n"
    "latency-point\tname=req\tarrivals=5\tdepartures=6\tdifference=-1\n"
    "experiment\tselected=b.c:7\tspeedup=0.00\tduration=90000000\tselected-samples=0\n"
    "progress-point\tname=a.c:40\ttype=source\tdelta=11\n"
    "latency-point\tname=req\tarrivals=4\tdepartures=3\tdifference=18446744073709551615\n"
    "samples\tlocation=a.c:10\tcount=3\n"
    "runtime\ttime=200000000\n"
    "samples\tlocation=a.c:10\tcount=8\n"
    "samples\tlocation=b.c:7\tcount=2\n"
    "runtime\ttime=300000000\n"
    "shutdown\ttime=1415880321485373496\tsamples=10\n";

static void test_all_records(void **state)
{
	struct causal_profile p;
	const struct causal_experiment *e;
	const struct causal_delta *d;

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, full_profile, true), 0);
	assert_int_equal(p.stats.malformed, 0);
	assert_int_equal(p.stats.unknown_records, 0);
	assert_int_equal(p.n_runs, 1);
	assert_true(p.runs[0].has_startup);
	assert_true(p.runs[0].startup_ns == 1415880321185373496ULL);
	assert_true(p.runs[0].has_lever_header);
	assert_int_equal(p.runs[0].lever_version, 1);
	assert_string_equal(p.runs[0].sampler, "perf");
	assert_int_equal(p.runs[0].period_ns, 1000000);
	assert_true(p.runs[0].has_seed);
	assert_int_equal(p.runs[0].seed, 7);
	assert_int_equal(p.runs[0].runtime_ns, 300000000);
	assert_true(p.runs[0].has_shutdown);
	assert_int_equal(p.runs[0].shutdown_samples, 10);
	assert_int_equal(p.runs[0].n_experiments, 2);

	assert_int_equal(p.n_experiments, 2);
	e = &p.experiments[0];
	assert_string_equal(str(&p, e->selected), "a.c:10");
	assert_int_equal(e->speedup_pct, 25);
	assert_int_equal(e->duration, 100000000);
	assert_int_equal(e->selected_samples, 12);
	assert_int_equal(e->n_deltas, 2);
	assert_int_equal(e->lineno, 3);
	d = &p.deltas[e->first_delta];
	assert_int_equal(p.points[d[0].point].kind, CAUSAL_POINT_THROUGHPUT);
	assert_string_equal(str(&p, p.points[d[0].point].name), "a.c:40");
	assert_int_equal(d[0].delta, 9);
	assert_int_equal(p.points[d[1].point].kind, CAUSAL_POINT_LATENCY);
	assert_int_equal(d[1].arrivals, 5);
	assert_int_equal(d[1].departures, 6);
	assert_int_equal(d[1].difference, -1);

	/* progress-point is the old name of throughput-point: the same point */
	e = &p.experiments[1];
	d = &p.deltas[e->first_delta];
	assert_int_equal(d[0].point, p.deltas[p.experiments[0].first_delta].point);
	assert_int_equal(d[0].delta, 11);
	assert_int_equal(d[1].difference, -1); /* unsigned wrap read back as signed */
	assert_int_equal(p.n_points, 2);

	/* samples: cumulative, the latest per run wins */
	assert_int_equal(causal_profile_line_samples(&p, causal_profile_find_string(&p, "a.c:10")),
			 8);
	assert_int_equal(causal_profile_line_samples(&p, causal_profile_find_string(&p, "b.c:7")),
			 2);
	assert_int_equal(causal_profile_total_runtime(&p), 300000000);
	causal_profile_free(&p);
}

/* lever's header may also ride on `startup` (which Coz's viewer ignores silently) */
static void test_lever_fields_on_startup(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=5\tlever=1\tsampler=timer\tperiod=250000\tseed=3\n"
			   "startup\ttime=6\n"
			   "startup\ttime=7\tlever=x\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, false), 0);
	assert_int_equal(p.n_runs, 2);
	assert_true(p.runs[0].has_lever_header);
	assert_int_equal(p.runs[0].lever_version, 1);
	assert_string_equal(p.runs[0].sampler, "timer");
	assert_int_equal(p.runs[0].period_ns, 250000);
	assert_int_equal(p.runs[0].seed, 3);
	assert_false(p.runs[1].has_lever_header);
	assert_int_equal(p.stats.malformed, 1);
	assert_true(has_diagnostic(&p, "t.coz:3: startup: lever=x is not an unsigned integer"));
	causal_profile_free(&p);
}

static void test_runs_accumulate(void **state)
{
	struct causal_profile p;

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, full_profile, true), 0);
	assert_int_equal(read_text(&p, full_profile, true), 0);
	assert_int_equal(p.n_runs, 2);
	assert_int_equal(p.n_experiments, 4);
	assert_int_equal(p.runs[1].n_experiments, 2);
	assert_int_equal(p.experiments[2].run, 1);
	assert_int_equal(causal_profile_line_samples(&p, causal_profile_find_string(&p, "a.c:10")),
			 16);
	assert_int_equal(causal_profile_total_runtime(&p), 600000000);
	causal_profile_free(&p);
}

static void test_wrapped_duration_dropped(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=1\n"
			   "experiment\tselected=f.c:1\tspeedup=1.00\t"
			   "duration=18446744073705875774\tselected-samples=0\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "experiment\tselected=f.c:1\tspeedup=0.00\tduration=0\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "experiment\tselected=f.c:1\tspeedup=0.00\tduration=-5\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "experiment\tselected=f.c:1\tspeedup=0.00\tduration=50\n"
			   "throughput-point\tname=p\tdelta=3\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, true), 0);
	assert_int_equal(p.stats.dropped_duration, 3);
	assert_int_equal(p.stats.malformed, 0);
	assert_int_equal(p.n_experiments, 1);
	assert_int_equal(p.n_deltas, 1); /* the dropped experiments' points go too */
	assert_int_equal(p.experiments[0].duration, 50);
	causal_profile_free(&p);
}

static void test_unknown_records_and_keys(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=1\tzone=utc\n"
			   "future-record\tx=1\n"
			   "future-record\tx=2\n"
			   "experiment\tselected=f.c:1\tspeedup=0.50\tduration=10\tnew-key=z\n"
			   "throughput-point\tname=p\tdelta=3\textra=1\n"
			   "\n"
			   "runtime\ttime=5\r\n"
			   "samples\tlocation=f.c:1\tcount=4\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, true), 0);
	assert_int_equal(p.stats.unknown_records, 2);
	assert_int_equal(p.stats.malformed, 0);
	assert_true(
	    has_diagnostic(&p, "t.coz:2: skipping records of unknown type 'future-record'"));
	assert_int_equal(p.n_experiments, 1);
	assert_int_equal(p.n_deltas, 1);
	assert_int_equal(p.runs[0].runtime_ns, 5);
	assert_int_equal(p.n_samples, 1);
	assert_int_equal(p.samples[0].count, 4);
	assert_int_equal(p.stats.lines, 8);
	causal_profile_free(&p);
}

/* A writer cut off mid-record (full disk): the last line is dropped, not read short. */
static void test_cut_last_record(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=1\n"
			   "experiment\tselected=f.c:1\tspeedup=0.50\tduration=10\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "runtime\ttime=5\n"
			   "samples\tlocation=f.c:1\tcount=12"; /* count=1234 cut */

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, false), 0);
	assert_int_equal(p.stats.cut_records, 1);
	assert_int_equal(p.stats.malformed, 1);
	assert_int_equal(p.n_samples, 0);
	assert_int_equal(p.n_experiments, 1);
	assert_int_equal(p.n_deltas, 1);
	assert_true(has_diagnostic(&p, "t.coz:5: the last record has no end of line"));
	causal_profile_free(&p);

	/* through a stream too, and --strict makes it an error */
	{
		FILE *f = fmemopen((void *)text, strlen(text), "r");
		struct causal_read_options opt = {.strict = true};

		assert_non_null(f);
		causal_profile_init(&p);
		assert_int_equal(causal_profile_read_stream(&p, f, "s.coz", &opt), -1);
		assert_non_null(strstr(p.error, "s.coz:5: the last record has no end of line"));
		causal_profile_free(&p);
		fclose(f);
	}
}

/*
 * Four runs appending to one file at once: records tagged run=ID belong to
 * their run wherever they lie, and point records to their run's experiment.
 */
static void test_interleaved_tagged_runs(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=1\trun=10-1\n"
			   "startup\ttime=2\trun=11-2\n"
			   "experiment\tselected=a.c:1\tspeedup=0.00\tduration=100\trun=10-1\n"
			   "experiment\tselected=b.c:2\tspeedup=0.50\tduration=200\trun=11-2\n"
			   "throughput-point\tname=p\tdelta=3\trun=10-1\n"
			   "startup\ttime=3\trun=12-3\n"
			   "throughput-point\tname=p\tdelta=7\trun=11-2\n"
			   "runtime\ttime=1000\tdelay=0\trun=10-1\n"
			   "samples\tlocation=a.c:1\tcount=5\trun=10-1\n"
			   "experiment\tselected=c.c:3\tspeedup=0.10\tduration=300\trun=13-4\n"
			   "throughput-point\tname=p\tdelta=9\trun=13-4\n"
			   "samples\tlocation=a.c:1\tcount=6\trun=11-2\n"
			   "startup\ttime=4\trun=13-4\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, true), 0);
	assert_int_equal(p.stats.malformed, 0);
	/* 10-1, 11-2, 12-3, 13-4 (its startup after its records: a run without one), 13-4 */
	assert_int_equal(p.n_runs, 5);
	assert_int_equal(p.n_experiments, 3);
	assert_int_equal(p.experiments[0].run, 0);
	assert_int_equal(p.experiments[1].run, 1);
	assert_int_equal(p.experiments[2].run, 3);
	assert_false(p.runs[3].has_startup);
	assert_true(p.runs[4].has_startup);
	assert_int_equal(p.experiments[0].n_deltas, 1);
	assert_int_equal(p.deltas[p.experiments[0].first_delta].delta, 3);
	assert_int_equal(p.experiments[1].n_deltas, 1);
	assert_int_equal(p.deltas[p.experiments[1].first_delta].delta, 7);
	assert_int_equal(p.deltas[p.experiments[2].first_delta].delta, 9);
	assert_int_equal(p.runs[0].n_experiments, 1);
	assert_int_equal(p.runs[1].n_experiments, 1);
	assert_int_equal(p.runs[2].n_experiments, 0);
	assert_true(p.runs[0].has_runtime);
	assert_false(p.runs[1].has_runtime);
	assert_int_equal(p.n_samples, 2);
	assert_int_equal(causal_profile_line_samples(&p, causal_profile_find_string(&p, "a.c:1")),
			 11);
	causal_profile_free(&p);
}

static void test_records_before_startup(void **state)
{
	struct causal_profile p;
	const char *text = "experiment\tselected=f.c:1\tspeedup=0.50\tduration=10\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "startup\ttime=2\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, true), 0);
	assert_int_equal(p.n_runs, 2);
	assert_false(p.runs[0].has_startup);
	assert_int_equal(p.runs[0].n_experiments, 1);
	assert_true(p.runs[1].has_startup);
	causal_profile_free(&p);
}

/* ------------------------------------------------------------ malformed input */

static const struct {
	const char *line;
	const char *message;
} bad_lines[] = {
    {"\tselected=f.c:1", "missing record type"},
    {"experiment\tselected=f.c:1\tspeedup=0.5", "without duration="},
    {"experiment\tspeedup=0.5\tduration=3", "without selected="},
    {"experiment\tselected=\tspeedup=0.5\tduration=3", "without selected="},
    {"experiment\tselected=f.c:1\tspeedup=1.5\tduration=3", "not a number in 0..1"},
    {"experiment\tselected=f.c:1\tspeedup=nan\tduration=3", "not a number in 0..1"},
    {"experiment\tselected=f.c:1\tspeedup=0.5x\tduration=3", "not a number in 0..1"},
    {"experiment\tselected=f.c:1\tspeedup=0.5\tduration=3e9", "is not an integer"},
    {"experiment\tselected=f.c:1\tspeedup=0.5\tduration=99999999999999999999", "is not an integer"},
    {"experiment\tselected=f.c:1\tspeedup=0.5\tduration=--3", "is not an integer"},
    {"experiment\tselected=f.c:1\tspeedup=0.5\tduration=", "is not an integer"},
    {"experiment\tselected=f.c:1\tspeedup=0.5\tduration=4\tselected-samples=-2", "is negative"},
    {"experiment\tselected f.c:1", "is not key=value"},
    {"experiment\t=3", "is not key=value"},
    {"throughput-point\tname=p\tdelta=-3", "is negative"},
    {"throughput-point\tdelta=3", "without name="},
    {"latency-point\tname=r\tarrivals=1\tdepartures=1", "without difference="},
    {"samples\tlocation=f.c:1\tcount=x", "is not an integer"},
    {"startup\ttime=-1", "not an unsigned integer"},
    {"startup", "without time="},
    {"lever\tsampler=perf", "without version="},
    {"{\"type\":\"startup\",\"time\":1}", "a JSON line in a tab-separated profile"},
    {"st@rtup\ttime=1", "not a profile record"},
    {"\x01\x02\x03", "not a profile record"},
};

static void test_malformed_lines(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		struct causal_profile p;
		char text[512];
		char where[32];

		snprintf(text, sizeof(text),
			 "startup\ttime=1\n"
			 "experiment\tselected=f.c:1\tspeedup=0.00\tduration=10\n"
			 "%s\n"
			 "throughput-point\tname=p\tdelta=3\n",
			 bad_lines[i].line);
		/* lenient: skipped, counted, diagnosed with file and line */
		causal_profile_init(&p);
		assert_int_equal(read_text(&p, text, false), 0);
		if (p.stats.malformed != 1 || !has_diagnostic(&p, "t.coz:3: ") ||
		    !has_diagnostic(&p, bad_lines[i].message)) {
			print_error("line '%s': %s\n", bad_lines[i].line,
				    p.n_diagnostics ? p.diagnostics[0] : "(no diagnostic)");
			fail();
		}
		assert_int_equal(p.n_runs, 1);
		causal_profile_free(&p);

		/* strict: the read fails with that message */
		causal_profile_init(&p);
		assert_int_equal(read_text(&p, text, true), -1);
		snprintf(where, sizeof(where), "t.coz:3: ");
		assert_non_null(strstr(p.error, where));
		assert_non_null(strstr(p.error, bad_lines[i].message));
		causal_profile_free(&p);
	}
}

static void test_orphan_points(void **state)
{
	struct causal_profile p;
	const char *text = "startup\ttime=1\n"
			   "throughput-point\tname=p\tdelta=3\n"
			   "experiment\tselected=f.c:1\tspeedup=0.5\n" /* bad: no duration */
			   "throughput-point\tname=p\tdelta=3\n"       /* must not attach */
			   "latency-point\tname=r\tarrivals=1\tdepartures=0\tdifference=1\n";

	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, false), 0);
	assert_int_equal(p.stats.orphan_points, 1);
	assert_int_equal(p.stats.malformed, 2);
	assert_true(has_diagnostic(&p, "t.coz:2: point record with no experiment before it"));
	assert_int_equal(p.n_experiments, 0);
	assert_int_equal(p.n_deltas, 0);
	causal_profile_free(&p);
}

static void test_nul_byte_and_missing_file(void **state)
{
	struct causal_profile p;
	const char text[] = "startup\ttime=1\nexperi\0ment\tx=1\nruntime\ttime=4\n";

	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(&p, text, sizeof(text) - 1, "n.coz", NULL), 0);
	assert_true(has_diagnostic(&p, "n.coz:2: NUL byte"));
	assert_int_equal(p.runs[0].runtime_ns, 4);
	assert_int_equal(causal_profile_read_file(&p, "/nonexistent/profile.coz", NULL), -1);
	assert_non_null(strstr(p.error, "/nonexistent/profile.coz: cannot open"));
	causal_profile_free(&p);
}

static void test_diagnostics_capped(void **state)
{
	struct causal_profile p;
	char *text = malloc(100 * 8 + 1);

	text[0] = '\0';
	for (int i = 0; i < 100; i++)
		strcat(text, "startup\n");
	causal_profile_init(&p);
	assert_int_equal(read_text(&p, text, false), 0);
	assert_int_equal(p.stats.malformed, 100);
	assert_int_equal(p.n_diagnostics, CAUSAL_MAX_DIAGS);
	assert_int_equal(p.stats.diagnostics_lost, 100 - CAUSAL_MAX_DIAGS);
	causal_profile_free(&p);
	free(text);
}

/* ------------------------------------------------------------ summary */

/* An experiment on line at pct with a throughput point visited delta times. */
static void add_exp(char **buf, size_t *len, const char *line, int pct, long duration, long delta)
{
	append(buf, len,
	       "experiment\tselected=%s\tspeedup=%d.%02d\tduration=%ld\tselected-samples=1\n", line,
	       pct / 100, pct % 100, duration);
	append(buf, len, "throughput-point\tname=done\tdelta=%ld\n", delta);
}

static const struct causal_series *find_series(const struct causal_profile *p,
					       const struct causal_summary *s, const char *line)
{
	for (size_t i = 0; i < s->n_series; i++) {
		if (strcmp(str(p, s->series[i].selected), line) == 0)
			return &s->series[i];
	}
	return NULL;
}

static void test_summary_throughput(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	const struct causal_series *a, *b;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\n");
	/* line a: program speedup = min(x, 0.3) exactly (period 100 ns at 0%) */
	for (int pct = 0; pct <= 100; pct += 10) {
		double x = pct / 100.0, sp = x < 0.3 ? x : 0.3;
		long visits = 100;

		add_exp(&buf, &len, "a.c:2", pct, (long)(100.0 * visits * (1 - sp) / 2 + 0.5),
			visits / 2);
		add_exp(&buf, &len, "a.c:2", pct, (long)(100.0 * visits * (1 - sp) / 2 + 0.5),
			visits / 2);
	}
	/* line b: no effect */
	for (int pct = 0; pct <= 100; pct += 20)
		add_exp(&buf, &len, "b.c:5", pct, 1000, 10);
	/* line c: too few visits per bucket (4 < 5) */
	for (int pct = 0; pct <= 100; pct += 20)
		add_exp(&buf, &len, "c.c:1", pct, 1000, 4);
	/* line d: no 0% bucket */
	for (int pct = 10; pct <= 100; pct += 10)
		add_exp(&buf, &len, "d.c:1", pct, 1000, 10);
	/* line e: only 3 speedups */
	for (int pct = 0; pct <= 20; pct += 10)
		add_exp(&buf, &len, "e.c:1", pct, 1000, 10);

	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(&p, buf, len, "s.coz", NULL), 0);
	assert_int_equal(p.stats.malformed, 0);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	assert_int_equal(s.n_series, 2);
	assert_string_equal(str(&p, s.series[0].selected), "a.c:2"); /* steepest first */
	a = find_series(&p, &s, "a.c:2");
	b = find_series(&p, &s, "b.c:5");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->n_buckets, 11);
	assert_int_equal(a->experiments, 22);
	assert_int_equal(a->buckets[0].speedup_pct, 0);
	assert_int_equal(a->buckets[0].experiments, 2);
	for (size_t i = 0; i < a->n_buckets; i++) {
		double x = a->buckets[i].speedup_pct / 100.0;

		assert_true(fabs(a->buckets[i].program_speedup - (x < 0.3 ? x : 0.3)) < 1e-6);
	}
	assert_true(fabs(a->max_speedup - 0.3) < 1e-6);
	assert_true(a->slope > 0);
	for (size_t i = 0; i < b->n_buckets; i++)
		assert_true(fabs(b->buckets[i].program_speedup) < 1e-9);
	assert_true(fabs(b->slope) < 1e-9);
	assert_int_equal(s.dropped_buckets, 6);	     /* all of c */
	assert_int_equal(s.dropped_no_baseline, 2);  /* c (nothing left) and d */
	assert_int_equal(s.dropped_few_speedups, 1); /* e */
	causal_summary_free(&s);

	/* --min-speedups 3 admits e */
	assert_int_equal(
	    causal_summarize(&p, &(struct causal_summary_options){.min_speedups = 3}, &s), 0);
	assert_int_equal(s.n_series, 3);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

static void test_summary_latency(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	char *buf = NULL;
	size_t len = 0;

	/*
	 * Little's law: W = mean in flight / arrival rate. At 0%: 10 in flight,
	 * 100 arrivals in 1000 ns -> W = 100 ns. At 50%: 5 in flight, same rate
	 * -> W = 50 ns, an improvement of 50%.
	 */
	append(&buf, &len, "startup\ttime=1\n");
	for (int pct = 0; pct <= 100; pct += 25) {
		append(&buf, &len, "experiment\tselected=l.c:3\tspeedup=%d.%02d\tduration=1000\n",
		       pct / 100, pct % 100);
		append(&buf, &len,
		       "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference=%d\n",
		       10 - pct / 10);
	}
	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(&p, buf, len, "l.coz", NULL), 0);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	assert_int_equal(s.n_series, 1);
	assert_int_equal(s.series[0].n_buckets, 5);
	assert_true(fabs(s.series[0].buckets[2].program_speedup - 0.5) < 1e-9);
	assert_true(fabs(s.series[0].buckets[4].program_speedup - 1.0) < 1e-9);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

static void test_report_text(void **state)
{
	struct causal_profile p;
	struct causal_summary s;
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	append(&buf, &len, "startup\ttime=1\nlever\tversion=1\tsampler=timer\tperiod=250000\n");
	/* three experiments of 10 visits per speedup: not thin evidence */
	for (int pct = 0; pct <= 100; pct += 20)
		for (int k = 0; k < 3; k++)
			add_exp(&buf, &len, "main.c:12", pct, 1000 - 5 * pct, 10);
	causal_profile_init(&p);
	assert_int_equal(causal_profile_read_buffer(&p, buf, len, "r.coz", NULL), 0);
	assert_int_equal(causal_summarize(&p, NULL, &s), 0);
	f = open_memstream(&out, &out_len);
	causal_report_text(f, &p, &s,
			   &(struct causal_report_options){.detail = true, .ascii = true});
	fclose(f);
	/* the table row: rank, line, fitted effect and interval, shape, curve (ASCII: _ to #) */
	assert_non_null(strstr(out, "\n 1  main.c:12 "));
	assert_non_null(strstr(out, "+50.0% [+50.0,+50.0] linear        .   -   =   *   #\n"));
	assert_non_null(strstr(out, "  sampler: timer, 250 us period\n"));
	/* the detail */
	assert_non_null(strstr(out, "1. main.c:12 (done)\n"));
	assert_non_null(strstr(out, "speedup%  program-speedup%  interval"));
	assert_non_null(strstr(out, "      100             +50.0  [+50.0, +50.0]"));
	for (char *line = out; *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		assert_true(n <= 80);
		line += n + (nl ? 1 : 0);
	}
	free(out);
	causal_summary_free(&s);
	causal_profile_free(&p);
	free(buf);
}

/* ------------------------------------------------------------ Coz's sample profiles */

static void test_coz_sample_profiles(void **state)
{
	static const struct {
		const char *name;
		uint64_t dropped;
	} profiles[] = {
	    {"blackscholes", 0}, {"dedup", 0},	{"ferret", 5},	  {"fluidanimate", 9},
	    {"memcached", 17},	 {"sqlite", 7}, {"swaptions", 0},
	};
	const char *dir = "/usr/share/coz-profiler/viewer/profiles";

	for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
		struct causal_profile p;
		struct causal_summary s;
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.coz", dir, profiles[i].name);
		f = fopen(path, "r");
		if (!f) {
			print_message("skipping %s: not installed (package coz-profiler)\n", path);
			continue;
		}
		fclose(f);
		causal_profile_init(&p);
		assert_int_equal(causal_profile_read_file(
				     &p, path, &(struct causal_read_options){.strict = true}),
				 0);
		assert_int_equal(p.stats.malformed, 0);
		assert_int_equal(p.stats.unknown_records, 0);
		assert_int_equal(p.stats.dropped_duration, profiles[i].dropped);
		assert_true(p.n_runs > 0);
		assert_true(p.n_experiments > 300);
		assert_int_equal(p.n_deltas, p.n_experiments);
		assert_int_equal(causal_summarize(&p, NULL, &s), 0);
		assert_true(s.n_series > 0);
		/* ranked by impact by default, lines with firm curves before thin ones */
		for (size_t k = 1; k < s.n_series; k++) {
			bool thin0 = s.series[k - 1].thin != 0, thin1 = s.series[k].thin != 0;

			assert_true(thin0 <= thin1);
			if (thin0 == thin1)
				assert_true(s.series[k - 1].impact >= s.series[k].impact);
		}
		causal_summary_free(&s);
		causal_profile_free(&p);
	}
}

/* ------------------------------------------------------------ fuzz */

static void read_everything(const char *buf, size_t len)
{
	struct causal_profile p;
	struct causal_summary s;
	FILE *devnull = fopen("/dev/null", "w");

	causal_profile_init(&p);
	(void)causal_profile_read_buffer(&p, buf, len, "fuzz.coz", NULL);
	if (causal_summarize(&p,
			     &(struct causal_summary_options){.min_speedups = 1, .min_visits = 1},
			     &s) == 0) {
		causal_report_text(devnull, &p, &s, NULL);
		causal_summary_free(&s);
	}
	causal_profile_free(&p);
	fclose(devnull);
}

static void test_fuzz_random_bytes(void **state)
{
	struct rng r;
	char buf[4096];

	rng_seed(&r, 12345);
	for (int iter = 0; iter < 3000; iter++) {
		size_t len = rng_below(&r, sizeof(buf));

		for (size_t i = 0; i < len; i++)
			buf[i] = (char)rng_next(&r);
		read_everything(buf, len);
	}
}

static void test_fuzz_mutations(void **state)
{
	static const char alphabet[] = "\t\n=:-0123456789.\r\0xe";
	static const char *tokens[] = {"startup\t",
				       "experiment\t",
				       "throughput-point\t",
				       "latency-point\t",
				       "samples\t",
				       "runtime\t",
				       "duration=",
				       "delta=",
				       "speedup=",
				       "difference=",
				       "18446744073709551615",
				       "-9223372036854775808"};
	const struct fuzz_edits edits_of = {alphabet, sizeof(alphabet) - 1, tokens,
					    ARRAY_SIZE(tokens), 1};
	size_t base_len = strlen(full_profile);
	char buf[2048];
	struct rng r;

	rng_seed(&r, 777);
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = base_len;
		int edits = 1 + (int)rng_below(&r, 8);

		memcpy(buf, full_profile, len);
		for (int k = 0; k < edits; k++)
			fuzz_edit(&r, &edits_of, buf, &len, sizeof(buf));
		read_everything(buf, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_records),
	    cmocka_unit_test(test_lever_fields_on_startup),
	    cmocka_unit_test(test_runs_accumulate),
	    cmocka_unit_test(test_wrapped_duration_dropped),
	    cmocka_unit_test(test_unknown_records_and_keys),
	    cmocka_unit_test(test_cut_last_record),
	    cmocka_unit_test(test_interleaved_tagged_runs),
	    cmocka_unit_test(test_records_before_startup),
	    cmocka_unit_test(test_malformed_lines),
	    cmocka_unit_test(test_orphan_points),
	    cmocka_unit_test(test_nul_byte_and_missing_file),
	    cmocka_unit_test(test_diagnostics_capped),
	    cmocka_unit_test(test_summary_throughput),
	    cmocka_unit_test(test_summary_latency),
	    cmocka_unit_test(test_report_text),
	    cmocka_unit_test(test_coz_sample_profiles),
	    cmocka_unit_test(test_fuzz_random_bytes),
	    cmocka_unit_test(test_fuzz_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
