/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack pads, seen from inside: the distance in bytes from a local of main to
 * a local of a function 8 calls deeper. Unpadded it is the same in every run
 * (whatever the stack's address); padded it is the sum of the pads of the
 * functions in between.
 *
 *   frames distance      print that distance
 *   frames compute N     print results of call-heavy computations (the same
 *                        with or without pads)
 *   frames watch MS      measure the distance for up to MS ms; print "changed"
 *                        as soon as it differs from the first one, else
 *                        "unchanged" (pads re-randomized while running)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *volatile main_local;

/* Not tail calls: the result is used after each call returns. */
__attribute__((noinline)) static long distance_at(int depth)
{
	char here;
	volatile long r;

	if (depth == 0)
		return (long)(main_local - &here);
	r = distance_at(depth - 1);
	return r;
}

__attribute__((noinline)) static long measure(void)
{
	volatile long r = distance_at(8);
	return r;
}

__attribute__((noinline)) static uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static int ackermann(int m, int n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void compute(int n)
{
	int v[1000];
	uint64_t sum = 0;

	printf("fib(%d) = %llu\n", n, (unsigned long long)fib(n));
	printf("ackermann(2, %d) = %d\n", n, ackermann(2, n));
	for (int i = 0; i < 1000; i++)
		v[i] = (i * 7919) % 1009;
	qsort(v, 1000, sizeof(v[0]), compare_ints);
	for (int i = 0; i < 1000; i++)
		sum = sum * 31 + (uint64_t)v[i];
	printf("sorted checksum %llu\n", (unsigned long long)sum);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void watch(double ms)
{
	long first = measure();
	double end = now_ms() + ms;

	while (now_ms() < end) {
		if (measure() != first) {
			printf("changed\n");
			return;
		}
		struct timespec pause = {0, 1000000};
		nanosleep(&pause, NULL);
	}
	printf("unchanged\n");
}

int main(int argc, char **argv)
{
	char local;

	main_local = &local;
	if (argc == 2 && strcmp(argv[1], "distance") == 0) {
		printf("%ld\n", measure());
	} else if (argc == 3 && strcmp(argv[1], "compute") == 0) {
		compute(atoi(argv[2]));
	} else if (argc == 3 && strcmp(argv[1], "watch") == 0) {
		watch(atof(argv[2]));
	} else {
		fprintf(stderr, "usage: frames distance | compute N | watch MS\n");
		return 2;
	}
	return 0;
}
