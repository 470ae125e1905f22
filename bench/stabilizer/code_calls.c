/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Call-heavy loop for the overhead of code randomization: three calls
 * between functions per iteration, each through an original entry (one more
 * indirect jump when the code has moved). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) uint64_t leaf(uint64_t x)
{
	return x * 2654435761u + 1;
}

__attribute__((noinline)) uint64_t mid(uint64_t x)
{
	return leaf(x) ^ leaf(x >> 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	uint64_t a = 1;

	for (long i = 0; i < n; i++)
		a = mid(a + (uint64_t)i);
	printf("%llu\n", (unsigned long long)a);
	return 0;
}
