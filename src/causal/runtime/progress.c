/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Progress points (paper §3.3): source-level points the program counts
 * (Coz's _coz_get_counter ABI, so binaries built against Coz's coz.h work
 * unchanged), breakpoint points counted by the kernel at a line's first
 * instruction (a hardware execute breakpoint if the CPU's fire - checked at
 * start-up - else a uprobe, the kernel's software breakpoint), sampled points
 * (samples in a line), and the end-to-end point.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "causal/runtime/fd_guard.h"
#include "causal/runtime/linemap.h"
#include "causal/runtime/output.h"
#include "causal/runtime/progress.h"
#include "causal/runtime/runtime.h"
#include "causal/runtime/settings.h"
#include "elf/elf.h"

struct progress_point {
	enum progress_kind kind;
	char name[PROGRESS_NAME_MAX];
	coz_counter_t counter; /* throughput, or BEGIN for latency */
	coz_counter_t end;     /* latency END */
	int fd;		       /* hardware breakpoint counter, inherited by all threads */
	int slot;	       /* uprobe: index into thread_state.bp_fd, or -1 */
	char object[PATH_MAX]; /* uprobe: file and offset, opened in every thread */
	uint64_t offset;
	_Atomic uint64_t exited;	  /* uprobe: counts of threads that have exited */
	struct line_info *line;		  /* sampled */
	_Atomic int64_t paused_in_flight; /* latency: in flight x rises of G, ns (in_flight.h) */
};

static struct progress_point points[PROGRESS_MAX_POINTS];
static _Atomic size_t n_points;
static _Atomic int points_lock;
static struct progress_point *end_to_end_point;

static void lock(void)
{
	while (atomic_exchange_explicit(&points_lock, 1, memory_order_acquire))
		;
}

static void unlock(void)
{
	atomic_store_explicit(&points_lock, 0, memory_order_release);
}

/* Finds or adds a point; caller holds the lock. */
static struct progress_point *point_get(enum progress_kind kind, const char *name)
{
	size_t n = atomic_load(&n_points);
	struct progress_point *p;

	for (size_t i = 0; i < n; i++)
		if (points[i].kind == kind && strcmp(points[i].name, name) == 0)
			return &points[i];
	if (n == PROGRESS_MAX_POINTS)
		return NULL;
	p = &points[n];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->fd = -1;
	p->slot = -1;
	str_copy(p->name, name, sizeof(p->name));
	atomic_store_explicit(&n_points, n + 1, memory_order_release);
	return p;
}

static _Atomic int arrival_unknown_thread_warned;

/*
 * Arrival points (load amplification) count per thread: the macro asks once
 * per thread and caches the counter. A thread lever does not know (created
 * before the runtime started, or beyond its table) gets none.
 */
static coz_counter_t *arrival_counter(void)
{
	struct thread_state *t = thread_self();

	if (t)
		return (coz_counter_t *)&t->arrival;
	if (atomic_load(&rt.enabled) && !atomic_exchange(&arrival_unknown_thread_warned, 1))
		LOG_WARN("an arrival point was visited by a thread lever does not track; its "
			 "arrivals are not amplified\n");
	return NULL;
}

/*
 * The calling thread's arrival counter (LEVER_ARRIVAL, and the arrival that
 * every LEVER_BEGIN visit implies). A symbol of its own, not a counter type
 * of _coz_get_counter, so that the macros stay silent no-ops under Coz.
 */
LEVER_EXPORT coz_counter_t *_lever_arrival_counter(void)
{
	return arrival_counter();
}

LEVER_EXPORT coz_counter_t *_coz_get_counter(int type, const char *name)
{
	struct progress_point *p;
	coz_counter_t *c = NULL;

	if (type == COUNTER_ARRIVAL)
		return arrival_counter();
	if (!name)
		return NULL;
	lock();
	if (type == COUNTER_THROUGHPUT) {
		p = point_get(PROGRESS_SOURCE, name);
		c = p ? &p->counter : NULL;
	} else if (type == COUNTER_BEGIN || type == COUNTER_END) {
		p = point_get(PROGRESS_LATENCY, name);
		c = p ? (type == COUNTER_BEGIN ? &p->counter : &p->end) : NULL;
	}
	unlock();
	return c;
}

/* ---- breakpoint points ---- */

static long perf_open(struct perf_event_attr *attr)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_hw_breakpoint(uintptr_t addr)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = addr;
	attr.bp_len = sizeof(long);
	attr.inherit = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)perf_open(&attr);
}

static int uprobe_pmu_type(void)
{
	char buf[32] = "";
	int fd = open("/sys/bus/event_source/devices/uprobe/type", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static int open_uprobe(const char *path, uint64_t offset)
{
	struct perf_event_attr attr;
	int type = uprobe_pmu_type();

	if (type < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	attr.config2 = offset;			  /* probe_offset */
	/*
	 * Not inherited: every thread opens its own (progress_thread_start), so
	 * an inherited copy would count the new thread's visits a second time.
	 */
	return (int)perf_open(&attr);
}

static int n_thread_breakpoints;

static uint64_t read_count(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

__attribute__((noinline)) static int breakpoint_probe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* Do hardware execute breakpoints fire here? (They open but never fire under some hypervisors.) */
static bool hw_breakpoints_fire(void)
{
	static int (*volatile fn)(int) = breakpoint_probe_target;
	int fd = open_hw_breakpoint((uintptr_t)breakpoint_probe_target);
	uint64_t hits;

	if (fd < 0)
		return false;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 3; i++)
		fn(i);
	hits = read_count(fd);
	close(fd);
	return hits >= 3;
}

/*
 * The kernel refuses uprobes on some instructions with ENOTSUPP (524, which
 * has no text in libc): lock-prefixed ones, among others it cannot
 * single-step out of line. Say that, and what to do instead.
 */
#define KERNEL_ENOTSUPP 524

static void warn_uprobe_failed(const char *spec, int err)
{
	if (err == KERNEL_ENOTSUPP)
		LOG_WARN("progress point %s: the kernel cannot place a uprobe on the first "
			 "instruction of this line (a lock-prefixed or other instruction uprobes "
			 "cannot step over); choose another line of the same loop, or mark the "
			 "point with LEVER_PROGRESS in the source\n",
			 spec);
	else
		LOG_WARN("progress point %s: cannot place a breakpoint (%s)\n", spec,
			 strerror(err));
}

static void add_breakpoint_point(const char *spec, bool hw_ok)
{
	char file[PATH_MAX], object[PATH_MAX];
	unsigned line;
	uint64_t file_addr = 0, offset = 0;
	uintptr_t addr;
	struct progress_point *p;
	int fd = -1;

	if (!parse_file_line(spec, file, sizeof(file), &line)) {
		LOG_WARN("ignoring progress point '%s': expected FILE:LINE\n", spec);
		return;
	}
	addr = linemap_find_address(file, line, object, sizeof(object), &file_addr);
	if (!addr) {
		LOG_WARN("progress point %s: no code for this line in the in-scope binaries\n",
			 spec);
		return;
	}
	/*
	 * A hardware breakpoint is inherited by threads created later. A uprobe
	 * cannot be (the kernel then refuses to create threads: clone3 fails
	 * with EINVAL), so it is opened in every thread, counting that thread.
	 */
	if (hw_ok) {
		fd = open_hw_breakpoint(addr);
		if (fd >= 0)
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	if (fd < 0 && !elf_address_to_offset(object, file_addr, &offset)) {
		LOG_WARN("progress point %s: address not in a loadable segment\n", spec);
		return;
	}
	if (fd < 0 && n_thread_breakpoints == LEVER_MAX_THREAD_BREAKPOINTS) {
		LOG_WARN("progress point %s: at most %d uprobe progress points\n", spec,
			 LEVER_MAX_THREAD_BREAKPOINTS);
		return;
	}
	if (fd < 0) { /* check that a uprobe can be placed at all */
		int probe = open_uprobe(object, offset);

		if (probe < 0) {
			warn_uprobe_failed(spec, errno);
			return;
		}
		close(probe);
	}
	lock();
	p = point_get(PROGRESS_BREAKPOINT, spec);
	if (p) {
		p->fd = fd;
		if (fd < 0) {
			p->slot = n_thread_breakpoints++;
			str_copy(p->object, object, sizeof(p->object));
			p->offset = offset;
		}
	}
	unlock();
	LOG_INFO("progress point %s: %s breakpoint at %p\n", spec, fd >= 0 ? "hardware" : "uprobe",
		 (void *)addr);
}

void progress_thread_start(struct thread_state *t)
{
	size_t n = atomic_load(&n_points);

	for (int i = 0; i < LEVER_MAX_THREAD_BREAKPOINTS; i++)
		t->bp_fd[i] = -1;
	for (size_t i = 0; i < n; i++) {
		struct progress_point *p = &points[i];

		if (p->kind != PROGRESS_BREAKPOINT || p->slot < 0)
			continue;
		t->bp_fd[p->slot] = open_uprobe(p->object, p->offset);
		if (t->bp_fd[p->slot] >= 0) {
			fd_guard_protect(&t->bp_fd[p->slot]);
			ioctl(t->bp_fd[p->slot], PERF_EVENT_IOC_ENABLE, 0);
		}
	}
}

static void bp_lock(struct thread_state *t)
{
	while (atomic_exchange_explicit(&t->bp_lock, 1, memory_order_acquire))
		;
}

static void bp_unlock(struct thread_state *t)
{
	atomic_store_explicit(&t->bp_lock, 0, memory_order_release);
}

/*
 * Banking a thread's uprobe counts into exited and summing them (live
 * threads + exited) exclude each other, so that a sum never sees a count
 * twice (read live, then banked) or not at all (banked after exited was
 * read): a total lower than the one before wraps the experiment's delta.
 */
static _Atomic int bank_lock;

static void bank_lock_take(void)
{
	while (atomic_exchange_explicit(&bank_lock, 1, memory_order_acquire))
		;
}

static void bank_lock_release(void)
{
	atomic_store_explicit(&bank_lock, 0, memory_order_release);
}

/* Banks the thread's counts and closes its counters (under its lock: the profiler reads them). */
void progress_thread_stop(struct thread_state *t)
{
	size_t n = atomic_load(&n_points);

	bank_lock_take();
	bp_lock(t);
	for (size_t i = 0; i < n; i++) {
		struct progress_point *p = &points[i];

		if (p->kind != PROGRESS_BREAKPOINT || p->slot < 0 || t->bp_fd[p->slot] < 0)
			continue;
		atomic_fetch_add(&p->exited, read_count(t->bp_fd[p->slot]));
		close(t->bp_fd[p->slot]);
		t->bp_fd[p->slot] = -1;
	}
	bp_unlock(t);
	bank_lock_release();
}

/*
 * In a forked child, for a thread of the parent: closes its uprobe counters
 * (their counts are the parent's). The locks may have been held by a thread
 * that does not exist here: they start free.
 */
void progress_forget_after_fork(struct thread_state *t)
{
	atomic_store(&t->bp_lock, 0);
	for (int i = 0; i < LEVER_MAX_THREAD_BREAKPOINTS; i++) {
		if (t->bp_fd[i] >= 0)
			close(t->bp_fd[i]);
		t->bp_fd[i] = -1;
	}
}

/*
 * First thing in a forked child: the profiler thread (summing counts) or
 * another thread (registering a point) may have held a lock at the fork,
 * and they do not exist here.
 */
void progress_after_fork_child(struct thread_state *self)
{
	atomic_store(&bank_lock, 0);
	atomic_store(&points_lock, 0);
	if (self)
		atomic_store(&self->bp_lock, 0);
}

struct slot_sum {
	int slot;
	uint64_t total;
};

static void add_thread_count(struct thread_state *t, void *ctx)
{
	struct slot_sum *sum = ctx;

	bp_lock(t);
	if (t->bp_fd[sum->slot] >= 0)
		sum->total += read_count(t->bp_fd[sum->slot]);
	bp_unlock(t);
}

/* Exiting threads included: their counts are live until banked. */
static uint64_t thread_breakpoint_count(struct progress_point *p)
{
	struct slot_sum sum = {.slot = p->slot};

	bank_lock_take();
	sum.total = atomic_load(&p->exited);
	threads_foreach_all(add_thread_count, &sum);
	bank_lock_release();
	return sum.total;
}

static void add_sampled_point(const char *spec)
{
	char file[PATH_MAX];
	unsigned line;
	struct line_info *li;
	struct progress_point *p;

	if (!parse_file_line(spec, file, sizeof(file), &line)) {
		LOG_WARN("ignoring sampled progress point '%s': expected FILE:LINE\n", spec);
		return;
	}
	li = linemap_find(file, line);
	if (!li) {
		LOG_WARN("sampled progress point %s: line not found in scope\n", spec);
		return;
	}
	lock();
	p = point_get(PROGRESS_SAMPLED, spec);
	if (p)
		p->line = li;
	unlock();
}

static void foreach_spec(const char *list, void (*fn)(const char *spec, bool flag), bool flag)
{
	char *copy, *save = NULL;

	if (!list || !*list || !(copy = strdup(list)))
		return;
	for (char *tok = strtok_r(copy, "\t", &save); tok; tok = strtok_r(NULL, "\t", &save))
		fn(tok, flag);
	free(copy);
}

static void breakpoint_adapter(const char *spec, bool hw)
{
	add_breakpoint_point(spec, hw);
}

static void sampled_adapter(const char *spec, bool unused)
{
	add_sampled_point(spec);
}

void progress_resolve_command_line(const char *counted_list, const char *sampled_list)
{
	if (counted_list && *counted_list) {
		const char *mode = getenv(LEVER_ENV_BREAKPOINTS);
		bool hw = !(mode && strcmp(mode, "uprobe") == 0) && hw_breakpoints_fire();

		LOG_INFO("hardware breakpoints %s; counted progress points use %s\n",
			 hw ? "fire" : "do not fire", hw ? "them" : "uprobes");
		foreach_spec(counted_list, breakpoint_adapter, hw);
	}
	foreach_spec(sampled_list, sampled_adapter, false);
}

void progress_register_end_to_end(void)
{
	lock();
	end_to_end_point = point_get(PROGRESS_END_TO_END, "end-to-end");
	unlock();
}

void progress_visit_end_to_end(void)
{
	if (end_to_end_point)
		__atomic_add_fetch(&end_to_end_point->counter.count, 1, __ATOMIC_RELAXED);
}

size_t progress_count(void)
{
	return atomic_load(&n_points);
}

static uint64_t point_value(struct progress_point *p)
{
	switch (p->kind) {
	case PROGRESS_BREAKPOINT:
		return p->slot >= 0 ? thread_breakpoint_count(p) : read_count(p->fd);
	case PROGRESS_SAMPLED:
		return p->line ? atomic_load(&p->line->samples) : 0;
	default:
		return __atomic_load_n(&p->counter.count, __ATOMIC_RELAXED);
	}
}

void progress_snapshot_take(struct progress_snapshot *s)
{
	s->n = atomic_load_explicit(&n_points, memory_order_acquire);
	for (size_t i = 0; i < s->n; i++) {
		s->value[i] = point_value(&points[i]);
		s->end_value[i] = __atomic_load_n(&points[i].end.count, __ATOMIC_RELAXED);
	}
}

/* Points registered after snapshot a started counting from zero. */
static uint64_t before(const struct progress_snapshot *a, size_t i, bool end)
{
	if (i >= a->n)
		return 0;
	return end ? a->end_value[i] : a->value[i];
}

/* The numbers in flight now at every point (0 but at latency points). */
static size_t in_flight_now(int64_t *n)
{
	size_t count = atomic_load_explicit(&n_points, memory_order_acquire);

	for (size_t i = 0; i < count; i++)
		n[i] = points[i].kind != PROGRESS_LATENCY
			   ? 0
			   : (int64_t)(__atomic_load_n(&points[i].counter.count, __ATOMIC_RELAXED) -
				       __atomic_load_n(&points[i].end.count, __ATOMIC_RELAXED));
	return count;
}

/* paused_in_flight of every point when the experiment started (the profiler thread's). */
static int64_t paused_at_start[PROGRESS_MAX_POINTS];

static size_t paused_now(int64_t *v)
{
	size_t count = atomic_load_explicit(&n_points, memory_order_acquire);

	for (size_t i = 0; i < count; i++)
		v[i] = atomic_load_explicit(&points[i].paused_in_flight, memory_order_relaxed);
	return count;
}

void progress_in_flight_start(struct in_flight *f, uint64_t now_ns)
{
	in_flight_start(f, now_ns);
	for (size_t i = 0; i < PROGRESS_MAX_POINTS; i++)
		paused_at_start[i] = 0;
	paused_now(paused_at_start);
}

void progress_in_flight_sample(struct in_flight *f, uint64_t now_ns)
{
	int64_t n[PROGRESS_MAX_POINTS];
	size_t count = in_flight_now(n);

	in_flight_step(f, now_ns, n, count);
}

void progress_in_flight_stop(struct in_flight *f, uint64_t pause_ns)
{
	int64_t v[PROGRESS_MAX_POINTS];
	size_t count = paused_now(v);

	for (size_t i = 0; i < count; i++)
		v[i] -= paused_at_start[i];
	in_flight_stop(f, pause_ns, v, count);
}

void progress_note_pause(uint64_t ns)
{
	size_t count = atomic_load_explicit(&n_points, memory_order_acquire);

	for (size_t i = 0; i < count; i++) {
		int64_t n;

		if (points[i].kind != PROGRESS_LATENCY)
			continue;
		n = (int64_t)(__atomic_load_n(&points[i].counter.count, __ATOMIC_RELAXED) -
			      __atomic_load_n(&points[i].end.count, __ATOMIC_RELAXED));
		if (n > 0)
			atomic_fetch_add_explicit(&points[i].paused_in_flight, n * (int64_t)ns,
						  memory_order_relaxed);
	}
}

bool progress_has_latency(void)
{
	size_t n = atomic_load_explicit(&n_points, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (points[i].kind == PROGRESS_LATENCY)
			return true;
	return false;
}

void progress_write_records(const struct progress_snapshot *a, const struct progress_snapshot *b,
			    const struct in_flight *f, int64_t duration,
			    void (*emit)(const char *line, void *ctx), void *ctx)
{
	char line[PROGRESS_NAME_MAX + 160];

	for (size_t i = 0; i < b->n; i++) {
		struct progress_point *p = &points[i];
		uint64_t delta = b->value[i] - before(a, i, false);

		if (p->kind == PROGRESS_LATENCY) {
			uint64_t arrivals = delta;
			uint64_t departures = b->end_value[i] - before(a, i, true);
			int64_t difference = (int64_t)(b->value[i] - b->end_value[i]);

			fmt_buffer(line, sizeof(line), OUTPUT_FORMAT_LATENCY, p->name,
				   (unsigned long long)arrivals, (unsigned long long)departures,
				   (long long)difference,
				   in_flight_value(f, i, duration,
						   (long long)difference * (long long)duration));
		} else {
			fmt_buffer(line, sizeof(line), OUTPUT_FORMAT_THROUGHPUT, p->name,
				   (unsigned long long)delta);
		}
		emit(line, ctx);
	}
}

uint64_t progress_min_delta(const struct progress_snapshot *a, const struct progress_snapshot *b)
{
	uint64_t min = UINT64_MAX;

	for (size_t i = 0; i < b->n; i++) {
		uint64_t d = b->value[i] - before(a, i, false);

		if (points[i].kind == PROGRESS_LATENCY) {
			uint64_t e = b->end_value[i] - before(a, i, true);

			d = d < e ? d : e;
		}
		if (d < min)
			min = d;
	}
	return min == UINT64_MAX ? 0 : min;
}

uint64_t progress_total_visits(void)
{
	size_t n = atomic_load(&n_points);
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += point_value(&points[i]) + points[i].end.count;
	return total;
}
