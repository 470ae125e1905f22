/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where does code run? A callee prints its return address, i.e. where in
 * its caller's code the call returns to, and whether that lies inside the
 * program's own text. Called again after sleeping past several
 * re-randomization periods. With code randomization the address is outside
 * the text and changes between periods and between seeds. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

extern char __executable_start[], etext[];

__attribute__((noinline)) static void where(const char *label)
{
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);
	int in_text = ret >= (uintptr_t)__executable_start && ret < (uintptr_t)etext;

	printf("%s %lx in_text=%d\n", label, (unsigned long)ret, in_text);
}

__attribute__((noinline)) static void caller(const char *label)
{
	where(label);
	__asm__ volatile(""); /* keeps the call a call */
}

int main(void)
{
	struct timespec ts = {0, 30 * 1000000L};

	caller("first");
	nanosleep(&ts, NULL);
	caller("second");
	return 0;
}
