// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_exits.sh): a signal handler
 * that runs a probed function, both synchronously (raise inside a probed
 * call) and asynchronously (an interval timer firing anywhere, probes
 * included). Prints how many times the handler ran its function.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t handled;
static volatile long handler_runs; /* also makes in_handler long enough to patch live */

NOINLINE int in_handler(int x)
{
	/* one instruction: exact even when a second signal nests in the first handler */
	__atomic_fetch_add(&handler_runs, 1, __ATOMIC_RELAXED);
	return x + 1;
}

static void on_signal(int sig)
{
	handled = in_handler(handled);
	(void)sig;
}

NOINLINE long work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	if (n % 97 == 0)
		raise(SIGUSR1);
	return s;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000, sum = 0;
	struct itimerval it = {{0, 200}, {0, 200}};
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < rounds; i++)
		sum += work(i % 1000);
	it = (struct itimerval){0};
	setitimer(ITIMER_REAL, &it, NULL);
	printf("sum %ld handled %d runs %ld\n", sum, (int)handled, handler_runs);
	return 0;
}
