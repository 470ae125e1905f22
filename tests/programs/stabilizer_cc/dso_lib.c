/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A shared object built with lever cc: its own stack pad table. */

__attribute__((noinline)) long dso_distance(const char *top, int depth)
{
	char here;
	volatile long r;

	if (depth == 0)
		return (long)(top - &here);
	r = dso_distance(top, depth - 1);
	return r;
}
