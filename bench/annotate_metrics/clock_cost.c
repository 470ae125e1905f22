/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The cost of each way liblever-annotate.so can read a metric
 * (src/annotate/runtime/metrics.c; spec/freud.md §4.2.2, §5.3.3), in ns per
 * read: the raw sources (rdtsc, rdtscp, clock_gettime through the vDSO,
 * the per-thread CPU clock, getrusage(RUSAGE_THREAD)) and ann_metrics_read
 * with each clock and metric mask. Rounds interleave the methods so that a
 * load change on the machine hits all of them alike. Output: CSV
 * "round,method,ns_per_read" on stdout (analyze.py makes the table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "annotate/runtime/metrics_internal.h"

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void do_rdtsc(void)
{
	sink += ann_rdtsc();
}

static void do_rdtscp(void)
{
	uint32_t lo, hi, aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	sink += lo;
}

static void do_clock(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	sink += (uint64_t)ts.tv_nsec;
}

static void do_monotonic(void)
{
	do_clock(CLOCK_MONOTONIC);
}

static void do_thread_cputime(void)
{
	do_clock(CLOCK_THREAD_CPUTIME_ID);
}

static void do_getrusage(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	sink += (uint64_t)ru.ru_minflt;
}

static unsigned read_mask;

static void do_read(void)
{
	struct ann_metrics_snapshot s;

	ann_metrics_read(&s, read_mask);
	sink += s.v[ANN_TIME];
}

struct method {
	const char *name;
	void (*fn)(void);
	const char *clock; /* for ann_metrics_read: LEVER_ANNOTATE_CLOCK */
	unsigned mask;
};

#define BIT(m) ANN_METRIC_BIT(m)
#define ALL    ((1u << ANN_N_METRICS) - 1)

static const struct method methods[] = {
    {"rdtsc", do_rdtsc, NULL, 0},
    {"rdtscp", do_rdtscp, NULL, 0},
    {"clock_gettime(MONOTONIC)", do_monotonic, NULL, 0},
    {"clock_gettime(THREAD_CPUTIME)", do_thread_cputime, NULL, 0},
    {"getrusage(RUSAGE_THREAD)", do_getrusage, NULL, 0},
    {"read time [tsc]", do_read, "tsc", BIT(ANN_TIME)},
    {"read time [monotonic]", do_read, "monotonic", BIT(ANN_TIME)},
    {"read time,mem,wait,hold [tsc]", do_read, "tsc",
     BIT(ANN_TIME) | BIT(ANN_MEM) | BIT(ANN_WAIT) | BIT(ANN_HOLD)},
    {"read time,cpu [tsc]", do_read, "tsc", BIT(ANN_TIME) | BIT(ANN_CPU)},
    {"read all 8 metrics [tsc]", do_read, "tsc", ALL},
};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	int reads = argc > 2 ? atoi(argv[2]) : 100000;
	size_t n = sizeof(methods) / sizeof(methods[0]);

	printf("round,method,ns_per_read\n");
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			const struct method *m =
			    &methods[(i + (size_t)r) % n]; /* rotate the order */
			uint64_t t0, t1;

			if (m->clock) {
				setenv("LEVER_ANNOTATE_CLOCK", m->clock, 1);
				ann_metrics_init(m->mask);
				if (strcmp(ann_metrics_clock_name(), m->clock) != 0) {
					fprintf(stderr, "%s: the %s clock was refused\n", m->name,
						m->clock);
					continue;
				}
				read_mask = m->mask;
			}
			t0 = now_ns();
			for (int k = 0; k < reads; k++)
				m->fn();
			t1 = now_ns();
			printf("%d,\"%s\",%.2f\n", r, m->name, (double)(t1 - t0) / reads);
		}
	}
	return 0;
}
