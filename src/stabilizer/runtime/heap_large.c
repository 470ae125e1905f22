/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Allocations above HEAP_SMALL_MAX: one anonymous mapping each, as the paper
 * leaves large objects unsplit (spec §5). A 16-byte header just below the
 * returned pointer gives the mapping's size and the pointer's offset in it.
 * With the default alignment the offset is a random multiple of 16 within the
 * first page, so that even large objects get random cache-index bits 4-11.
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

void *heap_large_alloc(size_t size, size_t align)
{
	size_t offset = align <= HEAP_ALIGN ? random_offset() : align;
	size_t need;
	char *map, *user;
	struct large_header *h;

	if (align >
	    PAGE) /* a page-aligned mapping; the aligned point may be up to align - PAGE in */
		offset = align;
	if (size > SIZE_MAX - offset - PAGE)
		return NULL;
	need = (size + offset + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (align > PAGE)
		need += align;
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
	if (moved == MAP_FAILED)
		return NULL;
	h = (struct large_header *)(moved + offset - sizeof(*h));
	h->map_size = need;
	return moved + offset;
}
