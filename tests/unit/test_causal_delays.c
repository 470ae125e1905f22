/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The delay protocol of the causal runtime (paper §3.4), tested on
 * src/causal/runtime/delays.c alone: threads are plain thread_state structs,
 * "samples in the selected line" raise local by the experiment's delay d each
 * (as the sample processing does), and arrivals (load amplification, AMP) are
 * increments of a thread's arrival counter, turned into local += arrival
 * speedup each by delays_catch_up. Both are nanoseconds of one protocol.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "causal/runtime/experiment.h"
#include "causal/runtime/runtime.h"

struct runtime rt;
static __thread struct thread_state *current;
static unsigned pauses, resumes;
/* what a thread showed the profiler as it began to sleep off a debt */
static uint64_t seen_paying_until, seen_local, seen_at;

struct thread_state *thread_self(void)
{
	return current;
}
void sampler_pause(struct thread_state *t)
{
	pauses++;
	seen_paying_until = atomic_load(&t->paying_until_ns);
	seen_local = t->local;
	seen_at = time_monotonic_ns();
}
/* what restarting the sampler costs (the real one: two perf ioctls) */
static uint64_t resume_cost_ns;
void sampler_resume(struct thread_state *t)
{
	resumes++;
	if (resume_cost_ns)
		time_sleep_ns(resume_cost_ns);
}
void samples_process(struct thread_state *t)
{
}
/* the rises of G that progress.c weighs by the requests in flight */
static uint64_t noted_pause_ns;
void progress_note_pause(uint64_t ns)
{
	noted_pause_ns += ns;
}
bool address_in_lever(const void *p)
{
	return false;
}
/* live threads, as threads.c counts them (--pause=auto compares them with rt.cfg.cpus) */
static unsigned live_threads = 1;
unsigned threads_live(void)
{
	return live_threads;
}
/* the program's threads as threads.c lists them, and the pay-now requests sent */
static struct thread_state *listed[4];
static unsigned n_listed, asked_to_pay;
static bool latency_points;
void threads_foreach(void (*fn)(struct thread_state *t, void *ctx), void *ctx)
{
	for (unsigned i = 0; i < n_listed; i++)
		fn(listed[i], ctx);
}
bool sampler_request_catch_up(struct thread_state *t)
{
	asked_to_pay++;
	return true;
}
bool progress_has_latency(void)
{
	return latency_points;
}
/* The exit of one thread, as threads.c records it. */
static struct {
	bool known;
	pthread_t th;
	uint64_t local, epoch, ns;
} exited;
bool threads_exit_record(pthread_t th, uint64_t *local, uint64_t *epoch, uint64_t *exit_ns)
{
	if (!exited.known || !pthread_equal(th, exited.th))
		return false;
	*local = exited.local;
	*epoch = exited.epoch;
	*exit_ns = exited.ns;
	return true;
}

static void start_experiment(uint64_t delay_ns)
{
	rt.cfg.arrival_ns = 0;
	atomic_store(&rt.delay_ns, delay_ns);
	atomic_store(&rt.epoch_global, atomic_load(&rt.global));
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_RUNNING);
	atomic_store(&rt.inserted_delay_ns, 0);
	pauses = resumes = 0;
}

static void selected_samples(struct thread_state *t, unsigned n)
{
	delays_sync_epoch(t);
	t->local += n * atomic_load(&rt.delay_ns);
}

static void arrive(struct thread_state *t, unsigned n)
{
	atomic_fetch_add(&t->arrival.count, n);
}

static void end_experiment(void)
{
	atomic_store(&rt.epoch_global, atomic_load(&rt.global));
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_IDLE);
}

static void own_samples_replace_pauses(void **state)
{
	struct thread_state a = {0}, b = {0};

	start_experiment(200 * NSEC_PER_USEC);
	selected_samples(&a, 3);
	delays_catch_up(&a); /* a is ahead: raises G, sleeps nothing */
	assert_int_equal(atomic_load(&rt.global), a.local);
	assert_int_equal(pauses, 0);

	delays_catch_up(&b); /* b owes 3 pauses of 200 us */
	assert_int_equal(b.local, atomic_load(&rt.global));
	assert_int_equal(atomic_load(&rt.global) - atomic_load(&rt.epoch_global),
			 3 * 200 * NSEC_PER_USEC);
	assert_int_equal(pauses, 1);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 3 * 200 * NSEC_PER_USEC);
	/* invariant: pauses + own selected samples equal for both threads */
	assert_int_equal(a.local, b.local);
}

static void global_is_raised_to_the_max_not_summed(void **state)
{
	struct thread_state a = {0}, b = {0}, c = {0};
	uint64_t g0;

	start_experiment(NSEC_PER_USEC);
	g0 = atomic_load(&rt.global);
	noted_pause_ns = 0;
	selected_samples(&a, 4);
	selected_samples(&b, 4);
	delays_catch_up(&a);
	delays_catch_up(&b);
	/* both ran the line 4 times: nobody else needs more than 4 pauses of 1 us */
	assert_int_equal(atomic_load(&rt.global) - g0, 4 * NSEC_PER_USEC);
	/* every rise of G is reported once, as the rise, not as each thread's local */
	assert_int_equal(noted_pause_ns, 4 * NSEC_PER_USEC);
	delays_catch_up(&c);
	assert_int_equal(c.local - g0, 4 * NSEC_PER_USEC);
}

/*
 * With latency points, a rise of G asks the threads that can run to pay at
 * once (a client thinking would otherwise pay inside its next request):
 * not the raiser, not a blocked thread, not one already paying, and at most
 * once per sampling period; without latency points, nobody.
 */
static void rise_asks_running_threads_to_pay_with_latency_points(void **state)
{
	struct thread_state server = {0}, thinking = {0}, waiting = {0}, paying = {0};

	listed[0] = &server, listed[1] = &thinking, listed[2] = &waiting, listed[3] = &paying;
	n_listed = 4;
	atomic_store(&waiting.blocked, 1);
	atomic_store(&paying.paying_until_ns, time_monotonic_ns() + NSEC_PER_SEC);
	rt.cfg.period_ns = NSEC_PER_SEC;
	atomic_store(&rt.prompted_ns, 0);
	asked_to_pay = 0;

	latency_points = false;
	start_experiment(NSEC_PER_USEC);
	selected_samples(&server, 2);
	delays_catch_up(&server);
	assert_int_equal(asked_to_pay, 0);

	latency_points = true;
	selected_samples(&server, 2);
	delays_catch_up(&server);
	assert_int_equal(asked_to_pay, 1); /* the thinking thread alone */
	selected_samples(&server, 2);
	delays_catch_up(&server);
	assert_int_equal(asked_to_pay, 1); /* within the same period */
	atomic_store(&rt.prompted_ns, time_monotonic_ns() - 2 * NSEC_PER_SEC);
	selected_samples(&server, 2);
	delays_catch_up(&server);
	assert_int_equal(asked_to_pay, 2);
	end_experiment();
	n_listed = 0;
	latency_points = false;
}

static void zero_speedup_inserts_no_delay(void **state)
{
	struct thread_state a = {0}, b = {0};

	start_experiment(0);
	selected_samples(&a, 50);
	delays_catch_up(&a);
	delays_catch_up(&b);
	assert_int_equal(pauses, 0);
	assert_int_equal(atomic_load(&rt.inserted_delay_ns), 0);
	assert_int_equal(b.local, a.local);
}

static void excess_sleep_is_banked(void **state)
{
	struct thread_state a = {0}, b = {0};

	start_experiment(10 * NSEC_PER_USEC);
	selected_samples(&a, 1);
	delays_catch_up(&a);
	delays_catch_up(&b);
	/* nanosleep overshoots; the overshoot is banked, never negative */
	assert_true(b.excess_ns >= 0);
	if (b.excess_ns >= (int64_t)(10 * NSEC_PER_USEC)) {
		unsigned before = pauses;

		selected_samples(&a, 1);
		delays_catch_up(&a);
		delays_catch_up(&b); /* paid from the bank: no new sleep */
		assert_int_equal(pauses, before);
		assert_int_equal(b.local, a.local);
	}
}

/*
 * A pause sleeps with 1 ns of timer slack and then gives the thread back the
 * slack it had just before, whatever it was when the thread registered: a
 * program that sets its own slack later (prodcons' threads) keeps it, or
 * each of its own sleeps after a pause would run long by the default 50 us,
 * unpaused time that virtual speedup does not subtract.
 */
static void pause_keeps_the_thread_timer_slack(void **state)
{
	struct thread_state a = {0}, b = {0};
	int before = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);

	assert_true(before > 0);
	rt.cfg.pause_spin = false;
	assert_int_equal(prctl(PR_SET_TIMERSLACK, 7000UL, 0UL, 0UL, 0UL), 0);
	start_experiment(20 * NSEC_PER_USEC);
	selected_samples(&a, 1);
	delays_catch_up(&a);
	delays_catch_up(&b); /* b sleeps 20 us */
	assert_int_equal(pauses, 1);
	assert_int_equal(prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL), 7000);
	end_experiment();
	prctl(PR_SET_TIMERSLACK, (unsigned long)before, 0UL, 0UL, 0UL);
}

/*
 * The time a pause's bracket takes (stopping and restarting the sampler) is
 * paid delay too: the thread did not work meanwhile. It is banked with the
 * overshoot, so later pauses are shorter by it, sleeping or spinning.
 */
static void pause_bracket_is_banked(void **state)
{
	for (int spin = 0; spin <= 1; spin++) {
		struct thread_state a = {0}, b = {0};
		uint64_t inserted;

		rt.cfg.pause_spin = spin;
		start_experiment(20 * NSEC_PER_USEC);
		selected_samples(&a, 1);
		delays_catch_up(&a);
		resume_cost_ns = 2 * NSEC_PER_MSEC;
		delays_catch_up(&b); /* owes 20 us; the bracket takes 2 ms more */
		resume_cost_ns = 0;
		inserted = atomic_load(&rt.inserted_delay_ns);
		assert_int_equal(pauses, 1);
		assert_true(b.excess_ns >= (int64_t)(2 * NSEC_PER_MSEC));
		assert_true(inserted >= 20 * NSEC_PER_USEC + 2 * NSEC_PER_MSEC);
		assert_int_equal(b.excess_ns, (int64_t)inserted - (int64_t)(20 * NSEC_PER_USEC));
		end_experiment();
	}
	rt.cfg.pause_spin = false;
}

static long voluntary_switches(void)
{
	struct rusage u;

	assert_int_equal(getrusage(RUSAGE_THREAD, &u), 0);
	return u.ru_nvcsw;
}

/*
 * --pause=spin pays a pause without giving up the CPU (no voluntary context
 * switch, where a sleep always makes one), for at least as long as owed,
 * and counts it as inserted delay like a sleep.
 */
static void spinning_pause_keeps_the_cpu(void **state)
{
	struct thread_state a = {0}, b = {0};
	uint64_t idle;
	long before;

	for (int spin = 0; spin <= 1; spin++) {
		rt.cfg.pause_spin = spin;
		start_experiment(2 * NSEC_PER_MSEC);
		delays_catch_up(&b);
		selected_samples(&a, 1);
		delays_catch_up(&a);
		idle = b.idle_ns;
		before = voluntary_switches();
		delays_catch_up(&b);
		if (spin)
			assert_int_equal(voluntary_switches(), before);
		else
			assert_true(voluntary_switches() > before);
		/* at least what was owed (a sleep may overshoot by more than 2 ms when loaded) */
		assert_true(b.idle_ns - idle >= 2 * NSEC_PER_MSEC);
		assert_int_equal(b.local, atomic_load(&rt.global));
		assert_true(atomic_load(&rt.inserted_delay_ns) >= NSEC_PER_MSEC);
		assert_int_equal(pauses, resumes);
		end_experiment();
	}
	rt.cfg.pause_spin = false;
}

/* Pays b's pause (owed by a's selected sample); true when it spun (no voluntary switch). */
static bool pause_was_spun(struct thread_state *a, struct thread_state *b)
{
	long before;
	bool spun;

	start_experiment(NSEC_PER_MSEC);
	delays_catch_up(b);
	selected_samples(a, 1);
	delays_catch_up(a);
	before = voluntary_switches();
	delays_catch_up(b);
	spun = voluntary_switches() == before;
	assert_int_equal(b->local, atomic_load(&rt.global));
	end_experiment();
	return spun;
}

/*
 * --pause=auto spins while the threads that can run (live, minus those in a
 * blocking call we wrap) fit the CPUs, and sleeps once they outnumber them;
 * a thread marked blocked twice counts once, and one that leaves its
 * blocking call counts as runnable again.
 */
static void auto_pause_spins_while_threads_fit_the_cpus(void **state)
{
	struct thread_state a = {0}, b = {0}, c = {0};

	rt.cfg.pause_auto = true;
	rt.cfg.cpus = 2;
	live_threads = 2;
	assert_true(pause_was_spun(&a, &b));
	live_threads = 3;
	assert_false(pause_was_spun(&a, &b));
	delays_mark_blocked(&c, true);
	delays_mark_blocked(&c, true);
	assert_int_equal(atomic_load(&rt.blocked_threads), 1);
	assert_true(pause_was_spun(&a, &b));
	delays_mark_blocked(&c, false);
	assert_int_equal(atomic_load(&rt.blocked_threads), 0);
	assert_false(pause_was_spun(&a, &b));
	rt.cfg.pause_auto = false;
	live_threads = 2;
	assert_false(pause_was_spun(&a, &b)); /* --pause=sleep */
	live_threads = 1;
}

static void woken_thread_skips_delays_added_while_blocked(void **state)
{
	struct thread_state a = {0}, b = {0}, c = {0};

	start_experiment(100 * NSEC_PER_USEC);
	delays_pre_block(&b);
	delays_pre_block(&c);
	assert_int_equal(atomic_load(&b.blocked), 1);
	selected_samples(&a, 5);
	delays_catch_up(&a); /* a raises G by 5, then wakes b */
	delays_post_block(&b, true);
	assert_int_equal(b.local, atomic_load(&rt.global));
	pauses = 0;
	delays_catch_up(&b);
	assert_int_equal(pauses, 0);

	/* c timed out instead: it still owes the 5 pauses */
	delays_post_block(&c, false);
	assert_int_equal(atomic_load(&rt.global) - c.local, 5 * 100 * NSEC_PER_USEC);
	delays_catch_up(&c);
	assert_int_equal(pauses, 1);
}

static void late_thread_still_owes_pauses_since_start(void **state)
{
	struct thread_state a = {0}, late = {0};

	start_experiment(100 * NSEC_PER_USEC);
	selected_samples(&a, 3);
	delays_catch_up(&a);
	/* late processes its first batch of the experiment only now */
	delays_catch_up(&late);
	assert_int_equal(late.local, a.local);
	assert_int_equal(pauses, 1);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 3 * 100 * NSEC_PER_USEC);
}

struct raise_while_paying {
	struct thread_state *a, *b;
	bool raised_while_paying; /* b was still in its pause when a raised G */
};

/* Waits until b is in its pause, then lets a add two pauses. */
static void *raise_while_other_sleeps(void *arg)
{
	struct raise_while_paying *r = arg;

	while (!atomic_load(&r->b->paying_until_ns))
		time_sleep_ns(50 * NSEC_PER_USEC);
	selected_samples(r->a, 2);
	delays_catch_up(r->a);
	r->raised_while_paying = atomic_load(&r->b->paying_until_ns) != 0;
	return NULL;
}

/*
 * Pauses added while a thread pays are owed before it goes on (or exits).
 * On a loaded machine the raising thread may run only after b's 20 ms pause
 * is over, which tests nothing: then the scenario is run again.
 */
static void payment_covers_pauses_added_meanwhile(void **state)
{
	for (int attempt = 0; attempt < 20; attempt++) {
		struct thread_state a = {0}, b = {0};
		struct raise_while_paying r = {&a, &b, false};
		pthread_t other;

		start_experiment(20 * NSEC_PER_MSEC);
		delays_sync_epoch(&b);
		selected_samples(&a, 1);
		delays_catch_up(&a);
		pthread_create(&other, NULL, raise_while_other_sleeps, &r);
		delays_catch_up(&b); /* sleeps 20 ms; a adds 2 pauses meanwhile */
		pthread_join(other, NULL);
		if (!r.raised_while_paying)
			continue;
		assert_int_equal(b.local, a.local);
		assert_true(atomic_load(&rt.inserted_delay_ns) >= 3 * 20 * NSEC_PER_MSEC);
		return;
	}
	fail_msg("the other thread never ran while b was paying (20 attempts)");
}

static void no_debt_across_experiments(void **state)
{
	struct thread_state a = {0}, b = {0};

	start_experiment(100 * NSEC_PER_USEC);
	delays_sync_epoch(&b);
	selected_samples(&a, 7);
	delays_catch_up(&a);
	/* the experiment ends before b paid */
	end_experiment();
	pauses = 0;
	delays_catch_up(&b);
	assert_int_equal(pauses, 0);
	assert_int_equal(b.local, atomic_load(&rt.global));
}

static void child_inherits_parent_count(void **state)
{
	struct thread_state parent = {0}, child = {0};

	start_experiment(100 * NSEC_PER_USEC);
	selected_samples(&parent, 2);
	delays_catch_up(&parent);
	/* as pthread_create does: the child starts with the parent's count */
	child.local = parent.local;
	child.epoch = parent.epoch;
	pauses = 0;
	delays_catch_up(&child);
	assert_int_equal(pauses, 0);
}

/*
 * critical_path in small: worker b paid 2 d and exited; then a, running the
 * selected line, raised G by 6 d and exited; main, woken by a, counts all 6 d
 * as its own. b ended later in virtual time (exit - 2 d) than main now is
 * (now - 6 d), so joining b makes main wait the difference.
 */
static void joiner_waits_for_virtual_exit_of_joined(void **state)
{
	struct thread_state a = {0}, b = {0}, main_thread = {0};
	uint64_t d = 2 * NSEC_PER_MSEC, g0;

	start_experiment(d);
	g0 = atomic_load(&rt.global);
	delays_sync_epoch(&b);
	delays_pre_block(&main_thread);
	selected_samples(&a, 2);
	delays_catch_up(&a);
	delays_catch_up(&b); /* pays 2 pauses */
	exited.known = true;
	exited.th = pthread_self();
	exited.local = b.local;
	exited.epoch = b.epoch;
	exited.ns = time_monotonic_ns();
	selected_samples(&a, 4);
	delays_catch_up(&a); /* G = 6 */
	delays_post_block(&main_thread, true);
	assert_int_equal(main_thread.local - g0, 6 * d);

	current = &main_thread;
	atomic_store(&rt.enabled, 1);
	atomic_store(&rt.inserted_delay_ns, 0);
	delays_join_end(pthread_self()); /* owes 4 d, minus the time since b exited */
	/*
	 * It returns no earlier than 4 d after b's exit, waiting if that is
	 * still ahead when it reads the clock. This holds however late this
	 * thread runs; a bound on the wait itself would not (a preemption
	 * longer than 4 d leaves nothing to wait, and a sleep overshoots).
	 */
	assert_true(time_monotonic_ns() >= exited.ns + 4 * d);
	assert_int_equal(main_thread.local - g0, 6 * d); /* a wait, not pauses */

	/* joining a (exited level with main) or after the experiment: no wait */
	atomic_store(&rt.inserted_delay_ns, 0);
	exited.local = a.local;
	delays_join_end(pthread_self());
	assert_int_equal(atomic_load(&rt.inserted_delay_ns), 0);
	exited.local = b.local;
	exited.epoch = main_thread.epoch - 1;
	delays_join_end(pthread_self());
	assert_int_equal(atomic_load(&rt.inserted_delay_ns), 0);
	exited.known = false;
	current = NULL;
	atomic_store(&rt.enabled, 0);
}

/*
 * A thread that counts a pause in local before sleeping it says until when it
 * sleeps, so that an experiment ending meanwhile subtracts only what has
 * passed; afterwards it says nothing.
 */
static void paying_thread_shows_what_is_left(void **state)
{
	struct thread_state a = {0}, b = {0};
	uint64_t d = 3 * NSEC_PER_MSEC, g0, before;

	start_experiment(d);
	g0 = atomic_load(&rt.global);
	selected_samples(&a, 1);
	delays_catch_up(&a);
	before = time_monotonic_ns();
	delays_catch_up(&b); /* owes d */
	assert_int_equal(pauses, 1);
	assert_int_equal(seen_local - g0, d); /* counted before the sleep */
	/* it read the clock between before and seen_at, however long that took */
	assert_in_range(seen_paying_until, before + d, seen_at + d);
	assert_int_equal(atomic_load(&b.paying_until_ns), 0);
}

/* ---- load amplification (AMP): arrivals feed the same protocol ---- */

/* Each arrival speeds its thread up by the arrival speedup: the others pay it. */
static void arrivals_speed_up_the_arriving_thread(void **state)
{
	struct thread_state producer = {0}, consumer = {0};
	uint64_t g0;

	start_experiment(0);
	rt.cfg.arrival_ns = 50 * NSEC_PER_USEC;
	g0 = atomic_load(&rt.global);
	arrive(&producer, 4);
	delays_catch_up(&producer); /* ahead by 4 x 50 us: raises G, sleeps nothing */
	assert_int_equal(pauses, 0);
	assert_int_equal(atomic_load(&rt.global) - g0, 200 * NSEC_PER_USEC);
	delays_catch_up(&consumer);
	assert_int_equal(pauses, 1);
	assert_int_equal(consumer.local, producer.local);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 200 * NSEC_PER_USEC);
}

/* Counted once: a second catch-up without new arrivals adds nothing. */
static void arrivals_are_folded_once(void **state)
{
	struct thread_state producer = {0};
	uint64_t g;

	start_experiment(0);
	rt.cfg.arrival_ns = 10 * NSEC_PER_USEC;
	arrive(&producer, 3);
	delays_catch_up(&producer);
	g = atomic_load(&rt.global);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global), g);
	arrive(&producer, 1);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global) - g, 10 * NSEC_PER_USEC);
}

/*
 * One protocol: a thread's line samples and arrivals add up in ns; G is the
 * largest total, not the sum over threads; a thread whose own virtual
 * speedup equals G owes nothing.
 */
static void arrivals_and_line_samples_share_one_protocol(void **state)
{
	struct thread_state a = {0}, b = {0}, c = {0};
	uint64_t g0;

	start_experiment(100 * NSEC_PER_USEC);
	rt.cfg.arrival_ns = 50 * NSEC_PER_USEC;
	g0 = atomic_load(&rt.global);
	selected_samples(&a, 2); /* 200 us */
	arrive(&a, 2);		 /* + 100 us */
	delays_catch_up(&a);
	assert_int_equal(atomic_load(&rt.global) - g0, 300 * NSEC_PER_USEC);
	selected_samples(&b, 3); /* 300 us of its own: level with G */
	delays_catch_up(&b);
	assert_int_equal(pauses, 0);
	assert_int_equal(atomic_load(&rt.global) - g0, 300 * NSEC_PER_USEC);
	delays_catch_up(&c); /* c did neither: pays all 300 us */
	assert_int_equal(pauses, 1);
	assert_int_equal(c.local, a.local);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 300 * NSEC_PER_USEC);
}

/* Between experiments nothing is sped up; those arrivals are not owed later. */
static void arrivals_between_experiments_are_not_amplified(void **state)
{
	struct thread_state producer = {0}, consumer = {0};
	uint64_t g;

	start_experiment(0);
	rt.cfg.arrival_ns = 50 * NSEC_PER_USEC;
	end_experiment();
	g = atomic_load(&rt.global);
	arrive(&producer, 10);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global), g);
	assert_int_equal(producer.arrivals_folded, atomic_load(&producer.arrival.count));
	/* the next experiment starts: the old arrivals are not folded again */
	atomic_store(&rt.epoch_global, atomic_load(&rt.global));
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_RUNNING);
	delays_catch_up(&producer);
	delays_catch_up(&consumer);
	assert_int_equal(atomic_load(&rt.global), g);
	assert_int_equal(pauses, 0);
}

/*
 * A thread that folds only at its next batch: the arrivals it counted before
 * the experiment began (the profiler marked them) are not sped up, the later
 * ones are, also while the experiment is being settled (ENDING).
 */
static void only_arrivals_since_the_start_are_amplified(void **state)
{
	struct thread_state producer = {0};
	uint64_t g0;

	start_experiment(0);
	rt.cfg.arrival_ns = 10 * NSEC_PER_USEC;
	g0 = atomic_load(&rt.global);
	arrive(&producer, 5); /* before the start, not yet folded */
	atomic_store(&producer.arrivals_mark, 5);
	atomic_store(&producer.mark_epoch, atomic_load(&rt.epoch));
	arrive(&producer, 2);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global) - g0, 20 * NSEC_PER_USEC);
	atomic_store(&rt.active, EXPERIMENT_ENDING);
	arrive(&producer, 3);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global) - g0, 50 * NSEC_PER_USEC);
	/* a mark of an older experiment (or of the slot's previous thread) is ignored */
	start_experiment(0);
	rt.cfg.arrival_ns = 10 * NSEC_PER_USEC;
	g0 = atomic_load(&rt.global);
	arrive(&producer, 1);
	delays_catch_up(&producer);
	assert_int_equal(atomic_load(&rt.global) - g0, 10 * NSEC_PER_USEC);
}

static void zero_arrival_speedup_counts_but_adds_no_delay(void **state)
{
	struct thread_state producer = {0}, consumer = {0};
	uint64_t g;

	start_experiment(0);
	g = atomic_load(&rt.global);
	arrive(&producer, 100);
	delays_catch_up(&producer);
	delays_catch_up(&consumer);
	assert_int_equal(atomic_load(&rt.global), g);
	assert_int_equal(pauses, 0);
	assert_int_equal(producer.arrivals_folded, 100);
}

/*
 * A consumer blocked on an empty queue is woken by the producer, which pays
 * and folds its arrivals before waking it (catch-up before an unblocking
 * call): the consumer is credited the arrival delay added while it waited.
 * One that timed out still owes it.
 */
static void blocked_consumer_is_credited_for_arrivals(void **state)
{
	struct thread_state producer = {0}, woken = {0}, timed_out = {0};

	start_experiment(0);
	rt.cfg.arrival_ns = 30 * NSEC_PER_USEC;
	delays_pre_block(&woken);
	delays_pre_block(&timed_out);
	woken.blocked_at_ns -= NSEC_PER_SEC; /* it has waited a second */
	arrive(&producer, 5);
	delays_catch_up(&producer); /* as before pthread_cond_signal */
	delays_post_block(&woken, true);
	delays_catch_up(&woken);
	assert_int_equal(pauses, 0);
	assert_int_equal(woken.local, producer.local);
	delays_post_block(&timed_out, false);
	assert_int_equal(atomic_load(&rt.global) - timed_out.local, 150 * NSEC_PER_USEC);
	delays_catch_up(&timed_out);
	assert_int_equal(pauses, 1);
}

/*
 * G rises in steps of the arrival speedup. A consumer that blocked only just
 * before a 20 ms step cannot have waited 20 ms: its credit is capped at the
 * time it was blocked, and it pays the rest (else its virtual clock would go
 * backwards and idle consumers would do impossible amounts of work).
 */
static void wake_credit_is_capped_at_the_time_blocked(void **state)
{
	struct thread_state producer = {0}, consumer = {0};
	uint64_t g0, blocked_from, blocked_until;

	start_experiment(0);
	rt.cfg.arrival_ns = 20 * NSEC_PER_MSEC;
	g0 = atomic_load(&rt.global);
	blocked_from = time_monotonic_ns();
	delays_pre_block(&consumer);
	arrive(&producer, 1);
	delays_catch_up(&producer);
	delays_post_block(&consumer, true); /* woken within microseconds */
	blocked_until = time_monotonic_ns();
	/* bounded by the time it really was blocked, however long that was */
	assert_true(consumer.local - g0 <= blocked_until - blocked_from);
	delays_catch_up(&consumer);
	/* it pays the rest, unless a preemption kept it blocked the whole step */
	if (blocked_until - blocked_from < 20 * NSEC_PER_MSEC)
		assert_int_equal(pauses, 1);
	else
		assert_in_range(pauses, 0, 1);
	assert_int_equal(consumer.local, producer.local);
	/* line speedups alone keep Coz's whole credit */
	start_experiment(20 * NSEC_PER_MSEC);
	g0 = atomic_load(&rt.global);
	delays_pre_block(&consumer);
	selected_samples(&producer, 1);
	delays_catch_up(&producer);
	delays_post_block(&consumer, true);
	assert_int_equal(consumer.local - g0, 20 * NSEC_PER_MSEC);
}

/* An arriving thread that blocks first makes its arrivals count (pre-block catch-up). */
static void arrivals_are_folded_before_blocking(void **state)
{
	struct thread_state producer = {0};
	uint64_t g0;

	start_experiment(0);
	rt.cfg.arrival_ns = 20 * NSEC_PER_USEC;
	g0 = atomic_load(&rt.global);
	arrive(&producer, 2);
	delays_pre_block(&producer);
	assert_int_equal(atomic_load(&rt.global) - g0, 40 * NSEC_PER_USEC);
	assert_int_equal(producer.global_at_block, atomic_load(&rt.global));
	delays_post_block(&producer, false);
}

static void wrappers_bracket_busy(void **state)
{
	struct thread_state t = {0};
	struct thread_state *got;

	current = &t;
	atomic_store(&rt.enabled, 0);
	assert_null(runtime_enter());
	atomic_store(&rt.enabled, 1);
	got = runtime_enter();
	assert_ptr_equal(got, &t);
	assert_int_equal(t.busy, 1);
	assert_null(runtime_enter()); /* nested: the wrapper calls through */
	runtime_leave(got);
	assert_int_equal(t.busy, 0);
	current = NULL;
	assert_null(runtime_enter());
}

/*
 * The runtime records' T (the phase correction's denominator) spans the
 * sampled run: from when sampling began, not lever's start-up (the line
 * map built before main), to the program's exit, not the profiler's
 * wind-down after it.
 */
static void run_length_is_the_sampled_run(void **state)
{
	const uint64_t started = 1000, sampling = 41000, exiting = 2041000;

	/* while the program runs: since sampling began */
	assert_int_equal(experiment_run_length_ns(sampling, 0, 541000), 500000);
	/* after the exit began: up to the exit, however late the record */
	assert_int_equal(experiment_run_length_ns(sampling, exiting, exiting + 12000000), 2000000);
	assert_int_equal(experiment_run_length_ns(sampling, exiting, exiting), 2000000);
	/* never negative */
	assert_int_equal(experiment_run_length_ns(sampling, 0, started), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(own_samples_replace_pauses),
	    cmocka_unit_test(global_is_raised_to_the_max_not_summed),
	    cmocka_unit_test(rise_asks_running_threads_to_pay_with_latency_points),
	    cmocka_unit_test(zero_speedup_inserts_no_delay),
	    cmocka_unit_test(run_length_is_the_sampled_run),
	    cmocka_unit_test(excess_sleep_is_banked),
	    cmocka_unit_test(pause_keeps_the_thread_timer_slack),
	    cmocka_unit_test(pause_bracket_is_banked),
	    cmocka_unit_test(spinning_pause_keeps_the_cpu),
	    cmocka_unit_test(auto_pause_spins_while_threads_fit_the_cpus),
	    cmocka_unit_test(woken_thread_skips_delays_added_while_blocked),
	    cmocka_unit_test(late_thread_still_owes_pauses_since_start),
	    cmocka_unit_test(payment_covers_pauses_added_meanwhile),
	    cmocka_unit_test(no_debt_across_experiments),
	    cmocka_unit_test(child_inherits_parent_count),
	    cmocka_unit_test(joiner_waits_for_virtual_exit_of_joined),
	    cmocka_unit_test(paying_thread_shows_what_is_left),
	    cmocka_unit_test(arrivals_speed_up_the_arriving_thread),
	    cmocka_unit_test(arrivals_are_folded_once),
	    cmocka_unit_test(arrivals_and_line_samples_share_one_protocol),
	    cmocka_unit_test(arrivals_between_experiments_are_not_amplified),
	    cmocka_unit_test(only_arrivals_since_the_start_are_amplified),
	    cmocka_unit_test(zero_arrival_speedup_counts_but_adds_no_delay),
	    cmocka_unit_test(blocked_consumer_is_credited_for_arrivals),
	    cmocka_unit_test(arrivals_are_folded_before_blocking),
	    cmocka_unit_test(wake_credit_is_capped_at_the_time_blocked),
	    cmocka_unit_test(wrappers_bracket_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
