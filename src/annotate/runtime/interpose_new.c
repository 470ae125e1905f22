/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The mem metric for C++: every replaceable allocating operator new and
 * new[] (plain, nothrow, aligned, aligned nothrow), interposed by their
 * mangled names in front of the next definition (libstdc++'s, or the one
 * an allocator library such as tcmalloc provides).
 *
 * libstdc++'s operators call malloc, which interpose_malloc.c already
 * counts; an allocator's own operator new may not. So each wrapper counts
 * the size only when nothing nested inside it did (ann_count_alloc): the
 * bytes are counted once either way. That rule needs no state across the
 * real call, so a std::bad_alloc thrown by the real operator passes through
 * this frame (C with unwind tables, as GCC emits by default on x86-64)
 * without leaving anything behind.
 *
 * A program without libstdc++ never calls these. Sized and aligned
 * operator delete are not interposed: frees are not counted.
 */
#include <stddef.h>

#include "annotate/runtime/metrics_internal.h"

typedef void *(*new_fn)(size_t);
typedef void *(*new_nothrow_fn)(size_t, const void *);
typedef void *(*new_aligned_fn)(size_t, size_t);
typedef void *(*new_aligned_nothrow_fn)(size_t, size_t, const void *);

/* NAME_real(): the next object's NAME (see interpose_malloc.c). */
#define REAL(name, type)                                                                           \
	static type name##_ptr;                                                                    \
	static type name##_real(void)                                                              \
	{                                                                                          \
		type p = __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED);                           \
		if (!p) {                                                                          \
			p = (type)ann_real_symbol(#name, NULL);                                    \
			__atomic_store_n(&name##_ptr, p, __ATOMIC_RELAXED);                        \
		}                                                                                  \
		return p;                                                                          \
	}

/* operator new(size_t), new[](size_t) */
REAL(_Znwm, new_fn)
REAL(_Znam, new_fn)
/* ... (size_t, const std::nothrow_t &) */
REAL(_ZnwmRKSt9nothrow_t, new_nothrow_fn)
REAL(_ZnamRKSt9nothrow_t, new_nothrow_fn)
/* ... (size_t, std::align_val_t) */
REAL(_ZnwmSt11align_val_t, new_aligned_fn)
REAL(_ZnamSt11align_val_t, new_aligned_fn)
/* ... (size_t, std::align_val_t, const std::nothrow_t &) */
REAL(_ZnwmSt11align_val_tRKSt9nothrow_t, new_aligned_nothrow_fn)
REAL(_ZnamSt11align_val_tRKSt9nothrow_t, new_aligned_nothrow_fn)

__attribute__((constructor(101))) static void interpose_new_resolve(void)
{
	(void)_Znwm_real();
	(void)_Znam_real();
	(void)_ZnwmRKSt9nothrow_t_real();
	(void)_ZnamRKSt9nothrow_t_real();
	(void)_ZnwmSt11align_val_t_real();
	(void)_ZnamSt11align_val_t_real();
	(void)_ZnwmSt11align_val_tRKSt9nothrow_t_real();
	(void)_ZnamSt11align_val_tRKSt9nothrow_t_real();
}

/*
 * Only a C++ program calls these, and then the next definition exists; if
 * it somehow does not, failing like the nothrow operators is the only
 * choice C has (it cannot throw std::bad_alloc).
 */
#define NEW(name, real_type, params, args)                                                         \
	ANN_EXPORT void *name params;                                                              \
	void *name params                                                                          \
	{                                                                                          \
		real_type real = name##_real();                                                    \
		uint64_t before = ann_counters.mem;                                                \
		void *p;                                                                           \
                                                                                                   \
		if (!real)                                                                         \
			return NULL;                                                               \
		p = real args;                                                                     \
		if (p)                                                                             \
			ann_count_alloc(before, n);                                                \
		return p;                                                                          \
	}

NEW(_Znwm, new_fn, (size_t n), (n))
NEW(_Znam, new_fn, (size_t n), (n))
NEW(_ZnwmRKSt9nothrow_t, new_nothrow_fn, (size_t n, const void *tag), (n, tag))
NEW(_ZnamRKSt9nothrow_t, new_nothrow_fn, (size_t n, const void *tag), (n, tag))
NEW(_ZnwmSt11align_val_t, new_aligned_fn, (size_t n, size_t align), (n, align))
NEW(_ZnamSt11align_val_t, new_aligned_fn, (size_t n, size_t align), (n, align))
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, new_aligned_nothrow_fn,
    (size_t n, size_t align, const void *tag), (n, align, tag))
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, new_aligned_nothrow_fn,
    (size_t n, size_t align, const void *tag), (n, align, tag))
