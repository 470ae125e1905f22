/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The contract between the commands that start a program under Stabilizer
 * (`lever stabilize`, `lever bench --randomize=heap|code|stack`, through
 * launch/launch.h) and liblever-stabilizer.so, which reads these environment
 * variables once at start-up (init.c). doc/stabilize.md describes the parts;
 * spec/stabilizer.md the randomizations. Every variable is optional: an
 * absent part stays off, an absent seed is drawn from the clock.
 */
#ifndef LEVER_STABILIZER_SETTINGS_H
#define LEVER_STABILIZER_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#define STABILIZE_ENV_CODE     "LEVER_STABILIZE_CODE"	     /* "1": relocate functions */
#define STABILIZE_ENV_STACK    "LEVER_STABILIZE_STACK"	     /* "1": random stack pads */
#define STABILIZE_ENV_HEAP     "LEVER_STABILIZE_HEAP"	     /* "1": shuffle the heap */
#define STABILIZE_ENV_ONE_TIME "LEVER_STABILIZE_ONE_TIME"    /* "1": randomize once at start */
#define STABILIZE_ENV_INTERVAL "LEVER_STABILIZE_INTERVAL_NS" /* re-randomization period, ns */
#define STABILIZE_ENV_SEED     "LEVER_STABILIZE_SEED"	     /* decimal seed of every choice */
#define STABILIZE_ENV_VERBOSE  "LEVER_STABILIZE_VERBOSE"     /* 0, 1 or 2 */
/*
 * Set by the first process of a run once it printed a warning, so that the
 * other processes of a pipeline or a build (which inherit it) do not repeat
 * it: a comma-separated list of the warnings already given.
 */
#define STABILIZE_ENV_WARNED "LEVER_STABILIZE_WARNED"

#define STABILIZE_DEFAULT_INTERVAL_NS 500000000ULL

/* What the variables above carry, as the launcher fills them in. */
struct stabilizer_settings {
	bool code, stack, heap;
	bool one_time;	      /* no re-randomization after start-up */
	uint64_t interval_ns; /* 0: STABILIZE_DEFAULT_INTERVAL_NS */
	uint64_t seed;
	unsigned verbose; /* 0..2 */
};

#endif
