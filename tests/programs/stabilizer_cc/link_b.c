/* SPDX-License-Identifier: GPL-3.0-or-later */
/* For the link-order test: eight small functions and one that calls them. */
#include <stdint.h>
__attribute__((noinline)) uint64_t b0(uint64_t x)
{
	return x * 3 + 98;
}
__attribute__((noinline)) uint64_t b1(uint64_t x)
{
	return x * 5 + 98;
}
__attribute__((noinline)) uint64_t b2(uint64_t x)
{
	return x * 7 + 98;
}
__attribute__((noinline)) uint64_t b3(uint64_t x)
{
	return x * 9 + 98;
}
__attribute__((noinline)) uint64_t b4(uint64_t x)
{
	return x * 11 + 98;
}
__attribute__((noinline)) uint64_t b5(uint64_t x)
{
	return x * 13 + 98;
}
__attribute__((noinline)) uint64_t b6(uint64_t x)
{
	return x * 15 + 98;
}
__attribute__((noinline)) uint64_t b7(uint64_t x)
{
	return x * 17 + 98;
}
uint64_t b_all(uint64_t x)
{
	x = b0(x);
	x = b1(x);
	x = b2(x);
	x = b3(x);
	x = b4(x);
	x = b5(x);
	x = b6(x);
	x = b7(x);
	return x;
}
