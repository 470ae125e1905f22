/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * launch: runtimes, environments, programs and exit statuses for every
 * command that starts a program under a lever runtime (launch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "launch/launch.h"

extern char **environ;

/* ------------------------------------------------------------ runtimes */

const char *launch_runtime_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("LEVER_RUNTIME_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if ((size_t)snprintf(dir, sizeof(dir), "%s/../lib/lever", exe) >= sizeof(dir)) {
		dir[0] = '\0';
		return NULL;
	}
	return dir;
}

int launch_find_runtime(const char *who, const char *name, char *out)
{
	const char *dir = launch_runtime_dir();
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
	/* LD_PRELOAD separates with spaces and colons and has no quoting */
	if (strpbrk(out, " :")) {
		fprintf(stderr,
			"%s: the runtime path %s contains a space or ':', which LD_PRELOAD "
			"cannot express\n",
			who, out);
		return -1;
	}
	return 0;
}

/* Is runtime one of the words of the LD_PRELOAD value? (not a substring of one) */
static bool preload_has(const char *value, const char *runtime)
{
	size_t n = strlen(runtime);

	for (const char *p = value; (p = strstr(p, runtime)); p++) {
		bool starts = p == value || p[-1] == ' ' || p[-1] == ':';
		bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == ':';

		if (starts && ends)
			return true;
	}
	return false;
}

char *launch_preload_value(const char *old, const char *runtime)
{
	char *value;

	if (!old || !*old)
		return strdup(runtime);
	if (preload_has(old, runtime))
		return strdup(old);
	if (asprintf(&value, "%s %s", old, runtime) < 0)
		return NULL;
	return value;
}

/* ------------------------------------------------------------ environment */

static int out_of_memory(const char *who)
{
	fprintf(stderr, "%s: out of memory\n", who);
	return -1;
}

static int env_append(struct launch_env *env, char *entry)
{
	if (env->n + 2 > env->cap) {
		size_t cap = env->cap ? 2 * env->cap : 64;
		char **v = realloc(env->vars, cap * sizeof(*v));

		if (!v)
			return -1;
		env->vars = v;
		env->cap = cap;
	}
	env->vars[env->n++] = entry;
	env->vars[env->n] = NULL;
	return 0;
}

int launch_env_init(struct launch_env *env, const char *who, char *const *base)
{
	memset(env, 0, sizeof(*env));
	env->who = who;
	/* allocate the terminating NULL first, so that an empty base gives {NULL} */
	if (env_append(env, NULL))
		return out_of_memory(who);
	env->n = 0;
	for (size_t i = 0; base && base[i]; i++) {
		char *copy = strdup(base[i]);

		if (!copy || env_append(env, copy)) {
			free(copy);
			launch_env_free(env);
			return out_of_memory(who);
		}
	}
	return 0;
}

void launch_env_free(struct launch_env *env)
{
	for (size_t i = 0; i < env->n; i++)
		free(env->vars[i]);
	free(env->vars);
	env->vars = NULL;
	env->n = env->cap = 0;
}

/* Index of the entry for name, or -1. */
static long env_find(const struct launch_env *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->vars[i], name, len) == 0 && env->vars[i][len] == '=')
			return (long)i;
	return -1;
}

const char *launch_env_get(const struct launch_env *env, const char *name)
{
	long i = env_find(env, name);

	return i < 0 ? NULL : env->vars[i] + strlen(name) + 1;
}

int launch_env_set(struct launch_env *env, const char *name, const char *value)
{
	long i = env_find(env, name);
	char *entry;

	if (!*name || strchr(name, '=')) {
		fprintf(stderr, "%s: invalid environment variable name '%s'\n", env->who, name);
		return -1;
	}
	if (!value) {
		if (i >= 0) {
			free(env->vars[i]);
			memmove(env->vars + i, env->vars + i + 1,
				(env->n - (size_t)i) * sizeof(*env->vars));
			env->n--;
		}
		return 0;
	}
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return out_of_memory(env->who);
	if (i >= 0) {
		free(env->vars[i]);
		env->vars[i] = entry;
		return 0;
	}
	if (env_append(env, entry)) {
		free(entry);
		return out_of_memory(env->who);
	}
	return 0;
}

int launch_env_set_u64(struct launch_env *env, const char *name, unsigned long long value)
{
	char text[24];

	snprintf(text, sizeof(text), "%llu", value);
	return launch_env_set(env, name, text);
}

int launch_env_add_preload(struct launch_env *env, const char *runtime)
{
	char *value = launch_preload_value(launch_env_get(env, "LD_PRELOAD"), runtime);
	int ret;

	if (!value)
		return out_of_memory(env->who);
	ret = launch_env_set(env, "LD_PRELOAD", value);
	free(value);
	return ret;
}

int launch_env_add_runtime(struct launch_env *env, const char *runtime_name)
{
	char runtime[PATH_MAX];

	if (launch_find_runtime(env->who, runtime_name, runtime))
		return -1;
	return launch_env_add_preload(env, runtime);
}

char **launch_env_vector(const struct launch_env *env)
{
	return env->vars;
}

int launch_env_stabilizer(struct launch_env *env, const struct stabilizer_settings *s)
{
	uint64_t interval = s->interval_ns ? s->interval_ns : STABILIZE_DEFAULT_INTERVAL_NS;

	if (launch_env_set(env, STABILIZE_ENV_CODE, s->code ? "1" : "0") ||
	    launch_env_set(env, STABILIZE_ENV_STACK, s->stack ? "1" : "0") ||
	    launch_env_set(env, STABILIZE_ENV_HEAP, s->heap ? "1" : "0") ||
	    launch_env_set(env, STABILIZE_ENV_ONE_TIME, s->one_time ? "1" : "0") ||
	    launch_env_set_u64(env, STABILIZE_ENV_INTERVAL, interval) ||
	    launch_env_set_u64(env, STABILIZE_ENV_SEED, s->seed) ||
	    launch_env_set_u64(env, STABILIZE_ENV_VERBOSE, s->verbose > 2 ? 2 : s->verbose) ||
	    launch_env_set(env, STABILIZE_ENV_WARNED, NULL))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ programs */

static bool executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int launch_resolve_program(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	int err = -ENOENT;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(out, size, "%s", name) >= size)
			return -ENAMETOOLONG;
		return executable_file(out) ? 0 : access(out, F_OK) ? -ENOENT : -EACCES;
	}
	/* execvp's default search path when PATH is unset */
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *colon = strchrnul(p, ':');
		int len = (int)(colon - p);

		/* an empty element is the working directory */
		if ((size_t)snprintf(out, size, "%.*s%s%s", len, p, len ? "/" : "", name) < size) {
			if (executable_file(out))
				return 0;
			if (access(out, F_OK) == 0)
				err = -EACCES;
		}
		if (!*colon)
			break;
		p = colon;
	}
	return err;
}

/* Does the ELF file at fd have a PT_INTERP? -1 if it is not ELF. */
static int elf_has_interpreter(int fd)
{
	Elf *elf;
	size_t n;
	int ret = -1;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -1;
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
		ret = 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr phdr;

			if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_INTERP)
				ret = 1;
		}
	}
	elf_end(elf);
	return ret;
}

/* "#!INTERP [ARG]": INTERP into out; false if the file is no script. */
static bool script_interpreter(int fd, char *out, size_t size)
{
	char line[512];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	char *p, *end;

	if (n < 2 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = '\0';
	p = line + 2 + strspn(line + 2, " \t");
	end = p + strcspn(p, " \t\n");
	*end = '\0';
	return *p && (size_t)snprintf(out, size, "%s", p) < size;
}

void launch_inspect_program(const char *name, struct launch_program *out)
{
	int fd, interp;

	memset(out, 0, sizeof(*out));
	out->kind = LAUNCH_PROGRAM_OTHER;
	if (launch_resolve_program(name, out->path, sizeof(out->path)))
		return;
	fd = open(out->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (script_interpreter(fd, out->interpreter, sizeof(out->interpreter))) {
		out->kind = LAUNCH_PROGRAM_SCRIPT;
	} else {
		interp = elf_has_interpreter(fd);
		if (interp >= 0)
			out->kind = interp ? LAUNCH_PROGRAM_DYNAMIC : LAUNCH_PROGRAM_STATIC;
	}
	close(fd);
}

static void say_static(const char *who, const char *path, const char *runtime_what, const char *via)
{
	fprintf(stderr,
		"%s: %s%s is statically linked: %s cannot be preloaded into it (the "
		"dynamic loader, which reads LD_PRELOAD, never runs); rebuild it without "
		"-static\n",
		who, path, via, runtime_what);
}

int launch_check_preloadable(const char *who, const char *program, const char *runtime_what)
{
	struct launch_program p, interp;
	char via[4200];

	launch_inspect_program(program, &p);
	if (p.kind == LAUNCH_PROGRAM_STATIC) {
		say_static(who, p.path, runtime_what, "");
		return -1;
	}
	if (p.kind != LAUNCH_PROGRAM_SCRIPT)
		return 0;
	/* the kernel runs the interpreter; that is where the runtime would go */
	launch_inspect_program(p.interpreter, &interp);
	if (interp.kind == LAUNCH_PROGRAM_STATIC) {
		snprintf(via, sizeof(via), " (the interpreter of %s)", p.path);
		say_static(who, interp.path, runtime_what, via);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ running */

static int exec_failed(const char *who, const char *program, int err)
{
	fprintf(stderr, "%s: cannot run %s: %s\n", who, program, strerror(err));
	return err == ENOENT || err == ENOTDIR ? LAUNCH_EXIT_NOT_FOUND : LAUNCH_EXIT_CANNOT_EXEC;
}

int launch_exec(const char *who, char *const *argv, const struct launch_env *env)
{
	fflush(NULL);
	execvpe(argv[0], argv, env ? launch_env_vector(env) : environ);
	return exec_failed(who, argv[0], errno);
}

int launch_run(const char *who, char *const *argv, const struct launch_env *env, int *status)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: cannot start %s: fork: %s\n", who, argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0)
		_exit(launch_exec(who, argv, env));
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: waiting for %s: %s\n", who, argv[0], strerror(errno));
			return -1;
		}
	}
	return 0;
}

int launch_exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}

const char *launch_describe_status(int wait_status, char *buf, size_t size)
{
	int sig;
	const char *abbrev;

	if (WIFEXITED(wait_status)) {
		snprintf(buf, size, "exit status %d", WEXITSTATUS(wait_status));
		return buf;
	}
	if (!WIFSIGNALED(wait_status)) {
		snprintf(buf, size, "wait status %#x", (unsigned)wait_status);
		return buf;
	}
	sig = WTERMSIG(wait_status);
	abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, size, "killed by SIG%s (%s)%s", abbrev, strsignal(sig),
			 WCOREDUMP(wait_status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "killed by signal %d%s", sig,
			 WCOREDUMP(wait_status) ? ", core dumped" : "");
	return buf;
}
