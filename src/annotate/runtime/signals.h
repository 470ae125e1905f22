/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The signals liblever-annotate.so handles for itself, kept out of the
 * program's sight (spec/freud.md §7.3 item 5, §7.5 "never change what the
 * program computes"; doc/annotate-record.md "Signals"). Internal to the
 * runtime; interpose_signals.c says how.
 */
#ifndef LEVER_ANNOTATE_RUNTIME_SIGNALS_H
#define LEVER_ANNOTATE_RUNTIME_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* How the runtime holds a signal it took. */
enum ann_signal_hold {
	/*
	 * Ours while the program's action is the default; the program's first
	 * other action replaces ours (the fatal-signal flush of the record).
	 */
	ANN_SIGNAL_UNTIL_PROGRAM,
	/*
	 * Ours to the end: the program's actions are kept as its view and run
	 * by ann_signals_forward (the safe reads' SIGSEGV/SIGBUS fix-up).
	 */
	ANN_SIGNAL_ALWAYS,
};

/*
 * Install handler (SA_SIGINFO, with flags) for sig. The action in place
 * before, unless it was one of ours, becomes what the program sees (sigaction
 * with oldact, signal's result) and what ann_signals_forward runs. 0 or -1.
 */
int ann_signals_take(int sig, void (*handler)(int, siginfo_t *, void *), int flags,
		     enum ann_signal_hold hold);

/*
 * From one of our handlers, for a signal that is not ours to handle: do what
 * the program's action says, as the kernel would have: run its handler (with
 * its mask, SA_RESETHAND, SA_NODEFER), ignore the signal, or die of it by the
 * default action (after the hook of ann_signals_set_before_death).
 * Async-signal-safe.
 */
void ann_signals_forward(int sig, siginfo_t *info, void *ucontext);

/*
 * Unblock sig, held for good, in the calling thread's mask (one inherited
 * across exec), keeping it blocked in the program's view.
 */
void ann_signals_unblock(int sig);

/* Die of sig by its default action, after the hook. Async-signal-safe. */
void ann_signals_die(int sig);

/* What to do before the process dies of a signal (write the buffered record). */
void ann_signals_set_before_death(void (*hook)(void));

/* The C library's sigaction, past our interposer (the kernel's truth). */
int ann_real_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);

#endif
