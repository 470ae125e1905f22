/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The callbacks of RUN_OPTIONS (run_options.h): the measure room reads the values. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/run_options.h"
#include "report/report.h"

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

int check_report_outputs(const char *who, const char *const *outs, size_t n_outs,
			 const char *const *inputs, size_t n_inputs, bool force)
{
	char why[512];

	for (size_t i = 0; i < n_outs; i++) {
		int err;

		if (!outs[i])
			continue;
		if (report_output_check(outs[i], inputs, n_inputs, force, cli_data_kind, why,
					sizeof(why))) {
			fprintf(stderr, "%s: %s\n", who, why);
			return 1;
		}
		err = measure_check_output(outs[i]);
		if (err) {
			fprintf(stderr, "%s: cannot write %s: %s\n", who, outs[i], strerror(-err));
			return 1;
		}
	}
	return 0;
}
