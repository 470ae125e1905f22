/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread registry and thread life cycle: pthread_create is interposed so every
 * program thread is sampled from its first instruction and starts with its
 * parent's delay count (paper §3.4: delays already inserted into the parent
 * also delayed the creation of the child). A pthread key destructor runs on
 * every way out of a thread (return, pthread_exit, cancellation) before a
 * joiner can wake, so an exiting thread pays what it owes first.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "causal/runtime/progress.h"
#include "causal/runtime/runtime.h"

static struct thread_state thread_table[LEVER_MAX_THREADS];
static __thread struct thread_state *tls_state;
static pthread_key_t exit_key;
static _Atomic int exit_key_ready;
static _Atomic unsigned live_threads;
static _Atomic int table_full_warned;
/* slots ever used: walks stop there instead of touching all 4096 (MBs of cold pages) */
static _Atomic size_t slots_high;

/* How each slot's last thread exited, for its joiner (delays_after_join). */
struct exit_record {
	_Atomic uint64_t seq; /* odd while being written */
	pthread_t self;
	uint64_t local, epoch, ns;
};
static struct exit_record exit_records[LEVER_MAX_THREADS];

struct thread_state *thread_self(void)
{
	return tls_state;
}

static void stack_bounds(struct thread_state *t)
{
	int (*getattr)(pthread_t, pthread_attr_t *) = real_symbol("pthread_getattr_np", NULL);
	pthread_attr_t attr;
	void *addr;
	size_t size;

	t->stack_lo = 0;
	t->stack_hi = 0;
	if (!getattr || getattr(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

static void thread_exit_hook(void *arg)
{
	struct thread_state *t = arg;

	if (t && t == tls_state)
		thread_unregister(t);
}

void threads_init(void)
{
	if (pthread_key_create(&exit_key, thread_exit_hook) == 0)
		atomic_store(&exit_key_ready, 1);
}

struct thread_state *thread_register(uint64_t parent_local, uint64_t parent_epoch,
				     int64_t parent_excess)
{
	struct thread_state *t = NULL;

	if (tls_state)
		return tls_state;
	for (size_t i = 0; i < LEVER_MAX_THREADS; i++) {
		int expected = 0;

		if (atomic_load_explicit(&thread_table[i].used, memory_order_relaxed))
			continue;
		if (atomic_compare_exchange_strong(&thread_table[i].used, &expected, 1)) {
			size_t high = atomic_load(&slots_high);

			while (high < i + 1 &&
			       !atomic_compare_exchange_weak(&slots_high, &high, i + 1))
				;
			t = &thread_table[i];
			break;
		}
	}
	if (!t) {
		if (!atomic_exchange(&table_full_warned, 1))
			LOG_WARN("more than %d live threads; extra threads run unprofiled\n",
				 LEVER_MAX_THREADS);
		return NULL;
	}
	/* Keep 'used' (set above); reset everything else. */
	t->tid = (pid_t)syscall(SYS_gettid);
	t->self = pthread_self();
	t->perf_fd = -1;
	t->batch_fd = -1;
	t->ring = NULL;
	t->ring_size = 0;
	t->timer_armed = false;
	t->tbuf_n = 0;
	t->last_line = NULL;
	t->local = parent_local;
	t->epoch = parent_epoch;
	/* the parent's oversleep delayed our creation too (Coz 2014 does the same) */
	t->excess_ns = parent_excess;
	t->global_at_block = 0;
	t->epoch_at_block = 0;
	atomic_store(&t->arrival.count, 0);
	t->arrivals_folded = 0;
	t->registered_ns = time_monotonic_ns();
	t->idle_ns = 0;
	atomic_store(&t->counted_exit, false);
	atomic_store(&t->mark_tid, 0);
	atomic_store(&t->blocked, 0);
	atomic_store(&t->ack, atomic_load(&rt.end_request));
	atomic_store(&t->paying_until_ns, 0);
	t->busy = 1;
	t->pending = 0;
	t->exiting = false;
	signals_unblock_ours();
	stack_bounds(t);
	tls_state = t;
	signals_publish_view();
	atomic_fetch_add(&live_threads, 1);
	if (atomic_load(&exit_key_ready))
		pthread_setspecific(exit_key, t);
	sampler_start(t);
	progress_thread_start(t);
	t->busy = 0;
	return t;
}

static void record_exit(struct thread_state *t)
{
	struct exit_record *x = &exit_records[t - thread_table];

	atomic_fetch_add_explicit(&x->seq, 1, memory_order_acq_rel);
	x->self = t->self;
	x->local = t->local;
	x->epoch = t->epoch;
	x->ns = time_monotonic_ns();
	atomic_fetch_add_explicit(&x->seq, 1, memory_order_release);
}

/* The latest exit of th (a pthread_t is reused once its thread is joined). */
bool threads_exit_record(pthread_t th, uint64_t *local, uint64_t *epoch, uint64_t *exit_ns)
{
	size_t n = atomic_load(&slots_high);
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		struct exit_record *x = &exit_records[i];
		uint64_t seq = atomic_load_explicit(&x->seq, memory_order_acquire);
		uint64_t l, e, ns;

		if (!seq || (seq & 1) || !pthread_equal(x->self, th))
			continue;
		l = x->local;
		e = x->epoch;
		ns = x->ns;
		if (atomic_load_explicit(&x->seq, memory_order_acquire) != seq ||
		    (found && ns <= *exit_ns))
			continue;
		*local = l;
		*epoch = e;
		*exit_ns = ns;
		found = true;
	}
	return found;
}

static _Atomic uint64_t shortest_arrival_period_ns = UINT64_MAX;

/*
 * The inter-arrival period of a thread: its life without the pauses it slept
 * and the time it was blocked (e.g. on a full queue), per arrival: the work
 * between two arrivals that the arrival speedup takes off. AMP cannot shorten a period below zero:
 * an arrival speedup at or above it is a load the program cannot be asked for.
 */
static void note_arrival_period(const struct thread_state *t)
{
	uint64_t n = atomic_load(&t->arrival.count), now = time_monotonic_ns(), busy, period, cur;

	if (n < 2)
		return;
	busy = now - t->registered_ns;
	busy = busy > t->idle_ns ? busy - t->idle_ns : 0;
	period = busy / n;
	cur = atomic_load(&shortest_arrival_period_ns);
	while (period < cur &&
	       !atomic_compare_exchange_weak(&shortest_arrival_period_ns, &cur, period))
		;
}

static _Atomic unsigned arriving_exited; /* threads that arrived since the mark, then exited */

void threads_note_arrivals_at_exit(struct thread_state *t)
{
	uint64_t mark = t->mark_tid == t->tid ? t->arrivals_mark : 0;
	uint64_t n = atomic_load(&t->arrival.count);

	if (atomic_load(&t->counted_exit))
		return;
	if (n > mark)
		atomic_fetch_add(&arriving_exited, 1);
	note_arrival_period(t);
	/* published before the flag: a reader may count them twice for a moment, never lose them */
	atomic_fetch_add(&rt.arrivals_exited, n);
	atomic_store(&t->counted_exit, true);
}

/*
 * Every slot, exiting threads included (their arrivals would be missing
 * between the start of their exit and its bookkeeping otherwise).
 */
uint64_t threads_arrivals(void)
{
	size_t high = atomic_load_explicit(&slots_high, memory_order_acquire);
	uint64_t n = atomic_load(&rt.arrivals_exited);

	for (size_t i = 0; i < high; i++) {
		struct thread_state *t = &thread_table[i];

		if (atomic_load_explicit(&t->used, memory_order_acquire) &&
		    !atomic_load(&t->counted_exit))
			n += atomic_load_explicit(&t->arrival.count, memory_order_relaxed);
	}
	return n;
}

static void mark_arrivals(struct thread_state *t, void *ctx)
{
	atomic_store(&t->arrivals_mark,
		     atomic_load_explicit(&t->arrival.count, memory_order_relaxed));
	atomic_store(&t->mark_tid, t->tid);
	atomic_store(&t->mark_epoch, *(const uint64_t *)ctx);
}

void threads_mark_arrivals(uint64_t epoch)
{
	atomic_store(&arriving_exited, 0);
	threads_foreach(mark_arrivals, &epoch);
}

static void count_arriving(struct thread_state *t, void *ctx)
{
	uint64_t n = atomic_load_explicit(&t->arrival.count, memory_order_relaxed);
	/* a slot reused by a thread born during the experiment started from 0 */
	uint64_t mark = t->mark_tid == t->tid ? t->arrivals_mark : 0;

	if (n > mark)
		(*(unsigned *)ctx)++;
}

unsigned threads_arriving_since_mark(void)
{
	unsigned n = atomic_load(&arriving_exited);

	threads_foreach(count_arriving, &n);
	return n;
}

static void live_arrival_period(struct thread_state *t, void *ctx)
{
	if (!t->counted_exit)
		note_arrival_period(t);
}

uint64_t threads_shortest_arrival_period(void)
{
	threads_foreach(live_arrival_period, NULL);
	return atomic_load(&shortest_arrival_period_ns);
}

void thread_unregister(struct thread_state *t)
{
	if (!t || t->exiting)
		return;
	t->busy = 1;
	t->exiting = true;
	/* Count the last samples and pay what is owed before a joiner can wake. */
	samples_process(t);
	threads_flush_samples(t);
	samples_account_tail(t);
	delays_catch_up(t);
	record_exit(t);
	threads_note_arrivals_at_exit(t);
	progress_thread_stop(t);
	sampler_stop(t);
	tls_state = NULL;
	delays_mark_blocked(t, false); /* cancelled inside a wrapped wait */
	atomic_fetch_sub(&live_threads, 1);
	atomic_store_explicit(&t->used, 0, memory_order_release);
}

void threads_foreach(void (*fn)(struct thread_state *t, void *ctx), void *ctx)
{
	size_t high = atomic_load_explicit(&slots_high, memory_order_acquire);

	for (size_t i = 0; i < high; i++) {
		struct thread_state *t = &thread_table[i];

		if (atomic_load_explicit(&t->used, memory_order_acquire) && !t->exiting)
			fn(t, ctx);
	}
}

void threads_foreach_all(void (*fn)(struct thread_state *t, void *ctx), void *ctx)
{
	size_t high = atomic_load_explicit(&slots_high, memory_order_acquire);

	for (size_t i = 0; i < high; i++) {
		struct thread_state *t = &thread_table[i];

		if (atomic_load_explicit(&t->used, memory_order_acquire))
			fn(t, ctx);
	}
}

/* ---- pthread_create ---- */

struct start_args {
	void *(*fn)(void *);
	void *arg;
	uint64_t parent_local;
	uint64_t parent_epoch;
	int64_t parent_excess;
	bool signal_view; /* the program thinks the creator blocks LEVER_SIGNAL */
};

static void *thread_start(void *p)
{
	struct start_args a = *(struct start_args *)p;
	void *ret;

	free(p);
	signals_inherit_view(a.signal_view);
	thread_register(a.parent_local, a.parent_epoch, a.parent_excess);
	ret = a.fn(a.arg);
	/* the key destructor unregisters, after thread-specific data of the program */
	return ret;
}

LEVER_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
				void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct thread_state *parent;
	struct start_args *a;
	int r;

	if (!real)
		real = real_symbol("pthread_create", NULL);
	if (!real)
		return EAGAIN;
	if (!atomic_load(&rt.enabled))
		return real(thread, attr, fn, arg);
	a = malloc(sizeof(*a));
	if (!a)
		return real(thread, attr, fn, arg);
	parent = runtime_enter();
	a->fn = fn;
	a->arg = arg;
	a->parent_local = 0;
	a->parent_epoch = 0;
	a->parent_excess = 0;
	a->signal_view = signals_creator_view();
	if (parent) {
		delays_sync_epoch(parent);
		delays_fold_arrivals(parent); /* the child starts level with them */
		a->parent_local = parent->local;
		a->parent_epoch = parent->epoch;
		a->parent_excess = parent->excess_ns;
	}
	runtime_leave(parent);
	r = real(thread, attr, thread_start, a);
	if (r != 0)
		free(a);
	return r;
}

unsigned threads_live(void)
{
	return atomic_load(&live_threads);
}

/*
 * After fork the child has only the forking thread; forget the others, and
 * close the sampler and breakpoint descriptors they held: they came along
 * into the child's descriptor table (2 per thread with perf).
 */
void threads_after_fork_child(struct thread_state *self)
{
	for (size_t i = 0; i < LEVER_MAX_THREADS; i++) {
		struct thread_state *t = &thread_table[i];

		if (t == self)
			continue;
		if (atomic_load(&t->used)) {
			sampler_forget_after_fork(t);
			progress_forget_after_fork(t);
		}
		atomic_store(&t->used, 0);
	}
	atomic_store(&live_threads, self ? 1 : 0);
	atomic_store(&rt.blocked_threads, self && atomic_load(&self->blocked) ? 1 : 0);
	if (self)
		self->tid = (pid_t)syscall(SYS_gettid);
}

struct flush {
	struct thread_state *self;
	uint64_t request;
	unsigned waiting;
	bool send;
};

static void flush_visit(struct thread_state *t, void *ctx)
{
	struct flush *f = ctx;

	if (t == f->self || t->exiting || atomic_load(&t->blocked))
		return;
	if (f->send)
		sampler_request_catch_up(t);
	else if (atomic_load(&t->ack) < f->request)
		f->waiting++;
}

/*
 * Samples are counted in batches (every 10 ms of a thread's CPU time), so G
 * lags the selected line's real execution by up to a batch. A thread that
 * lives shorter than that (a worker per request or per round) would exit
 * before the pauses for its co-runners' work are known, while the experiment
 * still subtracts them from its duration: the prediction would be inflated.
 * So an exiting thread first asks the others to count their samples, and
 * waits a bounded time (a descheduled thread may not answer soon).
 */
void threads_flush_samples(struct thread_state *self)
{
	struct flush f = {.self = self, .send = true};
	uint64_t deadline;

	/* nothing to flush when neither line samples nor arrivals add delay */
	if (atomic_load_explicit(&rt.active, memory_order_acquire) != EXPERIMENT_RUNNING ||
	    (atomic_load(&rt.delay_ns) == 0 && rt.cfg.arrival_ns == 0))
		return;
	f.request = atomic_fetch_add(&rt.end_request, 1) + 1;
	threads_foreach(flush_visit, &f);
	f.send = false;
	deadline = time_monotonic_ns() + 2 * NSEC_PER_MSEC;
	do {
		f.waiting = 0;
		threads_foreach(flush_visit, &f);
		if (!f.waiting)
			return;
		sched_yield();
	} while (time_monotonic_ns() < deadline);
}
