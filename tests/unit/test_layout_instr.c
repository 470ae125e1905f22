/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `instr` replay (src/layout/instr.c, layout/runtime/instr_format.h):
 * this test binary carries its own site and member tables, in the sections
 * the GCC plugin writes, and replays hand-made traces against
 * /proc/self/exe. The cache model's answers are counted by hand: cold
 * misses, hits on a line already loaded, and false sharing between two
 * threads writing two fields of one line in turns (records written thread
 * by thread, merged by TSC). Then the errors (not a trace, another build,
 * not an ELF, no tables), a cut trace, records naming no site, a struct the
 * record cannot hold, and a fuzz loop of random edits: an error or a
 * record, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuzz_edit.h"
#include "layout/layout.h"
#include "layout/runtime/instr_format.h"

/* struct pair { long a; long pad[7]; long b; }: a and b on different lines */
/* struct shared { long x; long y; }: one line */
/* struct bits { int f : 3; }: has bit-fields, cannot be recorded */
#define SITE(s, f, off, sz, fl, idx)                                                               \
	{                                                                                          \
		.struct_name = s, .field_name = f, .function = "fn_" f ".constprop.0",             \
		.file = "t.c", .line = 1, .offset = off, .size = sz, .flags = fl,                  \
		.field_index = idx                                                                 \
	}
__attribute__((section(LAYOUT_INSTR_SITES), used,
	       aligned(8))) static const struct layout_instr_site sites[] = {
    SITE("pair", "a", 0, 8, 0, 0),
    SITE("pair", "b", 64, 8, 0, 2),
    SITE("shared", "x", 0, 8, LAYOUT_INSTR_SITE_WRITE, 0),
    SITE("shared", "y", 8, 8, LAYOUT_INSTR_SITE_WRITE, 1),
    SITE("bits", "f", 0, 4, 0, 0),
};

#define FIELD(s, n, t, arr, off, sz, al, fl, idx)                                                  \
	{                                                                                          \
		.struct_name = s, .name = n, .type = t, .array = arr, .offset = off, .size = sz,   \
		.align = al, .flags = fl, .index = idx                                             \
	}
__attribute__((section(LAYOUT_INSTR_FIELDS), used,
	       aligned(8))) static const struct layout_instr_field fields[] = {
    FIELD("pair", "a", "long int", "", 0, 8, 8, 0, 0),
    FIELD("pair", "pad", "long int", "[7]", 8, 56, 8, 0, 1),
    FIELD("pair", "b", "long int", "", 64, 8, 8, 0, 2),
    FIELD("shared", "x", "long int", "", 0, 8, 8, 0, 0),
    FIELD("shared", "y", "long int", "", 8, 8, 8, 0, 1),
    /* a second unit's copy of pair: the same, kept once */
    FIELD("pair", "a", "long int", "", 0, 8, 8, 0, 0),
    FIELD("pair", "pad", "long int", "[7]", 8, 56, 8, 0, 1),
    FIELD("pair", "b", "long int", "", 64, 8, 8, 0, 2),
    FIELD("bits", "f", "int", "", 0, 4, 4, LAYOUT_INSTR_FIELD_UNSUPPORTED, 0),
};

#define T100 100u
#define T200 200u

static char trace_path[4096];

static struct layout_trace_header header(void)
{
	struct layout_trace_header h = {
	    .version = LAYOUT_TRACE_VERSION,
	    .record_size = sizeof(struct layout_trace_record),
	    .period = 1,
	    .burst = 1,
	    .pid = 1,
	    .sites = sizeof(sites) / sizeof(sites[0]),
	};

	memcpy(h.magic, LAYOUT_TRACE_MAGIC, sizeof(h.magic));
	return h;
}

static void write_trace(const struct layout_trace_header *h, const struct layout_trace_record *r,
			size_t n, size_t cut)
{
	FILE *f = fopen(trace_path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(h, sizeof(*h), 1, f), 1);
	if (n)
		assert_int_equal(fwrite(r, sizeof(*r), n, f), n);
	fclose(f);
	if (cut)
		assert_int_equal(truncate(trace_path, (off_t)(sizeof(*h) + n * sizeof(*r) - cut)),
				 0);
}

/*
 * Thread 100 reads pair.a (cold miss), pair.b (cold miss, the next line),
 * pair.a (hit); then 100 and 200 write shared.x and shared.y in turns:
 * x cold, y cold (core 1 never held the line), x and y again: each finds
 * the line taken by the other core's write to other bytes, false sharing.
 * Thread 200's records come first in the file: only the TSC orders them.
 */
static const struct layout_trace_record designed[] = {
    {.addr = 0x20008, .pc = 0x1400, .time = 20, .site = 3, .tid = T200},
    {.addr = 0x20008, .pc = 0x1400, .time = 40, .site = 3, .tid = T200},
    {.addr = 0x10000, .pc = 0x1100, .time = 1, .site = 0, .tid = T100},
    {.addr = 0x10040, .pc = 0x1200, .time = 2, .site = 1, .tid = T100},
    {.addr = 0x10000, .pc = 0x1100, .time = 3, .site = 0, .tid = T100},
    {.addr = 0x20000, .pc = 0x1300, .time = 10, .site = 2, .tid = T100},
    {.addr = 0x20000, .pc = 0x1300, .time = 30, .site = 2, .tid = T100},
    {.addr = 0x30000, .pc = 0x1500, .time = 50, .site = 4, .tid = T100},
};
#define N_DESIGNED (sizeof(designed) / sizeof(designed[0]))

/* Replay into a string; 0 or -1 with err. */
static int replay(const struct layout_instr_options *o, char **text, struct layout_instr_summary *s,
		  char *err, size_t err_size)
{
	size_t size = 0;
	FILE *out = open_memstream(text, &size);
	int rc;

	assert_non_null(out);
	rc = layout_instr_collect(trace_path, "/proc/self/exe", out, o, s, err, err_size);
	fclose(out);
	return rc;
}

static uint64_t sample_count(const struct layout_record *rec, uint64_t pc, uint32_t tid)
{
	uint64_t n = 0;

	for (size_t i = 0; i < rec->n_samples; i++)
		if (rec->samples[i].pc == pc && rec->samples[i].tid == tid)
			n += rec->samples[i].count;
	return n;
}

static void test_designed_trace(void **state)
{
	struct layout_instr_options o;
	struct layout_instr_summary s;
	struct layout_trace_header h = header();
	struct layout_record rec;
	char err[512], *text = NULL;
	FILE *in;

	(void)state;
	layout_instr_options_default(&o);
	write_trace(&h, designed, N_DESIGNED, 0);
	assert_int_equal(replay(&o, &text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.records, N_DESIGNED);
	assert_int_equal(s.threads, 2);
	assert_int_equal(s.unrecorded_accesses, 1); /* the bit-field struct */
	assert_int_equal(s.model.false_sharing_miss, 2);
	assert_int_equal(s.model.cold_miss, 5);
	assert_non_null(strstr(text, "# model: accesses 8 "));
	assert_true(strncmp(text, "lever-layout-record\t2\nprogram\t/", 30) == 0);
	assert_non_null(strstr(text, "\nsource\tinstr\tmodel-l1\n"));
	assert_non_null(strstr(text, "\nstat\tmodel-false-sharing-miss\t2\n"));
	assert_non_null(strstr(text, "\nstat\tunrecordable-struct\t1\n"));
	assert_null(strstr(text, "struct\tbits")); /* not recordable */
	assert_null(strstr(text, "\nperiod"));	   /* every access was logged */
	assert_non_null(strstr(text, "field\tpad\tlong int\t[7]\t8\t56\t8\n"));
	assert_non_null(strstr(text, "ref\t0x1300\tshared\tx\tw\n"));

	in = fmemopen(text, strlen(text), "r");
	assert_int_equal(layout_record_read(in, "instr", &rec, err, sizeof(err)), 0);
	fclose(in);
	assert_int_equal(rec.program.n_structs, 2); /* pair once, shared */
	assert_string_equal(rec.source, "instr");
	assert_int_equal(layout_record_stat(&rec, "samples"), N_DESIGNED);
	assert_int_equal(layout_record_stat(&rec, "model-coherence-miss"), 2);
	assert_int_equal(rec.program.n_refs, 4);
	assert_int_equal(sample_count(&rec, 0x1100, T100), 1); /* a: cold, then a hit */
	assert_int_equal(sample_count(&rec, 0x1200, T100), 1); /* b: cold */
	assert_int_equal(sample_count(&rec, 0x1300, T100), 2); /* x: cold, false sharing */
	assert_int_equal(sample_count(&rec, 0x1400, T200), 2); /* y: cold, false sharing */
	assert_int_equal(sample_count(&rec, 0x1300, T200), 0);
	layout_record_free(&rec);
	free(text);

	/* on one core, the two threads share L1: no coherence at all */
	o.cache.cores = 1;
	text = NULL;
	assert_int_equal(replay(&o, &text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.model.coherence_miss, 0);
	assert_non_null(strstr(text, "sample\t0x1300\t1\t100\n"));
	free(text);
}

static void test_sampled_period(void **state)
{
	struct layout_instr_options o;
	struct layout_instr_summary s;
	struct layout_trace_header h = header();
	char err[512], *text = NULL;

	(void)state;
	layout_instr_options_default(&o);
	o.event = LAYOUT_INSTR_EVENT_L1_LOAD;
	h.period = 65536;
	h.burst = 1024;
	write_trace(&h, designed, N_DESIGNED, 0);
	assert_int_equal(replay(&o, &text, &s, err, sizeof(err)), 0);
	assert_non_null(strstr(text, "\nperiod\t64\n"));
	/* loads only: the writes to shared give no samples */
	assert_null(strstr(text, "sample\t0x1300"));
	assert_non_null(strstr(text, "sample\t0x1100\t1\t100\n"));
	free(text);
}

static void test_cut_and_bad_records(void **state)
{
	struct layout_instr_options o;
	struct layout_instr_summary s;
	struct layout_trace_header h = header();
	struct layout_trace_record r[N_DESIGNED + 1];
	char err[512], *text = NULL;

	(void)state;
	layout_instr_options_default(&o);
	memcpy(r, designed, sizeof(designed));
	r[N_DESIGNED] = (struct layout_trace_record){.site = 99, .tid = T100, .time = 60};
	write_trace(&h, r, N_DESIGNED + 1, 0);
	assert_int_equal(replay(&o, &text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.bad_sites, 1);
	free(text);

	/* a crash in the middle of the last record: the whole ones count */
	text = NULL;
	write_trace(&h, designed, N_DESIGNED, 5);
	assert_int_equal(replay(&o, &text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.records, N_DESIGNED - 1);
	assert_int_equal(s.partial_bytes, sizeof(struct layout_trace_record) - 5);
	free(text);
}

static void expect_error(const char *binary, const char *what)
{
	struct layout_instr_options o;
	struct layout_instr_summary s;
	char err[512];
	FILE *out = fopen("/dev/null", "w");

	layout_instr_options_default(&o);
	assert_int_equal(layout_instr_collect(trace_path, binary, out, &o, &s, err, sizeof(err)),
			 -1);
	fclose(out);
	if (!strstr(err, what))
		fail_msg("expected '%s' in: %s", what, err);
}

static void test_errors(void **state)
{
	struct layout_trace_header h = header();

	(void)state;
	write_trace(&h, designed, N_DESIGNED, 0);
	expect_error("/nonexistent/program", "No such file");
	expect_error(trace_path, "not an ELF file");
	assert_true(layout_instr_has_sites("/proc/self/exe"));
	assert_false(layout_instr_has_sites(trace_path));

	h.sites = 7;
	write_trace(&h, designed, N_DESIGNED, 0);
	expect_error("/proc/self/exe", "not this build");
	h = header();
	h.version = 2;
	write_trace(&h, designed, N_DESIGNED, 0);
	expect_error("/proc/self/exe", "trace version 2");
	h = header();
	h.magic[0] = 'X';
	write_trace(&h, designed, N_DESIGNED, 0);
	expect_error("/proc/self/exe", "not a lever layout trace");
	write_trace(&h, designed, 0, sizeof(h) - 3);
	expect_error("/proc/self/exe", "not a lever layout trace");
}

/* The truth for static references: sorted, unique, clone suffixes dropped. */
static void test_truth(void **state)
{
	char err[512], *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_int_equal(layout_instr_write_truth("/proc/self/exe", out, err, sizeof(err)), 0);
	fclose(out);
	assert_string_equal(text, "fn_a\tpair\ta\n"
				  "fn_b\tpair\tb\n"
				  "fn_f\tbits\tf\n"
				  "fn_x\tshared\tx\n"
				  "fn_y\tshared\ty\n");
	free(text);
	out = fopen("/dev/null", "w");
	assert_int_equal(layout_instr_write_truth("/nonexistent", out, err, sizeof(err)), -1);
	fclose(out);
	assert_non_null(strstr(err, "/nonexistent"));
}

/* Random edits of a valid trace: a record or an error, never a crash. */
static void test_fuzz(void **state)
{
	struct layout_trace_header h = header();
	const struct fuzz_edits edits = {.insert_weight = 0};
	struct layout_instr_options o;
	struct layout_instr_summary s;
	char good[sizeof(h) + sizeof(designed)], buf[sizeof(good) + 64], err[512];
	struct rng rng;

	(void)state;
	layout_instr_options_default(&o);
	memcpy(good, &h, sizeof(h));
	memcpy(good + sizeof(h), designed, sizeof(designed));
	rng_seed(&rng, 17);
	for (int round = 0; round < 300; round++) {
		size_t len = sizeof(good);
		FILE *f, *out;

		memcpy(buf, good, len);
		for (uint64_t k = rng_below(&rng, 4) + 1; k > 0; k--)
			fuzz_edit(&rng, &edits, buf, &len, sizeof(buf));
		f = fopen(trace_path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, len, f), len);
		fclose(f);
		out = fopen("/dev/null", "w");
		if (layout_instr_collect(trace_path, "/proc/self/exe", out, &o, &s, err,
					 sizeof(err)) < 0)
			assert_true(err[0] != '\0');
		fclose(out);
	}
}

static int make_path(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(trace_path, sizeof(trace_path), "%s/test_layout_instr.%d.trace",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	return 0;
}

static int remove_path(void **state)
{
	(void)state;
	unlink(trace_path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_designed_trace),
	    cmocka_unit_test(test_sampled_period),
	    cmocka_unit_test(test_cut_and_bad_records),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_truth),
	    cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, make_path, remove_path);
}
