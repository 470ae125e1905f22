/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Loads libdlwork.so with dlopen after start-up and spends its time there, so
 * a profile restricted to that library (-b '%libdlwork%') only has lines if the
 * runtime maps libraries loaded later. Usage: dlopen_main LIB ROUNDS N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "lever.h"

int main(int argc, char **argv)
{
	void *h;
	long (*spin)(long);
	long rounds = argc > 2 ? atol(argv[2]) : 100, n = argc > 3 ? atol(argv[3]) : 4000000;
	long total = 0;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "dlopen_main: cannot load %s\n", argc < 2 ? "(none)" : argv[1]);
		return 1;
	}
	*(void **)&spin = dlsym(h, "dlwork_spin");
	for (long r = 0; r < rounds; r++) {
		total += spin(n);
		LEVER_PROGRESS;
	}
	printf("%ld rounds, %ld\n", rounds, total & 0xffff);
	return 0;
}
