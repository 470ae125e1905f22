/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The link-order test program: the same output in every function order. */
#include <stdint.h>
#include <stdio.h>

uint64_t a_all(uint64_t), b_all(uint64_t), c_all(uint64_t);

int main(void)
{
	uint64_t x = 1;

	for (int i = 0; i < 1000; i++)
		x = c_all(b_all(a_all(x)));
	printf("%llu\n", (unsigned long long)x);
	return 0;
}
