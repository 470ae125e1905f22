/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Waits that a signal handler ends with EINTR whatever SA_RESTART says
 * (man 7 signal, "Interruption of system calls and library functions by
 * signal handlers"): poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
 * socket calls with SO_RCVTIMEO/SO_SNDTIMEO, sem_timedwait, msgrcv. The
 * program installs no handler, so bare it never sees EINTR; under lever its
 * catch-up requests and sampler signals must not end these waits early
 * (issue 14, point 2; doc/causal.md). One thread computes so that experiments
 * run and end, another waits through every call three times, each wait timing
 * out (nothing ever becomes ready) or, for msgrcv, ending with a message sent
 * later. Then the program handles SIGUSR1 itself, and the EINTR of a poll it
 * interrupts must reach the program, but only once its handler ran, also when
 * SIGUSR1 comes 300 ms after lever's signals began interrupting the poll; and
 * sigaction/signal read back the program's own handlers and flags, never
 * lever's wrapper (issue 14). Prints one line per call with what the waits
 * returned, and OK. Built with EINTR_WAITS_LATENCY (eintr_waits_latency), each
 * unit of work is also a request of a latency point: every rise of the global
 * delay then sends the running threads, the waiter in its wait included, a
 * request to pay at once (doc/causal.md), far more signals than the end of
 * each experiment alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <lever.h>

#define ROUNDS	   3
#define TIMEOUT_MS 150

/*
 * Sizes the compiler cannot see, so that a _FORTIFY_SOURCE build
 * (eintr_waits_fortified) calls glibc's checking variants (__poll_chk,
 * __read_chk, __recv_chk...), which lever must cover too.
 */
static volatile nfds_t one_fd = 1;
static volatile size_t one_byte = 1;

static atomic_int waiting_done;
static atomic_int polling_woke;
static volatile sig_atomic_t usr1_seen;
static volatile uint64_t sink;
static int failures;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Work in scope until the waiter is done, so experiments start and end all along. */
static void *compute(void *arg)
{
	uint64_t x = 1;

	(void)arg;
	while (!atomic_load(&waiting_done)) {
#ifdef EINTR_WAITS_LATENCY
		LEVER_BEGIN("unit");
#endif
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sink = x;
#ifdef EINTR_WAITS_LATENCY
		LEVER_END("unit");
#endif
		LEVER_PROGRESS;
	}
	return NULL;
}

static struct timeval timeout_tv(void)
{
	return (struct timeval){.tv_sec = 0, .tv_usec = TIMEOUT_MS * 1000};
}

static struct timespec timeout_ts(void)
{
	return (struct timespec){.tv_sec = 0, .tv_nsec = TIMEOUT_MS * 1000000L};
}

/* One wait: returns its result, or -errno; counts a wait that ended before its timeout. */
typedef int (*wait_fn)(void *ctx);

static void run_wait(const char *name, wait_fn fn, void *ctx, int expected)
{
	char results[128] = "";
	size_t len = 0;

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t start = now_ns();
		int r = fn(ctx);
		uint64_t elapsed = now_ns() - start;
		const char *what = r == expected ? "timeout"
				   : r == -EINTR ? "EINTR"
				   : r < 0	 ? strerror(-r)
						 : "ready";

		/* A timed wait never ends before its timeout (the clock is read around it). */
		if (r == expected && elapsed < (uint64_t)TIMEOUT_MS * 1000000u * 9 / 10)
			what = "early";
		if (r != expected || strcmp(what, "early") == 0)
			failures++;
		len += (size_t)snprintf(results + len, sizeof(results) - len, " %s", what);
	}
	printf("%-14s%s\n", name, results);
	fflush(stdout);
}

static int result(int r)
{
	return r < 0 ? -errno : r;
}

static int do_poll(void *ctx)
{
	struct pollfd p = {.fd = *(int *)ctx, .events = POLLIN};

	return result(poll(&p, one_fd, TIMEOUT_MS));
}

static int do_ppoll(void *ctx)
{
	struct pollfd p = {.fd = *(int *)ctx, .events = POLLIN};
	struct timespec ts = timeout_ts();

	return result(ppoll(&p, one_fd, &ts, NULL));
}

static int do_select(void *ctx)
{
	int fd = *(int *)ctx;
	struct timeval tv = timeout_tv();
	fd_set set;

	FD_ZERO(&set);
	FD_SET(fd, &set);
	return result(select(fd + 1, &set, NULL, NULL, &tv));
}

static int do_pselect(void *ctx)
{
	int fd = *(int *)ctx;
	struct timespec ts = timeout_ts();
	fd_set set;

	FD_ZERO(&set);
	FD_SET(fd, &set);
	return result(pselect(fd + 1, &set, NULL, NULL, &ts, NULL));
}

static int do_epoll_wait(void *ctx)
{
	struct epoll_event ev;

	return result(epoll_wait(*(int *)ctx, &ev, 1, TIMEOUT_MS));
}

static int do_epoll_pwait(void *ctx)
{
	struct epoll_event ev;

	return result(epoll_pwait(*(int *)ctx, &ev, 1, TIMEOUT_MS, NULL));
}

static int do_recv(void *ctx)
{
	char c;

	return result((int)recv(*(int *)ctx, &c, one_byte, 0));
}

static int do_read_socket(void *ctx)
{
	char c;

	return result((int)read(*(int *)ctx, &c, one_byte));
}

static int do_recvmsg(void *ctx)
{
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	return result((int)recvmsg(*(int *)ctx, &msg, 0));
}

static int do_accept(void *ctx)
{
	int fd = accept(*(int *)ctx, NULL, NULL);

	if (fd >= 0)
		close(fd);
	return result(fd);
}

static int do_send(void *ctx)
{
	static char block[4096];

	return result((int)send(*(int *)ctx, block, sizeof(block), 0));
}

static int do_sem_timedwait(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += TIMEOUT_MS * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return result(sem_timedwait(ctx, &ts));
}

struct message {
	long type;
	char text[8];
};

/* msgrcv has no timeout: a thread sends the message after TIMEOUT_MS. */
static void *send_later(void *arg)
{
	struct message m = {.type = 1, .text = "late"};
	struct timespec ts = timeout_ts();

	nanosleep(&ts, NULL);
	msgsnd(*(int *)arg, &m, sizeof(m.text), 0);
	return NULL;
}

static int do_msgrcv(void *ctx)
{
	struct message m;
	pthread_t sender;
	ssize_t n;

	pthread_create(&sender, NULL, send_later, ctx);
	n = msgrcv(*(int *)ctx, &m, sizeof(m.text), 0, 0);
	pthread_join(sender, NULL);
	/* "timeout" here means: received the late message after waiting for it */
	return n == (ssize_t)sizeof(m.text) ? 0 : n < 0 ? -errno : 1;
}

static void set_timeout(int fd, int option)
{
	struct timeval tv = timeout_tv();

	setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

static void *waiter(void *arg)
{
	int pipefd[2], pair[2], full[2], listener, ep, queue;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN};
	sem_t sem;

	(void)arg;
	if (pipe(pipefd) || socketpair(AF_UNIX, SOCK_STREAM, 0, pair) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, full)) {
		perror("eintr_waits: pipe/socketpair");
		failures++;
		return NULL;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = pipefd[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	run_wait("poll", do_poll, &pipefd[0], 0);
	run_wait("ppoll", do_ppoll, &pipefd[0], 0);
	run_wait("select", do_select, &pipefd[0], 0);
	run_wait("pselect", do_pselect, &pipefd[0], 0);
	run_wait("epoll_wait", do_epoll_wait, &ep, 0);
	run_wait("epoll_pwait", do_epoll_pwait, &ep, 0);

	set_timeout(pair[0], SO_RCVTIMEO);
	run_wait("recv", do_recv, &pair[0], -EAGAIN);
	run_wait("read", do_read_socket, &pair[0], -EAGAIN);
	run_wait("recvmsg", do_recvmsg, &pair[0], -EAGAIN);

	/* abstract unix socket: nothing on disk */
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "lever-eintr-%d", (int)getpid());
	listener = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(listener, (struct sockaddr *)&addr, sizeof(addr));
	listen(listener, 1);
	set_timeout(listener, SO_RCVTIMEO);
	run_wait("accept", do_accept, &listener, -EAGAIN);

	/* fill the send buffer: the next send waits SO_SNDTIMEO, then EAGAIN */
	fcntl(full[0], F_SETFL, O_NONBLOCK);
	while (send(full[0], pipefd, 1, 0) == 1)
		;
	fcntl(full[0], F_SETFL, 0);
	set_timeout(full[0], SO_SNDTIMEO);
	run_wait("send", do_send, &full[0], -EAGAIN);

	sem_init(&sem, 0, 0);
	run_wait("sem_timedwait", do_sem_timedwait, &sem, -ETIMEDOUT);

	queue = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (queue >= 0) {
		run_wait("msgrcv", do_msgrcv, &queue, 0);
		msgctl(queue, IPC_RMID, NULL);
	} else {
		/* no System V IPC here (a container): say so the same way bare and under lever */
		printf("msgrcv         unavailable\n");
	}
	atomic_store(&waiting_done, 1);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

struct sender {
	pthread_t target;
	long first_ms; /* before the first SIGUSR1 */
};

/* Repeats SIGUSR1 to the poller until its poll ended (a first one may come before it began). */
static void *interrupt_poller(void *arg)
{
	const struct sender *s = arg;
	struct timespec first = {s->first_ms / 1000, s->first_ms % 1000 * 1000000L};
	struct timespec ts = {0, 20 * 1000000L};

	if (s->first_ms)
		nanosleep(&first, NULL);
	while (!atomic_load(&polling_woke)) {
		pthread_kill(s->target, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * Once the program handles a signal (no SA_RESTART), an EINTR caused by it is
 * the program's and must reach it; one that lever's signal caused before the
 * program's came (first_ms later, while a thread computes so that lever's
 * experiments and catch-up requests go on) must not: the poll ends with
 * EINTR only once the program's handler ran.
 */
static void own_signal_interrupts(const char *name, long first_ms)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	struct sender s = {.target = pthread_self(), .first_ms = first_ms};
	pthread_t sender, computer;
	struct pollfd p = {.fd = -1};
	int r, err;

	usr1_seen = 0;
	atomic_store(&polling_woke, 0);
	atomic_store(&waiting_done, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&computer, NULL, compute, NULL);
	pthread_create(&sender, NULL, interrupt_poller, &s);
	r = poll(&p, 1, 10000);
	err = errno;
	atomic_store(&polling_woke, 1);
	atomic_store(&waiting_done, 1);
	pthread_join(sender, NULL);
	pthread_join(computer, NULL);
	printf("%s: %s\n", name,
	       r < 0 && err == EINTR && usr1_seen ? "EINTR"
	       : r < 0 && err == EINTR		  ? "EINTR before the handler ran"
						  : "not interrupted");
	if (!(r < 0 && err == EINTR && usr1_seen))
		failures++;
}

static volatile sig_atomic_t usr2_signo, hup_seen;

static void on_usr2_info(int sig, siginfo_t *info, void *uctx)
{
	(void)sig;
	(void)uctx;
	usr2_signo = info->si_signo;
}

static void on_hup(int sig)
{
	hup_seen = sig;
}

static void on_hup_other(int sig)
{
	(void)sig;
}

#define PROGRAM_FLAGS (SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_ONSTACK)

/* Reading its own action back, the program finds what it installed, as bare. */
static void own_handler_read_back(void)
{
	struct sigaction sa = {.sa_sigaction = on_usr2_info, .sa_flags = SA_SIGINFO | SA_RESTART};
	struct sigaction old;
	bool ok = true;

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGUSR2, &sa, NULL);
	memset(&old, 0, sizeof(old));
	sigaction(SIGUSR2, NULL, &old);
	if (old.sa_sigaction != on_usr2_info ||
	    (old.sa_flags & PROGRAM_FLAGS) != (SA_SIGINFO | SA_RESTART) ||
	    sigismember(&old.sa_mask, SIGHUP) != 1) {
		printf("sigaction read back: another action (flags %#x)\n", old.sa_flags);
		ok = false;
	}
	/* the handler gets its siginfo */
	raise(SIGUSR2);
	if (usr2_signo != SIGUSR2) {
		printf("SA_SIGINFO handler: no siginfo\n");
		ok = false;
	}
	/* installing another returns the old action, the program's own */
	sa.sa_handler = on_hup;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigaction(SIGUSR2, &sa, &old);
	if (old.sa_sigaction != on_usr2_info ||
	    (old.sa_flags & PROGRAM_FLAGS) != (SA_SIGINFO | SA_RESTART)) {
		printf("sigaction: another old action\n");
		ok = false;
	}
	/* SA_RESETHAND: after one run the action is the default again */
	raise(SIGUSR2);
	sigaction(SIGUSR2, NULL, &old);
	if (hup_seen != SIGUSR2 || old.sa_handler != SIG_DFL) {
		printf("SA_RESETHAND: handler %s, action after it %s\n",
		       hup_seen ? "ran" : "did not run",
		       old.sa_handler == SIG_DFL ? "default" : "not the default");
		ok = false;
	}
	/* signal() returns the program's previous handler */
	signal(SIGHUP, on_hup);
	if (signal(SIGHUP, on_hup_other) != on_hup || signal(SIGHUP, SIG_DFL) != on_hup_other) {
		printf("signal(): another previous handler\n");
		ok = false;
	}
	printf("own handler read back: %s\n", ok ? "the program's" : "another");
	if (!ok)
		failures++;
}

int main(void)
{
	pthread_t computer, waiting;

	pthread_create(&computer, NULL, compute, NULL);
	pthread_create(&waiting, NULL, waiter, NULL);
	pthread_join(waiting, NULL);
	pthread_join(computer, NULL);
	own_signal_interrupts("poll, own handler", 0);
	own_signal_interrupts("poll, own signal 300 ms late", 300);
	own_handler_read_back();
	if (failures) {
		printf("%d waits ended early or with an unexpected result\n", failures);
		return 1;
	}
	printf("OK\n");
	return 0;
}
