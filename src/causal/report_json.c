/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The report as one JSON document (schema: doc/formats/causal-report-json.md).
 * Speedups are fractions (0.25 = 25%); the 0% point is included.
 */
#include "causal/causal.h"
#include "report/report.h"

static void json_interval(struct report_json *j, const char *key, double lo, double hi)
{
	report_json_key(j, key);
	report_json_array_begin(j);
	report_json_number(j, lo);
	report_json_number(j, hi);
	report_json_array_end(j);
}

static void json_point(struct report_json *j, const struct causal_series *c,
		       const struct causal_bucket *b)
{
	report_json_object_begin(j);
	report_json_kv_number(j, "line_speedup", b->speedup_pct / 100.0);
	report_json_kv_number(j, "program_speedup", b->program_speedup);
	json_interval(j, "ci", b->ci_low, b->ci_high);
	report_json_kv_integer(j, "experiments", b->experiments);
	report_json_kv_integer(j, "trimmed", b->trimmed);
	report_json_kv_number(j, "visits", b->visits);
	report_json_kv_number(j, "duration_ns", b->duration);
	report_json_kv_number(j, "selected_samples", b->selected_samples);
	report_json_kv_number(j, "uncorrected_speedup", b->speedup_pct ? b->raw_speedup : 0);
	report_json_kv_number(j, "phase_factor", b->phase_factor);
	report_json_object_end(j);
}

static void json_series(struct report_json *j, const struct causal_profile *p,
			const struct causal_series *c)
{
	const struct causal_point *pt = &p->points[c->point];

	report_json_object_begin(j);
	report_json_kv_string(j, "line", causal_profile_string(p, c->selected));
	report_json_kv_string(j, "point", causal_profile_string(p, pt->name));
	report_json_kv_string(j, "kind", causal_point_kind_name(pt->kind));
	report_json_kv_number(j, "slope", c->slope);
	json_interval(j, "slope_ci", c->slope_low, c->slope_high);
	report_json_kv_number(j, "impact", c->impact);
	report_json_kv_number(j, "max_speedup", c->max_speedup);
	report_json_kv_bool(j, "contention", c->contention);
	report_json_kv_integer(j, "experiments", c->experiments);
	report_json_kv_bool(j, "phase_corrected", c->phase_corrected);
	report_json_kv_integer(j, "line_samples", c->line_samples);
	report_json_kv_integer(j, "line_runtime_ns", c->line_runtime_ns);
	report_json_key(j, "points");
	report_json_array_begin(j);
	for (size_t i = 0; i < c->n_buckets; i++)
		json_point(j, c, &c->buckets[i]);
	report_json_array_end(j);
	report_json_object_end(j);
}

static void json_files(struct report_json *j, const struct causal_report_options *opt)
{
	report_json_key(j, "files");
	report_json_array_begin(j);
	for (size_t i = 0; opt && i < opt->n_files; i++)
		report_json_string(j, opt->files[i]);
	report_json_array_end(j);
}

void causal_report_json(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	uint64_t period = 0;
	const char *sampler = causal_profile_sampler(p, &period);
	struct report_json j;

	report_json_init(&j, out);
	report_json_object_begin(&j);
	report_json_kv_integer(&j, "lever_causal_report", 1);
	report_json_kv_bool(&j, "phase_correction", s->phase_correction);
	report_json_kv_integer(&j, "runs", (long long)p->n_runs);
	report_json_kv_integer(&j, "experiments", (long long)p->n_experiments);
	report_json_key(&j, "sampler");
	if (sampler)
		report_json_string(&j, sampler);
	else
		report_json_null(&j);
	report_json_key(&j, "sampling_period_ns");
	if (sampler)
		report_json_integer(&j, (long long)period);
	else
		report_json_null(&j);
	report_json_kv_integer(&j, "runtime_ns", s->runtime_ns);
	json_files(&j, opt);
	report_json_kv_number(&j, "confidence_level", s->level);
	report_json_kv_integer(&j, "resamples", s->resamples);
	report_json_kv_integer(&j, "seed", (long long)s->seed);
	report_json_kv_integer(&j, "dropped_no_baseline", (long long)s->dropped_no_baseline);
	report_json_kv_integer(&j, "dropped_few_speedups", (long long)s->dropped_few_speedups);
	report_json_kv_bool(&j, "trim", s->trim);
	report_json_kv_integer(&j, "trimmed_experiments", (long long)s->trimmed_experiments);
	report_json_key(&j, "series");
	report_json_array_begin(&j);
	for (size_t i = 0; i < s->n_series; i++)
		json_series(&j, p, &s->series[i]);
	report_json_array_end(&j);
	report_json_object_end(&j);
	report_json_finish(&j);
}
