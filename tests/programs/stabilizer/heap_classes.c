/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What does a program with many small size classes cost in memory (issue 14
 * point 14, spec §4.2)? Allocates and writes a few dozen objects in each of
 * 40 size classes (16 bytes to 32 KiB: the shuffling heap's first 40
 * classes), at most 16 KiB of them per class, keeps them all live, and
 * measures how much its resident size grew (VmRSS in /proc/self/status,
 * before and after: the size of the process it was exec'ed from does not
 * count). Prints the growth and exits 1 if it is above the limit.
 *
 * A heap that gives each class pages of its own and spreads a class's
 * objects over 256 KiB of them (for random cache-index bits) touches up to
 * 64 pages per class: about 3.5 MiB here for 0.5 MiB of objects.
 *
 * usage: heap_classes [LIMIT_KIB]   (default 2048)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASSES	     40
#define PER_CLASS    64		 /* objects of a class, at most */
#define CLASS_BUDGET (16u << 10) /* bytes of a class, at most */

/* Resident KiB of this process, or -1. */
static long resident_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* Size class c: multiples of 16 up to 128, then four per power of two. */
static size_t class_size(unsigned c)
{
	unsigned k = 7 + (c - 8) / 4, j = 1 + (c - 8) % 4;

	return c < 8 ? 16u * (c + 1) : ((size_t)1 << k) + j * ((size_t)1 << (k - 2));
}

int main(int argc, char **argv)
{
	long limit_kib = argc > 1 ? strtol(argv[1], NULL, 10) : 2048, before, after;
	static void *objs[CLASSES][PER_CLASS];
	size_t bytes = 0;

	if (limit_kib <= 0)
		return 2;
	before = resident_kib();
	for (unsigned c = 0; c < CLASSES; c++) {
		size_t size = class_size(c), n = CLASS_BUDGET / size;

		n = n < 1 ? 1 : n > PER_CLASS ? PER_CLASS : n;
		for (size_t i = 0; i < n; i++) {
			objs[c][i] = malloc(size);
			if (!objs[c][i]) {
				fprintf(stderr, "heap_classes: out of memory\n");
				return 2;
			}
			memset(objs[c][i], 0x5a, size);
			bytes += size;
		}
	}
	after = resident_kib();
	if (before < 0 || after < 0) {
		fprintf(stderr, "heap_classes: cannot read VmRSS from /proc/self/status\n");
		return 2;
	}
	printf("%u classes, %zu KiB of live objects; resident size grew by %ld KiB (limit %ld)\n",
	       CLASSES, bytes >> 10, after - before, limit_kib);
	return after - before > limit_kib;
}
