/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The causal runtime's tail accounting (sampler.c samples_account_tail):
 * at a thread's exit, the task-clock time since its last sample gets the
 * virtual speedup of the line of that sample, as a fraction of a sample.
 * Linked against sampler.c and delays.c with the rest of the runtime
 * stubbed. The expected tails are bracketed by the thread's CPU clock read
 * on both sides of the call, never by how long a spin took, so the checks
 * hold on a loaded machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "causal/runtime/linemap.h"
#include "causal/runtime/runtime.h"

struct runtime rt;

struct thread_state *thread_self(void)
{
	return NULL;
}
#define SELECTED_IP 0x1234u /* the one address in the selected line */
static struct line_info selected_line, other_line;

struct line_info *linemap_lookup(uintptr_t ip)
{
	return ip == SELECTED_IP ? &selected_line : NULL;
}
void *real_symbol(const char *name, const char *version)
{
	return NULL;
}
void signals_forward(int sig, siginfo_t *info, void *uctx)
{
}
void signals_inherit_view(bool blocked)
{
}
void signals_poked(void *uctx)
{
}
bool address_in_lever(const void *p)
{
	return false;
}
unsigned threads_live(void)
{
	return 1;
}
void progress_note_pause(uint64_t ns)
{
}
/* no latency points: a rise of G asks nobody to pay at once (test_causal_delays does) */
bool progress_has_latency(void)
{
	return false;
}
void threads_foreach(void (*fn)(struct thread_state *t, void *ctx), void *ctx)
{
}
void fd_guard_protect(int *slot)
{
}
bool threads_exit_record(pthread_t th, uint64_t *local, uint64_t *epoch, uint64_t *exit_ns)
{
	return false;
}

#define PERIOD_NS 1000000ull /* 1 ms */
#define DELAY_NS  500000ull  /* 50% of it */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_cpu(uint64_t ns)
{
	uint64_t until = thread_cpu_ns() + ns;
	volatile uint64_t x = 0;

	while (thread_cpu_ns() < until)
		x++;
}

static void running_experiment(struct line_info *selected)
{
	memset(&rt, 0, sizeof(rt));
	rt.cfg.period_ns = PERIOD_NS;
	atomic_store(&rt.delay_ns, DELAY_NS);
	atomic_store(&rt.selected, selected);
	atomic_store(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_RUNNING);
}

/*
 * A thread-CPU-time timer armed by the runtime's own sampler_resume (which
 * notes the thread's CPU time at arming). SIGEV_NONE: no signal reaches
 * this test; the samples its signals would have been are set by hand.
 */
static void arm_timer(struct thread_state *t)
{
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};
	uint64_t before;

	memset(t, 0, sizeof(*t));
	t->perf_fd = -1;
	t->batch_fd = -1;
	t->epoch = 1;
	assert_int_equal(timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer), 0);
	t->timer_armed = true;
	before = thread_cpu_ns();
	sampler_resume(t);
	assert_in_range(t->timer_armed_cpu_ns, before, thread_cpu_ns());
	assert_int_equal(t->timer_periods, 0);
}

/*
 * Runs an experiment on the selected line with the timer armed, spins ns of
 * CPU of which the timer's samples covered `periods` periods, and accounts
 * the tail. The thread's CPU time is read on both sides of the call, so the
 * expected tail is bracketed exactly however long the spin overshot.
 * Returns the delay the tail was worth.
 */
static uint64_t timer_tail_after(uint64_t ns, uint64_t periods)
{
	struct thread_state t;
	uint64_t covered, before, after;

	running_experiment(&selected_line);
	arm_timer(&t);
	t.last_line = &selected_line;
	spin_cpu(ns);
	t.timer_periods = periods;
	covered = t.timer_armed_cpu_ns + periods * PERIOD_NS;
	before = thread_cpu_ns();
	samples_account_tail(&t);
	after = thread_cpu_ns();
	assert_in_range(t.local, (before - covered) * DELAY_NS / PERIOD_NS,
			(after - covered) * DELAY_NS / PERIOD_NS);
	timer_delete(t.timer);
	return t.local;
}

/* 2.3 periods of CPU, 2 of them sampled: the tail is ~0.3 of a period. */
static void timer_tail_in_selected_line(void **state)
{
	assert_true(timer_tail_after(2300000, 2) > 0);
}

/*
 * POSIX CPU timers expire at a scheduler tick: a thread can end with
 * several periods past and no signal yet. All of them are its tail (the old
 * timer_gettime reading said "1 ns left": a full period, whatever had run).
 */
static void timer_tail_before_the_tick(void **state)
{
	assert_true(timer_tail_after(2300000, 0) >= 2300000 * DELAY_NS / PERIOD_NS);
}

/*
 * A pause disarms the timer and resuming re-arms a full period, so what
 * the samples covered starts again; a signal still pending from before the
 * pause may then cover more than the thread ran since: no tail, not a
 * wrapped one.
 */
static void timer_pause_resume_restarts_cover(void **state)
{
	struct thread_state t;
	uint64_t armed;

	running_experiment(&selected_line);
	arm_timer(&t);
	t.last_line = &selected_line;
	spin_cpu(300000);
	t.timer_periods = 7;
	armed = t.timer_armed_cpu_ns;
	sampler_pause(&t);
	sampler_resume(&t);
	assert_int_equal(t.timer_periods, 0);
	assert_true(t.timer_armed_cpu_ns >= armed + 300000);
	t.timer_periods = 1; /* delivered after the resume */
	samples_account_tail(&t);
	assert_int_equal(t.local, 0);
	timer_delete(t.timer);
}

static void tail_elsewhere_or_between_experiments(void **state)
{
	struct thread_state t;

	running_experiment(&selected_line);
	arm_timer(&t);
	spin_cpu(300000);
	t.last_line = &other_line; /* the last sample was in another line */
	samples_account_tail(&t);
	assert_int_equal(t.local, 0);
	t.last_line = NULL; /* or out of scope */
	samples_account_tail(&t);
	assert_int_equal(t.local, 0);
	t.last_line = &selected_line; /* in the line, but no experiment runs */
	atomic_store(&rt.active, EXPERIMENT_IDLE);
	samples_account_tail(&t);
	assert_int_equal(t.local, 0);
	timer_delete(t.timer);
}

/*
 * The perf sampler's event: its count modulo the period. The event is
 * stopped before the call, so its count is exact. (Its phase is not
 * compared with the thread's CPU clock: interrupt time charged to the
 * thread can put the two a few hundred microseconds apart.)
 */
static void perf_tail_in_selected_line(void **state)
{
	struct perf_event_attr attr = {0};
	struct thread_state t = {0};
	uint64_t count;

	running_experiment(&selected_line);
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = PERIOD_NS;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	t.perf_fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	assert_true(t.perf_fd >= 0); /* software events work without a PMU */
	t.batch_fd = -1;
	t.epoch = 1;
	t.last_line = &selected_line;
	ioctl(t.perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	spin_cpu(3300000);
	ioctl(t.perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	assert_int_equal(read(t.perf_fd, &count, sizeof(count)), sizeof(count));
	samples_account_tail(&t);
	assert_int_equal(t.local, count % PERIOD_NS * DELAY_NS / PERIOD_NS);
	assert_true(t.local > 0);
	assert_true(count >= 3000000); /* it counted the spin */
	close(t.perf_fd);
}

static void buffer_sample(struct thread_state *t, uint64_t ns, uint32_t weight)
{
	struct raw_sample *s = &t->tbuf[t->tbuf_n++];

	memset(s, 0, sizeof(*s));
	s->ip = SELECTED_IP;
	s->ns = ns;
	s->weight = weight;
	t->tbuf_weight += weight;
}

/*
 * A batch processed just after an experiment starts holds samples taken
 * before it: they add no virtual speedup, and a sample whose period began
 * before the start counts for its part after it (issue 14 point 6: with
 * experiments of a few ms, a whole batch of earlier samples made the
 * effective duration negative).
 */
static void samples_before_the_start_add_nothing(void **state)
{
	const uint64_t start = 10 * 1000000000ull;
	struct thread_state t;

	running_experiment(&selected_line);
	atomic_store(&rt.experiment_start_ns, start);
	memset(&t, 0, sizeof(t));
	t.perf_fd = -1;
	t.batch_fd = -1;
	t.epoch = 1;
	buffer_sample(&t, start - 5 * PERIOD_NS, 1); /* a whole batch earlier */
	buffer_sample(&t, start - 1, 3);
	samples_process(&t);
	assert_int_equal(t.local, 0);
	buffer_sample(&t, start + 300000, 1); /* 0.3 of its period after the start */
	samples_process(&t);
	assert_int_equal(t.local, 300000 * DELAY_NS / PERIOD_NS);
	buffer_sample(&t, start + 5 * PERIOD_NS, 2); /* wholly inside: both periods */
	samples_process(&t);
	assert_int_equal(t.local, (300000 + 2 * PERIOD_NS) * DELAY_NS / PERIOD_NS);
}

/*
 * Samples processed while the experiment ends (the catch-up request) count
 * for the part of their period before its end; an untimed one no longer.
 */
static void samples_while_ending_count_until_the_end(void **state)
{
	const uint64_t start = 10 * 1000000000ull, end = start + 20 * PERIOD_NS;
	struct thread_state t;

	running_experiment(&selected_line);
	atomic_store(&rt.experiment_start_ns, start);
	atomic_store(&rt.experiment_end_ns, end);
	atomic_store(&rt.active, EXPERIMENT_ENDING);
	memset(&t, 0, sizeof(t));
	t.perf_fd = -1;
	t.batch_fd = -1;
	t.epoch = 1;
	buffer_sample(&t, end - 300000, 1); /* wholly before the end */
	samples_process(&t);
	assert_int_equal(t.local, DELAY_NS);
	buffer_sample(&t, end + 400000, 1);	   /* 0.6 of its period before the end */
	buffer_sample(&t, end + 2 * PERIOD_NS, 1); /* after it */
	buffer_sample(&t, 0, 1);		   /* time unknown */
	samples_process(&t);
	assert_int_equal(t.local, DELAY_NS + 600000 * DELAY_NS / PERIOD_NS);
}

/* A thread's tail counts only from the experiment's start, read on both sides. */
static void tail_before_the_start_is_cut(void **state)
{
	struct thread_state t;
	uint64_t start, after;

	running_experiment(&selected_line);
	arm_timer(&t);
	t.last_line = &selected_line;
	spin_cpu(2300000); /* 2.3 periods of tail, all before the start */
	start = time_monotonic_ns();
	atomic_store(&rt.experiment_start_ns, start);
	samples_account_tail(&t);
	after = time_monotonic_ns();
	assert_true(t.local <= (after - start) * DELAY_NS / PERIOD_NS);
	timer_delete(t.timer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(timer_tail_in_selected_line),
	    cmocka_unit_test(timer_tail_before_the_tick),
	    cmocka_unit_test(timer_pause_resume_restarts_cover),
	    cmocka_unit_test(tail_elsewhere_or_between_experiments),
	    cmocka_unit_test(perf_tail_in_selected_line),
	    cmocka_unit_test(samples_before_the_start_add_nothing),
	    cmocka_unit_test(samples_while_ending_count_until_the_end),
	    cmocka_unit_test(tail_before_the_start_is_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
