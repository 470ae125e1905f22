// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The tight loop of bench/annotate_probe (issue 15, must show 1): N calls
 * of an almost empty, not inlined function (one counter increment, so that
 * it is long enough, 7 bytes, to be patched live). Prints the thread CPU
 * time per call of the loop, so that start-up is left out and a loaded
 * machine's preemption does not count, and the process's CPU time per call
 * over the same loop (the thread's and that of the runtime's own threads,
 * such as lever's record writer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long calls;

__attribute__((noinline)) int empty(int x, long y, const char *s, double d, int *p)
{
	__asm__ volatile("" ::"r"(x), "r"(y), "r"(s), "x"(d), "r"(p) : "memory");
	calls++;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	struct timespec a, b, pa, pb;
	int v = 7, acc = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pa);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++)
		acc += empty((int)i, i, "abc", 1.5, &v);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pb);
	printf("ns_per_call %.3f acc %d calls %ld process_ns_per_call %.3f\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n, acc,
	       calls,
	       ((pb.tv_sec - pa.tv_sec) * 1e9 + (double)(pb.tv_nsec - pa.tv_nsec)) / (double)n);
	return 0;
}
