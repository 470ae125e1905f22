/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Producers and consumers over a bounded queue guarded by a mutex and two
 * condition variables. Consumers do the heavy work (work(), the line marked
 * LINE:work is what causal_sync_accounting speeds up) and mark progress per
 * item. Prints a checksum that does not depend on scheduling.
 *
 * Usage: prodcons [ITEMS_PER_PRODUCER [WORK]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lever.h>

#define PRODUCERS 2
#define CONSUMERS 2
#define QUEUE_CAP 16
#define DONE	  UINT64_MAX

static unsigned items_per_producer = 3000;
static unsigned work_iters = 60000;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint64_t items[QUEUE_CAP];
	unsigned head, count;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .not_empty = PTHREAD_COND_INITIALIZER,
       .not_full = PTHREAD_COND_INITIALIZER};

static uint64_t checksum;
static unsigned consumed;
static pthread_mutex_t result_lock = PTHREAD_MUTEX_INITIALIZER;

static void put(uint64_t v)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == QUEUE_CAP)
		pthread_cond_wait(&q.not_full, &q.lock);
	q.items[(q.head + q.count++) % QUEUE_CAP] = v;
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
}

static uint64_t take(void)
{
	uint64_t v;

	pthread_mutex_lock(&q.lock);
	while (q.count == 0)
		pthread_cond_wait(&q.not_empty, &q.lock);
	v = q.items[q.head];
	q.head = (q.head + 1) % QUEUE_CAP;
	q.count--;
	pthread_cond_signal(&q.not_full);
	pthread_mutex_unlock(&q.lock);
	return v;
}

__attribute__((noinline)) static uint64_t work(uint64_t x)
{
	uint64_t acc = x;

	for (unsigned i = 0; i < work_iters; i++)
		acc = acc * 6364136223846793005ULL + i; /* LINE:work */
	return acc;
}

static void *producer(void *arg)
{
	uint64_t id = (uintptr_t)arg;

	for (uint64_t i = 0; i < items_per_producer; i++)
		put((id << 32 | i) * 0x9e3779b97f4a7c15ULL >> 1);
	return NULL;
}

static void *consumer(void *arg)
{
	uint64_t sum = 0;
	unsigned n = 0;
	uint64_t v;

	(void)arg;
	while ((v = take()) != DONE) {
		sum += work(v);
		n++;
		LEVER_PROGRESS;
	}
	pthread_mutex_lock(&result_lock);
	checksum += sum;
	consumed += n;
	pthread_mutex_unlock(&result_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p[PRODUCERS], c[CONSUMERS];

	if (argc > 1)
		items_per_producer = (unsigned)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		work_iters = (unsigned)strtoul(argv[2], NULL, 10);
	for (uintptr_t i = 0; i < CONSUMERS; i++)
		pthread_create(&c[i], NULL, consumer, (void *)i);
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, (void *)i);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < CONSUMERS; i++)
		put(DONE);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	printf("consumed %u items, checksum %016llx\n", consumed, (unsigned long long)checksum);
	return 0;
}
