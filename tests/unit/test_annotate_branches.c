/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Branch outcomes (runtime/branches.h, src/annotate/plan_branches.c): the
 * decoder and the condition evaluator that the SIGTRAP handler of
 * liblever-annotate.so uses, checked against the processor itself (every
 * jcc in both forms, jrcxz, jecxz and the loops, run on every combination
 * of the five flags they read, with rcx 0, 1, 2 and 2^32); and the planner's list
 * of the branches of tests/programs/annotate/probe_branches.c, whose
 * assembly function has five known ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "annotate/annotate.h"
#include "annotate/runtime/branches.h"

static uint8_t *code;

/* The processor's decision: code that loads flags and rcx, runs the branch, says if it jumped. */
static bool hardware_taken(const uint8_t *branch, size_t len, uint64_t flags, uint64_t rcx)
{
	static const uint8_t head[] = {0x48, 0x89, 0xf1,		    /* mov %rsi, %rcx */
				       0x57,				    /* push %rdi */
				       0x9d};				    /* popfq */
	static const uint8_t tail[] = {0x31, 0xc0, 0xc3,		    /* xor %eax,%eax; ret */
				       0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3}; /* mov $1,%eax; ret */
	uint8_t *p = code;
	int (*fn)(uint64_t, uint64_t);

	memcpy(p, head, sizeof(head));
	p += sizeof(head);
	memcpy(p, branch, len);
	p += len;
	memcpy(p, tail, sizeof(tail));
	__builtin___clear_cache((char *)code, (char *)p + sizeof(tail));
	*(void **)&fn = code;
	return fn(flags, rcx) != 0;
}

static int setup(void **state)
{
	(void)state;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	return code == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(code, 4096);
	return 0;
}

static const uint32_t flag_bits[] = {ANN_EFLAGS_CF, ANN_EFLAGS_PF, ANN_EFLAGS_ZF, ANN_EFLAGS_SF,
				     ANN_EFLAGS_OF};

static void check_one(const uint8_t *bytes, size_t len, uint8_t want_cond)
{
	struct ann_branch_insn d;

	assert_true(ann_branch_decode(bytes, len, &d));
	assert_int_equal(d.len, len);
	assert_int_equal(d.cond, want_cond);
	assert_int_equal(d.rel, 3); /* every form below jumps over the 3-byte "not taken" */
	for (unsigned combo = 0; combo < 32; combo++) {
		uint64_t flags = 0x2; /* bit 1 is always set */

		for (unsigned b = 0; b < 5; b++)
			if (combo & (1u << b))
				flags |= flag_bits[b];
		/* the last: ecx 0, rcx not */
		static const uint64_t rcxs[] = {0, 1, 2, 0x100000000ull};

		for (size_t k = 0; k < sizeof(rcxs) / sizeof(rcxs[0]); k++) {
			uint64_t rcx = rcxs[k], r = rcx;
			bool hw = hardware_taken(bytes, len, flags, r), ours;

			ours = ann_branch_taken(d.cond, flags, &r);
			if (hw != ours)
				fail_msg("cond %u flags %#llx rcx %llu: the processor %s, we %s",
					 d.cond, (unsigned long long)flags, (unsigned long long)rcx,
					 hw ? "jumps" : "falls through",
					 ours ? "jump" : "fall through");
		}
	}
}

static void conditions_match_the_processor(void **state)
{
	(void)state;
	for (uint8_t cc = 0; cc < 16; cc++) {
		const uint8_t rel8[] = {(uint8_t)(0x70 | cc), 0x03};
		const uint8_t rel32[] = {0x0f, (uint8_t)(0x80 | cc), 0x03, 0, 0, 0};
		const uint8_t hinted[] = {0x3e, (uint8_t)(0x70 | cc), 0x03}; /* ds: a hint prefix */

		check_one(rel8, sizeof(rel8), cc);
		check_one(rel32, sizeof(rel32), cc);
		check_one(hinted, sizeof(hinted), cc);
	}
	check_one((const uint8_t[]){0xe3, 0x03}, 2, ANN_BR_JRCXZ);
	check_one((const uint8_t[]){0x67, 0xe3, 0x03}, 3, ANN_BR_JECXZ);
	check_one((const uint8_t[]){0xe2, 0x03}, 2, ANN_BR_LOOP);
	check_one((const uint8_t[]){0xe1, 0x03}, 2, ANN_BR_LOOPE);
	check_one((const uint8_t[]){0xe0, 0x03}, 2, ANN_BR_LOOPNE);
}

static void loops_count_rcx_down(void **state)
{
	uint64_t rcx = 3;

	(void)state;
	assert_true(ann_branch_taken(ANN_BR_LOOP, 0x2, &rcx));
	assert_int_equal(rcx, 2);
	rcx = 1;
	assert_false(ann_branch_taken(ANN_BR_LOOP, 0x2, &rcx));
	assert_int_equal(rcx, 0);
	rcx = 5;
	assert_true(ann_branch_taken(ANN_BR_JRCXZ, 0x2, &(uint64_t){0}));
	assert_false(ann_branch_taken(ANN_BR_JRCXZ, 0x2, &rcx));
	assert_int_equal(rcx, 5); /* jrcxz does not change it */
}

static void not_branches(void **state)
{
	struct ann_branch_insn d;

	(void)state;
	assert_false(ann_branch_decode((const uint8_t[]){0xeb, 0x03}, 2, &d));	     /* jmp */
	assert_false(ann_branch_decode((const uint8_t[]){0xe9, 0, 0, 0, 0}, 5, &d)); /* jmp */
	assert_false(ann_branch_decode((const uint8_t[]){0x0f, 0x84, 0}, 3, &d));    /* cut */
	assert_false(ann_branch_decode((const uint8_t[]){0x74}, 1, &d));	     /* cut */
	assert_false(ann_branch_decode((const uint8_t[]){0x67, 0xe2, 0x03}, 3, &d)); /* loop ecx */
	assert_false(ann_branch_decode((const uint8_t[]){0x0f, 0x1f, 0x00}, 3, &d)); /* nop */
}

/* The planner on probe_branches: asm_branches's five branches, in order. */
static void planner_lists_the_branches(void **state)
{
	const char *dir = getenv("LEVER_TEST_BINARY_DIR");
	static const struct {
		uint64_t offset;
		uint8_t len, cond;
		int64_t target;
	} want[] = {
	    {0x6, 2, 0xe, 0xc},		   /* jle 1f */
	    {0x12, 6, 0x4, 0x22},	   /* jz 3f (rel32) */
	    {0x20, 2, 0x5, 0x18},	   /* jnz 2b */
	    {0x25, 2, ANN_BR_JRCXZ, 0x2d}, /* jrcxz 5f */
	    {0x2b, 2, ANN_BR_LOOP, 0x27},  /* loop 4b */
	};
	struct annotate_plan plan;
	char path[4096], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/programs/annotate/probe_branches",
		 dir ? dir : "build");
	assert_int_equal(annotate_plan_init(&plan, path, err, sizeof(err)), 0);
	assert_int_equal(annotate_plan_add(&plan, "asm_branches", err, sizeof(err)), 1);
	assert_int_equal(annotate_plan_all_branches(&plan, stderr), 0);
	assert_int_equal(plan.functions[0].n_branches, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct annotate_plan_branch *b = &plan.functions[0].branches[i];

		assert_int_equal(b->offset, want[i].offset);
		assert_int_equal(b->len, want[i].len);
		assert_int_equal(b->cond, want[i].cond);
		assert_int_equal(b->target, want[i].target);
	}
	annotate_plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(conditions_match_the_processor, setup, teardown),
	    cmocka_unit_test(loops_count_rcx_down),
	    cmocka_unit_test(not_branches),
	    cmocka_unit_test(planner_lists_the_branches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
