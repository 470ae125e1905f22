/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The record output of liblever-annotate.so (src/annotate/runtime/output.c,
 * compiled in with stand-ins for the per-thread state): C lines in the
 * record's format (units, missing values, ids and parents), whole lines
 * through the thread buffer and its flushes, reservoir sampling per symbol
 * and period (the first N calls, then slots in range, every call counted,
 * each period written once), binary records from several threads formatted
 * by the writer thread or by their own threads (every call once), and a
 * record the analysis reader accepts.
 * RUNTIME label: runs under ASan+UBSan.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

/* What the rest of the runtime provides to output.c. */
struct ann_plan ann_plan;
bool ann_verbose;
struct ann_thread *ann_threads[ANN_MAX_THREADS];
static __thread struct ann_thread *me;

struct ann_thread *ann_thread_current(void)
{
	return me;
}

/* The writer thread's own: none here (it runs no probes). */
struct ann_thread *ann_thread_get(void)
{
	return me;
}

void ann_probe_costs(uint64_t *unmeasured_ns, uint64_t *inside_ns, uint64_t *skip_ns)
{
	*unmeasured_ns = 48;
	*inside_ns = 55;
	*skip_ns = 31;
}

int ann_reservoirs_init(void);

static char path[] = "/tmp/lever-test-output-XXXXXX";

static char *slurp(void)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 24];
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	me = calloc(1, sizeof(*me));
	assert_non_null(me);
	ann_threads[0] = me;
	memset(&ann_plan, 0, sizeof(ann_plan));
	assert_int_equal(ann_output_open(path), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < ann_plan.n_probes; i++)
		free(ann_plan.probes[i].name);
	free(ann_plan.probes);
	ann_plan.probes = NULL;
	ann_threads[0] = NULL;
	free(me);
	unlink(path);
	strcpy(path, "/tmp/lever-test-output-XXXXXX");
	return 0;
}

static void format_units_and_missing(void **state)
{
	struct ann_probe p = {.symbol = 3, .n_features = 4};
	struct ann_metrics_snapshot d = {{0}};
	double values[4] = {42, -7, 0.25, NAN};
	char line[512];
	size_t n;

	(void)state;
	ann_plan.metrics = ANN_METRIC_BIT(ANN_TIME) | ANN_METRIC_BIT(ANN_MEM) |
			   ANN_METRIC_BIT(ANN_WAIT) | ANN_METRIC_BIT(ANN_CS);
	d.v[ANN_TIME] = 1234567; /* ns: 1234.567 µs */
	d.v[ANN_MEM] = 4096;
	d.v[ANN_WAIT] = 5; /* 0.005 µs */
	d.v[ANN_CS] = 2;
	d.v[ANN_CPU] = 99; /* not asked for: absent */
	n = ann_format_call(line, sizeof(line), &p, 18446744073709551615ull, 17, &d, values, NULL);
	line[n] = 0;
	assert_string_equal(line, "C 3 18446744073709551615 17 time=1234.567 mem=4096 wait=0.005 "
				  "cs=2 0=42 1=-7 2=0.25 3=?\n");
	/* no values (a uprobe): the features are absent, hence missing */
	n = ann_format_call(line, sizeof(line), &p, 1, 0, &d, NULL, NULL);
	line[n] = 0;
	assert_string_equal(line, "C 3 1 0 time=1234.567 mem=4096 wait=0.005 cs=2\n");
	/* too small a buffer: cut, but still one line */
	n = ann_format_call(line, 16, &p, 1, 0, &d, values, NULL);
	assert_int_equal(n, 16);
	assert_int_equal(line[15], '\n');
}

/*
 * Branch outcomes (--branches): T/N in order from the bits, `+N` past the
 * first ANN_BR_KEPT, absent when the branch did not run or is not armed, `?`
 * for every armed branch when the call's outcomes are unknown.
 */
static void format_branch_outcomes(void **state)
{
	struct ann_branch br[4] = {
	    {.armed = true}, {.armed = true}, {.armed = false}, {.armed = true}};
	struct ann_probe p = {
	    .symbol = 1, .n_features = 2, .branches = br, .n_branches = 4, .n_armed = 3};
	struct ann_metrics_snapshot d = {{0}};
	double values[2] = {5, 6};
	/* count, bits per branch: TNT; 70 outcomes all taken; unarmed; did not run */
	uint64_t outcomes[8] = {3, 0x5, 70, ~0ull, 1, 1, 0, 0};
	char line[512], want[512];
	size_t n;

	(void)state;
	ann_plan.metrics = 0;
	n = ann_format_call(line, sizeof(line), &p, 9, 0, &d, values, outcomes);
	line[n] = 0;
	snprintf(want, sizeof(want), "C 1 9 0 0=5 1=6 2=TNT 3=%.64s+6\n",
		 "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT");
	assert_string_equal(line, want);
	n = ann_format_call(line, sizeof(line), &p, 9, 0, &d, values, NULL);
	line[n] = 0;
	assert_string_equal(line, "C 1 9 0 0=5 1=6 2=? 3=? 5=?\n");
	p.n_armed = 0; /* --branches off: nothing */
	n = ann_format_call(line, sizeof(line), &p, 9, 0, &d, values, outcomes);
	line[n] = 0;
	assert_string_equal(line, "C 1 9 0 0=5 1=6\n");
}

static void ids_are_unique_and_positive(void **state)
{
	uint64_t a, b;

	(void)state;
	me->slot = 7;
	a = ann_next_id();
	b = ann_next_id();
	assert_true(a > 0 && b == a + 1);
	assert_int_equal((a >> 32) & 0xffff, 7);
	ann_ids_reseed(); /* a forked child: a new nonce, ids stay > 0 */
	assert_true(ann_next_id() > 0);
}

static void whole_lines_through_the_buffer(void **state)
{
	struct ann_probe p = {.symbol = 0};
	char line[64];
	size_t total = 0;
	const char *out;
	int lines = 0;

	(void)state;
	ann_plan.metrics = 0;
	/* more than the 64 KiB buffer holds: flushed when full, the rest at the end */
	for (int i = 0; i < 10000; i++) {
		int n = snprintf(line, sizeof(line), "C 0 %d 0\n", i + 1);

		ann_output_call(&p, (uint64_t)i + 1, -1, line, (size_t)n);
		total += (size_t)n;
	}
	assert_true(strlen(slurp()) > 0 && strlen(slurp()) < total);
	ann_output_flush_all();
	out = slurp();
	assert_int_equal(strlen(out), total);
	for (const char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 10000);
	assert_int_equal(out[strlen(out) - 1], '\n');
}

static void reservoir_per_period(void **state)
{
	struct ann_probe *p;
	int sampled = 0, first[5];
	char line[64];
	const char *out;
	int lines = 0;

	(void)state;
	ann_plan.rate_n = 5;
	ann_plan.period_ns = 1000;
	ann_plan.n_probes = 1;
	ann_plan.probes = calloc(1, sizeof(*ann_plan.probes));
	p = &ann_plan.probes[0];
	p->name = strdup("f");
	assert_int_equal(ann_reservoirs_init(), 0);
	me->rng = 12345;
	/* the first five calls of a period take the five slots, in order */
	for (int i = 0; i < 5; i++) {
		first[i] = ann_sample_decide(p, 100);
		assert_int_equal(first[i], i);
	}
	/* later ones: a slot in range, or none; every call is counted */
	for (int k = 6; k <= 1000; k++) {
		int slot = ann_sample_decide(p, 100);

		assert_true(slot >= -1 && slot < 5);
		sampled += slot >= 0;
		if (slot >= 0) {
			int n = snprintf(line, sizeof(line), "C 0 %d 0\n", k);

			ann_reservoir_claim(p, slot, (uint64_t)k);
			ann_output_call(p, (uint64_t)k, slot, line, (size_t)n);
		}
	}
	/* about 5 (ln 1000 - ln 5) = 26.5 replacements are expected; far from 0 and from all */
	assert_true(sampled > 5 && sampled < 200);
	assert_int_equal(strlen(slurp()), 0); /* nothing written before the period ends */
	/* the period ends: its reservoir (5 lines) is written, the calls counted */
	assert_true(ann_sample_decide(p, 100 + 1000 + 1) == 0);
	out = slurp();
	for (const char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 5);
	assert_int_equal(p->calls, 1000);
	ann_output_flush_all();
	assert_int_equal(p->calls, 1001);
}

struct worker {
	struct ann_thread *t;
	int n;
};

/*
 * The first call id of a thread slot: the slot in the high half, and low
 * digits 10000 short of a multiple of 10^8, so that the ids' decimal text
 * carries past its last eight digits (output.c's id cache) in mid-run.
 */
static uint64_t first_id(uint64_t slot)
{
	uint64_t base = slot << 32;

	return base + (100000000u - 10000u + 100000000u - base % 100000000u) % 100000000u;
}

/* n calls of two probes (one with two features) on a thread of its own */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	me = w->t;
	for (int i = 0; i < w->n; i++) {
		struct ann_metrics_snapshot d = {{0}};
		double v[2] = {i, 0.5};
		uint64_t id = first_id(w->t->slot) + (uint64_t)i;

		d.v[ANN_TIME] = 1000 + (uint64_t)i;
		ann_output_record(me, &ann_plan.probes[i % 2], id, i % 2 ? id - 1 : 0, -1, &d, v,
				  NULL);
	}
	return NULL;
}

/*
 * Every call kept on three threads at once, each filling its two record
 * buffers about a dozen times: each call's line once, whole, with its values,
 * whether the writer thread formats the full buffers (with_writer) or each
 * thread its own.
 */
static void records_from_threads(bool with_writer)
{
	enum { THREADS = 3, N = 20000 };
	static char seen[THREADS][N];
	struct worker w[THREADS];
	pthread_t th[THREADS];
	const char *out, *c;
	int lines = 0;

	ann_plan.metrics = ANN_METRIC_BIT(ANN_TIME);
	ann_plan.rate_n = 0;
	ann_plan.n_probes = 2;
	ann_plan.probes = calloc(2, sizeof(*ann_plan.probes));
	ann_plan.probes[0] = (struct ann_probe){.symbol = 4, .n_features = 2, .name = strdup("f")};
	ann_plan.probes[1] = (struct ann_probe){.symbol = 5, .name = strdup("g")};
	assert_int_equal(ann_reservoirs_init(), 0);
	if (with_writer)
		ann_output_start_writer();
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.t = calloc(1, sizeof(struct ann_thread)), .n = N};
		assert_non_null(w[i].t);
		w[i].t->slot = (uint32_t)i + 1;
		ann_threads[i + 1] = w[i].t;
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* most is written by now: all but the last two buffers of each thread */
	assert_true(strlen(slurp()) > 0);
	ann_output_stop_writer();
	ann_output_flush_all();
	out = slurp();
	for (c = out; *c; c = strchr(c, '\n') + 1) {
		unsigned sym;
		unsigned long long id, parent;
		double us;
		int used = 0, k;
		char want[64], one[128];
		size_t len = (size_t)(strchr(c, '\n') - c) + 1;

		/* sscanf on one line: on the whole output it would measure it every time */
		assert_true(len < sizeof(one));
		memcpy(one, c, len);
		one[len] = 0;
		assert_int_equal(
		    sscanf(one, "C %u %llu %llu time=%lf%n", &sym, &id, &parent, &us, &used), 4);
		k = (int)(id - first_id(id >> 32));
		assert_true(id >> 32 >= 1 && id >> 32 <= THREADS && k >= 0 && k < N);
		assert_int_equal(seen[(id >> 32) - 1][k]++, 0);
		/* a thread's lines in the order its calls ended */
		assert_true(k == 0 || seen[(id >> 32) - 1][k - 1]);
		assert_int_equal(sym, k % 2 ? 5 : 4);
		assert_true(parent == (k % 2 ? id - 1 : 0));
		assert_true(fabs(us - (1000 + k) / 1000.0) < 1e-9);
		if (k % 2)
			strcpy(want, "\n");
		else
			snprintf(want, sizeof(want), " 0=%d 1=0.5\n", k);
		assert_string_equal(one + used, want);
		lines++;
	}
	assert_int_equal(lines, THREADS * N);
	assert_int_equal(ann_plan.probes[0].recorded + ann_plan.probes[1].recorded, THREADS * N);
	assert_int_equal(ann_plan.probes[0].sampled, THREADS * N / 2);
	for (int i = 0; i < THREADS; i++) {
		ann_threads[i + 1] = NULL;
		free(w[i].t);
	}
}

static void records_formatted_by_their_threads(void **state)
{
	(void)state;
	records_from_threads(false);
}

static void records_formatted_by_the_writer(void **state)
{
	(void)state;
	records_from_threads(true);
}

/* The summary states the calibrated costs first, then a line per probe. */
static void summary_states_probe_costs(void **state)
{
	static struct ann_probe probes[1] = {{.symbol = 2, .calls = 9, .recorded = 4}};
	const char *text;

	(void)state;
	probes[0].name = strdup("f");
	ann_plan.probes = probes;
	ann_plan.n_probes = 1;
	ann_output_summary();
	text = slurp();
	assert_non_null(strstr(text, "# probe-cost pid="));
	assert_non_null(strstr(text, " unmeasured-ns=48 inside-ns=55 skip-ns=31\n# probe 2 "));
	free(probes[0].name);
	ann_plan.probes = NULL;
	ann_plan.n_probes = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(format_units_and_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(format_branch_outcomes, setup, teardown),
	    cmocka_unit_test_setup_teardown(ids_are_unique_and_positive, setup, teardown),
	    cmocka_unit_test_setup_teardown(whole_lines_through_the_buffer, setup, teardown),
	    cmocka_unit_test_setup_teardown(reservoir_per_period, setup, teardown),
	    cmocka_unit_test_setup_teardown(records_formatted_by_their_threads, setup, teardown),
	    cmocka_unit_test_setup_teardown(records_formatted_by_the_writer, setup, teardown),
	    cmocka_unit_test_setup_teardown(summary_states_probe_costs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
