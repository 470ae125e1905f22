/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/report: number formatting, tables in four formats, the JSON writer
 * (its output parsed back with jansson), and the HTML/SVG charts on edge
 * cases (empty, single-valued and constant series, names needing escapes).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"

/* Capture what a writer prints into a malloc'ed string. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *capture_begin(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *capture_end(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

static void test_format(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(report_format_time(1.5, b, sizeof(b)), "1.500 s");
	assert_string_equal(report_format_time(0.1234, b, sizeof(b)), "123.4 ms");
	assert_string_equal(report_format_time(0.012345, b, sizeof(b)), "12.35 ms");
	assert_string_equal(report_format_time(2.5e-6, b, sizeof(b)), "2.500 us");
	assert_string_equal(report_format_time(3e-9, b, sizeof(b)), "3.000 ns");
	assert_string_equal(report_format_time(NAN, b, sizeof(b)), "n/a");
	assert_string_equal(report_format_time(125.0, b, sizeof(b)), "125.0 s");
	assert_string_equal(report_format_bytes(512, b, sizeof(b)), "512 B");
	assert_string_equal(report_format_bytes(3.5 * 1024 * 1024, b, sizeof(b)), "3.5 MiB");
	assert_string_equal(report_format_p(0.4123, b, sizeof(b)), "0.412");
	assert_string_equal(report_format_p(0.0023, b, sizeof(b)), "0.0023");
	assert_string_equal(report_format_p(3.14e-7, b, sizeof(b)), "3.1e-07");
}

static struct report_table *sample_table(void)
{
	const char *h[] = {"name", "mean"};
	struct report_table *t = report_table_new(2, h);

	assert_non_null(t);
	report_table_align(t, 1, REPORT_RIGHT);
	report_table_row(t);
	report_table_cell(t, "a|b");
	report_table_cellf(t, "%.1f", 1.25);
	report_table_row(t);
	report_table_cell(t, "x,\"y\"");
	report_table_cell(t, "10.0");
	assert_int_equal(report_table_cell(t, "too many"), -1);
	return t;
}

static void test_tables(void **state)
{
	struct report_table *t = sample_table();
	struct capture c;
	char *s;

	(void)state;
	assert_int_equal(report_table_rows(t), 2);
	report_table_print_text(t, capture_begin(&c), "  ");
	s = capture_end(&c);
	assert_string_equal(s, "  name   mean\n  a|b     1.2\n  x,\"y\"  10.0\n");
	free(s);
	report_table_print_markdown(t, capture_begin(&c));
	s = capture_end(&c);
	assert_string_equal(s,
			    "| name | mean |\n|:---|---:|\n| a\\|b | 1.2 |\n| x,\"y\" | 10.0 |\n");
	free(s);
	report_table_print_csv(t, capture_begin(&c));
	s = capture_end(&c);
	assert_string_equal(s, "name,mean\na|b,1.2\n\"x,\"\"y\"\"\",10.0\n");
	free(s);
	report_table_print_html(t, capture_begin(&c));
	s = capture_end(&c);
	assert_non_null(strstr(s, "<td>x,&quot;y&quot;</td><td class=\"num\">10.0</td>"));
	free(s);
	report_table_free(t);
}

static void test_json(void **state)
{
	struct report_json j;
	struct capture c;
	json_error_t err;
	json_t *root;
	double v[] = {1.5, NAN, -2};
	char *s;

	(void)state;
	report_json_init(&j, capture_begin(&c));
	report_json_object_begin(&j);
	report_json_kv_string(&j, "command", "say \"hi\"\n\t\x01");
	report_json_kv_number(&j, "mean", 0.1);
	report_json_kv_number(&j, "nan", NAN);
	report_json_kv_integer(&j, "runs", 30);
	report_json_kv_bool(&j, "ok", true);
	report_json_key(&j, "times");
	report_json_number_array(&j, v, 3);
	report_json_key(&j, "empty");
	report_json_array_begin(&j);
	report_json_array_end(&j);
	report_json_key(&j, "nested");
	report_json_array_begin(&j);
	report_json_object_begin(&j);
	report_json_key(&j, "x");
	report_json_null(&j);
	report_json_object_end(&j);
	report_json_object_begin(&j);
	report_json_object_end(&j);
	report_json_array_end(&j);
	report_json_object_end(&j);
	report_json_finish(&j);
	s = capture_end(&c);
	root = json_loads(s, 0, &err);
	if (!root)
		fail_msg("invalid JSON (%s) in:\n%s", err.text, s);
	assert_string_equal(json_string_value(json_object_get(root, "command")),
			    "say \"hi\"\n\t\x01");
	assert_true(json_real_value(json_object_get(root, "mean")) == 0.1);
	assert_true(json_is_null(json_object_get(root, "nan")));
	assert_int_equal(json_integer_value(json_object_get(root, "runs")), 30);
	assert_true(json_is_true(json_object_get(root, "ok")));
	assert_int_equal(json_array_size(json_object_get(root, "times")), 3);
	assert_true(json_is_null(json_array_get(json_object_get(root, "times"), 1)));
	assert_int_equal(json_array_size(json_object_get(root, "nested")), 2);
	json_decref(root);
	free(s);
}

static void test_html(void **state)
{
	double a[] = {1.0, 1.1, 0.9, 1.05, 0.95, 1.2}, c[] = {2, 2, 2}, one[] = {3};
	struct report_series s[] = {
	    {"<a&b>", a, 6}, {"const", c, 3}, {"one", one, 1}, {"empty", NULL, 0}};
	struct capture cap;
	char *html;

	(void)state;
	report_html_begin(capture_begin(&cap), "t<itle>");
	report_html_heading(cap.f, 2, "x & y");
	report_html_paragraph(cap.f, "p < q");
	report_svg_distribution(cap.f, s, 4, 1e3, "ms");
	report_svg_qq(cap.f, s, 4, NAN);
	report_svg_qq(cap.f, s + 1, 1, NAN); /* constant: no SD to scale by */
	report_svg_distribution(cap.f, s + 3, 1, 1.0, "s");
	report_html_end(cap.f);
	html = capture_end(&cap);
	assert_non_null(strstr(html, "<title>t&lt;itle&gt;</title>"));
	assert_non_null(strstr(html, "&lt;a&amp;b&gt;"));
	assert_null(strstr(html, "<a&b>"));
	assert_null(strstr(html, "nan"));
	assert_null(strstr(html, "inf"));
	assert_null(strstr(html, "src=")); /* nothing fetched */
	assert_non_null(strstr(html, "</html>"));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_tables),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_html),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
