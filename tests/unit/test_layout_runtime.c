/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever-layout-rt.o (src/layout/runtime/instr.c, linked into this test):
 * the code below decrements the countdown and calls the hook as the GCC
 * plugin's code does. A child (this binary again, with LEVER_LAYOUT_TRACE,
 * PERIOD 4 and BURST 2) makes known accesses from its main thread and two
 * others; the parent reads the trace: the header, exactly the accesses
 * 1, 2, 5, 6, 9, 10, ... of each thread, whole buffers flushed when full,
 * at thread exit and at exit, site indexes, tids, pcs and times in order.
 * Without LEVER_LAYOUT_TRACE the first call sets the countdown out of reach.
 */
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "layout/runtime/instr_format.h"

extern __thread int __lever_layout_countdown;
void __lever_layout_access(const void *site, const void *addr);

__attribute__((section(LAYOUT_INSTR_SITES), used,
	       aligned(8))) static const struct layout_instr_site sites[3] = {
    {.struct_name = "s", .field_name = "main"},
    {.struct_name = "s", .field_name = "one"},
    {.struct_name = "s", .field_name = "two"},
};

#define MAIN_ACCESSES	12
#define THREAD_ACCESSES 5000 /* 2500 logged: more than one 2048-record buffer */
#define BASE(site)	(0x100000ul * ((site) + 1))

/* What the plugin's code does before an access. */
static void access_site(unsigned site, unsigned long i)
{
	if (--__lever_layout_countdown == 0)
		__lever_layout_access(&sites[site], (const void *)(BASE(site) + 8 * i));
}

static void *thread_main(void *arg)
{
	unsigned site = (unsigned)(uintptr_t)arg;

	for (unsigned long i = 0; i < THREAD_ACCESSES; i++)
		access_site(site, i);
	return NULL;
}

static int child(void)
{
	pthread_t t1, t2;

	for (unsigned long i = 0; i < MAIN_ACCESSES; i++)
		access_site(0, i);
	if (pthread_create(&t1, NULL, thread_main, (void *)1) ||
	    pthread_create(&t2, NULL, thread_main, (void *)2))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}

static char trace[4096];

/* Logged with PERIOD 4, BURST 2: accesses 1, 2, 5, 6, ... (i = 0, 1, 4, 5, ...). */
static bool logged(unsigned long i)
{
	return i % 4 < 2;
}

static void check_thread(const struct layout_trace_record *r, size_t n, unsigned site,
			 unsigned long accesses)
{
	unsigned long i = 0;
	size_t seen = 0;
	uint32_t tid = 0;
	uint64_t time = 0;

	for (size_t k = 0; k < n; k++) {
		if (r[k].site != site)
			continue;
		while (!logged(i))
			i++;
		assert_int_equal(r[k].addr, BASE(site) + 8 * i);
		assert_true(r[k].pc != 0);
		assert_true(r[k].time >= time);
		if (!tid)
			tid = r[k].tid;
		assert_int_equal(r[k].tid, tid);
		time = r[k].time;
		i++;
		seen++;
	}
	assert_int_equal(seen, accesses / 2);
}

static void test_trace(void **state)
{
	char *argv[] = {"/proc/self/exe", "child", NULL};
	struct layout_trace_header h;
	struct layout_trace_record *r;
	size_t n;
	int status;
	pid_t pid;
	FILE *f;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/test_layout_runtime.%d.trace",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv(LAYOUT_INSTR_ENV_TRACE, trace, 1);
		setenv(LAYOUT_INSTR_ENV_PERIOD, "4", 1);
		setenv(LAYOUT_INSTR_ENV_BURST, "2", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	f = fopen(trace, "rb");
	assert_non_null(f);
	assert_int_equal(fread(&h, sizeof(h), 1, f), 1);
	assert_memory_equal(h.magic, LAYOUT_TRACE_MAGIC, 8);
	assert_int_equal(h.version, LAYOUT_TRACE_VERSION);
	assert_int_equal(h.record_size, sizeof(*r));
	assert_int_equal(h.period, 4);
	assert_int_equal(h.burst, 2);
	assert_int_equal(h.pid, pid);
	assert_int_equal(h.sites, 3);
	n = MAIN_ACCESSES / 2 + THREAD_ACCESSES;
	r = calloc(n + 1, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(fread(r, sizeof(*r), n + 1, f), n); /* nothing more */
	fclose(f);
	unlink(trace);
	check_thread(r, n, 0, MAIN_ACCESSES);
	check_thread(r, n, 1, THREAD_ACCESSES);
	check_thread(r, n, 2, THREAD_ACCESSES);
	free(r);
}

/* Not recording: the first call moves the countdown out of reach. */
static void test_not_recording(void **state)
{
	(void)state;
	assert_null(getenv(LAYOUT_INSTR_ENV_TRACE));
	assert_int_equal(__lever_layout_countdown, 1);
	access_site(0, 0);
	assert_int_equal(__lever_layout_countdown, INT_MAX);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_recording),
	    cmocka_unit_test(test_trace),
	};

	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child();
	unsetenv(LAYOUT_INSTR_ENV_TRACE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
