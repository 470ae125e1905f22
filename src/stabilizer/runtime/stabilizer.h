/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * liblever-stabilizer.so: the parts of the runtime and how they meet.
 *
 * `lever stabilize` passes its options in the environment (LEVER_STABILIZE_*,
 * below). The start-up code (init.c) reads them into stabilizer_cfg, starts
 * each enabled part once, and, unless one_time is set, calls each part's
 * re-randomize hook every interval_ns from one re-randomization thread.
 *
 *   heap   heap.c ...   shuffling layer over a size-class allocator (no hook:
 *                       it re-randomizes on every malloc/free)
 *   code   code*.c      functions of a `lever cc` binary moved to random
 *                       addresses, lazily, on the first call after each
 *                       re-randomization
 *   stack  stack*.c     random padding between frames, per function, from the
 *                       table that `lever cc`'s instrumentation reads
 */
#ifndef LEVER_STABILIZER_RUNTIME_H
#define LEVER_STABILIZER_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

/* The environment contract between `lever stabilize` and the runtime. */
#define STABILIZE_ENV_CODE	"LEVER_STABILIZE_CODE"	    /* "1" to randomize code */
#define STABILIZE_ENV_STACK	"LEVER_STABILIZE_STACK"	    /* "1" to randomize stack pads */
#define STABILIZE_ENV_HEAP	"LEVER_STABILIZE_HEAP"	    /* "1" to shuffle the heap */
#define STABILIZE_ENV_ONE_TIME	"LEVER_STABILIZE_ONE_TIME"  /* "1": randomize once at start */
#define STABILIZE_ENV_INTERVAL	"LEVER_STABILIZE_INTERVAL_NS" /* re-randomization period */
#define STABILIZE_ENV_SEED	"LEVER_STABILIZE_SEED"	    /* decimal seed */
#define STABILIZE_ENV_VERBOSE	"LEVER_STABILIZE_VERBOSE"   /* 0, 1, 2 */
#define STABILIZE_DEFAULT_INTERVAL_NS 500000000ULL

struct stabilizer_config {
	bool code, stack, heap;
	bool one_time;
	uint64_t interval_ns;
	uint64_t seed; /* every part derives its own stream from it */
	int verbose;
};

/* Filled by init.c before any part starts; read-only afterwards. */
extern struct stabilizer_config stabilizer_cfg;

/*
 * Hooks of the parts. start: once, at start-up, before main; returns 0, or
 * -1 after printing one line saying why the part cannot run (the program
 * then runs without it). rerandomize: from the re-randomization thread.
 */
int code_randomizer_start(void);
void code_randomizer_rerandomize(void);
int stack_pads_start(void);
void stack_pads_rerandomize(void);

#endif
