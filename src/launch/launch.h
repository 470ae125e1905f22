/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * launch: starting a program under one of lever's runtimes, for every command
 * that does (lever causal, lever stabilize, lever bench/compare --randomize,
 * next annotate record and layout record). One place for what each of them
 * needs (DESIGN.md, "no exec plumbing in src/cli"):
 *
 *   - finding a runtime (liblever-*.so) next to the lever binary;
 *   - building the program's environment: settings as variables (a runtime's
 *     settings.h contract), the runtime appended to LD_PRELOAD once;
 *   - refusing programs that cannot take a preloaded runtime (statically
 *     linked: no PT_INTERP, so the dynamic loader never reads LD_PRELOAD),
 *     resolved through PATH as exec would;
 *   - exec, or fork + exec + wait, and wait statuses as exit statuses and as
 *     words ("killed by SIGSEGV", not "exit status 139").
 *
 * Messages go to stderr prefixed by the caller's name (`who`, e.g.
 * "lever causal"); functions return 0 or -1 after printing why.
 */
#ifndef LEVER_LAUNCH_H
#define LEVER_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "stabilizer/runtime/settings.h"

#define LAUNCH_CAUSAL_RUNTIME	  "liblever-causal.so"
#define LAUNCH_STABILIZER_RUNTIME "liblever-stabilizer.so"

/* Exit statuses of a launcher that could not start the program (as env(1)). */
#define LAUNCH_EXIT_FAILURE	1   /* lever's own failure: runtime missing, static binary */
#define LAUNCH_EXIT_CANNOT_EXEC 126 /* PROGRAM found but not executable */
#define LAUNCH_EXIT_NOT_FOUND	127 /* PROGRAM not found */

/* ------------------------------------------------------------ runtimes */

/*
 * The directory holding lever's runtimes: $LEVER_RUNTIME_DIR, else
 * <directory of the lever binary>/../lib/lever (the build tree and an
 * install alike). NULL if /proc/self/exe cannot be read.
 */
const char *launch_runtime_dir(void);
/* The absolute path of runtime `name` into out (PATH_MAX bytes). */
int launch_find_runtime(const char *who, const char *name, char *out);
/*
 * The LD_PRELOAD value `old` with runtime appended (space-separated) unless
 * already there, as a new string (free() it); NULL when out of memory.
 */
char *launch_preload_value(const char *old, const char *runtime);

/* ------------------------------------------------------------ environment */

/*
 * A program's environment under construction: a copy of a base environment
 * (usually environ) in which variables are set or removed. The caller's own
 * environment is never changed.
 */
struct launch_env {
	const char *who;
	char **vars; /* "NAME=value", each malloc'ed; NULL-terminated */
	size_t n, cap;
};

int launch_env_init(struct launch_env *env, const char *who, char *const *base);
void launch_env_free(struct launch_env *env);
/* The value of name, or NULL. */
const char *launch_env_get(const struct launch_env *env, const char *name);
/* Set name to value; a NULL value removes it (settings never leak in from the caller). */
int launch_env_set(struct launch_env *env, const char *name, const char *value);
int launch_env_set_u64(struct launch_env *env, const char *name, unsigned long long value);
/* Append runtime (a path) to LD_PRELOAD, once. */
int launch_env_add_preload(struct launch_env *env, const char *runtime);
/* launch_find_runtime + launch_env_add_preload. */
int launch_env_add_runtime(struct launch_env *env, const char *runtime_name);
/* The NULL-terminated vector for execve/posix_spawn; owned by env. */
char **launch_env_vector(const struct launch_env *env);

/*
 * Stabilizer's settings as its LEVER_STABILIZE_* variables
 * (stabilizer/runtime/settings.h), every one of them set, so that none is
 * inherited from the caller. Does not add the runtime to LD_PRELOAD.
 */
int launch_env_stabilizer(struct launch_env *env, const struct stabilizer_settings *s);

/* ------------------------------------------------------------ programs */

enum launch_program_kind {
	LAUNCH_PROGRAM_DYNAMIC, /* ELF with an interpreter: takes LD_PRELOAD */
	LAUNCH_PROGRAM_STATIC,	/* ELF without PT_INTERP: the runtime cannot be preloaded */
	LAUNCH_PROGRAM_SCRIPT,	/* "#!": interpreter holds the interpreter's path */
	LAUNCH_PROGRAM_OTHER,	/* not found, unreadable or not ELF: exec will say */
};

struct launch_program {
	enum launch_program_kind kind;
	char path[4096];	/* as exec would run it (PATH searched) */
	char interpreter[4096]; /* LAUNCH_PROGRAM_SCRIPT: the first word after "#!" */
};

/*
 * Resolve name as execvp would (PATH searched unless it holds a '/'): 0 with
 * the path in out (size bytes), or a negative errno (-ENOENT, -EACCES).
 */
int launch_resolve_program(const char *name, char *out, size_t size);
/* What program (a name as given to execvp) is; never fails (kind OTHER). */
void launch_inspect_program(const char *name, struct launch_program *out);
/*
 * -1 after printing why when program (or a script's interpreter) is a static
 * ELF executable, into which `runtime_what` ("lever's causal runtime") cannot
 * be preloaded; 0 otherwise (programs exec cannot run are left to exec).
 */
int launch_check_preloadable(const char *who, const char *program, const char *runtime_what);

/* ------------------------------------------------------------ running */

/*
 * execvpe(argv[0], argv, env) after flushing stdio; returns only on failure,
 * after printing why, with LAUNCH_EXIT_NOT_FOUND or LAUNCH_EXIT_CANNOT_EXEC.
 * A NULL env keeps environ.
 */
int launch_exec(const char *who, char *const *argv, const struct launch_env *env);
/*
 * fork + execvpe + waitpid (restarted on EINTR): 0 with the child's wait
 * status in *status, or -1 after printing why (fork failed). A child that
 * cannot exec exits LAUNCH_EXIT_NOT_FOUND/CANNOT_EXEC after printing why.
 */
int launch_run(const char *who, char *const *argv, const struct launch_env *env, int *status);

/* A wait status as a shell reports it: the exit code, or 128 + the signal. */
int launch_exit_status(int wait_status);
/*
 * A wait status in words: "exit status 3", "killed by SIGSEGV
 * (Segmentation fault), core dumped". Returns buf.
 */
const char *launch_describe_status(int wait_status, char *buf, size_t size);

#endif
