/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The report of lever stats (doc/stats.md): each sample file described by
 * stats_describe_sample (summary, Shapiro-Wilk, t interval of the mean,
 * outliers) and, with several files, Brown-Forsythe across them; as text,
 * JSON and an HTML page with distributions and Q-Q plots.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"

int measure_sample_set_describe(struct measure_sample_set *set, const struct stats_samples *files,
				size_t k)
{
	const double **groups = calloc(k, sizeof(*groups));
	size_t *sizes = calloc(k, sizeof(*sizes));
	int err = 0;

	memset(set, 0, sizeof(*set));
	set->brown_forsythe = (struct stats_test){NAN, NAN, NAN, NAN};
	set->d = calloc(k, sizeof(*set->d));
	set->k = k;
	if (!set->d || !groups || !sizes) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < k && !err; i++) {
		err = stats_describe_sample(&set->d[i], files[i].name, files[i].values, files[i].n,
					    0.95);
		groups[i] = files[i].values;
		sizes[i] = files[i].n;
	}
	if (!err && k > 1)
		stats_brown_forsythe(groups, sizes, k, &set->brown_forsythe);
out:
	free(groups);
	free(sizes);
	return err;
}

void measure_sample_set_free(struct measure_sample_set *set)
{
	free(set->d);
	memset(set, 0, sizeof(*set));
}

static void describe_text(const struct stats_sample_description *d,
			  const struct measure_value_format *vf, double alpha, FILE *f)
{
	char lo[48], hi[48], q1[48], q3[48], norm[160];

	fprintf(f, "%s\n", d->name);
	fprintf(f, "  n = %zu, mean = %s, sd = %s, CV = %.2f%%\n", d->n,
		measure_format_value(vf, d->summary.mean, lo, sizeof(lo)),
		measure_format_value(vf, d->summary.sd, hi, sizeof(hi)), d->summary.cv * 100);
	fprintf(f, "  min = %s, Q1 = %s, median = %s, ",
		measure_format_value(vf, d->summary.min, lo, sizeof(lo)),
		measure_format_value(vf, d->summary.q1, q1, sizeof(q1)),
		measure_format_value(vf, d->summary.median, hi, sizeof(hi)));
	fprintf(f, "Q3 = %s, max = %s\n", measure_format_value(vf, d->summary.q3, q3, sizeof(q3)),
		measure_format_value(vf, d->summary.max, lo, sizeof(lo)));
	fprintf(f, "  MAD = %s, 95%% CI of mean [%s, %s]\n",
		measure_format_value(vf, d->summary.mad, q1, sizeof(q1)),
		measure_format_value(vf, d->ci_mean.low, lo, sizeof(lo)),
		measure_format_value(vf, d->ci_mean.high, hi, sizeof(hi)));
	fprintf(f, "  normality: %s\n", stats_normality_text(d, alpha, norm, sizeof(norm)));
	if (d->outliers)
		fprintf(f, "  outliers: %zu (modified Z-score > 10)\n", d->outliers);
}

void measure_sample_set_text(const struct measure_sample_set *set,
			     const struct measure_value_format *vf, double alpha, FILE *f)
{
	const struct stats_test *bf = &set->brown_forsythe;
	struct report_table *t;
	char p[32];

	for (size_t i = 0; i < set->k; i++)
		describe_text(&set->d[i], vf, alpha, f);
	if (set->k < 2)
		return;
	t = measure_sample_table(set->d, set->k, vf, alpha);
	fprintf(f, "\n");
	if (t) {
		report_table_print_text(t, f, "");
		report_table_free(t);
	}
	if (!isnan(bf->p))
		fprintf(f,
			"\nBrown-Forsythe test of equal variances: F(%.0f, %.0f) = %.3f, p = %s"
			" (%s at alpha = %g)\n",
			bf->df1, bf->df2, bf->statistic, stats_format_p(bf->p, p, sizeof(p)),
			bf->p < alpha ? "variances differ" : "no evidence variances differ", alpha);
}

void measure_sample_set_json(const struct measure_sample_set *set, double alpha, bool drop_max,
			     FILE *f)
{
	const struct stats_test *bf = &set->brown_forsythe;
	struct report_json j;

	report_json_init(&j, f);
	report_json_object_begin(&j);
	report_json_kv_number(&j, "alpha", alpha);
	report_json_kv_bool(&j, "drop_max", drop_max);
	report_json_key(&j, "samples");
	report_json_array_begin(&j);
	for (size_t i = 0; i < set->k; i++)
		measure_sample_json(&set->d[i], &j, false);
	report_json_array_end(&j);
	if (set->k > 1) {
		report_json_key(&j, "brown_forsythe");
		report_json_object_begin(&j);
		report_json_kv_number(&j, "F", bf->statistic);
		report_json_kv_number(&j, "df1", bf->df1);
		report_json_kv_number(&j, "df2", bf->df2);
		report_json_kv_number(&j, "p", bf->p);
		report_json_object_end(&j);
	}
	report_json_object_end(&j);
	report_json_finish(&j);
}

struct set_html {
	const struct measure_sample_set *set;
	const struct measure_value_format *vf;
	double alpha;
};

static void set_html_body(FILE *f, const void *arg)
{
	const struct set_html *h = arg;
	struct report_table *t = measure_sample_table(h->set->d, h->set->k, h->vf, h->alpha);

	if (t) {
		report_table_print_html(t, f);
		report_table_free(t);
	}
}

int measure_sample_set_html(const struct measure_sample_set *set, const char *path,
			    const struct measure_value_format *vf, double alpha)
{
	struct report_series *series = calloc(set->k, sizeof(*series));
	struct set_html h = {set, vf, alpha};
	int err;

	if (!series)
		return -ENOMEM;
	for (size_t i = 0; i < set->k; i++)
		series[i] = (struct report_series){set->d[i].name, set->d[i].x, set->d[i].n};
	err = measure_write_html(path, "lever stats", series, set->k, vf, set_html_body, &h);
	free(series);
	return err;
}
