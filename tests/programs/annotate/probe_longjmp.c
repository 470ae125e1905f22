// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_exits.sh): calls left by
 * longjmp and by siglongjmp out of a signal handler never return; the calls
 * around them must still be recorded, with the right parents.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static jmp_buf jb;
static sigjmp_buf sjb;

NOINLINE void thrower(int depth)
{
	if (depth < 0)
		return;
	if (depth == 0)
		longjmp(jb, 1);
	thrower(depth - 1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

NOINLINE int catcher(int i)
{
	volatile int keep = i;

	if (setjmp(jb) == 0) {
		thrower(3);
		return -1;
	}
	return keep;
}

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(sjb, 1);
}

NOINLINE void raiser(int depth)
{
	if (depth == 0)
		raise(SIGUSR1);
	else
		raiser(depth - 1);
	__asm__ volatile("" ::: "memory");
}

NOINLINE int sigcatcher(int i)
{
	volatile int keep = i;

	if (sigsetjmp(sjb, 1) == 0) {
		raiser(2);
		return -1;
	}
	return 2 * keep;
}

NOINLINE int after(int x)
{
	return x * 3;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long sum = 0;

	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < rounds; i++)
		sum += catcher(i) + sigcatcher(i) + after(i);
	printf("sum %ld\n", sum);
	return 0;
}
