/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread sampling and sample processing (paper §3.1, §3.4.2).
 *
 * perf sampler: a task-clock event per thread (1 ms of the thread's CPU time,
 * IP + user call chain into a ring buffer) and a second task-clock event
 * whose overflow every batch (10 ms) sends LEVER_SIGNAL to that thread; the
 * handler processes the batch in the sampled thread and then pays delays.
 *
 * timer sampler (fallback, or --sampler=timer): a POSIX CPU-time timer per
 * thread sends LEVER_SIGNAL every period; the handler records the interrupted
 * IP from the ucontext and walks frame pointers, and processes the buffer
 * every batch. POSIX CPU timers are tick based, so a signal may stand for
 * several periods: its overrun count weights the sample.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "causal/runtime/linemap.h"
#include "causal/runtime/progress.h"
#include "causal/runtime/fd_guard.h"
#include "causal/runtime/runtime.h"

#define RING_DATA_PAGES 8

char lever_timer_marker, lever_request_marker, lever_poke_marker;

/*
 * The descriptor budget (issue 14 point 3). The perf sampler holds two
 * descriptors per thread; a program with hundreds of threads would lose
 * that many of its own to lever (400 threads under `ulimit -n 1024` left it
 * 216 files of 600). lever's perf descriptors are capped at a sixteenth of
 * the soft RLIMIT_NOFILE in force when a thread starts (64 of 1024: 32
 * threads); threads past it are sampled by the timer sampler, which needs
 * none. The profile says so (rt.timer_fallback_threads, written in the
 * runtime records) and -v tells once.
 */
#define PERF_FDS_PER_THREAD 2
#define PERF_FD_SHARE	    16

static _Atomic int perf_fds_held;

static int perf_fd_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return INT_MAX;
	return (int)(rl.rlim_cur / PERF_FD_SHARE);
}

/* Takes the perf sampler's share of descriptors for a thread, or says there is none left. */
static bool perf_fds_take(void)
{
	int cap = perf_fd_cap();

	if (atomic_fetch_add(&perf_fds_held, PERF_FDS_PER_THREAD) + PERF_FDS_PER_THREAD <= cap)
		return true;
	atomic_fetch_sub(&perf_fds_held, PERF_FDS_PER_THREAD);
	if (atomic_fetch_add(&rt.timer_fallback_threads, 1) == 0)
		LOG_INFO("more than %d threads sampled at once: the perf sampler would take more "
			 "than %d of the program's %d descriptors; further threads use the timer "
			 "sampler\n",
			 cap / PERF_FDS_PER_THREAD, cap, cap * PERF_FD_SHARE);
	return false;
}

static _Atomic int perf_refused;
static _Atomic int perf_errno;
static size_t page_size;

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static bool own_signal_to_thread(int fd, pid_t tid)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};

	return fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) == 0 &&
	       fcntl(fd, F_SETSIG, LEVER_SIGNAL) == 0 && fcntl(fd, F_SETOWN_EX, &owner) == 0;
}

static void close_perf(struct thread_state *t)
{
	if (t->ring) {
		munmap(t->ring, t->ring_size);
		t->ring = NULL;
	}
	if (t->perf_fd >= 0)
		close(t->perf_fd);
	if (t->batch_fd >= 0)
		close(t->batch_fd);
	t->perf_fd = -1;
	t->batch_fd = -1;
	if (t->perf_share) {
		atomic_fetch_sub(&perf_fds_held, PERF_FDS_PER_THREAD);
		t->perf_share = false;
	}
}

static bool perf_start(struct thread_state *t)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = rt.cfg.period_ns;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.exclude_idle = 1;
	attr.exclude_callchain_kernel = 1;
	attr.sample_max_stack = LEVER_MAX_CALLCHAIN;
	t->perf_fd = (int)perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (t->perf_fd < 0) {
		atomic_store(&perf_errno, errno);
		return false;
	}
	for (int pages = RING_DATA_PAGES; pages >= 1; pages /= 2) {
		t->ring_size = (size_t)(pages + 1) * page_size;
		t->ring =
		    mmap(NULL, t->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->perf_fd, 0);
		if (t->ring != MAP_FAILED)
			break;
		t->ring = NULL;
	}
	if (!t->ring) {
		atomic_store(&perf_errno, errno);
		close_perf(t);
		return false;
	}
	/* The batch clock: counts the same task clock, signals every batch. */
	attr.sample_period = rt.cfg.period_ns * rt.cfg.batch;
	attr.sample_type = 0;
	attr.wakeup_events = 1;
	t->batch_fd = (int)perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (t->batch_fd < 0 || !own_signal_to_thread(t->batch_fd, t->tid)) {
		atomic_store(&perf_errno, errno);
		close_perf(t);
		return false;
	}
	fd_guard_protect(&t->perf_fd);
	fd_guard_protect(&t->batch_fd);
	ioctl(t->perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(t->batch_fd, PERF_EVENT_IOC_ENABLE, 0);
	return true;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The timer restarts a full period: what its samples covered starts again. */
static void timer_note_armed(struct thread_state *t)
{
	t->timer_armed_cpu_ns = thread_cpu_ns();
	t->timer_periods = 0;
}

static bool timer_start(struct thread_state *t)
{
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = LEVER_SIGNAL;
	sev.sigev_value.sival_ptr = &lever_timer_marker;
	sev._sigev_un._tid = t->tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) != 0)
		return false;
	its.it_interval.tv_sec = (time_t)(rt.cfg.period_ns / NSEC_PER_SEC);
	its.it_interval.tv_nsec = (long)(rt.cfg.period_ns % NSEC_PER_SEC);
	its.it_value = its.it_interval;
	timer_note_armed(t);
	if (timer_settime(t->timer, 0, &its, NULL) != 0) {
		timer_delete(t->timer);
		return false;
	}
	t->timer_armed = true;
	return true;
}

bool sampler_start(struct thread_state *t)
{
	if (rt.cfg.no_sampler)
		return true;
	if (!page_size)
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	t->perf_share = false;
	if (!rt.cfg.force_timer && !atomic_load(&perf_refused) && perf_fds_take()) {
		t->perf_share = true;
		if (perf_start(t))
			return true;
		close_perf(t);
		/* perf_event_open refused (container, paranoid level...): fall back. */
		if (!atomic_exchange(&perf_refused, 1))
			LOG_WARN("perf_event_open refused (%s); using the timer sampler\n",
				 strerror(atomic_load(&perf_errno)));
		rt.sampler_name = "timer";
	}
	return timer_start(t);
}

/* In a forked child, for a thread of the parent: its descriptors and ring, not its timer. */
void sampler_forget_after_fork(struct thread_state *t)
{
	close_perf(t);
	t->timer_armed = false; /* POSIX timers are not inherited */
}

void sampler_stop(struct thread_state *t)
{
	if (t->timer_armed) {
		timer_delete(t->timer);
		t->timer_armed = false;
	}
	close_perf(t);
}

void sampler_pause(struct thread_state *t)
{
	struct itimerspec zero = {{0, 0}, {0, 0}};

	if (t->perf_fd >= 0) {
		ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(t->batch_fd, PERF_EVENT_IOC_DISABLE, 0);
	} else if (t->timer_armed) {
		timer_settime(t->timer, 0, &zero, NULL);
	}
}

void sampler_resume(struct thread_state *t)
{
	struct itimerspec its;

	if (t->perf_fd >= 0) {
		ioctl(t->perf_fd, PERF_EVENT_IOC_ENABLE, 0);
		ioctl(t->batch_fd, PERF_EVENT_IOC_ENABLE, 0);
	} else if (t->timer_armed) {
		its.it_interval.tv_sec = (time_t)(rt.cfg.period_ns / NSEC_PER_SEC);
		its.it_interval.tv_nsec = (long)(rt.cfg.period_ns % NSEC_PER_SEC);
		its.it_value = its.it_interval;
		timer_note_armed(t);
		timer_settime(t->timer, 0, &its, NULL);
	}
}

/*
 * Attribute one sample (leaf IP first, then return addresses - 1) and account
 * for it: whole-run line counts, the running experiment, line selection.
 */
/* Remembers when the earliest sample of the run was taken (for -v). */
static void note_sample_time(uint64_t ns)
{
	uint64_t first = atomic_load_explicit(&rt.first_sample_ns, memory_order_relaxed);

	while ((!first || ns < first) &&
	       !atomic_compare_exchange_weak(&rt.first_sample_ns, &first, ns))
		;
}

/* An arriving thread ran this line: AMP speeds its whole timeline up. */
static void note_arrival_thread_line(struct line_info *li, uint32_t weight)
{
	atomic_fetch_add_explicit(&li->arrival_samples, weight, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt.arrival_lines, weight, memory_order_relaxed);
}

/*
 * The virtual speedup of a selected-line sample taken at sample_ns (0: time
 * unknown) standing for weight periods that ended then: only the part of
 * those periods within the experiment counts, from its start to its end
 * (0 while it runs). A batch processed just after the start holds samples of
 * up to a batch (10 ms) before it, and with experiments of a few ms their
 * pauses made the effective duration negative; a batch processed while the
 * experiment ends (the catch-up request) holds samples from within it.
 */
static uint64_t sample_speedup_ns(uint64_t sample_ns, uint32_t weight)
{
	uint64_t start = atomic_load_explicit(&rt.experiment_start_ns, memory_order_relaxed);
	uint64_t end = atomic_load_explicit(&rt.experiment_end_ns, memory_order_relaxed);
	uint64_t d = atomic_load_explicit(&rt.delay_ns, memory_order_relaxed);
	uint64_t covered = (uint64_t)weight * rt.cfg.period_ns;
	uint64_t lo, hi;

	if (!sample_ns)
		return weight * d;
	lo = sample_ns > covered ? sample_ns - covered : 0;
	if (lo < start)
		lo = start;
	hi = end && end < sample_ns ? end : sample_ns;
	return hi > lo ? (hi - lo) * d / rt.cfg.period_ns : 0;
}

static void account_sample(struct thread_state *t, uintptr_t ip, const uintptr_t *chain,
			   size_t depth, uint32_t weight, uint64_t sample_ns)
{
	struct line_info *li = linemap_lookup(ip);
	int state;

	for (size_t i = 0; !li && i < depth; i++)
		if (chain[i] > 1)
			li = linemap_lookup(chain[i] - 1);
	atomic_fetch_add_explicit(&rt.total_samples, weight, memory_order_relaxed);
	t->last_line = li;
	if (!li)
		return;
	atomic_fetch_add_explicit(&rt.in_scope_samples, weight, memory_order_relaxed);
	atomic_fetch_add_explicit(&li->samples, weight, memory_order_relaxed);
	if (atomic_load_explicit(&t->arrival.count, memory_order_relaxed))
		note_arrival_thread_line(li, weight);
	else
		atomic_fetch_add_explicit(&li->other_samples, weight, memory_order_relaxed);
	state = atomic_load_explicit(&rt.active, memory_order_acquire);
	/* ending: samples of known time still count for their part before the end */
	if (state == EXPERIMENT_RUNNING || (state == EXPERIMENT_ENDING && sample_ns)) {
		if (li == atomic_load_explicit(&rt.selected, memory_order_relaxed)) {
			delays_sync_epoch(t);
			t->local += sample_speedup_ns(sample_ns, weight);
		}
	} else if (state == EXPERIMENT_IDLE) {
		struct line_info *none = NULL;

		if (!atomic_load_explicit(&rt.next_line, memory_order_relaxed))
			atomic_compare_exchange_strong(&rt.next_line, &none, li);
	}
}

static void process_perf_ring(struct thread_state *t)
{
	struct perf_event_mmap_page *hdr = t->ring;
	unsigned char *data = (unsigned char *)t->ring + page_size;
	uint64_t size = t->ring_size - page_size;
	uint64_t head = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = hdr->data_tail;
	uint64_t buf[LEVER_MAX_CALLCHAIN + 8];

	while (tail < head) {
		struct perf_event_header eh;
		size_t len;

		for (size_t i = 0; i < sizeof(eh); i++)
			((unsigned char *)&eh)[i] = data[(tail + i) % size];
		if (eh.size < sizeof(eh))
			break;
		len = eh.size;
		if (eh.type == PERF_RECORD_SAMPLE && len <= sizeof(buf) + sizeof(eh)) {
			/* copy out, unwrapping a record that crosses the end */
			unsigned char *dst = (unsigned char *)buf;

			for (size_t i = sizeof(eh); i < len; i++)
				dst[i - sizeof(eh)] = data[(tail + i) % size];
			uint64_t nr = buf[2]; /* layout: ip, time, nr, ips[nr] */
			uintptr_t chain[LEVER_MAX_CALLCHAIN];
			size_t depth = 0;

			if (nr > LEVER_MAX_CALLCHAIN + 4)
				nr = 0;
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t a = buf[3 + i];

				if (a >= (uint64_t)PERF_CONTEXT_MAX)
					continue; /* context marker */
				if (depth < LEVER_MAX_CALLCHAIN)
					chain[depth++] = (uintptr_t)a;
			}
			note_sample_time(buf[1]);
			/* chain[0] repeats the leaf IP */
			if (depth && chain[0] == buf[0])
				account_sample(t, (uintptr_t)buf[0], chain + 1, depth - 1, 1,
					       buf[1]);
			else
				account_sample(t, (uintptr_t)buf[0], chain, depth, 1, buf[1]);
		} else if (eh.type == PERF_RECORD_LOST) {
			uint64_t lost = 0;

			for (size_t i = 0; i < 8; i++)
				((unsigned char *)&lost)[i] = data[(tail + 16 + i) % size];
			atomic_fetch_add_explicit(&rt.lost_samples, lost, memory_order_relaxed);
		}
		tail += len;
	}
	__atomic_store_n(&hdr->data_tail, tail, __ATOMIC_RELEASE);
}

static void process_timer_buffer(struct thread_state *t)
{
	for (unsigned i = 0; i < t->tbuf_n; i++) {
		struct raw_sample *s = &t->tbuf[i];

		account_sample(t, s->ip, s->chain, s->depth, s->weight, s->ns);
	}
	t->tbuf_n = 0;
	t->tbuf_weight = 0;
}

void samples_process(struct thread_state *t)
{
	if (!t)
		return;
	if (t->ring)
		process_perf_ring(t);
	else
		process_timer_buffer(t);
	delays_catch_up(t);
}

/*
 * Task-clock time since the thread's last sample (its period's elapsed part).
 * perf's count is exact. A POSIX CPU timer is not: it expires only at a
 * scheduler tick (4 ms at HZ=250), so timer_gettime says "1 ns left" for up
 * to a tick after its expiry, and a signal then stands for several periods.
 * Its tail is the thread's CPU time since the timer was armed less the
 * periods its delivered samples stood for.
 */
static uint64_t sampler_residual_ns(struct thread_state *t)
{
	uint64_t count, covered, now;

	if (t->perf_fd >= 0)
		return read(t->perf_fd, &count, sizeof(count)) == sizeof(count)
			   ? count % rt.cfg.period_ns
			   : 0;
	if (!t->timer_armed)
		return 0;
	now = thread_cpu_ns();
	covered = t->timer_armed_cpu_ns + t->timer_periods * rt.cfg.period_ns;
	/* a signal pending across a pause may cover more than the new arming */
	return now > covered ? now - covered : 0;
}

/*
 * The part of a period a thread runs after its last sample never becomes a
 * sample: on average half a period per thread, all of it at the thread's
 * end. For a short-lived thread ending in the selected line (a worker per
 * round, 12 ms at a 1 ms period) that is 4% of the line's time that would
 * get no virtual speedup, and the prediction comes out low. At exit, that
 * time counts as a fraction of a sample of the line of the last sample (the
 * line the thread was most likely still in).
 */
void samples_account_tail(struct thread_state *t)
{
	uint64_t residual, now, start;

	if (!t || !t->last_line || rt.cfg.no_sampler)
		return;
	if (atomic_load_explicit(&rt.active, memory_order_acquire) != EXPERIMENT_RUNNING ||
	    t->last_line != atomic_load_explicit(&rt.selected, memory_order_relaxed))
		return;
	residual = sampler_residual_ns(t);
	/* the tail may have begun before the experiment: only its part since counts */
	now = time_monotonic_ns();
	start = atomic_load_explicit(&rt.experiment_start_ns, memory_order_relaxed);
	if (now <= start)
		return;
	if (residual > now - start)
		residual = now - start;
	if (!residual)
		return;
	delays_sync_epoch(t);
	t->local +=
	    residual * atomic_load_explicit(&rt.delay_ns, memory_order_relaxed) / rt.cfg.period_ns;
}

/* Frame-pointer walk within this thread's stack. */
static uint32_t walk_frames(struct thread_state *t, uintptr_t fp, uintptr_t *chain, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && fp >= t->stack_lo && fp + 16 <= t->stack_hi && (fp & 7) == 0) {
		uintptr_t next = ((uintptr_t *)fp)[0];
		uintptr_t ret = ((uintptr_t *)fp)[1];

		if (!ret)
			break;
		chain[n++] = ret;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

static void record_timer_sample(struct thread_state *t, siginfo_t *info, void *uctx)
{
	ucontext_t *uc = uctx;
	struct raw_sample *s;

	if (t->tbuf_n == LEVER_TIMER_BUF)
		process_timer_buffer(t);
	s = &t->tbuf[t->tbuf_n++];
	s->ns = time_monotonic_ns();
	if (!atomic_load_explicit(&rt.first_sample_ns, memory_order_relaxed))
		note_sample_time(s->ns);
	s->ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	s->weight = 1 + (uint32_t)(info->si_overrun > 0 ? info->si_overrun : 0);
	s->depth = t->stack_hi ? walk_frames(t, (uintptr_t)uc->uc_mcontext.gregs[REG_RBP], s->chain,
					     ARRAY_SIZE(s->chain))
			       : 0;
	t->tbuf_weight += s->weight;
}

static bool signal_is_lever(struct thread_state *t, siginfo_t *info)
{
	if (info->si_code == SI_TIMER)
		return info->si_value.sival_ptr == &lever_timer_marker;
	if (info->si_code == SI_QUEUE)
		return info->si_pid == rt.pid &&
		       (info->si_value.sival_ptr == &lever_request_marker ||
			info->si_value.sival_ptr == &lever_poke_marker);
	if (info->si_code == POLL_IN || info->si_code == POLL_HUP || info->si_code == POLL_MSG ||
	    info->si_code == POLL_ERR || info->si_code == POLL_OUT || info->si_code == POLL_PRI)
		return t && (info->si_fd == t->batch_fd || info->si_fd == t->perf_fd);
	return false;
}

static void lever_signal_handler(int sig, siginfo_t *info, void *uctx)
{
	struct thread_state *t = thread_self();
	int saved_errno = errno;

	if (!signal_is_lever(t, info)) {
		/*
		 * The program's own SIGPROF (kill, sigqueue, its timers) goes to
		 * its handler. A perf overflow signal can outlive the thread's
		 * perf fds by a moment: drop those, never forward them.
		 */
		if (!(info->si_code >= POLL_IN && info->si_code <= POLL_HUP))
			signals_forward(sig, info, uctx);
		errno = saved_errno;
		return;
	}
	if (info->si_code == SI_QUEUE && info->si_value.sival_ptr == &lever_poke_marker) {
		signals_poked(uctx);
		errno = saved_errno;
		return;
	}
	if (!t || t->exiting || atomic_load(&rt.shutting_down) > 1) {
		errno = saved_errno;
		return;
	}
	if (info->si_code == SI_TIMER) {
		/* the periods are past either way: not part of the thread's tail */
		t->timer_periods += 1 + (uint64_t)(info->si_overrun > 0 ? info->si_overrun : 0);
		/* the buffer belongs to the interrupted bookkeeping: drop this tick */
		if (t->busy) {
			errno = saved_errno;
			return;
		}
		record_timer_sample(t, info, uctx);
		if (t->tbuf_weight < rt.cfg.batch) {
			errno = saved_errno;
			return;
		}
	}
	if (t->busy) {
		t->pending = 1;
	} else {
		t->busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		samples_process(t);
		atomic_signal_fence(memory_order_seq_cst);
		t->busy = 0;
	}
	if (info->si_code == SI_QUEUE)
		atomic_store(&t->ack, atomic_load(&rt.end_request));
	errno = saved_errno;
}

void sampler_install_handler(void)
{
	int (*real_sigaction)(int, const struct sigaction *, struct sigaction *) =
	    real_symbol("sigaction", NULL);
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = lever_signal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (real_sigaction)
		real_sigaction(LEVER_SIGNAL, &sa, NULL);
	rt.sampler_name = rt.cfg.no_sampler ? "none" : rt.cfg.force_timer ? "timer" : "perf";
}

void signals_unblock_ours(void)
{
	int (*real_sigmask)(int, const sigset_t *, sigset_t *) =
	    real_symbol("pthread_sigmask", NULL);
	sigset_t ours, old;

	if (!real_sigmask)
		return;
	sigemptyset(&ours);
	sigaddset(&ours, LEVER_SIGNAL);
	if (real_sigmask(SIG_UNBLOCK, &ours, &old) == 0 && sigismember(&old, LEVER_SIGNAL))
		signals_inherit_view(true); /* e.g. inherited blocked across exec */
}

static bool send_marked(struct thread_state *t, char *marker)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	info.si_signo = LEVER_SIGNAL;
	info.si_code = SI_QUEUE;
	info.si_pid = rt.pid;
	info.si_uid = getuid();
	info.si_value.sival_ptr = marker;
	return syscall(SYS_rt_tgsigqueueinfo, rt.pid, t->tid, LEVER_SIGNAL, &info) == 0;
}

/* Ask a thread to process its samples and pay its delays now. */
bool sampler_request_catch_up(struct thread_state *t)
{
	return send_marked(t, &lever_request_marker);
}

bool sampler_poke(struct thread_state *t)
{
	return send_marked(t, &lever_poke_marker);
}
