/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signal transparency of liblever-annotate.so (spec/freud.md §7.3 item 5:
 * safe reads recovered from SIGSEGV/SIGBUS; §7.5: the runtime never changes
 * what the program computes). doc/annotate-record.md "Signals".
 *
 * The runtime takes two kinds of signals (signals.h):
 *  - SIGSEGV and SIGBUS for good, while feature programs run: a direct copy
 *    of the safe reads that faults is recovered by our handler, which must
 *    therefore stay in the kernel whatever the program installs;
 *  - the fatal signals whose action is the default, to write the buffered
 *    record before the process dies; the program's first other action
 *    simply replaces ours.
 * The program must not see either. So sigaction (and __sigaction, signal,
 * bsd_signal, sysv_signal, siginterrupt) on a signal we hold keeps the program's action
 * as its view: oldact reports it, exactly as the C library would have
 * (SA_RESTORER and its restorer included), and ann_signals_forward runs it
 * when our handler gets a signal that is not ours to handle: the program's
 * handler with its mask, SA_NODEFER and SA_RESETHAND; SIG_IGN (a fault the
 * kernel raised cannot be ignored: it kills, as the kernel would); SIG_DFL
 * (write the record, then die of the signal).
 *
 * A fault with SIGSEGV blocked kills the process (the kernel forces the
 * default action), so a feature read in a thread whose mask blocks SIGSEGV
 * would kill the program. While we hold SIGSEGV/SIGBUS for good, no mask
 * the program sets blocks them: sigprocmask, pthread_sigmask and
 * sigsuspend get them removed, and sigaction's sa_mask too; each thread
 * keeps the program's view of the two bits and reports it in old masks, and
 * a sa_mask reads back as given. What the program can still tell: a kill()
 * of SIGSEGV while it "blocks" it is delivered at once; the mask inside its
 * handlers (SIGSEGV not blocked there); sigset, sigignore, sigblock,
 * sighold and signal masks passed to ppoll/pselect/epoll_pwait are not
 * interposed (the C library calls its internal sigaction and sigprocmask
 * for them).
 *
 * The views are read in signal context, so each is published with a
 * sequence count; writers hold a spinlock with every signal blocked, so a
 * handler never waits for a writer on its own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "annotate/runtime/metrics_internal.h"
#include "annotate/runtime/signals.h"
#include "base/base.h"

#define KERNEL_SIGSET_SIZE (_NSIG / 8)
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* the flag glibc adds to every action on x86-64 */
#endif

/* Hides a pointer's provenance so that a NULL check survives glibc's nonnull attributes. */
#define LAUNDER(p)                                                                                 \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		__asm__("" : "+r"(_p));                                                            \
		_p;                                                                                \
	})

enum { HELD_NONE, HELD_UNTIL_PROGRAM, HELD_ALWAYS };

/* The program's action for a signal we hold, as sigaction would report it. */
struct view {
	_Atomic unsigned seq;
	_Atomic uintptr_t handler;
	_Atomic int flags;
	_Atomic uint64_t mask; /* the kernel keeps signals 1-64 */
	_Atomic uintptr_t restorer;
};

static struct view views[NSIG];
static _Atomic int held[NSIG];
static _Atomic uintptr_t our_handler[NSIG];
/* Per signal: the protected signals taken out of the sa_mask the program gave. */
static _Atomic uint64_t stripped[NSIG];
/* Signals no mask may block: those held for good. */
static _Atomic uint64_t protected_bits;
static atomic_flag writer = ATOMIC_FLAG_INIT;
static void (*before_death)(void);
/* Per thread: the protected signals the program's mask blocks, in its view. */
static ANN_TLS uint64_t view_blocked;

static int (*real_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static int (*real_sigprocmask_fn)(int, const sigset_t *, sigset_t *);
static int (*real_pthread_sigmask_fn)(int, const sigset_t *, sigset_t *);
static int (*real_sigsuspend_fn)(const sigset_t *);

static void resolve(void)
{
	if (!real_sigaction_fn)
		real_sigaction_fn = ann_real_symbol("sigaction", "GLIBC_2.2.5");
	if (!real_sigprocmask_fn)
		real_sigprocmask_fn = ann_real_symbol("sigprocmask", "GLIBC_2.2.5");
	if (!real_pthread_sigmask_fn)
		real_pthread_sigmask_fn = ann_real_symbol("pthread_sigmask", "GLIBC_2.32");
	if (!real_sigsuspend_fn)
		real_sigsuspend_fn = ann_real_symbol("sigsuspend", "GLIBC_2.2.5");
}

static void after_fork_child(void)
{
	atomic_flag_clear(&writer); /* a writer on another thread is gone */
	for (int sig = 1; sig < NSIG; sig++)
		if (atomic_load(&views[sig].seq) & 1)
			atomic_fetch_add(&views[sig].seq, 1);
}

__attribute__((constructor)) static void interpose_signals_init(void)
{
	resolve();
	pthread_atfork(NULL, NULL, after_fork_child);
}

static uint64_t bit(int sig)
{
	return sig >= 1 && sig <= 64 ? 1ull << (sig - 1) : 0;
}

static uint64_t mask_word(const sigset_t *s)
{
	uint64_t w;

	memcpy(&w, s, sizeof(w));
	return w;
}

static void set_mask_word(sigset_t *s, uint64_t w)
{
	memcpy(s, &w, sizeof(w));
}

static long raw_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, KERNEL_SIGSET_SIZE);
}

static uintptr_t handler_of(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ? (uintptr_t)a->sa_sigaction : (uintptr_t)a->sa_handler;
}

int ann_real_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	resolve();
	if (!real_sigaction_fn) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction_fn(sig, act, oldact);
}

static void writer_lock(sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	raw_sigprocmask(SIG_SETMASK, &all, saved);
	while (atomic_flag_test_and_set_explicit(&writer, memory_order_acquire))
		;
}

static void writer_unlock(const sigset_t *saved)
{
	atomic_flag_clear_explicit(&writer, memory_order_release);
	raw_sigprocmask(SIG_SETMASK, saved, NULL);
}

/* ------------------------------------------------------------ the views */

static void view_read(int sig, struct sigaction *out)
{
	const struct view *v = &views[sig];
	unsigned s1, s2;
	uintptr_t h, restorer;
	uint64_t mask;
	int flags;

	do {
		s1 = atomic_load_explicit(&v->seq, memory_order_acquire);
		h = atomic_load_explicit(&v->handler, memory_order_relaxed);
		flags = atomic_load_explicit(&v->flags, memory_order_relaxed);
		mask = atomic_load_explicit(&v->mask, memory_order_relaxed);
		restorer = atomic_load_explicit(&v->restorer, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&v->seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);
	/* as glibc fills an oldact: the first mask word only */
	out->sa_flags = flags;
	if (flags & SA_SIGINFO)
		out->sa_sigaction = (void (*)(int, siginfo_t *, void *))h;
	else
		out->sa_handler = (void (*)(int))h;
	set_mask_word(&out->sa_mask, mask);
	out->sa_restorer = (void (*)(void))restorer;
}

/* Under the writer lock. */
static void view_write(int sig, const struct sigaction *a)
{
	struct view *v = &views[sig];

	atomic_fetch_add_explicit(&v->seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&v->handler, handler_of(a), memory_order_relaxed);
	atomic_store_explicit(&v->flags, a->sa_flags, memory_order_relaxed);
	atomic_store_explicit(&v->mask, mask_word(&a->sa_mask), memory_order_relaxed);
	atomic_store_explicit(&v->restorer, (uintptr_t)a->sa_restorer, memory_order_relaxed);
	atomic_fetch_add_explicit(&v->seq, 1, memory_order_release);
}

/* The action the kernel would keep for the program's act, as glibc reports it back. */
static void as_installed(int sig, const struct sigaction *act, struct sigaction *out)
{
	struct sigaction ours;

	*out = *act;
	out->sa_flags |= SA_RESTORER;
	set_mask_word(&out->sa_mask, mask_word(&act->sa_mask) & ~(bit(SIGKILL) | bit(SIGSTOP)));
	/* glibc's restorer, the one it gave our own action */
	if (real_sigaction_fn && real_sigaction_fn(sig, NULL, &ours) == 0)
		out->sa_restorer = ours.sa_restorer;
}

/* ------------------------------------------------------------ the runtime's side */

void ann_signals_set_before_death(void (*hook)(void))
{
	before_death = hook;
}

int ann_signals_take(int sig, void (*handler)(int, siginfo_t *, void *), int flags,
		     enum ann_signal_hold hold)
{
	struct sigaction ours, before;
	sigset_t saved;
	int h, r;

	resolve();
	if (!real_sigaction_fn || sig < 1 || sig >= NSIG)
		return -1;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = handler;
	ours.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&ours.sa_mask);
	writer_lock(&saved);
	r = real_sigaction_fn(sig, &ours, &before);
	if (r == 0) {
		h = atomic_load(&held[sig]);
		/* what was there is the program's, unless it is the handler we left there */
		if (h == HELD_NONE || handler_of(&before) != atomic_load(&our_handler[sig]))
			view_write(sig, &before);
		atomic_store(&our_handler[sig], (uintptr_t)handler);
		if (hold == ANN_SIGNAL_ALWAYS) {
			atomic_store(&held[sig], HELD_ALWAYS);
			atomic_fetch_or(&protected_bits, bit(sig));
		} else if (h != HELD_ALWAYS) {
			atomic_store(&held[sig], HELD_UNTIL_PROGRAM);
		}
	}
	writer_unlock(&saved);
	return r;
}

void ann_signals_unblock(int sig)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, sig);
	if (raw_sigprocmask(SIG_UNBLOCK, &set, &old) == 0 && sigismember(&old, sig))
		view_blocked |= bit(sig); /* the program still sees the mask it inherited */
}

void ann_signals_die(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	if (before_death)
		before_death();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (real_sigaction_fn)
		real_sigaction_fn(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raw_sigprocmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
	/* a fault that raced the kill re-executes and dies of the default action */
}

/* A fault raised by the kernel: ignoring it would re-execute the instruction forever. */
static bool kernel_fault(int sig, const siginfo_t *info)
{
	return info && info->si_code > 0 &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
		sig == SIGTRAP);
}

void ann_signals_forward(int sig, siginfo_t *info, void *ucontext)
{
	struct sigaction a;
	sigset_t block, old;
	uint64_t mask;
	uintptr_t h;
	int saved_errno = errno;

	if (sig < 1 || sig >= NSIG)
		return;
	memset(&a, 0, sizeof(a));
	view_read(sig, &a);
	h = handler_of(&a);
	if (h == (uintptr_t)SIG_IGN && !kernel_fault(sig, info))
		return;
	if (h == (uintptr_t)SIG_IGN || h == (uintptr_t)SIG_DFL) {
		ann_signals_die(sig);
		errno = saved_errno;
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;
		sigset_t saved;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		dfl.sa_flags = SA_RESTORER;
		dfl.sa_restorer = a.sa_restorer;
		writer_lock(&saved);
		view_write(sig, &dfl);
		writer_unlock(&saved);
	}
	mask = mask_word(&a.sa_mask) | ((a.sa_flags & SA_NODEFER) ? 0 : bit(sig));
	sigemptyset(&block);
	set_mask_word(&block, mask & ~atomic_load(&protected_bits));
	raw_sigprocmask(SIG_BLOCK, &block, &old);
	errno = saved_errno;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, info, ucontext);
	else
		a.sa_handler(sig);
	saved_errno = errno;
	raw_sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
}

/* ------------------------------------------------------------ sigaction and signal */

/* Fill the program's oldact as glibc does: handler, flags, the kernel's mask word, restorer. */
static void report_old(struct sigaction *oldact, const struct sigaction *old)
{
	oldact->sa_flags = old->sa_flags;
	oldact->sa_sigaction = old->sa_sigaction;
	set_mask_word(&oldact->sa_mask, mask_word(&old->sa_mask));
	oldact->sa_restorer = old->sa_restorer;
}

static int do_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	struct sigaction copy, old;
	sigset_t saved;
	uint64_t taken = 0;
	int h, r = 0, e;

	resolve();
	if (!real_sigaction_fn) {
		errno = ENOSYS;
		return -1;
	}
	act = LAUNDER(act);
	oldact = LAUNDER(oldact);
	if (sig < 1 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP)
		return real_sigaction_fn(sig, act, oldact);
	/* act and oldact may be the same struct, and either a bad pointer: both are
	   touched outside the writer's section, where every signal is blocked */
	if (act) {
		copy = *act;
		taken = mask_word(&copy.sa_mask) & atomic_load(&protected_bits);
	}
	memset(&old, 0, sizeof(old));
	e = errno;
	writer_lock(&saved);
	h = atomic_load(&held[sig]);
	if (h == HELD_NONE ||
	    (act && h == HELD_UNTIL_PROGRAM && handler_of(&copy) != (uintptr_t)SIG_DFL)) {
		/* not held, or released: the kernel gets the program's action */
		if (act)
			set_mask_word(&copy.sa_mask, mask_word(&copy.sa_mask) & ~taken);
		r = real_sigaction_fn(sig, act ? &copy : NULL, h == HELD_NONE ? &old : NULL);
		e = errno;
		if (r == 0 && h == HELD_NONE)
			set_mask_word(&old.sa_mask,
				      mask_word(&old.sa_mask) | atomic_load(&stripped[sig]));
		if (r == 0 && h != HELD_NONE)
			view_read(sig, &old);
		if (r == 0 && act) {
			atomic_store(&stripped[sig], taken);
			atomic_store(&held[sig], HELD_NONE);
		}
	} else {
		/* held: the program's action is kept as its view, ours stays */
		view_read(sig, &old);
		if (act) {
			struct sigaction installed;

			as_installed(sig, &copy, &installed);
			view_write(sig, &installed);
		}
	}
	writer_unlock(&saved);
	if (r == 0 && oldact)
		report_old(oldact, &old);
	errno = e;
	return r;
}

ANN_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	return do_sigaction(sig, act, oldact);
}

ANN_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	return do_sigaction(sig, act, oldact);
}

/* Signals given to siginterrupt(sig, 1): signal() leaves out SA_RESTART for them. */
static _Atomic uint64_t interrupting;

/* signal() with BSD semantics (glibc's default), or System V ones. */
static sighandler_t install_handler(int sig, sighandler_t handler, bool sysv)
{
	struct sigaction act, old;

	if (signal_compat_action(sig, handler, sysv, atomic_load(&interrupting) & bit(sig), &act) ||
	    do_sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

ANN_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, false);
}

ANN_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, false);
}

ANN_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, true);
}

/* glibc's siginterrupt changes the action by its internal sigaction: past our views. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
ANN_EXPORT int siginterrupt(int sig, int flag)
{
	struct sigaction act;

	if (sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return -1;
	}
	if (do_sigaction(sig, NULL, &act) < 0)
		return -1;
	if (flag) {
		atomic_fetch_or(&interrupting, bit(sig));
		act.sa_flags &= ~SA_RESTART;
	} else {
		atomic_fetch_and(&interrupting, ~bit(sig));
		act.sa_flags |= SA_RESTART;
	}
	return do_sigaction(sig, &act, NULL);
}
#pragma GCC diagnostic pop

/* ------------------------------------------------------------ masks */

/* A mask change for the program: the protected signals stay deliverable. Returns an errno. */
static int change_mask(int how, const sigset_t *set, sigset_t *old, bool per_thread)
{
	uint64_t prot = atomic_load(&protected_bits), asked = 0, was = view_blocked;
	sigset_t copy;
	int r, saved = errno;

	resolve();
	set = LAUNDER(set);
	old = LAUNDER(old);
	if (set && prot) {
		asked = mask_word(set) & prot;
		if (asked) {
			copy = *set;
			set_mask_word(&copy, mask_word(set) & ~asked);
			set = &copy;
		}
	}
	if (per_thread && real_pthread_sigmask_fn)
		r = real_pthread_sigmask_fn(how, set, old);
	else if (!per_thread && real_sigprocmask_fn)
		r = real_sigprocmask_fn(how, set, old) < 0 ? errno : 0;
	else
		r = raw_sigprocmask(how, set, old) < 0 ? errno : 0;
	errno = saved;
	if (r)
		return r;
	if (old && prot)
		set_mask_word(old, mask_word(old) | (was & prot));
	if (set && prot) {
		if (how == SIG_BLOCK)
			view_blocked = was | asked;
		else if (how == SIG_UNBLOCK)
			view_blocked = was & ~asked;
		else if (how == SIG_SETMASK)
			view_blocked = asked;
	}
	return 0;
}

ANN_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = change_mask(how, set, old, false);

	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

ANN_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return change_mask(how, set, old, true);
}

ANN_EXPORT int sigsuspend(const sigset_t *mask)
{
	uint64_t prot = atomic_load(&protected_bits);
	sigset_t copy;

	resolve();
	mask = LAUNDER(mask);
	if (mask && (mask_word(mask) & prot)) {
		copy = *mask;
		set_mask_word(&copy, mask_word(mask) & ~prot);
		mask = &copy;
	}
	if (real_sigsuspend_fn)
		return real_sigsuspend_fn(mask);
	return (int)syscall(SYS_rt_sigsuspend, mask, KERNEL_SIGSET_SIZE);
}
