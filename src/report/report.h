/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report: output helpers shared by lever's commands — human-readable
 * numbers, text/Markdown/CSV/HTML tables, a streaming JSON writer, and
 * self-contained HTML pages with SVG charts (distributions, Q-Q plots).
 * Everything writes to a FILE *; nothing here decides what to report.
 */
#ifndef LEVER_REPORT_H
#define LEVER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ------------------------------------------------------------ output files */

/*
 * What an existing file holds, judged from `head` (its first whole lines, at
 * most 4 KiB, NUL-terminated), if it is data a run produced rather than a
 * report: a phrase for the message ("a causal profile"), or NULL.
 */
typedef const char *(*report_data_kind_fn)(const char *head);

/*
 * Whether a command may write the report file `out` (--html, --export-*):
 * never over one of its inputs (same device and inode), and over an existing
 * file that `recognise` calls data only with force (recognise may be NULL).
 * 0 if it may; -1 with the reason in err ("FILE ...: refusing ..."). "-" and
 * new files are always fine.
 */
int report_output_check(const char *out, const char *const *inputs, size_t n_inputs, bool force,
			report_data_kind_fn recognise, char *err, size_t size);

/* ------------------------------------------------------------ numbers */

/*
 * A unit for showing times given in seconds: "s", "ms", "us" or "ns", chosen
 * so that `seconds` shows as 1..999; *scale multiplies seconds into it.
 */
const char *report_time_unit(double seconds, double *scale);
/* "123.4 ms" (4 significant digits), or "n/a" for NaN. */
char *report_format_time(double seconds, char *buf, size_t size);
/* The same, in a given unit and scale (to show several values alike). */
char *report_format_time_in(double seconds, const char *unit, double scale, char *buf, size_t size);
/* "12.3 MiB" */
char *report_format_bytes(double bytes, char *buf, size_t size);
/* A p-value to 3 significant digits: "0.0898", "0.41", "3.1e-07" (below 1e-4); "n/a" for NaN. */
char *report_format_p(double p, char *buf, size_t size);

/* ------------------------------------------------------------ tables */

enum report_align { REPORT_LEFT, REPORT_RIGHT };

struct report_table;
struct report_table *report_table_new(size_t n_columns, const char *const *headers);
void report_table_align(struct report_table *t, size_t column, enum report_align align);
/* Start a row, then fill its cells left to right (missing cells are empty). */
int report_table_row(struct report_table *t);
int report_table_cell(struct report_table *t, const char *text);
int report_table_cellf(struct report_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t report_table_rows(const struct report_table *t);
/* Aligned columns for a terminal, each line prefixed by indent. */
void report_table_print_text(const struct report_table *t, FILE *f, const char *indent);
void report_table_print_markdown(const struct report_table *t, FILE *f);
void report_table_print_csv(const struct report_table *t, FILE *f);
void report_table_print_html(const struct report_table *t, FILE *f);
void report_table_free(struct report_table *t);

/* Quote a CSV field when needed (RFC 4180). */
void report_csv_field(FILE *f, const char *s);

/* ------------------------------------------------------------ JSON */

#define REPORT_JSON_MAX_DEPTH 32

struct report_json {
	FILE *f;
	int depth;
	bool need_comma[REPORT_JSON_MAX_DEPTH];
	bool after_key;
};
void report_json_init(struct report_json *j, FILE *f);
void report_json_object_begin(struct report_json *j);
void report_json_object_end(struct report_json *j);
void report_json_array_begin(struct report_json *j);
void report_json_array_end(struct report_json *j);
void report_json_key(struct report_json *j, const char *key);
void report_json_string(struct report_json *j, const char *s);
/* Non-finite numbers are written as null (JSON has no NaN). */
void report_json_number(struct report_json *j, double v);
void report_json_integer(struct report_json *j, long long v);
void report_json_bool(struct report_json *j, bool v);
void report_json_null(struct report_json *j);
void report_json_number_array(struct report_json *j, const double *v, size_t n);
/* key + value in one call */
void report_json_kv_string(struct report_json *j, const char *key, const char *s);
void report_json_kv_number(struct report_json *j, const char *key, double v);
void report_json_kv_integer(struct report_json *j, const char *key, long long v);
void report_json_kv_bool(struct report_json *j, const char *key, bool v);
/* Ends with a newline after the outermost value. */
void report_json_finish(struct report_json *j);

/* ------------------------------------------------------------ HTML and SVG */

/* One self-contained page: inline CSS, no scripts, no external resources. */
void report_html_begin(FILE *f, const char *title);
void report_html_end(FILE *f);
void report_html_escape(FILE *f, const char *s);
/* <hN>text</hN> and <p>text</p>, escaped; report_html_pre keeps line breaks. */
void report_html_heading(FILE *f, int level, const char *text);
void report_html_paragraph(FILE *f, const char *text);
void report_html_pre(FILE *f, const char *text);

/* A named set of values for a chart. */
struct report_series {
	const char *name;
	const double *values;
	size_t n;
};

/*
 * Distributions on a shared horizontal axis: each series as a box plot
 * (quartiles, whiskers to 1.5 IQR) over its jittered points. Values are
 * shown times `scale` with `unit` on the axis (e.g. seconds as ms).
 */
void report_svg_distribution(FILE *f, const struct report_series *series, size_t k, double scale,
			     const char *unit);
/*
 * Normal Q-Q plot as in the Stabilizer paper (Fig. 5): each series is
 * centred on its mean and divided by reference_sd (the paper uses the SD of
 * the re-randomized runs; NaN = the SD of the first series); theoretical
 * normal quantiles on x, the scaled samples on y, and for each series a
 * reference line through 0 with slope sd / reference_sd.
 */
void report_svg_qq(FILE *f, const struct report_series *series, size_t k, double reference_sd);

/* A point of an x-y chart with its interval [lo, hi] (NaN: none). */
struct report_xy_point {
	double x, y, lo, hi;
};

/*
 * An x-y chart: points with error bars and, if has_line, the line
 * y = line_a + line_b x over [x_lo, x_hi]. Values are shown times x_scale
 * and y_scale (100 for percent). The y axis covers the points, their
 * intervals and 0, within [y_clip_lo, y_clip_hi]; a point beyond it is drawn
 * hollow at the edge. width/height 0 = 440 x 260 pixels.
 */
struct report_xy_chart {
	const struct report_xy_point *points;
	size_t n;
	double x_lo, x_hi;
	double y_clip_lo, y_clip_hi;
	double x_scale, y_scale;
	bool has_line;
	double line_a, line_b;
	const char *x_label, *y_label;
	int width, height;
	/* a fitted curve instead of the line: a polyline through the (x, y) of
	 * curve[0..n_curve), x ascending, in a shaded band from lo to hi (NaN: none) */
	const struct report_xy_point *curve;
	size_t n_curve;
	/* points drawn faint (grey, hollow) where faint[i]; NULL: none */
	const bool *faint;
};
void report_svg_xy(FILE *f, const struct report_xy_chart *c);

/* A named series of an x-y chart with several series. */
struct report_xy_series {
	const char *name; /* legend text */
	const struct report_xy_point *points;
	size_t n;
};

/*
 * Several series on one x-y chart, told apart by color and marker shape
 * (circle, square, triangle, diamond, ...) with a legend under the axes;
 * points with error bars, joined in x order when connect is set. Ranges and
 * scales as in struct report_xy_chart; y_ref draws a dashed reference line
 * (0 for speedups, 1 for ratios; NaN: none) that the y axis covers. title
 * labels the chart for screen readers. width 0 = 440 pixels; the height is
 * the plot's (0 = 260) plus the legend's rows.
 */
struct report_xy_multi_chart {
	const struct report_xy_series *series;
	size_t k;
	double x_lo, x_hi;
	double y_clip_lo, y_clip_hi;
	double x_scale, y_scale;
	double y_ref;
	bool connect;
	const char *x_label, *y_label, *title;
	int width, height;
};
void report_svg_xy_multi(FILE *f, const struct report_xy_multi_chart *c);

/* An inline <script> (pages stay self-contained: nothing is fetched). */
void report_html_script(FILE *f, const char *script);

#endif
