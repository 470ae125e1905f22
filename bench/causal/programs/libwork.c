/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shared library of program (g): its work loop lies outside the default
 * binary scope (MAIN), so a profiler attributes its samples to the in-scope
 * line that called it, found on the call chain. Built with frame pointers so
 * that the chain can be walked.
 */
#include "common.h"

void libwork_spin(long n);

void libwork_spin(long n)
{
	SPIN(n); /* LINE:library */
}
