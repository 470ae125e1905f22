/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program written for Coz: it includes Debian's own /usr/include/coz.h
 * (package coz-profiler), not lever's, and uses COZ_PROGRESS,
 * COZ_PROGRESS_NAMED, COZ_BEGIN and COZ_END. It also calls Coz's ABI for
 * custom synchronisation (_coz_pre_block, _coz_post_block, _coz_add_delays)
 * when the profiler provides it, around a hand-made spin-then-yield handoff.
 * Prints a checksum.
 */
#include "/usr/include/coz.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define ROUNDS 3000

static atomic_uint turn;
static uint64_t sums[2];

static void (*pre_block)(void);
static void (*post_block)(int);
static void (*add_delays)(void);

__attribute__((noinline)) static uint64_t work(uint64_t x)
{
	for (int i = 0; i < 30000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

/* Hand-made handoff between two threads: waits for its turn, then passes it on. */
static void *player(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;

	for (int r = 0; r < ROUNDS; r++) {
		COZ_BEGIN("turn");
		if (pre_block)
			pre_block();
		while (atomic_load(&turn) % 2 != me)
			sched_yield();
		if (post_block)
			post_block(1);
		COZ_END("turn");
		sums[me] += work((uint64_t)r << 1 | me);
		COZ_PROGRESS_NAMED("round");
		if (add_delays)
			add_delays();
		atomic_fetch_add(&turn, 1);
		COZ_PROGRESS;
	}
	return NULL;
}

static void lookup(void **slot, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	memcpy(slot, &p, sizeof(p));
}

int main(void)
{
	pthread_t t[2];

	lookup((void **)&pre_block, "_coz_pre_block");
	lookup((void **)&post_block, "_coz_post_block");
	lookup((void **)&add_delays, "_coz_add_delays");
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, player, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("rounds %u, checksum %016llx\n", atomic_load(&turn),
	       (unsigned long long)(sums[0] ^ sums[1]));
	return 0;
}
