/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Running commands for lever bench and lever compare: command strings to
 * argv, one measured run (posix_spawnp, wait4 for user/system time and
 * peak RSS), the randomized environment offset, the Stabilizer parts
 * (--randomize=heap, code, stack: the runtime preloaded with a fresh seed
 * per run), prepare and cleanup commands, the measuring loop (interleaved
 * across commands) and the progress bar.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/bench_common.h"
#include "launch/launch.h"
#include "stabilizer/runtime/settings.h"

extern char **environ;

#define ENV_OFFSET_VAR "LEVER_RANDOMIZED_ENVIRONMENT_OFFSET"
#define ENV_OFFSET_MAX 4096
#define ITERATION_VAR  "LEVER_BENCH_ITERATION"

/* ------------------------------------------------------------ commands */

static bool has_shell_syntax(const char *s)
{
	return strpbrk(s, "|&;<>()$`*?[]{}~!#=\n") != NULL;
}

static int push_word(struct bench_command *c, size_t *n, char *word)
{
	char **grown = realloc(c->argv, (*n + 2) * sizeof(*grown));

	if (!grown) {
		free(word);
		return -1;
	}
	c->argv = grown;
	c->argv[(*n)++] = word;
	c->argv[*n] = NULL;
	return 0;
}

/* Split text into words honouring quotes; -1 on unbalanced quotes or no memory. */
static int split_words(struct bench_command *c, const char *text)
{
	size_t n = 0, len = strlen(text);
	char *word = malloc(len + 1);
	size_t w = 0;
	bool in_word = false;
	char quote = 0;

	if (!word)
		return -1;
	for (const char *p = text;; p++) {
		if (!quote && (*p == '\0' || *p == ' ' || *p == '\t')) {
			if (in_word) {
				word[w] = '\0';
				if (push_word(c, &n, strdup(word)))
					break;
				w = 0;
				in_word = false;
			}
			if (*p == '\0') {
				free(word);
				return n ? 0 : -1;
			}
			continue;
		}
		if (*p == '\0')
			break; /* unbalanced quote */
		in_word = true;
		if (quote ? *p == quote : (*p == '\'' || *p == '"')) {
			quote = quote ? 0 : *p;
		} else if (*p == '\\' && quote != '\'' && p[1]) {
			word[w++] = *++p;
		} else {
			word[w++] = *p;
		}
	}
	free(word);
	return -1;
}

int bench_command_from_string(struct bench_command *c, const char *text)
{
	memset(c, 0, sizeof(*c));
	c->display = strdup(text);
	if (!c->display)
		return -1;
	if (!has_shell_syntax(text))
		return split_words(c, text); /* fails on unbalanced quotes or no words */
	c->argv = calloc(4, sizeof(*c->argv));
	if (!c->argv)
		return -1;
	c->shell = true;
	c->argv[0] = strdup("/bin/sh");
	c->argv[1] = strdup("-c");
	c->argv[2] = strdup(text);
	return c->argv[0] && c->argv[1] && c->argv[2] ? 0 : -1;
}

int bench_command_from_argv(struct bench_command *c, char **argv, int argc)
{
	size_t len = 0;

	memset(c, 0, sizeof(*c));
	c->argv = calloc((size_t)argc + 1, sizeof(*c->argv));
	if (!c->argv)
		return -1;
	for (int i = 0; i < argc; i++) {
		c->argv[i] = strdup(argv[i]);
		if (!c->argv[i])
			return -1;
		len += strlen(argv[i]) + 1;
	}
	c->display = malloc(len + 1);
	if (!c->display)
		return -1;
	c->display[0] = '\0';
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(c->display, " ");
		strcat(c->display, argv[i]);
	}
	return 0;
}

void bench_command_free(struct bench_command *c)
{
	for (size_t i = 0; c->argv && c->argv[i]; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c->display);
	free(c->program);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------ one run */

/* LD_PRELOAD=<the caller's> <liblever-stabilizer.so>, for --randomize=heap/code/stack. */
static int prepare_preload(struct bench_session *s)
{
	char runtime[PATH_MAX];
	char *value;
	int n;

	if (launch_find_runtime(s->name, LAUNCH_STABILIZER_RUNTIME, runtime))
		return 1;
	value = launch_preload_value(getenv("LD_PRELOAD"), runtime);
	if (!value) {
		fprintf(stderr, "%s: out of memory\n", s->name);
		return 1;
	}
	n = snprintf(s->preload, sizeof(s->preload), "LD_PRELOAD=%s", value);
	free(value);
	if (n < 0 || (size_t)n >= sizeof(s->preload)) {
		fprintf(stderr, "%s: LD_PRELOAD is too long\n", s->name);
		return 1;
	}
	return 0;
}

int bench_session_init(struct bench_session *s, const struct bench_options *o, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->opt = o;
	s->name = name;
	rng_seed(&s->rng, o->seed);
	s->tty = o->progress && isatty(STDERR_FILENO);
	return bench_options_stabilizer(o) ? prepare_preload(s) : 0;
}

/* Variables a run sets itself: the caller's values must not leak in. */
static bool replaced_variable(const struct bench_session *s, const char *entry)
{
	static const char *const ours[] = {ENV_OFFSET_VAR "=", ITERATION_VAR "="};
	static const char *const stabilizer[] = {
	    "LD_PRELOAD=",	    STABILIZE_ENV_CODE "=",	STABILIZE_ENV_STACK "=",
	    STABILIZE_ENV_HEAP "=", STABILIZE_ENV_ONE_TIME "=", STABILIZE_ENV_INTERVAL "=",
	    STABILIZE_ENV_SEED "=", STABILIZE_ENV_VERBOSE "=",
	};

	for (size_t i = 0; i < ARRAY_SIZE(ours); i++)
		if (strncmp(entry, ours[i], strlen(ours[i])) == 0)
			return true;
	for (size_t i = 0; bench_options_stabilizer(s->opt) && i < ARRAY_SIZE(stabilizer); i++)
		if (strncmp(entry, stabilizer[i], strlen(stabilizer[i])) == 0)
			return true;
	return false;
}

#define STABILIZER_VARS	   6 /* HEAP, CODE, STACK, ONE_TIME, INTERVAL_NS, SEED */
#define STABILIZER_VAR_LEN 64

/* The runtime's settings for one run (stabilize.c's contract), seed drawn here. */
static void stabilizer_settings(struct bench_session *s, char vars[][STABILIZER_VAR_LEN],
				uint64_t *seed)
{
	const struct bench_options *o = s->opt;

	*seed = rng_next(&s->rng);
	snprintf(vars[0], STABILIZER_VAR_LEN, "%s=%d", STABILIZE_ENV_HEAP, o->randomize_heap);
	snprintf(vars[1], STABILIZER_VAR_LEN, "%s=%d", STABILIZE_ENV_CODE, o->randomize_code);
	snprintf(vars[2], STABILIZER_VAR_LEN, "%s=%d", STABILIZE_ENV_STACK, o->randomize_stack);
	snprintf(vars[3], STABILIZER_VAR_LEN, "%s=%d", STABILIZE_ENV_ONE_TIME,
		 o->rerandomize_ns == 0);
	snprintf(vars[4], STABILIZER_VAR_LEN, "%s=%llu", STABILIZE_ENV_INTERVAL,
		 (unsigned long long)(o->rerandomize_ns ? o->rerandomize_ns
							: STABILIZE_DEFAULT_INTERVAL_NS));
	snprintf(vars[5], STABILIZER_VAR_LEN, "%s=%llu", STABILIZE_ENV_SEED,
		 (unsigned long long)*seed);
}

/*
 * The environment for one run: ours plus the padding and the iteration
 * number, and with a Stabilizer part the runtime and its settings with a
 * fresh seed (vars[] holds those strings; free them with the array).
 */
static char **run_environment(struct bench_session *s, size_t offset, char **pad, char **iter,
			      char vars[][STABILIZER_VAR_LEN], uint64_t *seed)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4 + STABILIZER_VARS, sizeof(*env));
	*pad = malloc(sizeof(ENV_OFFSET_VAR) + offset + 1);
	*iter = malloc(sizeof(ITERATION_VAR) + 24);
	if (!env || !*pad || !*iter)
		return env;
	for (size_t i = 0; i < n; i++)
		if (!replaced_variable(s, environ[i]))
			env[k++] = environ[i];
	if (s->opt->randomize_env) {
		memcpy(*pad, ENV_OFFSET_VAR "=", sizeof(ENV_OFFSET_VAR));
		memset(*pad + sizeof(ENV_OFFSET_VAR), 'X', offset);
		(*pad)[sizeof(ENV_OFFSET_VAR) + offset] = '\0';
		env[k++] = *pad;
	}
	snprintf(*iter, sizeof(ITERATION_VAR) + 24, ITERATION_VAR "=%llu",
		 (unsigned long long)s->iteration);
	env[k++] = *iter;
	*seed = 0;
	if (bench_options_stabilizer(s->opt)) {
		env[k++] = s->preload;
		stabilizer_settings(s, vars, seed);
		for (int i = 0; i < STABILIZER_VARS; i++)
			env[k++] = vars[i];
	}
	env[k] = NULL;
	return env;
}

static double timeval_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Standard input from /dev/null; output discarded unless show_output. */
static int spawn_actions(posix_spawn_file_actions_t *fa, bool show_output)
{
	if (posix_spawn_file_actions_init(fa))
		return -ENOMEM;
	if (posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
	    (!show_output &&
	     (posix_spawn_file_actions_addopen(fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) ||
	      posix_spawn_file_actions_adddup2(fa, STDOUT_FILENO, STDERR_FILENO)))) {
		posix_spawn_file_actions_destroy(fa);
		return -ENOMEM;
	}
	return 0;
}

/*
 * posix_spawnp (a vfork-style clone in glibc: cheaper than fork, and exec
 * errors come back as its result) + wait4 for the CPU times and peak RSS.
 * The wall time runs from just before the spawn to the child's exit being
 * reaped. Returns 0, or -errno of the spawn or exec.
 */
static int spawn_and_wait(char **argv, char **env, bool show_output, struct bench_run *r)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	uint64_t t0, t1;
	int status, err;
	pid_t pid;

	err = spawn_actions(&fa, show_output);
	if (err)
		return err;
	fflush(NULL);
	t0 = time_monotonic_ns();
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	t1 = time_monotonic_ns();
	r->wall = (double)(t1 - t0) / 1e9;
	r->user = timeval_seconds(ru.ru_utime);
	r->sys = timeval_seconds(ru.ru_stime);
	r->max_rss = (double)ru.ru_maxrss * 1024.0;
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

/* A helper shell command (prepare, cleanup); 0 if it succeeded. */
static int run_helper(struct bench_session *s, const char *what, const char *cmd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	struct bench_run r;
	int rc = spawn_and_wait(argv, environ, s->opt->show_output, &r);

	if (rc || r.exit_code) {
		fprintf(stderr, "%s: the %s command '%s' failed (%s %d)\n", s->name, what, cmd,
			rc ? "error" : "exit status", rc ? -rc : r.exit_code);
		return 1;
	}
	return 0;
}

static int run_once(struct bench_session *s, const struct bench_command *c, struct bench_run *r)
{
	char *pad = NULL, *iter = NULL, **env;
	char vars[STABILIZER_VARS][STABILIZER_VAR_LEN];
	uint64_t seed;
	size_t offset = s->opt->randomize_env ? rng_below(&s->rng, ENV_OFFSET_MAX) : 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (s->opt->prepare && run_helper(s, "prepare", s->opt->prepare))
		return 1;
	if (s->opt->randomize_link && c->program &&
	    bench_program_link_seed(c->program, &r->link_seed)) {
		fprintf(stderr,
			"%s: --randomize=link: %s records no link seed any more (did the prepare "
			"command relink it without lever cc --randomize-link?)\n",
			s->name, c->program);
		return 1;
	}
	env = run_environment(s, offset, &pad, &iter, vars, &seed);
	if (!env || !pad || !iter) {
		fprintf(stderr, "%s: out of memory\n", s->name);
		rc = 1;
		goto out;
	}
	rc = spawn_and_wait(c->argv, env, s->opt->show_output, r);
	s->iteration++;
	r->env_offset = offset;
	r->stabilizer_seed = seed;
	if (rc) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", s->name, c->argv[0], strerror(-rc));
		rc = 1;
	} else if (r->exit_code && !s->opt->ignore_failure) {
		fprintf(stderr,
			"%s: command '%s' failed with exit status %d; use -i/--ignore-failure to "
			"measure it anyway\n",
			s->name, c->display, r->exit_code);
		rc = 1;
	}
out:
	free(env);
	free(pad);
	free(iter);
	return rc;
}

/* ------------------------------------------------------------ measuring */

static int result_push(struct bench_result *res, const struct bench_run *r)
{
	if (res->n == res->capacity) {
		size_t cap = res->capacity ? res->capacity * 2 : 32;
		struct bench_run *runs = realloc(res->runs, cap * sizeof(*runs));
		double *wall;

		if (!runs)
			return -1;
		res->runs = runs;
		wall = realloc(res->wall, cap * sizeof(*wall));
		if (!wall)
			return -1;
		res->wall = wall;
		res->capacity = cap;
	}
	res->runs[res->n] = *r;
	res->wall[res->n] = r->wall;
	res->n++;
	return 0;
}

void bench_result_free(struct bench_result *r)
{
	free(r->runs);
	free(r->wall);
	memset(r, 0, sizeof(*r));
}

/*
 * Measuring stops when both the run count and the time are reached (or the
 * run limit is): the bar shows the lesser of the two fractions.
 */
static void progress(struct bench_session *s, const char *phase, size_t done, double elapsed)
{
	const struct bench_options *o = s->opt;
	const int width = 30;
	double frac = fmin(o->min_runs ? (double)done / (double)o->min_runs : 1.0,
			   o->min_time > 0 ? elapsed / o->min_time : 1.0);
	int fill;

	if (!s->tty)
		return;
	if (o->max_runs)
		frac = fmax(frac, (double)done / (double)o->max_runs);
	fill = (int)(fmin(frac, 1.0) * width + 0.5);
	fprintf(stderr, "\r\033[K  %-10s [%.*s%*s] %zu runs, %.1f s", phase, fill,
		"##############################", width - fill, "", done, elapsed);
	fflush(stderr);
}

static void progress_clear(struct bench_session *s)
{
	if (s->tty) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

static int warm_up(struct bench_session *s, const struct bench_command *commands, size_t k)
{
	struct bench_run r;

	for (size_t w = 0; w < s->opt->warmup; w++) {
		for (size_t i = 0; i < k; i++) {
			progress(s, "warm-up", w, 0);
			if (run_once(s, &commands[i], &r))
				return 1;
		}
	}
	return 0;
}

static bool keep_going(const struct bench_options *o, size_t runs, double elapsed)
{
	if (o->max_runs && runs >= o->max_runs)
		return false;
	return runs < o->min_runs || elapsed < o->min_time;
}

int bench_measure(struct bench_session *s, const struct bench_command *commands, size_t k,
		  struct bench_result *results)
{
	uint64_t start;
	size_t runs = 0;
	int rc = 0;

	for (size_t i = 0; i < k; i++) {
		memset(&results[i], 0, sizeof(results[i]));
		results[i].command = &commands[i];
	}
	rc = warm_up(s, commands, k);
	start = time_monotonic_ns();
	progress(s, "measuring", 0, 0.0);
	while (!rc && keep_going(s->opt, runs, (double)(time_monotonic_ns() - start) / 1e9)) {
		for (size_t i = 0; i < k && !rc; i++) {
			struct bench_run r;

			rc = run_once(s, &commands[i], &r);
			if (!rc && result_push(&results[i], &r)) {
				fprintf(stderr, "%s: out of memory\n", s->name);
				rc = 1;
			}
		}
		runs++;
		progress(s, "measuring", runs, (double)(time_monotonic_ns() - start) / 1e9);
	}
	progress_clear(s);
	if (s->opt->cleanup && run_helper(s, "cleanup", s->opt->cleanup))
		rc = rc ? rc : 1;
	return rc;
}
