/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `lever annotate dump` as a library (src/annotate/dump.c): a record read
 * from text, dumped to memory, compared byte for byte. Covers the column
 * union over symbols, missing values (empty / null), a feature named like a
 * metric, RFC 4180 quoting, JSON escaping, numbers that read back exactly,
 * symbol selection and its errors, and a write error.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "annotate/annotate.h"

static const char record_text[] = "lever-annotate-record 1 test\n"
				  "S 0 f(int a, int b)\n"
				  "F 0 0 integer a\n"
				  "F 0 1 integer time\n"
				  "C 0 18446744073709551615 0 time=1.5 mem=0.1 0=3 1=?\n"
				  "C 0 2 18446744073709551615 time=2 0=-4 1=7\n"
				  "S 1 g \"quoted\"\n"
				  "F 1 0 string-length s\n"
				  "F 1 1 integer a\n"
				  "C 1 3 2 cs=5 0=12 1=1e300\n";

static struct annotate_record rec;

static int setup(void **state)
{
	char err[256];

	(void)state;
	if (annotate_record_read_buffer("t.rec", record_text, sizeof(record_text) - 1, &rec, err,
					sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	annotate_record_free(&rec);
	return 0;
}

/* The dump as a string (free it), and the return code in *rc. */
static char *dump(const char *const *names, size_t n, enum annotate_dump_format fmt, int *rc,
		  const char **missing)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = annotate_dump(f, &rec, names, n, fmt, missing);
	fclose(f);
	return buf;
}

static void test_csv_all(void **state)
{
	const char *missing = NULL;
	int rc;
	char *out = dump(NULL, 0, ANNOTATE_DUMP_CSV, &rc, &missing);

	(void)state;
	assert_int_equal(rc, 0);
	assert_string_equal(out, "symbol,id,parent,time,mem,cs,a,feature:time,s\n"
				 "\"f(int a, int b)\",18446744073709551615,0,1.5,0.1,,3,,\n"
				 "\"f(int a, int b)\",2,18446744073709551615,2,,,-4,7,\n"
				 "\"g \"\"quoted\"\"\",3,2,,,5,1e+300,,12\n");
	free(out);
}

static void test_json_selected(void **state)
{
	const char *names[] = {"g \"quoted\""};
	const char *missing = NULL;
	int rc;
	char *out = dump(names, 1, ANNOTATE_DUMP_JSON, &rc, &missing);

	(void)state;
	assert_int_equal(rc, 0);
	assert_string_equal(out, "[\n{\"symbol\": \"g \\\"quoted\\\"\", \"id\": 3, \"parent\": 2, "
				 "\"cs\": 5, \"s\": 12, \"a\": 1e+300}\n]\n");
	free(out);
}

/* A branch feature's cells are its outcome strings as recorded. */
static void test_branch_strings(void **state)
{
	static const char text[] = "lever-annotate-record 1\nS 0 f\nF 0 0 integer a\n"
				   "F 0 1 branch f+0x6\nC 0 1 0 0=3 1=TNT\nC 0 2 0 0=4\n"
				   "C 0 3 0 0=5 1=N+2\n";
	struct annotate_record r;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(
	    annotate_record_read_buffer("b.rec", text, sizeof(text) - 1, &r, err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(annotate_dump(f, &r, NULL, 0, ANNOTATE_DUMP_CSV, NULL), 0);
	fclose(f);
	assert_string_equal(buf, "symbol,id,parent,a,f+0x6\nf,1,0,3,TNT\nf,2,0,4,\nf,3,0,5,N+2\n");
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(annotate_dump(f, &r, NULL, 0, ANNOTATE_DUMP_JSON, NULL), 0);
	fclose(f);
	assert_string_equal(buf,
			    "[\n{\"symbol\": \"f\", \"id\": 1, \"parent\": 0, \"a\": 3, "
			    "\"f+0x6\": \"TNT\"},\n{\"symbol\": \"f\", \"id\": 2, \"parent\": 0, "
			    "\"a\": 4, \"f+0x6\": null},\n{\"symbol\": \"f\", \"id\": 3, "
			    "\"parent\": 0, \"a\": 5, \"f+0x6\": \"N+2\"}\n]\n");
	free(buf);
	annotate_record_free(&r);
}

/* By the name before '(' too, each symbol once however often it is named. */
static void test_selection_by_short_name(void **state)
{
	const char *names[] = {"f", "f(int a, int b)"};
	const char *missing = NULL;
	int rc;
	char *out = dump(names, 2, ANNOTATE_DUMP_JSON, &rc, &missing);

	(void)state;
	assert_int_equal(rc, 0);
	assert_string_equal(out,
			    "[\n{\"symbol\": \"f(int a, int b)\", \"id\": 18446744073709551615, "
			    "\"parent\": 0, \"time\": 1.5, \"mem\": 0.1, \"a\": 3, "
			    "\"feature:time\": null},\n"
			    "{\"symbol\": \"f(int a, int b)\", \"id\": 2, \"parent\": "
			    "18446744073709551615, \"time\": 2, \"mem\": null, \"a\": -4, "
			    "\"feature:time\": 7}\n]\n");
	free(out);
}

static void test_unknown_symbol(void **state)
{
	const char *names[] = {"f", "nope"};
	const char *missing = NULL;
	int rc;
	char *out = dump(names, 2, ANNOTATE_DUMP_CSV, &rc, &missing);

	(void)state;
	assert_int_equal(rc, -ENOENT);
	assert_string_equal(missing, "nope");
	assert_string_equal(out, "");
	free(out);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	const char *missing = NULL;

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(annotate_dump(f, &rec, NULL, 0, ANNOTATE_DUMP_CSV, &missing), -ENOSPC);
	fclose(f);
}

/* An empty record: the header only, and an empty JSON array. */
static void test_empty_record(void **state)
{
	struct annotate_record saved = rec;
	const char *missing = NULL;
	int rc;
	char *out;

	(void)state;
	rec.n_symbols = 0;
	out = dump(NULL, 0, ANNOTATE_DUMP_CSV, &rc, &missing);
	assert_string_equal(out, "symbol,id,parent\n");
	free(out);
	out = dump(NULL, 0, ANNOTATE_DUMP_JSON, &rc, &missing);
	assert_string_equal(out, "[]\n");
	free(out);
	rec = saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_csv_all),	   cmocka_unit_test(test_json_selected),
	    cmocka_unit_test(test_branch_strings), cmocka_unit_test(test_selection_by_short_name),
	    cmocka_unit_test(test_unknown_symbol), cmocka_unit_test(test_write_error),
	    cmocka_unit_test(test_empty_record),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
