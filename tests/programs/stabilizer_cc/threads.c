/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Threads calling deep recursions while the pads change under them. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4

__attribute__((noinline)) static uint64_t walk(uint64_t n, uint64_t acc)
{
	volatile uint64_t r;

	if (n == 0)
		return acc;
	r = walk(n - 1, acc * 6364136223846793005ULL + n);
	return r ^ n;
}

static void *worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg, sum = 0;

	for (uint64_t i = 0; i < 20000; i++)
		sum += walk(50 + (i + id) % 50, id);
	return (void *)(uintptr_t)sum;
}

int main(void)
{
	pthread_t t[THREADS];

	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *sum;

		pthread_join(t[i], &sum);
		printf("thread %d: %llu\n", i, (unsigned long long)(uintptr_t)sum);
	}
	return 0;
}
