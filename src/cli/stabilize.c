/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever stabilize: run a program under liblever-stabilizer.so (Stabilizer's
 * layout re-randomization). The options become the LEVER_STABILIZE_*
 * environment of stabilizer/runtime/settings.h, the runtime is appended to
 * LD_PRELOAD and the program is exec'd, so its exit status is lever's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/commands.h"
#include "launch/launch.h"
#include "stabilizer/runtime/settings.h"

#define WHO "lever stabilize"

extern char **environ;

#define EXIT_USAGE 2

static const char stabilize_usage[] =
    "usage: lever stabilize [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with its memory layout randomized (Stabilizer): heap objects are\n"
    "placed at random by a shuffling allocator, and in programs built with\n"
    "'lever cc' functions and stack frames are moved to random places again and\n"
    "again while it runs. Works on any dynamically linked program through\n"
    "LD_PRELOAD; its children run randomized too.\n"
    "\n"
    "Parts (default: all three):\n"
    "      --heap              shuffle the heap: every malloc returns one of 256\n"
    "                          buffered objects of its size class, chosen at random\n"
    "      --code              relocate functions at random (lever cc binaries)\n"
    "      --stack             random padding between stack frames (lever cc binaries)\n"
    "\n"
    "Randomization:\n"
    "      --one-time          randomize once at start-up, never re-randomize\n"
    "      --interval=DUR      re-randomize code and stack every DUR (default 500ms;\n"
    "                          DUR is a number with ns, us, ms or s, default ms;\n"
    "                          1ms to 1h)\n"
    "      --seed=N            seed of every random choice (default: a fresh one;\n"
    "                          -v prints it, so a run can be repeated)\n"
    "\n"
    "  -v, --verbose           print the seed and which parts run (each process of\n"
    "                          the program prints one line)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: the program's; 2 for a usage error; 1 if the runtime is missing;\n"
    "126 if PROGRAM cannot be executed; 127 if it is not found.\n"
    "See doc/stabilize.md.\n";

struct stabilize_options {
	bool code, stack, heap;
	bool one_time;
	uint64_t interval_ns;
	uint64_t seed;
	bool seed_given;
	unsigned verbose;
};

enum {
	OPT_CODE = 256,
	OPT_STACK,
	OPT_HEAP,
	OPT_ONE_TIME,
	OPT_INTERVAL,
	OPT_SEED,
};

static const struct option stabilize_long_options[] = {
    {"code", no_argument, NULL, OPT_CODE},
    {"stack", no_argument, NULL, OPT_STACK},
    {"heap", no_argument, NULL, OPT_HEAP},
    {"one-time", no_argument, NULL, OPT_ONE_TIME},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lever stabilize: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'lever stabilize --help' for usage.\n");
	return EXIT_USAGE;
}

#define HOUR_NS (3600ULL * NSEC_PER_SEC)

static int parse_interval(const char *text, uint64_t *out)
{
	char *end;
	double v;

	v = strtod(text, &end);
	if (!*text || !(v >= 0.0 && v <= 1e12) || !time_parse_duration(text, NSEC_PER_MSEC, out) ||
	    *out < NSEC_PER_MSEC || *out > HOUR_NS)
		return usage_error("--interval: '%s' is not a duration from 1ms to 1h", text);
	return 0;
}

static int apply_option(struct stabilize_options *o, int c, const char *arg)
{
	switch (c) {
	case OPT_CODE:
		o->code = true;
		return 0;
	case OPT_STACK:
		o->stack = true;
		return 0;
	case OPT_HEAP:
		o->heap = true;
		return 0;
	case OPT_ONE_TIME:
		o->one_time = true;
		return 0;
	case OPT_INTERVAL:
		return parse_interval(arg, &o->interval_ns);
	case OPT_SEED:
		if (!parse_u64_range(arg, 0, UINT64_MAX, &o->seed))
			return usage_error("--seed: '%s' is not an unsigned 64-bit integer", arg);
		o->seed_given = true;
		return 0;
	case 'v':
		if (o->verbose < 2)
			o->verbose++;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

static int find_separator(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i;
	}
	return argc;
}

/* 0 with *prog the index of PROGRAM, -1 after --help, or an exit status. */
static int parse_options(struct stabilize_options *o, int argc, char **argv, int *prog)
{
	int sep = find_separator(argc, argv);
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(sep, argv, "+:vh", stabilize_long_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(stabilize_usage, stdout);
			return -1;
		}
		if (c == '?') {
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		ret = apply_option(o, c, optarg);
		if (ret)
			return ret;
	}
	*prog = optind < sep ? optind : sep + 1;
	if (*prog >= argc)
		return usage_error("no program given: lever stabilize [OPTIONS] -- PROGRAM [ARGS]");
	if (!o->code && !o->stack && !o->heap)
		o->code = o->stack = o->heap = true;
	return 0;
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
		return ret < 0 ? 0 : ret;
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
