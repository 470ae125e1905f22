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

#include "launch/launch.h"
#include "measure/measure.h"
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

static int push_word(struct measure_command *c, size_t *n, char *word)
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
static int split_words(struct measure_command *c, const char *text)
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

int measure_command_from_string(struct measure_command *c, const char *text)
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

int measure_command_from_argv(struct measure_command *c, char **argv, int argc)
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

void measure_command_free(struct measure_command *c)
{
	for (size_t i = 0; c->argv && c->argv[i]; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c->display);
	free(c->program);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------ one run */

int measure_session_init(struct measure_session *s, const struct measure_options *o,
			 const char *name)
{
	memset(s, 0, sizeof(*s));
	s->opt = o;
	s->name = name;
	rng_seed(&s->rng, o->seed);
	s->tty = !o->no_progress && isatty(STDERR_FILENO);
	if (measure_options_stabilizer(o) &&
	    launch_find_runtime(name, LAUNCH_STABILIZER_RUNTIME, s->runtime))
		return 1;
	return 0;
}

/*
 * The environment of one run, built by the launcher from ours: the padding
 * (or none, so that the caller's cannot leak in) and the iteration number,
 * and with a Stabilizer part its settings with a fresh seed (*seed) and the
 * runtime in LD_PRELOAD. 0, or -1 after printing why.
 */
static int run_environment(struct measure_session *s, size_t offset, struct launch_env *env,
			   uint64_t *seed)
{
	const struct measure_options *o = s->opt;
	char *pad = malloc(offset + 1);
	int err;

	*seed = 0;
	if (launch_env_init(env, s->name, environ)) {
		free(pad);
		return -1;
	}
	if (!pad) {
		fprintf(stderr, "%s: out of memory\n", s->name);
		return -1;
	}
	memset(pad, 'X', offset);
	pad[offset] = '\0';
	err = launch_env_set(env, ENV_OFFSET_VAR, o->randomize_env ? pad : NULL) ||
	      launch_env_set_u64(env, ITERATION_VAR, s->iteration);
	free(pad);
	if (!err && measure_options_stabilizer(o)) {
		struct stabilizer_settings st = {
		    .code = o->randomize_code,
		    .stack = o->randomize_stack,
		    .heap = o->randomize_heap,
		    .one_time = o->rerandomize_ns == 0,
		    .interval_ns = o->rerandomize_ns,
		    .seed = rng_next(&s->rng),
		};

		*seed = st.seed;
		err = launch_env_stabilizer(env, &st) || launch_env_add_preload(env, s->runtime);
	}
	return err ? -1 : 0;
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
static int spawn_and_wait(char **argv, char **env, bool show_output, struct measure_run *r)
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
static int run_helper(struct measure_session *s, const char *what, const char *cmd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	struct measure_run r;
	int rc = spawn_and_wait(argv, environ, s->opt->show_output, &r);

	if (rc || r.exit_code) {
		fprintf(stderr, "%s: the %s command '%s' failed (%s %d)\n", s->name, what, cmd,
			rc ? "error" : "exit status", rc ? -rc : r.exit_code);
		return 1;
	}
	return 0;
}

static int run_once(struct measure_session *s, const struct measure_command *c,
		    struct measure_run *r)
{
	struct launch_env env;
	uint64_t seed;
	size_t offset = s->opt->randomize_env ? rng_below(&s->rng, ENV_OFFSET_MAX) : 0;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&env, 0, sizeof(env));
	if (s->opt->prepare && run_helper(s, "prepare", s->opt->prepare))
		return 1;
	if (s->opt->randomize_link && c->program &&
	    measure_program_link_seed(c->program, &r->link_seed)) {
		fprintf(stderr,
			"%s: --randomize=link: %s records no link seed any more (did the prepare "
			"command relink it without lever cc --randomize-link?)\n",
			s->name, c->program);
		return 1;
	}
	if (run_environment(s, offset, &env, &seed)) {
		rc = 1;
		goto out;
	}
	rc = spawn_and_wait(c->argv, launch_env_vector(&env), s->opt->show_output, r);
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
	launch_env_free(&env);
	return rc;
}

/* ------------------------------------------------------------ measuring */

static int result_push(struct measure_result *res, const struct measure_run *r)
{
	if (res->n == res->capacity) {
		size_t cap = res->capacity ? res->capacity * 2 : 32;
		struct measure_run *runs = realloc(res->runs, cap * sizeof(*runs));
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

void measure_result_free(struct measure_result *r)
{
	free(r->runs);
	free(r->wall);
	memset(r, 0, sizeof(*r));
}

/*
 * Measuring stops when both the run count and the time are reached (or the
 * run limit is): the bar shows the lesser of the two fractions.
 */
static void progress(struct measure_session *s, const char *phase, size_t done, double elapsed)
{
	const struct measure_options *o = s->opt;
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

static void progress_clear(struct measure_session *s)
{
	if (s->tty) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

static int warm_up(struct measure_session *s, const struct measure_command *commands, size_t k)
{
	struct measure_run r;

	for (size_t w = 0; w < s->opt->warmup; w++) {
		for (size_t i = 0; i < k; i++) {
			progress(s, "warm-up", w, 0);
			if (run_once(s, &commands[i], &r))
				return 1;
		}
	}
	return 0;
}

static bool keep_going(const struct measure_options *o, size_t runs, double elapsed)
{
	if (o->max_runs && runs >= o->max_runs)
		return false;
	return runs < o->min_runs || elapsed < o->min_time;
}

int measure_commands(struct measure_session *s, const struct measure_command *commands, size_t k,
		     struct measure_result *results)
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
			struct measure_run r;

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
