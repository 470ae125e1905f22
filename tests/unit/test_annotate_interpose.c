/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The interposers behind the mem, wait and hold metrics of
 * liblever-annotate.so (src/annotate/runtime/interpose_*.c, spec/freud.md
 * §4.2.2), linked into this test so that they stand in front of the C
 * library's functions exactly as the preloaded runtime does:
 *
 *  - each allocation call moves mem by the bytes it allocates, once (new[]
 *    calling new calling malloc counts once), failures by nothing;
 *  - a contended lock's wait is bracketed by the holder's hold (a lower
 *    bound) and the waiter's own clock (an upper bound); hold follows the
 *    count of held locks through recursion, try-locks, rwlocks, spin locks
 *    and condition-variable waits;
 *  - nothing the program sees changes: return values and errno are the real
 *    functions'.
 *
 * NO_ASAN: AddressSanitizer would interpose malloc itself.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/runtime/metrics_internal.h"

#define MEM  ANN_METRIC_BIT(ANN_MEM)
#define WAIT ANN_METRIC_BIT(ANN_WAIT)
#define HOLD ANN_METRIC_BIT(ANN_HOLD)
#define TIME ANN_METRIC_BIT(ANN_TIME)

/* libstdc++'s operators by their mangled names (C cannot name them otherwise). */
void *_Znwm(size_t);
void *_Znam(size_t);
void *_ZnwmRKSt9nothrow_t(size_t, const void *);
void *_ZnamRKSt9nothrow_t(size_t, const void *);
void *_ZnwmSt11align_val_t(size_t, size_t);
void *_ZnamSt11align_val_t(size_t, size_t);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void _ZdlPv(void *);
void _ZdaPv(void *);
void _ZdlPvSt11align_val_t(void *, size_t);
void _ZdaPvSt11align_val_t(void *, size_t);
extern const char _ZSt7nothrow[]; /* std::nothrow */
void *ann_bootstrap_alloc_for_test(size_t n);

static uint64_t metric(enum ann_metric m)
{
	struct ann_metrics_snapshot s;

	ann_metrics_read(&s, ANN_METRIC_BIT(m));
	return s.v[m];
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The mem delta of one expression (pointer kept in *keep for freeing). */
#define MEM_DELTA(expr, keep)                                                                      \
	({                                                                                         \
		uint64_t m0_ = metric(ANN_MEM);                                                    \
		*(keep) = (expr);                                                                  \
		metric(ANN_MEM) - m0_;                                                             \
	})

static int setup_mem(void **state)
{
	(void)state;
	setenv("LEVER_ANNOTATE_CLOCK", "monotonic", 1);
	return ann_metrics_init(MEM | WAIT | HOLD | TIME);
}

static void test_malloc_family(void **state)
{
	void *p, *q;
	int r;

	(void)state;
	assert_int_equal(MEM_DELTA(malloc(1000), &p), 1000);
	free(p);
	assert_int_equal(MEM_DELTA(calloc(10, 100), &p), 1000);
	assert_int_equal(((char *)p)[999], 0);
	free(p);
	assert_int_equal(MEM_DELTA(memalign(64, 1000), &p), 1000);
	assert_int_equal((uintptr_t)p % 64, 0);
	free(p);
	assert_int_equal(MEM_DELTA(aligned_alloc(64, 1024), &p), 1024);
	free(p);
	assert_int_equal(MEM_DELTA(valloc(1000), &p), 1000);
	free(p);
	assert_int_equal(MEM_DELTA(pvalloc(1000), &p), (uint64_t)sysconf(_SC_PAGESIZE));
	free(p);
	{
		uint64_t m0 = metric(ANN_MEM);

		r = posix_memalign(&p, 64, 1000);
		assert_int_equal(r, 0);
		assert_int_equal(metric(ANN_MEM) - m0, 1000);
		free(p);
		/* a bad alignment: the real error, nothing counted */
		r = posix_memalign(&p, 3, 1000);
		assert_int_equal(r, EINVAL);
		assert_int_equal(metric(ANN_MEM) - m0, 1000);
	}
	/* strdup allocates inside the C library, through malloc */
	assert_int_equal(MEM_DELTA(strdup("hello"), &p), 6);
	free(p);
	(void)q;
}

static void test_realloc_counts_growth(void **state)
{
	void *p, *q;
	size_t usable;

	(void)state;
	assert_int_equal(MEM_DELTA(realloc(NULL, 1000), &p), 1000);
	memset(p, 7, 1000);
	usable = malloc_usable_size(p);
	assert_int_equal(MEM_DELTA(realloc(p, 5000), &q), 5000 - usable);
	assert_int_equal(((char *)q)[999], 7);
	assert_int_equal(MEM_DELTA(realloc(q, 100), &p), 0);
	usable = malloc_usable_size(p);
	assert_int_equal(MEM_DELTA(reallocarray(p, 10, 300), &q), 3000 - usable);
	assert_int_equal(MEM_DELTA(reallocarray(NULL, 10, 100), &p), 1000);
	free(p);
	free(q);
}

/* Sizes the compiler cannot see through (it rightly warns about the constants). */
static volatile size_t huge = SIZE_MAX / 2, four = 4;

static void test_failures_count_nothing(void **state)
{
	void *p;

	(void)state;
	errno = 0;
	assert_int_equal(MEM_DELTA(malloc(huge), &p), 0);
	assert_null(p);
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_int_equal(MEM_DELTA(calloc(huge, four), &p), 0);
	assert_null(p);
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_int_equal(MEM_DELTA(reallocarray(NULL, huge, four), &p), 0);
	assert_null(p);
	assert_int_equal(errno, ENOMEM);
	/*
	 * the failed block counts nothing; libstdc++'s nothrow new throws and
	 * catches a std::bad_alloc inside, whose exception object is a real
	 * (small) allocation and counts
	 */
	assert_true(MEM_DELTA(_ZnwmRKSt9nothrow_t(huge, _ZSt7nothrow), &p) < 1000);
	assert_null(p);
}

/* Success leaves errno as the program set it. */
static void test_errno_untouched(void **state)
{
	void *p;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	(void)state;
	errno = 4242;
	p = malloc(100);
	p = realloc(p, 200);
	free(p);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	assert_int_equal(errno, 4242);
}

/*
 * libstdc++'s aligned operators ask aligned_alloc for the size rounded up
 * to the alignment, and that is what is allocated: 1000 at 64 or 128 is 1024.
 */
static void test_operator_new_counted_once(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(MEM_DELTA(_Znwm(1000), &p), 1000);
	_ZdlPv(p);
	assert_int_equal(MEM_DELTA(_Znam(1000), &p), 1000);
	_ZdaPv(p);
	assert_int_equal(MEM_DELTA(_ZnwmRKSt9nothrow_t(1000, _ZSt7nothrow), &p), 1000);
	_ZdlPv(p);
	assert_int_equal(MEM_DELTA(_ZnamRKSt9nothrow_t(1000, _ZSt7nothrow), &p), 1000);
	_ZdaPv(p);
	assert_int_equal(MEM_DELTA(_ZnwmSt11align_val_t(1000, 128), &p), 1024);
	assert_int_equal((uintptr_t)p % 128, 0);
	_ZdlPvSt11align_val_t(p, 128);
	assert_int_equal(MEM_DELTA(_ZnamSt11align_val_t(1000, 128), &p), 1024);
	_ZdaPvSt11align_val_t(p, 128);
	assert_int_equal(MEM_DELTA(_ZnwmSt11align_val_tRKSt9nothrow_t(1000, 64, _ZSt7nothrow), &p),
			 1024);
	_ZdlPvSt11align_val_t(p, 64);
	assert_int_equal(MEM_DELTA(_ZnamSt11align_val_tRKSt9nothrow_t(1000, 64, _ZSt7nothrow), &p),
			 1024);
	_ZdaPvSt11align_val_t(p, 64);
}

/* A block from before malloc was found: usable, resizable, and free ignores it. */
static void test_bootstrap_blocks(void **state)
{
	char *p = ann_bootstrap_alloc_for_test(100), *q;
	void *volatile old = p;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p[99], 0);
	assert_int_equal(malloc_usable_size(p), 100);
	memcpy(p, "bootstrap", 10);
	q = realloc(p, 4000);
	assert_non_null(q);
	assert_string_equal(q, "bootstrap");
	free(old); /* a bootstrap block: ignored */
	free(q);
	assert_null(ann_bootstrap_alloc_for_test(1u << 20));
}

/* Allocations are not counted when mem is not asked for. */
static void test_mem_off(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(ann_metrics_init(TIME), 0);
	ann_counters.mem = 0;
	p = malloc(1000);
	free(p);
	assert_int_equal(ann_counters.mem, 0);
	assert_int_equal(ann_metrics_init(MEM | WAIT | HOLD | TIME), 0);
}

/* ------------------------------------------------------------ locks */

struct contention {
	pthread_mutex_t m;
	atomic_int phase;
	uint64_t waiter_seen, released; /* CLOCK_MONOTONIC on the holder */
};

/*
 * The holder: takes the lock, waits until the main thread is blocked on it
 * (glibc marks a mutex with waiters by 2 in its lock word), holds it 20 ms
 * more, releases.
 */
static void *holder(void *arg)
{
	struct contention *c = arg;

	pthread_mutex_lock(&c->m);
	atomic_store(&c->phase, 1);
	while (__atomic_load_n(&c->m.__data.__lock, __ATOMIC_ACQUIRE) != 2)
		sleep_ms(1);
	c->waiter_seen = mono_ns();
	sleep_ms(20);
	c->released = mono_ns();
	pthread_mutex_unlock(&c->m);
	return NULL;
}

static void test_contended_wait(void **state)
{
	struct contention c = {.m = PTHREAD_MUTEX_INITIALIZER};
	uint64_t w0, w1, h0, h1, t0, t1;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, holder, &c), 0);
	while (atomic_load(&c.phase) == 0)
		sleep_ms(1);
	w0 = metric(ANN_WAIT);
	h0 = metric(ANN_HOLD);
	t0 = mono_ns();
	assert_int_equal(pthread_mutex_lock(&c.m), 0);
	t1 = mono_ns();
	w1 = metric(ANN_WAIT);
	h1 = metric(ANN_HOLD);
	/* blocked at least while the holder kept it after seeing us, at most our bracket */
	assert_true(w1 - w0 >= c.released - c.waiter_seen);
	assert_true(w1 - w0 <= t1 - t0);
	/* holding started on acquisition, after the holder released: the wait is not in it */
	assert_true(h1 - h0 <= mono_ns() - c.released + 1000);
	assert_int_equal(pthread_mutex_unlock(&c.m), 0);
	pthread_join(t, NULL);
}

static void test_hold_of_mutex(void **state)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint64_t h0, h1, t0, t1, w0;

	(void)state;
	h0 = metric(ANN_HOLD);
	w0 = metric(ANN_WAIT);
	t0 = mono_ns();
	assert_int_equal(pthread_mutex_lock(&m), 0);
	sleep_ms(10);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	t1 = mono_ns();
	h1 = metric(ANN_HOLD);
	assert_true(h1 - h0 >= 10000000);
	assert_true(h1 - h0 <= t1 - t0);
	/* uncontended: the wait is the call's own few hundred ns, not the sleep */
	assert_true(metric(ANN_WAIT) - w0 < 10000000);
	/* released: hold stands still */
	sleep_ms(2);
	assert_true(metric(ANN_HOLD) == h1);
}

static void test_recursive_and_errors(void **state)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m, e;
	uint64_t h0, h1;

	(void)state;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&e, &a);
	h0 = metric(ANN_HOLD);
	assert_int_equal(pthread_mutex_lock(&m), 0);
	assert_int_equal(pthread_mutex_trylock(&m), 0);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	sleep_ms(3); /* still held once */
	h1 = metric(ANN_HOLD);
	assert_true(h1 - h0 >= 3000000);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	h1 = metric(ANN_HOLD);
	/* an unlock that fails releases nothing, and its error comes through */
	assert_int_equal(pthread_mutex_unlock(&e), EPERM);
	assert_int_equal(pthread_mutex_lock(&e), 0);
	assert_int_equal(pthread_mutex_lock(&e), EDEADLK);
	sleep_ms(2);
	assert_true(metric(ANN_HOLD) - h1 >= 2000000);
	assert_int_equal(pthread_mutex_unlock(&e), 0);
	h1 = metric(ANN_HOLD);
	sleep_ms(2);
	assert_true(metric(ANN_HOLD) == h1);
	pthread_mutex_destroy(&m);
	pthread_mutex_destroy(&e);
	pthread_mutexattr_destroy(&a);
}

static void *try_from_other_thread(void *arg)
{
	return (void *)(intptr_t)pthread_mutex_trylock(arg);
}

static void test_trylock_busy(void **state)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t;
	void *r;

	(void)state;
	assert_int_equal(pthread_mutex_lock(&m), 0);
	pthread_create(&t, NULL, try_from_other_thread, &m);
	pthread_join(t, &r);
	assert_int_equal((intptr_t)r, EBUSY);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	assert_int_equal(ann_counters.held, 0);
}

static void test_rwlock_and_spin(void **state)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_spinlock_t s;
	struct timespec abs;
	uint64_t h0;

	(void)state;
	h0 = metric(ANN_HOLD);
	assert_int_equal(pthread_rwlock_rdlock(&l), 0);
	assert_int_equal(pthread_rwlock_tryrdlock(&l), 0);
	assert_int_equal(pthread_rwlock_trywrlock(&l), EBUSY);
	assert_int_equal(pthread_rwlock_unlock(&l), 0);
	sleep_ms(2);
	assert_int_equal(pthread_rwlock_unlock(&l), 0);
	assert_true(metric(ANN_HOLD) - h0 >= 2000000);
	assert_int_equal(ann_counters.held, 0);
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += 1;
	assert_int_equal(pthread_rwlock_timedwrlock(&l, &abs), 0);
	assert_int_equal(pthread_rwlock_unlock(&l), 0);
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_sec += 1;
	assert_int_equal(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &abs), 0);
	assert_int_equal(pthread_rwlock_unlock(&l), 0);
	assert_int_equal(ann_counters.held, 0);

	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	h0 = metric(ANN_HOLD);
	assert_int_equal(pthread_spin_lock(&s), 0);
	assert_int_equal(pthread_spin_trylock(&s), EBUSY);
	sleep_ms(2);
	assert_int_equal(pthread_spin_unlock(&s), 0);
	assert_true(metric(ANN_HOLD) - h0 >= 2000000);
	assert_int_equal(ann_counters.held, 0);
	pthread_spin_destroy(&s);
}

/* A timed-out condition wait: waited (not held) meanwhile, holds the mutex after. */
static void test_cond_wait_releases(void **state)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	uint64_t w0, h0, t0, t1, ta, tb, w, h;
	struct timespec abs;

	(void)state;
	assert_int_equal(pthread_mutex_lock(&m), 0);
	ta = mono_ns();
	w0 = metric(ANN_WAIT);
	h0 = metric(ANN_HOLD);
	t0 = mono_ns();
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 10000000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	assert_int_equal(pthread_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
	t1 = mono_ns();
	w = metric(ANN_WAIT) - w0;
	h = metric(ANN_HOLD) - h0;
	tb = mono_ns();
	assert_true(w > 0);
	assert_true(w <= t1 - t0);
	/* waiting and holding are disjoint: together no more than the bracket */
	assert_true(w + h <= tb - ta + 1000);
	assert_int_equal(ann_counters.held, 1);
	/* the mutex is ours again: unlocking it succeeds and closes the hold */
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	assert_int_equal(ann_counters.held, 0);
	/* clockwait on the monotonic clock: waited, within the bracket */
	assert_int_equal(pthread_mutex_lock(&m), 0);
	w0 = metric(ANN_WAIT);
	clock_gettime(CLOCK_MONOTONIC, &abs);
	t0 = (uint64_t)abs.tv_sec * 1000000000u + (uint64_t)abs.tv_nsec + 10000000;
	abs.tv_sec = (time_t)(t0 / 1000000000u);
	abs.tv_nsec = (long)(t0 % 1000000000u);
	ta = mono_ns();
	assert_int_equal(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
	tb = mono_ns();
	assert_true(metric(ANN_WAIT) - w0 > 0);
	assert_true(metric(ANN_WAIT) - w0 <= tb - ta);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_malloc_family),
	    cmocka_unit_test(test_realloc_counts_growth),
	    cmocka_unit_test(test_failures_count_nothing),
	    cmocka_unit_test(test_errno_untouched),
	    cmocka_unit_test(test_operator_new_counted_once),
	    cmocka_unit_test(test_bootstrap_blocks),
	    cmocka_unit_test(test_mem_off),
	    cmocka_unit_test(test_contended_wait),
	    cmocka_unit_test(test_hold_of_mutex),
	    cmocka_unit_test(test_recursive_and_errors),
	    cmocka_unit_test(test_trylock_busy),
	    cmocka_unit_test(test_rwlock_and_spin),
	    cmocka_unit_test(test_cond_wait_releases),
	};

	return cmocka_run_group_tests(tests, setup_mem, NULL);
}
