/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The producer-consumer program of the AMP chapter (dissertation Figure 6.1):
 * P producers each create N tasks, each taking the production time, and put
 * them on an unbounded queue (producers never block on it); C consumers take
 * tasks (blocking while the queue is empty) and run each for the execution
 * time. Production time = execution time = T by default.
 *
 *   prodcons [-p P] [-c C] [-n N] [-t T_US] [-P SCALE] [-C SCALE]
 *            [--produce=sleep|spin] [--consume=sleep|spin] [--no-arrival] [--shared]
 *
 * -P / -C scale the production / execution time: the real load changes that
 * AMP's predictions are compared with (-P 0.75 is 25% more load in the
 * dissertation's convention: the inter-arrival time shortened by 25%).
 * "sleep" work waits (a request arriving from the network; a service that
 * waits on I/O) so that the result does not depend on the number of cores;
 * "spin" work computes for the given thread CPU time so that the profiler can
 * sample it and speed it up. CPU time, not a calibrated iteration count: the
 * two vCPUs of our machines run the same loop at rates 1.7x apart, and a
 * thread that migrates between them would change the work's length.
 *
 * --no-arrival leaves the arrival point out; --shared has the producers also
 * run each task's work themselves (in the consumers' code) before adding it:
 * an arriving thread that processes requests, which AMP warns about. Both
 * exist for lever's tests.
 *
 * The arrival point is just before the task is added (as in the chapter),
 * and a progress point follows every finished task. Prints the tasks done
 * and the elapsed time and throughput.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "lever.h"

struct task {
	struct task *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct task *head, *tail;
	unsigned producers_left;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0};

static unsigned tasks_per_producer = 200;
static double work_ns = 2e6, produce_scale = 1.0, consume_scale = 1.0;
static int produce_spins, consume_spins; /* 0: sleep */
static int no_arrival, shared_work;
static volatile unsigned long sink;

static unsigned long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

static void wait_ns(double ns)
{
	struct timespec ts = {(time_t)(ns / 1e9), (long)(ns - (double)(time_t)(ns / 1e9) * 1e9)};

	if (ns > 0)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* Computing chunks between two reads of the thread's CPU clock (a system
 * call, ~1.5 us here): ~50 us of work, so that the clock reads stay a few
 * percent of the work and a task overshoots its time by less than 1%. */
#define CHUNK 131072

static unsigned long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

static void spin(double ns)
{
	unsigned long end = thread_cpu_ns() + (unsigned long)ns;

	while (thread_cpu_ns() < end)
		for (unsigned i = 0; i < CHUNK; i++)
			sink += i; /* LINE:spin */
}

static void run_task(struct task *t);

static void produce(void)
{
	double ns = work_ns * produce_scale;

	if (shared_work) {
		run_task(NULL);
		return;
	}
	if (produce_spins)
		spin(ns);
	else
		wait_ns(ns);
}

static void run_task(struct task *t)
{
	double ns = work_ns * consume_scale;

	if (consume_spins) {
		struct timespec now;
		unsigned long end = thread_cpu_ns() + (unsigned long)ns;

		/* one line, so that a line speedup covers all of the task's work
		 * (the clock read included: it is written out, not called) */
		/* clang-format off */
		while (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now), (unsigned long)now.tv_sec * 1000000000UL + (unsigned long)now.tv_nsec < end) for (unsigned i = 0; i < CHUNK; i++) sink += i; /* LINE:run */
		/* clang-format on */
	} else {
		wait_ns(ns);
	}
	free(t);
}

static void *producer(void *unused)
{
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	for (unsigned i = 0; i < tasks_per_producer; i++) {
		struct task *t;

		produce();
		t = calloc(1, sizeof(*t));
		if (!t)
			abort();
		if (!no_arrival)
			LEVER_ARRIVAL("task");
		pthread_mutex_lock(&queue.lock);
		if (queue.tail)
			queue.tail->next = t;
		else
			queue.head = t;
		queue.tail = t;
		pthread_cond_signal(&queue.ready);
		pthread_mutex_unlock(&queue.lock);
	}
	pthread_mutex_lock(&queue.lock);
	queue.producers_left--;
	pthread_cond_broadcast(&queue.ready);
	pthread_mutex_unlock(&queue.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	unsigned long *done = arg;

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	for (;;) {
		struct task *t;

		pthread_mutex_lock(&queue.lock);
		while (!queue.head && queue.producers_left)
			pthread_cond_wait(&queue.ready, &queue.lock);
		t = queue.head;
		if (t) {
			queue.head = t->next;
			if (!queue.head)
				queue.tail = NULL;
		}
		pthread_mutex_unlock(&queue.lock);
		if (!t)
			return NULL;
		run_task(t);
		LEVER_PROGRESS_NAMED("task done");
		(*done)++;
	}
}

static int usage(void)
{
	fprintf(stderr,
		"usage: prodcons [-p P] [-c C] [-n N] [-t T_US] [-P SCALE] [-C SCALE] "
		"[--produce=sleep|spin] [--consume=sleep|spin] [--no-arrival] [--shared]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned producers = 2, consumers = 2;
	pthread_t th[128];
	unsigned long done[64] = {0}, total = 0, t0, t1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-arrival"))
			no_arrival = 1;
		else if (!strcmp(a, "--shared"))
			shared_work = 1;
		else if (!strcmp(a, "--produce=spin") || !strcmp(a, "--produce=sleep"))
			produce_spins = !strcmp(a, "--produce=spin");
		else if (!strcmp(a, "--consume=spin") || !strcmp(a, "--consume=sleep"))
			consume_spins = !strcmp(a, "--consume=spin");
		else if (!v)
			return usage();
		else if (!strcmp(a, "-p"))
			producers = (unsigned)atoi(v), i++;
		else if (!strcmp(a, "-c"))
			consumers = (unsigned)atoi(v), i++;
		else if (!strcmp(a, "-n"))
			tasks_per_producer = (unsigned)atoi(v), i++;
		else if (!strcmp(a, "-t"))
			work_ns = atof(v) * 1e3, i++;
		else if (!strcmp(a, "-P"))
			produce_scale = atof(v), i++;
		else if (!strcmp(a, "-C"))
			consume_scale = atof(v), i++;
		else
			return usage();
	}
	if (!producers || producers > 64 || !consumers || consumers > 64 || work_ns < 0 ||
	    produce_scale < 0 || consume_scale < 0)
		return usage();
	queue.producers_left = producers;
	t0 = now_ns();
	for (unsigned i = 0; i < consumers; i++)
		pthread_create(&th[i], NULL, consumer, &done[i]);
	for (unsigned i = 0; i < producers; i++)
		pthread_create(&th[consumers + i], NULL, producer, NULL);
	for (unsigned i = 0; i < consumers + producers; i++)
		pthread_join(th[i], NULL);
	t1 = now_ns();
	for (unsigned i = 0; i < consumers; i++)
		total += done[i];
	printf("tasks=%lu elapsed_ns=%lu throughput=%.1f/s\n", total, t1 - t0,
	       (double)total * 1e9 / (double)(t1 - t0));
	return total == (unsigned long)producers * tasks_per_producer ? 0 : 1;
}
