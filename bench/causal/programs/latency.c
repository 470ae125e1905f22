/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (e) A latency-measured request queue. Two client threads each send a
 * request, wait for its answer, then think for 1 unit (closed loop). One
 * server thread takes requests in order from a queue and serves each: 0.5
 * units of parsing, then 1.5 units on the chosen line. COZ_BEGIN/COZ_END mark
 * each request's life, so a profiler predicts the change of the mean latency
 * (Little's law) rather than of throughput. The program measures the mean
 * latency itself (clock before sending, after the answer).
 */
#include <pthread.h>
#include <stdbool.h>

#include "common.h"

#define CLIENTS 2

static struct bench_args args = {.rounds = 1500, .unit = 240000, .scale = 1.0};

struct client {
	bool waiting, answered;
	pthread_cond_t answer;
	double latency_sum;
};

static struct client clients[CLIENTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t request_ready = PTHREAD_COND_INITIALIZER;
static int queue[CLIENTS], queued; /* FIFO of client ids, at most one request per client */
static bool finished;

static void send_and_wait(int id)
{
	struct client *c = &clients[id];

	pthread_mutex_lock(&lock);
	c->answered = false;
	queue[queued++] = id;
	pthread_cond_signal(&request_ready);
	while (!c->answered)
		pthread_cond_wait(&c->answer, &lock);
	pthread_mutex_unlock(&lock);
}

/* clang-format off */
static void *client(void *arg)
{
	int id = (int)(long)arg;

	for (long i = id; i < args.rounds; i += CLIENTS) {
		double t0 = bench_now();

		COZ_BEGIN("request");
		send_and_wait(id);
		COZ_END("request");
		clients[id].latency_sum += bench_now() - t0;
		SPIN(bench_units(&args, 1)); /* LINE:think */
	}
	return NULL;
}

static void serve(void)
{
	SPIN(bench_units(&args, 0.5)); /* LINE:parse */
	SPIN(bench_scaled(&args, 1.5)); /* LINE:chosen */
}
/* clang-format on */

static void *server(void *unused)
{
	for (;;) {
		int id;

		pthread_mutex_lock(&lock);
		while (!queued && !finished)
			pthread_cond_wait(&request_ready, &lock);
		if (!queued) {
			pthread_mutex_unlock(&lock);
			return unused;
		}
		id = queue[0];
		for (int i = 1; i < queued; i++)
			queue[i - 1] = queue[i];
		queued--;
		pthread_mutex_unlock(&lock);

		serve();

		pthread_mutex_lock(&lock);
		clients[id].answered = true;
		pthread_cond_signal(&clients[id].answer);
		pthread_mutex_unlock(&lock);
	}
}

int main(int argc, char **argv)
{
	int status = bench_parse(argc, argv, &args);
	pthread_t s, c[CLIENTS];
	double start, latency = 0;

	if (status)
		return status;
	for (int i = 0; i < CLIENTS; i++)
		pthread_cond_init(&clients[i].answer, NULL);
	start = bench_now();
	if (pthread_create(&s, NULL, server, NULL))
		return 1;
	for (long i = 0; i < CLIENTS; i++)
		if (pthread_create(&c[i], NULL, client, (void *)i))
			return 1;
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(c[i], NULL);
		latency += clients[i].latency_sum;
	}
	pthread_mutex_lock(&lock);
	finished = true;
	pthread_cond_signal(&request_ready);
	pthread_mutex_unlock(&lock);
	pthread_join(s, NULL);
	bench_report("latency", args.rounds, bench_now() - start,
		     args.rounds ? latency / (double)args.rounds : 0);
	return 0;
}
