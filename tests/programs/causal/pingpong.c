/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Two threads take strict turns through a mutex and a condition variable:
 * A runs work_a (two units, line LINE:a), wakes B and waits; B runs work_b
 * (one unit, line LINE:b), wakes A and waits. Every round is serial, so
 * speeding line a up by 50% makes the program 1 - 2/3 = 33% faster and line b
 * by 50% 1 - 2.5/3 = 17% faster. A causal profile gets these numbers only if
 * each thread pays its delays before waking the other and the woken thread
 * skips the delays added while it slept (paper §3.4.1): used by
 * causal_sync_accounting. With "spin", the turns are passed through an
 * atomic variable polled with sched_yield instead, which lever cannot see:
 * then each thread runs all the time and must pay every pause itself.
 *
 * Usage: pingpong [ROUNDS [UNIT [spin]]]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lever.h>

static unsigned rounds = 800;
static unsigned unit = 200000;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static atomic_int turn; /* 0: A's turn, 1: B's */
static int spin;
static uint64_t result_a, result_b;

__attribute__((noinline)) static uint64_t work_a(uint64_t x)
{
	for (unsigned i = 0; i < 2 * unit; i++)
		x = x * 6364136223846793005ULL + i; /* LINE:a */
	return x;
}

__attribute__((noinline)) static uint64_t work_b(uint64_t x)
{
	for (unsigned i = 0; i < unit; i++)
		x = x * 2862933555777941757ULL + i; /* LINE:b */
	return x;
}

static void wait_turn(int me)
{
	if (spin) {
		while (atomic_load(&turn) != me)
			sched_yield();
		return;
	}
	pthread_mutex_lock(&lock);
	while (turn != me)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

static void pass_turn(int to)
{
	if (spin) {
		atomic_store(&turn, to);
		return;
	}
	pthread_mutex_lock(&lock);
	turn = to;
	pthread_cond_signal(&changed);
	pthread_mutex_unlock(&lock);
}

static void *player_b(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < rounds; r++) {
		wait_turn(1);
		result_b = work_b(result_b + r);
		pass_turn(0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t b;

	if (argc > 1)
		rounds = (unsigned)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		unit = (unsigned)strtoul(argv[2], NULL, 10);
	spin = argc > 3 && strcmp(argv[3], "spin") == 0;
	pthread_create(&b, NULL, player_b, NULL);
	for (unsigned r = 0; r < rounds; r++) {
		wait_turn(0);
		LEVER_PROGRESS;
		result_a = work_a(result_a + r);
		pass_turn(1);
	}
	pthread_join(b, NULL);
	printf("%u rounds, %016llx %016llx\n", rounds, (unsigned long long)result_a,
	       (unsigned long long)result_b);
	return 0;
}
