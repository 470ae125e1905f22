/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Finding lever's runtimes and putting them into LD_PRELOAD (launch.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/launch.h"

int launch_find_runtime(const char *who, const char *name, char *out)
{
	const char *dir = lever_runtime_dir();
	char path[PATH_MAX];

	if (!dir) {
		fprintf(stderr,
			"%s: cannot locate lever's runtime directory; set LEVER_RUNTIME_DIR\n",
			who);
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    !realpath(path, out) || access(out, R_OK)) {
		fprintf(stderr,
			"%s: runtime not found: %s\n"
			"Build it (make build), install lever (make install), or point "
			"LEVER_RUNTIME_DIR at the directory holding %s.\n",
			who, path, name);
		return -1;
	}
	if (strpbrk(out, " :")) {
		fprintf(stderr,
			"%s: the runtime path %s contains a space or ':', which LD_PRELOAD "
			"cannot express\n",
			who, out);
		return -1;
	}
	return 0;
}

char *launch_preload_value(const char *old, const char *runtime)
{
	char *value;

	if (!old || !*old)
		return strdup(runtime);
	if (strstr(old, runtime))
		return strdup(old);
	if (asprintf(&value, "%s %s", old, runtime) < 0)
		return NULL;
	return value;
}

char *launch_runtime_preload(const char *who, const char *name)
{
	char runtime[PATH_MAX];
	char *value;

	if (launch_find_runtime(who, name, runtime))
		return NULL;
	value = launch_preload_value(getenv("LD_PRELOAD"), runtime);
	if (!value)
		fprintf(stderr, "%s: out of memory\n", who);
	return value;
}
