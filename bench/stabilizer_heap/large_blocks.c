/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Large buffers allocated, filled and freed in a loop (300 KiB to 2 MiB,
 * above the shuffling heap's size classes), as a program with per-request
 * buffers does: measures the large-allocation path (one mapping each, kept
 * for reuse when freed).
 *
 * usage: large_blocks [COUNT]   (default 5000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000, sum = 0;

	for (size_t i = 0; i < n; i++) {
		size_t size = (300 + (i * 7919) % 1700) * 1024;
		char *p = malloc(size);

		if (!p)
			return 1;
		memset(p, (int)i, size);
		sum += (unsigned char)p[size / 2];
		free(p);
	}
	printf("%zu\n", sum);
	return 0;
}
