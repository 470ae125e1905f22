/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Creates 1000 short-lived threads over its life, in waves of 8: half return
 * from their start routine, half leave with pthread_exit, every tenth is
 * detached and reports through a semaphore instead of being joined. Prints
 * the sum of their results.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>

#include <lever.h>

#define WAVES 125
#define WAVE  8

static sem_t detached_done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t detached_sum;

/*
 * A few sampling periods of CPU time per thread: at 1M steps a thread ran
 * 0.9 ms on a fast VM, under the timer sampler's 1 ms of thread CPU time,
 * and none of the 1000 got a sample in these lines.
 */
__attribute__((noinline)) static uint64_t compute(uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4000000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x >> 40;
}

static void *run(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint64_t r = compute(id);

	LEVER_PROGRESS;

	if (id % 10 == 0) {
		pthread_mutex_lock(&lock);
		detached_sum += r;
		pthread_mutex_unlock(&lock);
		sem_post(&detached_done);
		return NULL;
	}
	if (id % 2)
		pthread_exit((void *)(uintptr_t)r);
	return (void *)(uintptr_t)r;
}

int main(void)
{
	uint64_t sum = 0;
	unsigned created = 0, detached = 0;

	sem_init(&detached_done, 0, 0);
	for (int w = 0; w < WAVES; w++) {
		pthread_t t[WAVE];
		int joinable[WAVE];

		for (int i = 0; i < WAVE; i++) {
			uintptr_t id = (uintptr_t)(w * WAVE + i);

			if (pthread_create(&t[i], NULL, run, (void *)id) != 0) {
				printf("pthread_create failed\n");
				return 1;
			}
			created++;
			joinable[i] = id % 10 != 0;
			if (!joinable[i]) {
				pthread_detach(t[i]);
				detached++;
			}
		}
		for (int i = 0; i < WAVE; i++) {
			void *r;

			if (joinable[i] && pthread_join(t[i], &r) == 0)
				sum += (uintptr_t)r;
		}
	}
	for (unsigned i = 0; i < detached; i++)
		sem_wait(&detached_done);
	printf("threads %u (%u detached), sum %llu\n", created, detached,
	       (unsigned long long)(sum + detached_sum));
	return 0;
}
