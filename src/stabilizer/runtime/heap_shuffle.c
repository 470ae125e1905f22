/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling layer (spec §4.2, paper §3.2 and Figure 1): for each size
 * class an array of N = 256 objects from the base allocator. malloc takes a
 * base object, swaps it into a random slot and returns the slot's old
 * object; free swaps the freed object into a random slot and frees the
 * evicted one to the base. Each is one step of the inside-out Fisher-Yates
 * shuffle.
 *
 * The array is filled lazily: an empty slot (NULL) stands for a fresh object
 * of the base that is not carved yet, which is what the spec's initial fill
 * puts there (fresh objects come in the order of a seeded bijection, so
 * which one a slot holds does not matter). A malloc that draws an empty
 * slot returns a fresh object (heap_base_fresh) and leaves the slot empty,
 * unless the base has a freed object to swap in, as the spec's Base::malloc
 * would return it; a free that evicts an empty slot frees nothing. So the
 * shuffle is the spec's, but a class with a few objects carves a few, not
 * N: with classes sharing pages (heap_lane.c), its objects then lie on a
 * few pages rather than spread over N objects' worth (issue 14 point 14).
 *
 * Every thread has its own arrays, random streams and base free lists (a
 * thread heap, found through a TLS pointer), so malloc and free take no lock;
 * an object freed by another thread than the one that allocated it joins the
 * freeing thread's array. Per-class locks around shared arrays measured
 * 3.5 times glibc's time on two threads (the atomic instructions, not the
 * waiting), per-thread heaps about what one thread costs. A thread's heap is
 * recycled for the next new thread when it exits, buffered objects and all.
 *
 * The slot a malloc returns is drawn at the class's previous malloc, from a
 * stream of the mallocs' own, so that its object can be prefetched in
 * between: a buffered object is usually out of the cache (the price of not
 * reusing the object just freed) and the program writes to it at once. The
 * choice stays uniform over the buffer and independent of its contents, as
 * the frees in between draw their slots from another stream.
 *
 * The streams are xoshiro256** (base/rng) where the paper used Marsaglia's
 * multiply-with-carry; N = 256 makes the slot index the top eight bits of
 * one draw. Thread heaps are seeded from the heap's seed and the order in
 * which they were made: the first, the main thread's, reproducibly.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "stabilizer/runtime/heap.h"

/* A class's random streams, apart from its objects (see struct thread_heap). */
struct shuffle_class {
	unsigned next;	       /* the slot the next malloc returns, drawn one malloc early */
	struct rng rng;	       /* the frees' slots */
	struct rng malloc_rng; /* the mallocs' slots */
};

/*
 * The streams of all classes lie together, and each class's free list and
 * slots apart: seeding a heap then writes one page, not one per class, and
 * a class the thread never uses costs no memory (2.5 KiB each otherwise,
 * 130 KiB per thread).
 */
struct thread_heap {
	struct shuffle_class cls[HEAP_N_CLASSES];
	struct thread_heap *next_recycled;
	struct heap_free_list free[HEAP_N_CLASSES];
	void *slot[HEAP_N_CLASSES][HEAP_SHUFFLE_N];
};

static __thread struct thread_heap *current_heap;
static __thread bool heap_released; /* this thread is exiting */
static struct heap_lock heaps_lock; /* the four below */
static struct thread_heap *recycled;
static struct thread_heap *orphans; /* for frees after a thread gave its heap back */
static uint64_t heaps_made;
static uint64_t shuffle_seed;
static pthread_key_t heap_key;
static bool heap_key_made;

static void seed_heap(struct thread_heap *h, uint64_t index)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++) {
		uint64_t s =
		    shuffle_seed + 0x9e3779b97f4a7c15ULL * (c + 1) + 0x632be59bd9b4e019ULL * index;

		rng_seed(&h->cls[c].rng, s);
		rng_seed(&h->cls[c].malloc_rng, s ^ 0xd1b54a32d192ed03ULL);
		h->free[c].arena = (unsigned)(index % HEAP_LANE_ARENAS);
	}
}

/* At thread exit: the heap goes to the next new thread. */
static void release_heap(void *arg)
{
	struct thread_heap *h = arg;

	if (current_heap == h)
		current_heap = NULL;
	heap_released = true;
	heap_lock(&heaps_lock);
	h->next_recycled = recycled;
	recycled = h;
	heap_unlock(&heaps_lock);
}

static struct thread_heap *new_heap(uint64_t index)
{
	/* mmap'ed memory is zero: every slot empty (a fresh object), empty free lists */
	struct thread_heap *h =
	    mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (h == MAP_FAILED)
		return NULL;
	seed_heap(h, index);
	return h;
}

static struct thread_heap *acquire_heap(void)
{
	struct thread_heap *h;
	uint64_t index = 0;

	heap_lock(&heaps_lock);
	h = recycled;
	if (h)
		recycled = h->next_recycled;
	else
		index = heaps_made++;
	heap_unlock(&heaps_lock);
	if (!h)
		h = new_heap(index);
	if (!h)
		return NULL;
	current_heap = h; /* before pthread_setspecific, which might allocate */
	if (heap_key_made)
		pthread_setspecific(heap_key, h);
	return h;
}

void heap_shuffle_init(uint64_t seed)
{
	shuffle_seed = seed;
	heap_base_seed(seed ^ 0xb5ad4eceda1ce2a9ULL);
	heap_key_made = pthread_key_create(&heap_key, release_heap) == 0;
}

static unsigned random_slot(struct rng *r)
{
	return (unsigned)(rng_next(r) >> 56); /* HEAP_SHUFFLE_N == 256 */
}

/* Inline: with the base's fast path, one call per malloc (issue 14 point 14). */
static inline __attribute__((always_inline)) void *malloc_from(struct thread_heap *h, unsigned c)
{
	struct shuffle_class *s = &h->cls[c];
	struct heap_free_list *free = &h->free[c];
	void **slot = h->slot[c];
	unsigned i = s->next;
	void *out = slot[i];

	if (__builtin_expect(out != NULL, 1)) {
		void *in = heap_base_malloc(c, free);

		if (!in)
			return NULL;
		slot[i] = in;
	} else {
		out = heap_base_fresh(c, free);
		if (!out)
			return NULL;
		if (free->count) /* what Base::malloc would give, in place of the fresh one */
			slot[i] = free->obj[--free->count];
	}
	s->next = random_slot(&s->malloc_rng);
	__builtin_prefetch(slot[s->next], 1, 3);
	return out;
}

static inline __attribute__((always_inline)) void free_into(struct thread_heap *h, unsigned c,
							    void *p)
{
	unsigned i = random_slot(&h->cls[c].rng);
	void *out = h->slot[c][i];

	h->slot[c][i] = p;
	if (__builtin_expect(out != NULL, 1))
		heap_base_free(c, &h->free[c], out);
}

/*
 * A thread that has given its heap back (in glibc's thread-exit code, after
 * the key destructors ran) uses one shared heap, under the lock: taking a
 * heap again there would leak it, as no destructor runs any more.
 */
static struct thread_heap *lock_orphans(void)
{
	heap_lock(&heaps_lock);
	if (!orphans)
		orphans = new_heap(UINT64_MAX);
	return orphans;
}

void *heap_shuffle_malloc(unsigned c)
{
	struct thread_heap *h = current_heap;
	void *p = NULL;

	if (__builtin_expect(h != NULL, 1))
		return malloc_from(h, c);
	if (heap_released) {
		if ((h = lock_orphans()))
			p = malloc_from(h, c);
		heap_unlock(&heaps_lock);
		return p;
	}
	h = acquire_heap();
	return h ? malloc_from(h, c) : NULL;
}

void heap_shuffle_free(unsigned c, void *p)
{
	struct thread_heap *h = current_heap;

	if (__builtin_expect(h != NULL, 1)) {
		free_into(h, c, p);
		return;
	}
	if (heap_released) {
		if ((h = lock_orphans()))
			free_into(h, c, p);
		heap_unlock(&heaps_lock);
		return;
	}
	h = acquire_heap();
	if (h) /* else no memory for a heap: the object is lost, not corrupted */
		free_into(h, c, p);
}
void heap_shuffle_lock_all(void)
{
	heap_lock(&heaps_lock);
	heap_base_lock_all();
}

void heap_shuffle_unlock_all(void)
{
	heap_base_unlock_all();
	heap_unlock(&heaps_lock);
}

void heap_shuffle_reset_locks(void)
{
	heap_base_reset_locks();
	heap_lock_reset(&heaps_lock);
}

void heap_shuffle_reseed_child(void)
{
	struct thread_heap *h = current_heap;

	/* Parent and child hold the same state; only the child jumps away. */
	for (unsigned c = 0; h && c < HEAP_N_CLASSES; c++) {
		struct shuffle_class *s = &h->cls[c];

		rng_seed(&s->rng, rng_next(&s->rng) ^ 0xc4ceb9fe1a85ec53ULL);
		rng_seed(&s->malloc_rng, rng_next(&s->malloc_rng) ^ 0x94d049bb133111ebULL);
		s->next = random_slot(&s->malloc_rng);
	}
}
