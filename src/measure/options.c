/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The run options shared by lever bench and lever compare (run counts, the
 * measuring time, randomization): defaults, the values that need more than
 * a number read (the command-line tables in src/cli call these), and
 * combinations that would do nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure.h"
#include "stabilizer/runtime/settings.h"

void measure_options_init(struct measure_options *o)
{
	memset(o, 0, sizeof(*o));
	o->min_runs = 10;
	o->min_time = 3.0;
	o->randomize_env = true;
	o->rerandomize_ns = STABILIZE_DEFAULT_INTERVAL_NS;
	o->seed = time_realtime_ns() ^ ((uint64_t)getpid() << 32);
}

/* A count in decimal digits only: "1e3" or "10.5" is refused, not read as 1 or 10. */
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

int measure_parse_runs(struct measure_options *o, const char *arg)
{
	size_t n;

	if (!parse_count(arg, &n) || n < 2)
		return -1;
	o->min_runs = o->max_runs = n;
	return 0;
}

int measure_parse_min_time(struct measure_options *o, const char *arg)
{
	uint64_t ns;

	if (!*arg || !(strtod(arg, NULL) <= 1e7) || !time_parse_duration(arg, NSEC_PER_SEC, &ns))
		return -1;
	o->min_time = (double)ns / 1e9;
	return 0;
}

/* --randomize=env,heap,code,stack,link,none: each word turns one part on. */
int measure_parse_randomize(struct measure_options *o, const char *arg)
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
	int rc = 0;

	if (!copy)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i].flag)
			*parts[i].flag = false;
	for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < ARRAY_SIZE(parts) && strcmp(tok, parts[i].name) != 0)
			i++;
		if (i == ARRAY_SIZE(parts))
			rc = -1;
		else if (parts[i].flag)
			*parts[i].flag = true;
	}
	free(copy);
	return rc;
}

#define HOUR_NS (3600ULL * NSEC_PER_SEC)

/* --rerandomize=DUR (1ms..1h, default unit ms, as lever stabilize --interval) or off. */
int measure_parse_rerandomize(struct measure_options *o, const char *arg)
{
	uint64_t ns;

	if (strcmp(arg, "off") == 0) {
		o->rerandomize_ns = 0;
		o->rerandomize_given = true;
		return 0;
	}
	if (!*arg || !(strtod(arg, NULL) <= 1e12) ||
	    !time_parse_duration(arg, NSEC_PER_MSEC, &ns) || ns < NSEC_PER_MSEC || ns > HOUR_NS)
		return -1;
	o->rerandomize_ns = ns;
	o->rerandomize_given = true;
	return 0;
}

bool measure_options_stabilizer(const struct measure_options *o)
{
	return o->randomize_heap || o->randomize_code || o->randomize_stack;
}

int measure_options_check(const struct measure_options *o, const char *command)
{
	if (o->max_runs && o->min_runs > o->max_runs) {
		fprintf(stderr,
			"%s: --min-runs %zu is more than --max-runs %zu (-n N sets both): no run "
			"count satisfies both\n",
			command, o->min_runs, o->max_runs);
		fprintf(stderr, "Run '%s --help' for usage.\n", command);
		return MEASURE_EXIT_USAGE;
	}
	if (o->rerandomize_given && !o->randomize_code && !o->randomize_stack) {
		fprintf(stderr,
			"%s: --rerandomize only acts on --randomize=code or stack (the heap "
			"re-randomizes on every allocation anyway)\n",
			command);
		fprintf(stderr, "Run '%s --help' for usage.\n", command);
		return MEASURE_EXIT_USAGE;
	}
	return 0;
}
