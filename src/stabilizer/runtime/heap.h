/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling heap of liblever-stabilizer.so (spec §4.2, paper §3.2), in
 * three layers:
 *
 *   heap_api.c      malloc, free, calloc, realloc, the aligned family and
 *                   malloc_usable_size; decides once whether the heap is on
 *                   (else everything goes to glibc's __libc_* functions)
 *   heap_shuffle.c  per size class an array of N = 256 objects; every malloc
 *                   and free is one step of the inside-out Fisher-Yates
 *                   shuffle; one lock per size class
 *   heap_base.c     the deterministic-reuse base: size classes carved from
 *                   slabs in one reserved region, LIFO free lists
 *   heap_large.c    allocations above HEAP_SMALL_MAX: one mmap each
 */
#ifndef LEVER_STABILIZER_HEAP_H
#define LEVER_STABILIZER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define HEAP_ALIGN     16u /* alignof(max_align_t) on x86-64 */
#define HEAP_SHUFFLE_N 256u
#define HEAP_SMALL_MAX (256u * 1024u)
#define HEAP_N_CLASSES 52u

/* ------------------------------------------------------------ heap_base.c */

/* Reserve the region for the size classes; 0, or -1 if mmap refused. */
int heap_base_init(void);
/* The size class of a request of n bytes, 1 <= n <= HEAP_SMALL_MAX. */
unsigned heap_class_of_size(size_t n);
size_t heap_class_size(unsigned c);
/* Is p inside the size-class region? Then c and the object's start. */
bool heap_base_owns(const void *p);
unsigned heap_class_of_ptr(const void *p);
void *heap_object_start(const void *p, unsigned c);
/*
 * One object of class c, or NULL when its region is exhausted; free it back
 * with heap_base_free. The caller holds class c's lock (heap_shuffle.c).
 * Fresh objects of a slab come in an order given by a seeded bijection
 * (keys from r), reused ones last-in first-out.
 */
void *heap_base_malloc(unsigned c, struct rng *r);
void heap_base_free(unsigned c, void *p);

/* ------------------------------------------------------------ heap_large.c */

/* A mapping of its own for size bytes aligned to align (a power of two >= 16). */
void *heap_large_alloc(size_t size, size_t align);
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
/* Fork: take every class lock before, release (parent) or re-create (child) after. */
void heap_shuffle_lock_all(void);
void heap_shuffle_unlock_all(void);
void heap_shuffle_reset_locks(void);
/* The child of a fork draws from streams of its own. */
void heap_shuffle_reseed_child(void);

#endif
