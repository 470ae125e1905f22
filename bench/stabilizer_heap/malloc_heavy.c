/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A malloc-heavy workload for measuring the shuffling heap's overhead:
 * each thread keeps a pool of live objects of 16-512 bytes and replaces a
 * pseudo-random one (fixed LCG) at every step, writing to the new object and
 * reading the one it frees.
 *
 * usage: malloc_heavy [STEPS [THREADS [POOL]]]   (default 2000000 1 10000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t steps = 2000000, pool_size = 10000;

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg * 2654435761u + 1, sum = 0;
	unsigned char **pool = calloc(pool_size, sizeof(*pool));

	if (!pool)
		abort();
	for (size_t i = 0; i < steps; i++) {
		size_t slot, size;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		slot = (size_t)(x >> 33) % pool_size;
		size = 16 + (size_t)(x >> 20) % 497;
		if (pool[slot]) {
			sum += pool[slot][0];
			free(pool[slot]);
		}
		pool[slot] = malloc(size);
		if (!pool[slot])
			abort();
		memset(pool[slot], (int)(i & 0xff), size);
	}
	for (size_t i = 0; i < pool_size; i++)
		free(pool[i]);
	free(pool);
	return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
	int threads = 1;
	pthread_t t[64];
	uint64_t total = 0;

	if (argc > 1)
		steps = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		pool_size = strtoul(argv[3], NULL, 10);
	if (threads < 1 || threads > 64 || !pool_size)
		return 2;
	if (threads == 1) { /* stay single-threaded: allocators may skip locking */
		printf("%llu\n", (unsigned long long)(uintptr_t)worker((void *)1));
		return 0;
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (uintptr_t)r;
	}
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
