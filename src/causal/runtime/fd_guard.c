/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The runtime's descriptors (the profile, perf events) must survive a
 * program that closes what it inherited, as daemons do
 * (`for fd in 3..4095: close(fd)`, close_range, closefrom; issue 14, point 1).
 * Closed under us, the number would be reused by the program's next open and
 * the runtime would write its records into the program's file, or close the
 * program's file at exit. So close, close_range and closefrom leave a
 * protected descriptor open and report success, as if it had been closed
 * (the program never knew it was there), and dup2/dup3 onto one first move
 * ours to another number and tell its owner. Calls made by the runtime itself
 * (return address inside liblever-causal.so) pass through. A program that
 * calls the system call directly still bypasses this; the profile writer
 * therefore also checks its descriptor before each write (output.c).
 * Async-signal-safe once the real functions are resolved (in the constructor).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "causal/runtime/fd_guard.h"
#include "causal/runtime/runtime.h"

/* numbers above this are not guarded: the runtime's come from open's lowest-free rule */
#define GUARD_FDS 65536
/* where a descriptor moved away from a dup2 target goes: out of the program's low range */
#define MOVE_FLOOR 512

static int *_Atomic owners[GUARD_FDS];

int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);

REAL(close, "GLIBC_2.2.5")
REAL(close_range, "GLIBC_2.34")
REAL(dup2, "GLIBC_2.2.5")
REAL(dup3, "GLIBC_2.9")

void fd_guard_protect(int *slot)
{
	int fd = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (fd >= 0 && fd < GUARD_FDS)
		atomic_store(&owners[fd], slot);
}

/* The owner's int if fd is one of ours and still held there. */
static int *owner_of(int fd)
{
	int *slot;

	if (fd < 0 || fd >= GUARD_FDS)
		return NULL;
	slot = atomic_load(&owners[fd]);
	if (slot && __atomic_load_n(slot, __ATOMIC_RELAXED) != fd)
		return NULL; /* the owner moved on without closing through us */
	return slot;
}

/* A call by the program (not by the runtime) about one of the runtime's descriptors. */
static bool protected_from(int fd, const void *caller)
{
	return owner_of(fd) && !address_in_lever(caller);
}

static int sys_close(int fd)
{
	int (*real)(int) = real_close();

	return real ? real(fd) : (int)syscall(SYS_close, fd);
}

static int sys_close_range(unsigned int first, unsigned int last, int flags)
{
	int (*real)(unsigned int, unsigned int, int) = real_close_range();

	return real ? real(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
}

LEVER_EXPORT int close(int fd)
{
	if (protected_from(fd, __builtin_return_address(0)))
		return 0; /* ours: it stays open, invisible to the program as before */
	if (fd >= 0 && fd < GUARD_FDS)
		atomic_store(&owners[fd], NULL);
	return sys_close(fd);
}

/* close_range over [first, last] minus the runtime's descriptors. */
static int close_range_around(unsigned int first, unsigned int last, int flags)
{
	unsigned int end = last < GUARD_FDS - 1 ? last : GUARD_FDS - 1;
	unsigned int start = first;

	for (unsigned int fd = first; fd <= end && fd >= first; fd++) {
		if (!owner_of((int)fd))
			continue;
		if (fd > start && sys_close_range(start, fd - 1, flags) < 0)
			return -1;
		start = fd + 1;
	}
	if (start > last)
		return 0;
	return sys_close_range(start, last, flags);
}

LEVER_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (address_in_lever(__builtin_return_address(0)) || first > last)
		return sys_close_range(first, last, flags);
	return close_range_around(first, last, flags);
}

LEVER_EXPORT void closefrom(int lowfd)
{
	unsigned int first = lowfd < 0 ? 0 : (unsigned int)lowfd;

	if (close_range_around(first, ~0U, 0) == 0)
		return;
	/* no close_range in this kernel: one at a time, as glibc falls back */
	for (int fd = (int)first; fd < GUARD_FDS; fd++) {
		if (!owner_of(fd))
			sys_close(fd);
	}
}

/*
 * A signal-driven descriptor (the perf sampler's batch event) reports the
 * number it was armed under in si_fd, and the kernel only records a new
 * number when O_ASYNC is turned on: turn it off and on again under the new one.
 */
static void rearm_async(int fd)
{
	long flags = syscall(SYS_fcntl, fd, F_GETFL);

	if (flags < 0 || !(flags & O_ASYNC))
		return;
	syscall(SYS_fcntl, fd, F_SETFL, flags & ~O_ASYNC);
	syscall(SYS_fcntl, fd, F_SETFL, flags);
}

/*
 * The program wants exactly this number: give it up, keeping our
 * descriptor under another number (the same open file, perf mapping and
 * signal owner) and telling its owner.
 */
static void move_away(int fd)
{
	int *slot = owner_of(fd);
	int moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, MOVE_FLOOR);

	if (moved < 0)
		moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
	if (!slot || moved < 0)
		return; /* ours is lost to the program's dup2: the writer will reopen */
	rearm_async(moved);
	__atomic_store_n(slot, moved, __ATOMIC_RELAXED);
	if (moved < GUARD_FDS)
		atomic_store(&owners[moved], slot);
	atomic_store(&owners[fd], NULL);
}

LEVER_EXPORT int dup2(int oldfd, int newfd)
{
	int (*real)(int, int) = real_dup2();

	if (oldfd != newfd && protected_from(newfd, __builtin_return_address(0)))
		move_away(newfd);
	return real ? real(oldfd, newfd) : (int)syscall(SYS_dup2, oldfd, newfd);
}

LEVER_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int (*real)(int, int, int) = real_dup3();

	if (oldfd != newfd && protected_from(newfd, __builtin_return_address(0)))
		move_away(newfd);
	return real ? real(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

/*
 * The program's close loops also reach descriptors the runtime holds only
 * for a moment, such as the ELF and debug files the line map reads on the
 * profiler thread while main is already running. Closed under the reader,
 * the number goes to the program's next open, and the reader's close then
 * closes the program's file (its writes fail with EBADF). Such work runs on
 * a short-lived thread that first takes a private copy of the descriptor
 * table (unshare(CLONE_FILES), no privilege needed): what it opens and
 * closes is then invisible to the program and the program's closes cannot
 * touch it. Memory (the files' mappings) stays shared. If no thread or no
 * private table can be had, fn runs on the caller, as before.
 */
struct private_job {
	void (*fn)(void *);
	void *arg;
};

static void *private_fds_main(void *p)
{
	struct private_job *job = p;

	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		LOG_INFO("no private descriptor table (%s): reading files beside the program's\n",
			 strerror(errno));
	job->fn(job->arg);
	return NULL;
}

void fd_guard_run_private(void (*fn)(void *), void *arg)
{
	int (*join)(pthread_t, void **) = real_symbol("pthread_join", NULL);
	struct private_job job = {.fn = fn, .arg = arg};
	pthread_t thread;

	if (join && real_thread_start(&thread, private_fds_main, &job))
		join(thread, NULL);
	else
		fn(arg);
}

/* Resolve now: the first close may come from a signal handler, where dlsym may not run. */
__attribute__((constructor)) static void fd_guard_init(void)
{
	real_close();
	real_close_range();
	real_dup2();
	real_dup3();
}
