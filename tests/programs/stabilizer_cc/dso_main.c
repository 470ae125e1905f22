/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack pads in shared objects: the distance from main to 8 calls deep
 * inside libdso_lib.so, linked with it, or (built with -DOPEN_AT_RUN_TIME)
 * opening it (dso_main dlopen PATH), then closing it again and running on
 * while the pads are redrawn.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

long dso_distance(const char *top, int depth);

int main(int argc, char **argv)
{
	char local;
#ifdef OPEN_AT_RUN_TIME
	long (*distance)(const char *, int) = NULL;
#else
	long (*distance)(const char *, int) = dso_distance;
#endif
	void *lib = NULL;

	if (argc == 3 && strcmp(argv[1], "dlopen") == 0) {
		lib = dlopen(argv[2], RTLD_NOW);
		if (!lib) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		distance = (long (*)(const char *, int))dlsym(lib, "dso_distance");
	}
	printf("%ld\n", distance(&local, 8));
	if (lib) {
		struct timespec pause = {0, 20000000};

		dlclose(lib);
		nanosleep(&pause, NULL); /* re-randomizations after the unload */
	}
	return 0;
}
