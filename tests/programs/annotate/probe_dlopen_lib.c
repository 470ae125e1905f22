// SPDX-License-Identifier: GPL-3.0-or-later
/* The dlopen'ed library of probe_dlopen_main.c. */
long lib_work(long x)
{
	long s = 0;

	for (long i = 0; i <= x; i++)
		s += i;
	return s;
}
