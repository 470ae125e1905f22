/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling heap of liblever-stabilizer.so (spec §4.2, paper §3.2), in
 * three layers:
 *
 *   heap_api.c      malloc, free, calloc, realloc, the aligned family and
 *                   malloc_usable_size; decides once whether the heap is on
 *                   (else everything goes to glibc's __libc_* functions)
 *   heap_shuffle.c  per thread and size class an array of N = 256 objects;
 *                   every malloc and free is one step of the inside-out
 *                   Fisher-Yates shuffle, without locks
 *   heap_base.c     the deterministic-reuse base: size classes carved from
 *                   slabs in one reserved region, a LIFO stack of free
 *                   objects per thread and class, a shared depot per class
 *                   (locked) that gives whole free pages back to the system
 *   heap_large.c    allocations above HEAP_SMALL_MAX: a mapping each, the
 *                   recently freed ones kept for reuse within a byte budget
 */
#ifndef LEVER_STABILIZER_HEAP_H
#define LEVER_STABILIZER_HEAP_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>

#include "base/base.h"

#define HEAP_ALIGN     16u /* alignof(max_align_t) on x86-64 */
#define HEAP_SHUFFLE_N 256u
#define HEAP_SMALL_MAX (256u * 1024u)
#define HEAP_N_CLASSES 52u

/*
 * A test-and-test-and-set lock: one atomic exchange to take it, a release
 * store to drop it, waiters yield. While the process has one thread (glibc's
 * __libc_single_threaded: false before a second thread starts, never true
 * again) nobody can race, and locking is skipped: even one atomic exchange
 * waits for the stores before it to drain.
 */
struct heap_lock {
	atomic_bool held;
};

static inline void heap_lock(struct heap_lock *l)
{
	if (__libc_single_threaded)
		return;
	while (atomic_exchange_explicit(&l->held, true, memory_order_acquire)) {
		for (int spin = 0; atomic_load_explicit(&l->held, memory_order_relaxed); spin++)
			if (spin > 100)
				sched_yield();
	}
}

static inline void heap_unlock(struct heap_lock *l)
{
	if (!__libc_single_threaded)
		atomic_store_explicit(&l->held, false, memory_order_release);
}

static inline void heap_lock_reset(struct heap_lock *l)
{
	atomic_store_explicit(&l->held, false, memory_order_relaxed);
}

/*
 * One thread's free objects of one size class: a stack of pointers, not a
 * list threaded through the objects, so that freeing never writes to an
 * object (its cache line is usually cold) and free objects hold no links
 * that returning their pages to the system would destroy.
 */
#define HEAP_LOCAL_CAP 64
struct heap_free_list {
	unsigned count;
	void *obj[HEAP_LOCAL_CAP]; /* obj[count - 1] is handed out next */
};

/* ------------------------------------------------------------ heap_base.c */

#define HEAP_CLASS_SPAN (1ULL << 33) /* 8 GiB of address space per class */

/*
 * What malloc's and free's fast paths need of a class, constant after
 * heap_base_init: they are inline below, so that one malloc or free is one
 * call into the library, not seven (issue 14 point 14).
 */
struct heap_class_info {
	uint64_t size;
	uint64_t inverse;     /* ceil(2^64 / size): offset / size is a multiply-high */
	unsigned local_limit; /* of a thread's free stack for this class */
};
extern char *heap_region; /* class c owns [c * HEAP_CLASS_SPAN, +HEAP_CLASS_SPAN) of it */
extern struct heap_class_info heap_info[HEAP_N_CLASSES];

/* Reserve the region for the size classes; 0, or -1 if mmap refused. */
int heap_base_init(void);
size_t heap_class_size(unsigned c);

/*
 * The size class of a request of n bytes, 1 <= n <= HEAP_SMALL_MAX:
 * multiples of 16 up to 128, then four classes per power of two.
 */
static inline unsigned heap_class_of_size(size_t n)
{
	unsigned k;
	size_t quarter;

	if (n <= 128)
		return n ? (unsigned)((n + 15) / 16 - 1) : 0;
	k = 63 - (unsigned)__builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
	quarter = (size_t)1 << (k - 2);
	return 8 + (k - 7) * 4 + (unsigned)((n - ((size_t)1 << k) + quarter - 1) / quarter) - 1;
}

/* Is p inside the size-class region? Then c and the object's start. */
static inline bool heap_base_owns(const void *p)
{
	return heap_region &&
	       (uintptr_t)p - (uintptr_t)heap_region < HEAP_N_CLASSES * HEAP_CLASS_SPAN;
}

static inline unsigned heap_class_of_ptr(const void *p)
{
	return (unsigned)(((uintptr_t)p - (uintptr_t)heap_region) / HEAP_CLASS_SPAN);
}

/*
 * offset / size as the multiply-high of offset and ceil(2^64 / size): the
 * inverse errs by less than 1, which adds less than offset / 2^64 to the
 * exact quotient, below the 1 / size that separates it from the next integer
 * while offset * size < 2^64 (here offset < 2^33, size <= 2^18).
 */
static inline void *heap_object_start(const void *p, unsigned c)
{
	const struct heap_class_info *k = &heap_info[c];
	uint64_t offset = (uintptr_t)p - (uintptr_t)heap_region - c * HEAP_CLASS_SPAN;
	uint64_t index = (uint64_t)(((unsigned __int128)offset * k->inverse) >> 64);

	return heap_region + c * HEAP_CLASS_SPAN + index * k->size;
}

/* Keys of the slab bijections come from per-class streams of this seed. */
void heap_base_seed(uint64_t seed);
/* The slow paths of the two below: local empty, local full. */
void *heap_base_refill(unsigned c, struct heap_free_list *local);
void heap_base_spill(unsigned c, struct heap_free_list *local);

/*
 * One object of class c for the thread owning `local`, or NULL when the
 * region is exhausted: from local, else a batch from the class's depot, else
 * fresh objects of the class's current slab, which come in the order of a
 * seeded bijection of its slots. Freed objects go to local, last-in
 * first-out; a thread with too many passes its oldest half to the depot,
 * which returns pages holding only free objects to the system (madvise).
 */
static inline void *heap_base_malloc(unsigned c, struct heap_free_list *local)
{
	if (__builtin_expect(local->count != 0, 1))
		return local->obj[--local->count];
	return heap_base_refill(c, local);
}

static inline void heap_base_free(unsigned c, struct heap_free_list *local, void *p)
{
	if (__builtin_expect(local->count >= heap_info[c].local_limit, 0))
		heap_base_spill(c, local);
	local->obj[local->count++] = p;
}

/* Fork: the class locks, taken before and released or reset after. */
void heap_base_lock_all(void);
/* Bytes of class memory given back to the system so far (for tests). */
size_t heap_base_purged_bytes(void);
void heap_base_unlock_all(void);
void heap_base_reset_locks(void);

/* ------------------------------------------------------------ heap_large.c */

/*
 * A mapping of its own for size bytes aligned to align (a power of two >= 16),
 * possibly a recently freed one: zeroed then only if zero is set.
 */
void *heap_large_alloc(size_t size, size_t align, bool zero);
/* Bytes of freed mappings kept for reuse (for tests). */
size_t heap_large_cached_bytes(void);
/* Fork: the cache's lock. */
void heap_large_lock_all(void);
void heap_large_unlock_all(void);
void heap_large_reset_locks(void);
/* Does p carry a large-allocation header? (p not in the base region) */
bool heap_large_owns(const void *p);
void heap_large_free(void *p);
size_t heap_large_usable(const void *p);
/* Resize in place or move the mapping (mremap); NULL if out of memory. */
void *heap_large_realloc(void *p, size_t size);
void heap_large_seed(uint64_t seed);

/* ------------------------------------------------------------ heap_shuffle.c */

void heap_shuffle_init(uint64_t seed);
/* An object of class c, chosen at random among N buffered; NULL if out of memory. */
void *heap_shuffle_malloc(unsigned c);
/* Put p (the start of an object of class c) into the buffer; free the one it evicts. */
void heap_shuffle_free(unsigned c, void *p);
/* Fork: every lock taken before, released (parent) or reset (child) after. */
void heap_shuffle_lock_all(void);
void heap_shuffle_unlock_all(void);
void heap_shuffle_reset_locks(void);
/* The child of a fork draws from streams of its own. */
void heap_shuffle_reseed_child(void);

#endif
