/* SPDX-License-Identifier: GPL-3.0-or-later */
/* For the link-order test: eight small functions and one that calls them. */
#include <stdint.h>
__attribute__((noinline)) uint64_t a0(uint64_t x)
{
	return x * 3 + 97;
}
__attribute__((noinline)) uint64_t a1(uint64_t x)
{
	return x * 5 + 97;
}
__attribute__((noinline)) uint64_t a2(uint64_t x)
{
	return x * 7 + 97;
}
__attribute__((noinline)) uint64_t a3(uint64_t x)
{
	return x * 9 + 97;
}
__attribute__((noinline)) uint64_t a4(uint64_t x)
{
	return x * 11 + 97;
}
__attribute__((noinline)) uint64_t a5(uint64_t x)
{
	return x * 13 + 97;
}
__attribute__((noinline)) uint64_t a6(uint64_t x)
{
	return x * 15 + 97;
}
__attribute__((noinline)) uint64_t a7(uint64_t x)
{
	return x * 17 + 97;
}
uint64_t a_all(uint64_t x)
{
	x = a0(x);
	x = a1(x);
	x = a2(x);
	x = a3(x);
	x = a4(x);
	x = a5(x);
	x = a6(x);
	x = a7(x);
	return x;
}
