/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The callbacks of RUN_OPTIONS (run_options.h): the measure room reads the values. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/run_options.h"

/* CLI_UINT writes a uint64_t; the run counts are size_t. */
static_assert(sizeof(size_t) == sizeof(uint64_t), "run counts are read as uint64_t");

int run_option_runs(const struct cli_option *opt, const char *arg, void *ctx)
{
	(void)ctx;
	return measure_parse_runs(opt->value, arg);
}

int run_option_min_time(const struct cli_option *opt, const char *arg, void *ctx)
{
	(void)ctx;
	return measure_parse_min_time(opt->value, arg);
}

int run_option_randomize(const struct cli_option *opt, const char *arg, void *ctx)
{
	(void)ctx;
	return measure_parse_randomize(opt->value, arg);
}

int run_option_rerandomize(const struct cli_option *opt, const char *arg, void *ctx)
{
	(void)ctx;
	return measure_parse_rerandomize(opt->value, arg);
}

int run_option_alpha(const struct cli_option *opt, const char *arg, void *ctx)
{
	(void)ctx;
	return measure_parse_alpha(arg, opt->value);
}

const char *const run_unit_names[] = {"s", "ms", "us", "ns", "none", NULL};

struct measure_value_format run_unit_format(int unit)
{
	struct measure_value_format vf = {1.0};

	measure_parse_unit(run_unit_names[unit], &vf);
	return vf;
}
