/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A serial phase, then a parallel phase with a different thread count
 * (issue 18, must-show 2): the main thread runs N units of loop S, then two
 * workers each run N units of loop P. Every unit ends with a visit to one
 * progress point, "unit", in both phases. On two idle cores each phase is
 * about half the run, so really shortening S by s speeds the program up by
 * about s/2, and the same for P.
 *
 *   twophase [--units N] [--unit-divisions D] [--s-scale X] [--p-scale X]
 *
 * --s-scale / --p-scale make loop S / P really shorter (X times its work,
 * 0..1): the truth a causal profile's prediction is compared with. The
 * work is dependent divisions (bound by the divider's latency, as
 * bench/causal's programs, so that the two vCPUs of a shared core do not
 * slow each other much). Prints the elapsed time last.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lever.h"

#define WORKERS 2

static long units = 400, divisions = 300000;
static double s_scale = 1.0, p_scale = 1.0;
static volatile uint64_t divisor = 3;
static volatile uint64_t sink;

/* clang-format off */
static void serial_unit(long n)
{
	uint64_t x = (uint64_t)n, d = divisor;
	for (long i = 0; i < n; i++) x = x / d + 0x9e3779b97f4a7c15ULL; /* LINE:S */
	sink = x;
}

static void parallel_unit(long n)
{
	uint64_t x = (uint64_t)n, d = divisor;
	for (long i = 0; i < n; i++) x = x / d + 0x9e3779b97f4a7c15ULL; /* LINE:P */
	sink = x;
}
/* clang-format on */

static void *worker(void *unused)
{
	long n = (long)(p_scale * (double)divisions + 0.5);

	for (long u = 0; u < units; u++) {
		parallel_unit(n);
		LEVER_PROGRESS_NAMED("unit");
	}
	return unused;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: twophase [--units N] [--unit-divisions D] [--s-scale X] "
			"[--p-scale X]\n");
	return 2;
}

static int parse(const char *text, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	return errno || *end || end == text || !(*out >= lo && *out <= hi) ? -1 : 0;
}

int main(int argc, char **argv)
{
	pthread_t t[WORKERS];
	double start, v;
	long n;

	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc || parse(argv[i + 1], 0, 1e12, &v))
			return usage();
		if (!strcmp(argv[i], "--units") && v >= 1)
			units = (long)v;
		else if (!strcmp(argv[i], "--unit-divisions") && v >= 1)
			divisions = (long)v;
		else if (!strcmp(argv[i], "--s-scale") && v <= 1)
			s_scale = v;
		else if (!strcmp(argv[i], "--p-scale") && v <= 1)
			p_scale = v;
		else
			return usage();
	}
	start = now_s();
	n = (long)(s_scale * (double)divisions + 0.5);
	for (long u = 0; u < units; u++) {
		serial_unit(n);
		LEVER_PROGRESS_NAMED("unit");
	}
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("twophase: units=%ld elapsed_s=%.6f\n", units, now_s() - start);
	return 0;
}
