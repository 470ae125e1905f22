/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A library the test program dlopens after start-up: its work must be profiled. */
long dlwork_spin(long n)
{
	long s = 0;

	for (volatile long i = 0; i < n; i++) /* LINE:dlwork */
		s += i;
	return s;
}
