/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The mem metric (spec/freud.md §4.2.2: "total amount of bytes of heap
 * memory allocated by a method ... for all objects created during the
 * execution of the method"): the whole C allocation API, interposed in
 * front of the next allocator (glibc's, or jemalloc/tcmalloc when the
 * program links one), adds the bytes each successful call allocates to the
 * calling thread's counter. Frees are not counted: the metric is gross
 * allocation, as in the seed (a peak or net figure would need them).
 *
 *   malloc, calloc            the bytes asked for
 *   realloc, reallocarray     the growth: new size minus the old block's
 *                             usable size, 0 when shrinking (a moved block
 *                             is not new memory for the program)
 *   memalign, aligned_alloc,  the bytes asked for
 *   posix_memalign, valloc
 *   pvalloc                   the size rounded up to a page, which is what
 *                             pvalloc allocates
 *
 * A call that an outer interposed call made (reallocarray → realloc in some
 * allocators, operator new → malloc) is counted once: ann_count_alloc.
 * Failed calls count nothing; errno and return values are the real ones.
 *
 * Bootstrap: until the real functions are found, dlsym's own allocations
 * (and any made while it runs) come from a static buffer that is never
 * reused; free ignores its blocks and realloc moves them out.
 *
 * Not seen: an allocator linked into the executable itself (the executable
 * comes before preloaded libraries in symbol lookup), and fully static
 * binaries.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/runtime/metrics_internal.h"

#define BOOTSTRAP_SIZE	 (1u << 16)
#define BOOTSTRAP_HEADER 16 /* the block's size, in the 8 bytes before it */

static char bootstrap[BOOTSTRAP_SIZE] __attribute__((aligned(4096)));
static _Atomic size_t bootstrap_used;

static bool in_bootstrap(const void *p)
{
	return (const char *)p >= bootstrap && (const char *)p < bootstrap + BOOTSTRAP_SIZE;
}

/* Zeroed memory (the buffer is never reused), or NULL with ENOMEM when it is full. */
static void *bootstrap_alloc(size_t n, size_t align)
{
	size_t used = atomic_load(&bootstrap_used), start;

	if (align < BOOTSTRAP_HEADER)
		align = BOOTSTRAP_HEADER;
	do {
		start = (used + BOOTSTRAP_HEADER + align - 1) & ~(align - 1);
		if (align > BOOTSTRAP_SIZE || n > BOOTSTRAP_SIZE || start + n > BOOTSTRAP_SIZE) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!atomic_compare_exchange_weak(&bootstrap_used, &used, start + n));
	memcpy(bootstrap + start - sizeof(size_t), &n, sizeof(n));
	return bootstrap + start;
}

static size_t bootstrap_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/*
 * One lazily resolved real function: NAME_real() is the next object's NAME,
 * or NULL while this thread is inside dlsym.
 */
#define REAL(name, type)                                                                           \
	static type name##_ptr;                                                                    \
	static type name##_real(void)                                                              \
	{                                                                                          \
		type p = __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED);                           \
		if (!p && !ann_resolving()) {                                                      \
			p = (type)ann_real_symbol(#name, NULL);                                    \
			__atomic_store_n(&name##_ptr, p, __ATOMIC_RELAXED);                        \
		}                                                                                  \
		return p;                                                                          \
	}

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*reallocarray_fn)(void *, size_t, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*valloc_fn)(size_t);
typedef size_t (*usable_fn)(void *);

REAL(malloc, malloc_fn)
REAL(calloc, calloc_fn)
REAL(realloc, realloc_fn)
REAL(reallocarray, reallocarray_fn)
REAL(free, free_fn)
REAL(memalign, memalign_fn)
REAL(aligned_alloc, memalign_fn)
REAL(posix_memalign, posix_memalign_fn)
REAL(valloc, valloc_fn)
REAL(pvalloc, valloc_fn)
REAL(malloc_usable_size, usable_fn)

static size_t page_size = 4096;

__attribute__((constructor(101))) static void interpose_malloc_resolve(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	if (ps > 0)
		page_size = (size_t)ps;
	(void)malloc_real();
	(void)calloc_real();
	(void)realloc_real();
	(void)reallocarray_real();
	(void)free_real();
	(void)memalign_real();
	(void)aligned_alloc_real();
	(void)posix_memalign_real();
	(void)valloc_real();
	(void)pvalloc_real();
	(void)malloc_usable_size_real();
}

ANN_EXPORT void *malloc(size_t n)
{
	malloc_fn real = malloc_real();
	uint64_t before = ann_counters.mem;
	void *p;

	if (!real)
		return bootstrap_alloc(n, 0);
	p = real(n);
	if (p)
		ann_count_alloc(before, n);
	return p;
}

ANN_EXPORT void *calloc(size_t count, size_t size)
{
	calloc_fn real = calloc_real();
	uint64_t before = ann_counters.mem;
	size_t n;
	void *p;

	if (!real) {
		if (__builtin_mul_overflow(count, size, &n)) {
			errno = ENOMEM;
			return NULL;
		}
		return bootstrap_alloc(n, 0);
	}
	p = real(count, size);
	if (p)
		ann_count_alloc(before, (uint64_t)count * size);
	return p;
}

ANN_EXPORT void free(void *p)
{
	free_fn real;

	if (!p || in_bootstrap(p))
		return;
	real = free_real();
	if (real)
		real(p);
}

/* The usable size of a block about to be resized (0 for NULL). */
static size_t old_size(void *p)
{
	usable_fn usable;

	if (!p)
		return 0;
	usable = malloc_usable_size_real();
	return usable ? usable(p) : 0;
}

/* realloc of a bootstrap block: a new real block with the old contents. */
static void *move_out_of_bootstrap(void *p, size_t n)
{
	size_t old = bootstrap_size(p);
	void *q = malloc(n); /* counts n */

	if (q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

ANN_EXPORT void *realloc(void *p, size_t n)
{
	realloc_fn real;
	uint64_t before = ann_counters.mem;
	size_t old;
	void *q;

	if (p && in_bootstrap(p))
		return move_out_of_bootstrap(p, n);
	real = realloc_real();
	if (!real)
		return p ? NULL : bootstrap_alloc(n, 0);
	old = old_size(p);
	q = real(p, n);
	if (q && n > old)
		ann_count_alloc(before, n - old);
	return q;
}

ANN_EXPORT void *reallocarray(void *p, size_t count, size_t size)
{
	reallocarray_fn real = reallocarray_real();
	uint64_t before = ann_counters.mem;
	size_t n, old;
	void *q;

	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM; /* what the real one does, without asking it */
		return NULL;
	}
	if (!real || (p && in_bootstrap(p)))
		return realloc(p, n);
	old = old_size(p);
	q = real(p, count, size);
	if (q && n > old)
		ann_count_alloc(before, n - old);
	return q;
}

/*
 * memalign and aligned_alloc take the same arguments and count the same
 * bytes; only the real function differs (REAL: null while dlsym is still
 * resolving it).
 */
static inline void *aligned_through(memalign_fn real, size_t align, size_t n)
{
	uint64_t before = ann_counters.mem;
	void *p;

	if (!real)
		return bootstrap_alloc(n, align);
	p = real(align, n);
	if (p)
		ann_count_alloc(before, n);
	return p;
}

ANN_EXPORT void *memalign(size_t align, size_t n)
{
	return aligned_through(memalign_real(), align, n);
}

ANN_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return aligned_through(aligned_alloc_real(), align, n);
}

ANN_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	posix_memalign_fn real = posix_memalign_real();
	uint64_t before = ann_counters.mem;
	int r;

	if (!real) {
		void *p = bootstrap_alloc(n, align);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	r = real(out, align, n);
	if (r == 0)
		ann_count_alloc(before, n);
	return r;
}

ANN_EXPORT void *valloc(size_t n)
{
	valloc_fn real = valloc_real();
	uint64_t before = ann_counters.mem;
	void *p;

	if (!real)
		return bootstrap_alloc(n, page_size);
	p = real(n);
	if (p)
		ann_count_alloc(before, n);
	return p;
}

ANN_EXPORT void *pvalloc(size_t n)
{
	valloc_fn real = pvalloc_real();
	uint64_t before = ann_counters.mem;
	size_t rounded = n ? (n + page_size - 1) & ~(page_size - 1) : page_size;
	void *p;

	if (!real)
		return bootstrap_alloc(rounded, page_size);
	p = real(n);
	if (p)
		ann_count_alloc(before, rounded);
	return p;
}

ANN_EXPORT size_t malloc_usable_size(void *p)
{
	usable_fn real;

	if (p && in_bootstrap(p))
		return bootstrap_size(p);
	real = malloc_usable_size_real();
	return real ? real(p) : 0;
}

/* This file's malloc itself, whichever one symbol lookup picks for the program. */
extern __typeof__(malloc) ann_malloc_here
    __attribute__((alias("malloc"), copy(malloc), visibility("hidden")));

/*
 * Whether the program's malloc calls reach this file: not when the
 * executable defines malloc itself (it comes first in symbol lookup), as a
 * program with a statically linked allocator does.
 */
ANN_HIDDEN bool ann_malloc_interposed(void)
{
	return dlsym(RTLD_DEFAULT, "malloc") == (void *)ann_malloc_here;
}

/* For the unit test: a block as dlsym would get it before malloc is resolved. */
ANN_HIDDEN void *ann_bootstrap_alloc_for_test(size_t n)
{
	return bootstrap_alloc(n, 0);
}
