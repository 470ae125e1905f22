/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Virtual speedup by delays (paper §3.4). Invariant kept for every thread
 * during an experiment: time paused + own virtual speedup = G, the global
 * delay in ns, once the thread has caught up. Own samples in the selected
 * line raise local by d each, own arrivals (load amplification, AMP) by the
 * arrival speedup each: one protocol for both, so it counts time, not
 * pauses. A thread ahead of G raises G (CAS max, the minimal value keeping
 * the invariant); a thread behind sleeps the difference.
 * nanosleep overshoots (50-90 us here), so the excess is banked and taken off
 * later pauses.
 */
#include <errno.h>
#include <sys/prctl.h>

#include "causal/runtime/progress.h"
#include "causal/runtime/runtime.h"

/*
 * A count from an older experiment is replaced by G as it was when the
 * current experiment started, so pauses added since then are still owed.
 */
void delays_sync_epoch(struct thread_state *t)
{
	uint64_t epoch = atomic_load_explicit(&rt.epoch, memory_order_acquire);

	if (t->epoch != epoch) {
		t->epoch = epoch;
		t->local = atomic_load_explicit(&rt.epoch_global, memory_order_acquire);
		t->excess_ns = 0;
	}
}

static void ask_to_pay(struct thread_state *t, void *self)
{
	if (t == self || atomic_load(&t->blocked) || atomic_load(&t->paying_until_ns))
		return;
	if (sampler_request_catch_up(t))
		atomic_fetch_add_explicit(&rt.prompts, 1, memory_order_relaxed);
}

/*
 * Latency points (Little's law): a running thread that owes a pause pays it
 * at its next batch or interposed call. A closed-loop client thinking while
 * G rose would pay it after its next BEGIN, inside its own request, held in
 * flight for time the virtual program does not have, and no in-flight
 * counter can tell whose request it is (Coz's counters are global). So the
 * threads that can run are asked to pay now, while they are where G rose
 * (the end-of-experiment request, at most once per sampling period). Blocked
 * threads skip the pauses when woken and are left alone.
 */
static void prompt_running_threads(struct thread_state *self)
{
	uint64_t now, last;

	if (!progress_has_latency())
		return;
	now = time_monotonic_ns();
	last = atomic_load_explicit(&rt.prompted_ns, memory_order_relaxed);
	if (now - last < rt.cfg.period_ns ||
	    !atomic_compare_exchange_strong(&rt.prompted_ns, &last, now))
		return;
	threads_foreach(ask_to_pay, self);
}

static void raise_global(struct thread_state *t, uint64_t local)
{
	uint64_t g = atomic_load(&rt.global);

	while (g < local) {
		if (atomic_compare_exchange_weak(&rt.global, &g, local)) {
			progress_note_pause(local - g);
			prompt_running_threads(t);
			return;
		}
	}
}

/* Read at run time so that the compiler cannot turn the division into a multiply. */
static volatile uint64_t spin_divisor = 3;
static volatile uint64_t spin_sink; /* keeps the divisions' result live */

/*
 * Pays ns by computing until it has passed (--pause=spin). A sleeping pause
 * leaves the thread's core idle, and where two hardware threads share a
 * core (SMT; the two vCPUs of a small VM) the thread running the selected
 * line then runs faster than it would beside real work: a virtual speedup
 * larger than the real one. Spinning keeps the core as busy as the work
 * would (dependent divisions, as the bench programs' loops).
 */
static void spin_ns(uint64_t ns)
{
	uint64_t start = time_monotonic_ns(), now = start, x = ns, d = spin_divisor;

	while (now - start < ns) {
		for (int i = 0; i < 256; i++)
			x = x / d + 0x9e3779b97f4a7c15ULL;
		now = time_monotonic_ns();
	}
	spin_sink = x;
}

/*
 * --pause=auto (the default): spin while every thread that can run has a CPU
 * of its own (live threads outside the blocking calls we wrap, at most the
 * CPUs of the program's affinity), so that a sleeping pause does not hand
 * its core (SMT) or the package's frequency to the selected thread; sleep
 * when threads outnumber CPUs, where a spin would take a CPU another thread
 * of the program needs. A thread blocked in a call we do not wrap counts as
 * runnable, which errs towards sleeping, the old behaviour.
 */
static bool pause_spins(void)
{
	unsigned live, blocked;

	if (rt.cfg.pause_spin)
		return true;
	if (!rt.cfg.pause_auto)
		return false;
	live = threads_live();
	blocked = atomic_load_explicit(&rt.blocked_threads, memory_order_relaxed);
	return live <= blocked || live - blocked <= rt.cfg.cpus;
}

/* Marks t as inside (or out of) a blocking call, keeping the count pause_spins() reads. */
void delays_mark_blocked(struct thread_state *t, bool blocked)
{
	int was = atomic_exchange(&t->blocked, blocked ? 1 : 0);

	if (was && !blocked)
		atomic_fetch_sub_explicit(&rt.blocked_threads, 1, memory_order_relaxed);
	else if (!was && blocked)
		atomic_fetch_add_explicit(&rt.blocked_threads, 1, memory_order_relaxed);
}

/* Sleeps ns with 1 ns of timer slack, then gives the thread its own back. */
static void sleep_tight(uint64_t ns)
{
	/*
	 * Default timer slack (50 us) would add to nanosleep's overshoot. The
	 * slack to restore is the thread's as it is now, not as it was when the
	 * thread registered: a program that lowers its own slack after that
	 * (prodcons' consumer) would otherwise get 50 us back after its first
	 * pause, and each of its later sleeps would run long, time that virtual
	 * speedup does not subtract (a saturated consumer's capacity read ~2.5%
	 * low).
	 */
	int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	time_sleep_ns(ns);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
}

/*
 * Pays ns (sleeping or spinning) with sampling paused; returns the time that
 * passed, the bracket included: stopping and restarting the sampler and the
 * slack calls (7 system calls) keep the thread from its work as much as
 * the sleep, so they are paid delay and their time is banked with the
 * overshoot (uncounted, a saturated consumer that pays a pause per item lost
 * them from every item).
 */
static uint64_t sleep_unsampled(struct thread_state *t, uint64_t ns)
{
	uint64_t start = time_monotonic_ns(), got;

	sampler_pause(t);
	if (pause_spins())
		spin_ns(ns);
	else
		sleep_tight(ns);
	sampler_resume(t);
	got = time_monotonic_ns() - start;
	atomic_fetch_add_explicit(&rt.inserted_delay_ns, got, memory_order_relaxed);
	return got;
}

/*
 * Pays until this thread is level with G. Other threads may raise G while we
 * sleep; those pauses are owed too before we go on, or a thread about to
 * exit or wake another would have done work before the pauses that should
 * have preceded it (and a short-lived thread would inflate the prediction).
 */
void delays_catch_up(struct thread_state *t)
{
	uint64_t g;
	int64_t want;
	uint64_t got;

	if (!t)
		return;
	delays_sync_epoch(t);
	delays_fold_arrivals(t);
	for (;;) {
		if (atomic_load_explicit(&rt.active, memory_order_acquire) == EXPERIMENT_IDLE) {
			t->local = atomic_load(&rt.global);
			return;
		}
		g = atomic_load(&rt.global);
		if (t->local > g) {
			raise_global(t, t->local);
			return;
		}
		if (t->local == g)
			return;
		want = (int64_t)(g - t->local) - t->excess_ns;
		if (want <= 0) {
			t->local = g;
			t->excess_ns = -want;
			continue;
		}
		/* local counts the pause as taken: until it is, say how much is left */
		atomic_store(&t->paying_until_ns, time_monotonic_ns() + (uint64_t)want);
		t->local = g;
		got = sleep_unsampled(t, (uint64_t)want);
		atomic_store(&t->paying_until_ns, 0);
		t->idle_ns += got;
		t->excess_ns = (int64_t)got - want;
		delays_sync_epoch(t);
	}
}

/*
 * A joiner cannot go on before the joined thread ended in virtual time. After
 * a wake-up the joiner counts every pause added while it was blocked as its
 * own (post_block), which is right when the thread that woke it was the last
 * to finish; but a thread that exited earlier in real time may have ended
 * later in virtual time: a worker that paid its pauses for the selected
 * line's work up to its exit, joined after the thread running that line
 * (whose later samples raised G after the worker was gone). Its virtual exit
 * is exit_ns - exit_local (local counts ns of delay); ours is now - local. If
 * ours is earlier, we wait the difference (real time, not a pause: local
 * stays), so that the experiment's duration does not lose the time the worker
 * really bounded.
 */
void delays_after_join(struct thread_state *t, uint64_t exit_local, uint64_t exit_epoch,
		       uint64_t exit_ns)
{
	uint64_t now;
	int64_t owed;

	if (!t || atomic_load_explicit(&rt.active, memory_order_acquire) != EXPERIMENT_RUNNING)
		return;
	delays_sync_epoch(t);
	if (exit_epoch != t->epoch || exit_local >= t->local)
		return;
	now = time_monotonic_ns();
	owed = (int64_t)(t->local - exit_local) - (int64_t)(now - exit_ns);
	if (owed <= 0)
		return;
	sleep_unsampled(t, (uint64_t)owed);
}

void delays_join_end(pthread_t joined)
{
	uint64_t local, epoch, exit_ns;
	struct thread_state *t;
	int saved = errno;

	if (!threads_exit_record(joined, &local, &epoch, &exit_ns))
		return;
	t = runtime_enter();
	if (t) {
		delays_after_join(t, local, epoch, exit_ns);
		runtime_leave(t);
	}
	errno = saved;
}

/*
 * Arrivals since the last fold speed this thread up while an experiment runs
 * or is being settled; those counted before it began (the profiler marked
 * the count then) or between experiments are not sped up, as Coz's line
 * speedups.
 */
void delays_fold_arrivals(struct thread_state *t)
{
	uint64_t n = atomic_load_explicit(&t->arrival.count, memory_order_relaxed);
	uint64_t from = t->arrivals_folded, mark;

	if (n == from)
		return;
	t->arrivals_folded = n;
	if (!rt.cfg.arrival_ns ||
	    atomic_load_explicit(&rt.active, memory_order_acquire) == EXPERIMENT_IDLE)
		return;
	delays_sync_epoch(t);
	mark = atomic_load(&t->arrivals_mark);
	if (atomic_load(&t->mark_epoch) == t->epoch && atomic_load(&t->mark_tid) == t->tid &&
	    mark > from)
		from = mark;
	if (n > from)
		t->local += (n - from) * rt.cfg.arrival_ns;
}

void delays_pre_block(struct thread_state *t)
{
	if (!t)
		return;
	delays_catch_up(t);
	t->epoch_at_block = t->epoch;
	t->global_at_block = atomic_load(&rt.global);
	if (rt.cfg.arrival_ns)
		t->blocked_at_ns = time_monotonic_ns();
	delays_mark_blocked(t, true);
}

/*
 * The delay a woken thread skips. With load amplification G rises in steps
 * of the arrival speedup (up to ms at once): a thread that blocked just
 * before a step and is woken right after would skip the whole step and run
 * ahead of everybody's virtual time, its clock going backwards; e.g. idle
 * consumers finish more work than is possible. A thread cannot have waited
 * longer than it was blocked, so the credit is capped there; the rest of the
 * step it pays as usual. (Line speedups raise G in small steps; their
 * credit is left as Coz's.)
 */
static uint64_t wake_credit(const struct thread_state *t, uint64_t added)
{
	uint64_t now, blocked;

	if (!rt.cfg.arrival_ns)
		return added;
	now = time_monotonic_ns();
	blocked = now > t->blocked_at_ns ? now - t->blocked_at_ns : 0;
	return added < blocked ? added : blocked;
}

void delays_post_block(struct thread_state *t, bool woken_by_other)
{
	uint64_t epoch, g;

	if (!t)
		return;
	delays_mark_blocked(t, false);
	/* a producer blocked on a full queue is not producing (AMP's period) */
	if (rt.cfg.arrival_ns)
		t->idle_ns += time_monotonic_ns() - t->blocked_at_ns;
	/*
	 * Woken by a thread that paid its delays before waking us: we were
	 * delayed with it, so skip the pauses added while we were blocked.
	 */
	if (woken_by_other) {
		epoch = atomic_load_explicit(&rt.epoch, memory_order_acquire);
		g = atomic_load(&rt.global);
		if (t->epoch_at_block == epoch) {
			if (g > t->global_at_block)
				t->local += wake_credit(t, g - t->global_at_block);
		} else {
			t->epoch = epoch;
			t->local = g;
			t->excess_ns = 0;
		}
	}
	delays_sync_epoch(t);
}

struct thread_state *runtime_enter(void)
{
	struct thread_state *t;

	if (!atomic_load_explicit(&rt.enabled, memory_order_relaxed))
		return NULL;
	t = thread_self();
	if (!t || t->busy || t->exiting)
		return NULL;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return t;
}

void runtime_leave(struct thread_state *t)
{
	if (!t)
		return;
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
	atomic_signal_fence(memory_order_seq_cst);
	/* A batch signal arrived while we were busy: do its work now. */
	if (t->pending) {
		t->busy = 1;
		t->pending = 0;
		samples_process(t);
		t->busy = 0;
	}
}

/*
 * The bracket of every interposed call that may block: pay and remember G
 * before (returns whether it ran), skip or keep the pauses after. Calls made
 * by lever's own code (return address ra inside the library) are left alone.
 * errno is preserved: the sem_* and sigwait calls report through it.
 */
bool delays_block_begin(const void *ra)
{
	struct thread_state *t;
	int saved = errno;

	if (address_in_lever(ra))
		return false;
	t = runtime_enter();
	if (!t)
		return false;
	delays_pre_block(t);
	runtime_leave(t);
	errno = saved;
	return true;
}

void delays_block_end(bool armed, bool woken)
{
	struct thread_state *t;
	int saved = errno;

	if (!armed)
		return;
	t = runtime_enter();
	if (t) { /* NULL if the runtime was disabled meanwhile (shutdown) */
		delays_post_block(t, woken);
		runtime_leave(t);
	}
	errno = saved;
}
