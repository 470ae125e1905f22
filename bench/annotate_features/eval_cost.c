// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * What the feature interpreter costs per sampled call (src/annotate/runtime/
 * features_eval.c with its safe reads), per kind of program, in ns: the
 * overhead a probe adds for features on top of its own (issue 15 must-show
 * 1 measures the probe with 5 features end to end; this splits the feature
 * part). Cases run interleaved, in a rotated order each round, so that a
 * loaded machine shifts them alike.
 *
 * usage: eval_cost ROUNDS EVALS_PER_ROUND   (CSV on stdout: round,case,ns)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "annotate/runtime/features.h"
#include "annotate/runtime/features_ops.h"
#include "annotate/runtime/safe_read.h"

#define OP(c, s, i, m) ((struct ann_op){.code = (c), .size = (s), .index = (i), .imm = (m)})

struct items {
	int len;
};
struct job {
	int id;
	int kind;
	struct items *items;
	const char *name;
};

struct bench_case {
	const char *name;
	struct ann_op ops[32];
	uint32_t n_ops, n_values;
	uint64_t rdi;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	long evals = argc > 2 ? atol(argv[2]) : 200000;
	static struct items it = {12};
	static struct job job = {7, 2, &it, "a name of 16 chr"};
	/* a mapping born after the snapshot: every read is kernel-checked,
	   because the refresh is what would make it fast; reads are timed
	   before it can happen (see the first eval of the round) */
	struct ann_entry_regs regs;
	double values[8];
	struct bench_case cases[] = {
	    {"empty", {{0}}, 0, 0, 0},
	    {"1 register", {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_EMIT, 0, 0, 0)}, 2, 1, 0},
	    {"5 registers",
	     {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_EMIT, 0, 0, 0), OP(ANN_OP_REG, 0, 4, 0),
	      OP(ANN_OP_EMIT, 0, 1, 0), OP(ANN_OP_REG, 0, 1, 0), OP(ANN_OP_EMIT, 0, 2, 0),
	      OP(ANN_OP_REG, 0, 2, 0), OP(ANN_OP_EMIT, 0, 3, 0), OP(ANN_OP_REG, 0, 8, 0),
	      OP(ANN_OP_EXTRACT, 32, ANN_F_SIGNED, 0), OP(ANN_OP_EMIT, 0, 4, 0)},
	     11,
	     5,
	     0},
	    {"j->id (1 load)",
	     {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_LOAD, 4, ANN_F_SIGNED, 0),
	      OP(ANN_OP_EMIT, 0, 0, 0)},
	     3,
	     1,
	     0},
	    {"j->items->len (2 loads)",
	     {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_LOAD, 8, 0, 8),
	      OP(ANN_OP_LOAD, 4, ANN_F_SIGNED, 0), OP(ANN_OP_EMIT, 0, 0, 0)},
	     4,
	     1,
	     0},
	    {"strlen(j->name) 16 chars",
	     {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_LOAD, 8, 0, 16), OP(ANN_OP_STRLEN, 0, 0, 65536),
	      OP(ANN_OP_EMIT, 0, 0, 0)},
	     4,
	     1,
	     0},
	    {"NULL pointer (refused)",
	     {OP(ANN_OP_CONST, 0, 0, 0), OP(ANN_OP_LOAD, 4, 0, 0), OP(ANN_OP_EMIT, 0, 0, 0)},
	     3,
	     1,
	     0},
	    {"bad pointer (kernel-checked)",
	     {OP(ANN_OP_CONST, 0, 0, 0x10000000000ll), OP(ANN_OP_LOAD, 4, 0, 0),
	      OP(ANN_OP_EMIT, 0, 0, 0)},
	     3,
	     1,
	     0},
	};
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = (uint64_t)(uintptr_t)&job;
	ann_safe_read_init();
	printf("round,case,ns\n");
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < n; k++) {
			struct bench_case *c = &cases[(k + r) % n];
			double t0 = now_ns();

			for (long i = 0; i < evals; i++) {
				regs.gpr[4] = (uint64_t)i;
				if (ann_features_eval(c->ops, c->n_ops, &regs, 0, values,
						      c->n_values))
					return 1;
				__asm__ volatile("" ::"r"(values) : "memory");
			}
			printf("%d,%s,%.2f\n", r, c->name, (now_ns() - t0) / evals);
		}
	}
	return 0;
}
