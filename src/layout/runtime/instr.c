/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever-layout-rt.o: the runtime `lever cc --layout` links into a program
 * (spec autocpa.md §8.3 item 3, issue 17; contract instr_format.h). The
 * plugin's code decrements the thread's countdown at every struct field
 * access and calls __lever_layout_access() when it reaches zero.
 *
 * Without LEVER_LAYOUT_TRACE the program runs as built: the first call of
 * each thread sets its countdown to INT_MAX, so the cost is the decrement.
 * With it, each thread logs BURST consecutive accesses out of every PERIOD
 * (site, data address, pc, TSC, tid) into a per-thread buffer of whole
 * records, which goes to the trace with one O_APPEND write() when full, at
 * thread exit and at process exit: a crash loses at most the records still
 * in the buffers. The trace is one file per process ("%p" in the path
 * becomes the pid); a child after fork() stops logging rather than write
 * its parent's records twice.
 *
 * It runs inside somebody else's program: no stdio, no locks, no malloc
 * (buffers are mmap'ed once per thread), one line to stderr when it cannot
 * record, and never a change to what the program computes. A signal
 * handler's field access that lands while its thread is in the hook is not
 * logged (the buffer is the thread's own, without a lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#include "layout/runtime/instr_format.h"

#define BUFFER_RECORDS 2048 /* 64 KiB per thread */

_Static_assert(sizeof(struct layout_instr_site) == LAYOUT_INSTR_ENTRY_SIZE, "site entry");
_Static_assert(sizeof(struct layout_instr_field) == LAYOUT_INSTR_ENTRY_SIZE, "field entry");
_Static_assert(sizeof(struct layout_trace_record) == 32, "trace record");

__thread int __lever_layout_countdown __attribute__((tls_model("initial-exec"))) = 1;

extern char __start_lever_layout_sites[] __attribute__((weak, visibility("hidden")));
extern char __stop_lever_layout_sites[] __attribute__((weak, visibility("hidden")));

struct thread_log {
	struct layout_trace_record *records;
	uint32_t n;
	uint32_t burst_left;
	uint32_t tid;
	int ready;   /* 1: buffer mapped; -1: could not be, logs nothing */
	int in_hook; /* a signal handler's access while the hook runs is not logged */
};

static __thread struct thread_log thread_log __attribute__((tls_model("initial-exec")));

static int trace_fd = -1;
static uint32_t period = LAYOUT_INSTR_DEFAULT_PERIOD, burst = LAYOUT_INSTR_DEFAULT_BURST;
static uintptr_t load_bias;
static pthread_key_t exit_key;
static int recording; /* read on the slow path only */

void __lever_layout_access(const void *site, const void *addr);

static void say(const char *what, const char *detail)
{
	static const char prefix[] = "lever layout: ";

	if (write(2, prefix, sizeof(prefix) - 1) < 0 || write(2, what, strlen(what)) < 0)
		return;
	if (detail && (write(2, ": ", 2) < 0 || write(2, detail, strlen(detail)) < 0))
		return;
	if (write(2, "\n", 1) < 0)
		return;
}

static int write_all(int fd, const void *data, size_t size)
{
	const char *p = data;

	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

static void flush_log(struct thread_log *log)
{
	if (log->ready != 1 || !log->n || trace_fd < 0)
		return;
	if (write_all(trace_fd, log->records, log->n * sizeof(*log->records)) < 0) {
		int saved = errno;

		say("cannot write the trace; recording stops", strerror(saved));
		recording = 0;
	}
	log->n = 0;
}

static void thread_exit(void *arg)
{
	flush_log(arg);
}

static uint32_t parse_count(const char *name, uint32_t fallback)
{
	const char *text = getenv(name);
	char *end;
	unsigned long v;

	if (!text || !*text)
		return fallback;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || *end || v == 0 || v > INT_MAX) {
		say("ignoring a value that is not a count from 1 to 2^31-1", name);
		return fallback;
	}
	return (uint32_t)v;
}

/* The trace path with every "%p" replaced by the pid. */
static int expand_path(const char *pattern, char *out, size_t size)
{
	char pid[16];
	size_t used = 0;
	int len = 0;
	unsigned long v = (unsigned long)getpid();

	do
		pid[len++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			for (int i = len - 1; i >= 0; i--) {
				if (used + 1 >= size)
					return -1;
				out[used++] = pid[i];
			}
			p++;
			continue;
		}
		if (used + 1 >= size)
			return -1;
		out[used++] = *p;
	}
	out[used] = '\0';
	return 0;
}

static int main_program_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1; /* the first object is the program */
}

static void stop_in_child(void)
{
	recording = 0;
	thread_log.n = 0;
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;
}

static void flush_at_exit(void)
{
	flush_log(&thread_log);
}

__attribute__((constructor)) static void layout_instr_init(void)
{
	const char *pattern = getenv(LAYOUT_INSTR_ENV_TRACE);
	struct layout_trace_header header = {.version = LAYOUT_TRACE_VERSION};
	char path[4096];

	if (!pattern || !*pattern)
		return;
	period = parse_count(LAYOUT_INSTR_ENV_PERIOD, LAYOUT_INSTR_DEFAULT_PERIOD);
	burst = parse_count(LAYOUT_INSTR_ENV_BURST, LAYOUT_INSTR_DEFAULT_BURST);
	if (burst > period)
		burst = period;
	if (expand_path(pattern, path, sizeof(path)) < 0) {
		say("the trace path is too long; not recording", NULL);
		return;
	}
	trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (trace_fd < 0) {
		int saved = errno;

		say("cannot create the trace; not recording", strerror(saved));
		return;
	}
	dl_iterate_phdr(main_program_bias, &load_bias);
	memcpy(header.magic, LAYOUT_TRACE_MAGIC, sizeof(header.magic));
	header.record_size = sizeof(struct layout_trace_record);
	header.period = period;
	header.burst = burst;
	header.pid = (uint32_t)getpid();
	header.sites = (uint64_t)(__stop_lever_layout_sites - __start_lever_layout_sites) /
		       LAYOUT_INSTR_ENTRY_SIZE;
	if (write_all(trace_fd, &header, sizeof(header)) < 0 ||
	    pthread_key_create(&exit_key, thread_exit) != 0) {
		say("cannot start the trace; not recording", NULL);
		close(trace_fd);
		trace_fd = -1;
		return;
	}
	pthread_atfork(NULL, NULL, stop_in_child);
	atexit(flush_at_exit);
	recording = 1;
}

static int start_thread_log(struct thread_log *log)
{
	void *p = mmap(NULL, BUFFER_RECORDS * sizeof(*log->records), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		log->ready = -1;
		return -1;
	}
	log->records = p;
	log->tid = (uint32_t)gettid();
	log->ready = 1;
	pthread_setspecific(exit_key, log);
	return 0;
}

void __lever_layout_access(const void *site, const void *addr)
{
	struct thread_log *log = &thread_log;
	struct layout_trace_record *r;

	if (log->in_hook) {
		__lever_layout_countdown = 1;
		return;
	}
	log->in_hook = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!recording || (!log->ready && start_thread_log(log) < 0) || log->ready < 0) {
		__lever_layout_countdown = INT_MAX;
		log->in_hook = 0;
		return;
	}
	if (!log->burst_left)
		log->burst_left = burst;
	r = &log->records[log->n++];
	r->addr = (uintptr_t)addr;
	r->pc = (uintptr_t)__builtin_return_address(0) - load_bias;
	r->time = __rdtsc();
	r->site =
	    (uint32_t)(((const char *)site - __start_lever_layout_sites) / LAYOUT_INSTR_ENTRY_SIZE);
	r->tid = log->tid;
	if (log->n == BUFFER_RECORDS)
		flush_log(log);
	/*
	 * The call comes when the countdown reaches 0, so a countdown of n
	 * logs the n-th access from now: the next one while the burst lasts,
	 * then the one after PERIOD - BURST skipped accesses.
	 */
	if (--log->burst_left)
		__lever_layout_countdown = 1;
	else
		__lever_layout_countdown = (int)(period - burst + 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	log->in_hook = 0;
}
