/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Showing samples of timings, shared by the reports of lever bench, compare
 * and stats: values in a time unit or as plain numbers (--unit), a sample's
 * description as JSON and as a table row, and the HTML page with the
 * distributions and Q-Q plots (Stabilizer paper, Fig. 5). What the numbers
 * are comes from src/stats (stats_describe_sample).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure.h"

char *measure_format_value(const struct measure_value_format *vf, double v, char *buf, size_t size)
{
	if (vf->to_seconds > 0)
		return report_format_time(v * vf->to_seconds, buf, size);
	snprintf(buf, size, "%.6g", v);
	return buf;
}

/* "s", "ms", "us", "ns" or "none" to a factor to seconds (0 = plain numbers). */
int measure_parse_unit(const char *text, struct measure_value_format *vf)
{
	static const struct {
		const char *name;
		double to_seconds;
	} units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"none", 0.0}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(text, units[i].name) == 0) {
			vf->to_seconds = units[i].to_seconds;
			return 0;
		}
	}
	return -1;
}

int measure_parse_alpha(const char *text, double *alpha)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !(v > 0.0 && v < 1.0))
		return -1;
	*alpha = v;
	return 0;
}

int measure_check_times(const char *name, const double *x, size_t n,
			const struct measure_value_format *vf, char *err, size_t size)
{
	if (vf->to_seconds <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0.0)) {
			snprintf(err, size,
				 "%s: value %zu is %g: a time must be positive (use --unit none "
				 "for numbers that are not times)",
				 name, i + 1, x[i]);
			return -EDOM;
		}
	}
	return 0;
}

int measure_check_output(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return 0;
	/* create and remove a new file; an existing one is only opened, not truncated */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int measure_finish_stdout(const char *who)
{
	int err = fflush(stdout) ? errno : (ferror(stdout) ? EIO : 0);

	if (!err)
		return 0;
	fprintf(stderr, "%s: cannot write standard output: %s\n", who, strerror(err));
	return 1;
}

/* ------------------------------------------------------------ samples */

void measure_sample_json(const struct stats_sample_description *d, struct report_json *j,
			 bool with_values)
{
	const struct stats_summary *s = &d->summary;

	report_json_object_begin(j);
	report_json_kv_string(j, "name", d->name);
	report_json_kv_integer(j, "n", (long long)d->n);
	report_json_kv_number(j, "mean", s->mean);
	report_json_kv_number(j, "stddev", s->sd);
	report_json_kv_number(j, "median", s->median);
	report_json_kv_number(j, "mad", s->mad);
	report_json_kv_number(j, "min", s->min);
	report_json_kv_number(j, "q1", s->q1);
	report_json_kv_number(j, "q3", s->q3);
	report_json_kv_number(j, "max", s->max);
	report_json_kv_number(j, "cv", s->cv);
	report_json_key(j, "ci_mean");
	report_json_number_array(j, (double[]){d->ci_mean.low, d->ci_mean.high}, 2);
	report_json_key(j, "shapiro_wilk");
	report_json_object_begin(j);
	report_json_kv_number(j, "W", d->normality.statistic);
	report_json_kv_number(j, "p", d->normality.p);
	report_json_object_end(j);
	report_json_kv_integer(j, "outliers", (long long)d->outliers);
	if (with_values) {
		report_json_key(j, "values");
		report_json_number_array(j, d->x, d->n);
	}
	report_json_object_end(j);
}

struct report_table *measure_sample_table(const struct stats_sample_description *d, size_t k,
					  const struct measure_value_format *vf, double alpha)
{
	static const char *const head[] = {"sample", "n",   "mean", "sd",   "median", "MAD",
					   "min",    "max", "CV",   "SW W", "SW p",   "normal?"};
	struct report_table *t = report_table_new(12, head);
	char b[64];

	if (!t)
		return NULL;
	for (size_t c = 1; c < 11; c++)
		report_table_align(t, c, REPORT_RIGHT);
	for (size_t i = 0; i < k; i++) {
		const struct stats_summary *s = &d[i].summary;

		report_table_row(t);
		report_table_cell(t, d[i].name);
		report_table_cellf(t, "%zu", d[i].n);
		report_table_cell(t, measure_format_value(vf, s->mean, b, sizeof(b)));
		report_table_cell(t, measure_format_value(vf, s->sd, b, sizeof(b)));
		report_table_cell(t, measure_format_value(vf, s->median, b, sizeof(b)));
		report_table_cell(t, measure_format_value(vf, s->mad, b, sizeof(b)));
		report_table_cell(t, measure_format_value(vf, s->min, b, sizeof(b)));
		report_table_cell(t, measure_format_value(vf, s->max, b, sizeof(b)));
		report_table_cellf(t, "%.2f%%", s->cv * 100);
		report_table_cellf(t, d[i].normality_err ? "-" : "%.4f", d[i].normality.statistic);
		report_table_cell(
		    t, d[i].normality_err ? "-" : report_format_p(d[i].normality.p, b, sizeof(b)));
		report_table_cell(
		    t, d[i].normality_err ? "n/a" : (d[i].normality.p < alpha ? "no" : "yes"));
	}
	return t;
}

/* ------------------------------------------------------------ HTML report */

int measure_write_html(const char *path, const char *title, const struct report_series *series,
		       size_t k, const struct measure_value_format *vf,
		       void (*body)(FILE *, const void *), const void *arg)
{
	FILE *f = fopen(path, "w");
	double scale = 1.0, ref = NAN, first = NAN;
	const char *unit = "";

	if (!f)
		return -errno;
	if (k && series[0].n)
		first = stats_mean(series[0].values, series[0].n);
	if (vf->to_seconds > 0)
		unit = report_time_unit(first * vf->to_seconds, &scale);
	report_html_begin(f, title);
	report_html_heading(f, 1, title);
	if (body)
		body(f, arg);
	report_html_heading(f, 2, "Distributions");
	report_svg_distribution(f, series, k, scale * (vf->to_seconds > 0 ? vf->to_seconds : 1.0),
				vf->to_seconds > 0 ? unit : "value");
	report_html_heading(f, 2, "Normal Q-Q plots");
	report_html_paragraph(f, "Each sample is shifted to a mean of zero and divided by the "
				 "standard deviation of the last sample, as in the Stabilizer "
				 "paper's Fig. 5; dashed lines show where samples from a normal "
				 "distribution would fall (a steeper line means more variance).");
	if (k && series[k - 1].n > 1)
		ref = stats_sd(series[k - 1].values, series[k - 1].n);
	report_svg_qq(f, series, k, ref);
	report_html_end(f);
	return fclose(f) ? -errno : 0;
}
