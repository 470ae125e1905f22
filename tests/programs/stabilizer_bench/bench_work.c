/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A small stand-in for the Debian programs of bench/stabilizer/run.sh, used by
 * tests/e2e/stabilizer_bench.sh and built there with lever cc: many small
 * functions calling each other (code and stack randomization have work to do)
 * and short-lived heap objects (the shuffling heap has work to do).
 *
 * usage: bench_work calls|allocs ROUNDS   prints a checksum that does not
 * depend on the layout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	return x ^ (x >> 29);
}

static __attribute__((noinline)) uint64_t step_a(uint64_t x)
{
	return mix(x + 1);
}

static __attribute__((noinline)) uint64_t step_b(uint64_t x)
{
	return step_a(x) ^ mix(x << 3);
}

static __attribute__((noinline)) uint64_t step_c(uint64_t x)
{
	return step_b(x) + step_a(x >> 7);
}

static __attribute__((noinline)) uint64_t step_d(uint64_t x)
{
	return step_c(x) - step_b(x + 11);
}

static uint64_t calls(long rounds)
{
	uint64_t sum = 0;

	for (long i = 0; i < rounds * 20000; i++)
		sum += step_d((uint64_t)i);
	return sum;
}

struct node {
	struct node *next;
	uint64_t value;
	char pad[40];
};

/* Lists of short-lived objects: build, walk, free. */
static __attribute__((noinline)) uint64_t list_round(long round)
{
	struct node *head = NULL;
	uint64_t sum = 0;

	for (int i = 0; i < 2000; i++) {
		struct node *n = malloc(sizeof(*n) + (size_t)(i % 7) * 16);

		if (!n)
			abort();
		n->value = mix((uint64_t)(round * 2000 + i));
		n->next = head;
		head = n;
	}
	while (head) {
		struct node *next = head->next;

		sum += head->value;
		free(head);
		head = next;
	}
	return sum;
}

static uint64_t allocs(long rounds)
{
	uint64_t sum = 0;

	for (long r = 0; r < rounds * 10; r++)
		sum += list_round(r);
	return sum;
}

int main(int argc, char **argv)
{
	long rounds;

	if (argc != 3 || (rounds = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench_work calls|allocs ROUNDS\n");
		return 2;
	}
	if (strcmp(argv[1], "calls") == 0)
		printf("%llu\n", (unsigned long long)calls(rounds));
	else if (strcmp(argv[1], "allocs") == 0)
		printf("%llu\n", (unsigned long long)allocs(rounds));
	else
		return 2;
	return 0;
}
