/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/layout record reader (doc/formats/layout-record.md): a record of the
 * thesis's Table 3.2 read and analysed end to end (→ d, a, c, b, 145),
 * every kind of error reported with file and line, and a fuzz loop of
 * random edits that must give a record or an error, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_edit.h"
#include "layout/layout.h"

static const char table_3_2[] = "# thesis Table 3.2, one block per reference\n"
				"lever-layout-record\t1\n"
				"struct\tfoo\n"
				"field\ta\tlong long\t-\t0\t8\t8\n"
				"field\tb\tstruct bar *\t-\t8\t8\t8\n"
				"field\tc\tuint64_t\t-\t16\t8\t8\n"
				"field\td\tint\t-\t24\t4\t4\n"
				"\n"
				"ref\t0x401000\tfoo\ta\tr\n"
				"ref\t0x401010\tfoo\tb\tr\n"
				"ref\t0x401020\tfoo\tc\tr\n"
				"ref\t0x401030\tfoo\td\tw\n"
				"block\t0x401000\t0x401008\n"
				"block\t0x401010\t0x401018\n"
				"sample\t0x401000\t111\t1\n"
				"sample\t0x401010\t15\t1\n"
				"sample\t0x401020\t19\t1\n"
				"sample\t0x401030\t128\n"
				"sample\t0x402000\t7\n"
				"period\t16384\n";

static int read_text(const char *text, size_t len, struct layout_record *rec, char *err,
		     size_t err_size)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int rc;

	assert_non_null(f);
	rc = layout_record_read(f, "t.record", rec, err, err_size);
	fclose(f);
	return rc;
}

static void test_read_and_analyse_table_3_2(void **state)
{
	struct layout_record rec;
	struct layout_params params;
	struct layout_suggestion sg;
	char err[256] = "";
	const struct layout_struct *s;

	(void)state;
	assert_int_equal(read_text(table_3_2, strlen(table_3_2), &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.program.n_structs, 1);
	assert_int_equal(rec.program.n_refs, 4);
	assert_int_equal(rec.program.n_blocks, 2);
	assert_int_equal(rec.n_samples, 5);
	assert_int_equal(rec.period, 16384);
	s = rec.program.structs[0];
	assert_int_equal(s->size, 32);
	assert_true(rec.program.refs[3].write);
	assert_int_equal(rec.samples[0].tid, 1);
	assert_int_equal(
	    layout_annotate(&rec.program, rec.samples, rec.n_samples, LAYOUT_ADJUST_THESIS), 0);
	assert_int_equal(rec.program.unattributed, 7);
	layout_params_default(&params);
	assert_int_equal(layout_suggest(s, &params, &sg), 0);
	assert_int_equal(sg.saved, 145);
	assert_string_equal(s->fields[sg.order[0]].name, "d");
	layout_suggestion_clear(&sg);
	layout_record_free(&rec);
}

static void expect_error(const char *text, const char *message)
{
	struct layout_record rec;
	char err[256] = "";

	assert_int_equal(read_text(text, strlen(text), &rec, err, sizeof(err)), -1);
	if (!strstr(err, message))
		fail_msg("expected '%s' in '%s'", message, err);
	assert_int_equal(rec.program.n_structs, 0);
	assert_null(rec.samples);
}

#define HEAD "lever-layout-record\t1\n"
#define FOO  HEAD "struct\tfoo\nfield\ta\tlong\t-\t0\t8\t8\n"

static void test_errors_name_file_and_line(void **state)
{
	(void)state;
	expect_error("", "t.record:0: empty file");
	expect_error("hello\n", "t.record:1: not a layout record");
	expect_error("lever-layout-record\t2\n", "t.record:1: layout record version 2");
	expect_error(HEAD "bogus\t1\n", "t.record:2: unknown record 'bogus'");
	expect_error(HEAD "field\ta\tlong\t-\t0\t8\t8\n", "t.record:2: field outside a struct");
	expect_error(HEAD "struct\tfoo\nstruct\tbar\n", "t.record:3: struct foo has no fields");
	expect_error(HEAD "struct\tfoo\n", "struct foo has no fields");
	expect_error(FOO "struct\tfoo\n", "t.record:4: struct foo defined twice");
	expect_error(FOO "field\ta\tlong\t-\t8\t8\t8\n", "field a defined twice");
	expect_error(FOO "field\tb\tint\t-\t9\t4\t4\n", "t.record:4: field b: offset 9");
	expect_error(FOO "field\tb\tint\t-\t8\t4\t3\n", "field b: offset 8, size 4, align 3");
	expect_error(FOO "field\tb\tint\t-\t8\t4\t128\n", "align: '128' is not a number up to 64");
	expect_error(FOO "field\tb\tint\t-\t8\t-4\t4\n", "size: '-4' is not a number");
	expect_error(FOO "field\tb\tint\t-\t8\t4\t4\tfrozen\n", "unknown field flag 'frozen'");
	expect_error(FOO "field\tb\tchar\t[]\t8\t1\t1\n", "field b");
	expect_error(FOO "ref\t0x10\tbar\ta\tr\n", "t.record:4: ref to undefined struct bar");
	expect_error(FOO "ref\t0x10\tfoo\tz\tr\n", "struct foo has no field z");
	expect_error(FOO "ref\t0x10\tfoo\ta\tx\n", "access 'x' is neither r nor w");
	expect_error(FOO "ref\t0x10\tfoo\ta\n", "expected: ref");
	expect_error(FOO "block\t0x20\t0x10\n", "block ends (0x10) before it starts (0x20)");
	expect_error(FOO "sample\t0x10\tmany\n", "count: 'many' is not a number");
	expect_error(FOO "period\t0\n", "t.record:4: period 0");
	expect_error(FOO "period\t2\nperiod\t2\n", "t.record:5: period given twice");
	expect_error(FOO "sample\t0x10\t1\t99999999999\n", "tid: '99999999999'");
	expect_error(FOO "sample\t0x10\t1\t2\t3\t4\t5\t6\t7\t8\t9\n", "too many columns");
}

static unsigned round_robin;

static void analyse_and_print(const struct layout_record *rec)
{
	struct layout_params params;
	struct layout_suggestion sg;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	layout_params_default(&params);
	params.pack_holes = round_robin++ % 2;
	for (size_t i = 0; i < rec->program.n_structs; i++) {
		const struct layout_struct *s = rec->program.structs[i];

		assert_int_equal(layout_suggest(s, &params, &sg), 0);
		layout_print_annotated(out, s);
		layout_print_false_sharing(out, s);
		layout_print_suggestion(out, &sg);
		layout_print_ranking(out, &sg, 1, rec->period);
		layout_write_json(out, &sg, 1, rec->period);
		layout_suggestion_clear(&sg);
	}
	fclose(out);
	free(text);
}

static void test_fuzz_never_crashes(void **state)
{
	static const char *const tokens[] = {"\t",     "\n",	"struct", "field", "ref",
					     "sample", "block", "[]",	  "-",	   "0x",
					     "64",     "foo",	"pinned"};
	const struct fuzz_edits edits = {.alphabet = NULL,
					 .tokens = tokens,
					 .n_tokens = sizeof(tokens) / sizeof(tokens[0]),
					 .insert_weight = 2};
	char buf[4096];
	struct rng r;
	unsigned ok = 0, failed = 0;

	(void)state;
	rng_seed(&r, 17);
	for (int round = 0; round < 3000; round++) {
		size_t len = strlen(table_3_2);
		struct layout_record rec;
		char err[256];

		memcpy(buf, table_3_2, len);
		for (uint64_t k = rng_below(&r, 4) + 1; k > 0; k--)
			fuzz_edit(&r, &edits, buf, &len, sizeof(buf));
		if (read_text(buf, len, &rec, err, sizeof(err)) == 0) {
			/* whatever was accepted must analyse and print without harm */
			assert_int_equal(layout_annotate(&rec.program, rec.samples, rec.n_samples,
							 LAYOUT_ADJUST_THESIS),
					 0);
			analyse_and_print(&rec);
			layout_record_free(&rec);
			ok++;
		} else {
			assert_non_null(strstr(err, "t.record:"));
			failed++;
		}
	}
	/* both outcomes occur, so the loop exercised the reader's paths */
	assert_true(ok > 0);
	assert_true(failed > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_and_analyse_table_3_2),
	    cmocka_unit_test(test_errors_name_file_and_line),
	    cmocka_unit_test(test_fuzz_never_crashes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
