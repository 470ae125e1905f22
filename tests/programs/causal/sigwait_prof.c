/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that collects its own SIGPROF (setitimer(ITIMER_PROF)) with the
 * sigwait family in one thread while other threads, which block SIGPROF as
 * the collector does, burn the CPU time that makes the timer expire (issue
 * 14, point 4). ITIMER_PROF's signal is sent to the process: the kernel keeps
 * it pending until a thread takes it, so bare the collector receives every
 * one it waits for. lever also samples with SIGPROF and keeps the signal
 * deliverable in every thread, so each of the program's signals lands in
 * whichever thread is running: lever must hand it to the thread that waits.
 * Then the program checks that sigpending reports a SIGPROF that is pending
 * for the process. Prints what it received and OK.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include <lever.h>

#define WORKERS	      2
#define TIMER_MS      10
#define WORKER_CPU_MS 300

static atomic_int workers_done;
static volatile uint64_t sink;

static uint64_t thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Burns a fixed amount of CPU time: the timer expires every TIMER_MS of it. */
static void *burn(void *arg)
{
	uint64_t x = (uintptr_t)arg + 1;

	while (thread_cpu_ms() < WORKER_CPU_MS) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sink = x;
		LEVER_PROGRESS;
	}
	atomic_fetch_add(&workers_done, 1);
	return NULL;
}

static void start_timer(long ms)
{
	struct itimerval it = {{0, ms * 1000}, {0, ms * 1000}};

	setitimer(ITIMER_PROF, &it, NULL);
}

/* The timer expires while every thread blocks SIGPROF: sigpending must show it. */
static int pending_seen(const sigset_t *prof)
{
	struct timespec tick = {0, 1000000L};
	sigset_t pending;
	int seen = 0, sig;

	for (int i = 0; i < 2000 && !seen; i++) {
		nanosleep(&tick, NULL);
		sigpending(&pending);
		seen = sigismember(&pending, SIGPROF) == 1;
	}
	if (seen)
		sigwait(prof, &sig);
	return seen;
}

/*
 * The first signals with sigwait and sigwaitinfo (the workers are far from
 * done), then with sigtimedwait until every worker is done. Expirations that
 * come while one is still pending merge into it (standard signals do not
 * queue), so on a loaded machine some are lost bare too.
 */
static int collect(const sigset_t *prof, int *seen)
{
	struct timespec bound = {0, 100 * 1000000L};
	siginfo_t info;
	int received = 0, sig;

	for (int i = 0; i < 3; i++)
		if (sigwait(prof, &sig) == 0 && sig == SIGPROF)
			received++;
	for (int i = 0; i < 2; i++)
		if (sigwaitinfo(prof, &info) == SIGPROF)
			received++;
	*seen = pending_seen(prof);
	while (atomic_load(&workers_done) < WORKERS)
		if (sigtimedwait(prof, &info, &bound) == SIGPROF)
			received++;
	return received;
}

int main(void)
{
	pthread_t workers[WORKERS];
	sigset_t prof;
	int received, expirations, seen;

	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	/* blocked before the threads start: they inherit it */
	pthread_sigmask(SIG_BLOCK, &prof, NULL);
	start_timer(TIMER_MS);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&workers[i], NULL, burn, (void *)(uintptr_t)i);
	received = collect(&prof, &seen);
	start_timer(0);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(workers[i], NULL);
	expirations = WORKERS * WORKER_CPU_MS / TIMER_MS;
	/* bare, nearly all; lever used to keep all but a few in the workers */
	if (received * 4 >= expirations) {
		printf("sigwait family: received at least a quarter of ~%d SIGPROF\n", expirations);
	} else {
		printf("sigwait family: received %d of ~%d SIGPROF\n", received, expirations);
	}
	printf("sigpending: %s\n", seen ? "SIGPROF pending" : "nothing pending");
	if (received * 4 < expirations || !seen)
		return 1;
	printf("OK\n");
	return 0;
}
