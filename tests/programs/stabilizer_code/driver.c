/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Test driver for code randomization, preloaded into the test programs: a
 * minimal stand-in for the runtime's start-up (runtime/init.c, written in
 * parallel) that reads the same LEVER_STABILIZE_* variables, starts the code
 * part before main and, unless one-time, calls its re-randomize hook every
 * interval from a thread with every signal blocked. Built together with the
 * code*.c sources it tests.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "stabilizer/runtime/stabilizer.h"

struct stabilizer_config stabilizer_cfg;

static uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	uint64_t out;

	return v && parse_u64_range(v, 0, UINT64_MAX, &out) ? out : fallback;
}

static void *rerandomize_loop(void *arg)
{
	for (;;) {
		time_sleep_ns(stabilizer_cfg.interval_ns);
		code_randomizer_rerandomize();
	}
	return NULL;
}

__attribute__((constructor)) static void driver_start(void)
{
	sigset_t all, old;
	pthread_t thread;

	stabilizer_cfg.code = env_u64(STABILIZE_ENV_CODE, 0) == 1;
	stabilizer_cfg.one_time = env_u64(STABILIZE_ENV_ONE_TIME, 0) == 1;
	stabilizer_cfg.interval_ns = env_u64(STABILIZE_ENV_INTERVAL, STABILIZE_DEFAULT_INTERVAL_NS);
	stabilizer_cfg.seed = env_u64(STABILIZE_ENV_SEED, time_realtime_ns());
	stabilizer_cfg.verbose = (int)env_u64(STABILIZE_ENV_VERBOSE, 0);
	if (!stabilizer_cfg.code || code_randomizer_start() != 0 || stabilizer_cfg.one_time)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&thread, NULL, rerandomize_loop, NULL) == 0)
		pthread_detach(thread);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
