/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiler thread: builds the line map, then runs performance experiments
 * one after another (paper §3.2): pick the first in-scope line sampled since
 * the last experiment, pick a speedup (0% with probability 0.5, else uniform
 * over 5..100% in 5% steps), run for the current length, log the effective
 * duration and progress deltas, double the length if a point saw fewer than
 * 5 visits, cool off 10 ms.
 *
 * Ending an experiment: its effective duration subtracts only delay that was
 * really inserted or credited. Threads pay owed pauses at their next batch,
 * so at the end every running thread is asked to catch up now; the duration
 * is taken once they have, and subtracts the pauses of the thread that paid
 * the fewest (threads blocked in a wrapped call are credited when woken).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "causal/runtime/experiment.h"
#include "causal/runtime/linemap.h"
#include "causal/runtime/output.h"
#include "causal/runtime/progress.h"
#include "causal/runtime/runtime.h"

#define SAMPLES_EVERY 32 /* experiments between runtime/samples records */
#define POLL_NS	      (10 * NSEC_PER_MSEC)
#define MAX_LENGTH_NS (16 * NSEC_PER_SEC)

static struct rng rng;
static uint64_t length_ns;
static struct line_info *fixed_line;
static struct experiment_stats stats;

const struct experiment_stats *experiment_stats(void)
{
	return &stats;
}

static bool stopping(void)
{
	return atomic_load(&rt.shutting_down) != 0;
}

/* The numbers in flight of the experiment running (the profiler thread's alone). */
static struct in_flight in_flight;
#define IN_FLIGHT_STEP_NS (1 * NSEC_PER_MSEC)

/*
 * Sleeps ns in steps, sampling the numbers in flight at latency points
 * every millisecond (Little's law's L is their time average over the
 * experiment); false when the program began to exit.
 */
static bool experiment_nap(uint64_t ns)
{
	uint64_t step = progress_has_latency() ? IN_FLIGHT_STEP_NS : POLL_NS;
	uint64_t end = time_monotonic_ns() + ns;

	while (!stopping()) {
		uint64_t now = time_monotonic_ns();

		progress_in_flight_sample(&in_flight, now);
		if (now >= end)
			return true;
		time_sleep_ns(end - now < step ? end - now : step);
	}
	progress_in_flight_sample(&in_flight, time_monotonic_ns());
	return false;
}

/* Sleeps up to ns, in short steps so shutdown is noticed; false if stopping. */
static bool nap(uint64_t ns)
{
	uint64_t end = time_monotonic_ns() + ns;

	while (!stopping()) {
		uint64_t now = time_monotonic_ns();

		if (now >= end)
			return true;
		time_sleep_ns(end - now < POLL_NS ? end - now : POLL_NS);
	}
	return false;
}

static unsigned choose_speedup(void)
{
	unsigned steps;

	if (rt.cfg.fixed_speedup >= 0)
		return (unsigned)rt.cfg.fixed_speedup;
	if (rng_double(&rng) < rt.cfg.zero_probability)
		return 0;
	steps = 100 / rt.cfg.speedup_step;
	return (unsigned)(1 + rng_below(&rng, steps)) * rt.cfg.speedup_step;
}

/*
 * --fixed-speedup=0 speeds no line up, so which line an experiment names does
 * not matter: a program whose threads mostly sleep or block (a load
 * generator, a server) need not wait for a CPU sample first, and an
 * end-to-end run need not wait for a rescan of libraries, which would start
 * the experiment late.
 */
static struct line_info *any_line(void)
{
	struct line_info *li = atomic_load(&rt.next_line);

	return li ? li : linemap_first_line();
}

static struct line_info *choose_line(void)
{
	struct line_info *li;

	if (rt.cfg.fixed_speedup == 0 && !fixed_line && (li = any_line()))
		return li;
	/* libraries dlopen'ed since the last experiment join the map first */
	if (linemap_take_rescan())
		linemap_scan(rt.cfg.debug_root);
	if (fixed_line)
		return fixed_line;
	atomic_store(&rt.next_line, NULL);
	while (!(li = atomic_load(&rt.next_line))) {
		if (!nap(POLL_NS))
			return NULL;
		if (linemap_take_rescan())
			linemap_scan(rt.cfg.debug_root);
	}
	return li;
}

struct catch_up {
	uint64_t request;
	uint64_t min_local;
	unsigned waiting;
	bool send;
};

/*
 * A thread's local count less the part of its current pause still to sleep:
 * a thread that answers the end-of-experiment request in the middle of a
 * pause has counted it in local already, and subtracting all of it from the
 * duration would take off time that has not passed yet (a thread per round
 * paying its co-runner's pauses at exit made Figure 1 over-predict).
 */
static uint64_t paid_local(const struct thread_state *t)
{
	uint64_t until = atomic_load(&t->paying_until_ns), now, left;

	if (!until)
		return t->local;
	now = time_monotonic_ns();
	left = until > now ? until - now : 0;
	return t->local > left ? t->local - left : 0;
}

static void visit_thread(struct thread_state *t, void *ctx)
{
	struct catch_up *c = ctx;

	if (atomic_load(&t->blocked))
		return;
	if (c->send) {
		sampler_request_catch_up(t);
		return;
	}
	if (atomic_load(&t->ack) < c->request) {
		c->waiting++;
		return;
	}
	if (t->epoch == atomic_load(&rt.epoch) && paid_local(t) < c->min_local)
		c->min_local = paid_local(t);
}

/* Asks running threads to pay up; returns the smallest local count among them. */
static uint64_t settle_delays(uint64_t global_end)
{
	struct catch_up c = {.request = atomic_fetch_add(&rt.end_request, 1) + 1, .send = true};
	uint64_t deadline = time_monotonic_ns() + 2 * rt.cfg.cooloff_ns + 10 * NSEC_PER_MSEC;

	threads_foreach(visit_thread, &c);
	c.send = false;
	for (;;) {
		c.waiting = 0;
		c.min_local = UINT64_MAX;
		threads_foreach(visit_thread, &c);
		if (!c.waiting || time_monotonic_ns() > deadline)
			break;
		time_sleep_ns(100 * NSEC_PER_USEC);
	}
	return c.min_local == UINT64_MAX ? global_end : c.min_local;
}

static void write_samples_records(void);

/*
 * With --arrival-speedup (even 0) every record carries the load level, the
 * arrivals counted during the experiment and how many threads arrived, so
 * that runs at several loads can share one profile and be told apart.
 */
static void write_experiment_record(const struct line_info *line, unsigned speedup,
				    int64_t duration, uint64_t samples, uint64_t arrivals,
				    unsigned arriving)
{
	if (rt.cfg.arrival_set)
		output_printf(OUTPUT_FORMAT_AMP_EXPERIMENT, line->file, line->line, speedup / 100,
			      speedup % 100, (long long)duration, (unsigned long long)samples,
			      (unsigned long long)rt.cfg.arrival_ns, (unsigned long long)arrivals,
			      arriving);
	else
		output_printf(OUTPUT_FORMAT_EXPERIMENT, line->file, line->line, speedup / 100,
			      speedup % 100, (long long)duration, (unsigned long long)samples);
}

/*
 * When the experiment ended: now, or when the program began to exit if that
 * came first. The profiler notices an exit at its next poll (up to 10 ms
 * later) and then waits for threads to settle: that time is not the
 * program's, and at an end-to-end point it lengthened every run by 5 ms on
 * average (AMP's baselines read slow against the program's own clock).
 */
static uint64_t end_time(uint64_t t0)
{
	uint64_t now = time_monotonic_ns(), exiting = atomic_load(&rt.exiting_ns);

	return exiting > t0 && exiting < now ? exiting : now;
}

static void run_experiment(struct line_info *line, unsigned speedup)
{
	struct progress_snapshot *before = calloc(2, sizeof(*before));
	struct progress_snapshot *after = before + 1;
	uint64_t d = rt.cfg.period_ns * speedup / 100;
	uint64_t g0, g1, s0, s1, t0, t1, paid, min_local, min_delta, a0, a1;
	unsigned arriving;
	int64_t duration;
	bool cut_short = false;

	if (!before)
		return;
	atomic_store(&rt.delay_ns, d);
	atomic_store(&rt.selected, line);
	progress_snapshot_take(before);
	g0 = atomic_load(&rt.global);
	a0 = threads_arrivals();
	threads_mark_arrivals(atomic_load(&rt.epoch) + 1); /* the epoch this experiment gets */
	s0 = atomic_load(&line->samples);
	t0 = time_monotonic_ns();
	atomic_store(&rt.experiment_start_ns, t0);
	atomic_store(&rt.experiment_end_ns, 0);
	atomic_store(&rt.epoch_global, g0);
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_RUNNING);
	progress_in_flight_start(&in_flight, t0);

	if (rt.cfg.end_to_end)
		while (experiment_nap(POLL_NS))
			;
	else
		cut_short = !experiment_nap(length_ns);

	atomic_store(&rt.experiment_end_ns, time_monotonic_ns());
	atomic_store(&rt.active, EXPERIMENT_ENDING);
	g1 = atomic_load(&rt.global);
	min_local = settle_delays(g1);
	t1 = end_time(t0);
	progress_snapshot_take(after);
	a1 = threads_arrivals();
	arriving = threads_arriving_since_mark();
	s1 = atomic_load(&line->samples);
	g1 = atomic_load(&rt.global);
	progress_in_flight_stop(&in_flight, g1 - g0);
	paid = min_local > g0 ? min_local - g0 : 0;
	if (paid > g1 - g0)
		paid = g1 - g0;
	duration = (int64_t)(t1 - t0) - (int64_t)paid;
	atomic_store(&rt.epoch_global, g1);
	atomic_fetch_add(&rt.epoch, 1);
	atomic_store(&rt.active, EXPERIMENT_IDLE);

	if (rt.cfg.verbose > 1)
		LOG_INFO(
		    "experiment %s:%u at %u%%: started %llu ms after start-up, %llu ms elapsed, "
		    "%llu us of delay (%llu us paid by the slowest thread), %llu selected "
		    "samples, %llu arrivals\n",
		    line->file, line->line, speedup,
		    (unsigned long long)((t0 - rt.start_ns) / NSEC_PER_MSEC),
		    (unsigned long long)((t1 - t0) / NSEC_PER_MSEC),
		    (unsigned long long)((g1 - g0) / NSEC_PER_USEC),
		    (unsigned long long)(paid / NSEC_PER_USEC), (unsigned long long)(s1 - s0),
		    (unsigned long long)(a1 - a0));
	/*
	 * Cut short by the program's exit, an experiment's duration runs on past
	 * the last progress visit (exit handlers, teardown): its rate would be too
	 * slow, and in short fixed-speedup runs that biased the 0% baseline. It is
	 * kept only when it is the run's only one.
	 */
	if (cut_short && stats.experiments > 0) {
		if (rt.cfg.verbose > 1)
			LOG_INFO("experiment %s:%u at %u%%: cut short by the program's exit, not "
				 "written\n",
				 line->file, line->line, speedup);
		free(before);
		return;
	}
	/*
	 * The slowest thread paid more pause than the experiment lasted: only
	 * credit for pauses that did not pass inside it can do that (seen once
	 * in many runs, with the timer sampler, 1 ms experiments and a loaded
	 * machine). Such a duration means nothing and a reader would drop it:
	 * it is not written, and the run's summary counts it (init.c).
	 */
	if (duration <= 0) {
		stats.nonpositive++;
		if (rt.cfg.verbose > 1)
			LOG_INFO("experiment %s:%u at %u%%: %lld ns elapsed, %llu ns of pause "
				 "paid: not written\n",
				 line->file, line->line, speedup, (long long)(t1 - t0),
				 (unsigned long long)paid);
		free(before);
		return;
	}
	stats.paid_ns += paid;
	stats.unpaid_ns += (g1 - g0) - paid;
	/* a thread exiting at the snapshot can be counted twice for a moment */
	write_experiment_record(line, speedup, duration, s1 - s0, a1 > a0 ? a1 - a0 : 0, arriving);
	progress_write_records(before, after, &in_flight, duration, output_emit, NULL);
	output_flush();
	stats.experiments++;
	min_delta = progress_min_delta(before, after);
	/* an end-to-end point is visited once, at the end */
	if (min_delta >= rt.cfg.min_visits || (rt.cfg.end_to_end && min_delta >= 1))
		stats.useful++;
	free(before);

	/* paper §2: too few visits -> double the length for the rest of the run */
	if (min_delta < rt.cfg.min_visits && length_ns < MAX_LENGTH_NS)
		length_ns *= 2;
	else if (min_delta > 4 * rt.cfg.min_visits && length_ns >= 2 * rt.cfg.experiment_ns)
		length_ns /= 2;
	if (stats.experiments % SAMPLES_EVERY == 0)
		write_samples_records();
}

static void emit_line_samples(struct line_info *li, void *ctx)
{
	uint64_t n = atomic_load(&li->samples);

	if (n)
		output_printf(OUTPUT_FORMAT_SAMPLES, li->file, li->line, (unsigned long long)n);
}

/*
 * runtime: the run's length (above), and the delay subtracted from the
 * experiments' durations so far (the run is that much longer than the
 * program's own time: the report's phase correction takes it off).
 */
static void write_samples_records(void)
{
	uint64_t fallback = atomic_load(&rt.timer_fallback_threads);
	uint64_t length = experiment_run_length_ns(rt.run_start_ns, atomic_load(&rt.exiting_ns),
						   time_monotonic_ns());

	/*
	 * The startup record names the sampler the run began with; once threads
	 * past the perf sampler's descriptor budget were sampled by the timer
	 * sampler (sampler.c), the runtime records say so from then on.
	 */
	if (fallback)
		output_printf(OUTPUT_FORMAT_RUNTIME_MIXED_SAMPLER, (unsigned long long)length,
			      (unsigned long long)stats.paid_ns, (unsigned long long)fallback);
	else
		output_printf(OUTPUT_FORMAT_RUNTIME, (unsigned long long)length,
			      (unsigned long long)stats.paid_ns);
	linemap_foreach_line(emit_line_samples, NULL);
	output_flush();
}

static void resolve_fixed_line(void)
{
	char file[PATH_MAX];
	unsigned line;

	if (!rt.cfg.fixed_line[0])
		return;
	if (parse_file_line(rt.cfg.fixed_line, file, sizeof(file), &line))
		fixed_line = linemap_find(file, line);
	if (!fixed_line)
		LOG_WARN("--fixed-line %s: no such line in the in-scope binaries; "
			 "choosing lines at random\n",
			 rt.cfg.fixed_line);
}

/* Everything that needs the line map, done once it exists. */
void experiment_prepare(void)
{
	linemap_scan(rt.cfg.debug_root);
	progress_resolve_command_line(rt.progress_list, rt.sampled_list);
	resolve_fixed_line();
	stats.map_ready_ns = time_monotonic_ns();
}

static void *profiler_main(void *unused)
{
	rng_seed(&rng, rt.cfg.seed);
	length_ns = rt.cfg.experiment_ns;
	/* lever's own fields ride on startup: Coz's viewer ignores them there */
	output_printf(OUTPUT_FORMAT_STARTUP, (unsigned long long)time_realtime_ns(),
		      rt.sampler_name, (unsigned long long)rt.cfg.period_ns,
		      (unsigned long long)rt.cfg.seed);
	output_flush();
	if (!linemap_ready())
		experiment_prepare();
	/* no in-scope object yet is not the end: one may still be dlopen'ed */
	/* paper: experiments start once a progress point exists */
	while (!rt.cfg.end_to_end && progress_count() == 0 && nap(POLL_NS))
		;
	while (!stopping()) {
		struct line_info *line = choose_line();

		if (!line)
			break;
		run_experiment(line, choose_speedup());
		if (rt.cfg.end_to_end)
			break;
		nap(rt.cfg.cooloff_ns);
	}
	write_samples_records();
	return NULL;
}

bool experiment_start_profiler(pthread_t *thread)
{
	return real_thread_start(thread, profiler_main, NULL);
}
