/* SPDX-License-Identifier: MIT */
/*
 * lever.h - progress points for lever's causal profiler (`lever causal`).
 *
 * Copyright (c) 2026 the lever authors.
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to
 * deal in the Software without restriction, including without limitation the
 * rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
 * sell copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 * FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
 * IN THE SOFTWARE.
 *
 * This header (like include/coz.h) is MIT-licensed so that any program may
 * include it; the rest of lever is GPL-3.0-or-later.
 *
 * Usage (statements; end each with a semicolon):
 *
 *   LEVER_PROGRESS;                  a unit of work finished here (throughput)
 *   LEVER_PROGRESS_NAMED("name");    same, for a named point; sites with the
 *                                    same name share one counter
 *   LEVER_BEGIN("name");             a request/transaction starts (latency);
 *                                    also counts as an arrival (see below)
 *   LEVER_END("name");               ... and ends (Little's law gives latency)
 *   LEVER_ARRIVAL("name");           a request arrives (load amplification,
 *                                    `lever causal --arrival-speedup`): the
 *                                    thread executing it is virtually sped up
 *                                    by the arrival speedup per visit. Counted
 *                                    per thread; the name is documentation.
 *
 *   LEVER_PRE_BLOCK;                 about to block in a custom primitive
 *   LEVER_POST_BLOCK(skip);          woke up; skip != 0 if woken by another thread
 *   LEVER_CATCH_UP;                  pay delays owed before waking other threads
 *
 * Without lever the macros do nothing beyond one failed symbol lookup per
 * site. There is no link-time dependency: the runtime's functions are found at
 * run time through a weak reference to dlsym (in libc since glibc 2.34; with
 * older glibc, add -ldl or the macros stay no-ops). The ABI is Coz's, so the
 * same binary also works under Coz.
 */
#ifndef LEVER_H
#define LEVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counter types passed to _coz_get_counter(). */
#define LEVER_COUNTER_THROUGHPUT 1
#define LEVER_COUNTER_BEGIN	 2
#define LEVER_COUNTER_END	 3
#define LEVER_COUNTER_ARRIVAL	 4 /* per-thread arrivals; see _lever_arrival_counter */

/* The runtime's counter; the layout is part of the ABI. */
struct lever_counter {
	size_t count;	/* visits, incremented atomically */
	size_t backoff; /* unused */
};

#if defined(__cplusplus) && __cplusplus >= 201103L
#define LEVER_NULL_ nullptr
#elif defined(__cplusplus)
#define LEVER_NULL_ 0
#else
#define LEVER_NULL_ ((void *)0)
#endif

typedef struct lever_counter *(*lever_get_counter_fn)(int type, const char *name);
typedef void (*lever_void_fn)(void);
typedef void (*lever_post_block_fn)(int skip_delays);

/* dlsym, referenced weakly under a private name (no clash with <dlfcn.h>). */
extern void *lever_weak_dlsym_(void *handle, const char *symbol) __asm__("dlsym")
    __attribute__((weak));

/* RTLD_DEFAULT is the null handle on Linux (glibc and musl). */
static inline void *lever_lookup_(const char *symbol)
{
	return lever_weak_dlsym_ ? lever_weak_dlsym_(LEVER_NULL_, symbol) : LEVER_NULL_;
}

static inline struct lever_counter *lever_get_counter_(int type, const char *name)
{
	static lever_get_counter_fn fn;
	static int looked_up;
	lever_get_counter_fn f;

	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		void *p = lever_lookup_("_coz_get_counter");

		__builtin_memcpy(&f, &p, sizeof(f));
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
		__atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
	}
	f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
	return f ? f(type, name) : LEVER_NULL_;
}

static inline void lever_call_void_(const char *symbol, lever_void_fn *cache, int *looked_up)
{
	lever_void_fn f;

	if (!__atomic_load_n(looked_up, __ATOMIC_ACQUIRE)) {
		void *p = lever_lookup_(symbol);

		__builtin_memcpy(&f, &p, sizeof(f));
		__atomic_store_n(cache, f, __ATOMIC_RELAXED);
		__atomic_store_n(looked_up, 1, __ATOMIC_RELEASE);
	}
	f = __atomic_load_n(cache, __ATOMIC_RELAXED);
	if (f)
		f();
}

static inline void lever_pre_block_(void)
{
	static lever_void_fn fn;
	static int looked_up;

	lever_call_void_("_coz_pre_block", &fn, &looked_up);
}

static inline void lever_catch_up_(void)
{
	static lever_void_fn fn;
	static int looked_up;

	lever_call_void_("_coz_add_delays", &fn, &looked_up);
}

static inline void lever_post_block_(int skip_delays)
{
	static lever_post_block_fn fn;
	static int looked_up;
	lever_post_block_fn f;

	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		void *p = lever_lookup_("_coz_post_block");

		__builtin_memcpy(&f, &p, sizeof(f));
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
		__atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
	}
	f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
	if (f)
		f(skip_delays);
}

/* Count one visit to the (type, name) counter; the lookup is cached per site. */
#define LEVER_COUNT_(type, name)                                                                   \
	do {                                                                                       \
		static struct lever_counter *lever_site_counter_;                                  \
		static int lever_site_ready_;                                                      \
		struct lever_counter *lever_c_;                                                    \
		if (!__atomic_load_n(&lever_site_ready_, __ATOMIC_ACQUIRE)) {                      \
			__atomic_store_n(&lever_site_counter_, lever_get_counter_((type), (name)), \
					 __ATOMIC_RELAXED);                                        \
			__atomic_store_n(&lever_site_ready_, 1, __ATOMIC_RELEASE);                 \
		}                                                                                  \
		lever_c_ = __atomic_load_n(&lever_site_counter_, __ATOMIC_RELAXED);                \
		if (lever_c_)                                                                      \
			__atomic_add_fetch(&lever_c_->count, 1, __ATOMIC_RELAXED);                 \
	} while (0)

typedef struct lever_counter *(*lever_arrival_counter_fn)(void);

/*
 * The calling thread's arrival counter, asked for once per thread (the
 * runtime keeps one per thread: only the arriving thread is sped up) and
 * cached in TLS; NULL without lever.
 */
static inline struct lever_counter *lever_arrival_counter_(void)
{
	static lever_arrival_counter_fn fn;
	static int looked_up;
	static __thread struct lever_counter *counter;
	static __thread int asked;
	lever_arrival_counter_fn f;

	if (__builtin_expect(asked, 1))
		return counter;
	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		void *p = lever_lookup_("_lever_arrival_counter");

		__builtin_memcpy(&f, &p, sizeof(f));
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
		__atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
	}
	f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
	counter = f ? f() : LEVER_NULL_;
	asked = 1;
	return counter;
}

#define LEVER_COUNT_ARRIVAL_()                                                                     \
	do {                                                                                       \
		struct lever_counter *lever_a_ = lever_arrival_counter_();                         \
		if (lever_a_)                                                                      \
			__atomic_add_fetch(&lever_a_->count, 1, __ATOMIC_RELAXED);                 \
	} while (0)

#define LEVER_STR2_(x) #x
#define LEVER_STR_(x)  LEVER_STR2_(x)

#define LEVER_PROGRESS		   LEVER_COUNT_(LEVER_COUNTER_THROUGHPUT, __FILE__ ":" LEVER_STR_(__LINE__))
#define LEVER_PROGRESS_NAMED(name) LEVER_COUNT_(LEVER_COUNTER_THROUGHPUT, name)
#define LEVER_BEGIN(name)                                                                          \
	do {                                                                                       \
		LEVER_COUNT_(LEVER_COUNTER_BEGIN, name);                                           \
		LEVER_COUNT_ARRIVAL_();                                                            \
	} while (0)
#define LEVER_END(name) LEVER_COUNT_(LEVER_COUNTER_END, name)
#define LEVER_ARRIVAL(name)                                                                        \
	do {                                                                                       \
		(void)(name);                                                                      \
		LEVER_COUNT_ARRIVAL_();                                                            \
	} while (0)

#define LEVER_PRE_BLOCK	       lever_pre_block_()
#define LEVER_POST_BLOCK(skip) lever_post_block_(skip)
#define LEVER_CATCH_UP	       lever_catch_up_()

#ifdef __cplusplus
}
#endif

#endif /* LEVER_H */
