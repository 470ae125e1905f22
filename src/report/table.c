/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tables of strings, printed as aligned text, Markdown, CSV or HTML. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct report_table {
	size_t n_columns, n_rows, capacity, filled;
	char **cells; /* row-major; row 0 is the header */
	enum report_align *align;
};

struct report_table *report_table_new(size_t n_columns, const char *const *headers)
{
	struct report_table *t = calloc(1, sizeof(*t));

	if (!t || !n_columns)
		goto fail;
	t->n_columns = n_columns;
	t->align = calloc(n_columns, sizeof(*t->align));
	if (!t->align || report_table_row(t))
		goto fail;
	for (size_t c = 0; c < n_columns; c++)
		if (report_table_cell(t, headers[c]))
			goto fail;
	return t;
fail:
	report_table_free(t);
	return NULL;
}

void report_table_align(struct report_table *t, size_t column, enum report_align align)
{
	if (column < t->n_columns)
		t->align[column] = align;
}

int report_table_row(struct report_table *t)
{
	if (t->n_rows == t->capacity) {
		size_t cap = t->capacity ? t->capacity * 2 : 8;
		char **grown = realloc(t->cells, cap * t->n_columns * sizeof(*grown));

		if (!grown)
			return -1;
		t->cells = grown;
		t->capacity = cap;
	}
	for (size_t c = 0; c < t->n_columns; c++)
		t->cells[t->n_rows * t->n_columns + c] = NULL;
	t->n_rows++;
	t->filled = 0;
	return 0;
}

int report_table_cell(struct report_table *t, const char *text)
{
	char *copy;

	if (t->n_rows == 0 || t->filled >= t->n_columns)
		return -1;
	copy = strdup(text ? text : "");
	if (!copy)
		return -1;
	t->cells[(t->n_rows - 1) * t->n_columns + t->filled++] = copy;
	return 0;
}

int report_table_cellf(struct report_table *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return report_table_cell(t, buf);
}

size_t report_table_rows(const struct report_table *t)
{
	return t->n_rows ? t->n_rows - 1 : 0;
}

static const char *cell(const struct report_table *t, size_t r, size_t c)
{
	const char *s = t->cells[r * t->n_columns + c];

	return s ? s : "";
}

/* Display width: count UTF-8 code points, not bytes. */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void report_table_print_text(const struct report_table *t, FILE *f, const char *indent)
{
	size_t *w = calloc(t->n_columns, sizeof(*w));

	if (!w)
		return;
	for (size_t r = 0; r < t->n_rows; r++)
		for (size_t c = 0; c < t->n_columns; c++)
			if (width(cell(t, r, c)) > w[c])
				w[c] = width(cell(t, r, c));
	for (size_t r = 0; r < t->n_rows; r++) {
		fputs(indent ? indent : "", f);
		for (size_t c = 0; c < t->n_columns; c++) {
			const char *s = cell(t, r, c);
			size_t pad = w[c] - width(s);
			bool last = c + 1 == t->n_columns;

			if (t->align[c] == REPORT_RIGHT)
				fprintf(f, "%*s%s", (int)pad, "", s);
			else
				fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
			if (!last)
				fputs("  ", f);
		}
		fputc('\n', f);
	}
	free(w);
}

static void markdown_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

void report_table_print_markdown(const struct report_table *t, FILE *f)
{
	for (size_t r = 0; r < t->n_rows; r++) {
		fputc('|', f);
		for (size_t c = 0; c < t->n_columns; c++) {
			fputc(' ', f);
			markdown_cell(f, cell(t, r, c));
			fputs(" |", f);
		}
		fputc('\n', f);
		if (r == 0) {
			fputc('|', f);
			for (size_t c = 0; c < t->n_columns; c++)
				fputs(t->align[c] == REPORT_RIGHT ? "---:|" : ":---|", f);
			fputc('\n', f);
		}
	}
}

void report_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_table_print_csv(const struct report_table *t, FILE *f)
{
	for (size_t r = 0; r < t->n_rows; r++) {
		for (size_t c = 0; c < t->n_columns; c++) {
			if (c)
				fputc(',', f);
			report_csv_field(f, cell(t, r, c));
		}
		fputc('\n', f);
	}
}

void report_table_print_html(const struct report_table *t, FILE *f)
{
	fputs("<table>\n", f);
	for (size_t r = 0; r < t->n_rows; r++) {
		fputs("<tr>", f);
		for (size_t c = 0; c < t->n_columns; c++) {
			const char *tag = r == 0 ? "th" : "td";

			fprintf(f, "<%s%s>", tag,
				t->align[c] == REPORT_RIGHT ? " class=\"num\"" : "");
			report_html_escape(f, cell(t, r, c));
			fprintf(f, "</%s>", tag);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void report_table_free(struct report_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->cells && i < t->n_rows * t->n_columns; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->align);
	free(t);
}
