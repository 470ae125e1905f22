/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Every other blocking primitive lever interposes, with results that do not
 * depend on scheduling: read-write locks (plain, timed, clock), barriers,
 * semaphores (post/wait, timed and clock waits that time out), timed and
 * clock mutex locks, timed and clock condition waits, timed and try joins,
 * and signals: sigwait/sigwaitinfo/sigtimedwait fed by pthread_kill,
 * pthread_sigqueue, kill and tgkill, and sigsuspend woken by a handler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <lever.h>

#define THREADS 4

static uint64_t work(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* ---- read-write locks ---- */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static uint64_t rw_value, rw_reads;

static void *rw_thread(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint64_t seen = 0;

	for (int i = 0; i < 2000; i++) {
		struct timespec ts;

		switch ((i + id) % 6) {
		case 0:
			pthread_rwlock_wrlock(&rw);
			break;
		case 1:
			ts = in_ms(CLOCK_REALTIME, 10000);
			if (pthread_rwlock_timedwrlock(&rw, &ts) != 0)
				continue;
			break;
		case 2:
			ts = in_ms(CLOCK_MONOTONIC, 10000);
			if (pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &ts) != 0)
				continue;
			break;
		case 3:
			pthread_rwlock_rdlock(&rw);
			seen += rw_value != 0;
			pthread_rwlock_unlock(&rw);
			continue;
		case 4:
			ts = in_ms(CLOCK_REALTIME, 10000);
			if (pthread_rwlock_timedrdlock(&rw, &ts) == 0) {
				seen += rw_value != 0;
				pthread_rwlock_unlock(&rw);
			}
			continue;
		default:
			ts = in_ms(CLOCK_MONOTONIC, 10000);
			if (pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &ts) == 0) {
				seen += rw_value != 0;
				pthread_rwlock_unlock(&rw);
			}
			continue;
		}
		LEVER_PROGRESS;
		rw_value += work(i, 5000) % 7 + 1;
		rw_reads++;
		pthread_rwlock_unlock(&rw);
	}
	(void)seen;
	return NULL;
}

static void test_rwlock(void)
{
	pthread_t t[THREADS];
	uint64_t expect = 0;

	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, rw_thread, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (uintptr_t id = 0; id < THREADS; id++)
		for (int i = 0; i < 2000; i++)
			if ((i + id) % 6 < 3)
				expect += work(i, 5000) % 7 + 1;
	printf("rwlock: %llu writes, value %s\n", (unsigned long long)rw_reads,
	       rw_value == expect ? "as expected" : "WRONG");
}

/* ---- barriers ---- */
static pthread_barrier_t barrier;
static uint64_t partial[THREADS], barrier_total;
static int serial_count;

static void *barrier_thread(void *arg)
{
	uintptr_t id = (uintptr_t)arg;

	for (int round = 0; round < 200; round++) {
		partial[id] = work(round * THREADS + id, 50000 * (1 + (int)id)) >> 48;
		LEVER_PROGRESS;
		if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
			for (int i = 0; i < THREADS; i++)
				barrier_total += partial[i];
			serial_count++;
		}
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

static void test_barrier(void)
{
	pthread_t t[THREADS];

	pthread_barrier_init(&barrier, NULL, THREADS);
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, barrier_thread, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	printf("barrier: %d serial rounds, total %llu\n", serial_count,
	       (unsigned long long)barrier_total);
}

/* ---- semaphores: ping-pong, then waits that time out ---- */
static sem_t ping, pong;
static uint64_t pingpong_sum;

static void *pong_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		if (i % 3 == 0) {
			sem_wait(&ping);
		} else if (i % 3 == 1) {
			struct timespec ts = in_ms(CLOCK_REALTIME, 10000);

			while (sem_timedwait(&ping, &ts) != 0 && errno == EINTR)
				;
		} else {
			struct timespec ts = in_ms(CLOCK_MONOTONIC, 10000);

			while (sem_clockwait(&ping, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR)
				;
		}
		pingpong_sum += work(i, 20000) & 0xff;
		LEVER_PROGRESS;
		sem_post(&pong);
	}
	return NULL;
}

static void test_semaphores(void)
{
	pthread_t t;
	struct timespec ts;
	int r1, e1, r2, e2;

	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	pthread_create(&t, NULL, pong_thread, NULL);
	for (int i = 0; i < 2000; i++) {
		sem_post(&ping);
		sem_wait(&pong);
	}
	pthread_join(t, NULL);
	ts = in_ms(CLOCK_REALTIME, 20);
	r1 = sem_timedwait(&ping, &ts);
	e1 = errno;
	ts = in_ms(CLOCK_MONOTONIC, 20);
	r2 = sem_clockwait(&ping, CLOCK_MONOTONIC, &ts);
	e2 = errno;
	printf("semaphores: ping-pong sum %llu, timedwait %s, clockwait %s\n",
	       (unsigned long long)pingpong_sum,
	       r1 == -1 && e1 == ETIMEDOUT ? "timed out" : "WRONG",
	       r2 == -1 && e2 == ETIMEDOUT ? "timed out" : "WRONG");
}

/* ---- timed mutexes and condition variables ---- */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t holding, release_it;
static int cv_ready;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	sem_post(&holding);
	sem_wait(&release_it);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&cv_lock);
		while (cv_ready)
			pthread_cond_wait(&cv, &cv_lock);
		cv_ready = 1;
		LEVER_PROGRESS;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&cv_lock);
	}
	return NULL;
}

static void test_timed_locks(void)
{
	pthread_t t, s;
	struct timespec ts;
	int timedlock, clocklock, timedwait, clockwait, after;
	int received = 0;

	sem_init(&holding, 0, 0);
	sem_init(&release_it, 0, 0);
	pthread_create(&t, NULL, holder, NULL);
	sem_wait(&holding);
	ts = in_ms(CLOCK_REALTIME, 20);
	timedlock = pthread_mutex_timedlock(&held, &ts);
	ts = in_ms(CLOCK_MONOTONIC, 20);
	clocklock = pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &ts);
	sem_post(&release_it);
	ts = in_ms(CLOCK_MONOTONIC, 10000);
	after = pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &ts);
	pthread_mutex_unlock(&held);
	pthread_join(t, NULL);

	pthread_mutex_lock(&cv_lock);
	ts = in_ms(CLOCK_REALTIME, 20);
	timedwait = pthread_cond_timedwait(&cv, &cv_lock, &ts);
	ts = in_ms(CLOCK_MONOTONIC, 20);
	clockwait = pthread_cond_clockwait(&cv, &cv_lock, CLOCK_MONOTONIC, &ts);
	pthread_mutex_unlock(&cv_lock);

	pthread_create(&s, NULL, signaller, NULL);
	pthread_mutex_lock(&cv_lock);
	while (received < 500) {
		ts = in_ms(CLOCK_MONOTONIC, 10000);
		while (!cv_ready)
			if (received % 2)
				pthread_cond_clockwait(&cv, &cv_lock, CLOCK_MONOTONIC, &ts);
			else
				pthread_cond_timedwait(&cv, &cv_lock, &ts);
		cv_ready = 0;
		received++;
		pthread_cond_signal(&cv);
	}
	pthread_mutex_unlock(&cv_lock);
	pthread_join(s, NULL);
	printf("timed locks: timedlock %s, clocklock %s, then %s; cond timedwait %s, "
	       "clockwait %s; %d handoffs\n",
	       timedlock == ETIMEDOUT ? "timed out" : "WRONG",
	       clocklock == ETIMEDOUT ? "timed out" : "WRONG", after == 0 ? "locked" : "WRONG",
	       timedwait == ETIMEDOUT ? "timed out" : "WRONG",
	       clockwait == ETIMEDOUT ? "timed out" : "WRONG", received);
}

/* ---- joins ---- */
static void *sleeper(void *arg)
{
	sem_wait((sem_t *)arg);
	return (void *)(uintptr_t)42;
}

static void test_joins(void)
{
	pthread_t t;
	sem_t go;
	struct timespec ts;
	void *r = NULL;
	int tryj, timedj, clockj, final;

	sem_init(&go, 0, 0);
	pthread_create(&t, NULL, sleeper, &go);
	tryj = pthread_tryjoin_np(t, &r);
	ts = in_ms(CLOCK_REALTIME, 20);
	timedj = pthread_timedjoin_np(t, &r, &ts);
	ts = in_ms(CLOCK_MONOTONIC, 20);
	clockj = pthread_clockjoin_np(t, &r, CLOCK_MONOTONIC, &ts);
	sem_post(&go);
	ts = in_ms(CLOCK_REALTIME, 10000);
	final = pthread_timedjoin_np(t, &r, &ts);
	printf("joins: tryjoin %s, timedjoin %s, clockjoin %s, then %s with %d\n",
	       tryj == EBUSY ? "busy" : "WRONG", timedj == ETIMEDOUT ? "timed out" : "WRONG",
	       clockj == ETIMEDOUT ? "timed out" : "WRONG", final == 0 ? "joined" : "WRONG",
	       (int)(uintptr_t)r);
}

/* ---- signals ---- */
static sem_t sig_ack;
static volatile sig_atomic_t usr2_seen;

static void *sig_waiter(void *arg)
{
	sigset_t set;
	int got = 0, by_info = 0, values = 0, timeouts = 0;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (int i = 0; i < 400; i++) {
		siginfo_t info;
		struct timespec ts = {10, 0};
		int sig;

		switch (i % 3) {
		case 0:
			if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
				got++;
			break;
		case 1:
			if (sigwaitinfo(&set, &info) == SIGUSR1) {
				got++;
				by_info += info.si_pid == getpid();
				values += info.si_code == SI_QUEUE && info.si_value.sival_int == i;
			}
			break;
		default:
			if (sigtimedwait(&set, &info, &ts) == SIGUSR1)
				got++;
			break;
		}
		LEVER_PROGRESS;
		sem_post(&sig_ack);
	}
	{
		struct timespec ts = {0, 20000000};

		timeouts = sigtimedwait(&set, NULL, &ts) == -1 && errno == EAGAIN;
	}
	printf("signals: %d received by sigwait*, %d from this process, %d queued values, "
	       "sigtimedwait %s\n",
	       got, by_info, values, timeouts ? "timed out" : "WRONG");
	return NULL;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static void *usr2_sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++) {
		sem_wait(&sig_ack);
		kill(getpid(), SIGUSR2);
	}
	return NULL;
}

static void test_signals(void)
{
	pthread_t w, s;
	sigset_t set, old, during;
	struct sigaction sa;
	int wakeups = 0;

	/* Block SIGUSR1/SIGUSR2 in every thread created from here on. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sem_init(&sig_ack, 0, 0);
	pthread_create(&w, NULL, sig_waiter, NULL);
	for (int i = 0; i < 400; i++) {
		if (i % 3 == 1) {
			union sigval v = {.sival_int = i};

			pthread_sigqueue(w, SIGUSR1, v);
		} else if (i % 5 == 0) {
			syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
			/* pending on this thread: move it to the waiter */
			sigset_t one;
			int sig;

			sigemptyset(&one);
			sigaddset(&one, SIGUSR1);
			sigwait(&one, &sig);
			pthread_kill(w, SIGUSR1);
		} else {
			pthread_kill(w, SIGUSR1);
		}
		sem_wait(&sig_ack);
	}
	pthread_join(w, NULL);

	/* sigsuspend: woken by a handler for a signal another thread sends */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	pthread_create(&s, NULL, usr2_sender, NULL);
	during = old;
	sigdelset(&during, SIGUSR2);
	for (int i = 0; i < 50; i++) {
		sig_atomic_t before = usr2_seen;

		sem_post(&sig_ack);
		while (usr2_seen == before)
			sigsuspend(&during);
		wakeups++;
	}
	pthread_join(s, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	printf("sigsuspend: %d wake-ups by a handler\n", wakeups);
}

int main(void)
{
	test_rwlock();
	test_barrier();
	test_semaphores();
	test_timed_locks();
	test_joins();
	test_signals();
	return 0;
}
