/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The stack pads registry (runtime/stack.c), driven as init.c and the stub do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "stabilizer/runtime/stabilizer.h"
#include "stabilizer/runtime/stack_pads.h"

struct stabilizer_config stabilizer_cfg;

#define SLOTS 4096

static unsigned char early[SLOTS], late[SLOTS], gone[SLOTS];

static unsigned nonzero(const unsigned char *t)
{
	unsigned n = 0;

	for (int i = 0; i < SLOTS; i++)
		n += t[i] != 0;
	return n;
}

/*
 * One test, in the order things happen in a process: tables registered
 * before start stay 0 until start; start fills them from the seed; later
 * tables are filled on registration; re-randomization redraws; an
 * unregistered table is no longer touched.
 */
static void pads_follow_the_runtime(void **state)
{
	unsigned char before[SLOTS];
	unsigned count[STACK_PAD_MAX_SLOT + 1] = {0};
	int changed = 0;

	lever_stack_pads_register(early, SLOTS);
	lever_stack_pads_register(gone, SLOTS);
	assert_int_equal(nonzero(early), 0);

	stabilizer_cfg.seed = 42;
	assert_int_equal(stack_pads_start(), 0);
	/* 4096 draws of 0..255: nearly all nonzero, every value seen, none too often. */
	assert_true(nonzero(early) > SLOTS * 9 / 10);
	for (int i = 0; i < SLOTS; i++)
		count[early[i]]++;
	for (int v = 0; v <= STACK_PAD_MAX_SLOT; v++) {
		assert_true(count[v] > 0);
		assert_true(count[v] < 48); /* mean 16 */
	}
	assert_memory_not_equal(early, gone, SLOTS);

	lever_stack_pads_register(late, SLOTS);
	assert_true(nonzero(late) > SLOTS * 9 / 10);

	lever_stack_pads_unregister(gone);
	memcpy(before, gone, SLOTS);
	memcpy(late, early, SLOTS);
	stack_pads_rerandomize();
	assert_memory_equal(before, gone, SLOTS);
	for (int i = 0; i < SLOTS; i++)
		changed += late[i] != early[i];
	assert_true(changed > SLOTS * 9 / 10);
}

/* The same seed gives the same pads: a run can be repeated. */
static void seed_decides_the_pads(void **state)
{
	unsigned char a[SLOTS], b[SLOTS];

	/* start again with seed 7 twice; the registry keeps late and early */
	stabilizer_cfg.seed = 7;
	assert_int_equal(stack_pads_start(), 0);
	memcpy(a, early, SLOTS);
	assert_int_equal(stack_pads_start(), 0);
	memcpy(b, early, SLOTS);
	assert_memory_equal(a, b, SLOTS);
	stabilizer_cfg.seed = 8;
	assert_int_equal(stack_pads_start(), 0);
	assert_memory_not_equal(a, early, SLOTS);
}

/* A child of fork (after several starts) can still register and redraw. */
static void fork_keeps_the_registry_usable(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		static unsigned char child_table[64];

		lever_stack_pads_register(child_table, sizeof(child_table));
		stack_pads_rerandomize();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pads_follow_the_runtime),
	    cmocka_unit_test(seed_decides_the_pads),
	    cmocka_unit_test(fork_keeps_the_registry_usable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
