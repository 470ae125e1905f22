/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that uses SIGPROF itself (its own handler driven by
 * setitimer(ITIMER_PROF), blocking and unblocking it, replacing and querying
 * the disposition) and recovers from deliberate SIGSEGVs with siglongjmp.
 * lever samples with SIGPROF too, so under lever all of this must behave as
 * it does bare. Prints one line per check and OK.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <lever.h>

static volatile sig_atomic_t ticks;
static volatile sig_atomic_t info_ticks;
static sigjmp_buf recover;
static int *volatile null_pointer;
static volatile uint64_t sink;

static void on_prof(int sig)
{
	(void)sig;
	ticks++;
}

static void on_prof_info(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	if (si && uctx)
		info_ticks++;
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)si;
	(void)uctx;
	siglongjmp(recover, 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burn CPU until cond() holds or ten seconds pass. */
static int spin_until(int (*cond)(void))
{
	double end = now() + 10;
	uint64_t x = 1;

	while (!cond() && now() < end) {
		for (int i = 0; i < 10000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
		LEVER_PROGRESS;
	}
	sink = x;
	return cond();
}

static int enough_ticks(void)
{
	return ticks >= 20;
}

static int enough_info_ticks(void)
{
	return info_ticks >= 5;
}

static void spin_cpu_ms(double ms)
{
	struct timespec ts;
	double start, t;
	uint64_t x = 1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	start = (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
		LEVER_PROGRESS;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		t = (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	} while (t - start < ms);
	sink = x;
}

static void set_timer(long usec)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = usec;
	it.it_value.tv_usec = usec;
	setitimer(ITIMER_PROF, &it, NULL);
}

int main(void)
{
	struct sigaction sa, old;
	sigset_t set, cur;
	sig_atomic_t before;
	volatile int recovered = 0;

	/* 1. our own SIGPROF handler, from the default disposition */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old);
	printf("previous SIGPROF action was the default: %s\n",
	       old.sa_handler == SIG_DFL ? "yes" : "no");
	set_timer(1000);
	printf("itimer ticks reach our handler: %s\n", spin_until(enough_ticks) ? "yes" : "no");

	/* 2. blocking it holds ticks back; unblocking delivers the pending one */
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	sigprocmask(SIG_BLOCK, &set, NULL);
	before = ticks;
	spin_cpu_ms(30);
	printf("handler ran while blocked: %s\n", ticks != before ? "yes" : "no");
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("mask reports SIGPROF blocked: %s\n", sigismember(&cur, SIGPROF) ? "yes" : "no");
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	printf("pending tick delivered on unblock: %s\n", ticks == before + 1 ? "yes" : "no");

	/* 3. replace it with an SA_SIGINFO handler; query; signal() returns the old one */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof_info;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old);
	printf("sigaction returned the previous handler: %s\n",
	       old.sa_handler == on_prof ? "yes" : "no");
	printf("SA_SIGINFO handler gets info and context: %s\n",
	       spin_until(enough_info_ticks) ? "yes" : "no");
	set_timer(0);
	printf("signal() returned the previous handler: %s\n",
	       (void *)signal(SIGPROF, SIG_IGN) == (void *)on_prof_info ? "yes" : "no");
	sigaction(SIGPROF, NULL, &old);
	printf("disposition is now SIG_IGN: %s\n", old.sa_handler == SIG_IGN ? "yes" : "no");
	raise(SIGPROF); /* ignored */

	/* 4. SIGSEGV handler with siglongjmp, several times; its mask names SIGPROF */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGPROF);
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(recover, 1) == 0) {
			*null_pointer = i;
			printf("no fault?\n");
		} else {
			recovered++;
		}
	}
	printf("recovered from SIGSEGV: %d times\n", recovered);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("SIGSEGV unblocked after siglongjmp: %s\n",
	       sigismember(&cur, SIGSEGV) ? "no" : "yes");
	printf("OK\n");
	return 0;
}
