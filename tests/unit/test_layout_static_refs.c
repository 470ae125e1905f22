/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The register-type propagation of src/layout/static_refs.c on machine
 * code written for it (spec autocpa.md §8.5 step 5), where the compiler's
 * choices cannot hide a rule: a pointer spilled to the frame and reloaded
 * (no DWARF for the reload), an access past the fixed part of a struct
 * with a flexible array member, a loop stepping a pointer through an array
 * of structs (the join of "at 0" and "at +16" is "an element"), alignment
 * padding that must not join a branch target's paths, and an SSE store
 * capstone 4 calls a read. The bytes were assembled with `as`; each line
 * shows its instruction and what it touches.
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

/* clang-format off */
static const uint8_t code_bytes[] = {
	/* spill, 0x1000 */
	0x48, 0x8b, 0x07,			/* mov (%rdi),%rax: node.next */
	0x48, 0x89, 0x44, 0x24, 0x08,		/* mov %rax,8(%rsp): spill */
	0x31, 0xc0,				/* xor %eax,%eax: rax forgotten */
	0x48, 0x8b, 0x4c, 0x24, 0x08,		/* mov 8(%rsp),%rcx: reload */
	0x8b, 0x41, 0x08,			/* 0x100f mov 8(%rcx),%eax: node.val */
	0xc3,					/* ret */
	/* flex, 0x1013 */
	0x0f, 0xb6, 0x44, 0x37, 0x04,		/* movzbl 4(%rdi,%rsi,1),%eax: msg.body[i] */
	0xc3,
	/* loop, 0x1019 */
	0x48, 0x89, 0xfa,			/* mov %rdi,%rdx */
	0x8b, 0x42, 0x08,			/* 0x101c mov 8(%rdx),%eax: pair.y */
	0x48, 0x83, 0xc2, 0x10,			/* add $16,%rdx */
	0x48, 0x39, 0xf2,			/* cmp %rsi,%rdx */
	0x75, 0xf4,				/* jne 0x101c */
	0xc3,
	/* pad, 0x1029 */
	0x80, 0x3f, 0x00,			/* cmpb $0,(%rdi): pair.x */
	0x74, 0x02,				/* je 0x1030 */
	0xc3,					/* ret */
	0x90,					/* nop: padding, nothing reaches it */
	0xc7, 0x47, 0x08, 0x04, 0x00, 0x00, 0x00, /* 0x1030 movl $4,8(%rdi): pair.y */
	0x0f, 0x11, 0x07,			/* 0x1037 movups %xmm0,(%rdi): x and y */
	0xc3,
};
/* clang-format on */

enum { NODE, MSG, PAIR, N_STRUCTS };

static struct st_member members[N_STRUCTS][2];
static struct st_struct structs[N_STRUCTS];
static struct st_result result;

static void member(int s, int i, const char *name, uint32_t offset, uint32_t size)
{
	members[s][i] = (struct st_member){.name = (char *)name,
					   .offset = offset,
					   .size = size,
					   .align = size ? size : 1,
					   .nested = ST_NONE,
					   .pointee = ST_NONE,
					   .pointee2 = ST_NONE};
}

static void describe(int s, const char *name, uint32_t size)
{
	structs[s] = (struct st_struct){
	    .name = (char *)name, .size = size, .align = 8, .n = 2, .m = members[s], .canon = s};
}

/* Each function's first instruction: its pointer parameter in rdi (DWARF register 5). */
static struct st_var_loc param(uint64_t lo, uint64_t hi, int s)
{
	return (struct st_var_loc){
	    .lo = lo, .hi = hi, .kind = ST_LOC_REG, .reg = 5, .type = {.s = s, .pointer = true}};
}

static int setup(void **state)
{
	struct st_var_loc locs[] = {param(0x1000, 0x1003, NODE), param(0x1013, 0x1018, MSG),
				    param(0x1019, 0x101c, PAIR), param(0x1029, 0x102c, PAIR)};
	struct st_symbol syms[] = {
	    {0x1000, 0x1013}, {0x1013, 0x1019}, {0x1019, 0x1029}, {0x1029, 0x103b}};
	struct st_code code = {BASE, code_bytes, sizeof(code_bytes)};
	struct st_types t = {.s = structs, .n = N_STRUCTS};
	struct st_vars v = {.locs = locs, .n_locs = 4};
	char err[256];

	member(NODE, 0, "next", 0, 8);
	members[NODE][0].pointee = NODE;
	member(NODE, 1, "val", 8, 4);
	describe(NODE, "node", 16);
	member(MSG, 0, "len", 0, 4);
	member(MSG, 1, "body", 4, 0);
	members[MSG][1].flexible = true;
	describe(MSG, "msg", 4);
	member(PAIR, 0, "x", 0, 8);
	member(PAIR, 1, "y", 8, 8);
	describe(PAIR, "pair", 16);
	return st_refs_find(&t, &v, &code, 1, syms, 4, &result, err, sizeof(err));
}

static int teardown(void **state)
{
	st_result_free(&result);
	return 0;
}

/* The reference at pc to (s, member): 0 none, 'r' or 'w'. */
static int ref(uint64_t pc, int32_t s, uint32_t m)
{
	for (size_t i = 0; i < result.n_refs; i++)
		if (result.refs[i].pc == pc && result.refs[i].s == s && result.refs[i].member == m)
			return result.refs[i].write ? 'w' : 'r';
	return 0;
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
	assert_int_equal(ref(0x1000, NODE, 0), 'r'); /* next, through the parameter */
	assert_int_equal(ref(0x100f, NODE, 1), 'r'); /* val, through the reloaded spill */
	assert_int_equal(refs_at(0x1003), 0);	     /* the spill itself touches no struct */
	assert_int_equal(refs_at(0x100a), 0);
}

static void test_flexible_array_member(void **state)
{
	assert_int_equal(ref(0x1013, MSG, 1), 'r'); /* body, not len */
	assert_int_equal(refs_at(0x1013), 1);
}

static void test_loop_through_array(void **state)
{
	assert_int_equal(ref(0x101c, PAIR, 1), 'r'); /* y of every element */
	assert_int_equal(refs_at(0x101c), 1);
}

static void test_padding_is_no_path(void **state)
{
	assert_int_equal(ref(0x1029, PAIR, 0), 'r');
	assert_int_equal(ref(0x1030, PAIR, 1), 'w'); /* the branch target keeps rdi's type */
}

static void test_sse_store_writes(void **state)
{
	assert_int_equal(ref(0x1037, PAIR, 0), 'w');
	assert_int_equal(ref(0x1037, PAIR, 1), 'w');
}

static void test_counts(void **state)
{
	assert_int_equal(result.functions, 4);
	assert_int_equal(result.instructions, 21);
	/* 4 in spill (2 of them the frame), 1 in flex, 1 in loop, 3 in pad */
	assert_int_equal(result.memory_operands, 9);
	assert_int_equal(result.typed_operands, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spilled_pointer),    cmocka_unit_test(test_flexible_array_member),
	    cmocka_unit_test(test_loop_through_array), cmocka_unit_test(test_padding_is_no_path),
	    cmocka_unit_test(test_sse_store_writes),   cmocka_unit_test(test_counts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
