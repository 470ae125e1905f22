/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling layer (spec §4.2, paper §3.2 and Figure 1): for each size
 * class an array of N = 256 objects from the base allocator, filled and
 * Fisher-Yates shuffled on the class's first use. malloc takes a fresh base
 * object, swaps it into a random slot and returns the slot's old object;
 * free swaps the freed object into a random slot and frees the evicted one to
 * the base. Each is one step of the inside-out Fisher-Yates shuffle.
 *
 * One mutex per class covers the array, the class's random stream and its
 * base state. The streams are xoshiro256** (base/rng) where the paper used
 * Marsaglia's multiply-with-carry; N = 256 makes the slot index the top
 * eight bits of one draw, with no modulo bias.
 */
#include <pthread.h>

#include "stabilizer/runtime/heap.h"

struct shuffle_class {
	pthread_mutex_t lock;
	bool filled;
	struct rng rng;
	void *slot[HEAP_SHUFFLE_N];
} __attribute__((aligned(64)));

static struct shuffle_class classes[HEAP_N_CLASSES];

void heap_shuffle_init(uint64_t seed)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++) {
		pthread_mutex_init(&classes[c].lock, NULL);
		rng_seed(&classes[c].rng, seed + 0x9e3779b97f4a7c15ULL * (c + 1));
	}
}

static unsigned random_slot(struct shuffle_class *s)
{
	return (unsigned)(rng_next(&s->rng) >> 56); /* HEAP_SHUFFLE_N == 256 */
}

/* The initial fill: N base objects, then a full Fisher-Yates shuffle. */
static bool fill(struct shuffle_class *s, unsigned c)
{
	for (unsigned i = 0; i < HEAP_SHUFFLE_N; i++) {
		s->slot[i] = heap_base_malloc(c, &s->rng);
		if (!s->slot[i]) {
			while (i--)
				heap_base_free(c, s->slot[i]);
			return false;
		}
	}
	for (unsigned i = HEAP_SHUFFLE_N - 1; i > 0; i--) {
		unsigned j = (unsigned)rng_below(&s->rng, i + 1);
		void *t = s->slot[i];

		s->slot[i] = s->slot[j];
		s->slot[j] = t;
	}
	s->filled = true;
	return true;
}

void *heap_shuffle_malloc(unsigned c)
{
	struct shuffle_class *s = &classes[c];
	void *fresh, *out = NULL;
	unsigned i;

	pthread_mutex_lock(&s->lock);
	if (!s->filled && !fill(s, c))
		goto out;
	fresh = heap_base_malloc(c, &s->rng);
	if (!fresh)
		goto out;
	i = random_slot(s);
	out = s->slot[i];
	s->slot[i] = fresh;
out:
	pthread_mutex_unlock(&s->lock);
	return out;
}

void heap_shuffle_free(unsigned c, void *p)
{
	struct shuffle_class *s = &classes[c];
	unsigned i;

	pthread_mutex_lock(&s->lock);
	i = random_slot(s);
	heap_base_free(c, s->slot[i]); /* the class is filled: p came from it */
	s->slot[i] = p;
	pthread_mutex_unlock(&s->lock);
}

void heap_shuffle_lock_all(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		pthread_mutex_lock(&classes[c].lock);
}

void heap_shuffle_unlock_all(void)
{
	for (unsigned c = HEAP_N_CLASSES; c-- > 0;)
		pthread_mutex_unlock(&classes[c].lock);
}

void heap_shuffle_reset_locks(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		pthread_mutex_init(&classes[c].lock, NULL);
}

void heap_shuffle_reseed_child(void)
{
	/* Parent and child hold the same state; only the child jumps away. */
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		rng_seed(&classes[c].rng, rng_next(&classes[c].rng) ^ 0xc4ceb9fe1a85ec53ULL);
}
