/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The trap path of lazy relocation (spec §4.3, §4.4). Each relocatable
 * function has a 16-byte stub in the code area:
 *     mov $index, %r11d ; jmp *common(%rip)     (common = code_trap_entry)
 * Its slot points at the stub until the function has a copy for the current
 * period. r11 is free at a function entry in the SysV ABI (neither an
 * argument nor callee-saved; PLT stubs clobber it too).
 *
 * code_trap_entry saves every register a callee may receive arguments in
 * (rax for varargs, rdi..r9, r10 for a static chain, and the whole vector
 * state with xsave, so __m256 arguments survive libc's vzeroupper), calls
 * code_trap_resolve(index) and jumps, with everything restored, to the
 * address it returns: the function's new copy. The return address the
 * caller pushed is still on top of the stack, so the copy runs as if called
 * directly.
 */
#include "stabilizer/runtime/code.h"

#include <cpuid.h>

CODE_HIDDEN uint32_t code_xsave_size;
CODE_HIDDEN uint32_t code_xsave_mask_lo, code_xsave_mask_hi;

/* AMX tile state (XFD-managed): never saved here. */
#define XSTATE_AMX ((1ULL << 17) | (1ULL << 18))

void code_trap_detect_xsave(void)
{
	unsigned a, b, c, d;
	uint32_t lo, hi;
	uint64_t mask;

	code_xsave_size = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	mask = (((uint64_t)hi << 32) | lo) & ~XSTATE_AMX;
	__cpuid_count(0xd, 0, a, b, c, d);
	if (b < 576)
		return;
	code_xsave_mask_lo = (uint32_t)mask;
	code_xsave_mask_hi = (uint32_t)(mask >> 32);
	code_xsave_size = b;
}

__asm__(".text\n"
	".globl code_trap_entry\n"
	".hidden code_trap_entry\n"
	".type code_trap_entry, @function\n"
	".p2align 4\n"
	"code_trap_entry:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	pushq %rax\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	pushq %rcx\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	pushq %r10\n"
	"	pushq %r11\n" /* -72(%rbp): the index; later the target */
	"	movl code_xsave_size(%rip), %eax\n"
	"	testl %eax, %eax\n"
	"	jz 1f\n"
	"	subq %rax, %rsp\n"
	"	andq $-64, %rsp\n"
	"	xorl %eax, %eax\n" /* xrstor wants a clean xsave header */
	"	movq %rax, 512(%rsp)\n"
	"	movq %rax, 520(%rsp)\n"
	"	movq %rax, 528(%rsp)\n"
	"	movq %rax, 536(%rsp)\n"
	"	movq %rax, 544(%rsp)\n"
	"	movq %rax, 552(%rsp)\n"
	"	movq %rax, 560(%rsp)\n"
	"	movq %rax, 568(%rsp)\n"
	"	movl code_xsave_mask_lo(%rip), %eax\n"
	"	movl code_xsave_mask_hi(%rip), %edx\n"
	"	xsave64 (%rsp)\n"
	"	jmp 2f\n"
	"1:	subq $512, %rsp\n"
	"	andq $-64, %rsp\n"
	"	fxsave64 (%rsp)\n"
	"2:	movq %r11, %rdi\n"
	"	call code_trap_resolve\n"
	"	movq %rax, -72(%rbp)\n"
	"	movl code_xsave_size(%rip), %ecx\n"
	"	testl %ecx, %ecx\n"
	"	jz 3f\n"
	"	movl code_xsave_mask_lo(%rip), %eax\n"
	"	movl code_xsave_mask_hi(%rip), %edx\n"
	"	xrstor64 (%rsp)\n"
	"	jmp 4f\n"
	"3:	fxrstor64 (%rsp)\n"
	"4:	leaq -72(%rbp), %rsp\n"
	"	popq %r11\n"
	"	popq %r10\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rcx\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	popq %rax\n"
	"	popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	jmp *%r11\n"
	".cfi_endproc\n"
	".size code_trap_entry, .-code_trap_entry\n");
