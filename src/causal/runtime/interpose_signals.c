/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Keeping lever's sampling signal (LEVER_SIGNAL, SIGPROF) to ourselves while
 * the program goes on using signals, including SIGPROF (spec coz.md §7.5).
 *
 * While lever owns the signal (rt.enabled):
 *   - sigaction/signal/... on LEVER_SIGNAL install nothing: the request is kept
 *     as "the program's action", reported back through oldact, and run by
 *     signals_forward() when lever's handler receives a SIGPROF that is not
 *     lever's (the program's own setitimer(ITIMER_PROF), say);
 *   - other sigaction calls get LEVER_SIGNAL removed from sa_mask;
 *   - sigprocmask/pthread_sigmask/sigblock/... cannot block LEVER_SIGNAL;
 *   - the sigwait family never waits for LEVER_SIGNAL, and sigsuspend keeps it
 *     deliverable.
 * The program may still "block" LEVER_SIGNAL: each thread keeps the program's
 * view of that bit (program_blocked), reports it back in old masks, and a
 * forwarded signal that arrives while the program blocks it waits in the
 * thread (one, like any standard signal) until the program unblocks it, or is
 * returned by a sigwait that asks for it. A new thread inherits its creator's
 * view only if pthread_create passes it on (signals_creator_view and
 * signals_inherit_view); otherwise it starts "unblocked".
 *
 * When lever does not own it (runtime idle, e.g. an unfollowed child), every
 * call passes through, but the program's SIGPROF action is still recorded so
 * that it can be forwarded if lever takes the signal later.
 *
 * The sigwait family and sigsuspend are blocking calls (paper Table 2):
 * pre_block before, post_block after. A signal wakes us "from another thread"
 * only if it was sent by this process (si_code <= 0, si_pid == getpid()).
 * sigsuspend cannot tell who sent the signal whose handler ended it, so it
 * never skips (post_block(false)): the thread pays what accumulated.
 *
 * lever's handler interrupts these waits with EINTR. Without lever the call
 * ends with EINTR only after one of the program's handlers ran on the thread,
 * which the handler wrapper counts (handler_runs, below): if none ran during
 * the call we wait again (with the remaining time for sigtimedwait);
 * otherwise EINTR is returned as usual (issue 14). The same holds for
 * nanosleep, clock_nanosleep, usleep and sleep, which no SA_RESTART restarts:
 * they sleep on for what is left (not blocking calls: a sleeping thread pays
 * its pauses after it wakes, as Coz's).
 *
 * The stored action is read in signal context, so it is published with a
 * sequence lock; writers hold a spinlock with all signals blocked, so a
 * handler never waits for a writer on its own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/base.h"
#include "causal/runtime/runtime.h"

#define KERNEL_SIGSET_SIZE (_NSIG / 8)
#define MASK_WORDS	   (sizeof(sigset_t) / sizeof(unsigned long))

#define CALLER() __builtin_return_address(0)

/* Hides a pointer's provenance so a NULL check survives glibc's nonnull attributes. */
#define LAUNDER(p)                                                                                 \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		__asm__("" : "+r"(_p));                                                            \
		_p;                                                                                \
	})

REAL(sigaction, "GLIBC_2.2.5")
REAL(sigprocmask, "GLIBC_2.2.5")
REAL(pthread_sigmask, "GLIBC_2.32")
REAL(sigtimedwait, "GLIBC_2.2.5")
REAL(sigsuspend, "GLIBC_2.2.5")
REAL(sigpending, "GLIBC_2.2.5")
REAL(nanosleep, "GLIBC_2.2.5")
REAL(clock_nanosleep, "GLIBC_2.17")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
REAL(siginterrupt, "GLIBC_2.2.5")
#pragma GCC diagnostic pop

static void program_action_after_fork(void);

__attribute__((constructor)) static void interpose_signals_resolve(void)
{
	pthread_atfork(NULL, NULL, program_action_after_fork);
	(void)real_sigaction();
	(void)real_sigprocmask();
	(void)real_pthread_sigmask();
	(void)real_sigtimedwait();
	(void)real_sigsuspend();
	(void)real_sigpending();
	(void)real_nanosleep();
	(void)real_clock_nanosleep();
	(void)real_siginterrupt();
}

static bool lever_owns_signal(void)
{
	return atomic_load_explicit(&rt.enabled, memory_order_acquire) != 0;
}

static long raw_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, KERNEL_SIGSET_SIZE);
}

/* ---- the program's action for LEVER_SIGNAL ---- */

static struct {
	atomic_flag lock;
	_Atomic unsigned seq;
	_Atomic uintptr_t handler; /* sa_handler or sa_sigaction; SIG_DFL at start */
	_Atomic int flags;
	_Atomic unsigned long mask[MASK_WORDS];
} program_action = {.lock = ATOMIC_FLAG_INIT};

/* Signals the program asked siginterrupt() to interrupt system calls. */
static _Atomic uint64_t program_interrupting;

static uint64_t sig_bit(int sig)
{
	return sig >= 1 && sig <= 64 ? 1ULL << (sig - 1) : 0;
}

static bool is_function(uintptr_t handler)
{
	return handler != (uintptr_t)SIG_DFL && handler != (uintptr_t)SIG_IGN &&
	       handler != (uintptr_t)SIG_ERR;
}

/*
 * Knowing whether one of the program's handlers ran on this thread (issue 14):
 * after EINTR, a wait is the program's to end only if one did. Every handler
 * function the program installs for a signal other than LEVER_SIGNAL is
 * installed as program_handler_wrapper (SA_SIGINFO added; its flags and mask
 * otherwise kept, so SA_RESTART, SA_NODEFER, SA_ONSTACK and SA_RESETHAND act
 * as asked), which counts the run in handler_runs and calls the program's
 * function. oldact never shows the wrapper: it is translated back to the
 * program's function and SA_SIGINFO bit. The forwarded handler for
 * LEVER_SIGNAL counts in run_program_action.
 *
 * program_handlers[sig] holds the function with the program's SA_SIGINFO in
 * bit 63 (user addresses on x86-64 never use it), in one atomic word so that
 * the wrapper reads a consistent pair in signal context.
 */
static __thread volatile unsigned long handler_runs __attribute__((tls_model("initial-exec")));

#define HANDLER_SIGINFO (1ULL << 63)
_Static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "a handler fits in a table word");

static _Atomic uint64_t program_handlers[NSIG];
/* Serializes installers, so that oldact is translated with the entry the kernel's action had. */
static atomic_flag program_handlers_lock = ATOMIC_FLAG_INIT;

unsigned long signals_handler_runs(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	return handler_runs;
}

static void count_handler_run(void)
{
	handler_runs = handler_runs + 1;
	atomic_signal_fence(memory_order_seq_cst);
}

static void program_handler_wrapper(int sig, siginfo_t *info, void *uctx)
{
	uint64_t entry = 0;

	count_handler_run();
	if (sig > 0 && sig < NSIG)
		entry = atomic_load_explicit(&program_handlers[sig], memory_order_acquire);
	if (!is_function((uintptr_t)(entry & ~HANDLER_SIGINFO)))
		return; /* never filled: the kernel did not get the wrapper from us */
	if (entry & HANDLER_SIGINFO)
		((void (*)(int, siginfo_t *, void *))(uintptr_t)(entry & ~HANDLER_SIGINFO))(
		    sig, info, uctx);
	else
		((void (*)(int))(uintptr_t)entry)(sig);
}

static uintptr_t action_handler(const struct sigaction *act)
{
	return (act->sa_flags & SA_SIGINFO) ? (uintptr_t)act->sa_sigaction
					    : (uintptr_t)act->sa_handler;
}

static uint64_t handler_entry(const struct sigaction *act)
{
	return (uint64_t)action_handler(act) | ((act->sa_flags & SA_SIGINFO) ? HANDLER_SIGINFO : 0);
}

/* What the kernel gets for the program's act: the wrapper in place of a function. */
static bool wrap_action(int sig, struct sigaction *act)
{
	if (sig == LEVER_SIGNAL || sig < 1 || sig >= NSIG || !is_function(action_handler(act)))
		return false;
	act->sa_sigaction = program_handler_wrapper;
	act->sa_flags |= SA_SIGINFO;
	return true;
}

/* An action read from the kernel, as the program installed it (entry: the table's word). */
static void unwrap_action(struct sigaction *act, uint64_t entry)
{
	if (action_handler(act) != (uintptr_t)program_handler_wrapper)
		return;
	act->sa_flags &= ~SA_SIGINFO;
	if (entry & HANDLER_SIGINFO) {
		act->sa_flags |= SA_SIGINFO;
		act->sa_sigaction =
		    (void (*)(int, siginfo_t *, void *))(uintptr_t)(entry & ~HANDLER_SIGINFO);
	} else {
		act->sa_handler = (void (*)(int))(uintptr_t)entry;
	}
}

static void program_action_read(struct sigaction *out)
{
	unsigned s1, s2;
	uintptr_t h;
	int flags;

	memset(out, 0, sizeof(*out));
	for (;;) {
		s1 = atomic_load_explicit(&program_action.seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		h = atomic_load_explicit(&program_action.handler, memory_order_relaxed);
		flags = atomic_load_explicit(&program_action.flags, memory_order_relaxed);
		for (size_t i = 0; i < MASK_WORDS; i++)
			((unsigned long *)&out->sa_mask)[i] =
			    atomic_load_explicit(&program_action.mask[i], memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&program_action.seq, memory_order_relaxed);
		if (s1 == s2)
			break;
	}
	out->sa_flags = flags;
	if (flags & SA_SIGINFO)
		out->sa_sigaction = (void (*)(int, siginfo_t *, void *))h;
	else
		out->sa_handler = (void (*)(int))h;
}

/* Writers block every signal on their thread so no handler there waits for them. */
static void program_action_write(uintptr_t handler, int flags, const sigset_t *mask)
{
	sigset_t all, old;

	sigfillset(&all);
	raw_sigprocmask(SIG_SETMASK, &all, &old);
	while (atomic_flag_test_and_set_explicit(&program_action.lock, memory_order_acquire))
		;
	atomic_fetch_add_explicit(&program_action.seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&program_action.handler, handler, memory_order_relaxed);
	atomic_store_explicit(&program_action.flags, flags, memory_order_relaxed);
	for (size_t i = 0; i < MASK_WORDS; i++)
		atomic_store_explicit(&program_action.mask[i],
				      mask ? ((const unsigned long *)mask)[i] : 0,
				      memory_order_relaxed);
	atomic_fetch_add_explicit(&program_action.seq, 1, memory_order_release);
	atomic_flag_clear_explicit(&program_action.lock, memory_order_release);
	raw_sigprocmask(SIG_SETMASK, &old, NULL);
}

static void program_action_store(const struct sigaction *act)
{
	uintptr_t h = (act->sa_flags & SA_SIGINFO) ? (uintptr_t)act->sa_sigaction
						   : (uintptr_t)act->sa_handler;

	program_action_write(h, act->sa_flags, &act->sa_mask);
}

/* A writer on another thread may have been cut off by fork: its lock and sequence stay behind. */
static void program_action_after_fork(void)
{
	if (atomic_load(&program_action.seq) & 1)
		atomic_fetch_add(&program_action.seq, 1);
	atomic_flag_clear(&program_action.lock);
	atomic_flag_clear(&program_handlers_lock);
}

/* ---- interface to the rest of the runtime ---- */

void signals_protect_set(sigset_t *set)
{
	sigdelset(set, LEVER_SIGNAL);
}

bool signals_is_ours(int sig)
{
	return sig == LEVER_SIGNAL;
}

/* The program's view of LEVER_SIGNAL in this thread's mask, and a signal it holds back. */
static __thread volatile sig_atomic_t program_blocked __attribute__((tls_model("initial-exec")));
static __thread volatile sig_atomic_t forward_pending __attribute__((tls_model("initial-exec")));
static __thread siginfo_t forward_info __attribute__((tls_model("initial-exec")));

/* What the default action of our signal does: terminate, as without lever. */
static void default_action(int sig)
{
	struct {
		uintptr_t handler;
		unsigned long flags;
		uintptr_t restorer;
		unsigned long mask;
	} dfl = {0};
	sigset_t unblock;

	syscall(SYS_rt_sigaction, sig, &dfl, NULL, KERNEL_SIGSET_SIZE);
	sigemptyset(&unblock);
	sigaddset(&unblock, sig);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	raw_sigprocmask(SIG_UNBLOCK, &unblock, NULL);
}

/*
 * Runs the program's action for sig as the kernel would have: with its
 * sa_mask (and sig, unless SA_NODEFER) blocked, resetting it first if
 * SA_RESETHAND. Async-signal-safe.
 */
static void run_program_action(int sig, siginfo_t *info, void *uctx)
{
	struct sigaction act;
	sigset_t block, old;
	uintptr_t h;
	int saved_errno = errno;

	program_action_read(&act);
	h = (act.sa_flags & SA_SIGINFO) ? (uintptr_t)act.sa_sigaction : (uintptr_t)act.sa_handler;
	if (h == (uintptr_t)SIG_IGN)
		return;
	if (h == (uintptr_t)SIG_DFL) {
		default_action(sig);
		errno = saved_errno;
		return;
	}
	if (act.sa_flags & SA_RESETHAND)
		program_action_write((uintptr_t)SIG_DFL, 0, NULL);
	count_handler_run();
	block = act.sa_mask;
	if (!(act.sa_flags & SA_NODEFER))
		sigaddset(&block, sig);
	raw_sigprocmask(SIG_BLOCK, &block, &old);
	errno = saved_errno;
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, info, uctx);
	else
		act.sa_handler(sig);
	saved_errno = errno;
	raw_sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
}

/*
 * A process-directed SIGPROF of the program (kill, sigqueue, ITIMER_PROF,
 * a POSIX timer) that no thread could take when it came: bare, the kernel
 * keeps it pending for the process until a thread unblocks it or waits for
 * it. Under lever it lands in whichever thread runs (all keep it
 * deliverable), so a thread whose program view blocks it parks it here and
 * pokes a thread that would have taken it (one that waits for it, else one
 * that does not block it). One at most, as the kernel keeps one.
 */
enum { SLOT_EMPTY, SLOT_BUSY, SLOT_FULL };
static _Atomic int process_slot = SLOT_EMPTY;
static siginfo_t process_info;

static bool process_slot_put(const siginfo_t *info)
{
	int expected = SLOT_EMPTY;

	if (!atomic_compare_exchange_strong(&process_slot, &expected, SLOT_BUSY))
		return false; /* one is pending already: they merge */
	process_info = *info;
	atomic_store(&process_slot, SLOT_FULL);
	return true;
}

static bool process_slot_take(siginfo_t *info)
{
	int expected = SLOT_FULL;

	if (!atomic_compare_exchange_strong(&process_slot, &expected, SLOT_BUSY))
		return false;
	if (info)
		*info = process_info;
	atomic_store(&process_slot, SLOT_EMPTY);
	return true;
}

/* Whether this thread waits for the program's SIGPROF in the sigwait family right now. */
static __thread volatile sig_atomic_t waiting_for_ours __attribute__((tls_model("initial-exec")));

/* Publishes the calling thread's view for the threads that look for a taker. */
static void publish_view(void)
{
	struct thread_state *t = thread_self();

	if (!t)
		return;
	atomic_store(&t->sig_view_blocked, program_blocked != 0);
	atomic_store(&t->sig_waiting, waiting_for_ours != 0);
}

struct taker {
	struct thread_state *self, *waiter, *unblocked;
};

static void find_taker(struct thread_state *t, void *ctx)
{
	struct taker *k = ctx;

	if (t == k->self)
		return;
	if (!k->waiter && atomic_load(&t->sig_waiting))
		k->waiter = t;
	else if (!k->unblocked && !atomic_load(&t->sig_view_blocked))
		k->unblocked = t;
}

/* Pokes the thread the kernel would have given the parked signal to, if any. */
static void poke_taker(void)
{
	struct taker k = {.self = thread_self()};

	threads_foreach(find_taker, &k);
	if (k.waiter)
		sampler_poke(k.waiter);
	else if (k.unblocked)
		sampler_poke(k.unblocked);
}

/* Whether the signal was sent to this thread (tgkill, pthread_kill), not to the process. */
static bool thread_directed(const siginfo_t *info)
{
	return info->si_code == SI_TKILL;
}

/* Called by lever's handler for a LEVER_SIGNAL that lever did not send. */
void signals_forward(int sig, siginfo_t *info, void *uctx)
{
	if (sig != LEVER_SIGNAL)
		return;
	if (!program_blocked) {
		run_program_action(sig, info, uctx);
		return;
	}
	if (!waiting_for_ours && !thread_directed(info)) {
		/* parked first, then a taker is looked for: see signals_poked */
		if (process_slot_put(info))
			poke_taker();
		return;
	}
	/* Held back until the program unblocks it; standard signals do not queue. */
	if (!forward_pending) {
		forward_info = *info;
		atomic_signal_fence(memory_order_seq_cst);
		forward_pending = 1;
	}
}

/*
 * lever's handler on a poke: this thread was chosen to take a parked
 * process-directed signal. If it still would (it waits for the signal, or
 * its view lets it through), take it as the kernel would have delivered it.
 */
void signals_poked(void *uctx)
{
	siginfo_t info;

	if ((program_blocked && !waiting_for_ours) || !process_slot_take(&info))
		return;
	signals_forward(LEVER_SIGNAL, &info, uctx);
}

/*
 * Takes the held-back signal, this thread's or the process's, if any. Call
 * with program_blocked set (no forward can race).
 */
static bool take_pending(siginfo_t *info)
{
	if (!forward_pending)
		return process_slot_take(info);
	if (info)
		*info = forward_info;
	atomic_signal_fence(memory_order_seq_cst);
	forward_pending = 0;
	return true;
}

/*
 * Sets the program's view; when it becomes unblocked, delivers what was held
 * back. Returns whether it delivered one.
 */
static bool set_program_blocked(bool blocked)
{
	siginfo_t info;
	ucontext_t uc;

	atomic_signal_fence(memory_order_seq_cst);
	program_blocked = blocked;
	atomic_signal_fence(memory_order_seq_cst);
	/* published before the process slot is looked at: a signal parked later pokes us */
	publish_view();
	/*
	 * Once the view is "unblocked" signals_forward no longer touches the
	 * pending slot, so reading it here cannot race with the handler.
	 */
	if (blocked)
		return false;
	if (forward_pending) {
		info = forward_info;
		forward_pending = 0;
	} else if (!process_slot_take(&info)) {
		return false;
	}
	getcontext(&uc);
	run_program_action(LEVER_SIGNAL, &info, &uc);
	return true;
}

/*
 * For pthread_create: a new thread inherits its creator's mask, so it should
 * inherit the program's view of LEVER_SIGNAL too. The creator calls
 * signals_creator_view(), the new thread signals_inherit_view() first thing.
 */
bool signals_creator_view(void)
{
	return program_blocked;
}

void signals_inherit_view(bool blocked)
{
	program_blocked = blocked;
	publish_view();
}

/* For a thread that registers: others look its view up in its thread_state. */
void signals_publish_view(void)
{
	publish_view();
}

/* sigpending: the program's SIGPROF held back for this thread or the process, never lever's. */
LEVER_EXPORT int sigpending(sigset_t *set)
{
	__typeof__(&sigpending) real = real_sigpending();
	const void *ra = CALLER();
	int r;

	r = real ? real(set) : (int)syscall(SYS_rt_sigpending, set, KERNEL_SIGSET_SIZE);
	if (r != 0 || address_in_lever(ra) || !lever_owns_signal())
		return r;
	sigdelset(set, LEVER_SIGNAL);
	if (forward_pending || atomic_load(&process_slot) == SLOT_FULL)
		sigaddset(set, LEVER_SIGNAL);
	return 0;
}

/* ---- installing handlers ---- */

/*
 * sigaction for a signal other than LEVER_SIGNAL: act (a copy, may be NULL)
 * goes in with program_handler_wrapper in place of a function, and oldact
 * comes back with the program's own. The table changes with every signal
 * blocked on this thread (the wrapper never runs here between the two, and
 * never spins on the lock).
 */
static int install_wrapped(int (*real)(int, const struct sigaction *, struct sigaction *), int sig,
			   struct sigaction *act, struct sigaction *oldact)
{
	bool valid = sig >= 1 && sig < NSIG;
	uint64_t previous = 0, entry = 0;
	bool wrapped = false;
	sigset_t all, mask;
	int r, saved;

	if (act) {
		entry = handler_entry(act);
		wrapped = wrap_action(sig, act);
	}
	sigfillset(&all);
	raw_sigprocmask(SIG_SETMASK, &all, &mask);
	while (atomic_flag_test_and_set_explicit(&program_handlers_lock, memory_order_acquire))
		;
	if (valid)
		previous = atomic_load(&program_handlers[sig]);
	if (wrapped)
		atomic_store(&program_handlers[sig], entry);
	r = real(sig, act, oldact);
	saved = errno;
	if (r != 0 && wrapped)
		atomic_store(&program_handlers[sig], previous);
	atomic_flag_clear_explicit(&program_handlers_lock, memory_order_release);
	raw_sigprocmask(SIG_SETMASK, &mask, NULL);
	if (r == 0 && oldact)
		unwrap_action(oldact, previous);
	errno = saved;
	return r;
}

static int do_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact,
			const void *ra)
{
	__typeof__(&sigaction) real = real_sigaction();
	struct sigaction copy, old;
	int r;

	if (!real) {
		errno = EAGAIN;
		return -1;
	}
	if (address_in_lever(ra))
		return real(sig, act, oldact);
	/* act and oldact may be the same struct: work on a copy of act. */
	if (act) {
		copy = *act;
		act = &copy;
	}
	if (sig == LEVER_SIGNAL) {
		program_action_read(&old);
		if (lever_owns_signal()) {
			if (act)
				program_action_store(act);
			if (oldact)
				*oldact = old;
			return 0;
		}
		/* Not ours now: install, but remember it in case we take the signal later. */
		r = real(sig, act, oldact);
		if (r == 0 && act)
			program_action_store(act);
		if (r == 0 && oldact) {
			uintptr_t h = (oldact->sa_flags & SA_SIGINFO)
					  ? (uintptr_t)oldact->sa_sigaction
					  : (uintptr_t)oldact->sa_handler;
			if (address_in_lever((const void *)h))
				*oldact = old; /* lever's handler is still there: hide it */
		}
		return r;
	}
	if (act && lever_owns_signal())
		sigdelset(&copy.sa_mask, LEVER_SIGNAL);
	return install_wrapped(real, sig, act ? &copy : NULL, oldact);
}

LEVER_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	return do_sigaction(sig, act, oldact, CALLER());
}

LEVER_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	return do_sigaction(sig, act, oldact, CALLER());
}

/* signal() with BSD semantics (glibc's default), or System V ones. */
static sighandler_t install_handler(int sig, sighandler_t handler, bool sysv, const void *ra)
{
	struct sigaction act, old;

	if (signal_compat_action(sig, handler, sysv,
				 atomic_load(&program_interrupting) & sig_bit(sig), &act) ||
	    do_sigaction(sig, &act, &old, ra) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

LEVER_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, false, CALLER());
}

LEVER_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, false, CALLER());
}

LEVER_EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, false, CALLER());
}

LEVER_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, true, CALLER());
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
LEVER_EXPORT int siginterrupt(int sig, int flag)
{
	__typeof__(&siginterrupt) real = real_siginterrupt();
	struct sigaction act;

	if (sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return -1;
	}
	if (flag)
		atomic_fetch_or(&program_interrupting, sig_bit(sig));
	else
		atomic_fetch_and(&program_interrupting, ~sig_bit(sig));
	if (sig == LEVER_SIGNAL || !real) {
		/* Change SA_RESTART of the (stored, for our signal) action. */
		if (do_sigaction(sig, NULL, &act, CALLER()) < 0)
			return -1;
		if (flag)
			act.sa_flags &= ~SA_RESTART;
		else
			act.sa_flags |= SA_RESTART;
		return do_sigaction(sig, &act, NULL, CALLER());
	}
	return real(sig, flag);
}
#pragma GCC diagnostic pop

/* ---- masks ---- */

/*
 * Applies a mask change for the program. Returns 0 or an error number. While
 * lever owns its signal, the kernel mask never gets it; the program's view is
 * kept in program_blocked and reported in old.
 */
static int change_mask(int how, const sigset_t *set, sigset_t *old, const void *ra, bool per_thread)
{
	__typeof__(&pthread_sigmask) real_pt = real_pthread_sigmask();
	__typeof__(&sigprocmask) real_sp = real_sigprocmask();
	bool owned = !address_in_lever(ra) && lever_owns_signal();
	bool was_blocked = program_blocked;
	int want = -1; /* new view: -1 unchanged, 0 unblocked, 1 blocked */
	sigset_t copy;
	int saved = errno;
	int r;

	set = LAUNDER(set);
	if (set && !address_in_lever(ra)) {
		bool ours = sigismember(set, LEVER_SIGNAL) == 1;

		if (ours && (how == SIG_BLOCK || how == SIG_SETMASK))
			want = 1;
		else if ((ours && how == SIG_UNBLOCK) || (!ours && how == SIG_SETMASK))
			want = 0;
		if (ours && owned) {
			copy = *set;
			sigdelset(&copy, LEVER_SIGNAL);
			set = &copy;
		}
	}
	if (per_thread && real_pt) {
		r = real_pt(how, set, old);
	} else if (!per_thread && real_sp) {
		r = real_sp(how, set, old) < 0 ? errno : 0;
	} else {
		r = raw_sigprocmask(how, set, old) < 0 ? errno : 0;
	}
	errno = saved;
	if (r != 0)
		return r;
	if (old && owned && was_blocked)
		sigaddset(old, LEVER_SIGNAL);
	if (want >= 0 && want != was_blocked)
		(void)set_program_blocked(want);
	return 0;
}

static int do_sigprocmask(int how, const sigset_t *set, sigset_t *old, const void *ra)
{
	int r = change_mask(how, set, old, ra, false);

	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

LEVER_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return do_sigprocmask(how, set, old, CALLER());
}

LEVER_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return change_mask(how, set, old, CALLER(), true);
}

/* The BSD interface: an int mask where bit sig-1 stands for sig. */
static int bsd_mask(int how, int mask, const void *ra)
{
	sigset_t set, old;
	int result = 0;

	sigemptyset(&set);
	for (int sig = 1; sig <= 32; sig++)
		if (mask & (1u << (sig - 1)))
			sigaddset(&set, sig);
	if (do_sigprocmask(how, &set, &old, ra) < 0)
		return -1;
	for (int sig = 1; sig <= 32; sig++)
		if (sigismember(&old, sig) == 1)
			result |= 1u << (sig - 1);
	return result;
}

LEVER_EXPORT int sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask, CALLER());
}

LEVER_EXPORT int sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask, CALLER());
}

/* ---- the System V interface ---- */

LEVER_EXPORT int sighold(int sig)
{
	sigset_t set;

	if (sigemptyset(&set) < 0 || sigaddset(&set, sig) < 0)
		return -1;
	return do_sigprocmask(SIG_BLOCK, &set, NULL, CALLER());
}

LEVER_EXPORT int sigignore(int sig)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_IGN;
	sigemptyset(&act.sa_mask);
	return do_sigaction(sig, &act, NULL, CALLER());
}

LEVER_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	const void *ra = CALLER();
	struct sigaction act, old;
	sigset_t set, prev;

	if (sig < 1 || sig >= NSIG || disp == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (disp == SIG_HOLD) {
		if (do_sigprocmask(SIG_BLOCK, &set, &prev, ra) < 0 ||
		    do_sigaction(sig, NULL, &old, ra) < 0)
			return SIG_ERR;
	} else {
		memset(&act, 0, sizeof(act));
		act.sa_handler = disp;
		sigemptyset(&act.sa_mask);
		if (do_sigaction(sig, &act, &old, ra) < 0 ||
		    do_sigprocmask(SIG_UNBLOCK, &set, &prev, ra) < 0)
			return SIG_ERR;
	}
	return sigismember(&prev, sig) == 1 ? SIG_HOLD : old.sa_handler;
}

/* ---- waiting for signals: blocking calls ---- */

static int64_t timespec_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * (int64_t)NSEC_PER_SEC + ts->tv_nsec;
}

static void stop_waiting_for_ours(void)
{
	waiting_for_ours = 0;
	publish_view();
}

static int timed_wait_signal(const sigset_t *set, siginfo_t *info, const struct timespec *timeout,
			     const void *ra)
{
	__typeof__(&sigtimedwait) real = real_sigtimedwait();
	bool owned = !address_in_lever(ra) && lever_owns_signal();
	bool wants_ours = false;
	sigset_t copy;
	siginfo_t local;
	struct timespec left, *tsp = NULL;
	int64_t deadline = 0;
	bool armed;
	int r;

	if (!info)
		info = &local;
	set = LAUNDER(set);
	if (set && owned && sigismember(set, LEVER_SIGNAL) == 1) {
		/* The program waits for its own SIGPROF: one may be held back already. */
		wants_ours = program_blocked;
		if (wants_ours) {
			/* published before looking: a signal parked later pokes us */
			waiting_for_ours = 1;
			publish_view();
			if (take_pending(info)) {
				stop_waiting_for_ours();
				return LEVER_SIGNAL;
			}
		}
		copy = *set;
		sigdelset(&copy, LEVER_SIGNAL);
		set = &copy;
	}
	if (timeout) {
		deadline = (int64_t)time_monotonic_ns() + timespec_ns(timeout);
		left = *timeout;
		tsp = &left;
	}
	armed = delays_block_begin(ra);
	for (;;) {
		unsigned long runs = signals_handler_runs();

		if (real)
			r = real(set, info, tsp);
		else
			r = (int)syscall(SYS_rt_sigtimedwait, set, info, tsp, KERNEL_SIGSET_SIZE);
		if (r >= 0 || errno != EINTR || !owned)
			break;
		if (wants_ours && take_pending(info)) {
			r = LEVER_SIGNAL;
			break;
		}
		if (signals_handler_runs() != runs)
			break; /* one of the program's handlers ran: the EINTR is its */
		if (tsp) {
			int64_t rest = deadline - (int64_t)time_monotonic_ns();

			if (rest <= 0) {
				errno = EAGAIN;
				break;
			}
			left.tv_sec = rest / (int64_t)NSEC_PER_SEC;
			left.tv_nsec = rest % (int64_t)NSEC_PER_SEC;
		}
	}
	delays_block_end(armed, r > 0 && info->si_code <= 0 && info->si_pid == getpid());
	if (wants_ours)
		stop_waiting_for_ours();
	return r;
}

LEVER_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return timed_wait_signal(set, info, NULL, CALLER());
}

LEVER_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	return timed_wait_signal(set, info, timeout, CALLER());
}

/* sigwait never fails with EINTR: wait again, as glibc does. */
LEVER_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	const void *ra = CALLER();
	siginfo_t info;
	int saved = errno;
	int r;

	do
		r = timed_wait_signal(set, &info, NULL, ra);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = errno;
		errno = saved;
		return r;
	}
	*sig = r;
	errno = saved;
	return 0;
}

LEVER_EXPORT int sigsuspend(const sigset_t *mask)
{
	__typeof__(&sigsuspend) real = real_sigsuspend();
	const void *ra = CALLER();
	bool owned = !address_in_lever(ra) && lever_owns_signal();
	bool view = program_blocked;
	const sigset_t *asked;
	sigset_t copy;
	bool armed;
	int r;

	asked = mask = LAUNDER(mask);
	if (!mask || !owned)
		return real ? real(mask)
			    : (int)syscall(SYS_rt_sigsuspend, mask, KERNEL_SIGSET_SIZE);
	copy = *mask;
	sigdelset(&copy, LEVER_SIGNAL);
	mask = &copy;
	/* While suspended the program's view is that of the mask it passed. */
	if (set_program_blocked(sigismember(asked, LEVER_SIGNAL) == 1)) {
		/* A held-back SIGPROF was just delivered: that ends the wait. */
		set_program_blocked(view);
		errno = EINTR;
		return -1;
	}
	armed = delays_block_begin(ra);
	for (;;) {
		unsigned long runs = signals_handler_runs();

		if (real)
			r = real(mask);
		else
			r = (int)syscall(SYS_rt_sigsuspend, mask, KERNEL_SIGSET_SIZE);
		/* It returns only after a handler ran; if none of the program's did, ours did. */
		if (errno != EINTR || signals_handler_runs() != runs)
			break;
	}
	delays_block_end(armed, false);
	set_program_blocked(view);
	return r;
}

/* ---- sleeping: lever's signals do not end the program's sleeps ---- */

/*
 * After a call made from ra ended with EINTR: was it lever's signal alone
 * (no handler of the program ran on this thread since runs_before was read,
 * just before the call)? Then the program, which would not have been
 * interrupted bare, waits on. (A pause paid in lever's handler then adds to
 * a sleep as it would to work; cut short, AMP's sleeping consumers finished
 * their tasks early and the prediction read high.) A mask passed with the
 * call (ppoll, pselect, epoll_pwait, sigsuspend) needs nothing more: a
 * signal it let through ran its handler through the wrapper, which counted.
 *
 * A program handler that ran between the reading and the call, then lever's
 * signal ending the call: the EINTR is returned, though bare the call would
 * have blocked on. The window is a few instructions; no signal is lost.
 */
bool signals_only_lever_interrupted(const void *ra, unsigned long runs_before)
{
	if (address_in_lever(ra) || !lever_owns_signal())
		return false;
	return signals_handler_runs() == runs_before;
}

static int sleep_relative(const struct timespec *req, struct timespec *rem, const void *ra)
{
	__typeof__(&nanosleep) real = real_nanosleep();
	struct timespec want, left = {0, 0};
	int saved = errno;
	int r;

	req = LAUNDER(req);
	if (!real || !req)
		return real ? real(req, rem) : (int)syscall(SYS_nanosleep, req, rem);
	want = *req;
	for (;;) {
		unsigned long runs = signals_handler_runs();

		r = real(&want, &left);
		if (r == 0 || errno != EINTR || !signals_only_lever_interrupted(ra, runs))
			break;
		want = left;
		errno = saved;
	}
	if (r != 0 && errno == EINTR && rem)
		*rem = left;
	return r;
}

LEVER_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return sleep_relative(req, rem, CALLER());
}

/* Returns the error number, as clock_nanosleep does; errno is left alone. */
LEVER_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
				 struct timespec *rem)
{
	__typeof__(&clock_nanosleep) real = real_clock_nanosleep();
	const void *ra = CALLER();
	struct timespec want, left = {0, 0};
	int saved = errno;
	int r;

	req = LAUNDER(req);
	if (!real)
		return ENOSYS;
	if (!req)
		return real(clock, flags, req, rem);
	want = *req;
	for (;;) {
		unsigned long runs = signals_handler_runs();

		r = real(clock, flags, &want, &left);
		if (r != EINTR || !signals_only_lever_interrupted(ra, runs))
			break;
		/* relative: what is left; absolute: the same deadline */
		if (!(flags & TIMER_ABSTIME))
			want = left;
	}
	if (r == EINTR && rem && !(flags & TIMER_ABSTIME))
		*rem = left;
	errno = saved;
	return r;
}

/* glibc's usleep and sleep call nanosleep internally, past our interposer. */
LEVER_EXPORT int usleep(useconds_t us)
{
	struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};

	return sleep_relative(&ts, NULL, CALLER());
}

/* The whole seconds not slept, as glibc's sleep. */
LEVER_EXPORT unsigned int sleep(unsigned int seconds)
{
	struct timespec ts = {(time_t)seconds, 0}, left = {0, 0};
	int saved = errno;

	if (sleep_relative(&ts, &left, CALLER()) == 0) {
		errno = saved;
		return 0;
	}
	return (unsigned int)left.tv_sec;
}
