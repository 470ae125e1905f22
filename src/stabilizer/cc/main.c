/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cc_main (wrapper.h): one `lever cc` invocation, from the LEVER_CC_*
 * environment and the command line to the compiler's exit status, so that
 * the command file (src/cli/cc.c) only prints help.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stabilizer/cc/cc.h"

#define CC_EXIT_USAGE 2

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && strcmp(v, value) == 0;
}

/* LEVER_CC_* first (they work through CC=lever-cc); the command line overrides them. */
static int options_from_environment(struct cc_options *opts)
{
	const char *link = getenv("LEVER_CC_RANDOMIZE_LINK");

	if (link && *link && strcmp(link, "0") != 0) {
		opts->randomize_link = true;
		if (strcmp(link, "random") != 0) {
			if (!parse_u64_range(link, 0, UINT64_MAX, &opts->link_seed)) {
				fprintf(stderr,
					"lever cc: LEVER_CC_RANDOMIZE_LINK='%s': want "
					"'random' or a seed (a number)\n",
					link);
				return -1;
			}
			opts->link_seed_given = true;
		}
	}
	opts->no_stack_pads = env_is("LEVER_CC_STACK_PADS", "0");
	opts->annotate = env_is("LEVER_CC_ANNOTATE", "1");
	opts->verbose = env_is("LEVER_CC_VERBOSE", "1");
	return 0;
}

int cc_main(enum cc_language language, int argc, char **argv, const char *runtime_dir, bool *help)
{
	const char *compiler = getenv(language == CC_LANG_C ? "LEVER_CC" : "LEVER_CXX");
	struct cc_settings settings = {.language = language};
	struct cc_args args;
	char err[512], resolved[PATH_MAX];
	int rc;

	*help = false;
	if (options_from_environment(&settings.opts) < 0)
		return CC_EXIT_USAGE;
	if (cc_args_parse(&args, argc, argv, &settings.opts, err, sizeof(err)) < 0) {
		fprintf(stderr, "lever cc: %s\n", err);
		cc_args_free(&args);
		return CC_EXIT_USAGE;
	}
	if (settings.opts.help) {
		*help = true;
		cc_args_free(&args);
		return 0;
	}
	settings.compiler = compiler && *compiler ? compiler : language == CC_LANG_C ? "cc" : "c++";
	settings.runtime_dir = runtime_dir;
	if (runtime_dir && realpath(runtime_dir, resolved))
		settings.runtime_dir = resolved;
	rc = cc_run(&settings, &args);
	cc_args_free(&args);
	return rc;
}
