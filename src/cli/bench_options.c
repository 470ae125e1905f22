/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Options shared by lever bench and lever compare (run counts, prepare, randomization). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench_common.h"
#include "stabilizer/runtime/settings.h"

enum {
	OPT_MIN_TIME = 0x100,
	OPT_RANDOMIZE,
	OPT_SHOW_OUTPUT,
	OPT_NO_PROGRESS,
	OPT_SEED,
	OPT_RERANDOMIZE,
};

const struct option bench_long_options[] = {
    {"warmup", required_argument, NULL, 'w'},
    {"min-runs", required_argument, NULL, 'm'},
    {"max-runs", required_argument, NULL, 'M'},
    {"runs", required_argument, NULL, 'n'},
    {"min-time", required_argument, NULL, OPT_MIN_TIME},
    {"prepare", required_argument, NULL, 'p'},
    {"cleanup", required_argument, NULL, 'c'},
    {"randomize", required_argument, NULL, OPT_RANDOMIZE},
    {"rerandomize", required_argument, NULL, OPT_RERANDOMIZE},
    {"ignore-failure", no_argument, NULL, 'i'},
    {"show-output", no_argument, NULL, OPT_SHOW_OUTPUT},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"seed", required_argument, NULL, OPT_SEED},
    {NULL, 0, NULL, 0},
};

void bench_options_init(struct bench_options *o)
{
	memset(o, 0, sizeof(*o));
	o->min_runs = 10;
	o->min_time = 3.0;
	o->randomize_env = true;
	o->rerandomize_ns = STABILIZE_DEFAULT_INTERVAL_NS;
	o->progress = true;
	o->seed = time_realtime_ns() ^ ((uint64_t)getpid() << 32);
}

static int bad_value(const char *command, const char *option, const char *arg, const char *want)
{
	fprintf(stderr, "%s: %s '%s': %s\n", command, option, arg, want);
	fprintf(stderr, "Run '%s --help' for usage.\n", command);
	return EXIT_USAGE;
}

static bool parse_count(const char *text, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || !*text || strchr("+- ", *text))
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || v > 100000000ULL)
		return false;
	*out = (size_t)v;
	return true;
}

/* --randomize=env,heap,code,stack,link,none: each word turns one part on. */
static int parse_randomize(struct bench_options *o, const char *command, const char *arg)
{
	struct {
		const char *name;
		bool *flag;
	} parts[] = {
	    {"env", &o->randomize_env},	  {"heap", &o->randomize_heap},
	    {"code", &o->randomize_code}, {"stack", &o->randomize_stack},
	    {"link", &o->randomize_link}, {"none", NULL},
	};
	char *copy = strdup(arg), *save = NULL;
	int rc = 1;

	if (!copy)
		return EXIT_USAGE;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i].flag)
			*parts[i].flag = false;
	for (char *tok = strtok_r(copy, ",", &save); tok && rc == 1;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < ARRAY_SIZE(parts) && strcmp(tok, parts[i].name) != 0)
			i++;
		if (i == ARRAY_SIZE(parts))
			rc = bad_value(command, "--randomize", tok,
				       "expected env, heap, code, stack, link or none");
		else if (parts[i].flag)
			*parts[i].flag = true;
	}
	free(copy);
	return rc;
}

#define HOUR_NS (3600ULL * NSEC_PER_SEC)

/* --rerandomize=DUR (1ms..1h, default unit ms, as lever stabilize --interval) or off. */
static int parse_rerandomize(struct bench_options *o, const char *command, const char *arg)
{
	uint64_t ns;

	o->rerandomize_given = true;
	if (strcmp(arg, "off") == 0) {
		o->rerandomize_ns = 0;
		return 1;
	}
	if (!*arg || !(strtod(arg, NULL) <= 1e12) ||
	    !time_parse_duration(arg, NSEC_PER_MSEC, &ns) || ns < NSEC_PER_MSEC || ns > HOUR_NS)
		return bad_value(command, "--rerandomize", arg,
				 "expected a duration from 1ms to 1h, or off");
	o->rerandomize_ns = ns;
	return 1;
}

bool bench_options_stabilizer(const struct bench_options *o)
{
	return o->randomize_heap || o->randomize_code || o->randomize_stack;
}

int bench_options_check(const struct bench_options *o, const char *command)
{
	if (o->rerandomize_given && !o->randomize_code && !o->randomize_stack) {
		fprintf(stderr,
			"%s: --rerandomize only acts on --randomize=code or stack (the heap "
			"re-randomizes on every allocation anyway)\n",
			command);
		fprintf(stderr, "Run '%s --help' for usage.\n", command);
		return EXIT_USAGE;
	}
	return 0;
}

int bench_options_parse(struct bench_options *o, const char *command, int c, const char *arg)
{
	size_t n;
	uint64_t ns;

	switch (c) {
	case 'w':
		if (!parse_count(arg, &o->warmup))
			return bad_value(command, "--warmup", arg, "not a count");
		return 1;
	case 'm':
		if (!parse_count(arg, &n) || n < 2)
			return bad_value(command, "--min-runs", arg, "need a count of at least 2");
		o->min_runs = n;
		return 1;
	case 'M':
		if (!parse_count(arg, &n) || n < 2)
			return bad_value(command, "--max-runs", arg, "need a count of at least 2");
		o->max_runs = n;
		return 1;
	case 'n':
		if (!parse_count(arg, &n) || n < 2)
			return bad_value(command, "--runs", arg, "need a count of at least 2");
		o->min_runs = o->max_runs = n;
		return 1;
	case OPT_MIN_TIME:
		if (!(strtod(arg, NULL) <= 1e7) || !time_parse_duration(arg, NSEC_PER_SEC, &ns))
			return bad_value(command, "--min-time", arg, "not a duration");
		o->min_time = (double)ns / 1e9;
		return 1;
	case 'p':
		o->prepare = arg;
		return 1;
	case 'c':
		o->cleanup = arg;
		return 1;
	case OPT_RANDOMIZE:
		return parse_randomize(o, command, arg);
	case OPT_RERANDOMIZE:
		return parse_rerandomize(o, command, arg);
	case 'i':
		o->ignore_failure = true;
		return 1;
	case OPT_SHOW_OUTPUT:
		o->show_output = true;
		return 1;
	case OPT_NO_PROGRESS:
		o->progress = false;
		return 1;
	case OPT_SEED: {
		char *end;

		errno = 0;
		o->seed = strtoull(arg, &end, 0);
		if (errno || !*arg || *end)
			return bad_value(command, "--seed", arg, "not a number");
		return 1;
	}
	}
	return 0;
}

struct option *bench_options_merge(const struct option *own, size_t n_own)
{
	size_t common = 0;
	struct option *all;

	while (bench_long_options[common].name)
		common++;
	all = calloc(n_own + common + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, own, n_own * sizeof(*all));
	memcpy(all + n_own, bench_long_options, common * sizeof(*all));
	return all;
}
