/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Test program for the elf module. Lines that tests look up carry a marker
 * comment "LINE:<name>" so no line number is hard-coded in the tests. Every
 * function is reached through a volatile pointer so that the compiler keeps
 * it out of line and does not clone it; loops are written so that no
 * compiler can replace them with a closed form.
 */
#include <stdio.h>
#include <stdlib.h>

#include "inl.h"

volatile unsigned sink;

unsigned sum_squares(unsigned n) /* LINE:sum_squares_begin */
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++)
		s += i * i + (s >> 7); /* LINE:sum_squares_loop */
	return s;		       /* LINE:sum_squares_return */
} /* LINE:sum_squares_end */

unsigned count_bits(unsigned x) /* LINE:count_bits_begin */
{
	unsigned c = 0;

	while (x) {
		x &= x - 1; /* LINE:count_bits_loop */
		c++;
	}
	return c;
} /* LINE:count_bits_end */

unsigned use_mix(unsigned x) /* LINE:use_mix_begin */
{
	return mix_bits(x) + 7; /* LINE:call_mix */
} /* LINE:use_mix_end */

int main(int argc, char **argv) /* LINE:main_begin */
{
	unsigned (*volatile fns[3])(unsigned) = {sum_squares, count_bits, use_mix};
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000u;

	for (int i = 0; i < 3; i++)
		sink += fns[i](n); /* LINE:main_call */
	printf("%u\n", sink);
	return 0;
} /* LINE:main_end */
