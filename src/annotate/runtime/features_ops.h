/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The opcodes of feature programs (struct ann_op, features.h): the names the
 * planner (src/annotate/plan_features.c, DWARF -> program) and the
 * interpreter (features_eval.c, inside liblever-annotate.so) share. A
 * contract header: literals only. Semantics and an example:
 * doc/formats/annotate-features.md; spec/freud.md §4.2.3, §7.4 item 2.
 *
 * The machine is a small stack of typed values (signed integer, unsigned
 * integer, double, missing). Every operation on a missing value gives a
 * missing value, so one bad pointer on the way to a feature makes that
 * feature NaN and nothing else. Jumps only go forward, so every program
 * terminates after at most n_ops steps.
 */
#ifndef LEVER_ANNOTATE_RUNTIME_FEATURES_OPS_H
#define LEVER_ANNOTATE_RUNTIME_FEATURES_OPS_H

#include <stdint.h>

/* Format version of programs: stored in plan caches, bumped on any change. */
#define ANN_FEATURES_VERSION 3

/* The value stack's depth: deeper programs are malformed. */
#define ANN_STACK_DEPTH 16
/* Longest C string STRLEN measures; longer ones are missing. */
#define ANN_STRLEN_MAX (1u << 20)
/* Most elements SUM adds up; longer arrays are missing. */
#define ANN_SUM_MAX (1u << 16)

/* ANN_OP_LOAD / ANN_OP_EXTRACT / ANN_OP_SUM flags, in `index`. */
#define ANN_F_SIGNED 1u /* sign-extend the loaded integer */
#define ANN_F_FLOAT  2u /* IEEE float (size 4) or double (size 8) */

enum ann_opcode {
	ANN_OP_NOP = 0,
	/* push gpr[index] (DWARF numbering, features.h), unsigned */
	ANN_OP_REG = 1,
	/* push the float (size 4) or double (size 8) at byte imm of xmm[index] */
	ANN_OP_XMM = 2,
	/* push the address CFA + imm (CFA = gpr[7] + 8 at the entry) */
	ANN_OP_CFA = 3,
	/* push imm, signed */
	ANN_OP_CONST = 4,
	/* push module_base + imm (imm: a file address, DW_OP_addr / st_value) */
	ANN_OP_ADDR = 5,
	/* top += imm (integers; address arithmetic, member offsets) */
	ANN_OP_ADD = 6,
	/* top = the `size` (1, 2, 4, 8) bytes at address top + imm, by a safe
	   read; flags in index: ANN_F_SIGNED, ANN_F_FLOAT (size 4 or 8) */
	ANN_OP_LOAD = 7,
	/* top = bits [imm, imm + size) of the integer top (size 1..64 bits);
	   ANN_F_SIGNED sign-extends, ANN_F_FLOAT reinterprets 32/64 bits as
	   float/double (fields of small aggregates passed in registers, bit
	   fields) */
	ANN_OP_EXTRACT = 8,
	/* a b -> a - b (integers, or doubles if either is one) */
	ANN_OP_SUB = 9,
	/* top = top / imm, integer division truncating (imm != 0): a pointer
	   difference to an element count */
	ANN_OP_DIV = 10,
	/* top = length of the C string at address top, at most imm bytes
	   (imm <= ANN_STRLEN_MAX); missing without a NUL within the bound */
	ANN_OP_STRLEN = 11,
	/* addr count -> the sum of count elements of `size` bytes at addr
	   (flags in index as LOAD; count <= ANN_SUM_MAX, else missing) */
	ANN_OP_SUM = 12,
	/* top = an id of the dynamic type of the polymorphic object at address
	   top: the hash (ann_type_hash) of the name its vtable's typeinfo
	   gives (vptr[-1] -> type_info, whose second word is the name) */
	ANN_OP_DYNTYPE = 13,
	/* top = the address of the most-derived object containing the
	   polymorphic subobject at top: top + offset-to-top (vptr[-2]) */
	ANN_OP_TOPOBJ = 14,
	/* pop v; unless v is present and equal to imm, skip the next index ops */
	ANN_OP_SKIP_NE = 15,
	/* duplicate top */
	ANN_OP_DUP = 16,
	/* pop */
	ANN_OP_DROP = 17,
	/* pop into values[index] (NaN if missing) */
	ANN_OP_EMIT = 18,
	/* top = 0 or 1: whether the integer top is nonzero (bool) */
	ANN_OP_NONZERO = 19,
	/* run shared program index (ann_features_set_shared: the globals of a
	   compilation unit), its EMIT i storing into values[imm + i]; on its
	   own stack; a shared program may not CALL */
	ANN_OP_CALL = 20,
	ANN_OP_COUNT
};

/*
 * The id of a dynamic type: FNV-1a 64 of the typeinfo name (without the
 * leading '*' GCC puts on types local to a translation unit), folded to 53
 * bits so that it survives the trip through a double exactly.
 */
#define ANN_TYPE_HASH_BITS 53

static inline uint64_t ann_type_hash_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ull;
}

static inline uint64_t ann_type_hash_fold(uint64_t h)
{
	return (h ^ (h >> ANN_TYPE_HASH_BITS)) & ((1ull << ANN_TYPE_HASH_BITS) - 1);
}

#define ANN_TYPE_HASH_INIT 0xcbf29ce484222325ull

/* The id of a typeinfo name held in memory the caller may read. */
static inline uint64_t ann_type_hash(const char *name)
{
	uint64_t h = ANN_TYPE_HASH_INIT;

	if (*name == '*')
		name++;
	for (; *name; name++)
		h = ann_type_hash_step(h, (unsigned char)*name);
	return ann_type_hash_fold(h);
}

#endif
