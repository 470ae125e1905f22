/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The per-thread metric counters of liblever-annotate.so (metrics.h; spec
 * freud.md §4.2.2 and §5.3.3): a snapshot at a call's entry and one at its
 * exit, whose difference is the call's cost, inclusive of callees.
 *
 * What each metric costs to read (bench/annotate_metrics/ has the figures):
 *   time     the TSC (rdtsc, ~10 ns) converted with a multiplier calibrated
 *            at start-up against CLOCK_MONOTONIC, when the kernel itself
 *            trusts the TSC (its clocksource is "tsc": synchronised across
 *            CPUs, invariant) and a self-check of the calibration agrees;
 *            otherwise CLOCK_MONOTONIC through the vDSO. The seed hard-coded
 *            the tick rate (§5.3.3, [REPO]); LEVER_ANNOTATE_CLOCK=monotonic|tsc
 *            overrides the choice.
 *   cpu      CLOCK_THREAD_CPUTIME_ID, a system call (no vDSO path for
 *            per-thread CPU clocks), read only when cpu is asked.
 *   mem, wait, hold
 *            TLS counters kept by the interposers (interpose_*.c): no cost
 *            here beyond a load (hold also needs the clock for an open
 *            holding interval).
 *   pfaults, Pfaults, cs
 *            one getrusage(RUSAGE_THREAD) system call for the three, only
 *            when one of them is asked. The seed read /proc/PID/task/TID/stat
 *            (§5.3.3) because Pin forbade getrusage; the system call gives the
 *            same per-thread counters without parsing text.
 *
 * ann_metrics_read is async-signal-safe and allocates nothing: probes may
 * fire in signal handlers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "annotate/runtime/metrics_internal.h"

ANN_TLS struct ann_thread_counters ann_counters;
_Atomic unsigned ann_metrics_enabled;
struct ann_clock ann_clock = {.source = ANN_CLOCK_MONOTONIC};

#define ALL_METRICS ((1u << ANN_N_METRICS) - 1)
#define RUSAGE_METRICS                                                                             \
	(ANN_METRIC_BIT(ANN_PFAULTS) | ANN_METRIC_BIT(ANN_PFAULTS_MAJOR) | ANN_METRIC_BIT(ANN_CS))
#define CLOCK_METRICS (ANN_METRIC_BIT(ANN_TIME) | ANN_METRIC_BIT(ANN_HOLD))

/* ------------------------------------------------------------ TSC calibration */

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every P-, C- and T-state. */
static bool cpu_has_invariant_tsc(void)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a < 0x80000007u)
		return false;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
	return d & (1u << 8);
}

/*
 * The kernel checks the TSC's synchronisation across CPUs at boot and
 * switches away from it when it misbehaves; "tsc" as its clocksource is the
 * strongest evidence user space can get that TSC readings on different
 * CPUs are comparable.
 */
static bool kernel_clocksource_is_tsc(void)
{
	static const char path[] =
	    "/sys/devices/system/clocksource/clocksource0/current_clocksource";
	char buf[16] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

/*
 * One (TSC, CLOCK_MONOTONIC) pair: the TSC read on both sides of the clock,
 * the narrowest of a few tries, so that a preemption in between cannot skew it.
 */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = ann_rdtsc(), t = ann_monotonic_ns(), b = ann_rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = t;
		}
	}
}

static void sleep_ns(long ns)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * ns per tick times 2^32 over two consecutive windows of 2 ms; accepted
 * when the two windows agree within 100 ppm (a TSC that stops, jumps or
 * changes rate fails this), as the rate over both.
 */
static bool calibrate_tsc(struct ann_clock *c)
{
	uint64_t t[3], n[3];
	double r1, r2;

	for (int i = 0; i < 3; i++) {
		if (i)
			sleep_ns(2000000);
		clock_pair(&t[i], &n[i]);
	}
	if (t[1] <= t[0] || t[2] <= t[1] || n[1] <= n[0] || n[2] <= n[1])
		return false;
	r1 = (double)(n[1] - n[0]) / (double)(t[1] - t[0]);
	r2 = (double)(n[2] - n[1]) / (double)(t[2] - t[1]);
	if (r1 <= 0 || r2 / r1 > 1.0001 || r1 / r2 > 1.0001)
		return false;
	c->source = ANN_CLOCK_TSC;
	c->tsc0 = t[0];
	c->ns0 = n[0];
	c->mult = (uint64_t)(((unsigned __int128)(n[2] - n[0]) << 32) / (t[2] - t[0]));
	return true;
}

static void choose_clock(void)
{
	const char *want = getenv("LEVER_ANNOTATE_CLOCK");
	struct ann_clock c = {.source = ANN_CLOCK_MONOTONIC};

	if (want && strcmp(want, "monotonic") == 0) {
		ann_clock = c;
		return;
	}
	if (want && strcmp(want, "tsc") == 0) {
		/* asked for: only the calibration's self-check can refuse */
		if (calibrate_tsc(&c) || calibrate_tsc(&c))
			ann_clock = c;
		return;
	}
	if (cpu_has_invariant_tsc() && kernel_clocksource_is_tsc() &&
	    (calibrate_tsc(&c) || calibrate_tsc(&c)))
		ann_clock = c;
}

const char *ann_metrics_clock_name(void)
{
	return ann_clock.source == ANN_CLOCK_TSC ? "tsc" : "monotonic";
}

/* ------------------------------------------------------------ the contract */

/* interpose_malloc.c, when linked in (not in the counters' own unit test) */
extern bool ann_malloc_interposed(void) __attribute__((weak, visibility("hidden")));

/* mem cannot see an allocator the executable defines itself: say so, once. */
static void warn_if_allocator_unseen(void)
{
	static const char msg[] =
	    "lever annotate: the program defines malloc itself: mem counts only operator new "
	    "and what reaches the C library's allocator (doc/annotate-metrics.md)\n";

	if (ann_malloc_interposed && !ann_malloc_interposed() && write(2, msg, sizeof(msg) - 1))
		return;
}

int ann_metrics_init(unsigned mask)
{
	int saved_errno = errno;

	if (mask & ~ALL_METRICS)
		return -EINVAL;
	/*
	 * The clock is chosen before the interposers see the mask, so that no
	 * wait or hold interval spans two clocks.
	 */
	atomic_store(&ann_metrics_enabled, 0);
	if (mask & (CLOCK_METRICS | ANN_METRIC_BIT(ANN_WAIT)))
		choose_clock();
	atomic_store(&ann_metrics_enabled, mask);
	if (mask & ANN_METRIC_BIT(ANN_MEM))
		warn_if_allocator_unseen();
	errno = saved_errno;
	return 0;
}

static uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* Only the metrics asked for: the contract leaves the others as they are. */
static void store_rusage(struct ann_metrics_snapshot *out, unsigned mask, const struct rusage *ru)
{
	if (mask & ANN_METRIC_BIT(ANN_PFAULTS))
		out->v[ANN_PFAULTS] = (uint64_t)ru->ru_minflt;
	if (mask & ANN_METRIC_BIT(ANN_PFAULTS_MAJOR))
		out->v[ANN_PFAULTS_MAJOR] = (uint64_t)ru->ru_majflt;
	if (mask & ANN_METRIC_BIT(ANN_CS))
		out->v[ANN_CS] = (uint64_t)ru->ru_nvcsw + (uint64_t)ru->ru_nivcsw;
}

/* time and hold, at the clock reading now */
static void store_clock(struct ann_metrics_snapshot *out, unsigned mask, uint64_t now)
{
	if (mask & ANN_METRIC_BIT(ANN_TIME))
		out->v[ANN_TIME] = now;
	if (mask & ANN_METRIC_BIT(ANN_HOLD)) {
		uint32_t held = ann_counters.held;

		atomic_signal_fence(memory_order_seq_cst);
		out->v[ANN_HOLD] = ann_counters.hold + (held ? now - ann_counters.hold_since : 0);
	}
}

/* the metrics that are not the clock */
static void read_others(struct ann_metrics_snapshot *out, unsigned mask)
{
	if (mask & ANN_METRIC_BIT(ANN_CPU)) {
		struct timespec ts;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		out->v[ANN_CPU] = timespec_ns(&ts);
	}
	if (mask & ANN_METRIC_BIT(ANN_MEM))
		out->v[ANN_MEM] = ann_counters.mem;
	if (mask & ANN_METRIC_BIT(ANN_WAIT))
		out->v[ANN_WAIT] = ann_counters.wait;
	if (mask & RUSAGE_METRICS) {
		struct rusage ru;

		if (getrusage(RUSAGE_THREAD, &ru) == 0)
			store_rusage(out, mask, &ru);
	}
}

void ann_metrics_read(struct ann_metrics_snapshot *out, unsigned mask)
{
	store_clock(out, mask, mask & CLOCK_METRICS ? ann_clock_ns() : 0);
	if (mask & ~CLOCK_METRICS)
		read_others(out, mask);
}

static uint64_t clock_at(unsigned mask, uint64_t tsc)
{
	if (!(mask & CLOCK_METRICS))
		return 0;
	return ann_clock.source == ANN_CLOCK_TSC ? ann_tsc_ns(tsc) : ann_monotonic_ns();
}

uint64_t ann_metrics_read_tsc(struct ann_metrics_snapshot *out, unsigned mask, uint64_t tsc)
{
	if (tsc) {
		store_clock(out, mask, clock_at(mask, tsc));
		if (mask & ~CLOCK_METRICS)
			read_others(out, mask);
		return tsc;
	}
	if (mask & ~CLOCK_METRICS)
		read_others(out, mask);
	tsc = ann_rdtsc();
	store_clock(out, mask, clock_at(mask, tsc));
	return tsc;
}
