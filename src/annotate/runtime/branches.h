/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Conditional branches of probed functions (spec/freud.md §4.2.4, §7
 * "Branch outcome capture", option B; doc/annotate-record.md "Branches"):
 * the contract between the planner, which lists every conditional branch of
 * a function (src/annotate/plan_branches.c, with capstone), and
 * liblever-annotate.so, which checks each against the bytes it finds at run
 * time, writes an int3 over its first byte and, on the SIGTRAP, evaluates
 * the condition from the saved flags, moves the program counter to the
 * target or the fall-through, and appends the outcome to the call in
 * progress (branches.c).
 *
 * Both halves decode with the one function below, so that what was planned
 * is exactly what the runtime emulates: jcc rel8 (70-7f), jcc rel32
 * (0f 80-8f), jrcxz (e3), jecxz (67 e3), loop, loope, loopne (e2, e1, e0),
 * after any of the prefixes compilers put on them (2e, 3e: static
 * prediction hints; f2: bnd). Header-only, no library call: the runtime
 * uses it in its signal handler.
 */
#ifndef LEVER_ANNOTATE_RUNTIME_BRANCHES_H
#define LEVER_ANNOTATE_RUNTIME_BRANCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cond: 0-15 the condition code of jcc (the low nibble of its opcode), or these */
enum {
	ANN_BR_JRCXZ = 16,
	ANN_BR_JECXZ = 17,
	ANN_BR_LOOP = 18,
	ANN_BR_LOOPE = 19,
	ANN_BR_LOOPNE = 20,
	ANN_BR_N_CONDS
};

/* Outcomes kept per branch per call; beyond them only the count (the record's `+N`). */
#define ANN_BR_KEPT 64

/* Branches planned per function at most (a function with more keeps its first ones). */
#define ANN_MAX_BRANCHES 4096

struct ann_branch_insn {
	uint8_t len;  /* bytes, prefixes included */
	uint8_t cond; /* as above */
	int32_t rel;  /* target = address + len + rel */
};

/* Decode a conditional branch at code (avail bytes readable); false if it is not one. */
static inline bool ann_branch_decode(const uint8_t *code, size_t avail, struct ann_branch_insn *out)
{
	size_t i = 0;
	bool addr32 = false;

	while (i < avail && i < 4 &&
	       (code[i] == 0x2e || code[i] == 0x3e || code[i] == 0xf2 || code[i] == 0x67)) {
		addr32 |= code[i] == 0x67;
		i++;
	}
	if (i >= avail)
		return false;
	if (code[i] >= 0x70 && code[i] <= 0x7f && !addr32 && i + 2 <= avail) {
		out->cond = code[i] & 0x0f;
		out->rel = (int8_t)code[i + 1];
		out->len = (uint8_t)(i + 2);
		return true;
	}
	if (code[i] == 0x0f && i + 6 <= avail && (code[i + 1] & 0xf0) == 0x80 && !addr32) {
		int32_t rel;

		memcpy(&rel, code + i + 2, 4);
		out->cond = code[i + 1] & 0x0f;
		out->rel = rel;
		out->len = (uint8_t)(i + 6);
		return true;
	}
	if (code[i] >= 0xe0 && code[i] <= 0xe3 && i + 2 <= avail) {
		/* with 67 the loops count in ecx: not emulated (no compiler emits them) */
		if (addr32 && code[i] != 0xe3)
			return false;
		out->cond = code[i] == 0xe3   ? (addr32 ? ANN_BR_JECXZ : ANN_BR_JRCXZ)
			    : code[i] == 0xe2 ? ANN_BR_LOOP
			    : code[i] == 0xe1 ? ANN_BR_LOOPE
					      : ANN_BR_LOOPNE;
		out->rel = (int8_t)code[i + 1];
		out->len = (uint8_t)(i + 2);
		return true;
	}
	return false;
}

#define ANN_EFLAGS_CF (1u << 0)
#define ANN_EFLAGS_PF (1u << 2)
#define ANN_EFLAGS_ZF (1u << 6)
#define ANN_EFLAGS_SF (1u << 7)
#define ANN_EFLAGS_OF (1u << 11)

/*
 * Whether the branch is taken with these flags and rcx, as the processor
 * decides (Intel SDM vol. 2, Jcc, JrCXZ, LOOPcc); the loops decrement *rcx
 * first, as they do.
 */
static inline bool ann_branch_taken(uint8_t cond, uint64_t eflags, uint64_t *rcx)
{
	bool cf = eflags & ANN_EFLAGS_CF, pf = eflags & ANN_EFLAGS_PF, zf = eflags & ANN_EFLAGS_ZF,
	     sf = eflags & ANN_EFLAGS_SF, of = eflags & ANN_EFLAGS_OF, r;

	switch (cond) {
	case ANN_BR_JRCXZ:
		return *rcx == 0;
	case ANN_BR_JECXZ:
		return (uint32_t)*rcx == 0;
	case ANN_BR_LOOP:
		return --*rcx != 0;
	case ANN_BR_LOOPE:
		return --*rcx != 0 && zf;
	case ANN_BR_LOOPNE:
		return --*rcx != 0 && !zf;
	default:
		break;
	}
	switch (cond >> 1) {
	case 0: /* o */
		r = of;
		break;
	case 1: /* b */
		r = cf;
		break;
	case 2: /* e */
		r = zf;
		break;
	case 3: /* be */
		r = cf || zf;
		break;
	case 4: /* s */
		r = sf;
		break;
	case 5: /* p */
		r = pf;
		break;
	case 6: /* l */
		r = sf != of;
		break;
	default: /* le */
		r = zf || sf != of;
		break;
	}
	return (cond & 1) ? !r : r;
}

#endif
