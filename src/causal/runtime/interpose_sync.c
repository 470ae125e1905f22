/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Interposers for the POSIX calls that can wake or suspend another thread
 * (paper §3.4.1, Tables 1 and 2; spec coz.md §7). The rule they implement:
 *
 *   - before anything that may wake a suspended thread, pay every delay owed
 *     (delays_catch_up), so that the woken thread may skip them;
 *   - around anything that may suspend this thread, pay first, remember the
 *     global count (delays_pre_block), make the call, and afterwards skip the
 *     pauses added meanwhile only if another thread woke us up
 *     (delays_post_block(t, woken)). Timeouts and errors do not count.
 *
 * Following the paper rather than Coz's code, pre_block also pays what is
 * owed before blocking.
 *
 * The bookkeeping runs inside runtime_enter()/runtime_leave(), which mark the
 * thread busy so our sampling signal defers its work; the real call itself
 * always runs with busy cleared, because a real lock may spin in user space
 * or block for a long time.
 *
 * Real functions are resolved lazily with real_symbol() and cached; they are
 * also resolved eagerly by a constructor so that a lookup nested inside
 * dlsym() (which returns NULL) practically never happens. If it does, every
 * wrapper has a fallback that cannot crash: plain mutexes use glibc's own
 * futex protocol, everything else fails softly with EAGAIN.
 *
 * Calls made by lever's own code (the profiler thread, the profile writer)
 * skip the bookkeeping: see address_in_lever().
 *
 * Not wrapped because they never suspend the caller: the trylock variants and
 * pthread_spin_*. Not wrapped at all: the GLIBC_2.2.5 compatibility versions
 * of the condition-variable functions (binaries linked against glibc < 2.3.2);
 * a program referencing them would reach our wrappers, which call the 2.3.2
 * implementation.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "causal/runtime/runtime.h"

#define CALLER() __builtin_return_address(0)

REAL(pthread_mutex_lock, "GLIBC_2.2.5")
REAL(pthread_mutex_unlock, "GLIBC_2.2.5")
REAL(pthread_mutex_timedlock, "GLIBC_2.34")
REAL(pthread_mutex_clocklock, "GLIBC_2.34")
REAL(pthread_cond_wait, "GLIBC_2.3.2")
REAL(pthread_cond_timedwait, "GLIBC_2.3.2")
REAL(pthread_cond_clockwait, "GLIBC_2.34")
REAL(pthread_cond_signal, "GLIBC_2.3.2")
REAL(pthread_cond_broadcast, "GLIBC_2.3.2")
REAL(pthread_rwlock_rdlock, "GLIBC_2.34")
REAL(pthread_rwlock_wrlock, "GLIBC_2.34")
REAL(pthread_rwlock_timedrdlock, "GLIBC_2.34")
REAL(pthread_rwlock_timedwrlock, "GLIBC_2.34")
REAL(pthread_rwlock_clockrdlock, "GLIBC_2.34")
REAL(pthread_rwlock_clockwrlock, "GLIBC_2.34")
REAL(pthread_rwlock_unlock, "GLIBC_2.34")
REAL(pthread_join, "GLIBC_2.34")
REAL(pthread_tryjoin_np, "GLIBC_2.34")
REAL(pthread_timedjoin_np, "GLIBC_2.34")
REAL(pthread_clockjoin_np, "GLIBC_2.34")
REAL(pthread_barrier_wait, "GLIBC_2.34")
REAL(pthread_kill, "GLIBC_2.34")
REAL(pthread_sigqueue, "GLIBC_2.34")
REAL(kill, "GLIBC_2.2.5")
REAL(tgkill, "GLIBC_2.30")
REAL(sigqueue, "GLIBC_2.2.5")
REAL(sem_wait, "GLIBC_2.34")
REAL(sem_timedwait, "GLIBC_2.34")
REAL(sem_clockwait, "GLIBC_2.34")
REAL(sem_post, "GLIBC_2.34")

__attribute__((constructor)) static void interpose_sync_resolve(void)
{
	/* Resolve now, while nothing else is being looked up on this thread. */
	(void)real_pthread_mutex_lock();
	(void)real_pthread_mutex_unlock();
	(void)real_pthread_mutex_timedlock();
	(void)real_pthread_mutex_clocklock();
	(void)real_pthread_cond_wait();
	(void)real_pthread_cond_timedwait();
	(void)real_pthread_cond_clockwait();
	(void)real_pthread_cond_signal();
	(void)real_pthread_cond_broadcast();
	(void)real_pthread_rwlock_rdlock();
	(void)real_pthread_rwlock_wrlock();
	(void)real_pthread_rwlock_timedrdlock();
	(void)real_pthread_rwlock_timedwrlock();
	(void)real_pthread_rwlock_clockrdlock();
	(void)real_pthread_rwlock_clockwrlock();
	(void)real_pthread_rwlock_unlock();
	(void)real_pthread_join();
	(void)real_pthread_tryjoin_np();
	(void)real_pthread_timedjoin_np();
	(void)real_pthread_clockjoin_np();
	(void)real_pthread_barrier_wait();
	(void)real_pthread_kill();
	(void)real_pthread_sigqueue();
	(void)real_kill();
	(void)real_tgkill();
	(void)real_sigqueue();
	(void)real_sem_wait();
	(void)real_sem_timedwait();
	(void)real_sem_clockwait();
	(void)real_sem_post();
}

/* ---- bookkeeping brackets ---- */

/* Pays owed delays before a call that may wake another thread. */
static void wake_prologue(const void *ra)
{
	struct thread_state *t;
	int saved = errno;

	if (address_in_lever(ra))
		return;
	t = runtime_enter();
	if (!t)
		return;
	delays_catch_up(t);
	runtime_leave(t);
	errno = saved;
}

/* ---- fallbacks for a lookup nested in dlsym (see the header comment) ---- */

static long futex_op(_Atomic int *addr, int op, int val, bool shared)
{
	return syscall(SYS_futex, addr, op | (shared ? 0 : FUTEX_PRIVATE_FLAG), val, NULL, NULL, 0);
}

#define MUTEX_KIND_TYPE_MASK 0x7f /* type bits of __kind; 128 = process-shared */
#define MUTEX_KIND_PSHARED   0x80

/* glibc's lock word protocol for a plain mutex: 0 free, 1 taken, 2 taken with waiters. */
static int fallback_mutex_lock(pthread_mutex_t *m)
{
	_Atomic int *word = (_Atomic int *)&m->__data.__lock;
	bool shared = m->__data.__kind & MUTEX_KIND_PSHARED;
	int expected = 0;

	if (m->__data.__kind & MUTEX_KIND_TYPE_MASK)
		return EAGAIN;
	if (!atomic_compare_exchange_strong(word, &expected, 1)) {
		while (atomic_exchange(word, 2) != 0)
			futex_op(word, FUTEX_WAIT, 2, shared);
	}
	m->__data.__owner = (int)syscall(SYS_gettid);
	m->__data.__nusers++;
	return 0;
}

static int fallback_mutex_unlock(pthread_mutex_t *m)
{
	_Atomic int *word = (_Atomic int *)&m->__data.__lock;
	bool shared = m->__data.__kind & MUTEX_KIND_PSHARED;

	if (m->__data.__kind & MUTEX_KIND_TYPE_MASK)
		return EAGAIN;
	m->__data.__owner = 0;
	m->__data.__nusers--;
	if (atomic_exchange(word, 0) > 1)
		futex_op(word, FUTEX_WAKE, 1, shared);
	return 0;
}

static int fail_errno(void)
{
	errno = EAGAIN;
	return -1;
}

/* ---- mutexes ---- */

LEVER_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	__typeof__(&pthread_mutex_lock) real = real_pthread_mutex_lock();
	bool armed;
	int r;

	if (!real)
		return fallback_mutex_lock(m);
	armed = delays_block_begin(CALLER());
	r = real(m);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	__typeof__(&pthread_mutex_timedlock) real = real_pthread_mutex_timedlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(m, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
					 const struct timespec *abstime)
{
	__typeof__(&pthread_mutex_clocklock) real = real_pthread_mutex_clocklock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(m, clock, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	__typeof__(&pthread_mutex_unlock) real = real_pthread_mutex_unlock();

	if (!real)
		return fallback_mutex_unlock(m);
	wake_prologue(CALLER());
	return real(m);
}

/* ---- condition variables ---- */

LEVER_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	__typeof__(&pthread_cond_wait) real = real_pthread_cond_wait();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(c, m);
	delays_block_end(armed, true);
	return r;
}

LEVER_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					const struct timespec *abstime)
{
	__typeof__(&pthread_cond_timedwait) real = real_pthread_cond_timedwait();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(c, m, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

/* libstdc++ 12 implements condition_variable::wait_for/wait_until with this one. */
LEVER_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
					const struct timespec *abstime)
{
	__typeof__(&pthread_cond_clockwait) real = real_pthread_cond_clockwait();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(c, m, clock, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	__typeof__(&pthread_cond_signal) real = real_pthread_cond_signal();

	if (!real)
		return 0; /* no other thread can be waiting during start-up */
	wake_prologue(CALLER());
	return real(c);
}

LEVER_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	__typeof__(&pthread_cond_broadcast) real = real_pthread_cond_broadcast();

	if (!real)
		return 0;
	wake_prologue(CALLER());
	return real(c);
}

/* ---- read-write locks ---- */

LEVER_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	__typeof__(&pthread_rwlock_rdlock) real = real_pthread_rwlock_rdlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	__typeof__(&pthread_rwlock_wrlock) real = real_pthread_rwlock_wrlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	__typeof__(&pthread_rwlock_timedrdlock) real = real_pthread_rwlock_timedrdlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	__typeof__(&pthread_rwlock_timedwrlock) real = real_pthread_rwlock_timedwrlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
					    const struct timespec *abstime)
{
	__typeof__(&pthread_rwlock_clockrdlock) real = real_pthread_rwlock_clockrdlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l, clock, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
					    const struct timespec *abstime)
{
	__typeof__(&pthread_rwlock_clockwrlock) real = real_pthread_rwlock_clockwrlock();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(l, clock, abstime);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	__typeof__(&pthread_rwlock_unlock) real = real_pthread_rwlock_unlock();

	if (!real)
		return EAGAIN;
	wake_prologue(CALLER());
	return real(l);
}

/* ---- joining ---- */

/*
 * A thread that exits pays what it owes first, so its joiner may skip; then
 * the joiner waits until the joined thread's virtual exit (delays_after_join).
 */
LEVER_EXPORT int pthread_join(pthread_t thread, void **retval)
{
	__typeof__(&pthread_join) real = real_pthread_join();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(thread, retval);
	delays_block_end(armed, r == 0);
	if (r == 0)
		delays_join_end(thread);
	return r;
}

LEVER_EXPORT int pthread_tryjoin_np(pthread_t thread, void **retval)
{
	__typeof__(&pthread_tryjoin_np) real = real_pthread_tryjoin_np();
	bool armed;
	int r;

	if (!real)
		return EBUSY;
	armed = delays_block_begin(CALLER());
	r = real(thread, retval);
	delays_block_end(armed, r == 0);
	if (r == 0)
		delays_join_end(thread);
	return r;
}

LEVER_EXPORT int pthread_timedjoin_np(pthread_t thread, void **retval,
				      const struct timespec *abstime)
{
	__typeof__(&pthread_timedjoin_np) real = real_pthread_timedjoin_np();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(thread, retval, abstime);
	delays_block_end(armed, r == 0);
	if (r == 0)
		delays_join_end(thread);
	return r;
}

LEVER_EXPORT int pthread_clockjoin_np(pthread_t thread, void **retval, clockid_t clock,
				      const struct timespec *abstime)
{
	__typeof__(&pthread_clockjoin_np) real = real_pthread_clockjoin_np();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	armed = delays_block_begin(CALLER());
	r = real(thread, retval, clock, abstime);
	delays_block_end(armed, r == 0);
	if (r == 0)
		delays_join_end(thread);
	return r;
}

/* ---- barriers: in both tables ---- */

LEVER_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	__typeof__(&pthread_barrier_wait) real = real_pthread_barrier_wait();
	bool armed;
	int r;

	if (!real)
		return EAGAIN;
	/* delays_block_begin pays what is owed (catch-up) before remembering G. */
	armed = delays_block_begin(CALLER());
	r = real(b);
	delays_block_end(armed, true);
	return r;
}

/* ---- semaphores ---- */

LEVER_EXPORT int sem_wait(sem_t *s)
{
	__typeof__(&sem_wait) real = real_sem_wait();
	bool armed;
	int r;

	if (!real)
		return fail_errno();
	armed = delays_block_begin(CALLER());
	r = real(s);
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	__typeof__(&sem_timedwait) real = real_sem_timedwait();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	bool armed;
	int r;

	if (!real)
		return fail_errno();
	armed = delays_block_begin(ra);
	/* the deadline is absolute: lever's signal alone just means wait again */
	for (;;) {
		runs = signals_handler_runs();
		r = real(s, abstime);
		if (r == 0 || errno != EINTR || !signals_only_lever_interrupted(ra, runs))
			break;
		errno = saved;
	}
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
	__typeof__(&sem_clockwait) real = real_sem_clockwait();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	bool armed;
	int r;

	if (!real)
		return fail_errno();
	armed = delays_block_begin(ra);
	for (;;) {
		runs = signals_handler_runs();
		r = real(s, clock, abstime);
		if (r == 0 || errno != EINTR || !signals_only_lever_interrupted(ra, runs))
			break;
		errno = saved;
	}
	delays_block_end(armed, r == 0);
	return r;
}

LEVER_EXPORT int sem_post(sem_t *s)
{
	__typeof__(&sem_post) real = real_sem_post();

	if (!real)
		return fail_errno();
	wake_prologue(CALLER());
	return real(s);
}

/* ---- sending signals (a signal may end another thread's sigwait) ---- */

LEVER_EXPORT int pthread_kill(pthread_t thread, int sig)
{
	__typeof__(&pthread_kill) real = real_pthread_kill();

	if (!real)
		return EAGAIN;
	if (sig != 0)
		wake_prologue(CALLER());
	return real(thread, sig);
}

LEVER_EXPORT int pthread_sigqueue(pthread_t thread, int sig, const union sigval value)
{
	__typeof__(&pthread_sigqueue) real = real_pthread_sigqueue();

	if (!real)
		return EAGAIN;
	if (sig != 0)
		wake_prologue(CALLER());
	return real(thread, sig, value);
}

/* Whether a kill()-style pid designates (a group containing) this process. */
static bool pid_targets_self(pid_t pid)
{
	return pid == 0 || pid == getpid() || (pid < -1 && -pid == getpgrp());
}

LEVER_EXPORT int kill(pid_t pid, int sig)
{
	__typeof__(&kill) real = real_kill();

	if (!real)
		return (int)syscall(SYS_kill, pid, sig);
	if (sig != 0 && pid_targets_self(pid))
		wake_prologue(CALLER());
	return real(pid, sig);
}

LEVER_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	__typeof__(&tgkill) real = real_tgkill();

	if (!real)
		return (int)syscall(SYS_tgkill, tgid, tid, sig);
	if (sig != 0 && tgid == getpid())
		wake_prologue(CALLER());
	return real(tgid, tid, sig);
}

LEVER_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	__typeof__(&sigqueue) real = real_sigqueue();

	if (!real)
		return fail_errno();
	if (sig != 0 && pid_targets_self(pid))
		wake_prologue(CALLER());
	return real(pid, sig, value);
}

/* ---- Coz's ABI for custom synchronisation (COZ_PRE_BLOCK and friends) ---- */

LEVER_EXPORT void _coz_pre_block(void)
{
	(void)delays_block_begin(NULL);
}

LEVER_EXPORT void _coz_post_block(int skip_delays)
{
	delays_block_end(true, skip_delays != 0);
}

LEVER_EXPORT void _coz_add_delays(void)
{
	wake_prologue(NULL);
}
