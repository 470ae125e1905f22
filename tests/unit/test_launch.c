/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/launch (launch.h): the program's environment (set, remove, LD_PRELOAD
 * once, Stabilizer's settings contract), PATH resolution as execvp does it,
 * static-binary detection on lever's own binary and on /bin/sh, and wait
 * statuses in words.
 */
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "launch/launch.h"

static void environment_sets_replaces_and_removes(void **state)
{
	char *base[] = {"A=1", "KEEP=x", "LEVER_CAUSAL_SEED=7", NULL};
	struct launch_env env;
	char **v;
	size_t n = 0;

	(void)state;
	assert_int_equal(launch_env_init(&env, "test", base), 0);
	assert_int_equal(launch_env_set(&env, "A", "2"), 0);
	assert_int_equal(launch_env_set(&env, "LEVER_CAUSAL_SEED", NULL), 0);
	assert_int_equal(launch_env_set(&env, "NEW", ""), 0);
	assert_int_equal(launch_env_set_u64(&env, "N", 18446744073709551615ULL), 0);
	assert_string_equal(launch_env_get(&env, "A"), "2");
	assert_string_equal(launch_env_get(&env, "KEEP"), "x");
	assert_string_equal(launch_env_get(&env, "NEW"), "");
	assert_string_equal(launch_env_get(&env, "N"), "18446744073709551615");
	assert_null(launch_env_get(&env, "LEVER_CAUSAL_SEED"));
	assert_null(launch_env_get(&env, "KEE")); /* a prefix is not a name */
	assert_int_equal(launch_env_set(&env, "BAD=NAME", "1"), -1);
	for (v = launch_env_vector(&env); *v; v++)
		n++;
	assert_int_equal(n, 4);
	/* the base is copied, never changed */
	assert_string_equal(base[0], "A=1");
	launch_env_free(&env);
}

static void preload_appended_once(void **state)
{
	char *base[] = {"LD_PRELOAD=/x/other.so", NULL};
	struct launch_env env;
	char *v;

	(void)state;
	assert_int_equal(launch_env_init(&env, "test", base), 0);
	assert_int_equal(launch_env_add_preload(&env, "/r/liblever-causal.so"), 0);
	assert_int_equal(launch_env_add_preload(&env, "/r/liblever-causal.so"), 0);
	assert_string_equal(launch_env_get(&env, "LD_PRELOAD"),
			    "/x/other.so /r/liblever-causal.so");
	launch_env_free(&env);
	assert_int_equal(launch_env_init(&env, "test", NULL), 0);
	assert_int_equal(launch_env_add_preload(&env, "/r/a.so"), 0);
	assert_string_equal(launch_env_get(&env, "LD_PRELOAD"), "/r/a.so");
	launch_env_free(&env);
	/* a longer name that contains the runtime's is another library */
	v = launch_preload_value("/r/a.so.old", "/r/a.so");
	assert_string_equal(v, "/r/a.so.old /r/a.so");
	free(v);
	v = launch_preload_value("/q/b.so:/r/a.so", "/r/a.so");
	assert_string_equal(v, "/q/b.so:/r/a.so");
	free(v);
}

static void stabilizer_settings_become_the_contract(void **state)
{
	char *base[] = {STABILIZE_ENV_WARNED "=code", STABILIZE_ENV_CODE "=1", NULL};
	const struct stabilizer_settings s = {.heap = true, .seed = 42, .verbose = 5};
	struct launch_env env;

	(void)state;
	assert_int_equal(launch_env_init(&env, "test", base), 0);
	assert_int_equal(launch_env_stabilizer(&env, &s), 0);
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_HEAP), "1");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_CODE), "0");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_STACK), "0");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_ONE_TIME), "0");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_INTERVAL), "500000000");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_SEED), "42");
	assert_string_equal(launch_env_get(&env, STABILIZE_ENV_VERBOSE), "2");
	/* a new run warns again */
	assert_null(launch_env_get(&env, STABILIZE_ENV_WARNED));
	launch_env_free(&env);
}

static void programs_resolved_through_path(void **state)
{
	char path[4096];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;

	(void)state;
	setenv("PATH", "/nonexistent:/bin:/usr/bin", 1);
	assert_int_equal(launch_resolve_program("sh", path, sizeof(path)), 0);
	assert_string_equal(path, "/bin/sh");
	assert_int_equal(launch_resolve_program("no-such-program-xyz", path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(launch_resolve_program("./no/such", path, sizeof(path)), -ENOENT);
	/* a file that exists but cannot be executed */
	assert_int_equal(launch_resolve_program("/etc/passwd", path, sizeof(path)), -EACCES);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}

static void program_kinds(void **state)
{
	struct launch_program p;
	char script[] = "/tmp/test_launch_XXXXXX";
	int fd = mkstemp(script);

	(void)state;
	launch_inspect_program("/bin/sh", &p);
	assert_int_equal(p.kind, LAUNCH_PROGRAM_DYNAMIC);
	launch_inspect_program("/etc/passwd", &p);
	assert_int_equal(p.kind, LAUNCH_PROGRAM_OTHER);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#! /bin/sh -e\necho\n", 19), 19);
	close(fd);
	chmod(script, 0700);
	launch_inspect_program(script, &p);
	assert_int_equal(p.kind, LAUNCH_PROGRAM_SCRIPT);
	assert_string_equal(p.interpreter, "/bin/sh");
	assert_int_equal(launch_check_preloadable("test", script, "a runtime"), 0);
	unlink(script);
}

static void statuses_in_words(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(launch_exit_status(3 << 8), 3);
	assert_string_equal(launch_describe_status(3 << 8, buf, sizeof(buf)), "exit status 3");
	assert_int_equal(launch_exit_status(SIGSEGV), 128 + SIGSEGV);
	launch_describe_status(SIGSEGV, buf, sizeof(buf));
	assert_non_null(strstr(buf, "killed by SIGSEGV"));
	assert_null(strstr(buf, "139"));
	launch_describe_status(SIGABRT | 0x80, buf, sizeof(buf));
	assert_non_null(strstr(buf, "killed by SIGABRT"));
	assert_non_null(strstr(buf, "core dumped"));
}

static void runs_and_waits(void **state)
{
	char *ok[] = {"sh", "-c", "exit 7", NULL};
	char *killed[] = {"sh", "-c", "kill -SEGV $$", NULL};
	char *missing[] = {"no-such-program-xyz", NULL};
	int status;

	(void)state;
	assert_int_equal(launch_run("test", ok, NULL, &status), 0);
	assert_int_equal(launch_exit_status(status), 7);
	assert_int_equal(launch_run("test", killed, NULL, &status), 0);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	assert_int_equal(launch_run("test", missing, NULL, &status), 0);
	assert_int_equal(launch_exit_status(status), LAUNCH_EXIT_NOT_FOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(environment_sets_replaces_and_removes),
	    cmocka_unit_test(preload_appended_once),
	    cmocka_unit_test(stabilizer_settings_become_the_contract),
	    cmocka_unit_test(programs_resolved_through_path),
	    cmocka_unit_test(program_kinds),
	    cmocka_unit_test(statuses_in_words),
	    cmocka_unit_test(runs_and_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
