/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A streaming JSON writer: commas, nesting, escaping and non-finite numbers. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "report/report.h"

void report_json_init(struct report_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	j->after_key = false;
}

/* Separator and indentation before a value or key. */
static void before_item(struct report_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	j->need_comma[j->depth] = true;
}

static void open_container(struct report_json *j, char c)
{
	before_item(j);
	fputc(c, j->f);
	if (j->depth + 1 < REPORT_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_container(struct report_json *j, char c)
{
	bool had_items = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had_items)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
}

void report_json_object_begin(struct report_json *j)
{
	open_container(j, '{');
}

void report_json_object_end(struct report_json *j)
{
	close_container(j, '}');
}

void report_json_array_begin(struct report_json *j)
{
	open_container(j, '[');
}

void report_json_array_end(struct report_json *j)
{
	close_container(j, ']');
}

static void write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void report_json_key(struct report_json *j, const char *key)
{
	before_item(j);
	write_string(j->f, key);
	fputs(": ", j->f);
	j->after_key = true;
}

void report_json_string(struct report_json *j, const char *s)
{
	before_item(j);
	if (s)
		write_string(j->f, s);
	else
		fputs("null", j->f);
}

void report_json_number(struct report_json *j, double v)
{
	before_item(j);
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void report_json_integer(struct report_json *j, long long v)
{
	before_item(j);
	fprintf(j->f, "%lld", v);
}

void report_json_bool(struct report_json *j, bool v)
{
	before_item(j);
	fputs(v ? "true" : "false", j->f);
}

void report_json_null(struct report_json *j)
{
	before_item(j);
	fputs("null", j->f);
}

/* On one line: arrays of samples can be long. */
void report_json_number_array(struct report_json *j, const double *v, size_t n)
{
	before_item(j);
	fputc('[', j->f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", j->f);
		if (isfinite(v[i]))
			fprintf(j->f, "%.17g", v[i]);
		else
			fputs("null", j->f);
	}
	fputc(']', j->f);
}

void report_json_kv_string(struct report_json *j, const char *key, const char *s)
{
	report_json_key(j, key);
	report_json_string(j, s);
}

void report_json_kv_number(struct report_json *j, const char *key, double v)
{
	report_json_key(j, key);
	report_json_number(j, v);
}

void report_json_kv_integer(struct report_json *j, const char *key, long long v)
{
	report_json_key(j, key);
	report_json_integer(j, v);
}

void report_json_kv_bool(struct report_json *j, const char *key, bool v)
{
	report_json_key(j, key);
	report_json_bool(j, v);
}

void report_json_finish(struct report_json *j)
{
	fputc('\n', j->f);
}
