// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_calls.sh): recursion, nested
 * calls and a tail call, with known call counts. Prints the same result with
 * or without probes.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static long fib_calls, leaf_calls; /* what the probes must count */

NOINLINE int leaf(int x)
{
	leaf_calls++;
	return x + 1;
}

/* recursion; the asm keeps GCC from turning one of the two calls into a loop */
NOINLINE int fib(int n)
{
	int r;

	fib_calls++;
	r = n < 2 ? leaf(n) - 1 : fib(n - 1) + fib(n - 2);
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* a tail call: `return leaf(...)` compiles to `jmp leaf` at -O2 */
NOINLINE int tail(int x)
{
	return leaf(x * 2);
}

/* float arguments and results pass through the probes untouched */
NOINLINE double mix(double a, float b, long c)
{
	return a * b + (double)c;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	long sum = 0;
	double d = 0;

	for (int i = 0; i < rounds; i++) {
		sum += fib(10);
		sum += tail(i);
		d += mix(i * 0.5, 1.5f, i);
	}
	printf("sum %ld mix %.3f fib_calls %ld leaf_calls %ld\n", sum, d, fib_calls, leaf_calls);
	return 0;
}
