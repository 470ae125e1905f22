/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * layout_static_write() (src/layout/static*.c, dwarf*.c), the API the
 * collectors of `lever layout record` call: its output, behind a header
 * line, is a record layout_record_read() accepts, whose structs, refs and
 * blocks match the stats; options (one struct, every struct, the cache)
 * and errors. Runs on tests/programs/layout/static_refs.c built by gcc -O2
 * (tests/programs/layout_static.cmake).
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

#include "layout/layout.h"

static char binary[4096];

static int setup(void **state)
{
	const char *dir = getenv("LEVER_TEST_BINARY_DIR");

	snprintf(binary, sizeof(binary), "%s/tests/programs/layout_static/static_refs-gcc-O2",
		 dir ? dir : ".");
	return access(binary, R_OK) == 0 ? 0 : -1;
}

/* Runs layout_static_write into a record and reads it back. */
static int write_and_read(const struct layout_static_options *o, struct layout_static_stats *st,
			  struct layout_record *rec, char **text)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	char err[512];
	int rc;

	assert_non_null(f);
	fprintf(f, "lever-layout-record\t1\n");
	rc = layout_static_write(binary, o, f, st, err, sizeof(err));
	fclose(f);
	if (rc)
		return rc;
	f = fmemopen(*text, len, "r");
	assert_non_null(f);
	rc = layout_record_read(f, "static", rec, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	fclose(f);
	return rc;
}

static const struct layout_struct *find_struct(const struct layout_record *rec, const char *name)
{
	for (size_t i = 0; i < rec->program.n_structs; i++)
		if (strcmp(rec->program.structs[i]->name, name) == 0)
			return rec->program.structs[i];
	return NULL;
}

static void test_record_round_trip(void **state)
{
	struct layout_static_options o = {0};
	struct layout_static_stats st;
	struct layout_record rec;
	const struct layout_struct *node;
	char *text = NULL;

	assert_int_equal(write_and_read(&o, &st, &rec, &text), 0);
	assert_int_equal(rec.program.n_structs, st.structs);
	assert_int_equal(rec.program.n_refs, st.refs);
	assert_int_equal(rec.program.n_blocks, st.blocks);
	assert_int_equal(rec.n_samples, 0);
	assert_true(st.functions >= 30);
	assert_true(st.typed_operands <= st.memory_operands);
	assert_true(st.unsupported >= 1); /* struct timespec, a system header's */
	assert_false(st.from_cache);
	node = find_struct(&rec, "node");
	assert_non_null(node);
	assert_int_equal(node->n_fields, 4);
	assert_string_equal(node->fields[0].name, "next");
	assert_string_equal(node->fields[0].type, "struct node *");
	assert_int_equal(node->fields[1].offset, 8);
	assert_int_equal(node->size, 24);
	/* every reference's pc lies in a block */
	for (size_t i = 0; i < rec.program.n_refs; i++) {
		bool in = false;

		for (size_t b = 0; b < rec.program.n_blocks && !in; b++)
			in = rec.program.refs[i].pc >= rec.program.blocks[b].lo &&
			     rec.program.refs[i].pc <= rec.program.blocks[b].hi;
		assert_true(in);
	}
	layout_record_free(&rec);
	free(text);
}

static void test_one_struct(void **state)
{
	const char *names[] = {"point"};
	struct layout_static_options o = {.structs = names, .n_structs = 1};
	struct layout_static_stats st;
	struct layout_record rec;
	char *text = NULL;

	assert_int_equal(write_and_read(&o, &st, &rec, &text), 0);
	assert_int_equal(rec.program.n_structs, 1);
	assert_string_equal(rec.program.structs[0]->name, "point");
	assert_true(rec.program.n_refs >= 5);
	layout_record_free(&rec);
	free(text);
}

static void test_all_structs(void **state)
{
	struct layout_static_options o = {.all_structs = true};
	struct layout_static_stats st;
	struct layout_record rec;
	char *text = NULL;

	assert_int_equal(write_and_read(&o, &st, &rec, &text), 0);
	/* the program's seven, and with --all-structs the C library's too */
	assert_non_null(find_struct(&rec, "table"));
	assert_non_null(find_struct(&rec, "timespec"));
	layout_record_free(&rec);
	free(text);
}

static void test_cache(void **state)
{
	char dir[] = "/tmp/lever-static-cache-XXXXXX", *a = NULL, *b = NULL;
	struct layout_static_options o = {.cache = true};
	struct layout_static_stats s1, s2;
	struct layout_record rec;

	assert_non_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	assert_int_equal(write_and_read(&o, &s1, &rec, &a), 0);
	layout_record_free(&rec);
	assert_int_equal(write_and_read(&o, &s2, &rec, &b), 0);
	layout_record_free(&rec);
	assert_false(s1.from_cache);
	assert_true(s2.from_cache);
	assert_string_equal(a, b);
	assert_int_equal(s1.refs, s2.refs);
	assert_int_equal(s1.structs, s2.structs);
	assert_int_equal(s1.blocks, s2.blocks);
	assert_int_equal(s1.functions, s2.functions);
	assert_int_equal(s1.unsupported, s2.unsupported);
	free(a);
	free(b);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
	unsetenv("XDG_CACHE_HOME");
}

static void test_errors(void **state)
{
	char err[512];
	const char *names[] = {"no_such_struct"};
	struct layout_static_options o = {.structs = names, .n_structs = 1};
	FILE *f = fopen("/dev/null", "w");

	assert_int_equal(layout_static_write("/nonexistent/x", NULL, f, NULL, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "/nonexistent/x"));
	assert_int_equal(layout_static_write("/proc/self/status", NULL, f, NULL, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "not an ELF file"));
	assert_int_equal(layout_static_write(binary, &o, f, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no_such_struct"));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_record_round_trip),
	    cmocka_unit_test(test_one_struct),
	    cmocka_unit_test(test_all_structs),
	    cmocka_unit_test(test_cache),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
