/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The metric counters of liblever-annotate.so (src/annotate/runtime/metrics.c,
 * spec/freud.md §4.2.2): each counter moves by a known amount between two
 * snapshots. Bounds, never timings: a sleep is a lower bound on wall time,
 * a bracketing clock an upper one, so a loaded machine cannot break them.
 * mem, wait and hold come from the interposers: test_annotate_interpose.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/runtime/metrics_internal.h"

#define ALL ((1u << ANN_N_METRICS) - 1)

static uint64_t clock_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * time: the delta lies between the sleep (a lower bound) and the bracketing
 * CLOCK_MONOTONIC interval (an upper bound; 0.1% and 1 µs for the TSC's
 * calibrated rate and the reads' order).
 */
static void time_within_bracket(const char *clock)
{
	struct ann_metrics_snapshot a, b;
	uint64_t m0, m1, d;

	setenv("LEVER_ANNOTATE_CLOCK", clock, 1);
	assert_int_equal(ann_metrics_init(ANN_METRIC_BIT(ANN_TIME)), 0);
	assert_string_equal(ann_metrics_clock_name(), clock);
	for (int i = 0; i < 5; i++) {
		m0 = clock_of(CLOCK_MONOTONIC);
		ann_metrics_read(&a, ANN_METRIC_BIT(ANN_TIME));
		sleep_ms(3);
		ann_metrics_read(&b, ANN_METRIC_BIT(ANN_TIME));
		m1 = clock_of(CLOCK_MONOTONIC);
		d = b.v[ANN_TIME] - a.v[ANN_TIME];
		assert_true(b.v[ANN_TIME] > a.v[ANN_TIME]);
		assert_true(d >= 3000000 - 1000);
		assert_true(d <= (m1 - m0) + (m1 - m0) / 1000 + 1000);
	}
	unsetenv("LEVER_ANNOTATE_CLOCK");
}

static void test_time_monotonic_clock(void **state)
{
	(void)state;
	time_within_bracket("monotonic");
}

/* The CPU promises a constant-rate TSC (the kernel's constant_tsc flag). */
static bool cpu_has_constant_tsc(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strncmp(line, "flags", 5) == 0 && strstr(line, " constant_tsc");
	if (f)
		fclose(f);
	return found;
}

/* Asked for, the TSC clock passes its self-check on any CPU with a constant-rate TSC. */
static void test_time_tsc_clock(void **state)
{
	(void)state;
	if (!cpu_has_constant_tsc())
		skip();
	time_within_bracket("tsc");
}

/* Without an override the clock is one of the two, and time still moves. */
static void test_default_clock_choice(void **state)
{
	struct ann_metrics_snapshot a, b;

	(void)state;
	unsetenv("LEVER_ANNOTATE_CLOCK");
	assert_int_equal(ann_metrics_init(ALL), 0);
	assert_true(strcmp(ann_metrics_clock_name(), "tsc") == 0 ||
		    strcmp(ann_metrics_clock_name(), "monotonic") == 0);
	ann_metrics_read(&a, ALL);
	sleep_ms(1);
	ann_metrics_read(&b, ALL);
	assert_true(b.v[ANN_TIME] - a.v[ANN_TIME] >= 1000000 - 1000);
}

static volatile uint64_t sink;

/* cpu: busy work moves it by about the bracketing thread CPU time; a sleep does not. */
static void test_cpu_time(void **state)
{
	struct ann_metrics_snapshot a, b;
	uint64_t c0, c1;

	(void)state;
	assert_int_equal(ann_metrics_init(ANN_METRIC_BIT(ANN_CPU)), 0);
	c0 = clock_of(CLOCK_THREAD_CPUTIME_ID);
	ann_metrics_read(&a, ANN_METRIC_BIT(ANN_CPU));
	while (clock_of(CLOCK_THREAD_CPUTIME_ID) - c0 < 5000000)
		sink++;
	ann_metrics_read(&b, ANN_METRIC_BIT(ANN_CPU));
	c1 = clock_of(CLOCK_THREAD_CPUTIME_ID);
	assert_true(b.v[ANN_CPU] - a.v[ANN_CPU] >= 5000000 - (a.v[ANN_CPU] - c0));
	assert_true(b.v[ANN_CPU] - a.v[ANN_CPU] <= c1 - c0);

	ann_metrics_read(&a, ANN_METRIC_BIT(ANN_CPU));
	sleep_ms(20);
	ann_metrics_read(&b, ANN_METRIC_BIT(ANN_CPU));
	assert_true(b.v[ANN_CPU] - a.v[ANN_CPU] < 20000000);
}

/* pfaults: touching N new pages (no huge pages) costs at least N minor faults. */
static void test_minor_faults(void **state)
{
	const unsigned mask = ANN_METRIC_BIT(ANN_PFAULTS);
	const size_t pages = 64, page = (size_t)sysconf(_SC_PAGESIZE);
	struct ann_metrics_snapshot a, b;
	char *p;

	(void)state;
	assert_int_equal(ann_metrics_init(mask), 0);
	p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	madvise(p, pages * page, MADV_NOHUGEPAGE);
	ann_metrics_read(&a, mask);
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_PFAULTS] - a.v[ANN_PFAULTS] >= pages);
	/* touched again: no new faults needed, so fewer than the first time */
	ann_metrics_read(&a, mask);
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 2;
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_PFAULTS] - a.v[ANN_PFAULTS] < pages);
	munmap(p, pages * page);
}

/* Pfaults and cs are the thread's own getrusage counters: bracketed by them. */
static void test_major_faults_and_switches_bracketed(void **state)
{
	const unsigned mask = ANN_METRIC_BIT(ANN_PFAULTS_MAJOR) | ANN_METRIC_BIT(ANN_CS);
	struct ann_metrics_snapshot a, b;
	struct rusage r0, r1;

	(void)state;
	assert_int_equal(ann_metrics_init(mask), 0);
	getrusage(RUSAGE_THREAD, &r0);
	ann_metrics_read(&a, mask);
	getrusage(RUSAGE_THREAD, &r1);
	assert_true(a.v[ANN_PFAULTS_MAJOR] >= (uint64_t)r0.ru_majflt);
	assert_true(a.v[ANN_PFAULTS_MAJOR] <= (uint64_t)r1.ru_majflt);
	assert_true(a.v[ANN_CS] >= (uint64_t)(r0.ru_nvcsw + r0.ru_nivcsw));
	assert_true(a.v[ANN_CS] <= (uint64_t)(r1.ru_nvcsw + r1.ru_nivcsw));
	/* each sleep blocks the thread: a voluntary context switch at least */
	for (int i = 0; i < 5; i++)
		sleep_ms(1);
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_CS] - a.v[ANN_CS] >= 5);
}

/* Only the metrics in the mask are written: the others keep what they had. */
static void test_mask_leaves_others(void **state)
{
	struct ann_metrics_snapshot s;

	(void)state;
	assert_int_equal(ann_metrics_init(ALL), 0);
	for (int m = 0; m < ANN_N_METRICS; m++) {
		memset(&s, 0xab, sizeof(s));
		ann_metrics_read(&s, ANN_METRIC_BIT(m));
		for (int o = 0; o < ANN_N_METRICS; o++)
			if (o != m)
				assert_true(s.v[o] == 0xababababababababull);
	}
}

static void test_bad_mask_refused(void **state)
{
	(void)state;
	assert_int_equal(ann_metrics_init(1u << ANN_N_METRICS), -EINVAL);
	assert_int_equal(ann_metrics_init(0), 0);
}

/* errno is the program's: reading and even initialising leave it alone. */
static void test_errno_preserved(void **state)
{
	struct ann_metrics_snapshot s;

	(void)state;
	errno = 4242;
	assert_int_equal(ann_metrics_init(ALL), 0);
	ann_metrics_read(&s, ALL);
	assert_int_equal(errno, 4242);
}

/* hold while a lock is open: the open interval counts up to now. */
static void test_open_hold_interval(void **state)
{
	const unsigned mask = ANN_METRIC_BIT(ANN_HOLD);
	struct ann_metrics_snapshot a, b;

	(void)state;
	assert_int_equal(ann_metrics_init(mask), 0);
	ann_metrics_read(&a, mask);
	ann_lock_acquired(ann_clock_ns());
	sleep_ms(2);
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_HOLD] - a.v[ANN_HOLD] >= 2000000 - 1000);
	ann_lock_released(ann_clock_ns());
	ann_metrics_read(&a, mask);
	sleep_ms(2);
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_HOLD] == a.v[ANN_HOLD]);
	/* a release never seen acquired is ignored */
	ann_lock_released(ann_clock_ns());
	ann_metrics_read(&b, mask);
	assert_true(b.v[ANN_HOLD] == a.v[ANN_HOLD]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_time_monotonic_clock),
	    cmocka_unit_test(test_time_tsc_clock),
	    cmocka_unit_test(test_default_clock_choice),
	    cmocka_unit_test(test_cpu_time),
	    cmocka_unit_test(test_minor_faults),
	    cmocka_unit_test(test_major_faults_and_switches_bracketed),
	    cmocka_unit_test(test_mask_leaves_others),
	    cmocka_unit_test(test_bad_mask_refused),
	    cmocka_unit_test(test_errno_preserved),
	    cmocka_unit_test(test_open_hold_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
