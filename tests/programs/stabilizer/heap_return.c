/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Does the heap give memory back? Allocates and frees 1 GiB in 16 rounds of
 * 64 MiB, each round in objects of another size (24 bytes to 140 KB, so
 * another size class of the shuffling heap, spec §4.2), writing every byte
 * and freeing in a scrambled order. An allocator that keeps what was freed
 * for the size it had ends near 1 GiB of resident memory; one that returns
 * free pages stays near one round plus its caches. Prints the peak resident
 * size (getrusage) and exits 1 if it is above the limit.
 *
 * usage: heap_return [LIMIT_MIB]   (default 320)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define ROUNDS	    16
#define ROUND_BYTES ((size_t)64 << 20)

static const size_t sizes[ROUNDS] = {24,   40,	 72,   136,  200,   330,   600,	  1000,
				     1800, 3000, 5000, 9000, 17000, 33000, 70000, 140000};

/* One round: allocate ROUND_BYTES in objects of `size`, touch them, free them scrambled. */
static int round_of(size_t size, void **objs, uint64_t *x)
{
	size_t n = ROUND_BYTES / size;

	for (size_t i = 0; i < n; i++) {
		objs[i] = malloc(size);
		if (!objs[i]) {
			fprintf(stderr, "heap_return: out of memory at %zu bytes\n", size);
			return -1;
		}
		memset(objs[i], (int)(i & 0xff), size);
	}
	for (size_t i = n - 1; i > 0; i--) { /* a fixed Fisher-Yates permutation */
		size_t j;
		void *t;

		*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (size_t)(*x >> 33) % (i + 1);
		t = objs[i];
		objs[i] = objs[j];
		objs[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		free(objs[i]);
	return 0;
}

int main(int argc, char **argv)
{
	long limit_mib = argc > 1 ? strtol(argv[1], NULL, 10) : 320;
	size_t most = ROUND_BYTES / sizes[0];
	/* the pointer array outside the heap under test */
	void **objs = mmap(NULL, most * sizeof(*objs), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t x = 1;
	struct rusage ru;
	long peak_mib;

	if (objs == MAP_FAILED || limit_mib <= 0)
		return 2;
	for (int r = 0; r < ROUNDS; r++)
		if (round_of(sizes[r], objs, &x))
			return 2;
	getrusage(RUSAGE_SELF, &ru);
	peak_mib = ru.ru_maxrss / 1024;
	printf("allocated and freed %d MiB in %d rounds; peak resident %ld MiB (limit %ld)\n",
	       (int)(ROUNDS * (ROUND_BYTES >> 20)), ROUNDS, peak_mib, limit_mib);
	return peak_mib > limit_mib;
}
