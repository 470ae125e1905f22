// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The tight loop of bench/annotate_probe (issue 15, must show 1): N calls
 * of an empty, not inlined function. Prints the time per call of the loop
 * as the program sees it, so that start-up is left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int empty(int x, long y, const char *s, double d, int *p)
{
	__asm__ volatile("" ::"r"(x), "r"(y), "r"(s), "x"(d), "r"(p) : "memory");
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	struct timespec a, b;
	int v = 7, acc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		acc += empty((int)i, i, "abc", 1.5, &v);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call %.3f acc %d\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n, acc);
	return 0;
}
