// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A designed program for `lever layout record` (issue 17): an array of
 * structs whose field `hot` is read at random indexes over 64 MiB, so that
 * each read misses the cache and waits on memory, while the other fields
 * are never touched. Time samples then land on (or right after, spec
 * autocpa.md §5.2) the one load of `hot`: the truth a test checks the
 * `clock` source against. The index comes from a xorshift generator kept in
 * registers, so the load's base and index registers still hold its address
 * when the sample is taken. It prints the array's address range, the
 * struct's size and the offset of `hot`, for the test to check the data
 * addresses the collector computes, and the time the loop took (for
 * bench/layout/overhead.sh: the program's own time, without start-up).
 *   record_hot [STEPS [MIB]]   (default 20 million steps over 64 MiB; MIB a
 *                              power of two: 1 MiB stays in the caches)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct node {
	long cold_a;
	char cold_name[40];
	long hot; /* offset 48: the only field the loop reads */
	long cold_b;
};

/* Not inlined, so that the loop has a function of its own in the symbol table. */
__attribute__((noinline)) static long sum_hot(const struct node *nodes, size_t count, long steps)
{
	uint64_t x = 88172645463325252ull;
	long sum = 0;

	while (steps-- > 0) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += nodes[x & (count - 1)].hot;
	}
	return sum;
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 20000000;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 64;
	size_t count = (mib << 20) / sizeof(struct node);
	struct node *nodes = malloc(count * sizeof(*nodes));

	if (!nodes || !mib || (mib & (mib - 1))) /* the mask needs a power of two */
		return 1;
	for (size_t i = 0; i < count; i++)
		nodes[i] = (struct node){.cold_a = (long)i, .hot = (long)(i & 7)};
	printf("nodes %p %p size %zu hot %zu\n", (void *)nodes, (void *)(nodes + count),
	       sizeof(struct node), offsetof(struct node, hot));
	struct timespec t0, t1, c0, c1;
	long sum;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	sum = sum_hot(nodes, count, steps);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("sum %ld\n", sum);
	/* wall and CPU time of the loop: CPU time includes the sampling interrupts */
	printf("loop_ns %lld cpu_ns %lld\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec),
	       (long long)(c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
	free(nodes);
	return 0;
}
