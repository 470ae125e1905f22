/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever stabilize: run a program under liblever-stabilizer.so (Stabilizer's
 * layout re-randomization). The options become the LEVER_STABILIZE_*
 * environment of stabilizer/runtime/settings.h, the runtime is appended to
 * LD_PRELOAD and the program is exec'd, so its exit status is lever's.
 */
#include <stdio.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"
#include "stabilizer/runtime/settings.h"

#define WHO "lever stabilize"

extern char **environ;

static const char stabilize_description[] =
    "Runs PROGRAM with its memory layout randomized (Stabilizer): heap objects are\n"
    "placed at random by a shuffling allocator, and in programs built with\n"
    "'lever cc' functions and stack frames are moved to random places again and\n"
    "again while it runs. Works on any dynamically linked program through\n"
    "LD_PRELOAD; its children run randomized too.\n";

static const char stabilize_epilogue[] =
    "Exit status: the program's; 2 for a usage error; 1 if the runtime is missing\n"
    "or PROGRAM is statically linked; 126 if PROGRAM cannot be executed; 127 if\n"
    "it is not found.\n"
    "See doc/stabilize.md.\n";

struct stabilize_options {
	bool code, stack, heap;
	bool one_time;
	uint64_t interval_ns;
	uint64_t seed;
	bool seed_given;
	unsigned verbose;
};

/* 0 with *prog the index of PROGRAM, CLI_HELP after --help, or an exit status. */
static int parse_options(struct stabilize_options *o, int argc, char **argv, int *prog)
{
	const struct cli_option table[] = {
	    CLI_GROUP("Parts (default: all three)"),
	    CLI_FLAG(0, "heap", &o->heap,
		     "shuffle the heap: every malloc returns one of 256\n"
		     "buffered objects of its size class, chosen at random"),
	    CLI_FLAG(0, "code", &o->code, "relocate functions at random (lever cc binaries)"),
	    CLI_FLAG(0, "stack", &o->stack,
		     "random padding between stack frames (lever cc binaries)"),
	    CLI_GROUP("Randomization"),
	    CLI_FLAG(0, "one-time", &o->one_time, "randomize once at start-up, never re-randomize"),
	    CLI_DURATION(0, "interval", &o->interval_ns, "DUR", NSEC_PER_MSEC, NSEC_PER_MSEC,
			 3600 * NSEC_PER_SEC,
			 "re-randomize code and stack every DUR (default 500ms;\n"
			 "DUR is a number with ns, us, ms or s, default ms;\n"
			 "1ms to 1h)",
			 .what = "a duration from 1ms to 1h"),
	    CLI_UINT(0, "seed", &o->seed, "N", 0, UINT64_MAX,
		     "seed of every random choice (default: a fresh one;\n"
		     "-v prints it, so a run can be repeated)",
		     .given = &o->seed_given, .what = "an unsigned 64-bit integer"),
	    CLI_GROUP("Output"),
	    CLI_COUNT('v', "verbose", &o->verbose, 2,
		      "print the seed and which parts run (each process of\n"
		      "the program prints one line; -vv more)"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = WHO,
	    .usage = "usage: lever stabilize [OPTIONS] [--] PROGRAM [ARGS...]",
	    .description = stabilize_description,
	    .options = table,
	    .epilogue = stabilize_epilogue,
	    .takes_program = true,
	};
	int ret = cli_parse(&cmd, argc, argv, o, prog);

	if (!ret && !o->code && !o->stack && !o->heap)
		o->code = o->stack = o->heap = true;
	return ret;
}

/* The program's environment: Stabilizer's settings and its runtime preloaded. */
static int build_environment(struct launch_env *env, const struct stabilize_options *o)
{
	const struct stabilizer_settings settings = {
	    .code = o->code,
	    .stack = o->stack,
	    .heap = o->heap,
	    .one_time = o->one_time,
	    .interval_ns = o->interval_ns,
	    .seed = o->seed,
	    .verbose = o->verbose,
	};

	if (launch_env_init(env, WHO, environ))
		return -1;
	return launch_env_stabilizer(env, &settings) ||
		       launch_env_add_runtime(env, LAUNCH_STABILIZER_RUNTIME)
		   ? -1
		   : 0;
}

int cmd_stabilize(int argc, char **argv)
{
	struct stabilize_options o = {.interval_ns = STABILIZE_DEFAULT_INTERVAL_NS};
	struct launch_env env;
	int prog = 0;
	int ret;

	ret = parse_options(&o, argc, argv, &prog);
	if (ret)
		return ret == CLI_HELP ? 0 : ret;
	if (!o.seed_given)
		o.seed = time_realtime_ns() ^ ((uint64_t)getpid() << 32);
	if (o.verbose)
		fprintf(stderr, WHO ": seed %llu (repeat this layout with --seed=%llu)\n",
			(unsigned long long)o.seed, (unsigned long long)o.seed);
	if (launch_check_preloadable(WHO, argv[prog], "lever's Stabilizer runtime"))
		return LAUNCH_EXIT_FAILURE;
	if (build_environment(&env, &o)) {
		launch_env_free(&env);
		return LAUNCH_EXIT_FAILURE;
	}
	ret = launch_exec(WHO, argv + prog, &env);
	launch_env_free(&env);
	return ret;
}
