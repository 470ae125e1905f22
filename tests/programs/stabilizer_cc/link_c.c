/* SPDX-License-Identifier: GPL-3.0-or-later */
/* For the link-order test: eight small functions and one that calls them. */
#include <stdint.h>
__attribute__((noinline)) uint64_t c0(uint64_t x)
{
	return x * 3 + 99;
}
__attribute__((noinline)) uint64_t c1(uint64_t x)
{
	return x * 5 + 99;
}
__attribute__((noinline)) uint64_t c2(uint64_t x)
{
	return x * 7 + 99;
}
__attribute__((noinline)) uint64_t c3(uint64_t x)
{
	return x * 9 + 99;
}
__attribute__((noinline)) uint64_t c4(uint64_t x)
{
	return x * 11 + 99;
}
__attribute__((noinline)) uint64_t c5(uint64_t x)
{
	return x * 13 + 99;
}
__attribute__((noinline)) uint64_t c6(uint64_t x)
{
	return x * 15 + 99;
}
__attribute__((noinline)) uint64_t c7(uint64_t x)
{
	return x * 17 + 99;
}
uint64_t c_all(uint64_t x)
{
	x = c0(x);
	x = c1(x);
	x = c2(x);
	x = c3(x);
	x = c4(x);
	x = c5(x);
	x = c6(x);
	x = c7(x);
	return x;
}
