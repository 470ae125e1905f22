/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The trap that moves a function must leave every register as it found it:
 * with GCC's -fipa-ra a caller keeps values in call-clobbered registers
 * across a call to a function it knows does not touch them (bzip2's
 * handle_compress kept one in r11 across add_pair_to_block). Here an
 * assembly caller loads known values into the argument and scratch
 * registers and two vector registers, calls a leaf that touches none of
 * them, and checks them afterwards. Prints how many calls saw a change.
 */
#include <stdio.h>
#include <stdlib.h>

/* Returns 0 when every register survived the call, else 1. */
int keep_registers(void);

__asm__(".section .text.registers_leaf,\"ax\",@progbits\n"
	".globl registers_leaf\n"
	".type registers_leaf, @function\n"
	".p2align 4\n"
	"registers_leaf:\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	ret\n"
	".size registers_leaf, .-registers_leaf\n"
	".section .text.keep_registers,\"ax\",@progbits\n"
	".globl keep_registers\n"
	".type keep_registers, @function\n"
	".p2align 4\n"
	"keep_registers:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	movq $0x1111, %rdi\n"
	"	movq $0x2222, %rsi\n"
	"	movq $0x3333, %rdx\n"
	"	movq $0x4444, %rcx\n"
	"	movq $0x5555, %r8\n"
	"	movq $0x6666, %r9\n"
	"	movq $0x7777, %r10\n"
	"	movq $0x8888, %r11\n"
	"	movq %r11, %xmm8\n"
	"	movq %r10, %xmm15\n"
	"	call registers_leaf\n"
	"	xorl %eax, %eax\n"
	"	cmpq $0x1111, %rdi\n"
	"	jne 1f\n"
	"	cmpq $0x2222, %rsi\n"
	"	jne 1f\n"
	"	cmpq $0x3333, %rdx\n"
	"	jne 1f\n"
	"	cmpq $0x4444, %rcx\n"
	"	jne 1f\n"
	"	cmpq $0x5555, %r8\n"
	"	jne 1f\n"
	"	cmpq $0x6666, %r9\n"
	"	jne 1f\n"
	"	cmpq $0x7777, %r10\n"
	"	jne 1f\n"
	"	cmpq $0x8888, %r11\n"
	"	jne 1f\n"
	"	movq %xmm8, %rdx\n"
	"	cmpq $0x8888, %rdx\n"
	"	jne 1f\n"
	"	movq %xmm15, %rdx\n"
	"	cmpq $0x7777, %rdx\n"
	"	jne 1f\n"
	"	popq %rbp\n"
	"	ret\n"
	"1:	movl $1, %eax\n"
	"	popq %rbp\n"
	"	ret\n"
	".size keep_registers, .-keep_registers\n"
	".text\n");

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000000;
	long changed = 0;

	for (long i = 0; i < calls; i++)
		changed += keep_registers();
	printf("registers changed in %ld of %ld calls\n", changed, calls);
	return changed != 0;
}
