// SPDX-License-Identifier: GPL-3.0-or-later
#include <iostream>
#include <map>
#include <string>

int main()
{
	std::map<std::string, int> counts;
	for (const char *w : {"a", "b", "a", "c", "a"})
		counts[w]++;
	for (const auto &kv : counts)
		std::cout << kv.first << "=" << kv.second << "\n";
	return 0;
}
