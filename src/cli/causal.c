/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever causal: run a program under liblever-causal.so (causal profiling, as
 * Coz; doc/causal.md, spec/causal.md). `lever causal report` is in
 * causal_report.c, `lever causal sweep` in causal_sweep.c.
 *
 * The options (one table, which also makes --help) become the LEVER_CAUSAL_*
 * variables of causal/runtime/settings.h; the launcher (launch/launch.h)
 * preloads the runtime and execs the program, so the program's pid and exit
 * status are lever's. Before that, what can be known to go wrong is said:
 * a static program, a scope or fixed line the program does not have, a
 * wrapper (env, a script, sh -c) whose real work would run unprofiled.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "causal/causal.h"
#include "causal/runtime/settings.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"

#define WHO	"lever causal"
#define HOUR_NS (3600ULL * NSEC_PER_SEC)

extern char **environ;

static const char causal_usage[] =
    "usage: lever causal [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       lever causal sweep --arrival-speedup=LIST -n RUNS [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       lever causal report [OPTIONS] [PROFILE...]";

static const char causal_description[] =
    "Causal profiling (Coz): runs PROGRAM with lever's runtime, which performs\n"
    "experiments that virtually speed up one source line at a time and measure\n"
    "the effect on progress points. The profile is appended to ./profile.coz.\n"
    "'---' is accepted in place of '--', as in Coz. PROGRAM must be dynamically\n"
    "linked (the runtime is preloaded).\n";

static const char causal_epilogue[] =
    "DUR is a number with an optional unit: ns, us, ms (the default) or s.\n"
    "Exit status: the program's; 2 for a usage error or a scope/line the program\n"
    "does not have; 1 if the runtime is missing or PROGRAM is statically linked;\n"
    "126 if PROGRAM cannot be executed; 127 if it is not found.\n"
    "See doc/causal.md.\n";

/* A tab-separated list, as the runtime expects. */
struct list {
	char *text;
	size_t len;
};

struct causal_options {
	const char *output;
	struct list binary_scope;
	struct list source_scope;
	struct list progress;
	struct list sampled;
	bool end_to_end;
	const char *fixed_line;
	uint64_t fixed_speedup;
	bool fixed_speedup_given;
	int sampler;
	bool sampler_given;
	int pause;
	bool pause_given;
	unsigned verbose;
	bool follow_children;
	double zero_probability;
	bool zero_probability_given;
	uint64_t speedup_step, experiment_ns, cooloff_ns, min_visits, period_ns, batch, seed;
	bool speedup_step_given, experiment_given, cooloff_given, min_visits_given, period_given,
	    batch_given, seed_given;
	uint64_t arrival_ns;
	bool arrival_given;
};

static const char *const samplers[] = {"perf", "timer", "none", NULL};
static const char *const pause_modes[] = {"auto", "sleep", "spin", NULL};

/* ------------------------------------------------------------ option values */

static int list_add(struct list *l, const char *item)
{
	size_t n = strlen(item);
	char *t = realloc(l->text, l->len + n + 2);

	if (!t) {
		fprintf(stderr, WHO ": out of memory\n");
		return 1;
	}
	if (l->len)
		t[l->len++] = '\t';
	memcpy(t + l->len, item, n + 1);
	l->len += n;
	l->text = t;
	return 0;
}

static void list_free(struct list *l)
{
	free(l->text);
}

/* The list an option adds to, by its name. */
static struct list *option_list(const struct cli_option *opt, struct causal_options *o)
{
	if (strcmp(opt->long_name, "binary-scope") == 0)
		return &o->binary_scope;
	if (strcmp(opt->long_name, "source-scope") == 0)
		return &o->source_scope;
	if (strcmp(opt->long_name, "progress") == 0)
		return &o->progress;
	return &o->sampled;
}

static int add_pattern(const struct cli_option *opt, const char *pat, void *ctx)
{
	if (!*pat || strchr(pat, '\t'))
		return -1;
	return list_add(option_list(opt, ctx), pat);
}

static bool valid_file_line(const char *spec)
{
	char file[PATH_MAX];
	unsigned line;

	return parse_file_line(spec, file, sizeof(file), &line) && !strchr(spec, '\t');
}

static int add_file_line(const struct cli_option *opt, const char *spec, void *ctx)
{
	return valid_file_line(spec) ? list_add(option_list(opt, ctx), spec) : -1;
}

static int set_fixed_line(const struct cli_option *opt, const char *spec, void *ctx)
{
	struct causal_options *o = ctx;

	(void)opt;
	if (!valid_file_line(spec))
		return -1;
	o->fixed_line = spec;
	return 0;
}

static int set_arrival_speedup(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct causal_options *o = ctx;

	(void)opt;
	if (!causal_parse_arrival_speedup(arg, &o->arrival_ns))
		return -1;
	o->arrival_given = true;
	return 0;
}

/* An arrival speedup: a duration whose bare number is in ns (as Coz's flag). */
bool causal_parse_arrival_speedup(const char *text, uint64_t *ns)
{
	char *end;
	double v;

	if (!text || !*text)
		return false;
	v = strtod(text, &end);
	if (!(v >= 0.0 && v <= 4e12)) /* keep the conversion to ns in range */
		return false;
	return time_parse_duration(text, 1, ns) && *ns <= HOUR_NS;
}

/* ------------------------------------------------------------ the table */

#define FILE_LINE_WHAT "FILE:LINE (e.g. main.c:42)"
#define PATTERN_WHAT   "a pattern: the pattern must be non-empty and contain no tab"

/*
 * Parse argv into o: 0 with *prog the index of PROGRAM, CLI_HELP after
 * --help, or an exit status.
 */
static int parse_options(struct causal_options *o, int argc, char **argv, int *prog)
{
	const struct cli_option table[] = {
	    CLI_GROUP("Scope"),
	    CLI_CALLBACK('b', "binary-scope", "PAT", add_pattern,
			 "profile executables/libraries matching PAT ('%'\n"
			 "matches anything; MAIN = the program; default MAIN);\n"
			 "repeatable",
			 .what = PATTERN_WHAT),
	    CLI_CALLBACK('s', "source-scope", "PAT", add_pattern,
			 "only experiment on source files matching PAT\n"
			 "(whole absolute paths; default %); repeatable",
			 .what = PATTERN_WHAT),
	    CLI_GROUP("Progress points (besides LEVER_PROGRESS/COZ_PROGRESS in the source)"),
	    CLI_CALLBACK(0, "progress", "FILE:LINE", add_file_line,
			 "count each execution of FILE:LINE (breakpoint);\n"
			 "repeatable",
			 .what = FILE_LINE_WHAT),
	    CLI_CALLBACK(0, "sampled-progress", "FILE:LINE", add_file_line,
			 "count samples in FILE:LINE; repeatable", .what = FILE_LINE_WHAT),
	    CLI_FLAG(0, "end-to-end", &o->end_to_end,
		     "one experiment per run, ending when main returns"),
	    CLI_GROUP("Experiments"),
	    CLI_CALLBACK(0, "fixed-line", "FILE:LINE", set_fixed_line,
			 "only speed up this line (it must be a line with\n"
			 "code in the source scope)",
			 .what = FILE_LINE_WHAT),
	    CLI_PERCENT(0, "fixed-speedup", &o->fixed_speedup, "PCT", 0, 100,
			"only use this speedup, 0..100", .given = &o->fixed_speedup_given),
	    CLI_DOUBLE(0, "zero-probability", &o->zero_probability, "P", 0.0, 1.0,
		       "probability of a 0% (baseline) experiment, 0..1\n"
		       "(default 0.5)",
		       .what = "a probability 0..1", .given = &o->zero_probability_given),
	    CLI_PERCENT(0, "speedup-step", &o->speedup_step, "PCT", 1, 100,
			"speedups are multiples of PCT, 1..100 (default 5)",
			.given = &o->speedup_step_given),
	    CLI_DURATION(0, "experiment-length", &o->experiment_ns, "DUR", NSEC_PER_MSEC,
			 NSEC_PER_MSEC, HOUR_NS, "initial experiment length (default 250ms)",
			 .step = NSEC_PER_MSEC, .given = &o->experiment_given,
			 .what = "a whole number of milliseconds from 1ms to 1h"),
	    CLI_DURATION(0, "cooloff", &o->cooloff_ns, "DUR", NSEC_PER_MSEC, 0, HOUR_NS,
			 "pause between experiments (default 10ms)", .step = NSEC_PER_MSEC,
			 .given = &o->cooloff_given,
			 .what = "a whole number of milliseconds from 0 to 1h"),
	    CLI_UINT(0, "min-visits", &o->min_visits, "N", 1, 1000000000,
		     "progress visits an experiment needs before its\n"
		     "length stops doubling (default 5)",
		     .given = &o->min_visits_given, .what = "a count 1..1000000000"),
	    CLI_UINT(0, "seed", &o->seed, "N", 0, UINT64_MAX,
		     "random seed (default: from the clock)", .given = &o->seed_given,
		     .what = "an unsigned 64-bit integer"),
	    CLI_GROUP(
		"Load amplification (AMP; arrival points: LEVER_ARRIVAL, COZ_ARRIVAL, or any\n"
		"LEVER_BEGIN/COZ_BEGIN visit)"),
	    CLI_CALLBACK(0, "arrival-speedup", "TIME", set_arrival_speedup,
			 "virtually speed up the thread that executes an\n"
			 "arrival point by TIME per arrival (delaying all\n"
			 "other threads), fixed for the run and recorded in\n"
			 "every experiment. TIME: ns (the default unit),\n"
			 "us or ms. To turn 1000 req/s in test into 4000:\n"
			 "1 ms - 250 us = --arrival-speedup=750us. With\n"
			 "--fixed-speedup=0 the run measures scalability\n"
			 "alone; without, causal profiles at that load.\n"
			 "`lever causal sweep` runs several loads.",
			 .what = "a time from 0 to 1h (ns, us, ms or s; a bare number is ns)"),
	    CLI_GROUP("Sampling"),
	    CLI_ENUM(0, "sampler", &o->sampler, "perf|timer|none", samplers,
		     "perf_event_open (default; falls back to timer),\n"
		     "a CPU-time timer, or none: start-up only (the\n"
		     "line map is built, nothing is sampled; to\n"
		     "measure lever's start-up overhead)",
		     .given = &o->sampler_given),
	    CLI_ENUM(0, "pause", &o->pause, "auto|sleep|spin", pause_modes,
		     "how threads pay their pauses: spinning, which\n"
		     "keeps the core as busy as work would where\n"
		     "hardware threads share it (SMT), or sleeping;\n"
		     "auto (default): spin while the threads that can\n"
		     "run fit the CPUs, sleep when they outnumber them",
		     .given = &o->pause_given),
	    CLI_DURATION(0, "sample-period", &o->period_ns, "DUR", NSEC_PER_MSEC,
			 10 * NSEC_PER_USEC, NSEC_PER_SEC, "CPU time between samples (default 1ms)",
			 .step = NSEC_PER_USEC, .given = &o->period_given,
			 .what = "a whole number of microseconds from 10us to 1s"),
	    CLI_UINT(0, "batch", &o->batch, "N", 1, 1000,
		     "samples processed per batch (default 10)", .given = &o->batch_given,
		     .what = "a count 1..1000"),
	    CLI_GROUP("Output and processes"),
	    CLI_STRING('o', "output", &o->output, "FILE",
		       "append the profile to FILE (default ./profile.coz)",
		       .what = "a file name (empty file name)"),
	    CLI_FLAG(0, "follow-children", &o->follow_children,
		     "also profile child processes, each into\n"
		     "FILE.<pid> (default: children run unprofiled)"),
	    CLI_COUNT('v', "verbose", &o->verbose, 2,
		      "runtime messages on stderr (sampler, scope, ...);\n"
		      "-vv also logs every experiment"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = WHO,
	    .usage = causal_usage,
	    .description = causal_description,
	    .options = table,
	    .epilogue = causal_epilogue,
	    .takes_program = true,
	    .coz_separator = true,
	    .help_column = 30,
	};

	return cli_parse(&cmd, argc, argv, o, prog);
}

/* ------------------------------------------------------------ before the run */

/* Programs whose work is another program: the one they exec or start. */
static const char *const wrappers[] = {
    "env",  "nice", "nohup",  "setsid",	 "stdbuf",  "taskset", "timeout",
    "time", "chrt", "ionice", "numactl", "sudo",    "xargs",   "sh",
    "bash", "dash", "zsh",    "ksh",	 "busybox",
};

static bool is_wrapper(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(base, wrappers[i]) == 0)
			return true;
	return false;
}

/*
 * Without --follow-children only the first program is profiled. A wrapper
 * (env, a shell, a script) then leaves a profile that holds nothing but its
 * own start-up, and its "no samples" would point at the sampler: say now
 * where the work will run, and how to profile it.
 */
static void warn_wrapper(const struct causal_options *o, const struct launch_program *p,
			 const char *program)
{
	if (o->follow_children)
		return;
	if (p->kind == LAUNCH_PROGRAM_SCRIPT)
		fprintf(stderr,
			WHO ": note: %s is a script: the process profiled is its interpreter "
			    "%s, and the programs it runs are not profiled; pass "
			    "--follow-children to profile them (each into FILE.<pid>, a "
			    "program it execs into FILE)\n",
			program, p->interpreter);
	else if (p->kind != LAUNCH_PROGRAM_OTHER && is_wrapper(p->path))
		fprintf(stderr,
			WHO ": note: %s runs other programs: only %s itself is profiled, so "
			    "the profile will hold little more than its start-up; pass "
			    "--follow-children to profile the programs it runs (one it execs "
			    "writes FILE, children FILE.<pid>)\n",
			program, program);
}

/* Is only the main executable in the binary scope (the default, or MAIN)? */
static bool main_only_scope(const struct causal_options *o)
{
	return !o->binary_scope.text || strcmp(o->binary_scope.text, "MAIN") == 0;
}

/*
 * What can be known before the run: a program that cannot take the
 * runtime (exit 1), a scope or fixed line it does not have (exit 2). 0 to go on.
 */
static int check_program(const struct causal_options *o, const char *program)
{
	const char *debug_root = getenv(LEVER_ENV_DEBUG_ROOT);
	struct launch_program p;

	if (launch_check_preloadable(WHO, program, "lever's causal runtime"))
		return LAUNCH_EXIT_FAILURE;
	launch_inspect_program(program, &p);
	warn_wrapper(o, &p, program);
	/* reading the line table costs time: only when there is something to check */
	if (p.kind != LAUNCH_PROGRAM_DYNAMIC || !main_only_scope(o) ||
	    (!o->source_scope.text && !o->fixed_line))
		return 0;
	if (causal_check_program_scope(WHO, p.path, debug_root ? debug_root : "/usr/lib/debug",
				       o->source_scope.text, o->fixed_line))
		return EXIT_USAGE;
	return 0;
}

/* The output file as an absolute path, so the program may chdir; checks it is writable. */
static int resolve_output(const char *output, char *out, size_t size)
{
	char cwd[PATH_MAX];
	int fd;

	if (output[0] == '/') {
		if ((size_t)snprintf(out, size, "%s", output) >= size)
			goto too_long;
	} else {
		if (!getcwd(cwd, sizeof(cwd))) {
			fprintf(stderr, WHO ": cannot get the working directory: %s\n",
				strerror(errno));
			return -1;
		}
		if ((size_t)snprintf(out, size, "%s/%s", cwd, output) >= size)
			goto too_long;
	}
	fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, WHO ": cannot write the profile %s: %s\n", out, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
too_long:
	fprintf(stderr, WHO ": output path too long: %s\n", output);
	return -1;
}

/* ------------------------------------------------------------ the environment */

/* A number setting: the variable set when the option was given, else removed. */
static int set_number(struct launch_env *env, const char *name, bool given, uint64_t value)
{
	return given ? launch_env_set_u64(env, name, (unsigned long long)value)
		     : launch_env_set(env, name, NULL);
}

static int set_flag(struct launch_env *env, const char *name, bool on)
{
	return launch_env_set(env, name, on ? "1" : NULL);
}

static int set_numbers(struct launch_env *env, const struct causal_options *o)
{
	return set_number(env, LEVER_ENV_FIXED_SPEEDUP, o->fixed_speedup_given, o->fixed_speedup) ||
	       set_number(env, LEVER_ENV_VERBOSE, o->verbose, o->verbose) ||
	       set_number(env, LEVER_ENV_SPEEDUP_STEP, o->speedup_step_given, o->speedup_step) ||
	       set_number(env, LEVER_ENV_EXPERIMENT_MS, o->experiment_given,
			  o->experiment_ns / NSEC_PER_MSEC) ||
	       set_number(env, LEVER_ENV_COOLOFF_MS, o->cooloff_given,
			  o->cooloff_ns / NSEC_PER_MSEC) ||
	       set_number(env, LEVER_ENV_MIN_VISITS, o->min_visits_given, o->min_visits) ||
	       set_number(env, LEVER_ENV_PERIOD_US, o->period_given,
			  o->period_ns / NSEC_PER_USEC) ||
	       set_number(env, LEVER_ENV_BATCH, o->batch_given, o->batch) ||
	       set_number(env, LEVER_ENV_SEED, o->seed_given, o->seed) ||
	       set_number(env, LEVER_ENV_ARRIVAL_SPEEDUP, o->arrival_given, o->arrival_ns);
}

/*
 * The program's environment: every LEVER_CAUSAL_* setting (those not asked
 * for removed, so that none leaks in from the caller), the runtime preloaded.
 */
static int build_environment(struct launch_env *env, const struct causal_options *o,
			     const char *output)
{
	char probability[32];

	/* the shortest text that reads back as the same double */
	snprintf(probability, sizeof(probability), "%.15g", o->zero_probability);
	if (strtod(probability, NULL) != o->zero_probability)
		snprintf(probability, sizeof(probability), "%.17g", o->zero_probability);
	if (launch_env_init(env, WHO, environ))
		return -1;
	if (launch_env_set(env, LEVER_ENV_ACTIVE, "1") ||
	    launch_env_set(env, LEVER_ENV_OUTPUT, output) ||
	    launch_env_set(env, LEVER_ENV_BINARY_SCOPE, o->binary_scope.text) ||
	    launch_env_set(env, LEVER_ENV_SOURCE_SCOPE, o->source_scope.text) ||
	    launch_env_set(env, LEVER_ENV_PROGRESS, o->progress.text) ||
	    launch_env_set(env, LEVER_ENV_SAMPLED, o->sampled.text) ||
	    set_flag(env, LEVER_ENV_END_TO_END, o->end_to_end) ||
	    launch_env_set(env, LEVER_ENV_FIXED_LINE, o->fixed_line) ||
	    launch_env_set(env, LEVER_ENV_SAMPLER,
			   o->sampler_given ? samplers[o->sampler] : NULL) ||
	    launch_env_set(env, LEVER_ENV_PAUSE, o->pause_given ? pause_modes[o->pause] : NULL) ||
	    set_flag(env, LEVER_ENV_FOLLOW_CHILDREN, o->follow_children) ||
	    launch_env_set(env, LEVER_ENV_ZERO_PROB,
			   o->zero_probability_given ? probability : NULL) ||
	    set_numbers(env, o))
		return -1;
	/* lever execs, so its pid is the program's: other processes are children */
	if (launch_env_set_u64(env, LEVER_ENV_ROOT_PID, (unsigned long long)getpid()) ||
	    launch_env_add_runtime(env, LAUNCH_CAUSAL_RUNTIME))
		return -1;
	/* lets the runtime measure its start-up cost from here */
	return launch_env_set_u64(env, LEVER_ENV_EXEC_NS, (unsigned long long)time_monotonic_ns());
}

/* ------------------------------------------------------------ the command */

static void free_options(struct causal_options *o)
{
	list_free(&o->binary_scope);
	list_free(&o->source_scope);
	list_free(&o->progress);
	list_free(&o->sampled);
}

static int run_profiler(int argc, char **argv)
{
	struct causal_options o = {.output = "profile.coz"};
	struct launch_env env = {0};
	char output[PATH_MAX];
	int prog = 0;
	int ret;

	ret = parse_options(&o, argc, argv, &prog);
	if (ret) {
		ret = ret == CLI_HELP ? 0 : ret;
		goto out;
	}
	ret = check_program(&o, argv[prog]);
	if (ret)
		goto out;
	ret = LAUNCH_EXIT_FAILURE;
	if (resolve_output(o.output, output, sizeof(output)) || build_environment(&env, &o, output))
		goto out;
	ret = launch_exec(WHO, argv + prog, &env);
out:
	launch_env_free(&env);
	free_options(&o);
	return ret;
}

int cmd_causal(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cmd_causal_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "sweep") == 0)
		return cmd_causal_sweep(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return run_profiler(argc - 1, argv + 1); /* Coz's `coz run` spelling */
	return run_profiler(argc, argv);
}
