/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Several threads call the same functions while code is re-randomized every
 * millisecond or so: relocation races, entry slots switching under running
 * threads, and reclamation stopping every thread; thread-local variables
 * in moved code. Deterministic output. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS	200000

__attribute__((noinline)) static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 29;
	return x;
}

/* Thread-local: its accesses are relaxed TLS relocations, which must not
 * keep the function in place. */
static __thread uint64_t steps_taken;

__attribute__((noinline)) static uint64_t step(uint64_t acc, int i)
{
	steps_taken++;
	return mix(acc + (uint64_t)i) ^ (acc << 1);
}

__attribute__((noinline)) static uint64_t inner(uint64_t seed, int n)
{
	uint64_t acc = seed;

	for (int i = 0; i < n; i++)
		acc = step(acc, i);
	return acc;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint64_t acc = id;

	for (int r = 0; r < ROUNDS; r++)
		acc ^= inner(acc + (uint64_t)r, 50);
	return (void *)(uintptr_t)(acc ^ steps_taken);
}

int main(void)
{
	pthread_t t[THREADS];
	uint64_t total = 0;

	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		printf("thread %d %016llx\n", i, (unsigned long long)(uintptr_t)ret);
		total ^= (uint64_t)(uintptr_t)ret;
	}
	printf("total %016llx\n", (unsigned long long)total);
	return 0;
}
