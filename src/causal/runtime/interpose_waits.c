/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Waits that lever's signals must not cut short (spec coz.md §7.5, issue 14
 * point 2). The kernel ends some blocking calls with EINTR after any signal
 * handler ran, whatever SA_RESTART says (man 7 signal, "Interruption of
 * system calls and library functions by signal handlers"): poll, ppoll,
 * select, pselect, epoll_wait, epoll_pwait(2), socket calls with a timeout
 * (SO_RCVTIMEO, SO_SNDTIMEO, including read and write on such a socket),
 * msgrcv, msgsnd, semop, semtimedop and pause. lever's handler runs in every
 * program thread (samples, batches, end-of-experiment catch-up requests), so
 * a program that installed no handler would see EINTR it never sees bare.
 *
 * Each wrapper calls the real function and, when it failed with EINTR while
 * only lever's signal could have interrupted it (no handler of the program
 * ran on the thread during the call: signals_only_lever_interrupted), waits
 * again for what is left of its timeout, as the sleeps in
 * interpose_signals.c do. A socket call's timeout is the socket's own: the
 * retry first waits for readiness with poll for what is left, and returns
 * EAGAIN (EINPROGRESS for connect) once it has passed. Calls that the kernel
 * restarts after an SA_RESTART handler (lever's is one) need nothing.
 *
 * Calls made from inside lever pass through untouched. errno is left as the
 * call would have left it bare.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "causal/runtime/runtime.h"

#define CALLER() __builtin_return_address(0)

REAL(poll, "GLIBC_2.2.5")
REAL(ppoll, "GLIBC_2.4")
REAL(select, "GLIBC_2.2.5")
REAL(pselect, "GLIBC_2.2.5")
REAL(epoll_wait, "GLIBC_2.3.2")
REAL(epoll_pwait, "GLIBC_2.6")
REAL(epoll_pwait2, "GLIBC_2.35")
REAL(read, "GLIBC_2.2.5")
REAL(write, "GLIBC_2.2.5")
REAL(readv, "GLIBC_2.2.5")
REAL(writev, "GLIBC_2.2.5")
REAL(recv, "GLIBC_2.2.5")
REAL(recvfrom, "GLIBC_2.2.5")
REAL(recvmsg, "GLIBC_2.2.5")
REAL(send, "GLIBC_2.2.5")
REAL(sendto, "GLIBC_2.2.5")
REAL(sendmsg, "GLIBC_2.2.5")
REAL(accept, "GLIBC_2.2.5")
REAL(accept4, "GLIBC_2.10")
REAL(connect, "GLIBC_2.2.5")
REAL(msgrcv, "GLIBC_2.2.5")
REAL(msgsnd, "GLIBC_2.2.5")
REAL(semop, "GLIBC_2.2.5")
REAL(semtimedop, "GLIBC_2.3.3")
REAL(pause, "GLIBC_2.2.5")

/* Resolved before the program runs, so that no wrapper resolves in a signal handler. */
__attribute__((constructor)) static void interpose_waits_resolve(void)
{
	(void)real_poll();
	(void)real_ppoll();
	(void)real_select();
	(void)real_pselect();
	(void)real_epoll_wait();
	(void)real_epoll_pwait();
	(void)real_epoll_pwait2();
	(void)real_read();
	(void)real_write();
	(void)real_readv();
	(void)real_writev();
	(void)real_recv();
	(void)real_recvfrom();
	(void)real_recvmsg();
	(void)real_send();
	(void)real_sendto();
	(void)real_sendmsg();
	(void)real_accept();
	(void)real_accept4();
	(void)real_connect();
	(void)real_msgrcv();
	(void)real_msgsnd();
	(void)real_semop();
	(void)real_semtimedop();
	(void)real_pause();
}

/*
 * Whether a call that returned r must be made again: EINTR that only lever
 * can have caused (no handler of the program ran since runs was read, just
 * before the call). The loops read it with a comma: `while (runs =
 * signals_handler_runs(), lever_interrupted(r = call, ra, runs))`.
 */
static bool lever_interrupted(long r, const void *ra, unsigned long runs)
{
	return r < 0 && errno == EINTR && signals_only_lever_interrupted(ra, runs);
}

/* ---- what is left of a timeout ---- */

/* A deadline on CLOCK_MONOTONIC, or 0 for "no timeout" (ms < 0). */
static uint64_t deadline_ms(int ms)
{
	return ms < 0 ? 0 : time_monotonic_ns() + (uint64_t)ms * NSEC_PER_MSEC;
}

static uint64_t deadline_ts(const struct timespec *ts)
{
	if (!ts)
		return 0;
	return time_monotonic_ns() + (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static uint64_t ns_left(uint64_t deadline)
{
	uint64_t now = time_monotonic_ns();

	return deadline > now ? deadline - now : 0;
}

/* Milliseconds left, rounded up so that a wait never ends before its deadline. */
static int ms_left(uint64_t deadline, int original)
{
	if (original < 0)
		return original;
	return (int)((ns_left(deadline) + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

static struct timespec ts_left(uint64_t deadline)
{
	uint64_t left = ns_left(deadline);

	return (struct timespec){.tv_sec = (time_t)(left / NSEC_PER_SEC),
				 .tv_nsec = (long)(left % NSEC_PER_SEC)};
}

/* Before waiting again: the timeout becomes what is left of it (NULL stays NULL). */
static const struct timespec *ts_remaining(const struct timespec *timeout, uint64_t deadline,
					   struct timespec *left)
{
	if (!timeout)
		return NULL;
	*left = ts_left(deadline);
	return left;
}

/* ---- multiplexing ---- */

static int do_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	__typeof__(&poll) real = real_poll();

	return real ? real(fds, n, timeout) : (int)syscall(SYS_poll, fds, n, timeout);
}

/* poll for a caller inside this file: restarted like the program's */
static int poll_restarting(struct pollfd *fds, nfds_t n, int timeout, const void *ra)
{
	uint64_t deadline = deadline_ms(timeout);
	unsigned long runs;
	int saved = errno;
	int r;

	while (runs = signals_handler_runs(),
	       lever_interrupted(r = do_poll(fds, n, timeout), ra, runs)) {
		errno = saved;
		timeout = ms_left(deadline, timeout);
	}
	return r;
}

LEVER_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	return poll_restarting(fds, n, timeout, CALLER());
}

static int ppoll_restarting(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			    const sigset_t *mask, const void *ra)
{
	__typeof__(&ppoll) real = real_ppoll();
	uint64_t deadline = deadline_ts(timeout);
	struct timespec left;
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(fds, n, timeout, mask), ra, runs)) {
		errno = saved;
		timeout = ts_remaining(timeout, deadline, &left);
	}
	return r;
}

LEVER_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		       const sigset_t *mask)
{
	return ppoll_restarting(fds, n, timeout, mask, CALLER());
}

LEVER_EXPORT int select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	__typeof__(&select) real = real_select();
	const void *ra = CALLER();
	uint64_t deadline = 0;
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (tv)
		deadline = time_monotonic_ns() + (uint64_t)tv->tv_sec * NSEC_PER_SEC +
			   (uint64_t)tv->tv_usec * 1000u;
	/* On EINTR the kernel leaves the sets as they were passed: the same call again. */
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(n, rd, wr, ex, tv), ra, runs)) {
		errno = saved;
		if (tv) {
			/* Linux's select reports the time left in tv: keep that too */
			uint64_t left = ns_left(deadline);

			tv->tv_sec = (time_t)(left / NSEC_PER_SEC);
			tv->tv_usec = (suseconds_t)((left % NSEC_PER_SEC + 999) / 1000);
		}
	}
	return r;
}

LEVER_EXPORT int pselect(int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *timeout,
			 const sigset_t *mask)
{
	__typeof__(&pselect) real = real_pselect();
	const void *ra = CALLER();
	uint64_t deadline = deadline_ts(timeout);
	struct timespec left;
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(n, rd, wr, ex, timeout, mask), ra, runs)) {
		errno = saved;
		timeout = ts_remaining(timeout, deadline, &left);
	}
	return r;
}

LEVER_EXPORT int epoll_wait(int ep, struct epoll_event *events, int max, int timeout)
{
	__typeof__(&epoll_wait) real = real_epoll_wait();
	const void *ra = CALLER();
	uint64_t deadline = deadline_ms(timeout);
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(ep, events, max, timeout), ra, runs)) {
		errno = saved;
		timeout = ms_left(deadline, timeout);
	}
	return r;
}

LEVER_EXPORT int epoll_pwait(int ep, struct epoll_event *events, int max, int timeout,
			     const sigset_t *mask)
{
	__typeof__(&epoll_pwait) real = real_epoll_pwait();
	const void *ra = CALLER();
	uint64_t deadline = deadline_ms(timeout);
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(ep, events, max, timeout, mask), ra, runs)) {
		errno = saved;
		timeout = ms_left(deadline, timeout);
	}
	return r;
}

LEVER_EXPORT int epoll_pwait2(int ep, struct epoll_event *events, int max,
			      const struct timespec *timeout, const sigset_t *mask)
{
	__typeof__(&epoll_pwait2) real = real_epoll_pwait2();
	const void *ra = CALLER();
	uint64_t deadline = deadline_ts(timeout);
	struct timespec left;
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(ep, events, max, timeout, mask), ra, runs)) {
		errno = saved;
		timeout = ts_remaining(timeout, deadline, &left);
	}
	return r;
}

/* ---- sockets with a timeout ---- */

/*
 * After a socket call on fd, begun at start, was cut short by lever: whether
 * to make it again. A socket with a timeout (SO_RCVTIMEO for input, SO_SNDTIMEO
 * for output) first waits for readiness for what is left of it; when nothing
 * is left the call fails as its timeout would have (errno = timed_out).
 * Anything else (no timeout, not a socket) is simply made again.
 */
static bool socket_call_again(int fd, bool output, uint64_t start, int timed_out, const void *ra)
{
	struct timeval tv = {0, 0};
	socklen_t len = sizeof(tv);
	struct pollfd p = {.fd = fd, .events = output ? POLLOUT : POLLIN};
	uint64_t timeout, deadline;
	int saved = errno;
	int r;

	if (getsockopt(fd, SOL_SOCKET, output ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &len) != 0 ||
	    (tv.tv_sec == 0 && tv.tv_usec == 0)) {
		errno = saved;
		return true;
	}
	timeout = (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * 1000u;
	deadline = start + timeout;
	r = poll_restarting(&p, 1, ms_left(deadline, 0), ra);
	if (r == 0) {
		errno = timed_out;
		return false;
	}
	if (r < 0)
		return false;
	errno = saved;
	return true;
}

/*
 * Defines name_restarting(params..., ra), a socket-style call NAME(fd, ...)
 * made again while only lever interrupts it, and the exported NAME.
 */
#define SOCKET_CALL(type, name, output, params, args)                                              \
	static type name##_restarting(SOCKET_PARAMS params, const void *ra)                        \
	{                                                                                          \
		__typeof__(&name) real = real_##name();                                            \
		uint64_t start = time_monotonic_ns();                                              \
		type r;                                                                            \
                                                                                                   \
		if (!real) {                                                                       \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		for (;;) {                                                                         \
			unsigned long runs = signals_handler_runs();                               \
                                                                                                   \
			r = real args;                                                             \
			if (!lever_interrupted((long)r, ra, runs))                                 \
				return r;                                                          \
			if (!socket_call_again(fd, output, start, EAGAIN, ra))                     \
				return -1;                                                         \
		}                                                                                  \
	}                                                                                          \
	LEVER_EXPORT type name params                                                              \
	{                                                                                          \
		return name##_restarting(SOCKET_ARGS args, CALLER());                              \
	}
#define SOCKET_PARAMS(...) __VA_ARGS__
#define SOCKET_ARGS(...)   __VA_ARGS__

SOCKET_CALL(ssize_t, read, false, (int fd, void *buf, size_t n), (fd, buf, n))
SOCKET_CALL(ssize_t, write, true, (int fd, const void *buf, size_t n), (fd, buf, n))
SOCKET_CALL(ssize_t, readv, false, (int fd, const struct iovec *iov, int n), (fd, iov, n))
SOCKET_CALL(ssize_t, writev, true, (int fd, const struct iovec *iov, int n), (fd, iov, n))
SOCKET_CALL(ssize_t, recv, false, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
SOCKET_CALL(ssize_t, recvfrom, false,
	    (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len),
	    (fd, buf, n, flags, from, len))
SOCKET_CALL(ssize_t, recvmsg, false, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
SOCKET_CALL(ssize_t, send, true, (int fd, const void *buf, size_t n, int flags),
	    (fd, buf, n, flags))
SOCKET_CALL(ssize_t, sendto, true,
	    (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
	     socklen_t len),
	    (fd, buf, n, flags, to, len))
SOCKET_CALL(ssize_t, sendmsg, true, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
SOCKET_CALL(int, accept, false, (int fd, struct sockaddr *addr, socklen_t *len), (fd, addr, len))
SOCKET_CALL(int, accept4, false, (int fd, struct sockaddr *addr, socklen_t *len, int flags),
	    (fd, addr, len, flags))

/*
 * connect goes on in the background after EINTR: wait for it to finish for
 * what is left of SO_SNDTIMEO (without one, for as long as it takes), then
 * report its outcome; EINPROGRESS when the timeout passed, as bare.
 */
LEVER_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	__typeof__(&connect) real = real_connect();
	const void *ra = CALLER();
	uint64_t start = time_monotonic_ns();
	int saved = errno, err = 0;
	socklen_t err_len = sizeof(err);
	unsigned long runs;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	runs = signals_handler_runs();
	r = real(fd, addr, len);
	if (!lever_interrupted(r, ra, runs))
		return r;
	if (!socket_call_again(fd, true, start, EINPROGRESS, ra))
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0)
		return -1;
	if (err) {
		errno = err;
		return -1;
	}
	errno = saved;
	return 0;
}

/* ---- System V IPC and pause ---- */

LEVER_EXPORT ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
	__typeof__(&msgrcv) real = real_msgrcv();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	ssize_t r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(id, msg, size, type, flags), ra, runs))
		errno = saved;
	return r;
}

LEVER_EXPORT int msgsnd(int id, const void *msg, size_t size, int flags)
{
	__typeof__(&msgsnd) real = real_msgsnd();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(id, msg, size, flags), ra, runs))
		errno = saved;
	return r;
}

LEVER_EXPORT int semop(int id, struct sembuf *ops, size_t n)
{
	__typeof__(&semop) real = real_semop();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(), lever_interrupted(r = real(id, ops, n), ra, runs))
		errno = saved;
	return r;
}

LEVER_EXPORT int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
	__typeof__(&semtimedop) real = real_semtimedop();
	const void *ra = CALLER();
	uint64_t deadline = deadline_ts(timeout);
	struct timespec left;
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(),
	       lever_interrupted(r = real(id, ops, n, timeout), ra, runs)) {
		errno = saved;
		timeout = ts_remaining(timeout, deadline, &left);
	}
	return r;
}

/* pause returns only after a handler ran: one of the program's, never lever's. */
LEVER_EXPORT int pause(void)
{
	__typeof__(&pause) real = real_pause();
	const void *ra = CALLER();
	unsigned long runs;
	int saved = errno;
	int r;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	while (runs = signals_handler_runs(), lever_interrupted(r = real(), ra, runs))
		errno = saved;
	return r;
}

/*
 * _FORTIFY_SOURCE builds call the checking variants, which glibc implements
 * with its internal calls, past the wrappers above. The check is theirs:
 * when it would fail, the real variant is called to fail the same way;
 * otherwise the call goes through the wrapper.
 */
extern int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fds_len);
extern int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		       const sigset_t *mask, size_t fds_len);
extern ssize_t __read_chk(int fd, void *buf, size_t n, size_t buf_len);
extern ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buf_len, int flags);
extern ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buf_len, int flags,
			      struct sockaddr *from, socklen_t *from_len);

REAL(__poll_chk, "GLIBC_2.16")
REAL(__ppoll_chk, "GLIBC_2.16")
REAL(__read_chk, "GLIBC_2.4")
REAL(__recv_chk, "GLIBC_2.4")
REAL(__recvfrom_chk, "GLIBC_2.4")

__attribute__((constructor)) static void interpose_waits_resolve_chk(void)
{
	(void)real___poll_chk();
	(void)real___ppoll_chk();
	(void)real___read_chk();
	(void)real___recv_chk();
	(void)real___recvfrom_chk();
}

LEVER_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fds_len)
{
	__typeof__(&__poll_chk) real = real___poll_chk();

	if (fds_len / sizeof(*fds) < n && real)
		return real(fds, n, timeout, fds_len);
	return poll_restarting(fds, n, timeout, CALLER());
}

LEVER_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			     const sigset_t *mask, size_t fds_len)
{
	__typeof__(&__ppoll_chk) real = real___ppoll_chk();

	if (fds_len / sizeof(*fds) < n && real)
		return real(fds, n, timeout, mask, fds_len);
	return ppoll_restarting(fds, n, timeout, mask, CALLER());
}

LEVER_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buf_len)
{
	__typeof__(&__read_chk) real = real___read_chk();

	if (n > buf_len && real)
		return real(fd, buf, n, buf_len);
	return read_restarting(fd, buf, n, CALLER());
}

LEVER_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buf_len, int flags)
{
	__typeof__(&__recv_chk) real = real___recv_chk();

	if (n > buf_len && real)
		return real(fd, buf, n, buf_len, flags);
	return recv_restarting(fd, buf, n, flags, CALLER());
}

LEVER_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buf_len, int flags,
				    struct sockaddr *from, socklen_t *from_len)
{
	__typeof__(&__recvfrom_chk) real = real___recvfrom_chk();

	if (n > buf_len && real)
		return real(fd, buf, n, buf_len, flags, from, from_len);
	return recvfrom_restarting(fd, buf, n, flags, from, from_len, CALLER());
}
