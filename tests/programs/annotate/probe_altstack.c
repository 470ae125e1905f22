// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_exits.sh): a thread whose
 * signal handler runs a probed function on an alternate signal stack mapped
 * *above* the thread's own stack, while probed calls are in progress below.
 * Frames keyed by stack pointer must not take the handler's higher stack
 * pointer for an unwinding of the calls below it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline))
#define ALT_SIZE (256 << 10)

static void *alt; /* mapped before the thread's stack: at a higher address */
static volatile long handled;

NOINLINE long in_handler(long x)
{
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
	return x + 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	in_handler(sig);
}

NOINLINE long work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i;
	if (n % 10 == 0)
		raise(SIGUSR1); /* the handler runs on the alternate stack, above us */
	return s;
}

NOINLINE long outer(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += work(i);
	return s;
}

static void *thread_main(void *arg)
{
	stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE};
	long s;

	(void)arg;
	sigaltstack(&ss, NULL);
	s = outer(100);
	printf("alt stack %s the thread's stack; sum %ld handled %ld\n",
	       (char *)alt > (char *)&ss ? "above" : "below", s, handled);
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	pthread_t t;

	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	return 0;
}
