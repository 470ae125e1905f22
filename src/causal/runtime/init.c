/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Life cycle of liblever-causal.so: read the settings `lever causal` passed in
 * the environment, start sampling in the main thread, start the profiler
 * thread, wrap main so that its return (and exit, _exit, _Exit from any
 * thread) shuts the profiler down exactly once, and decide what forked and
 * exec'd children do (run unprofiled, or with --follow-children profile into
 * OUTPUT.<pid>). At exit, if no usable experiment was recorded, say why.
 */
#include <dlfcn.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "causal/runtime/experiment.h"
#include "causal/runtime/linemap.h"
#include "causal/runtime/output.h"
#include "causal/runtime/progress.h"
#include "causal/runtime/runtime.h"
#include "causal/runtime/settings.h"

struct runtime rt;
static pthread_t profiler;
static _Atomic int profiler_running;
static _Atomic int shutdown_done;
static char base_output[PATH_MAX];

/* CPUs the program may run on: its affinity mask at start (at least 1). */
static unsigned affinity_cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? (unsigned)n : 1;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	x = strtoull(v, &end, 10);
	return *end ? def : (uint64_t)x;
}

static void env_str(const char *name, char *dst, size_t size, const char *def)
{
	const char *v = getenv(name);

	str_copy(dst, v && *v ? v : def, size);
}

static void read_config(struct runtime_config *c)
{
	const char *v;

	env_str(LEVER_ENV_OUTPUT, base_output, sizeof(base_output), "profile.coz");
	c->end_to_end = env_u64(LEVER_ENV_END_TO_END, 0) != 0;
	c->verbose = (unsigned)env_u64(LEVER_ENV_VERBOSE, 0);
	c->follow_children = env_u64(LEVER_ENV_FOLLOW_CHILDREN, 0) != 0;
	v = getenv(LEVER_ENV_SAMPLER);
	c->force_timer = v && strcmp(v, "timer") == 0;
	c->no_sampler = v && strcmp(v, "none") == 0;
	v = getenv(LEVER_ENV_PAUSE);
	c->pause_spin = v && strcmp(v, "spin") == 0;
	c->pause_auto = !v || strcmp(v, "auto") == 0;
	c->cpus = affinity_cpus();
	c->fixed_speedup = getenv(LEVER_ENV_FIXED_SPEEDUP) && *getenv(LEVER_ENV_FIXED_SPEEDUP)
			       ? (int)env_u64(LEVER_ENV_FIXED_SPEEDUP, 0)
			       : -1;
	if (c->fixed_speedup > 100)
		c->fixed_speedup = 100;
	v = getenv(LEVER_ENV_ARRIVAL_SPEEDUP);
	c->arrival_set = v && *v;
	c->arrival_ns = env_u64(LEVER_ENV_ARRIVAL_SPEEDUP, 0);
	env_str(LEVER_ENV_FIXED_LINE, c->fixed_line, sizeof(c->fixed_line), "");
	v = getenv(LEVER_ENV_ZERO_PROB);
	c->zero_probability = v && *v ? strtod(v, NULL) : 0.5;
	if (!(c->zero_probability >= 0 && c->zero_probability <= 1))
		c->zero_probability = 0.5;
	c->speedup_step = (unsigned)env_u64(LEVER_ENV_SPEEDUP_STEP, 5);
	if (c->speedup_step == 0 || c->speedup_step > 100)
		c->speedup_step = 5;
	/*
	 * An experiment's visit count is off by up to one visit at each end, so
	 * longer experiments measure the progress rate more precisely. The
	 * paper gives no length; Coz used 100 ms (2014) and 500 ms (2015).
	 */
	c->experiment_ns = env_u64(LEVER_ENV_EXPERIMENT_MS, 250) * NSEC_PER_MSEC;
	if (!c->experiment_ns)
		c->experiment_ns = 250 * NSEC_PER_MSEC;
	c->cooloff_ns = env_u64(LEVER_ENV_COOLOFF_MS, 10) * NSEC_PER_MSEC;
	c->min_visits = (unsigned)env_u64(LEVER_ENV_MIN_VISITS, 5);
	c->period_ns = env_u64(LEVER_ENV_PERIOD_US, 1000) * NSEC_PER_USEC;
	if (c->period_ns < 10 * NSEC_PER_USEC)
		c->period_ns = NSEC_PER_MSEC;
	c->batch = (unsigned)env_u64(LEVER_ENV_BATCH, 10);
	if (!c->batch)
		c->batch = 10;
	c->seed = env_u64(LEVER_ENV_SEED, time_realtime_ns() ^ (uint64_t)getpid());
	env_str(LEVER_ENV_DEBUG_ROOT, c->debug_root, sizeof(c->debug_root), "/usr/lib/debug");
	env_str(LEVER_ENV_PROGRESS, rt.progress_list, sizeof(rt.progress_list), "");
	env_str(LEVER_ENV_SAMPLED, rt.sampled_list, sizeof(rt.sampled_list), "");
}

/* Children run unprofiled: take our library out of LD_PRELOAD, keep the rest. */
static void forget_preload(void)
{
	const char *v = getenv("LD_PRELOAD");
	char *copy, *save = NULL, *out;
	size_t len = 0;

	unsetenv(LEVER_ENV_ACTIVE);
	if (!v || !(copy = strdup(v)) || !(out = calloc(1, strlen(v) + 1)))
		return;
	for (char *tok = strtok_r(copy, " :", &save); tok; tok = strtok_r(NULL, " :", &save)) {
		if (strstr(tok, "liblever-causal.so"))
			continue;
		len +=
		    (size_t)fmt_buffer(out + len, strlen(v) + 1 - len, "%s%s", len ? " " : "", tok);
	}
	if (len)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(out);
	free(copy);
}

static void choose_output_path(void)
{
	uint64_t root = env_u64(LEVER_ENV_ROOT_PID, 0);

	if (root && root != (uint64_t)getpid())
		fmt_buffer(rt.cfg.output, sizeof(rt.cfg.output), "%s.%d", base_output,
			   (int)getpid());
	else
		str_copy(rt.cfg.output, base_output, sizeof(rt.cfg.output));
}

/* Settings that need lines before main: build the map now. */
static bool needs_map_before_main(void)
{
	return rt.cfg.end_to_end || rt.cfg.fixed_line[0] || rt.progress_list[0] ||
	       rt.sampled_list[0];
}

static void start_profiling(void)
{
	choose_output_path();
	if (!output_open(rt.cfg.output))
		return;
	atomic_store(&rt.enabled, 1);
	/* the line map, when built before main, is lever's time, not the run's */
	rt.run_start_ns = time_monotonic_ns();
	thread_register(0, 0, 0);
	if (!experiment_start_profiler(&profiler)) {
		LOG_WARN("cannot start the profiler thread; profiling disabled\n");
		atomic_store(&rt.enabled, 0);
		return;
	}
	atomic_store(&profiler_running, 1);
	LOG_INFO("profiling pid %d into %s with the %s sampler\n", (int)rt.pid, rt.cfg.output,
		 rt.sampler_name);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/*
 * CPU time of the process when the constructor was done and of the profiler
 * thread before it was joined: what is left is the program's own, the time
 * the sampler could have sampled.
 */
static uint64_t cpu_at_start_ns, cpu_at_exit_ns, profiler_cpu_ns;

static void fork_child(void);

__attribute__((constructor)) static void lever_causal_init(void)
{
	const char *active = getenv(LEVER_ENV_ACTIVE);

	if (!active || strcmp(active, "1") != 0)
		return;
	rt.start_ns = time_monotonic_ns();
	rt.exec_ns = 0;
	read_config(&rt.cfg);
	rt.exec_ns = env_u64(LEVER_ENV_EXEC_NS, 0);
	rt.pid = getpid();
	if (!rt.cfg.follow_children) {
		forget_preload();
	} else if (!getenv(LEVER_ENV_ROOT_PID)) {
		/* descendants write OUTPUT.<pid>; the first profiled process OUTPUT */
		char pid[32];

		fmt_buffer(pid, sizeof(pid), "%d", (int)rt.pid);
		setenv(LEVER_ENV_ROOT_PID, pid, 1);
	}
	linemap_configure(getenv(LEVER_ENV_BINARY_SCOPE), getenv(LEVER_ENV_SOURCE_SCOPE));
	sampler_install_handler();
	threads_init();
	pthread_atfork(NULL, NULL, fork_child);
	if (rt.cfg.end_to_end)
		progress_register_end_to_end();
	if (needs_map_before_main())
		experiment_prepare();
	start_profiling();
	cpu_at_start_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static void report_startup_time(void)
{
	uint64_t first = atomic_load(&rt.first_sample_ns);

	if (!rt.cfg.verbose || !first)
		return;
	if (rt.exec_ns && first > rt.exec_ns)
		LOG_INFO("first sample at %llu us after exec\n",
			 (unsigned long long)((first - rt.exec_ns) / NSEC_PER_USEC));
	LOG_INFO(
	    "first sample at %llu us after the runtime started; line map ready after %llu us\n",
	    (unsigned long long)((first - rt.start_ns) / NSEC_PER_USEC),
	    (unsigned long long)(experiment_stats()->map_ready_ns
				     ? (experiment_stats()->map_ready_ns - rt.start_ns) /
					   NSEC_PER_USEC
				     : 0));
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * NSEC_PER_USEC;
}

/* At shutdown, before lever's own exit work and the profiler thread's join. */
static void note_exit_cpu(void)
{
	clockid_t clock;

	cpu_at_exit_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (atomic_load(&profiler_running) && pthread_getcpuclockid(profiler, &clock) == 0)
		profiler_cpu_ns = clock_ns(clock);
}

static uint64_t program_cpu_ns(void)
{
	uint64_t runtime = cpu_at_start_ns + profiler_cpu_ns;

	return cpu_at_exit_ns > runtime ? cpu_at_exit_ns - runtime : 0;
}

/*
 * No sample at all. The sampler counts CPU time, so first rule out the
 * common causes that are not the sampler's: a program that hardly ran (cat
 * of a small file) or whose work ran in child processes (sh -c, make).
 */
static void explain_no_samples(void)
{
	uint64_t self_ns = program_cpu_ns(), children_ns = 0;
	struct rusage children;

	if (getrusage(RUSAGE_CHILDREN, &children) == 0)
		children_ns = timeval_ns(children.ru_utime) + timeval_ns(children.ru_stime);
	if (children_ns > self_ns && !rt.cfg.follow_children)
		LOG_WARN("  no samples were taken: the program used %llu us of CPU time and its "
			 "child processes %llu us; children run unprofiled: pass "
			 "--follow-children to profile them\n",
			 (unsigned long long)(self_ns / NSEC_PER_USEC),
			 (unsigned long long)(children_ns / NSEC_PER_USEC));
	else if (self_ns < 2 * rt.cfg.period_ns)
		LOG_WARN("  no samples were taken: the program used only %llu us of CPU time "
			 "after lever's start-up, about one sampling period (%llu us) or less; "
			 "profile a longer run (a larger input) or pass a shorter "
			 "--sample-period\n",
			 (unsigned long long)(self_ns / NSEC_PER_USEC),
			 (unsigned long long)(rt.cfg.period_ns / NSEC_PER_USEC));
	else
		LOG_WARN("  no samples were taken: the %s sampler delivered none in %llu ms of "
			 "the program's CPU time (sampling may not be available here; try "
			 "--sampler=timer)\n",
			 rt.sampler_name, (unsigned long long)(self_ns / NSEC_PER_MSEC));
}

/* No usable experiment: say why, and what to do. */
static void diagnose(void)
{
	const struct experiment_stats *s = experiment_stats();
	const char *missing;

	report_startup_time();
	LOG_INFO("%llu experiments (%llu with enough visits), %llu samples (%llu in scope), "
		 "%llu lost, %llu ms of delays inserted\n",
		 (unsigned long long)s->experiments, (unsigned long long)s->useful,
		 (unsigned long long)atomic_load(&rt.total_samples),
		 (unsigned long long)atomic_load(&rt.in_scope_samples),
		 (unsigned long long)atomic_load(&rt.lost_samples),
		 (unsigned long long)(atomic_load(&rt.inserted_delay_ns) / NSEC_PER_MSEC));
	if (atomic_load(&rt.prompts))
		LOG_INFO("latency points: %llu requests to running threads to pay their pauses "
			 "at once\n",
			 (unsigned long long)atomic_load(&rt.prompts));
	if (s->nonpositive)
		LOG_WARN("%llu experiment(s) not written: their slowest thread was credited more "
			 "pause than they lasted\n",
			 (unsigned long long)s->nonpositive);
	if (s->useful)
		return;
	if (rt.cfg.no_sampler) {
		LOG_INFO("--sampler=none: start-up only, no samples and no experiments\n");
		return;
	}
	LOG_WARN("no usable experiment was recorded in %s:\n", rt.cfg.output);
	if (atomic_load(&rt.total_samples) == 0)
		explain_no_samples();
	else if (linemap_object_count() == 0) {
		if (linemap_missing_debug(&missing))
			LOG_WARN("  no debug line information for the binary scope (first: %s); "
				 "build with -g, or install its debug package\n",
				 missing);
		else
			LOG_WARN("  no loaded binary matches the binary scope (-b); the main "
				 "executable is %s\n",
				 linemap_main_exe());
	} else if (atomic_load(&rt.in_scope_samples) == 0)
		LOG_WARN("  none of the %llu samples fell in in-scope source lines; widen "
			 "--source-scope/--binary-scope\n",
			 (unsigned long long)atomic_load(&rt.total_samples));
	else if (!rt.cfg.end_to_end && progress_count() == 0)
		LOG_WARN("  no progress point was registered: add LEVER_PROGRESS (include/lever.h) "
			 "or COZ_PROGRESS where a unit of work ends, pass --progress FILE:LINE, "
			 "or use --end-to-end\n");
	else if (progress_total_visits() == 0)
		LOG_WARN("  the progress points were never visited during an experiment\n");
	else
		LOG_WARN("  experiments saw fewer than %u visits per progress point; run longer "
			 "or use --end-to-end (%llu experiments)\n",
			 rt.cfg.min_visits, (unsigned long long)s->experiments);
}

struct shared_lines {
	uint64_t shared; /* samples of arriving threads in lines other threads ran too */
	struct line_info *worst;
};

static void find_shared_line(struct line_info *li, void *ctx)
{
	struct shared_lines *s = ctx;
	uint64_t a = atomic_load(&li->arrival_samples);

	if (!a || !atomic_load(&li->other_samples))
		return;
	s->shared += a;
	if (!s->worst || a > atomic_load(&s->worst->arrival_samples))
		s->worst = li;
}

/*
 * Load amplification's guard rails (AMP): the arrival speedup can only
 * shorten a real inter-arrival period, not go below zero; without an arrival
 * nothing is amplified; and an arriving thread that also runs the program's
 * processing code has that code sped up along with its arrivals.
 */
static void diagnose_arrivals(void)
{
	uint64_t arrivals = threads_arrivals(), period, arrival_lines;
	struct shared_lines s = {0};

	if (!rt.cfg.arrival_ns)
		return;
	if (!arrivals) {
		LOG_WARN("--arrival-speedup: no arrival point was visited, so no load was "
			 "amplified; mark where requests arrive with LEVER_ARRIVAL/COZ_ARRIVAL "
			 "(a LEVER_BEGIN/COZ_BEGIN visit counts too)\n");
		return;
	}
	period = threads_shortest_arrival_period();
	if (period != UINT64_MAX && rt.cfg.arrival_ns >= period)
		LOG_WARN("--arrival-speedup=%llu ns reaches the measured inter-arrival period of "
			 "an arriving thread (%llu ns): the load asked for is beyond what virtual "
			 "speedup can create; use a speedup below the period\n",
			 (unsigned long long)rt.cfg.arrival_ns, (unsigned long long)period);
	linemap_foreach_line(find_shared_line, &s);
	arrival_lines = atomic_load(&rt.arrival_lines);
	if (s.worst && s.shared >= 10 && s.shared * 20 >= arrival_lines)
		LOG_WARN("--arrival-speedup: arriving threads also ran in-scope lines that other "
			 "threads run (%llu%% of their in-scope samples; most in %s:%u): that "
			 "processing is sped up with the arrivals, so the prediction is too "
			 "optimistic; put the arrival point in a thread that only generates "
			 "requests\n",
			 (unsigned long long)(s.shared * 100 / arrival_lines), s.worst->file,
			 s.worst->line);
}

void runtime_shutdown(void)
{
	struct thread_state *t;
	int (*real_join)(pthread_t, void **);

	if (!atomic_load(&rt.enabled) || getpid() != rt.pid || atomic_exchange(&shutdown_done, 1))
		return;
	atomic_store(&rt.exiting_ns, time_monotonic_ns());
	note_exit_cpu();
	t = thread_self();
	if (t) {
		t->busy = 1;
		samples_process(t);
		delays_mark_blocked(t, true); /* the profiler must not wait for us */
	}
	atomic_store(&rt.shutting_down, 1);
	real_join = real_symbol("pthread_join", NULL);
	if (atomic_load(&profiler_running) && real_join)
		real_join(profiler, NULL);
	atomic_store(&rt.shutting_down, 2);
	output_close();
	diagnose();
	diagnose_arrivals();
	if (t) {
		sampler_stop(t);
		t->busy = 0;
	}
}

/* ---- fork: the child has only the forking thread and no profiler thread ---- */
static void fork_child(void)
{
	struct thread_state *self = thread_self();

	if (!atomic_load(&rt.enabled))
		return;
	output_forget();
	progress_after_fork_child(self);
	/* the child's own samples and fallbacks, not the parent's */
	atomic_store(&rt.first_sample_ns, 0);
	atomic_store(&rt.timer_fallback_threads, 0);
	/* the inherited perf fds and mapping belong to the parent's thread */
	if (self) {
		sampler_stop(self);
		progress_thread_stop(self);
	}
	threads_after_fork_child(self);
	atomic_store(&rt.active, EXPERIMENT_IDLE);
	atomic_store(&profiler_running, 0);
	if (!rt.cfg.follow_children) {
		atomic_store(&rt.enabled, 0);
		atomic_store(&rt.shutting_down, 2);
		return;
	}
	rt.pid = getpid();
	rt.start_ns = time_monotonic_ns();
	rt.run_start_ns = rt.start_ns;
	atomic_store(&shutdown_done, 0);
	atomic_store(&rt.exiting_ns, 0);
	atomic_store(&rt.shutting_down, 0);
	if (self) {
		sampler_start(self);
		progress_thread_start(self);
	}
	choose_output_path();
	if (!output_open(rt.cfg.output) || !experiment_start_profiler(&profiler)) {
		atomic_store(&rt.enabled, 0);
		return;
	}
	atomic_store(&profiler_running, 1);
}

/* ---- main and exit ---- */
typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

/* A profile that could not be written fails a run that succeeded (doc/causal.md). */
static int exit_status(int status)
{
	return status == 0 && output_failed() ? OUTPUT_EXIT_FAILED : status;
}

static int wrapped_main(int argc, char **argv, char **envp)
{
	int r = real_main(argc, argv, envp);

	if (atomic_load(&rt.enabled) && getpid() == rt.pid)
		progress_visit_end_to_end();
	runtime_shutdown();
	return exit_status(r);
}

LEVER_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				   void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
	    real_symbol("__libc_start_main", NULL);

	real_main = main;
	return real(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

LEVER_EXPORT void exit(int status)
{
	void (*real)(int) = real_symbol("exit", NULL);

	runtime_shutdown();
	real(exit_status(status));
	__builtin_unreachable();
}

LEVER_EXPORT void _exit(int status)
{
	void (*real)(int) = real_symbol("_exit", NULL);

	runtime_shutdown();
	real(exit_status(status));
	__builtin_unreachable();
}

LEVER_EXPORT void _Exit(int status)
{
	void (*real)(int) = real_symbol("_Exit", NULL);

	runtime_shutdown();
	real(exit_status(status));
	__builtin_unreachable();
}
