/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The trap path of lazy relocation (spec §4.3, §4.4). Each relocatable
 * function has a 16-byte stub in the code area:
 *     push $index ; jmp *common(%rip)     (common = code_trap_entry)
 * Its slot points at the stub until the function has a copy for the current
 * period.
 *
 * The trap must leave every register as it found it, not only the argument
 * registers: GCC's -fipa-ra lets a caller keep values in call-clobbered
 * registers (r10, r11, vector registers) across a call to a function of the
 * same unit that it knows does not touch them. (The stub used to pass the
 * index in r11, and bzip2's handle_compress lost a value it kept in r11
 * across its first call of add_pair_to_block.)
 *
 * code_trap_entry saves rax, rdi..r11 and the whole vector state (xsave, so
 * __m256 arguments survive libc's vzeroupper), calls
 * code_trap_resolve(index), puts the address it returns (the function's new
 * copy) where the stub pushed the index, restores everything and returns to
 * that address. The return address the caller pushed is then on top of the
 * stack, so the copy runs as if called directly.
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
	".cfi_def_cfa_offset 16\n" /* the index above the return address */
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 24\n"
	".cfi_offset %rbp, -24\n"
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
	"	pushq %r11\n" /* -72(%rbp) */
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
	"2:	movq 8(%rbp), %rdi\n" /* the index the stub pushed */
	"	call code_trap_resolve\n"
	"	movq %rax, 8(%rbp)\n" /* becomes the address ret jumps to */
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
	".cfi_def_cfa %rsp, 16\n"
	"	ret\n" /* to the copy; the caller's return address is on top */
	".cfi_endproc\n"
	".size code_trap_entry, .-code_trap_entry\n");
