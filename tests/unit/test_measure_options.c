/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The run options of lever bench and compare: the entries of their option
 * tables (src/cli/run_options.h) and the measure room's parsers behind them
 * (src/measure/options.c): counts, --randomize, --rerandomize, and
 * combinations that would do nothing.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/options.h"
#include "cli/run_options.h"
#include "measure/measure.h"
#include "stabilizer/runtime/settings.h"

/*
 * Apply --name=arg as lever bench does: through the RUN_OPTIONS entries of
 * its option table. 0, or EXIT_USAGE after the message.
 */
static int parse(struct measure_options *o, const char *name, const char *arg)
{
	const struct cli_option table[] = {RUN_OPTIONS(o), CLI_END()};
	const struct cli_command cmd = {
	    .name = "lever bench", .usage = "usage: lever bench", .options = table};
	char flag[64];
	const char *inline_value;
	const struct cli_option *opt;

	snprintf(flag, sizeof(flag), "--%s", name);
	opt = cli_lookup(table, flag, &inline_value);
	if (!opt)
		fail_msg("no option --%s", name);
	return cli_apply(&cmd, opt, arg, NULL);
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
	assert_int_equal(parse(&o, "randomize", "code,stack"), 0);
	assert_false(o.randomize_env);
	assert_false(o.randomize_heap);
	assert_true(o.randomize_code);
	assert_true(o.randomize_stack);
	assert_false(o.randomize_link);
	assert_true(measure_options_stabilizer(&o));

	/* a second --randomize replaces the first */
	assert_int_equal(parse(&o, "randomize", "heap,code,stack,link,env"), 0);
	assert_true(o.randomize_env && o.randomize_heap && o.randomize_code && o.randomize_stack &&
		    o.randomize_link);
	assert_int_equal(parse(&o, "randomize", "link"), 0);
	assert_true(o.randomize_link);
	assert_false(o.randomize_env || o.randomize_heap || o.randomize_code || o.randomize_stack);
	assert_false(measure_options_stabilizer(&o)); /* link is a build, not a runtime part */
	assert_int_equal(parse(&o, "randomize", "none"), 0);
	assert_false(o.randomize_env || o.randomize_link);
}

/* Issue 14 point 12: counts in digits only, and run limits that can be met. */
static void run_counts_are_whole_and_consistent(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "runs", "1e3"), EXIT_USAGE);
	assert_int_equal(parse(&o, "runs", "10.5"), EXIT_USAGE);
	assert_int_equal(parse(&o, "min-runs", "0x10"), EXIT_USAGE);
	assert_int_equal(parse(&o, "warmup", "2e1"), EXIT_USAGE);
	assert_int_equal(parse(&o, "runs", "1000"), 0);
	assert_int_equal(o.min_runs, 1000);
	assert_int_equal(o.max_runs, 1000);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);

	measure_options_init(&o);
	assert_int_equal(parse(&o, "min-runs", "5"), 0);
	assert_int_equal(parse(&o, "max-runs", "3"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "max-runs", "5"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
	/* -n sets both; a later -M below it contradicts it */
	assert_int_equal(parse(&o, "runs", "10"), 0);
	assert_int_equal(parse(&o, "max-runs", "4"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
}

static void randomize_rejects_unknown_parts(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "randomize", "code,globals"), EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "Code"), EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "code stack"), EXIT_USAGE);
}

static void rerandomize_takes_a_duration_or_off(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "rerandomize", "2ms"), 0);
	assert_int_equal(o.rerandomize_ns, 2000000);
	assert_int_equal(parse(&o, "rerandomize", "250"), 0); /* default unit ms */
	assert_int_equal(o.rerandomize_ns, 250000000);
	assert_int_equal(parse(&o, "rerandomize", "1s"), 0);
	assert_int_equal(o.rerandomize_ns, 1000000000);
	assert_int_equal(parse(&o, "rerandomize", "off"), 0);
	assert_int_equal(o.rerandomize_ns, 0);
	assert_true(o.rerandomize_given);
	assert_int_equal(parse(&o, "rerandomize", "500us"), EXIT_USAGE); /* below 1ms */
	assert_int_equal(parse(&o, "rerandomize", "2h"), EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", "soon"), EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", ""), EXIT_USAGE);
	assert_int_equal(parse(&o, "rerandomize", "-5ms"), EXIT_USAGE);
}

static void rerandomize_needs_code_or_stack(void **state)
{
	struct measure_options o;

	(void)state;
	measure_options_init(&o);
	assert_int_equal(parse(&o, "rerandomize", "10ms"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "heap"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), MEASURE_EXIT_USAGE);
	assert_int_equal(parse(&o, "randomize", "stack"), 0);
	assert_int_equal(measure_options_check(&o, "lever bench"), 0);
	assert_int_equal(parse(&o, "randomize", "code"), 0);
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
