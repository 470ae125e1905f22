// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * bench/annotate_probe/nested.sh: outer() calls inner() K times, so that the
 * time recorded for outer with inner probed too, against outer alone, shows
 * how well the probe's own time is subtracted from enclosing calls.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void inner(int k)
{
	long s = 0;

	for (int i = 0; i < k; i++)
		s += i;
	sink += s;
}

__attribute__((noinline)) void outer(int n)
{
	for (int i = 0; i < n; i++)
		inner(20);
	sink++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200, k = argc > 2 ? atoi(argv[2]) : 1000;

	for (int r = 0; r < rounds; r++)
		outer(k);
	printf("%ld\n", sink);
	return 0;
}
