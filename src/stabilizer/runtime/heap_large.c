/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Allocations above HEAP_SMALL_MAX: one anonymous mapping each, as the paper
 * leaves large objects unsplit (spec §5). A 16-byte header just below the
 * returned pointer gives the mapping's size and the pointer's offset in it.
 * With the default alignment the offset is a random multiple of 16 within the
 * first page, so that even large objects get random cache-index bits 4-11.
 *
 * Freed mappings are kept, CACHE_BYTES in all, as runs of pages: a request
 * takes the smallest run that holds it, cut to its size (the rest stays
 * kept: its pages are in memory already), and a freed run joins the kept
 * runs next to it. A program that frees and allocates large buffers in a
 * loop paid an mmap, a page fault per page and a munmap every time (30
 * times glibc's time, which reuses its heap); keeping whole mappings for
 * requests of at least half their size still kept one of each size range
 * in memory (3.5 times glibc's peak on 300 KiB-2 MiB buffers). When no run
 * is large enough, the runs smaller than the request are given back first:
 * they can serve only smaller requests, which the new mapping serves too
 * once freed. A reused run gets a new random offset; its old contents stay
 * unless the caller asks for zeroes (calloc).
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "stabilizer/runtime/heap.h"

#define LARGE_MAGIC 0x5354424cu /* "STBL" */
#define PAGE	    4096u

struct large_header {
	uint64_t map_size;
	uint32_t offset;
	uint32_t magic;
};

#define CACHE_SLOTS 8
#define CACHE_BYTES ((size_t)32 << 20)
/* a cut leaving less than this gives the whole run (no slivers of runs) */
#define CACHE_SLIVER ((size_t)64 << 10)

struct cached_map {
	char *map;
	size_t size;
};

static struct heap_lock cache_lock;	     /* the three below */
static struct cached_map cache[CACHE_SLOTS]; /* oldest first */
static unsigned cache_n;
static size_t cache_bytes;

static _Atomic uint64_t offset_counter;
static uint64_t offset_key;

void heap_large_seed(uint64_t seed)
{
	offset_key = seed;
}

/* A random page offset in 16-byte units, 1..255, without locks (a counter hashed). */
static size_t random_offset(void)
{
	uint64_t x =
	    atomic_fetch_add_explicit(&offset_counter, 1, memory_order_relaxed) + offset_key;
	struct rng r;

	rng_seed(&r, x);
	return (size_t)(1 + rng_next(&r) % 255) * 16;
}

static struct large_header *header_of(const void *p)
{
	return (struct large_header *)((char *)p - sizeof(struct large_header));
}

/* Under cache_lock: forget run i (its pages stay mapped). */
static void cache_drop(unsigned i)
{
	cache_bytes -= cache[i].size;
	memmove(cache + i, cache + i + 1, (cache_n - i - 1) * sizeof(cache[0]));
	cache_n--;
}

/* Under cache_lock: give run i back to the kernel. */
static void cache_unmap(unsigned i)
{
	munmap(cache[i].map, cache[i].size);
	cache_drop(i);
}

/*
 * The smallest kept run of at least *need bytes, cut to *need (or whole,
 * its size in *need, when the rest would be a sliver). NULL if none, after
 * giving back the runs smaller than *need.
 */
static char *cache_take(size_t *need)
{
	unsigned best = CACHE_SLOTS;
	char *map;

	heap_lock(&cache_lock);
	for (unsigned i = 0; i < cache_n; i++)
		if (cache[i].size >= *need &&
		    (best == CACHE_SLOTS || cache[i].size < cache[best].size))
			best = i;
	if (best == CACHE_SLOTS) {
		for (unsigned i = cache_n; i-- > 0;)
			if (cache[i].size < *need)
				cache_unmap(i);
		heap_unlock(&cache_lock);
		return NULL;
	}
	map = cache[best].map;
	if (cache[best].size - *need < CACHE_SLIVER) {
		*need = cache[best].size;
		cache_drop(best);
	} else {
		cache[best].map += *need;
		cache[best].size -= *need;
		cache_bytes -= *need;
	}
	heap_unlock(&cache_lock);
	return map;
}

/* Keep a freed run, joined to the kept runs next to it, within the budget. */
static bool cache_put(char *map, size_t size)
{
	if (size > CACHE_BYTES)
		return false;
	heap_lock(&cache_lock);
	for (unsigned i = cache_n; i-- > 0;) {
		if (cache[i].map + cache[i].size == map) {
			map = cache[i].map;
			size += cache[i].size;
			cache_drop(i);
		} else if (map + size == cache[i].map) {
			size += cache[i].size;
			cache_drop(i);
		}
	}
	while (cache_n && (cache_n == CACHE_SLOTS || cache_bytes + size > CACHE_BYTES))
		cache_unmap(0);
	if (size > CACHE_BYTES) {
		heap_unlock(&cache_lock);
		munmap(map, size);
		return true;
	}
	cache[cache_n].map = map;
	cache[cache_n].size = size;
	cache_n++;
	cache_bytes += size;
	heap_unlock(&cache_lock);
	return true;
}

size_t heap_large_cached_bytes(void)
{
	return cache_bytes;
}

void *heap_large_alloc(size_t size, size_t align, bool zero)
{
	size_t offset = align <= HEAP_ALIGN ? random_offset() : align;
	size_t need;
	char *map, *user;
	struct large_header *h;
	bool reused = false;

	if (align >
	    PAGE) /* a page-aligned mapping; the aligned point may be up to align - PAGE in */
		offset = align;
	if (size > SIZE_MAX - offset - PAGE)
		return NULL;
	need = (size + offset + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (align > PAGE)
		need += align;
	map = align <= PAGE ? cache_take(&need) : NULL;
	if (map)
		reused = true;
	else
		map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	user = map + offset;
	if (align > PAGE)
		user =
		    (char *)(((uintptr_t)map + sizeof(*h) + align - 1) & ~(uintptr_t)(align - 1));
	h = header_of(user);
	h->map_size = need;
	h->offset = (uint32_t)(user - map);
	h->magic = LARGE_MAGIC;
	if (reused && zero)
		memset(user, 0, size);
	return user;
}

bool heap_large_owns(const void *p)
{
	/* The 16 bytes below any heap pointer are readable (ours or glibc's chunk header). */
	return header_of(p)->magic == LARGE_MAGIC;
}

void heap_large_free(void *p)
{
	struct large_header *h = header_of(p);

	h->magic = 0;
	if (!cache_put((char *)p - h->offset, h->map_size))
		munmap((char *)p - h->offset, h->map_size);
}

size_t heap_large_usable(const void *p)
{
	const struct large_header *h = header_of(p);

	return h->map_size - h->offset;
}

void *heap_large_realloc(void *p, size_t size)
{
	struct large_header *h = header_of(p);
	size_t offset = h->offset, need;
	char *map = (char *)p - offset, *moved;

	if (size > SIZE_MAX - offset - PAGE)
		return NULL;
	need = (size + offset + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (need == h->map_size)
		return p;
	moved = mremap(map, h->map_size, need, MREMAP_MAYMOVE);
	if (moved == MAP_FAILED) {
		/* a run joined from two mappings the kernel kept apart cannot be remapped */
		void *q = heap_large_alloc(size, HEAP_ALIGN, false);
		size_t have = h->map_size - offset;

		if (!q)
			return NULL;
		memcpy(q, p, size < have ? size : have);
		heap_large_free(p);
		return q;
	}
	h = (struct large_header *)(moved + offset - sizeof(*h));
	h->map_size = need;
	return moved + offset;
}

void heap_large_lock_all(void)
{
	heap_lock(&cache_lock);
}

void heap_large_unlock_all(void)
{
	heap_unlock(&cache_lock);
}

void heap_large_reset_locks(void)
{
	heap_lock_reset(&cache_lock);
}
