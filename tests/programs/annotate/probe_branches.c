/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Branch outcomes for tests/e2e/annotate_branches.sh (`lever annotate record
 * --branches`): functions whose conditional branches, and so their outcomes
 * per call, are known exactly, and a program with its own SIGTRAP handling
 * that must not notice the runtime's.
 *
 * asm_branches(x, n) is written in assembly so that its branches are the ones
 * listed here, in this order, whatever the compiler:
 *
 *   +0x6   jle  rel8    taken when x <= 10                   once per call
 *   +0x12  jz   rel32   taken when n == 0                    once per call
 *   +0x20  jnz  rel8    loop back: n times when n > 0, T..TN
 *   +0x25  jrcxz        taken when n == 0                    once per call
 *   +0x2b  loop         n times when n > 0, T..TN (rcx counts down)
 *
 * and it returns (x > 10 ? 100 : 0) + 3 n. early_branch(x) has its jle at +3,
 * in the first five bytes, which a live patch moves into the trampoline: it
 * is armed there. c_branch(x) is C: `if (x > 10)` once per call.
 *
 * t_branch(x) branches on x % 3 == 0, called by three threads at once.
 *
 * The program installs a SIGTRAP handler (full sa_mask) that calls
 * asm_branches, raises SIGTRAP and runs an int3 of its own, blocks SIGTRAP
 * and runs the branches, and prints what it sees: the same output bare and
 * recorded.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

long asm_branches(long x, long n);
long early_branch(long x);

__asm__(".text\n"
	".globl asm_branches\n"
	".type asm_branches, @function\n"
	"asm_branches:\n"
	"	xor %eax, %eax\n"   /* +0x0, 2 bytes: with the cmp, what a live patch moves */
	"	cmp $10, %rdi\n"    /* +0x2, 4 bytes */
	"	jle 1f\n"	    /* +0x6, 7e rel8 */
	"	add $100, %rax\n"   /* +0x8, 4 bytes */
	"1:	mov %rsi, %rcx\n"   /* +0xc, 3 bytes */
	"	test %rcx, %rcx\n"  /* +0xf, 3 bytes */
	"	.byte 0x0f, 0x84\n" /* +0x12: jz rel32 */
	"	.long 3f - (. + 4)\n"
	"2:	add $1, %rax\n"
	"	sub $1, %rcx\n"
	"	jnz 2b\n"
	"3:	mov %rsi, %rcx\n"
	"	jrcxz 5f\n"
	"4:	add $2, %rax\n"
	"	loop 4b\n"
	"5:	ret\n"
	".size asm_branches, . - asm_branches\n"
	".globl early_branch\n"
	".type early_branch, @function\n"
	"early_branch:\n"
	"	test %rdi, %rdi\n" /* +0, 3 bytes */
	"	jle 1f\n"	   /* +3: inside the five bytes of a live patch */
	"	mov $7, %eax\n"
	"	ret\n"
	"1:	mov $9, %eax\n"
	"	ret\n"
	".size early_branch, . - early_branch\n");

__attribute__((noinline)) long slow_path(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

/* a call on one side: a real branch, not a cmov */
__attribute__((noinline)) long c_branch(long x)
{
	long r = x;

	if (x > 10)
		r = slow_path(x);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* called by three threads at once: each call's outcome must be its own */
__attribute__((noinline)) long t_branch(long x)
{
	long r = x;

	if (x % 3 == 0)
		r = slow_path(x);
	__asm__ volatile("" : "+r"(r));
	return r;
}

static void *thread_main(void *arg)
{
	long s = 0, base = (long)arg;

	for (long i = 0; i < 2000; i++)
		s += t_branch(base + i);
	return (void *)s;
}

static volatile sig_atomic_t traps, inner;

static void on_trap(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)uc;
	traps++;
	/* a probed function in a handler whose mask blocks everything */
	inner += (sig_atomic_t)asm_branches(info->si_code == SI_TKILL ? 11 : 3, 2);
}

int main(int argc, char **argv)
{
	static const long xs[] = {5, 11, 20, 10, -3};
	static const long ns[] = {0, 1, 3, 70, 2};
	struct sigaction sa, old;
	sigset_t set, got;
	long sum = 0;

	(void)argv;
	memset(&old, 0, sizeof(old));
	sigaction(SIGTRAP, NULL, &old);
	printf("SIGTRAP before: %s\n", old.sa_handler == SIG_DFL ? "default" : "other");
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		long r = asm_branches(xs[i], ns[i]);

		printf("asm_branches(%ld, %ld) = %ld\n", xs[i], ns[i], r);
		sum += r;
	}
	for (long x = 8; x <= 13; x++)
		printf("c_branch(%ld) = %ld\n", x, c_branch(x));
	{
		long e1 = early_branch(1), e0 = early_branch(0); /* in this order */

		printf("early_branch: %ld %ld\n", e1, e0);
	}
	if (argc > 1)
		return 0; /* `bare`: no signal games */

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGTRAP, NULL, &old);
	printf("SIGTRAP handler: %s, mask full: %d\n",
	       old.sa_sigaction == on_trap ? "ours" : "other", sigismember(&old.sa_mask, SIGTRAP));
	raise(SIGTRAP);
	raise(SIGTRAP);
	__asm__ volatile("int3");
	printf("traps %d, inner %d\n", (int)traps, (int)inner);

	sigemptyset(&set);
	sigaddset(&set, SIGTRAP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigprocmask(SIG_BLOCK, NULL, &got);
	printf("blocked: %d, asm_branches(30, 4) = %ld\n", sigismember(&got, SIGTRAP),
	       asm_branches(30, 4));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("sum %ld\n", sum);
	{
		pthread_t th[3];
		long total = 0;

		for (long i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, thread_main, (void *)(i * 10000));
		for (int i = 0; i < 3; i++) {
			void *r;

			pthread_join(th[i], &r);
			total += (long)r;
		}
		printf("threads %ld\n", total);
	}
	return 0;
}
