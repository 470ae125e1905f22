/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The allocation API of the shuffling heap, exported from
 * liblever-stabilizer.so so that LD_PRELOAD puts it in front of glibc's for
 * the program and every library (libc's own allocations included).
 *
 * The first call of any of these functions decides, once, whether the heap
 * is on: it can come before any constructor ran (from the dynamic loader or
 * another library's constructor), so the decision reads the environment
 * itself (stabilizer_config_load). Everything allocated from then on is
 * ours, so free never sees memory allocated before we started. When the heap
 * is off (lever stabilize --code or --stack only), every call goes to glibc's
 * __libc_* entry points, which are exported for exactly this purpose.
 *
 * Small requests (up to HEAP_SMALL_MAX bytes) go through the shuffling layer;
 * larger ones get a mapping each. Over-aligned requests take an object
 * large enough to hold an aligned block and return the aligned address
 * inside it: free and malloc_usable_size find the object from any pointer
 * into it.
 *
 * fork: the prepare handler takes every lock of the heap (the class depots
 * and the list of thread heaps), so the child never inherits a lock held by
 * a thread that does not exist there; the child resets them and switches to
 * random streams of its own. malloc and free themselves take no lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "stabilizer/runtime/heap.h"
#include "stabilizer/runtime/stabilizer.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t size);

enum heap_mode { MODE_UNSET, MODE_STARTING, MODE_SHUFFLE, MODE_LIBC };

static _Atomic int heap_mode_state;
static bool reserve_failed;

static void fork_prepare(void)
{
	heap_shuffle_lock_all();
	heap_large_lock_all();
}

static void fork_parent(void)
{
	heap_large_unlock_all();
	heap_shuffle_unlock_all();
}

static void fork_child(void)
{
	heap_large_reset_locks();
	heap_shuffle_reset_locks();
	heap_shuffle_reseed_child();
	heap_large_seed(stabilizer_stream_seed(STABILIZER_STREAM_HEAP) ^ (uint64_t)getpid());
}

static int start_heap(void)
{
	int mode = MODE_LIBC;

	stabilizer_config_load();
	if (stabilizer_cfg.heap) {
		if (heap_base_init() == 0) {
			heap_shuffle_init(stabilizer_stream_seed(STABILIZER_STREAM_HEAP));
			heap_large_seed(stabilizer_stream_seed(STABILIZER_STREAM_HEAP) >> 1);
			mode = MODE_SHUFFLE;
		} else {
			reserve_failed = true;
		}
	}
	atomic_store_explicit(&heap_mode_state, mode, memory_order_release);
	/* Outside the start-up: pthread_atfork may itself call malloc. */
	if (mode == MODE_SHUFFLE)
		pthread_atfork(fork_prepare, fork_parent, fork_child);
	return mode;
}

static int heap_mode(void)
{
	int mode = atomic_load_explicit(&heap_mode_state, memory_order_acquire);
	int expected = MODE_UNSET;

	if (__builtin_expect(mode >= MODE_SHUFFLE, 1))
		return mode;
	if (atomic_compare_exchange_strong(&heap_mode_state, &expected, MODE_STARTING))
		return start_heap();
	/* Another thread is starting the heap (start_heap never allocates). */
	while ((mode = atomic_load_explicit(&heap_mode_state, memory_order_acquire)) ==
	       MODE_STARTING)
		sched_yield();
	return mode;
}

int heap_start(void)
{
	int mode = heap_mode();

	if (!stabilizer_cfg.heap)
		return 0;
	if (mode != MODE_SHUFFLE) {
		fd_printf(2,
			  "lever stabilize: heap shuffling is not available: cannot reserve "
			  "address space for the size classes%s; running without it\n",
			  reserve_failed ? "" : " (start-up failed)");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ allocation */

/* zero: the caller needs zeroes (calloc); only reused large mappings need clearing here. */
static void *alloc_aligned(size_t size, size_t align, bool zero)
{
	void *p;

	if (!size)
		size = 1;
	if (align <= HEAP_ALIGN && size <= HEAP_SMALL_MAX) {
		p = heap_shuffle_malloc(heap_class_of_size(size));
		if (p)
			return p;
	} else if (align <= HEAP_SMALL_MAX / 2 && size <= HEAP_SMALL_MAX - align) {
		/* objects are 16-aligned: size + align - 16 bytes hold an aligned block */
		p = heap_shuffle_malloc(heap_class_of_size(size + align - HEAP_ALIGN));
		if (p)
			return (void *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	}
	p = heap_large_alloc(size, align < HEAP_ALIGN ? HEAP_ALIGN : align, zero);
	if (!p)
		errno = ENOMEM;
	return p;
}

static void free_ours(void *p)
{
	if (heap_base_owns(p)) {
		unsigned c;
		void *start = heap_base_locate(p, &c);

		heap_shuffle_free(c, start);
	} else if (heap_large_owns(p)) {
		heap_large_free(p);
	} else {
		__libc_free(p); /* not ours: never happens unless someone bypassed malloc */
	}
}

static size_t usable_size(const void *p)
{
	unsigned c;
	char *start;

	if (heap_base_owns(p)) {
		start = heap_base_locate(p, &c);
		return (size_t)(start + heap_class_size(c) - (const char *)p);
	}
	return heap_large_usable(p);
}

static void *realloc_ours(void *p, size_t size)
{
	size_t have, keep;
	void *q;

	if (!heap_base_owns(p) && !heap_large_owns(p))
		return __libc_realloc(p, size);
	have = usable_size(p);
	/* Stay put if it fits without wasting more than half of the object. */
	if (size <= have && size >= have / 2)
		return p;
	if (!heap_base_owns(p) && size > HEAP_SMALL_MAX) {
		q = heap_large_realloc(p, size);
		if (!q)
			errno = ENOMEM;
		return q;
	}
	q = alloc_aligned(size, HEAP_ALIGN, false);
	if (!q)
		return NULL;
	keep = size < have ? size : have;
	memcpy(q, p, keep);
	free_ours(p);
	return q;
}

static bool power_of_two(size_t x)
{
	return x && !(x & (x - 1));
}

/* memalign's rules (glibc): alignment rounded up to a power of two, at least 16. */
static void *memalign_ours(size_t align, size_t size)
{
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (!power_of_two(align)) {
		size_t a = HEAP_ALIGN;

		while (a < align)
			a <<= 1;
		align = a;
	}
	return alloc_aligned(size, align < HEAP_ALIGN ? HEAP_ALIGN : align, false);
}

static size_t page_size(void)
{
	static size_t ps;

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (size_t)v : 4096;
	}
	return ps;
}

/* ------------------------------------------------------------ the exported API */

STABILIZER_EXPORT void *malloc(size_t size)
{
	void *p;

	if (heap_mode() == MODE_LIBC)
		return __libc_malloc(size);
	/* the common case first: 1 to HEAP_SMALL_MAX bytes, from the size classes */
	if (__builtin_expect(size - 1 < HEAP_SMALL_MAX, 1)) {
		p = heap_shuffle_malloc(heap_class_of_size(size));
		if (__builtin_expect(p != NULL, 1))
			return p;
	}
	return alloc_aligned(size, HEAP_ALIGN, false);
}

STABILIZER_EXPORT void free(void *p)
{
	if (!p)
		return;
	if (heap_mode() == MODE_LIBC)
		__libc_free(p);
	else
		free_ours(p);
}

STABILIZER_EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (heap_mode() == MODE_LIBC)
		return __libc_calloc(n, size);
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	p = alloc_aligned(total, HEAP_ALIGN, true);
	/* Large ones came zeroed; objects from the size classes may be reused. */
	if (p && heap_base_owns(p))
		memset(p, 0, total);
	return p;
}

STABILIZER_EXPORT void *realloc(void *p, size_t size)
{
	if (heap_mode() == MODE_LIBC)
		return __libc_realloc(p, size);
	if (!p)
		return alloc_aligned(size, HEAP_ALIGN, false);
	if (!size) { /* glibc frees and returns NULL */
		free_ours(p);
		return NULL;
	}
	return realloc_ours(p, size);
}

STABILIZER_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

STABILIZER_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;
	int saved = errno;

	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	if (heap_mode() == MODE_LIBC)
		p = __libc_memalign(align, size);
	else
		p = alloc_aligned(size, align < HEAP_ALIGN ? HEAP_ALIGN : align, false);
	if (!p)
		return ENOMEM;
	errno = saved;
	*out = p;
	return 0;
}

STABILIZER_EXPORT void *memalign(size_t align, size_t size)
{
	if (heap_mode() == MODE_LIBC)
		return __libc_memalign(align, size);
	return memalign_ours(align, size);
}

STABILIZER_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

STABILIZER_EXPORT void *valloc(size_t size)
{
	return memalign(page_size(), size);
}

STABILIZER_EXPORT void *pvalloc(size_t size)
{
	size_t ps = page_size();

	if (size > SIZE_MAX - ps) {
		errno = ENOMEM;
		return NULL;
	}
	size = size ? (size + ps - 1) & ~(ps - 1) : ps;
	return memalign(ps, size);
}

STABILIZER_EXPORT size_t malloc_usable_size(void *p)
{
	static size_t (*libc_usable)(void *);

	if (!p)
		return 0;
	if (heap_mode() == MODE_SHUFFLE && (heap_base_owns(p) || heap_large_owns(p)))
		return usable_size(p);
	if (!libc_usable)
		libc_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	return libc_usable ? libc_usable(p) : 0;
}
