/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Test-only start-up for the stack part of the runtime (runtime/stack.c),
 * which the tests preload together with it: reads the LEVER_STABILIZE_*
 * contract (stabilizer.h) as init.c does for the whole runtime, starts the
 * stack pads and re-randomizes them every interval. It lets the stack part be
 * tested on its own, whatever the rest of the runtime does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "stabilizer/runtime/stabilizer.h"

struct stabilizer_config stabilizer_cfg;

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "1") == 0;
}

static void *rerandomize_loop(void *arg)
{
	for (;;) {
		time_sleep_ns(stabilizer_cfg.interval_ns);
		stack_pads_rerandomize();
	}
	return NULL;
}

__attribute__((constructor)) static void start_stack_pads(void)
{
	const char *seed = getenv(STABILIZE_ENV_SEED);
	const char *interval = getenv(STABILIZE_ENV_INTERVAL);
	pthread_t thread;

	stabilizer_cfg.stack = env_on(STABILIZE_ENV_STACK);
	stabilizer_cfg.one_time = env_on(STABILIZE_ENV_ONE_TIME);
	stabilizer_cfg.seed = seed ? strtoull(seed, NULL, 10) : 0;
	stabilizer_cfg.interval_ns =
	    interval ? strtoull(interval, NULL, 10) : STABILIZE_DEFAULT_INTERVAL_NS;
	stabilizer_cfg.verbose = env_on(STABILIZE_ENV_VERBOSE);
	if (!stabilizer_cfg.stack || stack_pads_start() < 0 || stabilizer_cfg.one_time)
		return;
	if (pthread_create(&thread, NULL, rerandomize_loop, NULL) == 0)
		pthread_detach(thread);
}
