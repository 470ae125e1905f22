// SPDX-License-Identifier: GPL-3.0-or-later
// C++ exceptions unwinding through padded frames, with destructors on the
// way: the output must not depend on the pads.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static int destroyed;

struct Guard {
	std::string name;
	explicit Guard(std::string n) : name(std::move(n))
	{
	}
	~Guard()
	{
		destroyed++;
	}
};

__attribute__((noinline)) static int dive(int depth, int throw_at)
{
	Guard g("level " + std::to_string(depth));
	std::vector<int> v(depth + 1, depth);
	if (depth == throw_at)
		throw std::runtime_error("thrown at " + g.name);
	if (depth == 0)
		return (int)v.size();
	int r = dive(depth - 1, throw_at);
	return r + (int)v.size();
}

__attribute__((noinline)) static int catch_in_middle(int depth, int throw_at)
{
	try {
		return dive(depth, throw_at);
	} catch (const std::runtime_error &e) {
		std::printf("caught: %s\n", e.what());
		return -1;
	}
}

int main()
{
	for (int round = 0; round < 200; round++) {
		int throw_at = round % 23 - 1; // -1: never
		int r = catch_in_middle(20, throw_at);
		if (round < 25)
			std::printf("round %d: %d\n", round, r);
	}
	try {
		dive(5, 3);
	} catch (const std::exception &e) {
		std::printf("outer caught: %s\n", e.what());
	}
	std::printf("destructors run: %d\n", destroyed);
	return 0;
}
