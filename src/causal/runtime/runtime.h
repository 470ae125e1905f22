/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internal interface of liblever-causal.so, the causal-profiling runtime that
 * `lever causal` preloads into the profiled program.
 *
 * Threads: every program thread has a struct thread_state in a preallocated
 * table, reached through a TLS pointer (initial-exec, so reading it is
 * async-signal-safe). The profiler thread has none and is never sampled or
 * delayed.
 *
 * Delays (paper §3.4): a global delay G and per-thread local delays L, both
 * in nanoseconds, so that line speedups (d ns per own sample in the selected
 * line) and load amplification (the arrival speedup per own arrival, AMP)
 * feed one protocol. A thread with L > G raises G to L; a thread with L < G
 * sleeps G - L. Delays belong to an experiment epoch; a local value from an
 * older epoch is reset to G at the start of the current one (no debt across
 * experiments, but delay added since the start is still owed).
 */
#ifndef LEVER_CAUSAL_RUNTIME_H
#define LEVER_CAUSAL_RUNTIME_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/base.h"

#define LEVER_MAX_THREADS	     4096
#define LEVER_MAX_CALLCHAIN	     64
#define LEVER_MAX_THREAD_BREAKPOINTS 8
#define LEVER_TIMER_BUF		     16 /* timer-sampler samples buffered per thread */
#define LEVER_SIGNAL		     SIGPROF
#define LEVER_EXPORT		     __attribute__((visibility("default")))

/* Markers in si_value telling lever's own signals from the program's. */
extern char lever_timer_marker, lever_request_marker, lever_poke_marker;

struct line_info;

/* A raw sample collected by the timer sampler (the perf sampler keeps them in its ring). */
struct raw_sample {
	uintptr_t ip;
	uint64_t ns;	 /* CLOCK_MONOTONIC when taken */
	uint32_t weight; /* periods this sample stands for (1 + timer overruns) */
	uint32_t depth;
	uintptr_t chain[16];
};

struct thread_state {
	_Atomic int used; /* slot taken */
	pid_t tid;
	pthread_t self;

	/* sampler */
	int perf_fd; /* -1 when not sampling with perf */
	void *ring;  /* perf mmap area (header page + data) */
	size_t ring_size;
	int batch_fd;	 /* perf task-clock event that signals every batch */
	bool perf_share; /* holds a share of the perf sampler's descriptor budget */
	timer_t timer;	 /* timer sampler */
	bool timer_armed;
	uint64_t timer_armed_cpu_ns;  /* thread CPU time when the timer was (re)armed */
	uint64_t timer_periods;	      /* periods its samples stood for since then */
	uintptr_t stack_lo, stack_hi; /* for the frame-pointer walk */
	struct raw_sample tbuf[LEVER_TIMER_BUF];
	unsigned tbuf_n;
	unsigned tbuf_weight;
	struct line_info *last_line; /* in-scope line of the latest sample (NULL: none) */

	/* delays */
	uint64_t local;	   /* ns: pauses taken + own virtual speedup, this epoch */
	uint64_t epoch;	   /* experiment epoch of local */
	int64_t excess_ns; /* slept beyond what was owed, banked for later pauses */
	uint64_t global_at_block;
	uint64_t epoch_at_block;
	uint64_t blocked_at_ns; /* when it blocked (AMP caps the wake-up credit) */
	_Atomic int blocked;	/* inside a blocking call we wrap */
	_Atomic uint64_t ack;	/* last end-of-experiment request this thread answered */
	/* while sleeping off a debt already counted in local: when the sleep ends */
	_Atomic uint64_t paying_until_ns;

	/* load amplification: this thread's arrival counter (Coz's counter layout) */
	struct {
		_Atomic size_t count;
		size_t unused;
	} arrival;
	uint64_t arrivals_folded;  /* arrivals already turned into virtual speedup */
	uint64_t registered_ns;	   /* when the thread registered (arrival period) */
	uint64_t idle_ns;	   /* paused or blocked, ns (AMP's arrival period) */
	_Atomic bool counted_exit; /* its arrivals were added to rt.arrivals_exited */
	/*
	 * Written by the profiler thread as an experiment begins: the thread's
	 * arrival count then, its tid (a reused slot's mark is not its own) and
	 * the experiment's epoch. Arrivals before the start are not sped up.
	 */
	_Atomic uint64_t arrivals_mark;
	_Atomic pid_t mark_tid;
	_Atomic uint64_t mark_epoch;

	/* per-thread uprobe counters of --progress points (see progress.c) */
	int bp_fd[LEVER_MAX_THREAD_BREAKPOINTS];
	_Atomic int bp_lock;

	/* the program's view of LEVER_SIGNAL, for a thread looking for a taker (signals_forward) */
	_Atomic bool sig_view_blocked; /* the program blocks it in this thread */
	_Atomic bool sig_waiting;      /* in the sigwait family, waiting for it */

	/* re-entrancy: set while lever bookkeeping runs on this thread */
	volatile sig_atomic_t busy;
	volatile sig_atomic_t pending; /* a batch signal arrived while busy */
	bool exiting;
};

/* ---- state shared by all threads ---- */
struct runtime_config {
	char output[4096];
	bool end_to_end;
	unsigned verbose; /* 0, 1 (-v) or 2 (-vv: every experiment) */
	bool follow_children;
	bool force_timer;
	uint64_t arrival_ns; /* --arrival-speedup: virtual speedup per arrival, ns (0 = off) */
	bool arrival_set;    /* --arrival-speedup given (even 0): records carry the load */
	bool no_sampler;     /* "none": start-up only (line map, no samples), to measure overhead */
	bool pause_spin;     /* pay pauses by spinning, not sleeping (keeps an SMT sibling busy) */
	bool pause_auto;     /* spin while the threads that can run fit the CPUs, else sleep */
	unsigned cpus;	     /* CPUs the program may run on (its affinity at start) */
	int fixed_speedup;   /* -1: random */
	char fixed_line[4096];
	double zero_probability;
	unsigned speedup_step;
	uint64_t experiment_ns;
	uint64_t cooloff_ns;
	unsigned min_visits;
	uint64_t period_ns;
	unsigned batch;
	uint64_t seed;
	char debug_root[4096];
};

struct runtime {
	struct runtime_config cfg;
	_Atomic int enabled; /* interposers do their work only when set */
	_Atomic int shutting_down;
	_Atomic uint64_t exiting_ns; /* CLOCK_MONOTONIC when the program began to exit, or 0 */
	pid_t pid;

	/* experiment state, written by the profiler thread */
	_Atomic uint64_t global;       /* G, ns of virtual speedup (line samples and arrivals) */
	_Atomic uint64_t epoch;	       /* bumped at every experiment start and end */
	_Atomic uint64_t epoch_global; /* G when the current epoch began */
	_Atomic int active;	       /* EXPERIMENT_IDLE, _RUNNING or _ENDING */
	_Atomic uint64_t delay_ns;     /* d of the running experiment (per selected sample) */
	_Atomic uint64_t experiment_start_ns; /* CLOCK_MONOTONIC: samples before it add nothing */
	_Atomic uint64_t experiment_end_ns;   /* when it began to end, or 0 while it runs */
	_Atomic uint64_t arrivals_exited;     /* arrivals of threads that have exited */
	_Atomic uint64_t arrival_lines;	      /* line samples in threads that have arrivals */
	struct line_info *_Atomic selected;
	struct line_info *_Atomic next_line;
	_Atomic uint64_t end_request; /* end-of-experiment catch-up requests */

	const char *sampler_name; /* "perf" or "timer" */
	/* threads sampled by the timer sampler because perf's descriptor budget was spent */
	_Atomic uint64_t timer_fallback_threads;
	_Atomic uint64_t total_samples;
	_Atomic uint64_t in_scope_samples;
	_Atomic uint64_t lost_samples;
	_Atomic uint64_t inserted_delay_ns; /* slept by all threads, whole run */
	_Atomic unsigned blocked_threads;   /* live threads inside a blocking call we wrap */
	/* latency points: when running threads were last asked to pay, and how often */
	_Atomic uint64_t prompted_ns;
	_Atomic uint64_t prompts;
	uint64_t start_ns;     /* CLOCK_MONOTONIC at start-up */
	uint64_t run_start_ns; /* when sampling began: runtime records count from it */
	uint64_t exec_ns;      /* launcher's CLOCK_MONOTONIC at exec, or 0 */
	_Atomic uint64_t first_sample_ns;
	char progress_list[8192]; /* --progress, tab-separated */
	char sampled_list[8192];  /* --sampled-progress */
};

enum { EXPERIMENT_IDLE = 0, EXPERIMENT_RUNNING = 1, EXPERIMENT_ENDING = 2 };

extern struct runtime rt;

/* ---- threads (threads.c) ---- */
struct thread_state *thread_self(void);
/* Registers the calling thread, inheriting parent_local in the current epoch. */
struct thread_state *thread_register(uint64_t parent_local, uint64_t parent_epoch,
				     int64_t parent_excess);
void thread_unregister(struct thread_state *t);
/* Calls fn for each registered thread (profiler thread only). */
void threads_foreach(void (*fn)(struct thread_state *t, void *ctx), void *ctx);
/* The same, exiting threads included. */
void threads_foreach_all(void (*fn)(struct thread_state *t, void *ctx), void *ctx);
void threads_init(void);
unsigned threads_live(void);
void threads_after_fork_child(struct thread_state *self);
/* Arrivals counted so far by all threads, live and exited (AMP). */
uint64_t threads_arrivals(void);
/*
 * Profiler thread: marks every live thread's arrival count at an experiment's
 * start; then counts the threads that have arrived since (arrival-threads=).
 */
void threads_mark_arrivals(uint64_t epoch);
unsigned threads_arriving_since_mark(void);
/* Bookkeeping of an exiting thread's arrivals (count, real period). */
void threads_note_arrivals_at_exit(struct thread_state *t);
/* Shortest real inter-arrival period of any arriving thread, ns (UINT64_MAX: none). */
uint64_t threads_shortest_arrival_period(void);
/*
 * Before the calling thread exits: have every other running thread count its
 * unprocessed samples now (they raise G), so that the exiting thread pays for
 * selected-line work done while it was alive; it can never pay later.
 */
void threads_flush_samples(struct thread_state *self);
/*
 * The delay count, epoch and time (monotonic ns) with which thread th exited,
 * kept from its exit until its slot is reused; false if not known.
 */
bool threads_exit_record(pthread_t th, uint64_t *local, uint64_t *epoch, uint64_t *exit_ns);

/* ---- sampling (sampler.c) ---- */
bool sampler_start(struct thread_state *t);
void sampler_stop(struct thread_state *t);
/* In a forked child, for a thread of the parent: closes what it held. */
void sampler_forget_after_fork(struct thread_state *t);
/* Pauses/resumes sampling on the calling thread (around sleeps). */
void sampler_pause(struct thread_state *t);
void sampler_resume(struct thread_state *t);
/* Processes this thread's pending samples, then pays owed delays. */
void samples_process(struct thread_state *t);
/* At thread exit: the virtual speedup of the time since the last sample. */
void samples_account_tail(struct thread_state *t);
void sampler_install_handler(void);
/* Signals a thread to process its samples and pay its delays now. */
bool sampler_request_catch_up(struct thread_state *t);
/* Signals a thread to take the program's parked process-directed signal (signals_poked). */
bool sampler_poke(struct thread_state *t);

/* ---- delays (delays.c) ---- */
/* Pays what the calling thread owes (before anything that may wake a thread). */
void delays_catch_up(struct thread_state *t);
/*
 * Turns arrivals counted since the last call into virtual speedup of this
 * thread (local += n * arrival speedup) while an experiment runs or ends,
 * leaving out those before its start (arrivals_mark); outside one, just marks
 * them done. Part of delays_catch_up.
 */
void delays_fold_arrivals(struct thread_state *t);
/* Before a call that may block: pay what is owed, then remember G. */
void delays_pre_block(struct thread_state *t);
/* Marks t as inside (or out of) a blocking call we wrap (--pause=auto counts them). */
void delays_mark_blocked(struct thread_state *t, bool blocked);
/* After it: if woken by another thread, skip the pauses added while blocked. */
void delays_post_block(struct thread_state *t, bool woken_by_other);
/* Brings local up to date with the current epoch (no debt across experiments). */
void delays_sync_epoch(struct thread_state *t);
/* After joining a thread that exited with count exit_local at exit_ns: see delays.c. */
void delays_after_join(struct thread_state *t, uint64_t exit_local, uint64_t exit_epoch,
		       uint64_t exit_ns);
/* Wrapper side of it: looks the exit up and waits if owed. */
void delays_join_end(pthread_t joined);
/* Bracket of an interposed blocking call (pre_block/post_block around it). */
bool delays_block_begin(const void *return_address);
void delays_block_end(bool armed, bool woken_by_other);

/*
 * Wrapper bracket: returns the calling thread's state with busy set, or NULL
 * when the runtime is not enabled or the thread is not registered (then the
 * wrapper just calls the real function).
 */
struct thread_state *runtime_enter(void);
void runtime_leave(struct thread_state *t);

/* ---- real functions (real.c) ---- */
/* dlsym(RTLD_NEXT) with a recursion guard; returns NULL while resolving. */
void *real_symbol(const char *name, const char *version);
/* Whether an address (e.g. a caller's return address) lies in liblever-causal.so. */
bool address_in_lever(const void *p);
/*
 * Start one of lever's own threads through the real pthread_create, with
 * every signal blocked so that no program signal ever reaches it; false if
 * it could not be started.
 */
bool real_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

/*
 * REAL(name, version) defines real_name(), returning the next definition of
 * name (or NULL while a lookup is in progress on this thread), cached after the first
 * successful lookup. The versions passed are glibc 2.36's default ones on x86-64; real_symbol falls
 * back to plain dlsym when a version is missing.
 */
#define REAL(name, version)                                                                        \
	static _Atomic(__typeof__(&name)) real_##name##_cache;                                     \
	static __typeof__(&name) real_##name(void)                                                 \
	{                                                                                          \
		__typeof__(&name) p =                                                              \
		    atomic_load_explicit(&real_##name##_cache, memory_order_relaxed);              \
		if (!p) {                                                                          \
			p = (__typeof__(&name))real_symbol(#name, version);                        \
			if (p)                                                                     \
				atomic_store_explicit(&real_##name##_cache, p,                     \
						      memory_order_relaxed);                       \
		}                                                                                  \
		return p;                                                                          \
	}

/* ---- lifecycle (init.c) ---- */
void runtime_shutdown(void);
void runtime_after_fork_child(void);
/* Our signal must stay deliverable: removes it from a set the program passes. */
void signals_protect_set(sigset_t *set);
bool signals_is_ours(int sig);
/* The program's own handler for our signal, called for signals that are not ours. */
void signals_forward(int sig, siginfo_t *info, void *uctx);
/* lever's handler on a poke (sampler_poke): takes a parked process-directed signal. */
void signals_poked(void *uctx);
void signals_publish_view(void);
/* Whether the program believes this thread blocks LEVER_SIGNAL (inherited by new threads). */
bool signals_creator_view(void);
void signals_inherit_view(bool blocked);
/*
 * How many of the program's signal handlers have run on this thread so far
 * (async-signal-safe). Read it just before a call that may end with EINTR.
 */
unsigned long signals_handler_runs(void);
/*
 * After a call made from ra failed with EINTR: whether only lever's signal
 * interrupted it, i.e. no handler of the program ran on this thread since
 * signals_handler_runs() returned runs_before. Then the program would not
 * have been interrupted bare and the call goes on.
 */
bool signals_only_lever_interrupted(const void *ra, unsigned long runs_before);
/* Makes LEVER_SIGNAL deliverable to the calling thread, keeping the program's view of it. */
void signals_unblock_ours(void);

#define LOG_INFO(...)                                                                              \
	do {                                                                                       \
		if (rt.cfg.verbose)                                                                \
			fd_printf(2, "lever: " __VA_ARGS__);                                       \
	} while (0)
#define LOG_WARN(...) fd_printf(2, "lever: " __VA_ARGS__)

#endif
