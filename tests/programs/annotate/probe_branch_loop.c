/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The cost of a recorded branch outcome (bench/annotate_branches/run.sh,
 * `lever annotate record --branches`): spin(n) runs one conditional branch
 * (a jnz loop, in assembly so that it is exactly one) n times; main calls it
 * CALLS times and prints the wall time per branch executed, CLOCK_MONOTONIC
 * around the calls only.
 *
 * usage: probe_branch_loop [CALLS [N]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long spin(long n);

__asm__(".text\n"
	".globl spin\n"
	".type spin, @function\n"
	"spin:\n"
	"	mov %rdi, %rax\n"
	"	xor %ecx, %ecx\n"
	"	nop\n"
	"1:	add $1, %rcx\n"
	"	cmp %rdi, %rcx\n"
	"	jne 1b\n"
	"	ret\n"
	".size spin, . - spin\n");

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000, n = argc > 2 ? atol(argv[2]) : 100, sum = 0;
	struct timespec a, b;
	double ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < calls; i++)
		sum += spin(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("calls %ld branches %ld ns_per_branch %.2f sum %ld\n", calls, calls * n,
	       ns / (double)(calls * n), sum);
	return 0;
}
