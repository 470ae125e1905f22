// SPDX-License-Identifier: GPL-3.0-or-later
// C++ exceptions thrown through moved frames: the unwinder must find the
// copies' FDEs and LSDAs (destructors run, catch clauses match, rethrow).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <time.h>

static int destroyed;

struct Guard {
	int id;
	explicit Guard(int i) : id(i)
	{
	}
	~Guard()
	{
		destroyed += id;
	}
};

__attribute__((noinline)) static int thrower(int n)
{
	Guard g(n);
	if (n % 3 == 0)
		throw std::runtime_error("three " + std::to_string(n));
	if (n % 5 == 0)
		throw n;
	return n * 2;
}

__attribute__((noinline)) static int middle(int n, int depth)
{
	Guard g(1);
	if (depth > 0)
		return middle(n, depth - 1) + 1;
	return thrower(n);
}

__attribute__((noinline)) static int catcher(int n)
{
	try {
		return middle(n, 4);
	} catch (const std::runtime_error &e) {
		return -static_cast<int>(std::string(e.what()).size());
	}
}

__attribute__((noinline)) static int rethrower(int n)
{
	try {
		return catcher(n);
	} catch (int v) {
		Guard g(100);
		try {
			throw;
		} catch (int again) {
			return -1000 - again;
		}
	}
}

int main()
{
	long total = 0;
	for (int i = 1; i <= 300; i++) {
		total += rethrower(i);
		if (i % 50 == 0) {
			struct timespec ts = {0, 2 * 1000000L};
			nanosleep(&ts, nullptr);
		}
	}
	std::printf("total %ld destroyed %d\n", total, destroyed);
	return 0;
}
