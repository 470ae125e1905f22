// SPDX-License-Identifier: GPL-3.0-or-later
// A std::list::sort driver for bench/annotate/real.sh (issue 15 must-show 4,
// spec freud.md §6): built by the distro's g++ with -g (not lever cc), so
// `lever annotate record` has to live-patch it. sort_list() takes the list
// by reference: its feature is the list's size (std::list keeps _M_size),
// and the time of sorting n elements should grow as n log n, which
// `lever annotate derive` is asked to find. Sizes vary over three orders
// of magnitude so the fit has something to fit.
//
// usage: list_sort ROUNDS [SEED]
#include <cstdio>
#include <cstdlib>
#include <list>
#include <random>

// noinline: the probe needs a real call, as a library's sort would be.
__attribute__((noinline)) void sort_list(std::list<unsigned> &values)
{
	values.sort();
}

__attribute__((noinline)) static std::list<unsigned> make_list(std::mt19937 &rng, size_t n)
{
	std::list<unsigned> values;
	for (size_t i = 0; i < n; i++)
		values.push_back(rng());
	return values;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: list_sort ROUNDS [SEED]\n");
		return 2;
	}
	long rounds = strtol(argv[1], nullptr, 10);
	unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], nullptr, 10) : 1;
	std::mt19937 rng(seed);
	// log-uniform sizes from 16 to 16384 elements
	std::uniform_real_distribution<double> log_size(4.0, 14.0);
	unsigned long checksum = 0;
	for (long r = 0; r < rounds; r++) {
		size_t n = (size_t)__builtin_exp2(log_size(rng));
		std::list<unsigned> values = make_list(rng, n);
		sort_list(values);
		checksum += values.front() ^ values.back();
	}
	printf("%lu\n", checksum);
	return 0;
}
