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

/* What spawn_and_wait returns beside 0 and -errno: the run was stopped. */
#define MEASURE_RUN_STOPPED   1 /* by SIGINT or SIGTERM */
#define MEASURE_RUN_TIMED_OUT 2 /* by --timeout */

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

/* The signal (SIGINT, SIGTERM) that asked the measurement to stop, or 0. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/*
 * SIGINT and SIGTERM stop the measurement instead of killing lever: the run
 * going on is stopped and what was measured is still reported. Without
 * SA_RESTART, so that the wait for a child returns at once.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int measure_session_init(struct measure_session *s, const struct measure_options *o,
			 const char *name)
{
	memset(s, 0, sizeof(*s));
	s->opt = o;
	s->name = name;
	rng_seed(&s->rng, o->seed);
	s->tty = !o->no_progress && isatty(STDERR_FILENO);
	stop_signal = 0;
	catch_stop_signals();
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

#define KILL_GRACE_NS (1000ULL * NSEC_PER_MSEC)
#define WAIT_SLICE_NS (100ULL * NSEC_PER_MSEC)

/* Wait for SIGCHLD (blocked by the caller) at most ns, or until a signal handler ran. */
static void wait_sigchld(uint64_t ns)
{
	sigset_t chld;
	struct timespec ts = {(time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC)};

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
}

/*
 * Stop the run: SIGTERM to its process group (a shell's pipeline too), then
 * SIGKILL if it is still there after a grace period; reap it.
 */
static void stop_child(pid_t pid, int *status, struct rusage *ru)
{
	uint64_t t0 = time_monotonic_ns();

	kill(-pid, SIGTERM);
	while (wait4(pid, status, WNOHANG, ru) == 0) {
		if (time_monotonic_ns() - t0 >= KILL_GRACE_NS) {
			kill(-pid, SIGKILL);
			while (wait4(pid, status, 0, ru) < 0 && errno == EINTR)
				;
			return;
		}
		wait_sigchld(WAIT_SLICE_NS);
	}
}

/*
 * Wait for the child, stopping it on a stop signal or after timeout_ns (0:
 * none). 0 when it ended by itself, else MEASURE_RUN_STOPPED or
 * MEASURE_RUN_TIMED_OUT (after stopping it).
 */
static int wait_child(pid_t pid, uint64_t t0, uint64_t timeout_ns, int *status, struct rusage *ru)
{
	for (;;) {
		pid_t got = wait4(pid, status, WNOHANG, ru);
		uint64_t now = time_monotonic_ns(), slice = WAIT_SLICE_NS;

		if (got == pid || (got < 0 && errno != EINTR))
			return 0;
		if (stop_signal) {
			stop_child(pid, status, ru);
			return MEASURE_RUN_STOPPED;
		}
		if (timeout_ns && now - t0 >= timeout_ns) {
			stop_child(pid, status, ru);
			return MEASURE_RUN_TIMED_OUT;
		}
		if (timeout_ns && timeout_ns - (now - t0) < slice)
			slice = timeout_ns - (now - t0);
		wait_sigchld(slice);
	}
}

/*
 * posix_spawnp (a vfork-style clone in glibc: cheaper than fork, and exec
 * errors come back as its result) + wait4 for the CPU times and peak RSS.
 * The child leads a process group of its own, so that it can be stopped
 * with everything it started, and gets the caller's signal mask (SIGCHLD
 * is blocked here only to wait for it). The wall time runs from just before
 * the spawn to the child's exit being reaped. Returns 0, -errno of the
 * spawn or exec, or MEASURE_RUN_STOPPED / MEASURE_RUN_TIMED_OUT.
 */
static int spawn_and_wait(char **argv, char **env, bool show_output, uint64_t timeout_ns,
			  struct measure_run *r)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t chld, old;
	struct rusage ru;
	uint64_t t0, t1;
	int status = 0, err;
	pid_t pid;

	err = spawn_actions(&fa, show_output);
	if (err)
		return err;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	if (posix_spawnattr_init(&attr) ||
	    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK) ||
	    posix_spawnattr_setpgroup(&attr, 0) || posix_spawnattr_setsigmask(&attr, &old)) {
		posix_spawn_file_actions_destroy(&fa);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -ENOMEM;
	}
	fflush(NULL);
	t0 = time_monotonic_ns();
	err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (err) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -err;
	}
	memset(&ru, 0, sizeof(ru));
	err = wait_child(pid, t0, timeout_ns, &status, &ru);
	sigprocmask(SIG_SETMASK, &old, NULL);
	t1 = time_monotonic_ns();
	r->wall = (double)(t1 - t0) / 1e9;
	r->user = timeval_seconds(ru.ru_utime);
	r->sys = timeval_seconds(ru.ru_stime);
	r->max_rss = (double)ru.ru_maxrss * 1024.0;
	r->exit_code = launch_exit_status(status);
	r->wait_status = status;
	return err;
}

/* A helper shell command (prepare, cleanup); 0 if it succeeded. */
static int run_helper(struct measure_session *s, const char *what, const char *cmd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	struct measure_run r;
	int rc = spawn_and_wait(argv, environ, s->opt->show_output, s->opt->timeout_ns, &r);

	if (rc == MEASURE_RUN_STOPPED) {
		s->stop_signal = stop_signal;
		return 1;
	}
	if (rc == MEASURE_RUN_TIMED_OUT) {
		fprintf(stderr, "%s: the %s command '%s' took longer than --timeout\n", s->name,
			what, cmd);
		return 1;
	}
	if (rc || r.exit_code) {
		char how[128];

		fprintf(stderr, "%s: the %s command '%s' failed (%s)\n", s->name, what, cmd,
			rc ? strerror(-rc)
			   : launch_describe_status(r.wait_status, how, sizeof(how)));
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
	rc = spawn_and_wait(c->argv, launch_env_vector(&env), s->opt->show_output,
			    s->opt->timeout_ns, r);
	s->iteration++;
	r->env_offset = offset;
	r->stabilizer_seed = seed;
	if (rc == MEASURE_RUN_STOPPED) {
		s->stop_signal = stop_signal;
		rc = 1;
	} else if (rc == MEASURE_RUN_TIMED_OUT) {
		char limit[48];

		fprintf(stderr, "%s: '%s' ran longer than --timeout %s and was stopped%s\n",
			s->name, c->display,
			report_format_time((double)s->opt->timeout_ns / 1e9, limit, sizeof(limit)),
			s->opt->ignore_failure ? "; the run is not counted" : "");
		s->timed_out++;
		rc = s->opt->ignore_failure ? MEASURE_RUN_TIMED_OUT : 1;
	} else if (rc) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", s->name, c->argv[0], strerror(-rc));
		rc = 1;
	} else if (r->exit_code && !s->opt->ignore_failure) {
		char how[128];

		fprintf(stderr,
			"%s: command '%s' failed (%s); use -i/--ignore-failure to measure it "
			"anyway\n",
			s->name, c->display,
			launch_describe_status(r->wait_status, how, sizeof(how)));
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

bool measure_session_ending(const struct measure_session *s, int *status)
{
	*status = s->stop_signal ? 128 + s->stop_signal : 1;
	return s->stop_signal || s->cleanup_failed || (s->timed_out && !s->opt->ignore_failure);
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
			int rc = run_once(s, &commands[i], &r);

			if (rc && rc != MEASURE_RUN_TIMED_OUT)
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
	while (!rc && !stop_signal &&
	       keep_going(s->opt, runs, (double)(time_monotonic_ns() - start) / 1e9)) {
		for (size_t i = 0; i < k && !rc; i++) {
			struct measure_run r;

			rc = run_once(s, &commands[i], &r);
			if (rc == MEASURE_RUN_TIMED_OUT) {
				rc = 0; /* --ignore-failure: on with the next run */
				continue;
			}
			if (!rc && result_push(&results[i], &r)) {
				fprintf(stderr, "%s: out of memory\n", s->name);
				rc = 1;
			}
		}
		runs++;
		progress(s, "measuring", runs, (double)(time_monotonic_ns() - start) / 1e9);
	}
	progress_clear(s);
	if (stop_signal && !s->stop_signal) {
		s->stop_signal = stop_signal; /* between two runs */
		rc = 1;
	}
	if (s->stop_signal)
		fprintf(stderr,
			"%s: stopped by %s; the runs done are reported, the run going on "
			"(if any) was stopped and is not counted\n",
			s->name, s->stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
	/* the cleanup runs even after a stop (it undoes what prepare did); a second signal stops it
	 */
	stop_signal = 0;
	if (s->opt->cleanup && run_helper(s, "cleanup", s->opt->cleanup)) {
		s->cleanup_failed = true;
		rc = 1;
	}
	return rc;
}
