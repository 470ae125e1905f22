/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The measure room (src/measure/options.c): parsing --randomize and --rerandomize. */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "measure/measure.h"
#include "stabilizer/runtime/stabilizer.h"

/* The getopt code of a long option of measure_long_options. */
static int code_of(const char *name)
{
	for (const struct option *o = measure_long_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o->val;
	fail_msg("no option --%s", name);
	return -1;
}

static int parse(struct measure_options *o, const char *name, const char *arg)
{
	return measure_options_parse(o, "lever bench", code_of(name), arg);
}

static void defaults_randomize_env_only(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_true(o.randomize_env);
	assert_false(o.randomize_heap || o.randomize_code || o.randomize_stack || o.randomize_link);
	assert_false(measure_options_stabilizer(&o));
	assert_int_equal(o.rerandomize_ns, STABILIZE_DEFAULT_INTERVAL_NS);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
}

static void randomize_turns_on_exactly_the_parts_named(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "randomize", "code,stack"), 1);
	assert_false(o.randomize_env);
	assert_false(o.randomize_heap);
	assert_true(o.randomize_code);
	assert_true(o.randomize_stack);
	assert_false(o.randomize_link);
	assert_true(measure_options_stabilizer(&o));

	/* a second --randomize replaces the first */
	assert_int_equal(parse(&o, "randomize", "heap,code,stack,link,env"), 1);
	assert_true(o.randomize_env && o.randomize_heap && o.randomize_code && o.randomize_stack &&
		    o.randomize_link);
	assert_int_equal(parse(&o, "randomize", "link"), 1);
	assert_true(o.randomize_link);
	assert_false(o.randomize_env || o.randomize_heap || o.randomize_code || o.randomize_stack);
	assert_false(measure_options_stabilizer(&o)); /* link is a build, not a runtime part */
	assert_int_equal(parse(&o, "randomize", "none"), 1);
	assert_false(o.randomize_env || o.randomize_link);
}

/* Issue 14 point 12: counts in digits only, and run limits that can be met. */
static void run_counts_are_whole_and_consistent(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "runs", "1e3"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "runs", "10.5"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "min-runs", "0x10"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "warmup", "2e1"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "runs", "1000"), 1);
	assert_int_equal(o.min_runs, 1000);
	assert_int_equal(o.max_runs, 1000);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);

	measure_options_init(&o);
	assert_int_equal(parse(&o, "min-runs", "5"), 1);
	assert_int_equal(parse(&o, "max-runs", "3"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "max-runs", "5"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
	/* -n sets both; a later -M below it contradicts it */
	assert_int_equal(parse(&o, "runs", "10"), 1);
	assert_int_equal(parse(&o, "max-runs", "4"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
}

static void randomize_rejects_unknown_parts(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "randomize", "code,globals"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "Code"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "code stack"), MEASURE_EXIT_USAGE);
}

static void rerandomize_takes_a_duration_or_off(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "rerandomize", "2ms"), 1);
	assert_int_equal(o.rerandomize_ns, 2000000);
	assert_int_equal(parse(&o, "rerandomize", "250"), 1); /* default unit ms */
	assert_int_equal(o.rerandomize_ns, 250000000);
	assert_int_equal(parse(&o, "rerandomize", "1s"), 1);
	assert_int_equal(o.rerandomize_ns, 1000000000);
	assert_int_equal(parse(&o, "rerandomize", "off"), 1);
	assert_int_equal(o.rerandomize_ns, 0);
	assert_true(o.rerandomize_given);
	assert_int_equal(parse(&o, "rerandomize", "500us"), MEASURE_EXIT_USAGE); /* below 1ms */
	assert_int_equal(parse(&o, "rerandomize", "2h"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", "soon"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", ""), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", "-5ms"), MEASURE_EXIT_USAGE);
}

static void rerandomize_needs_code_or_stack(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "rerandomize", "10ms"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "heap"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "stack"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
	assert_int_equal(parse(&o, "randomize", "code"), 1);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(defaults_randomize_env_only),
	    cmocka_unit_test(randomize_turns_on_exactly_the_parts_named),
	    cmocka_unit_test(randomize_rejects_unknown_parts),
	    cmocka_unit_test(run_counts_are_whole_and_consistent),
	    cmocka_unit_test(rerandomize_takes_a_duration_or_off),
	    cmocka_unit_test(rerandomize_needs_code_or_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
