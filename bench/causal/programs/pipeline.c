/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (b) A three-stage pipeline with thread pools and bounded queues between the
 * stages: one reader thread makes items (1 unit each), a pool of two
 * transform threads works on them (4 units, the chosen line, then 1 unit),
 * one writer thread finishes them (1 unit) and visits the progress point.
 * Queues are mutex + condition variable rings of 8 slots.
 */
#include <pthread.h>
#include <stdbool.h>

#include "common.h"

#define QUEUE_SLOTS  8
#define TRANSFORMERS 2

static struct bench_args args = {.rounds = 1500, .unit = 240000, .scale = 1.0};

struct queue {
	long items[QUEUE_SLOTS];
	int head, count;
	bool closed;
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
};

static struct queue raw = {.lock = PTHREAD_MUTEX_INITIALIZER,
			   .not_empty = PTHREAD_COND_INITIALIZER,
			   .not_full = PTHREAD_COND_INITIALIZER};
static struct queue done = {.lock = PTHREAD_MUTEX_INITIALIZER,
			    .not_empty = PTHREAD_COND_INITIALIZER,
			    .not_full = PTHREAD_COND_INITIALIZER};

static void queue_put(struct queue *q, long item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QUEUE_SLOTS)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[(q->head + q->count++) % QUEUE_SLOTS] = item;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* The next item, or -1 once the queue is closed and empty. */
static long queue_get(struct queue *q)
{
	long item = -1;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->not_empty, &q->lock);
	if (q->count) {
		item = q->items[q->head];
		q->head = (q->head + 1) % QUEUE_SLOTS;
		q->count--;
		pthread_cond_signal(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
	return item;
}

static void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* clang-format off */
static void *reader(void *unused)
{
	for (long i = 0; i < args.rounds; i++) {
		SPIN(bench_units(&args, 1)); /* LINE:read */
		queue_put(&raw, i);
	}
	queue_close(&raw);
	return unused;
}

static void *transformer(void *unused)
{
	long item;

	while ((item = queue_get(&raw)) >= 0) {
		SPIN(bench_scaled(&args, 4)); /* LINE:chosen */
		SPIN(bench_units(&args, 1)); /* LINE:transform2 */
		queue_put(&done, item);
	}
	return unused;
}

static void *writer(void *unused)
{
	while (queue_get(&done) >= 0) {
		SPIN(bench_units(&args, 1)); /* LINE:write */
		COZ_PROGRESS_NAMED("item");
	}
	return unused;
}
/* clang-format on */

int main(int argc, char **argv)
{
	int status = bench_parse(argc, argv, &args);
	pthread_t r, w, t[TRANSFORMERS];
	double start;

	if (status)
		return status;
	start = bench_now();
	if (pthread_create(&r, NULL, reader, NULL) || pthread_create(&w, NULL, writer, NULL))
		return 1;
	for (int i = 0; i < TRANSFORMERS; i++)
		if (pthread_create(&t[i], NULL, transformer, NULL))
			return 1;
	pthread_join(r, NULL);
	for (int i = 0; i < TRANSFORMERS; i++)
		pthread_join(t[i], NULL);
	queue_close(&done);
	pthread_join(w, NULL);
	bench_report("pipeline", args.rounds, bench_now() - start, -1);
	return 0;
}
