/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The base allocator under the shuffling layer: size classes, each with its
 * own part of one reserved region, carved into slabs.
 *
 * Size classes: multiples of 16 up to 128 bytes, then four per power of two
 * up to 256 KiB (160, 192, 224, 256, 320, ...): at most 25% of an object is
 * rounding waste, where the paper's power-of-two classes waste up to 50%
 * (its cactusADM overhead).
 *
 * The region is reserved PROT_NONE (no commit charge, whatever the
 * overcommit policy) and each slab is made read-write when it is started.
 * Because class c owns [region + c * CLASS_SPAN, region + (c + 1) * CLASS_SPAN)
 * and slabs are whole numbers of objects, free() finds a pointer's class and
 * object start by arithmetic, with no header: interior pointers of aligned
 * allocations work too.
 *
 * The region starts at a 1 GiB boundary, so that address bits 0-29 of every
 * object depend only on the seed and the program's allocations, not on
 * where ASLR put the mapping: a seed reproduces the cache-index bits.
 *
 * A slab spans at least 256 KiB (address bits 0-17) and holds at least
 * HEAP_SHUFFLE_N objects. Its objects are handed out in the order of a
 * bijection of the slot numbers keyed from the class's random stream, so
 * fresh objects are spread over the slab; freed objects are reused last-in
 * first-out, as in the paper's base (a bump allocator with free lists),
 * leaving it to the shuffling layer to randomize reuse.
 *
 * Threads: each thread keeps its own free list per class (no locking). A
 * thread that runs out takes a batch from the class's depot or carves a
 * batch of fresh objects, under the class lock; one that holds more than
 * LOCAL_MAX passes a batch to the depot, so memory freed by one thread and
 * allocated by another flows back.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stabilizer/runtime/heap.h"

#define CLASS_SPAN     (1ULL << 33) /* 8 GiB of address space per class */
#define REGION_ALIGN   (1ULL << 30) /* where the region starts */
#define SLAB_MIN_BYTES (256u * 1024u)
#define PERMUTE_ROUNDS 3
#define BATCH	       HEAP_BATCH /* objects moved between a thread and its class at once */
#define LOCAL_MAX      512 /* a thread's free objects of one class before it gives some back */

/* Objects are at least 16 bytes: a free one holds two links. */
struct free_object {
	struct free_object *next;	/* in a free list or batch */
	struct free_object *next_batch; /* in the depot, on a batch's first object */
};

struct base_class {
	struct heap_lock lock; /* everything below but size, start and slab_objects/bits */
	size_t size;
	char *start;	 /* of the class's span */
	char *next_slab; /* where the next slab begins */
	char *slab;	 /* the slab being carved */
	size_t slab_objects;
	unsigned slab_bits; /* slab_objects <= 2^slab_bits < 2 * slab_objects */
	uint64_t slab_next; /* next input of the bijection, < 2^slab_bits */
	uint64_t mul[PERMUTE_ROUNDS], add[PERMUTE_ROUNDS];
	struct rng rng;
	struct free_object *depot; /* batches of BATCH objects */
} __attribute__((aligned(64)));

static char *region;
static struct base_class classes[HEAP_N_CLASSES];
static size_t page_size = 4096;

size_t heap_class_size(unsigned c)
{
	unsigned k, j;

	if (c < 8)
		return 16u * (c + 1);
	k = 7 + (c - 8) / 4;
	j = 1 + (c - 8) % 4;
	return ((size_t)1 << k) + j * ((size_t)1 << (k - 2));
}

unsigned heap_class_of_size(size_t n)
{
	unsigned k;
	size_t quarter;

	if (n <= 128)
		return n ? (unsigned)((n + 15) / 16 - 1) : 0;
	k = 63 - (unsigned)__builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
	quarter = (size_t)1 << (k - 2);
	return 8 + (k - 7) * 4 + (unsigned)((n - ((size_t)1 << k) + quarter - 1) / quarter) - 1;
}

int heap_base_init(void)
{
	size_t size = HEAP_N_CLASSES * CLASS_SPAN;
	char *p, *aligned;
	long ps = sysconf(_SC_PAGESIZE);

	if (ps > 0)
		page_size = (size_t)ps;
	p = mmap(NULL, size + REGION_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return -1;
	aligned = (char *)(((uintptr_t)p + REGION_ALIGN - 1) & ~(uintptr_t)(REGION_ALIGN - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	munmap(aligned + size, (size_t)(p + REGION_ALIGN - aligned));
	region = aligned;
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++) {
		struct base_class *b = &classes[c];
		size_t n;

		b->size = heap_class_size(c);
		b->start = region + c * CLASS_SPAN;
		b->next_slab = b->start;
		n = (SLAB_MIN_BYTES + b->size - 1) / b->size;
		b->slab_objects = n < HEAP_SHUFFLE_N ? HEAP_SHUFFLE_N : n;
		b->slab_bits = 64 - (unsigned)__builtin_clzll(b->slab_objects - 1);
	}
	return 0;
}

bool heap_base_owns(const void *p)
{
	return region && (const char *)p >= region &&
	       (const char *)p < region + HEAP_N_CLASSES * CLASS_SPAN;
}

unsigned heap_class_of_ptr(const void *p)
{
	return (unsigned)(((const char *)p - region) / CLASS_SPAN);
}

void *heap_object_start(const void *p, unsigned c)
{
	const struct base_class *b = &classes[c];
	size_t offset = (size_t)((const char *)p - b->start);

	return b->start + offset / b->size * b->size;
}

/* A bijection of [0, 2^bits): rounds of odd multiply, xor-shift and add, all invertible. */
static uint64_t slab_permute(const struct base_class *b, uint64_t x)
{
	uint64_t mask = ((uint64_t)1 << b->slab_bits) - 1;
	unsigned shift = b->slab_bits / 2 + 1;

	for (int r = 0; r < PERMUTE_ROUNDS; r++) {
		x = (x * b->mul[r]) & mask;
		x ^= x >> shift;
		x = (x + b->add[r]) & mask;
	}
	return x;
}

static int start_slab(struct base_class *b, struct rng *r)
{
	size_t bytes = b->slab_objects * b->size;
	uintptr_t lo, hi;

	if (b->next_slab + bytes > b->start + CLASS_SPAN)
		return -1;
	lo = (uintptr_t)b->next_slab & ~(uintptr_t)(page_size - 1);
	hi = ((uintptr_t)b->next_slab + bytes + page_size - 1) & ~(uintptr_t)(page_size - 1);
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
		return -1;
	b->slab = b->next_slab;
	b->next_slab += bytes;
	b->slab_next = 0;
	for (int i = 0; i < PERMUTE_ROUNDS; i++) {
		b->mul[i] = rng_next(r) | 1;
		b->add[i] = rng_next(r);
	}
	return 0;
}

void heap_base_seed(uint64_t seed)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		rng_seed(&classes[c].rng, seed + 0x9e3779b97f4a7c15ULL * (c + 1));
}

/* The next fresh object of the class (lock held), or NULL. */
static void *carve(struct base_class *b)
{
	for (;;) {
		while (b->slab && b->slab_next < ((uint64_t)1 << b->slab_bits)) {
			uint64_t slot = slab_permute(b, b->slab_next++);

			if (slot < b->slab_objects)
				return b->slab + slot * b->size;
		}
		if (start_slab(b, &b->rng))
			return NULL;
	}
}

static void local_push(struct heap_free_list *local, struct free_object *o)
{
	o->next = local->head;
	local->head = o;
	local->count++;
}

/* Give local a batch from the depot, or up to BATCH fresh objects. */
static void refill(struct base_class *b, struct heap_free_list *local)
{
	struct free_object *batch;

	heap_lock(&b->lock);
	batch = b->depot;
	if (batch) {
		b->depot = batch->next_batch;
		heap_unlock(&b->lock);
		local->head = batch;
		local->count = BATCH;
		return;
	}
	/* stored in reverse, so they are handed out in the bijection's order */
	{
		void *fresh[BATCH];
		unsigned n = 0;

		while (n < BATCH && (fresh[n] = carve(b)))
			n++;
		heap_unlock(&b->lock);
		for (unsigned i = 0; i < n; i++)
			local->fresh[i] = fresh[n - 1 - i];
		local->n_fresh = n;
	}
}

void *heap_base_malloc(unsigned c, struct heap_free_list *local)
{
	struct free_object *o;

	if (!local->head && !local->n_fresh)
		refill(&classes[c], local);
	o = local->head;
	if (o) {
		local->head = o->next;
		local->count--;
		return o;
	}
	return local->n_fresh ? local->fresh[--local->n_fresh] : NULL;
}

/* Move the BATCH most recently freed objects of local to the depot. */
static void spill(struct base_class *b, struct heap_free_list *local)
{
	struct free_object *first = local->head, *last = first;

	for (int i = 1; i < BATCH; i++)
		last = last->next;
	local->head = last->next;
	local->count -= BATCH;
	last->next = NULL;
	heap_lock(&b->lock);
	first->next_batch = b->depot;
	b->depot = first;
	heap_unlock(&b->lock);
}

void heap_base_free(unsigned c, struct heap_free_list *local, void *p)
{
	local_push(local, p);
	if (local->count > LOCAL_MAX)
		spill(&classes[c], local);
}

void heap_base_lock_all(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		heap_lock(&classes[c].lock);
}

void heap_base_unlock_all(void)
{
	for (unsigned c = HEAP_N_CLASSES; c-- > 0;)
		heap_unlock(&classes[c].lock);
}

void heap_base_reset_locks(void)
{
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++)
		heap_lock_reset(&classes[c].lock);
}
