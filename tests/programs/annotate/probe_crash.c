// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_crash.sh): calls a probed
 * function N times, then dies as told: abort, SIGKILL, or a segfault.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile long runs; /* also makes work long enough to patch live */

NOINLINE long work(long x)
{
	runs++;
	return x + 3;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000, s = 0;

	for (long i = 0; i < n; i++)
		s += work(i);
	printf("%ld\n", s);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		abort();
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGKILL);
	if (argc > 1 && strcmp(argv[1], "segv") == 0) {
		/* an address the compiler cannot see is bad: a real fault */
		volatile int *nowhere = (volatile int *)(uintptr_t)strtoul("8", NULL, 10);

		*nowhere = 1;
	}
	return 0;
}
