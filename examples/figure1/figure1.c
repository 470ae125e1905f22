/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Figure 1 of the Coz paper (Curtsinger & Berger, SOSP 2015), sized for a
 * 2-core machine and repeated in rounds so that it has a progress point.
 *
 * Each round runs two threads, one per loop, and waits for both: loop a does
 * N iterations, loop b 0.95 N (the paper's 2000:1900). The round takes as long
 * as the slower loop, a, so speeding a up helps only until b becomes the
 * critical path: by at most 1 - 0.95 = 5%. Speeding b up helps not at all.
 * A causal profile should show exactly that; a conventional profiler shows
 * two lines of almost equal weight.
 *
 * --a-scale S runs loop a for S*N iterations instead, to measure the true
 * effect of optimising it: `figure1 --a-scale 0.5` vs `figure1`; --b-scale S
 * does the same for loop b (S*0.95 N iterations).
 *
 * Each iteration is one integer division that depends on the previous one, so
 * a loop is bound by the divider's latency and leaves the rest of its core
 * idle. Loops that hammer the caches or the store buffer (as `volatile`
 * counters do) slow each other down when the two vCPUs of a virtual machine
 * share a physical core; then shortening a would also speed b up, and the
 * ceiling would no longer be the paper's 5%.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lever.h"

/* ~10 ms for loop a on a 2020s x86-64 core; 3000 rounds take ~30 s. */
#define DEFAULT_ITERATIONS 2400000UL
#define DEFAULT_ROUNDS	   3000UL

static size_t iterations_a, iterations_b;
/* Read at run time so that the compiler cannot turn the division into a multiply. */
static volatile uint64_t divisor = 3;
static volatile uint64_t sink;

/* Each loop stays on one source line, as in the paper. */
/* clang-format off */
static void *loop_a(void *unused)
{
	uint64_t x = iterations_a, d = divisor;
	for (size_t i = 0; i < iterations_a; i++) x = x / d + 0x9e3779b97f4a7c15ULL; /* line a */
	sink = x;
	return unused;
}

static void *loop_b(void *unused)
{
	uint64_t y = iterations_b, d = divisor;
	for (size_t i = 0; i < iterations_b; i++) y = y / d + 0x9e3779b97f4a7c15ULL; /* line b */
	sink = y;
	return unused;
}
/* clang-format on */

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--rounds R] [--iterations N] [--a-scale S] [--b-scale S]\n"
		"  --rounds R      rounds to run (default %lu)\n"
		"  --iterations N  iterations of loop a per round (default %lu); b runs 0.95 N\n"
		"  --a-scale S     run loop a for S*N iterations (default 1; 0 removes it)\n"
		"  --b-scale S     run loop b for S*0.95*N iterations (default 1)\n",
		prog, DEFAULT_ROUNDS, DEFAULT_ITERATIONS);
	return 2;
}

static int parse_count(const char *text, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(text, &end, 10);
	return errno || *end || end == text || *text == '-' || *out == 0 ? -1 : 0;
}

static int parse_scale(const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	return errno || *end || end == text || !(*out >= 0 && *out <= 100) ? -1 : 0;
}

static int run_round(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, loop_a, NULL))
		return -1;
	if (pthread_create(&b, NULL, loop_b, NULL)) {
		pthread_join(a, NULL);
		return -1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = DEFAULT_ROUNDS, n = DEFAULT_ITERATIONS;
	double scale = 1.0, b_scale = 1.0, start, elapsed;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0) {
			if (parse_count(argv[++i], &rounds))
				return usage(argv[0]);
		} else if (i + 1 < argc && strcmp(argv[i], "--iterations") == 0) {
			if (parse_count(argv[++i], &n))
				return usage(argv[0]);
		} else if (i + 1 < argc && strcmp(argv[i], "--a-scale") == 0) {
			if (parse_scale(argv[++i], &scale))
				return usage(argv[0]);
		} else if (i + 1 < argc && strcmp(argv[i], "--b-scale") == 0) {
			if (parse_scale(argv[++i], &b_scale))
				return usage(argv[0]);
		} else {
			return usage(argv[0]);
		}
	}
	iterations_a = (size_t)(scale * (double)n);
	iterations_b = (size_t)(b_scale * 0.95 * (double)n);

	start = now_seconds();
	for (unsigned long r = 0; r < rounds; r++) {
		if (run_round()) {
			fprintf(stderr, "figure1: cannot create threads\n");
			return 1;
		}
		LEVER_PROGRESS_NAMED("round");
	}
	elapsed = now_seconds() - start;
	printf("figure1: %lu rounds, a=%zu b=%zu iterations, %.3f s, %.3f ms/round\n", rounds,
	       iterations_a, iterations_b, elapsed, 1e3 * elapsed / (double)rounds);
	return 0;
}
