/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Launching a program under one of lever's runtimes (launch.c): finding the
 * runtime next to the lever binary and adding it to LD_PRELOAD. Used by
 * lever causal, lever stabilize and lever bench/compare --randomize=heap.
 */
#ifndef LEVER_CLI_LAUNCH_H
#define LEVER_CLI_LAUNCH_H

#include <stddef.h>

#define STABILIZER_RUNTIME_NAME "liblever-stabilizer.so"

/*
 * The absolute path of runtime `name` into out (PATH_MAX bytes); 0, or -1
 * after printing why not (prefixed with who, e.g. "lever stabilize").
 */
int launch_find_runtime(const char *who, const char *name, char *out);
/*
 * The LD_PRELOAD value `old` with runtime appended (space-separated) unless
 * already there, as a new string (free() it); NULL when out of memory.
 */
char *launch_preload_value(const char *old, const char *runtime);
/*
 * The caller's LD_PRELOAD with runtime `name` appended, as a new string
 * (free() it); NULL after printing why not (prefixed with who).
 */
char *launch_runtime_preload(const char *who, const char *name);

#endif
