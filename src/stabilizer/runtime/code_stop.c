/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stop-the-world for reclaiming old copies (spec §4.4.6, §12.3 "Threads":
 * a conservative scan of every thread's stack and saved registers).
 *
 * The caller lists the threads in /proc/self/task and sends each a real-time
 * signal; the handler stores the interrupted registers in the thread's entry
 * of a preallocated table, says it has arrived and waits on a futex until
 * released. Threads created meanwhile are found by listing again until no
 * new one appears (a stopped thread cannot create any). Once all have
 * arrived, each thread's stack is scanned from its saved stack pointer (minus
 * the red zone) to the end of the mapping holding it (/proc/self/maps).
 *
 * A thread that keeps the signal blocked for longer than the timeout makes the
 * round fail: nothing is scanned and nothing freed (the copies wait for a
 * later round). Async-signal-safe throughout; no allocation.
 */
#include "stabilizer/runtime/code.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/base.h"

#define MAX_STOPPED	4096
#define RED_ZONE	128
#define STOP_TIMEOUT_NS (50 * NSEC_PER_MSEC)

enum stop_state { ENTRY_FREE, ENTRY_SIGNALED, ENTRY_BUSY, ENTRY_ARRIVED, ENTRY_LEFT, ENTRY_GONE };

struct stopped_thread {
	_Atomic int tid;
	_Atomic int state;
	uint32_t release_gen; /* the round's generation */
	uintptr_t regs[NGREG];
	uintptr_t sp;
	uintptr_t stack_lo, stack_hi; /* the mapping holding sp */
};

static struct stopped_thread stopped[MAX_STOPPED];
static _Atomic size_t n_stopped;
static _Atomic uint32_t release_gen;
static _Atomic uint32_t arrivals; /* bumped (and woken) by each arriving thread */
static int stop_signal;

static long sys_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static void stop_handler(int sig, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	int tid = (int)syscall(SYS_gettid);
	size_t n = atomic_load(&n_stopped);
	const ucontext_t *uc = ucontext;

	for (size_t i = 0; i < n; i++) {
		struct stopped_thread *t = &stopped[i];
		int expected = ENTRY_SIGNALED;

		if (atomic_load(&t->tid) != tid ||
		    !atomic_compare_exchange_strong(&t->state, &expected, ENTRY_BUSY))
			continue;
		for (int r = 0; r < NGREG; r++)
			t->regs[r] = (uintptr_t)uc->uc_mcontext.gregs[r];
		t->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		atomic_store(&t->state, ENTRY_ARRIVED);
		atomic_fetch_add(&arrivals, 1);
		sys_futex(&arrivals, FUTEX_WAKE_PRIVATE, 1, NULL);
		while (atomic_load(&release_gen) == t->release_gen)
			sys_futex(&release_gen, FUTEX_WAIT_PRIVATE, t->release_gen, NULL);
		atomic_store(&t->state, ENTRY_LEFT);
		break;
	}
	errno = saved_errno;
}

int code_stop_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = stop_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	stop_signal = SIGRTMAX - 2;
	return sigaction(stop_signal, &sa, NULL);
}

static bool already_listed(int tid)
{
	size_t n = atomic_load(&n_stopped);

	for (size_t i = 0; i < n; i++)
		if (atomic_load(&stopped[i].tid) == tid)
			return true;
	return false;
}

/* Signals every thread not yet listed; returns how many were new, or -1. */
static int signal_new_threads(int self, uint32_t gen)
{
	char buf[4096];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int added = 0;
	long got;

	if (fd < 0)
		return -1;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int tid = atoi(d->d_name);
			size_t n = atomic_load(&n_stopped);

			off += d->d_reclen;
			if (tid <= 0 || tid == self || already_listed(tid))
				continue;
			if (n == MAX_STOPPED) {
				close(fd);
				return -1;
			}
			stopped[n].release_gen = gen;
			stopped[n].stack_lo = stopped[n].stack_hi = 0;
			atomic_store(&stopped[n].tid, tid);
			atomic_store(&stopped[n].state, ENTRY_SIGNALED);
			atomic_store(&n_stopped, n + 1);
			if (syscall(SYS_tgkill, getpid(), tid, stop_signal) != 0)
				atomic_store(&stopped[n].state, ENTRY_GONE);
			added++;
		}
	}
	close(fd);
	return added;
}

/*
 * Waits until every listed thread has arrived or exited; false on timeout.
 * Sleeps on the arrivals futex (a thread that still has to be scheduled to
 * run its handler needs the CPU more than this loop does).
 */
static bool wait_arrivals(uint64_t deadline)
{
	for (;;) {
		size_t n = atomic_load(&n_stopped);
		uint32_t seen = atomic_load(&arrivals);
		struct timespec nap = {0, 200 * 1000};
		bool all = true;

		for (size_t i = 0; i < n; i++) {
			struct stopped_thread *t = &stopped[i];
			int st = atomic_load(&t->state);

			if (st != ENTRY_SIGNALED && st != ENTRY_BUSY)
				continue;
			if (st == ENTRY_SIGNALED &&
			    syscall(SYS_tgkill, getpid(), atomic_load(&t->tid), 0) != 0) {
				int expected = ENTRY_SIGNALED;

				atomic_compare_exchange_strong(&t->state, &expected, ENTRY_GONE);
				continue;
			}
			all = false;
		}
		if (all)
			return true;
		if (time_monotonic_ns() > deadline)
			return false;
		sys_futex(&arrivals, FUTEX_WAIT_PRIVATE, seen, &nap);
	}
}

/* Lets the stopped threads go; a late handler of a thread that never arrived ignores its entry. */
static void release_all(void)
{
	size_t n = atomic_load(&n_stopped);

	atomic_fetch_add(&release_gen, 1);
	sys_futex(&release_gen, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	for (size_t i = 0; i < n; i++) {
		int expected = ENTRY_SIGNALED;

		atomic_compare_exchange_strong(&stopped[i].state, &expected, ENTRY_GONE);
	}
}

/* Before reusing the table: every released thread has left its handler. */
static void wait_departures(void)
{
	size_t n = atomic_load(&n_stopped);

	for (size_t i = 0; i < n; i++) {
		while (atomic_load(&stopped[i].state) == ENTRY_BUSY ||
		       atomic_load(&stopped[i].state) == ENTRY_ARRIVED) {
			struct timespec nap = {0, 50 * 1000};

			nanosleep(&nap, NULL);
		}
	}
	atomic_store(&n_stopped, 0);
}

static uintptr_t parse_hex(const char **p)
{
	uintptr_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static void note_mapping(uintptr_t lo, uintptr_t hi, uintptr_t self_sp, uintptr_t *self_hi)
{
	size_t n = atomic_load(&n_stopped);

	for (size_t i = 0; i < n; i++) {
		struct stopped_thread *t = &stopped[i];

		if (atomic_load(&t->state) == ENTRY_ARRIVED && t->sp >= lo && t->sp < hi) {
			t->stack_lo = lo;
			t->stack_hi = hi;
		}
	}
	if (self_sp >= lo && self_sp < hi)
		*self_hi = hi;
}

/* Finds, for each stopped thread, the end of the mapping holding its stack. */
static void find_stack_ends(uintptr_t self_sp, uintptr_t *self_hi)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (got <= 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		while ((nl = strchr(line, '\n'))) {
			const char *p = line;
			uintptr_t lo = parse_hex(&p), hi;

			p++;
			hi = parse_hex(&p);
			note_mapping(lo, hi, self_sp, self_hi);
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: skip it */
	}
	close(fd);
}

static void scan_range(uintptr_t lo, uintptr_t hi, code_scan_fn scan, void *ctx)
{
	lo &= ~(uintptr_t)7;
	if (hi > lo)
		scan((const uintptr_t *)lo, (hi - lo) / sizeof(uintptr_t), ctx);
}

bool code_stop_and_scan(code_scan_fn scan, void *ctx)
{
	int self = (int)syscall(SYS_gettid);
	uint32_t gen = atomic_load(&release_gen);
	uint64_t deadline = time_monotonic_ns() + STOP_TIMEOUT_NS;
	uintptr_t self_sp = (uintptr_t)__builtin_frame_address(0), self_hi = 0;
	int added;
	bool ok = true;

	wait_departures();
	do {
		added = signal_new_threads(self, gen);
		if (added < 0 || !wait_arrivals(deadline))
			ok = false;
	} while (ok && added > 0);
	if (ok) {
		size_t n = atomic_load(&n_stopped);

		find_stack_ends(self_sp, &self_hi);
		for (size_t i = 0; i < n; i++) {
			struct stopped_thread *t = &stopped[i];

			if (atomic_load(&t->state) != ENTRY_ARRIVED)
				continue;
			scan(t->regs, NGREG, ctx);
			if (t->stack_hi)
				scan_range(t->sp - RED_ZONE < t->stack_lo ? t->stack_lo
									  : t->sp - RED_ZONE,
					   t->stack_hi, scan, ctx);
		}
		if (self_hi)
			scan_range(self_sp, self_hi, scan, ctx);
	}
	release_all();
	return ok;
}
