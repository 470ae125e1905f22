/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Sleeps that must not end early under lever. nanosleep, clock_nanosleep and
 * usleep are never restarted after a signal handler: without care, lever's
 * own signals (the end-of-experiment catch-up request, the perf sampler's
 * batch signal) would end them with EINTR in a program that never sees one
 * bare. One thread computes (so that experiments run and end), another sleeps
 * through every call and counts early ends. Then the program installs a
 * handler of its own and is sent a signal in the middle of a sleep: that
 * EINTR is the program's and must reach it. Prints the counts and OK.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lever.h>

#define ROUNDS	 25
#define SLEEP_US 3000

static atomic_int sleeping_done;
static atomic_int in_long_sleep;
static volatile uint64_t sink;
static volatile sig_atomic_t usr1_seen;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *compute(void *arg)
{
	(void)arg;
	while (!atomic_load(&sleeping_done)) {
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * 7; /* a line for the experiments */
		LEVER_PROGRESS;
	}
	return NULL;
}

/* Counts a sleep that failed or returned before the time asked. */
static void check(const char *what, int failed, uint64_t start, uint64_t ns, unsigned *early)
{
	if (failed || now_ns() - start < ns) {
		(*early)++;
		if (*early == 1)
			fprintf(stderr, "%s ended early (%s)\n", what,
				failed ? strerror(errno) : "short");
	}
}

static unsigned sleep_every_way(void)
{
	struct timespec rel = {0, SLEEP_US * 1000L}, abs;
	unsigned early = 0;
	uint64_t t;
	int r;

	for (int i = 0; i < ROUNDS; i++) {
		t = now_ns();
		check("nanosleep", nanosleep(&rel, NULL) != 0, t, SLEEP_US * 1000u, &early);
		t = now_ns();
		r = clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
		errno = r;
		check("clock_nanosleep", r != 0, t, SLEEP_US * 1000u, &early);
		t = now_ns();
		clock_gettime(CLOCK_MONOTONIC, &abs);
		abs.tv_nsec += SLEEP_US * 1000L;
		if (abs.tv_nsec >= 1000000000L) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000L;
		}
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		errno = r;
		check("clock_nanosleep(TIMER_ABSTIME)", r != 0, t, SLEEP_US * 1000u, &early);
		t = now_ns();
		check("usleep", usleep(SLEEP_US) != 0, t, SLEEP_US * 1000u, &early);
	}
	t = now_ns();
	check("sleep", sleep(1) != 0, t, 1000000000u, &early);
	return early;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/*
 * The program's own signal ends its sleep, as it does bare. (Once the
 * program handles a signal, lever cannot tell its EINTR from the program's
 * and passes every one on: a program with handlers expects EINTR anyway, so
 * this one sleeps on until its own handler has run.)
 */
static int own_signal_interrupts(void)
{
	struct sigaction sa;
	struct timespec want = {2, 0}, left = {0, 0};
	int r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	atomic_store(&in_long_sleep, 1);
	do {
		r = nanosleep(&want, &left);
		want = left;
	} while (r != 0 && errno == EINTR && !usr1_seen);
	atomic_store(&in_long_sleep, 0);
	return r != 0 && errno == EINTR && usr1_seen && left.tv_sec + left.tv_nsec > 0;
}

static void *send_usr1(void *arg)
{
	pthread_t sleeper = *(pthread_t *)arg;
	struct timespec pause = {0, 50 * 1000000L};

	while (!atomic_load(&in_long_sleep))
		nanosleep(&pause, NULL);
	/* again until it woke: a first signal may land before the sleep began */
	while (atomic_load(&in_long_sleep)) {
		nanosleep(&pause, NULL);
		pthread_kill(sleeper, SIGUSR1);
	}
	return NULL;
}

int main(void)
{
	pthread_t worker, sender, self = pthread_self();
	unsigned early;
	int own;

	pthread_create(&worker, NULL, compute, NULL);
	early = sleep_every_way();
	atomic_store(&sleeping_done, 1);
	pthread_join(worker, NULL);
	pthread_create(&sender, NULL, send_usr1, &self);
	own = own_signal_interrupts();
	pthread_join(sender, NULL);
	printf("sleeps ended early: %u\n", early);
	printf("own signal ended its sleep: %s\n", own ? "yes" : "no");
	if (early || !own)
		return 1;
	printf("OK\n");
	return 0;
}
