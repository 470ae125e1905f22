/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever cc / lever c++ (also called as lever-cc / lever-c++): the system
 * compiler with what Stabilizer's runtime needs (stabilizer/cc/wrapper.h,
 * doc/cc.md). Every compiler argument passes through; lever's own options are
 * the few below, which no compiler has, plus the LEVER_CC_* environment so
 * that they also work through CC=lever-cc in a build system.
 */
#include <stdio.h>

#include "cli/commands.h"
#include "launch/launch.h"
#include "stabilizer/cc/wrapper.h"

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
    "  --annotate               also -fpatchable-function-entry=5: a NOP sled at\n"
    "                           every function's entry, which lever annotate\n"
    "                           record patches into its cheapest probe\n"
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
    "  LEVER_CC_ANNOTATE        1: as --annotate\n"
    "  LEVER_CC_VERBOSE         1: as --lever-verbose\n"
    "  LEVER_RUNTIME_DIR        where the plugins and lever-cc-stub.o are\n"
    "                           (default: ../lib/lever next to lever)\n"
    "\n"
    "See doc/cc.md.\n";

static int run_cc(enum cc_language language, int argc, char **argv)
{
	bool help;
	int rc = cc_main(language, argc - 1, argv + 1, launch_runtime_dir(), &help);

	if (help)
		fputs(cc_usage, stdout);
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
