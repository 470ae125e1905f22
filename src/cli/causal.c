/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever causal: run a program under liblever-causal.so (causal profiling, as
 * Coz). `lever causal report` is in causal_report.c.
 *
 * The launcher turns options into the LEVER_CAUSAL_* environment variables of
 * causal/runtime/settings.h, appends the runtime to LD_PRELOAD and execs the
 * program, so the program's exit status is lever's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "causal/causal.h"
#include "causal/runtime/settings.h"
#include "cli/commands.h"
#include "launch/launch.h"

#define WHO	   "lever causal"
#define EXIT_USAGE 2

extern char **environ;

static const char causal_usage[] =
    "usage: lever causal [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       lever causal sweep --arrival-speedup=LIST -n RUNS [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       lever causal report [OPTIONS] [PROFILE...]\n"
    "\n"
    "Causal profiling (Coz): runs PROGRAM with lever's runtime, which performs\n"
    "experiments that virtually speed up one source line at a time and measure\n"
    "the effect on progress points. The profile is appended to ./profile.coz.\n"
    "'---' is accepted in place of '--', as in Coz.\n"
    "\n"
    "Scope:\n"
    "  -b, --binary-scope PAT      profile executables/libraries matching PAT ('%'\n"
    "                              matches anything; MAIN = the program; default MAIN);\n"
    "                              repeatable\n"
    "  -s, --source-scope PAT      only experiment on source files matching PAT\n"
    "                              (default %); repeatable\n"
    "\n"
    "Progress points (besides LEVER_PROGRESS/COZ_PROGRESS in the source):\n"
    "      --progress FILE:LINE    count each execution of FILE:LINE (breakpoint);\n"
    "                              repeatable\n"
    "      --sampled-progress FILE:LINE\n"
    "                              count samples in FILE:LINE; repeatable\n"
    "      --end-to-end            one experiment per run, ending when main returns\n"
    "\n"
    "Experiments:\n"
    "      --fixed-line FILE:LINE  only speed up this line\n"
    "      --fixed-speedup PCT     only use this speedup, 0..100\n"
    "      --zero-probability P    probability of a 0% (baseline) experiment, 0..1\n"
    "                              (default 0.5)\n"
    "      --speedup-step PCT      speedups are multiples of PCT, 1..100 (default 5)\n"
    "      --experiment-length DUR initial experiment length (default 250ms)\n"
    "      --cooloff DUR           pause between experiments (default 10ms)\n"
    "      --min-visits N          progress visits an experiment needs before its\n"
    "                              length stops doubling (default 5)\n"
    "      --seed N                random seed (default: from the clock)\n"
    "\n"
    "Load amplification (AMP; arrival points: LEVER_ARRIVAL, COZ_ARRIVAL, or any\n"
    "LEVER_BEGIN/COZ_BEGIN visit):\n"
    "      --arrival-speedup TIME  virtually speed up the thread that executes an\n"
    "                              arrival point by TIME per arrival (delaying all\n"
    "                              other threads), fixed for the run and recorded in\n"
    "                              every experiment. TIME: ns (the default unit),\n"
    "                              us or ms. To turn 1000 req/s in test into 4000:\n"
    "                              1 ms - 250 us = --arrival-speedup=750us. With\n"
    "                              --fixed-speedup=0 the run measures scalability\n"
    "                              alone; without, causal profiles at that load.\n"
    "                              `lever causal sweep` runs several loads.\n"
    "\n"
    "Sampling:\n"
    "      --sampler=perf|timer|none\n"
    "                              perf_event_open (default; falls back to timer),\n"
    "                              a CPU-time timer, or none: start-up only (the\n"
    "                              line map is built, nothing is sampled; to\n"
    "                              measure lever's start-up overhead)\n"
    "      --sample-period DUR     CPU time between samples (default 1ms)\n"
    "      --batch N               samples processed per batch (default 10)\n"
    "\n"
    "Output and processes:\n"
    "  -o, --output FILE           append the profile to FILE (default ./profile.coz)\n"
    "      --follow-children       also profile child processes, each into\n"
    "                              FILE.<pid> (default: children run unprofiled)\n"
    "  -v, --verbose               runtime messages on stderr (sampler, scope, ...);\n"
    "                              -vv also logs every experiment\n"
    "  -h, --help                  show this help\n"
    "\n"
    "DUR is a number with an optional unit: ns, us, ms (the default) or s.\n"
    "Exit status: the program's; 2 for a usage error; 1 if the runtime is missing;\n"
    "126 if PROGRAM cannot be executed; 127 if it is not found.\n"
    "See doc/causal.md.\n";

/* ------------------------------------------------------------ helpers */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lever causal: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'lever causal --help' for usage.\n");
	return EXIT_USAGE;
}

static bool parse_fraction(const char *text, double *out)
{
	char *end;
	double v;

	if (!text || !*text)
		return false;
	errno = 0;
	v = strtod(text, &end);
	if (errno || *end != '\0' || !(v >= 0.0 && v <= 1.0))
		return false;
	*out = v;
	return true;
}

/* A duration within [min, max] ns that is a whole number of unit ns. */
static bool parse_duration(const char *text, uint64_t unit, uint64_t min, uint64_t max,
			   uint64_t *out)
{
	char *end;
	double v;
	uint64_t ns;

	if (!text || !*text)
		return false;
	v = strtod(text, &end);
	if (!(v >= 0.0 && v <= 1e9)) /* keep the conversion to ns in range */
		return false;
	if (!time_parse_duration(text, NSEC_PER_MSEC, &ns))
		return false;
	if (ns < min || ns > max || ns % unit)
		return false;
	*out = ns / unit;
	return true;
}

static bool valid_file_line(const char *spec)
{
	char file[PATH_MAX];
	unsigned line;

	return parse_file_line(spec, file, sizeof(file), &line) && !strchr(spec, '\t');
}

/* A tab-separated list, as the runtime expects. */
struct list {
	char *text;
	size_t len;
};

static int list_add(struct list *l, const char *item)
{
	size_t n = strlen(item);
	char *t = realloc(l->text, l->len + n + 2);

	if (!t) {
		fprintf(stderr, "lever causal: out of memory\n");
		return -1;
	}
	if (l->len)
		t[l->len++] = '\t';
	memcpy(t + l->len, item, n + 1);
	l->len += n;
	l->text = t;
	return 0;
}

/* ------------------------------------------------------------ options */

struct causal_options {
	const char *output;
	struct list binary_scope;
	struct list source_scope;
	struct list progress;
	struct list sampled;
	bool end_to_end;
	const char *fixed_line;
	const char *fixed_speedup;
	const char *sampler;
	unsigned verbose;
	char verbose_level[12];
	bool follow_children;
	const char *zero_probability;
	char speedup_step[24];
	char experiment_ms[24];
	char cooloff_ms[24];
	char min_visits[24];
	char period_us[24];
	char batch[24];
	char seed[24];
	char arrival_ns[24];
};

enum {
	OPT_PROGRESS = 256,
	OPT_SAMPLED,
	OPT_END_TO_END,
	OPT_FIXED_LINE,
	OPT_FIXED_SPEEDUP,
	OPT_SAMPLER,
	OPT_FOLLOW_CHILDREN,
	OPT_ZERO_PROB,
	OPT_SPEEDUP_STEP,
	OPT_EXPERIMENT_LENGTH,
	OPT_COOLOFF,
	OPT_MIN_VISITS,
	OPT_SAMPLE_PERIOD,
	OPT_BATCH,
	OPT_SEED,
	OPT_ARRIVAL_SPEEDUP,
};

static const struct option causal_long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"binary-scope", required_argument, NULL, 'b'},
    {"source-scope", required_argument, NULL, 's'},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"sampled-progress", required_argument, NULL, OPT_SAMPLED},
    {"end-to-end", no_argument, NULL, OPT_END_TO_END},
    {"fixed-line", required_argument, NULL, OPT_FIXED_LINE},
    {"fixed-speedup", required_argument, NULL, OPT_FIXED_SPEEDUP},
    {"sampler", required_argument, NULL, OPT_SAMPLER},
    {"verbose", no_argument, NULL, 'v'},
    {"follow-children", no_argument, NULL, OPT_FOLLOW_CHILDREN},
    {"zero-probability", required_argument, NULL, OPT_ZERO_PROB},
    {"speedup-step", required_argument, NULL, OPT_SPEEDUP_STEP},
    {"experiment-length", required_argument, NULL, OPT_EXPERIMENT_LENGTH},
    {"cooloff", required_argument, NULL, OPT_COOLOFF},
    {"min-visits", required_argument, NULL, OPT_MIN_VISITS},
    {"sample-period", required_argument, NULL, OPT_SAMPLE_PERIOD},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"seed", required_argument, NULL, OPT_SEED},
    {"arrival-speedup", required_argument, NULL, OPT_ARRIVAL_SPEEDUP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int set_number(char *dst, size_t size, const char *text, uint64_t min, uint64_t max,
		      const char *option, const char *what)
{
	uint64_t v;

	if (!parse_u64_range(text, min, max, &v))
		return usage_error("%s: '%s' is not %s", option, text, what);
	snprintf(dst, size, "%llu", (unsigned long long)v);
	return 0;
}

static int set_duration(char *dst, size_t size, const char *text, uint64_t unit, uint64_t min,
			uint64_t max, const char *option, const char *what)
{
	uint64_t v;

	if (!parse_duration(text, unit, min, max, &v))
		return usage_error("%s: '%s' is not %s", option, text, what);
	snprintf(dst, size, "%llu", (unsigned long long)v);
	return 0;
}

static int add_pattern(struct list *l, const char *pat, const char *option)
{
	if (!*pat || strchr(pat, '\t'))
		return usage_error("%s: the pattern must be non-empty and contain no tab", option);
	return list_add(l, pat) ? 1 : 0;
}

static int add_file_line(struct list *l, const char *spec, const char *option)
{
	if (!valid_file_line(spec))
		return usage_error("%s: '%s' is not FILE:LINE (e.g. main.c:42)", option, spec);
	return list_add(l, spec) ? 1 : 0;
}

#define HOUR_NS (3600ULL * NSEC_PER_SEC)

/* Apply one option; 0 on success, else the exit status. */
static int apply_option(struct causal_options *o, int c, const char *arg)
{
	double p;
	uint64_t v;

	switch (c) {
	case 'o':
		if (!*arg)
			return usage_error("--output: empty file name");
		o->output = arg;
		return 0;
	case 'b':
		return add_pattern(&o->binary_scope, arg, "--binary-scope");
	case 's':
		return add_pattern(&o->source_scope, arg, "--source-scope");
	case OPT_PROGRESS:
		return add_file_line(&o->progress, arg, "--progress");
	case OPT_SAMPLED:
		return add_file_line(&o->sampled, arg, "--sampled-progress");
	case OPT_END_TO_END:
		o->end_to_end = true;
		return 0;
	case OPT_FIXED_LINE:
		if (!valid_file_line(arg))
			return usage_error("--fixed-line: '%s' is not FILE:LINE (e.g. main.c:42)",
					   arg);
		o->fixed_line = arg;
		return 0;
	case OPT_FIXED_SPEEDUP:
		if (!parse_u64_range(arg, 0, 100, &v))
			return usage_error("--fixed-speedup: '%s' is not a percentage 0..100", arg);
		o->fixed_speedup = arg;
		return 0;
	case OPT_SAMPLER:
		if (strcmp(arg, "perf") && strcmp(arg, "timer") && strcmp(arg, "none"))
			return usage_error("--sampler: '%s' is not perf, timer or none", arg);
		o->sampler = arg;
		return 0;
	case 'v':
		if (o->verbose < 2)
			o->verbose++;
		snprintf(o->verbose_level, sizeof(o->verbose_level), "%u", o->verbose);
		return 0;
	case OPT_FOLLOW_CHILDREN:
		o->follow_children = true;
		return 0;
	case OPT_ZERO_PROB:
		if (!parse_fraction(arg, &p))
			return usage_error("--zero-probability: '%s' is not a probability 0..1",
					   arg);
		o->zero_probability = arg;
		return 0;
	case OPT_SPEEDUP_STEP:
		return set_number(o->speedup_step, sizeof(o->speedup_step), arg, 1, 100,
				  "--speedup-step", "a percentage 1..100");
	case OPT_EXPERIMENT_LENGTH:
		return set_duration(o->experiment_ms, sizeof(o->experiment_ms), arg, NSEC_PER_MSEC,
				    NSEC_PER_MSEC, HOUR_NS, "--experiment-length",
				    "a whole number of milliseconds from 1ms to 1h");
	case OPT_COOLOFF:
		return set_duration(o->cooloff_ms, sizeof(o->cooloff_ms), arg, NSEC_PER_MSEC, 0,
				    HOUR_NS, "--cooloff",
				    "a whole number of milliseconds from 0 to 1h");
	case OPT_MIN_VISITS:
		return set_number(o->min_visits, sizeof(o->min_visits), arg, 1, 1000000000,
				  "--min-visits", "a count 1..1000000000");
	case OPT_SAMPLE_PERIOD:
		return set_duration(o->period_us, sizeof(o->period_us), arg, NSEC_PER_USEC,
				    10 * NSEC_PER_USEC, NSEC_PER_SEC, "--sample-period",
				    "a whole number of microseconds from 10us to 1s");
	case OPT_BATCH:
		return set_number(o->batch, sizeof(o->batch), arg, 1, 1000, "--batch",
				  "a count 1..1000");
	case OPT_SEED:
		return set_number(o->seed, sizeof(o->seed), arg, 0, UINT64_MAX, "--seed",
				  "an unsigned 64-bit integer");
	case OPT_ARRIVAL_SPEEDUP:
		if (!causal_parse_arrival_speedup(arg, &v))
			return usage_error("--arrival-speedup: '%s' is not a time from 0 to 1h "
					   "(ns, us, ms or s; a bare number is ns)",
					   arg);
		snprintf(o->arrival_ns, sizeof(o->arrival_ns), "%llu", (unsigned long long)v);
		return 0;
	default:
		return EXIT_USAGE;
	}
}

/* Index of the first "--" or "---", or argc. */
static int find_separator(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 || strcmp(argv[i], "---") == 0)
			return i;
	}
	return argc;
}

/*
 * Parse options in argv[1..); on success *prog is the index of PROGRAM.
 * Returns 0, -1 after --help, or an exit status.
 */
static int parse_options(struct causal_options *o, int argc, char **argv, int *prog)
{
	int sep = find_separator(argc, argv);
	int c, ret;

	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option, so PROGRAM may follow without "--" */
	while ((c = getopt_long(sep, argv, "+:o:b:s:vh", causal_long_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(causal_usage, stdout);
			return -1;
		}
		if (c == '?') {
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		ret = apply_option(o, c, optarg);
		if (ret)
			return ret;
	}
	if (optind < sep)
		*prog = optind; /* PROGRAM given without "--" */
	else
		*prog = sep + 1;
	if (*prog >= argc)
		return usage_error("no program given: lever causal [OPTIONS] -- PROGRAM [ARGS]");
	return 0;
}

/* ------------------------------------------------------------ launching */

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
			fprintf(stderr, "lever causal: cannot get the working directory: %s\n",
				strerror(errno));
			return -1;
		}
		if ((size_t)snprintf(out, size, "%s/%s", cwd, output) >= size)
			goto too_long;
	}
	fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "lever causal: cannot write the profile %s: %s\n", out,
			strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
too_long:
	fprintf(stderr, "lever causal: output path too long: %s\n", output);
	return -1;
}

/*
 * The program's environment: every LEVER_CAUSAL_* setting (those not asked for
 * removed, so that none leaks in from the caller) and the runtime preloaded.
 */
static int build_environment(struct launch_env *env, const struct causal_options *o,
			     const char *output)
{
	const struct {
		const char *name;
		const char *value;
	} vars[] = {
	    {LEVER_ENV_ACTIVE, "1"},
	    {LEVER_ENV_OUTPUT, output},
	    {LEVER_ENV_BINARY_SCOPE, o->binary_scope.text},
	    {LEVER_ENV_SOURCE_SCOPE, o->source_scope.text},
	    {LEVER_ENV_PROGRESS, o->progress.text},
	    {LEVER_ENV_SAMPLED, o->sampled.text},
	    {LEVER_ENV_END_TO_END, o->end_to_end ? "1" : NULL},
	    {LEVER_ENV_FIXED_LINE, o->fixed_line},
	    {LEVER_ENV_FIXED_SPEEDUP, o->fixed_speedup},
	    {LEVER_ENV_SAMPLER, o->sampler},
	    {LEVER_ENV_VERBOSE, o->verbose_level},
	    {LEVER_ENV_FOLLOW_CHILDREN, o->follow_children ? "1" : NULL},
	    {LEVER_ENV_ZERO_PROB, o->zero_probability},
	    {LEVER_ENV_SPEEDUP_STEP, o->speedup_step},
	    {LEVER_ENV_EXPERIMENT_MS, o->experiment_ms},
	    {LEVER_ENV_COOLOFF_MS, o->cooloff_ms},
	    {LEVER_ENV_MIN_VISITS, o->min_visits},
	    {LEVER_ENV_PERIOD_US, o->period_us},
	    {LEVER_ENV_BATCH, o->batch},
	    {LEVER_ENV_SEED, o->seed},
	    {LEVER_ENV_ARRIVAL_SPEEDUP, o->arrival_ns},
	};

	if (launch_env_init(env, WHO, environ))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *value = vars[i].value && *vars[i].value ? vars[i].value : NULL;

		if (launch_env_set(env, vars[i].name, value))
			return -1;
	}
	/* lever execs, so its pid is the program's: other processes are children */
	if (launch_env_set_u64(env, LEVER_ENV_ROOT_PID, (unsigned long long)getpid()) ||
	    launch_env_add_runtime(env, LAUNCH_CAUSAL_RUNTIME))
		return -1;
	/* lets the runtime measure its start-up cost from here */
	return launch_env_set_u64(env, LEVER_ENV_EXEC_NS, (unsigned long long)time_monotonic_ns());
}

static void free_options(struct causal_options *o)
{
	free(o->binary_scope.text);
	free(o->source_scope.text);
	free(o->progress.text);
	free(o->sampled.text);
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
		free_options(&o);
		return ret < 0 ? 0 : ret;
	}
	ret = LAUNCH_EXIT_FAILURE;
	if (launch_check_preloadable(WHO, argv[prog], "lever's causal runtime") ||
	    resolve_output(o.output, output, sizeof(output)) || build_environment(&env, &o, output))
		goto out;
	ret = launch_exec(WHO, argv + prog, &env);
out:
	launch_env_free(&env);
	free_options(&o);
	return ret;
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

int cmd_causal(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cmd_causal_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "sweep") == 0)
		return cmd_causal_sweep(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return run_profiler(argc - 1, argv + 1); /* Coz's `coz run` spelling */
	if (argc < 2)
		return usage_error("no program given: lever causal [OPTIONS] -- PROGRAM [ARGS]");
	return run_profiler(argc, argv);
}
