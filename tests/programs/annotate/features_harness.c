// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The harness of the feature test programs (features_harness.h): a thunk
 * that captures a function's entry registers (struct ann_entry_regs, DWARF
 * numbering) the way the probes do, and a hook that runs the function's
 * feature program with the runtime's interpreter (features_eval.c, compiled
 * in) and prints the values. The plan file is written by the unit test
 * tests/unit/test_annotate_features_plan.c from annotate_plan_features():
 *
 *   plan KEY N_OPS N_DECLS / op CODE SIZE INDEX IMM (N_OPS) / decl KIND EXPR (N_DECLS)
 */
#include <link.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/runtime/features.h"
#include "features_harness.h"

void *ann_test_target;
const char *ann_test_function;
const char *ann_test_label;
struct ann_entry_regs ann_test_regs;
void *volatile ann_test_thunk_address = (void *)ann_test_thunk;

void ann_test_hook(void);

/* gpr[i] at 8*i (DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip), xmm at 136. */
__asm__(".text\n"
	".globl ann_test_thunk\n"
	".type ann_test_thunk, @function\n"
	"ann_test_thunk:\n"
	"	movq %rax, ann_test_regs+0(%rip)\n"
	"	movq %rdx, ann_test_regs+8(%rip)\n"
	"	movq %rcx, ann_test_regs+16(%rip)\n"
	"	movq %rbx, ann_test_regs+24(%rip)\n"
	"	movq %rsi, ann_test_regs+32(%rip)\n"
	"	movq %rdi, ann_test_regs+40(%rip)\n"
	"	movq %rbp, ann_test_regs+48(%rip)\n"
	"	movq %rsp, ann_test_regs+56(%rip)\n"
	"	movq %r8, ann_test_regs+64(%rip)\n"
	"	movq %r9, ann_test_regs+72(%rip)\n"
	"	movq %r10, ann_test_regs+80(%rip)\n"
	"	movq %r11, ann_test_regs+88(%rip)\n"
	"	movq %r12, ann_test_regs+96(%rip)\n"
	"	movq %r13, ann_test_regs+104(%rip)\n"
	"	movq %r14, ann_test_regs+112(%rip)\n"
	"	movq %r15, ann_test_regs+120(%rip)\n"
	"	movq ann_test_target(%rip), %r11\n"
	"	movq %r11, ann_test_regs+128(%rip)\n"
	"	movdqu %xmm0, ann_test_regs+136(%rip)\n"
	"	movdqu %xmm1, ann_test_regs+152(%rip)\n"
	"	movdqu %xmm2, ann_test_regs+168(%rip)\n"
	"	movdqu %xmm3, ann_test_regs+184(%rip)\n"
	"	movdqu %xmm4, ann_test_regs+200(%rip)\n"
	"	movdqu %xmm5, ann_test_regs+216(%rip)\n"
	"	movdqu %xmm6, ann_test_regs+232(%rip)\n"
	"	movdqu %xmm7, ann_test_regs+248(%rip)\n"
	"	subq $8, %rsp\n"
	"	call ann_test_hook\n"
	"	addq $8, %rsp\n"
	"	movq ann_test_regs+0(%rip), %rax\n"
	"	movq ann_test_regs+8(%rip), %rdx\n"
	"	movq ann_test_regs+16(%rip), %rcx\n"
	"	movq ann_test_regs+32(%rip), %rsi\n"
	"	movq ann_test_regs+40(%rip), %rdi\n"
	"	movq ann_test_regs+64(%rip), %r8\n"
	"	movq ann_test_regs+72(%rip), %r9\n"
	"	movdqu ann_test_regs+136(%rip), %xmm0\n"
	"	movdqu ann_test_regs+152(%rip), %xmm1\n"
	"	movdqu ann_test_regs+168(%rip), %xmm2\n"
	"	movdqu ann_test_regs+184(%rip), %xmm3\n"
	"	movdqu ann_test_regs+200(%rip), %xmm4\n"
	"	movdqu ann_test_regs+216(%rip), %xmm5\n"
	"	movdqu ann_test_regs+232(%rip), %xmm6\n"
	"	movdqu ann_test_regs+248(%rip), %xmm7\n"
	"	jmpq *ann_test_target(%rip)\n"
	".size ann_test_thunk, .-ann_test_thunk\n");

struct plan {
	char key[256];
	struct ann_op *ops;
	uint32_t n_ops, n_decls;
	char **exprs;
};

static struct plan plans[64];
static int n_plans;
static uint64_t module_base;

static int main_object(struct dl_phdr_info *info, size_t size, void *data)
{
	module_base = info->dlpi_addr; /* the first object is the program */
	return 1;
}

static int read_plans(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	struct plan *p = NULL;
	uint32_t ops = 0, decls = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "plan ", 5) == 0 && n_plans < 64) {
			p = &plans[n_plans++];
			if (sscanf(line, "plan %255s %u %u", p->key, &p->n_ops, &p->n_decls) != 3)
				return -1;
			p->ops = calloc(p->n_ops + 1, sizeof(*p->ops));
			p->exprs = calloc(p->n_decls + 1, sizeof(*p->exprs));
			ops = decls = 0;
		} else if (p && strncmp(line, "op ", 3) == 0 && ops < p->n_ops) {
			unsigned code, size, index;
			long long imm;

			if (sscanf(line, "op %u %u %u %lld", &code, &size, &index, &imm) != 4)
				return -1;
			p->ops[ops++] = (struct ann_op){.code = (uint16_t)code,
							.size = (uint16_t)size,
							.index = index,
							.imm = imm};
		} else if (p && strncmp(line, "decl ", 5) == 0 && decls < p->n_decls) {
			char *sp = strchr(line + 5, ' ');

			p->exprs[decls++] = strdup(sp ? sp + 1 : "");
		}
	}
	fclose(f);
	return 0;
}

void ann_test_hook(void)
{
	struct plan *p = NULL;
	double values[1024];

	for (int i = 0; i < n_plans; i++)
		if (strcmp(plans[i].key, ann_test_function) == 0)
			p = &plans[i];
	if (!p) {
		printf("noplan %s %s\n", ann_test_label, ann_test_function);
		return;
	}
	if (p->n_decls > 1024 || ann_features_eval(p->ops, p->n_ops, &ann_test_regs, module_base,
						   values, p->n_decls) != 0) {
		printf("malformed %s\n", ann_test_label);
		return;
	}
	for (uint32_t i = 0; i < p->n_decls; i++) {
		if (isnan(values[i]))
			printf("value %s %s=nan\n", ann_test_label, p->exprs[i]);
		else
			printf("value %s %s=%.17g\n", ann_test_label, p->exprs[i], values[i]);
	}
	fflush(stdout);
}

int ann_test_main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PLANFILE\n", argv[0]);
		return 2;
	}
	dl_iterate_phdr(main_object, NULL);
	if (read_plans(argv[1]) != 0)
		return 1;
	run_targets();
	return 0;
}
