/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/cli/options.c: parsing every value type against a table (and refusing
 * what a user did not mean: 1e3, 0x10, -1, 5.5 for a count), the one usage
 * error (exit 2), the "--" separator, callbacks, lookup for pass-through
 * commands, --help generated from the same table, and DOUBLE bounds that
 * exclude themselves.
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
#include "cli/options.h"

struct values {
	bool flag;
	unsigned verbose;
	const char *output;
	uint64_t count, percent, duration;
	double probability;
	int mode;
	int callbacks;
	bool count_given;
};

static const char *const modes[] = {"perf", "timer", "none", NULL};

static int odd_only(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct values *v = ctx;

	(void)opt;
	if (strlen(arg) % 2 == 0)
		return -1;
	v->callbacks++;
	return 0;
}

/* Parse args (a NULL-terminated list after the command name) into *v. */
static int parse(struct values *v, bool takes_program, int *first, const char **args)
{
	const struct cli_option table[] = {
	    CLI_GROUP("Things"),
	    CLI_FLAG('f', "flag", &v->flag, "a flag"),
	    CLI_COUNT('v', "verbose", &v->verbose, 2, "more output;\n-vv even more"),
	    CLI_STRING('o', "output", &v->output, "FILE", "the output"),
	    CLI_UINT('n', "count", &v->count, "N", 1, 1000, "a count", .given = &v->count_given),
	    CLI_PERCENT(0, "percent", &v->percent, "PCT", 0, 100, "a percentage"),
	    CLI_DURATION(0, "length", &v->duration, "DUR", NSEC_PER_MSEC, NSEC_PER_MSEC,
			 3600 * NSEC_PER_SEC, "a duration", .step = NSEC_PER_MSEC),
	    CLI_DOUBLE(0, "probability", &v->probability, "P", 0.0, 1.0, "a probability",
		       .what = "a probability 0..1"),
	    CLI_ENUM(0, "sampler", &v->mode, "perf|timer|none", modes, "a choice"),
	    CLI_CALLBACK(0, "odd", "TEXT", odd_only, "an odd-length text", .what = "of odd length"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever test",
	    .usage = "usage: lever test [OPTIONS] -- PROGRAM",
	    .options = table,
	    .takes_program = takes_program,
	    .coz_separator = true,
	};
	char *argv[32] = {"test"};
	int argc = 1;

	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return cli_parse(&cmd, argc, argv, v, first);
}

#define PARSE(v, first, ...) parse(v, true, first, (const char *[]){__VA_ARGS__, NULL})

static void every_type_parses(void **state)
{
	struct values v = {0};
	int first = 0;

	(void)state;
	assert_int_equal(PARSE(&v, &first, "-f", "-vvv", "-o", "out", "--count=1000", "--percent",
			       "40%", "--length", "0.25s", "--probability", "0.5",
			       "--sampler=timer", "--odd", "abc", "--", "prog", "arg"),
			 0);
	assert_true(v.flag);
	assert_int_equal(v.verbose, 2); /* at most max */
	assert_string_equal(v.output, "out");
	assert_int_equal(v.count, 1000);
	assert_true(v.count_given);
	assert_int_equal(v.percent, 40);
	assert_int_equal(v.duration, 250 * NSEC_PER_MSEC);
	assert_true(v.probability == 0.5);
	assert_int_equal(v.mode, 1);
	assert_int_equal(v.callbacks, 1);
	assert_int_equal(first, 16);
}

static void program_without_separator_and_coz_spelling(void **state)
{
	struct values v = {0};
	int first = 0;

	(void)state;
	/* options stop at the program: its own -f is not ours */
	assert_int_equal(PARSE(&v, &first, "-n", "5", "prog", "-f"), 0);
	assert_int_equal(first, 3);
	assert_false(v.flag);
	assert_int_equal(PARSE(&v, &first, "---", "prog"), 0);
	assert_int_equal(first, 2);
	assert_int_equal(PARSE(&v, &first, "-n", "2"), EXIT_USAGE);
	assert_int_equal(PARSE(&v, &first, "-n", "2", "--"), EXIT_USAGE);
	/* a bare duration is in the default unit */
	assert_int_equal(PARSE(&v, &first, "--length", "20", "p"), 0);
	assert_int_equal(v.duration, 20 * NSEC_PER_MSEC);
}

static void bad_values_are_usage_errors(void **state)
{
	static const char *const bad[][2] = {
	    {"--count", "1e3"},
	    {"--count", "0x10"},
	    {"--count", "-1"},
	    {"--count", "+5"},
	    {"--count", " 5"},
	    {"--count", "5.5"},
	    {"--count", "0"},
	    {"--count", "1001"},
	    {"--count", ""},
	    {"--percent", "101"},
	    {"--percent", "5.5"},
	    {"--percent", "%"},
	    {"--length", "0"},
	    {"--length", "1.5ms"},
	    {"--length", "1e3"},
	    {"--length", "2h"},
	    {"--length", "10parsecs"},
	    {"--length", "-3"},
	    {"--length", "inf"},
	    {"--probability", "1.5"},
	    {"--probability", "1e-1"},
	    {"--probability", "nan"},
	    {"--sampler", "hw"},
	    {"--odd", "ab"},
	    {"-o", ""},
	};
	struct values v = {0};
	int first = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (PARSE(&v, &first, bad[i][0], bad[i][1], "--", "p") != EXIT_USAGE)
			fail_msg("%s '%s' was accepted", bad[i][0], bad[i][1]);
	}
	assert_int_equal(PARSE(&v, &first, "--frob", "--", "p"), EXIT_USAGE);
	assert_int_equal(PARSE(&v, &first, "-x", "--", "p"), EXIT_USAGE);
	assert_int_equal(PARSE(&v, &first, "-o"), EXIT_USAGE);
	assert_int_equal(PARSE(&v, &first, "--count"), EXIT_USAGE);
}

static void operands_anywhere_without_program(void **state)
{
	struct values v = {0};
	const char *args[] = {"a.coz", "-f", "b.coz", NULL};
	int first = 0;

	(void)state;
	/* commands reading files: getopt permutes the operands to the end */
	assert_int_equal(parse(&v, false, &first, args), 0);
	assert_true(v.flag);
	assert_int_equal(first, 2);
}

static void separator(void **state)
{
	char *argv[] = {"cmd", "-a", "---", "--", "x", NULL};

	(void)state;
	assert_int_equal(cli_find_separator(5, argv, false), 3);
	assert_int_equal(cli_find_separator(5, argv, true), 2);
	assert_int_equal(cli_find_separator(2, argv, true), 2);
}

static void lookup_for_pass_through(void **state)
{
	uint64_t n = 0;
	const struct cli_option table[] = {
	    CLI_UINT('n', "runs", &n, "N", 1, 1000, "runs"),
	    CLI_END(),
	};
	const char *value;

	(void)state;
	assert_ptr_equal(cli_lookup(table, "--runs=3", &value), &table[0]);
	assert_string_equal(value, "3");
	assert_ptr_equal(cli_lookup(table, "--runs", &value), &table[0]);
	assert_null(value);
	assert_ptr_equal(cli_lookup(table, "-n7", &value), &table[0]);
	assert_string_equal(value, "7");
	assert_null(cli_lookup(table, "--runsx", &value));
	assert_null(cli_lookup(table, "--batch=3", &value));
	assert_null(cli_lookup(table, "prog", &value));
}

/* DOUBLE bounds may exclude themselves (a share above one half, a level in (0, 1)). */
static int parse_open(double *share, double *level, double *scale, const char *opt, const char *arg,
		      char **message)
{
	const struct cli_option table[] = {
	    CLI_DOUBLE(0, "share", share, "PCT", 50, 100, "a share", .fmin_open = true),
	    CLI_DOUBLE(0, "level", level, "A", 0, 1, "a level", .fmin_open = true,
		       .fmax_open = true),
	    CLI_DOUBLE(0, "scale", scale, "S", 0, INFINITY, "a scale"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever test", .usage = "usage: x", .options = table};
	char *argv[] = {"test", (char *)opt, (char *)arg, NULL};
	FILE *saved = stderr;
	size_t size = 0;
	int first, ret;

	stderr = open_memstream(message, &size);
	ret = cli_parse(&cmd, 3, argv, NULL, &first);
	fclose(stderr);
	stderr = saved;
	return ret;
}

static void double_bounds_may_be_open(void **state)
{
	static const struct {
		const char *opt, *arg, *message;
	} cases[] = {
	    {"--share", "50.5", NULL},
	    {"--share", "100", NULL},
	    {"--share", "50", "--share: '50' is not a number above 50, up to 100"},
	    {"--level", "0.01", NULL},
	    {"--level", "0", "--level: '0' is not a number above 0, below 1"},
	    {"--level", "1", "--level: '1' is not a number above 0, below 1"},
	    {"--scale", "0", NULL},
	    {"--scale", "123456789", NULL},
	    {"--scale", "-1", "--scale: '-1' is not a number 0 or more"},
	};
	double share = 0, level = 0, scale = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *message = NULL;
		int ret = parse_open(&share, &level, &scale, cases[i].opt, cases[i].arg, &message);

		if (!cases[i].message) {
			if (ret != 0)
				fail_msg("%s %s refused: %s", cases[i].opt, cases[i].arg, message);
		} else if (ret != EXIT_USAGE || !strstr(message, cases[i].message)) {
			fail_msg("%s %s: %d, '%s'", cases[i].opt, cases[i].arg, ret, message);
		}
		free(message);
	}
	assert_true(share == 100 && level == 0.01 && scale == 123456789);
}

static char *help_text(void)
{
	struct values v = {0};
	char *text = NULL;
	size_t size = 0;
	FILE *saved = stdout;
	int first;

	stdout = open_memstream(&text, &size);
	assert_int_equal(PARSE(&v, &first, "--help"), CLI_HELP);
	fclose(stdout);
	stdout = saved;
	return text;
}

static void help_generated_from_the_table(void **state)
{
	char *text = help_text();

	(void)state;
	assert_non_null(strstr(text, "usage: lever test [OPTIONS] -- PROGRAM\n"));
	assert_non_null(strstr(text, "\nThings:\n"));
	assert_non_null(strstr(text, "  -o, --output FILE         the output\n"));
	assert_non_null(strstr(text, "      --percent PCT         a percentage\n"));
	/* continuation lines start at the help column */
	assert_non_null(strstr(text, "  -v, --verbose             more output;\n"
				     "                            -vv even more\n"));
	/* names wider than the column: help on the next line */
	assert_non_null(strstr(text, "      --sampler perf|timer|none\n"
				     "                            a choice\n"));
	assert_non_null(strstr(text, "  -h, --help                show this help\n"));
	free(text);
}

struct strings {
	const char **items;
	size_t n;
};

/* A repeatable option's callback collects its arguments in order (-f a -f b). */
static int collect_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct strings *list = ctx;

	(void)opt;
	return cli_append_string(&list->items, &list->n, arg, "t");
}

static void repeatable_option_appends(void **state)
{
	static const struct cli_option table[] = {
	    CLI_CALLBACK('f', "function", "SYMBOL", collect_option, "x"),
	    CLI_END(),
	};
	const struct cli_command cmd = {.name = "t", .usage = "t", .options = table};
	char *argv[] = {"t", "-f", "a", "--function=b", "-f", "c", "x", NULL};
	struct strings list = {0};
	int first = 0;

	(void)state;
	assert_int_equal(cli_parse(&cmd, 7, argv, &list, &first), 0);
	assert_int_equal(list.n, 3);
	assert_string_equal(list.items[0], "a");
	assert_string_equal(list.items[1], "b");
	assert_string_equal(list.items[2], "c");
	assert_int_equal(first, 6);
	free(list.items);
}

/* Too few or too many operands are usage errors; min..max are accepted. */
static void operand_count_is_checked(void **state)
{
	static const struct cli_option table[] = {CLI_END()};
	const struct cli_command cmd = {.name = "t", .usage = "t", .options = table};
	char *none[] = {"t", NULL}, *one[] = {"t", "a", NULL},
	     *three[] = {"t", "a", "b", "c", NULL};
	int first = 0;

	(void)state;
	assert_int_equal(cli_parse_operands(&cmd, 1, none, NULL, &first, 1, 2, "few", "many"),
			 EXIT_USAGE);
	assert_int_equal(cli_parse_operands(&cmd, 2, one, NULL, &first, 1, 2, "few", "many"), 0);
	assert_int_equal(first, 1);
	assert_int_equal(cli_parse_operands(&cmd, 4, three, NULL, &first, 1, 2, "few", "many"),
			 EXIT_USAGE);
	assert_int_equal(cli_parse_operands(&cmd, 4, three, NULL, &first, 1, -1, "few", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_type_parses),
	    cmocka_unit_test(program_without_separator_and_coz_spelling),
	    cmocka_unit_test(bad_values_are_usage_errors),
	    cmocka_unit_test(operands_anywhere_without_program),
	    cmocka_unit_test(separator),
	    cmocka_unit_test(lookup_for_pass_through),
	    cmocka_unit_test(help_generated_from_the_table),
	    cmocka_unit_test(double_bounds_may_be_open),
	    cmocka_unit_test(repeatable_option_appends),
	    cmocka_unit_test(operand_count_is_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
