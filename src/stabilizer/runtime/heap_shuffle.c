/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling layer (spec §4.2, paper §3.2 and Figure 1): for each size
 * class an array of N = 256 objects from the base allocator, filled and
 * Fisher-Yates shuffled on the class's first use. malloc takes a fresh base
 * object, swaps it into a random slot and returns the slot's old object;
 * free swaps the freed object into a random slot and frees the evicted one to
 * the base. Each is one step of the inside-out Fisher-Yates shuffle.
 *
 * One lock per class covers the array, the class's random stream and its
 * base state. The streams are xoshiro256** (base/rng) where the paper used
 * Marsaglia's multiply-with-carry; N = 256 makes the slot index the top
 * eight bits of one draw, with no modulo bias.
 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/single_threaded.h>

#include "stabilizer/runtime/heap.h"

/*
 * A test-and-test-and-set lock: one atomic exchange to take it, a plain
 * release store to drop it (a pthread mutex costs two locked instructions,
 * which measured as a third of the time of a malloc-heavy loop here). A
 * holder is never preempted for long in practice; waiters yield.
 */
struct class_lock {
	atomic_bool held;
};

/*
 * While the process has one thread (glibc's __libc_single_threaded: it turns
 * false before the first other thread starts and never back), nobody can
 * race us, and even one atomic exchange costs a malloc-heavy loop a third of
 * its time: it waits for the stores before it to drain.
 */
static void class_lock(struct class_lock *l)
{
	if (__libc_single_threaded)
		return;
	while (atomic_exchange_explicit(&l->held, true, memory_order_acquire)) {
		for (int spin = 0; atomic_load_explicit(&l->held, memory_order_relaxed); spin++)
			if (spin > 100)
				sched_yield();
	}
}

static void class_unlock(struct class_lock *l)
{
	if (__libc_single_threaded)
		return;
	atomic_store_explicit(&l->held, false, memory_order_release);
}

struct shuffle_class {
	struct class_lock lock;
	bool filled;
	struct rng rng;
	void *slot[HEAP_SHUFFLE_N];
} __attribute__((aligned(64)));

static struct shuffle_class classes[HEAP_N_CLASSES];

void heap_shuffle_init(uint64_t seed)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++) {
		atomic_init(&classes[c].lock.held, false);
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

	class_lock(&s->lock);
	if (!s->filled && !fill(s, c))
		goto out;
	fresh = heap_base_malloc(c, &s->rng);
	if (!fresh)
		goto out;
	i = random_slot(s);
	out = s->slot[i];
	s->slot[i] = fresh;
out:
	class_unlock(&s->lock);
	return out;
}

void heap_shuffle_free(unsigned c, void *p)
{
	struct shuffle_class *s = &classes[c];
	unsigned i;

	class_lock(&s->lock);
	i = random_slot(s);
	heap_base_free(c, s->slot[i]); /* the class is filled: p came from it */
	s->slot[i] = p;
	class_unlock(&s->lock);
}

void heap_shuffle_lock_all(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		class_lock(&classes[c].lock);
}

void heap_shuffle_unlock_all(void)
{
	for (unsigned c = HEAP_N_CLASSES; c-- > 0;)
		class_unlock(&classes[c].lock);
}

void heap_shuffle_reset_locks(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		atomic_store(&classes[c].lock.held, false);
}

void heap_shuffle_reseed_child(void)
{
	/* Parent and child hold the same state; only the child jumps away. */
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		rng_seed(&classes[c].rng, rng_next(&classes[c].rng) ^ 0xc4ceb9fe1a85ec53ULL);
}
