/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever cc / lever c++ (also called as lever-cc / lever-c++): the system
 * compiler with what Stabilizer's runtime needs (stabilizer/cc/cc.h,
 * doc/cc.md). Every compiler argument passes through; lever's own options are
 * the few below, which no compiler has, plus the LEVER_CC_* environment so
 * that they also work through CC=lever-cc in a build system.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/commands.h"
#include "stabilizer/cc/cc.h"

static const char cc_usage[] =
    "usage: lever cc [LEVER OPTIONS] [COMPILER ARGUMENTS...]\n"
    "       lever c++ [LEVER OPTIONS] [COMPILER ARGUMENTS...]\n"
    "       lever-cc ..., lever-c++ ...  (the same; for CC=lever-cc CXX=lever-c++)\n"
    "\n"
    "Compiles and links like the system C (C++) compiler, which it runs with\n"
    "every argument unchanged, and adds what lever stabilize's runtime needs:\n"
    "  compiling C/C++   -ffunction-sections -fno-omit-frame-pointer -fno-jump-tables\n"
    "                    and the stack pad plugin (GCC plugin or clang pass plugin:\n"
    "                    each function pads its callees' frames by 0..4080 bytes,\n"
    "                    0 until the runtime draws the pads)\n"
    "  linking           -Wl,--emit-relocs and lever-cc-stub.o, which hands the\n"
    "                    stack pads to the runtime when the program runs under\n"
    "                    lever stabilize; otherwise the program runs unpadded\n"
    "Nothing is added to -E, -M, -fsyntax-only or commands without inputs.\n"
    "\n"
    "lever's options (on the command line, not in @FILE):\n"
    "  --randomize-link[=SEED]  shuffle the object files of a link and the order\n"
    "                           of its functions (link-order randomization, the\n"
    "                           paper's baseline); SEED makes it reproducible,\n"
    "                           without it each link draws a fresh seed; the\n"
    "                           seed is recorded in the output (section\n"
    "                           .lever.link, for lever bench --randomize=link)\n"
    "  --no-stack-pads          compile without the stack pad plugin\n"
    "  --lever-verbose          print the commands run and the link seed\n"
    "  --help                   show this help (the compiler's own: run it\n"
    "                           directly, or --help=CLASS with GCC)\n"
    "\n"
    "Environment:\n"
    "  LEVER_CC, LEVER_CXX      the compiler to wrap (default cc, c++); may\n"
    "                           include arguments, e.g. \"ccache gcc\"\n"
    "  LEVER_CC_RANDOMIZE_LINK  'random': as --randomize-link; a number N: as\n"
    "                           --randomize-link=N; empty or 0: off\n"
    "  LEVER_CC_STACK_PADS      0: as --no-stack-pads\n"
    "  LEVER_CC_VERBOSE         1: as --lever-verbose\n"
    "  LEVER_RUNTIME_DIR        where the plugins and lever-cc-stub.o are\n"
    "                           (default: ../lib/lever next to lever)\n"
    "\n"
    "See doc/cc.md.\n";

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && strcmp(v, value) == 0;
}

/* LEVER_CC_* first; options on the command line override them. */
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
	opts->verbose = env_is("LEVER_CC_VERBOSE", "1");
	return 0;
}

static int run_cc(enum cc_language language, int argc, char **argv)
{
	const char *env = language == CC_LANG_C ? "LEVER_CC" : "LEVER_CXX";
	const char *compiler = getenv(env);
	struct cc_settings settings = {.language = language};
	struct cc_args args;
	char err[512], runtime_dir[PATH_MAX];
	int rc;

	if (options_from_environment(&settings.opts) < 0)
		return 2;
	if (cc_args_parse(&args, argc - 1, argv + 1, &settings.opts, err, sizeof(err)) < 0) {
		fprintf(stderr, "lever cc: %s\n", err);
		cc_args_free(&args);
		return 2;
	}
	if (settings.opts.help) {
		fputs(cc_usage, stdout);
		cc_args_free(&args);
		return 0;
	}
	settings.compiler = compiler && *compiler ? compiler : language == CC_LANG_C ? "cc" : "c++";
	settings.runtime_dir = lever_runtime_dir();
	if (settings.runtime_dir && realpath(settings.runtime_dir, runtime_dir))
		settings.runtime_dir = runtime_dir;
	rc = cc_run(&settings, &args);
	cc_args_free(&args);
	return rc;
}

int cmd_cc(int argc, char **argv)
{
	return run_cc(CC_LANG_C, argc, argv);
}

int cmd_cxx(int argc, char **argv)
{
	return run_cc(CC_LANG_CXX, argc, argv);
}
