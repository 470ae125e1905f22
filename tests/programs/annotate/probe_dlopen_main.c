// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_calls.sh): a library loaded
 * with dlopen after start-up, whose function is probed once it arrives.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	long (*fn)(long);
	long s = 0;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "lib_work");
	for (long i = 0; i < 10; i++)
		s += fn(i);
	printf("lib %ld\n", s);
	return 0;
}
