/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The contract between the feature planner (analysis half, `lever annotate
 * record`: DWARF → a compact program per probed function, spec/freud.md
 * §4.2.3, §7) and the feature interpreter inside liblever-annotate.so, which
 * runs the program at every sampled entry of the function.
 *
 * A program is a flat array of fixed-size `struct ann_op`, so that it can be
 * stored in the plan file and in the per-build-ID cache as bytes, and run
 * without allocation. The opcodes and their operands are named in
 * features_ops.h, run by the interpreter (features_eval.c) and documented in
 * doc/formats/annotate-features.md.
 */
#ifndef LEVER_ANNOTATE_RUNTIME_FEATURES_H
#define LEVER_ANNOTATE_RUNTIME_FEATURES_H

#include <stdint.h>

/*
 * The registers at the function's first instruction (before its prologue),
 * as the probe captured them. General registers use the DWARF x86-64
 * numbering (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8..15 r8..r15, 16 the return address column = rip of the entry), so
 * location expressions index them directly; gpr[7] is the stack pointer at
 * entry (it points at the return address, CFA = gpr[7] + 8).
 * xmm[i] holds the low 128 bits of xmm0..xmm7 (DWARF 17..24).
 */
#define ANN_GPR_COUNT 17
#define ANN_XMM_COUNT 8

struct ann_entry_regs {
	uint64_t gpr[ANN_GPR_COUNT];
	uint64_t xmm[ANN_XMM_COUNT][2];
};

/* One instruction of a feature program. */
struct ann_op {
	uint16_t code;	/* opcode, features_eval.c */
	uint16_t size;	/* access size / element size, per opcode */
	uint32_t index; /* feature index, register number, ... per opcode */
	int64_t imm;	/* immediate operand */
};

/*
 * Run a program: for each feature it emits, store its value in values[i]
 * (i < n_values), NaN for a missing value (a bad pointer on the way, an
 * unavailable location). module_base is the load address of the module the
 * function lives in (absolute addresses in the program are relative to it).
 * Async-signal-safe, no allocation, never faults: every dereference is a
 * safe read. Returns 0, or -1 for a malformed program (values all NaN).
 */
int ann_features_eval(const struct ann_op *ops, uint32_t n_ops, const struct ann_entry_regs *regs,
		      uint64_t module_base, double *values, uint32_t n_values);

/*
 * The programs ANN_OP_CALL runs (the plan's `globals` lines), set once
 * before any program runs; the table must live as long as the programs.
 */
struct ann_program {
	const struct ann_op *ops;
	uint32_t n_ops;
};
void ann_features_set_shared(const struct ann_program *programs, uint32_t n);

#endif
