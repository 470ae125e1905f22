/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A worker thread calls exit(0) while other threads are busy (computing,
 * taking a contended mutex, waiting on a condition variable) and the main
 * thread is blocked in pthread_join. It prints its result first.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lever.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t compute(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void *spinner(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		sink += compute(20000);
		pthread_mutex_unlock(&lock);
		LEVER_PROGRESS;
	}
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

static void *finisher(void *arg)
{
	(void)arg;
	printf("result: %016llx\n", (unsigned long long)compute(100000000));
	fflush(stdout);
	exit(0);
}

int main(void)
{
	pthread_t s[2], w, f;

	pthread_create(&s[0], NULL, spinner, NULL);
	pthread_create(&s[1], NULL, spinner, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&f, NULL, finisher, NULL);
	pthread_join(f, NULL);
	printf("not reached\n");
	return 1;
}
