/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recursion through code randomization: deep self and mutual recursion
 * whose frames span re-randomizations (the interval is short and the
 * program sleeps inside deep recursion), so old copies are still on the
 * stack when new ones are made. */
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static long ackermann(long m, long n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

static int is_odd(unsigned n);

__attribute__((noinline)) static int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

__attribute__((noinline)) static int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

/* Sleeps at the bottom so that copies on the stack outlive several periods. */
__attribute__((noinline)) static long deep(int depth, long acc)
{
	volatile long local = acc * 3 + depth;

	if (depth == 0) {
		struct timespec ts = {0, 20 * 1000000L};

		nanosleep(&ts, NULL);
		return local;
	}
	return deep(depth - 1, local % 1000003) + 1;
}

int main(void)
{
	long total = 0;

	for (int i = 0; i < 5; i++) {
		total += fib(22 + i % 3);
		total += ackermann(2, 200 + i);
		total += is_even(10001 + i) + is_odd(5000 + i);
		total += deep(2000, i);
	}
	printf("fib(24) %ld\n", fib(24));
	printf("ackermann(2,3) %ld\n", ackermann(2, 3));
	printf("total %ld\n", total);
	return 0;
}
