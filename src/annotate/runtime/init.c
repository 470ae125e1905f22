/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Life cycle of liblever-annotate.so (spec/freud.md §5.3, §7.4 #3): under
 * `lever annotate record` (LEVER_ANNOTATE_PLAN set), read the plan, open the
 * record, build the exit trampoline, calibrate the probe's own cost and
 * patch the probes, all in a constructor, before main and before the
 * program's threads. At exit, and before fork and exec, write what is
 * buffered; fatal signals whose disposition is the default write it too and
 * then die as they would have.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/runtime/runtime.h"
#include "annotate/runtime/safe_read.h"
#include "annotate/runtime/shadow.h"
#include "annotate/runtime/signals.h"

struct ann_plan ann_plan;
bool ann_verbose;
static bool active;

int ann_reservoirs_init(void);

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGABRT,
				    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};

/* Before the process dies of a signal: write what is buffered. */
static void flush_before_death(void)
{
	struct ann_thread *t = ann_thread_current();

	if (t)
		t->busy = 1; /* no probe of a handler that runs now */
	ann_output_flush_paused();
}

/* A fatal signal whose action is the program's default: write, then die of it. */
static void on_fatal_signal(int sig, siginfo_t *info, void *uc)
{
	(void)info;
	(void)uc;
	ann_signals_die(sig);
}

/*
 * Ours only while the program keeps the default action: its own action,
 * when it sets one, replaces ours (interpose_signals.c), and it never sees
 * ours.
 */
static void install_signal_flush(void)
{
	ann_signals_set_before_death(flush_before_death);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;

		if (ann_real_sigaction(fatal_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue; /* the program (or a parent) decided: leave it */
		ann_signals_take(fatal_signals[i], on_fatal_signal, SA_NODEFER,
				 ANN_SIGNAL_UNTIL_PROGRAM);
	}
}

/*
 * At exit: a destructor of this library, which runs after the program's own
 * destructors and atexit handlers (it was loaded, and initialised, before
 * the program). From here on lines are written as they are made.
 */
__attribute__((destructor)) static void at_exit(void)
{
	if (!active)
		return;
	ann_uprobe_finish();	  /* its reader thread writes its last lines first */
	ann_output_stop_writer(); /* what was handed over to it, then the rest here */
	ann_output_flush_all();
	ann_output_set_direct();
	ann_output_summary();
	ann_output_sampling_summary();
}

static void before_fork(void)
{
	ann_output_flush_paused();
}

static void after_fork_parent(void)
{
	ann_output_resume();
}

static void after_fork_child(void)
{
	ann_output_after_fork_child();
}

bool ann_active(void)
{
	return active;
}

__attribute__((constructor)) static void ann_init(void)
{
	const char *plan = getenv(ANN_ENV_PLAN), *v = getenv(ANN_ENV_VERBOSE);

	if (!plan || !*plan)
		return;
	ann_verbose = v && strcmp(v, "1") == 0;
	if (ann_plan_load(plan, &ann_plan) || ann_output_open(ann_plan.record) ||
	    ann_reservoirs_init()) {
		ann_msg("nothing is recorded");
		return;
	}
	if (ann_metrics_init(ann_plan.metrics)) {
		ann_msg("the metrics cannot be read; nothing is recorded");
		return;
	}
	if (ann_exit_trampoline_init()) {
		ann_msg("no memory for the exit trampoline; nothing is recorded");
		return;
	}
	ann_calibrate();
	ann_output_start_writer();
	active = true;
	ann_branches_init();
	ann_install_probes();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	install_signal_flush();
	/* after the flush handler, which the safe reads' fault fix-up chains to;
	   now rather than at the first sampled call, which would pay for it;
	   and only when some function has features to read */
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		if (ann_plan.probes[i].n_ops) {
			ann_safe_read_init();
			break;
		}
	}
}
