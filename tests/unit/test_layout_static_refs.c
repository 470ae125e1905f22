/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The register-type propagation of src/layout/static_refs.c on machine
 * code written for it (spec autocpa.md §8.5 step 5), where the compiler's
 * choices cannot hide a rule: a pointer spilled to the frame and reloaded
 * (no DWARF for the reload), an access past the fixed part of a struct
 * with a flexible array member, and a loop stepping a pointer through an
 * array of structs (the join of "at 0" and "at +16" is "an element").
 * Each case's expected references are listed with the instruction bytes
 * (assembled with `as`, shown beside them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layout/static.h"

#define BASE 0x1000

static const uint8_t code_bytes[] = {
    /* spill, 0x1000 */
    0x48,
    0x8b,
    0x07, /* mov (%rdi),%rax: node.next */
    0x48,
    0x89,
    0x44,
    0x24,
    0x08, /* mov %rax,8(%rsp): spill */
    0x31,
    0xc0, /* xor %eax,%eax: rax forgotten */
    0x48,
    0x8b,
    0x4c,
    0x24,
    0x08, /* mov 8(%rsp),%rcx: reload */
    0x8b,
    0x41,
    0x08, /* 0x100f mov 8(%rcx),%eax: node.val */
    0xc3, /* ret */
    /* flex, 0x1013 */
    0x0f,
    0xb6,
    0x44,
    0x37,
    0x04, /* movzbl 4(%rdi,%rsi,1),%eax: msg.body[i] */
    0xc3,
    /* loop, 0x1019 */
    0x48,
    0x89,
    0xfa, /* mov %rdi,%rdx */
    0x8b,
    0x42,
    0x08, /* 0x101c mov 8(%rdx),%eax: pair.y */
    0x48,
    0x83,
    0xc2,
    0x10, /* add $16,%rdx */
    0x48,
    0x39,
    0xf2, /* cmp %rsi,%rdx */
    0x75,
    0xf4, /* jne 0x101c */
    0xc3,
};

static struct st_member node_members[] = {
    {.name = "next",
     .offset = 0,
     .size = 8,
     .align = 8,
     .nested = ST_NONE,
     .pointee = 0,
     .pointee2 = ST_NONE},
    {.name = "val",
     .offset = 8,
     .size = 4,
     .align = 4,
     .nested = ST_NONE,
     .pointee = ST_NONE,
     .pointee2 = ST_NONE},
};
static struct st_member msg_members[] = {
    {.name = "len",
     .offset = 0,
     .size = 4,
     .align = 4,
     .nested = ST_NONE,
     .pointee = ST_NONE,
     .pointee2 = ST_NONE},
    {.name = "body",
     .offset = 4,
     .size = 0,
     .align = 1,
     .nested = ST_NONE,
     .pointee = ST_NONE,
     .pointee2 = ST_NONE,
     .flexible = true},
};
static struct st_member pair_members[] = {
    {.name = "x",
     .offset = 0,
     .size = 8,
     .align = 8,
     .nested = ST_NONE,
     .pointee = ST_NONE,
     .pointee2 = ST_NONE},
    {.name = "y",
     .offset = 8,
     .size = 8,
     .align = 8,
     .nested = ST_NONE,
     .pointee = ST_NONE,
     .pointee2 = ST_NONE},
};

enum { NODE, MSG, PAIR };

static struct st_struct structs[] = {
    [NODE] = {.name = "node", .size = 16, .align = 8, .n = 2, .m = node_members, .canon = NODE},
    [MSG] = {.name = "msg", .size = 4, .align = 4, .n = 2, .m = msg_members, .canon = MSG},
    [PAIR] = {.name = "pair", .size = 16, .align = 8, .n = 2, .m = pair_members, .canon = PAIR},
};

/* Each function's first instruction: its pointer parameter in rdi (DWARF register 5). */
static struct st_var_loc locs[] = {
    {.lo = 0x1000,
     .hi = 0x1003,
     .kind = ST_LOC_REG,
     .reg = 5,
     .type = {.s = NODE, .pointer = true}},
    {.lo = 0x1013, .hi = 0x1018, .kind = ST_LOC_REG, .reg = 5, .type = {.s = MSG, .pointer = true}},
    {.lo = 0x1019,
     .hi = 0x101c,
     .kind = ST_LOC_REG,
     .reg = 5,
     .type = {.s = PAIR, .pointer = true}},
};

static struct st_result result;

static int setup(void **state)
{
	struct st_types t = {.s = structs, .n = 3};
	struct st_vars v = {.locs = locs, .n_locs = 3};
	struct st_code code = {BASE, code_bytes, sizeof(code_bytes)};
	struct st_symbol syms[] = {{0x1000, 0x1013}, {0x1013, 0x1019}, {0x1019, 0x1029}};
	char err[256];

	return st_refs_find(&t, &v, &code, 1, syms, 3, &result, err, sizeof(err));
}

static int teardown(void **state)
{
	st_result_free(&result);
	return 0;
}

static bool has_ref(uint64_t pc, int32_t s, uint32_t member)
{
	for (size_t i = 0; i < result.n_refs; i++)
		if (result.refs[i].pc == pc && result.refs[i].s == s &&
		    result.refs[i].member == member)
			return true;
	return false;
}

static size_t refs_at(uint64_t pc)
{
	size_t n = 0;

	for (size_t i = 0; i < result.n_refs; i++)
		n += result.refs[i].pc == pc;
	return n;
}

static void test_spilled_pointer(void **state)
{
	assert_true(has_ref(0x1000, NODE, 0)); /* next, through the parameter */
	assert_true(has_ref(0x100f, NODE, 1)); /* val, through the reloaded spill */
	assert_int_equal(refs_at(0x1003), 0);  /* the spill itself touches no struct */
	assert_int_equal(refs_at(0x100a), 0);
}

static void test_flexible_array_member(void **state)
{
	assert_true(has_ref(0x1013, MSG, 1)); /* body, not len */
	assert_false(has_ref(0x1013, MSG, 0));
}

static void test_loop_through_array(void **state)
{
	assert_true(has_ref(0x101c, PAIR, 1)); /* y of every element */
	assert_int_equal(refs_at(0x101c), 1);
}

static void test_counts(void **state)
{
	assert_int_equal(result.functions, 3);
	assert_int_equal(result.instructions, 14);
	/* memory operands: 4 in spill (2 of them the frame), 1 in flex, 1 in loop */
	assert_int_equal(result.memory_operands, 6);
	assert_int_equal(result.typed_operands, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spilled_pointer),
	    cmocka_unit_test(test_flexible_array_member),
	    cmocka_unit_test(test_loop_through_array),
	    cmocka_unit_test(test_counts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
