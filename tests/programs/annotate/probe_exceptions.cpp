// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_exits.sh): C++ exceptions
 * thrown through probed functions (with and without cleanups), caught by a
 * probed function, and rethrown; the unwinder must never meet the exit
 * trampoline, and the calls still alive must be recorded.
 */
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long sum = 0;

	for (int i = 0; i < rounds; i++)
		sum += outer(i);
	std::printf("sum %ld\n", sum);
	return 0;
}
