// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_exits.sh): C++ exceptions
 * thrown through probed functions (with and without cleanups), caught by a
 * probed function, and rethrown; the unwinder must never meet the exit
 * trampoline, and the calls still alive must be recorded. alloc_first's
 * first instructions include the call to operator new[] that throws: live
 * patching displaces that call into the trampoline, and the unwinder must
 * still find the return address inside alloc_first (issue 15).
 */
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#define NOINLINE __attribute__((noinline))

NOINLINE void deep(int d)
{
	if (d == 0)
		throw std::runtime_error("deep");
	std::string keep(64, 'x'); // a cleanup runs in this frame
	deep(d - 1);
	__asm__ volatile("" ::"r"(keep.data()) : "memory");
}

NOINLINE int guard(int i)
{
	try {
		deep(2);
	} catch (const std::exception &) {
		return i;
	}
	return -1;
}

NOINLINE int rethrower(int i)
{
	try {
		deep(1);
	} catch (...) {
		if (i >= 0)
			throw;
	}
	return 0;
}

NOINLINE int outer(int i)
{
	int r = guard(i);

	try {
		r += rethrower(i);
	} catch (const std::runtime_error &) {
		r += 1;
	}
	return r;
}

/* No frame pointer: `sub rsp; call _Znam` are the first bytes patched. */
NOINLINE __attribute__((optimize("omit-frame-pointer"))) int alloc_first(std::size_t n)
{
	try {
		char *volatile p = new char[n];
		delete[] p;
	} catch (const std::bad_alloc &) {
		return 1;
	}
	return 0;
}

/*
 * The same through an indirect call (`call *ptr(%rip)`, as -fno-plt emits):
 * indirect_first is written in assembly so that the call is surely among its
 * first bytes, with the CFI a compiler would give it.
 */
extern "C" void throw_now(void);
extern "C" void throw_now(void)
{
	throw 7;
}
extern "C" void (*volatile throw_now_ptr)(void);
void (*volatile throw_now_ptr)(void) = throw_now;
extern "C" void indirect_first(void);
__asm__(".text\n"
	".globl indirect_first\n"
	".type indirect_first, @function\n"
	"indirect_first:\n"
	".cfi_startproc\n"
	"	subq $8, %rsp\n"
	".cfi_def_cfa_offset 16\n"
	"	call *throw_now_ptr(%rip)\n"
	"	addq $8, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size indirect_first, .-indirect_first\n");

NOINLINE int catch_indirect()
{
	try {
		indirect_first();
	} catch (int) {
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long sum = 0;

	volatile std::size_t huge = std::size_t(1) << 60;
	int refused = 0;

	for (int i = 0; i < rounds; i++)
		sum += outer(i);
	for (int i = 0; i < rounds; i++)
		refused += alloc_first(huge) + catch_indirect();
	std::printf("sum %ld refused %d\n", sum, refused);
	return 0;
}
