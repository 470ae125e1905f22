/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared scaffolding of the bench/causal accuracy programs: argument parsing,
 * a clock, and the work loop.
 *
 * Every program has one chosen line (marked "LINE:chosen" in its source) whose
 * work --scale S multiplies: --scale 0.75 REALLY makes that line 25% shorter,
 * so running the program at several scales measures the true effect that a
 * causal profiler predicts from virtually speeding the line up.
 *
 * SPIN(n) is n dependent 64-bit divisions. It is a macro so that all of its
 * code carries the line where it is used (one work loop = one source line),
 * and divisions because a loop bound by the divider's latency leaves the rest
 * of the core idle: the two vCPUs of these VMs share one physical core, and
 * loops that hammer caches or the store buffer would slow each other down.
 */
#ifndef BENCH_CAUSAL_COMMON_H
#define BENCH_CAUSAL_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <coz.h>

/* Read at run time so that the compiler cannot turn divisions into multiplies. */
static volatile uint64_t bench_divisor = 3;
static volatile uint64_t bench_sink;

#define SPIN(n)                                                                                    \
	do {                                                                                       \
		uint64_t spin_x_ = (uint64_t)(n), spin_d_ = bench_divisor;                         \
		for (long spin_i_ = 0; spin_i_ < (long)(n); spin_i_++)                             \
			spin_x_ = spin_x_ / spin_d_ + 0x9e3779b97f4a7c15ULL;                       \
		bench_sink = spin_x_;                                                              \
	} while (0)

struct bench_args {
	long rounds;  /* units of work the program performs (its own meaning) */
	long unit;    /* divisions in one unit of work */
	double scale; /* multiplier of the chosen line's work, 0..1 */
};

static inline double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline int bench_usage(const char *prog, const struct bench_args *def)
{
	fprintf(stderr,
		"usage: %s [--rounds R] [--unit N] [--scale S]\n"
		"  --rounds R  amount of work (default %ld)\n"
		"  --unit N    divisions per work unit (default %ld)\n"
		"  --scale S   the chosen line does S times its work, 0..1 (default 1)\n",
		prog, def->rounds, def->unit);
	return 2;
}

static inline int bench_parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end || end == s || *out < 0 ? -1 : 0;
}

/* Fills a (which holds the defaults); returns 0 or the exit status of a usage error. */
static inline int bench_parse(int argc, char **argv, struct bench_args *a)
{
	struct bench_args def = *a;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (i + 1 >= argc)
			return bench_usage(argv[0], &def);
		if (!strcmp(argv[i], "--rounds")) {
			if (bench_parse_long(argv[++i], &a->rounds))
				return bench_usage(argv[0], &def);
		} else if (!strcmp(argv[i], "--unit")) {
			if (bench_parse_long(argv[++i], &a->unit) || a->unit == 0)
				return bench_usage(argv[0], &def);
		} else if (!strcmp(argv[i], "--scale")) {
			errno = 0;
			a->scale = strtod(argv[++i], &end);
			if (errno || *end || !(a->scale >= 0 && a->scale <= 1))
				return bench_usage(argv[0], &def);
		} else {
			return bench_usage(argv[0], &def);
		}
	}
	return 0;
}

/* The chosen line's work: n units scaled, rounded to whole divisions. */
static inline long bench_scaled(const struct bench_args *a, double units)
{
	return (long)(units * (double)a->unit * a->scale + 0.5);
}

static inline long bench_units(const struct bench_args *a, double units)
{
	return (long)(units * (double)a->unit + 0.5);
}

/* The one line every program prints last; the harness reads it. */
static inline void bench_report(const char *name, long rounds, double elapsed, double latency)
{
	printf("%s: rounds=%ld elapsed_s=%.6f", name, rounds, elapsed);
	if (latency >= 0)
		printf(" latency_ms=%.6f", latency * 1e3);
	printf("\n");
}

#endif
