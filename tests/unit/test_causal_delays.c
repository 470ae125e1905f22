/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The delay protocol of the causal runtime (paper §3.4), tested on
 * src/causal/runtime/delays.c alone: threads are plain thread_state structs
 * and "samples in the selected line" are increments of local, as the sample
 * processing does them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include <cmocka.h>

#include "causal/runtime/runtime.h"

struct runtime rt;
static __thread struct thread_state *current;
static unsigned pauses, resumes;

struct thread_state *thread_self(void)
{
	return current;
}
void sampler_pause(struct thread_state *t)
{
	pauses++;
}
void sampler_resume(struct thread_state *t)
{
	resumes++;
}
void samples_process(struct thread_state *t)
{
}
bool address_in_lever(const void *p)
{
	return false;
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
	t->local += n;
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
	assert_int_equal(pauses, 1);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 3 * 200 * NSEC_PER_USEC);
	/* invariant: pauses + own selected samples equal for both threads */
	assert_int_equal(a.local, b.local);
}

static void global_is_raised_to_the_max_not_summed(void **state)
{
	struct thread_state a = {0}, b = {0}, c = {0};
	uint64_t g0;

	start_experiment(0);
	g0 = atomic_load(&rt.global);
	selected_samples(&a, 4);
	selected_samples(&b, 4);
	delays_catch_up(&a);
	delays_catch_up(&b);
	/* both ran the line 4 times: nobody else needs more than 4 pauses */
	assert_int_equal(atomic_load(&rt.global) - g0, 4);
	delays_catch_up(&c);
	assert_int_equal(c.local - g0, 4);
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
	assert_int_equal(atomic_load(&rt.global) - c.local, 5);
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

static void *raise_while_other_sleeps(void *arg)
{
	struct thread_state *a = arg;

	time_sleep_ns(5 * NSEC_PER_MSEC);
	selected_samples(a, 2);
	delays_catch_up(a);
	return NULL;
}

/* Pauses added while a thread pays are owed before it goes on (or exits). */
static void payment_covers_pauses_added_meanwhile(void **state)
{
	struct thread_state a = {0}, b = {0};
	pthread_t other;

	start_experiment(20 * NSEC_PER_MSEC);
	delays_sync_epoch(&b);
	selected_samples(&a, 1);
	delays_catch_up(&a);
	pthread_create(&other, NULL, raise_while_other_sleeps, &a);
	delays_catch_up(&b); /* sleeps 20 ms; a adds 2 pauses meanwhile */
	pthread_join(other, NULL);
	assert_int_equal(b.local, a.local);
	assert_true(atomic_load(&rt.inserted_delay_ns) >= 3 * 20 * NSEC_PER_MSEC);
}

static void no_debt_across_experiments(void **state)
{
	struct thread_state a = {0}, b = {0};

	start_experiment(100 * NSEC_PER_USEC);
	delays_sync_epoch(&b);
	selected_samples(&a, 7);
	delays_catch_up(&a);
	/* the experiment ends before b paid */
	atomic_store(&rt.epoch_global, atomic_load(&rt.global));
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_IDLE);
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
 * critical_path in small: worker b paid 2 pauses and exited; then a, running
 * the selected line, raised G to 6 and exited; main, woken by a, counts all 6
 * as its own. b ended later in virtual time (exit - 2 d) than main now is
 * (now - 6 d), so joining b makes main wait the difference.
 */
static void joiner_waits_for_virtual_exit_of_joined(void **state)
{
	struct thread_state a = {0}, b = {0}, main_thread = {0};
	uint64_t d = 2 * NSEC_PER_MSEC, t0, g0;

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
	assert_int_equal(main_thread.local - g0, 6);

	current = &main_thread;
	atomic_store(&rt.enabled, 1);
	atomic_store(&rt.inserted_delay_ns, 0);
	t0 = time_monotonic_ns();
	delays_join_end(pthread_self()); /* owes 4 d, minus the time since b exited */
	assert_true(time_monotonic_ns() - t0 >= 4 * d - (t0 - exited.ns));
	assert_true(atomic_load(&rt.inserted_delay_ns) > 0);
	assert_int_equal(main_thread.local - g0, 6); /* a wait, not pauses */

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(own_samples_replace_pauses),
	    cmocka_unit_test(global_is_raised_to_the_max_not_summed),
	    cmocka_unit_test(zero_speedup_inserts_no_delay),
	    cmocka_unit_test(excess_sleep_is_banked),
	    cmocka_unit_test(woken_thread_skips_delays_added_while_blocked),
	    cmocka_unit_test(late_thread_still_owes_pauses_since_start),
	    cmocka_unit_test(payment_covers_pauses_added_meanwhile),
	    cmocka_unit_test(no_debt_across_experiments),
	    cmocka_unit_test(child_inherits_parent_count),
	    cmocka_unit_test(joiner_waits_for_virtual_exit_of_joined),
	    cmocka_unit_test(wrappers_bracket_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
