/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Function pointers through code randomization: pointers stay the original
 * addresses (comparable, usable by libc's qsort and by tables), and calls
 * through them reach the moved code. Prints the same with or without it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef long (*op_fn)(long, long);

static long add(long a, long b)
{
	return a + b;
}

static long sub(long a, long b)
{
	return a - b;
}

static long mul(long a, long b)
{
	return a * b;
}

__attribute__((noinline)) long apply(op_fn f, long a, long b)
{
	return f(a, b);
}

static int compare_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return (a > b) - (a < b);
}

static const op_fn table[] = {add, sub, mul};

__attribute__((noinline)) static double scale(double x, float y, long double z)
{
	return x * y + (double)z;
}

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long values[64], sum = 0;
	op_fn chosen = argc > 5 ? sub : add;

	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 64; i++)
			values[i] = (i * 7919L + round * 31L) % 101;
		qsort(values, 64, sizeof(values[0]), compare_long);
		for (int i = 0; i < 64; i++)
			sum = apply(table[i % 3], sum % 100003, values[i]);
		if (round % 5 == 0)
			pause_ms(3);
	}
	printf("sum %ld\n", sum);
	printf("add==table[0] %d chosen==add %d apply!=add %d\n", table[0] == add, chosen == add,
	       (void *)apply != (void *)add);
	printf("scale %.3f\n", scale(1.5, 2.0f, 0.25L));
	printf("strcmp via pointer %d\n",
	       ((int (*)(const char *, const char *))strcmp)("a", "b") < 0);
	return 0;
}
