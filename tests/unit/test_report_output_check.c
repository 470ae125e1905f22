/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report_output_check (src/report/output_check.c): a report file never
 * replaces one of the command's inputs (by device and inode: another name or
 * a hard link is the same file), and replaces an existing causal profile or
 * samples file only with force; reports, new files and "-" are fine.
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

#include "report/report.h"

static char dir[64];
static char err[512];

static const char *path_in(const char *name)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_in(name), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int check(const char *out, const char *input, bool force)
{
	const char *inputs[] = {input};

	err[0] = '\0';
	return report_output_check(out, inputs, input ? 1 : 0, force, err, sizeof(err));
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/lever-output-check-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_never_over_an_input(void **state)
{
	char in[128], link_path[128];

	write_file("p.coz", "startup\ttime=1\n");
	strcpy(in, path_in("p.coz"));
	strcpy(link_path, path_in("same.html"));
	assert_int_equal(check(in, in, false), -1);
	assert_non_null(strstr(err, "is also an input"));
	/* not even with force, and not under another name */
	assert_int_equal(check(in, in, true), -1);
	assert_int_equal(link(in, link_path), 0);
	assert_int_equal(check(link_path, in, true), -1);
	assert_non_null(strstr(err, "same.html is also an input"));
}

static void test_existing_data_needs_force(void **state)
{
	char out[128];

	write_file("other.coz", "\nexperiment\tselected=a.c:1\tspeedup=0.00\tduration=1\n");
	strcpy(out, path_in("other.coz"));
	assert_int_equal(check(out, NULL, false), -1);
	assert_non_null(strstr(err, "holds a causal profile"));
	assert_non_null(strstr(err, "--force"));
	assert_int_equal(check(out, NULL, true), 0);

	write_file("coz.jsonl", "{\"type\":\"startup\",\"time\":1}\n");
	assert_int_equal(check(path_in("coz.jsonl"), NULL, false), -1);

	write_file("times.txt", "# seconds\n1.25\n\n1.5e0\n 2 \n");
	strcpy(out, path_in("times.txt"));
	assert_int_equal(check(out, NULL, false), -1);
	assert_non_null(strstr(err, "holds samples"));
	assert_int_equal(check(out, NULL, true), 0);
}

static void test_reports_and_new_files_are_fine(void **state)
{
	write_file("old.html", "<!DOCTYPE html>\n<html></html>\n");
	assert_int_equal(check(path_in("old.html"), NULL, false), 0);
	write_file("notes.txt", "1.5 seconds\n");
	assert_int_equal(check(path_in("notes.txt"), NULL, false), 0);
	write_file("empty", "");
	assert_int_equal(check(path_in("empty"), NULL, false), 0);
	assert_int_equal(check(path_in("new.html"), NULL, false), 0);
	assert_int_equal(check("-", "-", false), 0);
	assert_int_equal(check(NULL, NULL, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_never_over_an_input),
	    cmocka_unit_test(test_existing_data_needs_force),
	    cmocka_unit_test(test_reports_and_new_files_are_fine),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
