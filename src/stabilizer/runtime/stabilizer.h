/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * liblever-stabilizer.so (and liblever-stabilizer-code.so): the parts of the
 * runtime and how they meet.
 *
 * `lever stabilize` passes its options in the environment (LEVER_STABILIZE_*,
 * settings.h). The start-up code (init.c) reads them into stabilizer_cfg, starts
 * each enabled part once, and, unless one_time is set, calls each part's
 * re-randomize hook every interval_ns from one re-randomization thread.
 *
 *   heap   heap.c ...   shuffling layer over a size-class allocator (no hook:
 *                       it re-randomizes on every malloc/free)
 *   code   code*.c      functions of a `lever cc` binary moved to random
 *                       addresses, lazily, on the first call after each
 *                       re-randomization; a library of its own, opened
 *                       only when the part is on (below)
 *   stack  stack*.c     random padding between frames, per function, from the
 *                       table that `lever cc`'s instrumentation reads
 */
#ifndef LEVER_STABILIZER_RUNTIME_H
#define LEVER_STABILIZER_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "stabilizer/runtime/settings.h" /* the environment contract */

#define STABILIZER_EXPORT __attribute__((visibility("default")))

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
 * Read the environment into stabilizer_cfg, once (init.c). The heap calls it
 * from the first malloc, which can come before any constructor ran, so it
 * allocates nothing and works before libc set up environ.
 */
void stabilizer_config_load(void);

/* Independent random streams derived from the seed, one per part. */
enum stabilizer_stream {
	STABILIZER_STREAM_HEAP = 1,
	STABILIZER_STREAM_CODE,
	STABILIZER_STREAM_STACK,
	STABILIZER_STREAM_CHILDREN, /* the seed handed to exec'd children */
};
uint64_t stabilizer_stream_seed(enum stabilizer_stream stream);
void stabilizer_rng_init(struct rng *r, enum stabilizer_stream stream);

/*
 * Whether to print the warning of a part that cannot run ("code", "stack"):
 * only in the first process of a run (the others of a pipeline or a build
 * inherit STABILIZE_ENV_WARNED from it), or always with -v.
 */
bool stabilizer_warn_once(const char *part) __attribute__((weak));

/* As stabilizer_warn_once, also where init.c is not linked in (unit tests). */
static inline bool stabilizer_should_warn(const char *part)
{
	return !stabilizer_warn_once || stabilizer_warn_once(part);
}

/*
 * Hooks of the parts. start: once, at start-up, before main; returns 0, or
 * -1 after printing one line saying why the part cannot run (the program
 * then runs without it). rerandomize: from the re-randomization thread.
 * The stack part's are weak: a build without it leaves them NULL, and
 * init.c then says that the part is not available and runs without it.
 */
int stack_pads_start(void) __attribute__((weak));
void stack_pads_rerandomize(void) __attribute__((weak));

/*
 * The code part (code*.c) is a library of its own,
 * liblever-stabilizer-code.so, next to liblever-stabilizer.so: it needs
 * libelf, libdw and libgcc_s, about 0.9 MiB resident once loaded, which a
 * --heap or --stack run should not carry (issue 14 point 14). init.c opens
 * it with dlopen only when code randomization is on and calls its one
 * exported function, which takes a copy of the configuration and the
 * warn-once function and returns the part's hooks (code_module.c).
 */
#define STABILIZER_CODE_LIBRARY "liblever-stabilizer-code.so"
#define STABILIZER_CODE_ATTACH	"lever_stabilizer_code_attach"

struct stabilizer_code_hooks {
	int (*start)(void);
	void (*rerandomize)(void);
};
typedef void stabilizer_code_attach_fn(const struct stabilizer_config *cfg,
				       bool (*warn_once)(const char *part),
				       struct stabilizer_code_hooks *hooks);

/* The code library's own definitions of its hooks (code.c). */
int code_randomizer_start(void);
void code_randomizer_rerandomize(void);

/*
 * The shuffling heap (heap*.c) starts itself on the first malloc; init.c
 * calls this from its constructor to make sure it did, and to report.
 * Returns 0, or -1 after printing why the heap runs unshuffled.
 */
int heap_start(void);

#endif
