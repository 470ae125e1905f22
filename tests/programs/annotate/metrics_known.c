/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Functions whose metrics are known (spec/freud.md §4.2.2), for
 * tests/e2e/annotate_metrics.sh: `lever annotate record --metrics` of all
 * eight through liblever-annotate.so must find in each call at least what
 * the function did (lower bounds where the machine's load can only add).
 *
 *   alloc_bytes(n)      malloc(n) then free: mem = n exactly
 *   hold_lock(ms)       holds a mutex ms milliseconds: hold >= ms
 *   wait_lock(ms)       blocks on a mutex another thread keeps ms more
 *                       milliseconds after it sees us waiting: wait >= ms
 *   spin_cpu(ms)        burns ms of thread CPU time: cpu >= ms
 *   touch_pages(n)      touches n new pages: pfaults >= n
 *   sleep_often(n)      n 1 ms sleeps: cs >= n
 *
 * Each is called for several arguments (argv[1] rounds); errno and return
 * values are checked here too, so the run fails if interposition changed
 * what the program sees. Linked with own_malloc.c (metrics_own_malloc), the
 * program brings its own malloc, which the runtime must say it cannot see.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TESTED __attribute__((noipa))

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int failures;

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "metrics_known: %s\n", what);
		failures++;
	}
}

TESTED void alloc_bytes(int n)
{
	void *volatile p;

	errno = 1234;
	p = malloc((size_t)n);
	expect(p != NULL, "malloc failed");
	expect(errno == 1234, "malloc changed errno");
	free(p);
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

TESTED void hold_lock(int ms)
{
	expect(pthread_mutex_lock(&m) == 0, "lock failed");
	sleep_ms(ms);
	errno = 4321;
	expect(pthread_mutex_unlock(&m) == 0, "unlock failed");
	expect(errno == 4321, "unlock changed errno");
}

struct holder {
	int ms;
	atomic_int locked;
};

/* Takes m, waits until the main thread blocks on it, keeps it ms more. */
static void *hold_while_waited(void *arg)
{
	struct holder *h = arg;

	pthread_mutex_lock(&m);
	atomic_store(&h->locked, 1);
	while (__atomic_load_n(&m.__data.__lock, __ATOMIC_ACQUIRE) != 2)
		sleep_ms(1);
	sleep_ms(h->ms);
	pthread_mutex_unlock(&m);
	return NULL;
}

TESTED void wait_lock(int ms)
{
	expect(pthread_mutex_lock(&m) == 0, "contended lock failed");
	expect(pthread_mutex_unlock(&m) == 0, "unlock failed");
}

TESTED void spin_cpu(int ms)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	volatile uint64_t n = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < (uint64_t)ms * 1000000)
		n++;
}

TESTED void touch_pages(int n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	expect(p != MAP_FAILED, "mmap failed");
	madvise(p, (size_t)n * page, MADV_NOHUGEPAGE);
	for (int i = 0; i < n; i++)
		p[(size_t)i * page] = 1;
	munmap(p, (size_t)n * page);
}

TESTED void sleep_often(int n)
{
	for (int i = 0; i < n; i++)
		sleep_ms(1);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;

	for (int r = 1; r <= rounds; r++) {
		struct holder h = {.ms = 5 * r};
		pthread_t t;

		alloc_bytes(1000 * r);
		hold_lock(5 * r);
		pthread_create(&t, NULL, hold_while_waited, &h);
		while (!atomic_load(&h.locked))
			sleep_ms(1);
		wait_lock(5 * r);
		pthread_join(t, NULL);
		spin_cpu(5 * r);
		touch_pages(16 * r);
		sleep_often(3 * r);
	}
	return failures ? 1 : 0;
}
