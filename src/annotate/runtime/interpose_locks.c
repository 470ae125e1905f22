/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The wait and hold metrics (spec/freud.md §4.2.2, §5.3.3): the pthread
 * lock calls, interposed in front of the C library's.
 *
 *   wait  time blocked in an acquiring call, from the call until it returns,
 *         successful or not (a timed lock that gives up still waited), and
 *         the time blocked in a condition-variable wait (the seed's choice,
 *         which its x264 wait_time analysis relies on);
 *   hold  time during which the thread held at least one lock: from the
 *         acquisition that takes the count of held locks from 0 to 1 to the
 *         release that takes it back to 0. A condition-variable wait
 *         releases its mutex on entry and holds it again on return (POSIX:
 *         also after a timeout).
 *
 * Mutexes (lock, trylock, timedlock, clocklock, unlock), rwlocks (read and
 * write, try, timed and clock variants, unlock), spin locks (lock, trylock,
 * unlock) and condition variables (wait, timedwait, clockwait). Counters
 * are per thread, without per-lock detail (the seed's model: a thread is
 * waiting, holding, or neither). Return values and errno are the real
 * calls'; with neither metric asked, a wrapper costs one load and a branch.
 *
 * Semaphores, barriers and joins are not locks a thread holds; they are not
 * counted.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "annotate/runtime/metrics_internal.h"

/*
 * NAME_real(): the C library's NAME, at VERSION first (the condition
 * variable calls exist in an old layout at GLIBC_2.2.5 too).
 */
#define REAL(name, version)                                                                        \
	static __typeof__(&name) name##_ptr;                                                       \
	static __typeof__(&name) name##_real(void)                                                 \
	{                                                                                          \
		__typeof__(&name) p = __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED);              \
		if (!p) {                                                                          \
			p = (__typeof__(&name))ann_real_symbol(#name, version);                    \
			__atomic_store_n(&name##_ptr, p, __ATOMIC_RELAXED);                        \
		}                                                                                  \
		return p;                                                                          \
	}

REAL(pthread_mutex_lock, "GLIBC_2.2.5")
REAL(pthread_mutex_trylock, "GLIBC_2.2.5")
REAL(pthread_mutex_timedlock, "GLIBC_2.2.5")
REAL(pthread_mutex_clocklock, "GLIBC_2.30")
REAL(pthread_mutex_unlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_rdlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_tryrdlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_timedrdlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_clockrdlock, "GLIBC_2.30")
REAL(pthread_rwlock_wrlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_trywrlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_timedwrlock, "GLIBC_2.2.5")
REAL(pthread_rwlock_clockwrlock, "GLIBC_2.30")
REAL(pthread_rwlock_unlock, "GLIBC_2.2.5")
REAL(pthread_spin_lock, "GLIBC_2.2.5")
REAL(pthread_spin_trylock, "GLIBC_2.2.5")
REAL(pthread_spin_unlock, "GLIBC_2.2.5")
REAL(pthread_cond_wait, "GLIBC_2.3.2")
REAL(pthread_cond_timedwait, "GLIBC_2.3.2")
REAL(pthread_cond_clockwait, "GLIBC_2.30")

__attribute__((constructor(101))) static void interpose_locks_resolve(void)
{
	(void)pthread_mutex_lock_real();
	(void)pthread_mutex_trylock_real();
	(void)pthread_mutex_timedlock_real();
	(void)pthread_mutex_clocklock_real();
	(void)pthread_mutex_unlock_real();
	(void)pthread_rwlock_rdlock_real();
	(void)pthread_rwlock_tryrdlock_real();
	(void)pthread_rwlock_timedrdlock_real();
	(void)pthread_rwlock_clockrdlock_real();
	(void)pthread_rwlock_wrlock_real();
	(void)pthread_rwlock_trywrlock_real();
	(void)pthread_rwlock_timedwrlock_real();
	(void)pthread_rwlock_clockwrlock_real();
	(void)pthread_rwlock_unlock_real();
	(void)pthread_spin_lock_real();
	(void)pthread_spin_trylock_real();
	(void)pthread_spin_unlock_real();
	(void)pthread_cond_wait_real();
	(void)pthread_cond_timedwait_real();
	(void)pthread_cond_clockwait_real();
}

#define WAIT_BIT ANN_METRIC_BIT(ANN_WAIT)
#define HOLD_BIT ANN_METRIC_BIT(ANN_HOLD)

static inline unsigned lock_metrics(void)
{
	return atomic_load_explicit(&ann_metrics_enabled, memory_order_relaxed) &
	       (WAIT_BIT | HOLD_BIT);
}

/* Before a call that may block: the time it starts, when a metric needs it. */
static inline uint64_t block_begin(unsigned on)
{
	return on ? ann_clock_ns() : 0;
}

/* After it: the wait, and the start of holding if it acquired. */
static inline void block_end(unsigned on, uint64_t start, bool acquired)
{
	uint64_t now;

	if (!on)
		return;
	now = ann_clock_ns();
	if (on & WAIT_BIT)
		ann_counters.wait += now - start;
	if (acquired && (on & HOLD_BIT))
		ann_lock_acquired(now);
}

static inline void acquired_without_blocking(unsigned on, int r)
{
	if (r == 0 && (on & HOLD_BIT))
		ann_lock_acquired(ann_clock_ns());
}

static inline void released(unsigned on, int r)
{
	if (r == 0 && (on & HOLD_BIT))
		ann_lock_released(ann_clock_ns());
}

/*
 * A blocking acquisition: NAME(lock, extra arguments...). Without the real
 * function (only while this very thread is inside dlsym, which glibc's
 * dlsym never makes lock through the public symbols) the call fails with
 * EAGAIN rather than crash.
 */
#define BLOCKING(name, params, args)                                                               \
	ANN_EXPORT int name params                                                                 \
	{                                                                                          \
		__typeof__(&name) real = name##_real();                                            \
		unsigned on = lock_metrics();                                                      \
		uint64_t start;                                                                    \
		int r;                                                                             \
                                                                                                   \
		if (!real)                                                                         \
			return EAGAIN;                                                             \
		start = block_begin(on);                                                           \
		r = real args;                                                                     \
		block_end(on, start, r == 0);                                                      \
		return r;                                                                          \
	}

/*
 * A call that never blocks (a try-lock, an unlock): the real call, then
 * RECORD(metrics, result) (acquired_without_blocking or released).
 */
#define NONBLOCKING(name, params, args, record)                                                    \
	ANN_EXPORT int name params                                                                 \
	{                                                                                          \
		__typeof__(&name) real = name##_real();                                            \
		int r;                                                                             \
                                                                                                   \
		if (!real)                                                                         \
			return EAGAIN;                                                             \
		r = real args;                                                                     \
		record(lock_metrics(), r);                                                         \
		return r;                                                                          \
	}
#define TRY(name, params, args)	    NONBLOCKING(name, params, args, acquired_without_blocking)
#define RELEASE(name, params, args) NONBLOCKING(name, params, args, released)

typedef const struct timespec *abstime_t;

BLOCKING(pthread_mutex_lock, (pthread_mutex_t * m), (m))
BLOCKING(pthread_mutex_timedlock, (pthread_mutex_t * m, abstime_t t), (m, t))
BLOCKING(pthread_mutex_clocklock, (pthread_mutex_t * m, clockid_t c, abstime_t t), (m, c, t))
TRY(pthread_mutex_trylock, (pthread_mutex_t * m), (m))
RELEASE(pthread_mutex_unlock, (pthread_mutex_t * m), (m))

BLOCKING(pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l))
BLOCKING(pthread_rwlock_timedrdlock, (pthread_rwlock_t * l, abstime_t t), (l, t))
BLOCKING(pthread_rwlock_clockrdlock, (pthread_rwlock_t * l, clockid_t c, abstime_t t), (l, c, t))
BLOCKING(pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l))
BLOCKING(pthread_rwlock_timedwrlock, (pthread_rwlock_t * l, abstime_t t), (l, t))
BLOCKING(pthread_rwlock_clockwrlock, (pthread_rwlock_t * l, clockid_t c, abstime_t t), (l, c, t))
TRY(pthread_rwlock_tryrdlock, (pthread_rwlock_t * l), (l))
TRY(pthread_rwlock_trywrlock, (pthread_rwlock_t * l), (l))
RELEASE(pthread_rwlock_unlock, (pthread_rwlock_t * l), (l))

BLOCKING(pthread_spin_lock, (pthread_spinlock_t * l), (l))
TRY(pthread_spin_trylock, (pthread_spinlock_t * l), (l))
RELEASE(pthread_spin_unlock, (pthread_spinlock_t * l), (l))

/*
 * A condition-variable wait: the mutex is released on entry and held again
 * on return, whatever the result (POSIX: a timeout returns with the mutex
 * held; EINVAL and EPERM return without having released it).
 */
#define COND_WAIT(name, params, args)                                                              \
	ANN_EXPORT int name params                                                                 \
	{                                                                                          \
		__typeof__(&name) real = name##_real();                                            \
		unsigned on = lock_metrics();                                                      \
		uint64_t start;                                                                    \
		int r;                                                                             \
                                                                                                   \
		if (!real)                                                                         \
			return EAGAIN;                                                             \
		start = block_begin(on);                                                           \
		if (on & HOLD_BIT)                                                                 \
			ann_lock_released(start);                                                  \
		r = real args;                                                                     \
		block_end(on, start, true);                                                        \
		return r;                                                                          \
	}

COND_WAIT(pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t *m), (c, m))
COND_WAIT(pthread_cond_timedwait, (pthread_cond_t * c, pthread_mutex_t *m, abstime_t t), (c, m, t))
COND_WAIT(pthread_cond_clockwait,
	  (pthread_cond_t * c, pthread_mutex_t *m, clockid_t k, abstime_t t), (c, m, k, t))
