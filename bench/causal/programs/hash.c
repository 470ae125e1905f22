/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * (f) Hash-bucket traversal in a shared table. Two threads look keys up in
 * one table of 64 buckets, each a chain of 257 entries stored in chain order
 * (263 KiB: the physical core's L2 holds it). A lookup computes the bucket
 * (dependent divisions: the hash), lands on a finger into the chain and walks
 * from there to the key (the chosen line). Keys are drawn from the whole
 * chain at every --scale; S sets how far before the key the finger lands, so
 * the walk really is S times as long (S x position, mean 128 S steps), as
 * when skip pointers shorten the chains, while the keys looked up and the
 * table they live in stay the same: every other line does the same work at
 * every S. (Drawing keys from the first S of each chain instead shrank the working
 * set, and the other lines got faster too.) The progress point is a batch of
 * 256 lookups.
 */
#include <pthread.h>

#include "common.h"

#define BUCKETS	  64
#define CHAIN	  256 /* longest walk; chains hold CHAIN + 1 entries */
#define BATCH	  256
#define WORKERS	  2
#define HASH_DIVS 24

struct entry {
	uint64_t key;
	struct entry *next;
};

static struct bench_args args = {.rounds = 20000, .unit = 240000, .scale = 1.0};
static struct entry *table[BUCKETS];
static struct entry entries[BUCKETS * (CHAIN + 1)];

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Key k of bucket b; keys of a chain are b, b + BUCKETS, ... in chain order. */
static void build_table(void)
{
	for (int b = 0; b < BUCKETS; b++) {
		struct entry *prev = NULL;

		for (int k = CHAIN; k >= 0; k--) {
			struct entry *e = &entries[b * (CHAIN + 1) + k];

			e->key = (uint64_t)k * BUCKETS + (uint64_t)b;
			e->next = prev;
			prev = e;
		}
		table[b] = prev;
	}
}

/* clang-format off */
static unsigned bucket_of(uint64_t key)
{
	uint64_t h = key;

	SPIN(HASH_DIVS); /* LINE:hash */
	return (unsigned)((h ^ (bench_sink & 0)) % BUCKETS);
}

/* The finger: walk entries before the key's position pos; its entry's key is loaded here. */
static long lookup(uint64_t key, uint64_t pos, uint64_t walk)
{
	const struct entry *e = table[bucket_of(key)] + (pos - walk); uint64_t k = e->key; /* LINE:finger */
	long steps = 0;

	while (k != key) { e = e->next; k = e->key; steps++; } /* LINE:chosen */
	return steps;
}
/* clang-format on */

static void *worker(void *arg)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL * (uint64_t)((long)arg + 1);
	long steps = 0;

	for (long r = (long)arg; r < args.rounds; r += WORKERS) {
		for (int i = 0; i < BATCH; i++) {
			uint64_t rnd = next_random(&state);
			double u = (double)(rnd >> 11) / 9007199254740992.0;
			uint64_t pos = (uint64_t)(u * CHAIN + 0.5);
			uint64_t walk = (uint64_t)((double)pos * args.scale + 0.5);

			steps += lookup(pos * BUCKETS + (rnd >> 3) % BUCKETS, pos, walk);
		}
		COZ_PROGRESS_NAMED("batch");
	}
	bench_sink = (uint64_t)steps;
	return NULL;
}

int main(int argc, char **argv)
{
	int status = bench_parse(argc, argv, &args);
	pthread_t t[WORKERS];
	double start;

	if (status)
		return status;
	build_table();
	start = bench_now();
	for (long i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	bench_report("hash", args.rounds, bench_now() - start, -1);
	return 0;
}
