/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shared library of program (g): its work loop lies outside the default
 * binary scope (MAIN), so a profiler attributes its samples to the in-scope
 * line that called it, found on the call chain. The chain is walked through
 * frame pointers, and GCC sets none up in a function that calls nothing (even
 * with -fno-omit-frame-pointer): the walk would then skip the caller's line.
 * So the function calls a counter after its loop, and the library is built
 * with -fno-omit-frame-pointer -fno-shrink-wrap -fno-optimize-sibling-calls
 * (a frame from the start, and the call is not turned into a jump).
 */
#include "common.h"

void libwork_spin(long n);
void libwork_count(void);

static volatile long calls;

__attribute__((noinline)) void libwork_count(void)
{
	calls++;
}

void libwork_spin(long n)
{
	SPIN(n); /* LINE:library */
	libwork_count();
}
