/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An allocator defined in the executable itself (a bump allocator over a
 * static arena, never reusing memory), as programs that link jemalloc or
 * tcmalloc statically have: it comes before liblever-annotate.so in symbol
 * lookup, so the mem metric cannot see its calls, and the runtime must say so
 * (tests/e2e/annotate_metrics.sh, with metrics_known.c). It defines the
 * whole C allocation API, as a real replacement must.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define HEADER 16 /* the block's size, in the 8 bytes before it */

static char arena[1 << 24] __attribute__((aligned(4096)));
static size_t arena_used;

static void *arena_alloc(size_t n, size_t align)
{
	size_t start;

	if (align < HEADER)
		align = HEADER;
	start = (arena_used + HEADER + align - 1) & ~(align - 1);
	if (n > sizeof(arena) || start + n > sizeof(arena)) {
		errno = ENOMEM;
		return NULL;
	}
	arena_used = start + n;
	memcpy(arena + start - sizeof(size_t), &n, sizeof(n));
	return arena + start;
}

static size_t block_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

void *malloc(size_t n)
{
	return arena_alloc(n, 0);
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t count, size_t size)
{
	size_t n;

	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return arena_alloc(n, 0); /* the arena is never reused: already zero */
}

void *realloc(void *p, size_t n)
{
	void *q = arena_alloc(n, 0);

	if (q && p)
		memcpy(q, p, block_size(p) < n ? block_size(p) : n);
	return q;
}

void *memalign(size_t align, size_t n)
{
	return arena_alloc(n, align);
}

void *aligned_alloc(size_t align, size_t n)
{
	return arena_alloc(n, align);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = arena_alloc(n, align);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

size_t malloc_usable_size(void *p)
{
	return p ? block_size(p) : 0;
}
