/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The report as one JSON document (schema: doc/formats/causal-report-json.md).
 * Speedups are fractions (0.25 = 25%); the 0% point is included. Version 2
 * added the load amplification keys (scalability, load_curves).
 */
#include "causal/causal.h"
#include "report/report.h"

/* [lo, hi], under key unless key is NULL (the key was written already). */
static void json_interval(struct report_json *j, const char *key, double lo, double hi)
{
	if (key)
		report_json_key(j, key);
	report_json_array_begin(j);
	report_json_number(j, lo);
	report_json_number(j, hi);
	report_json_array_end(j);
}

/* "thin": whether the evidence is thin, and "thin_reasons": why (names of the bits). */
static void json_thin(struct report_json *j, unsigned thin)
{
	static const unsigned bits[] = {CAUSAL_THIN_FEW_EXPERIMENTS, CAUSAL_THIN_FEW_VISITS,
					CAUSAL_THIN_WIDE, CAUSAL_THIN_POINTS};
	char buf[64];

	report_json_kv_bool(j, "thin", thin != 0);
	report_json_key(j, "thin_reasons");
	report_json_array_begin(j);
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (thin & bits[i])
			report_json_string(j, causal_thin_text(bits[i], buf, sizeof(buf)));
	}
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
	report_json_kv_number(j, "fit", b->fit);
	json_interval(j, "fit_ci", b->fit_low, b->fit_high);
	json_thin(j, b->thin);
	report_json_object_end(j);
}

/* The fitted model of a curve (struct causal_fit). */
static void json_fit(struct report_json *j, const struct causal_fit *f)
{
	report_json_key(j, "fit");
	report_json_object_begin(j);
	report_json_kv_string(j, "model", f->levels_off ? "levels_off" : "linear");
	report_json_kv_number(j, "slope", f->slope);
	report_json_kv_number(j, "knee", f->knee);
	report_json_kv_number(j, "effect", f->effect);
	json_interval(j, "effect_ci", f->effect_low, f->effect_high);
	report_json_kv_number(j, "chi2", f->chi2);
	report_json_object_end(j);
}

/* The keys of a curve, shared by series[] and load_curves[].curves[]. */
static void json_curve_fields(struct report_json *j, const struct causal_series *c)
{
	report_json_kv_number(j, "slope", c->slope);
	json_interval(j, "slope_ci", c->slope_low, c->slope_high);
	report_json_kv_number(j, "impact", c->impact);
	report_json_kv_number(j, "max_speedup", c->max_speedup);
	report_json_kv_bool(j, "contention", c->contention);
	report_json_kv_integer(j, "experiments", c->experiments);
	report_json_kv_bool(j, "phase_corrected", c->phase_corrected);
	report_json_kv_integer(j, "line_samples", c->line_samples);
	report_json_kv_integer(j, "line_runtime_ns", c->line_runtime_ns);
	json_fit(j, &c->fit);
	json_thin(j, c->thin);
	report_json_key(j, "points");
	report_json_array_begin(j);
	for (size_t i = 0; i < c->n_buckets; i++)
		json_point(j, c, &c->buckets[i]);
	report_json_array_end(j);
}

static void json_series(struct report_json *j, const struct causal_profile *p,
			const struct causal_series *c)
{
	const struct causal_point *pt = &p->points[c->point];

	report_json_object_begin(j);
	report_json_kv_string(j, "line", causal_profile_string(p, c->selected));
	report_json_kv_string(j, "point", causal_profile_string(p, pt->name));
	report_json_kv_string(j, "kind", causal_point_kind_name(pt->kind));
	json_curve_fields(j, c);
	report_json_object_end(j);
}

/* ------------------------------------------------------------ load amplification */

static void json_number_or_null(struct report_json *j, const char *key, bool known, double v)
{
	report_json_key(j, key);
	if (known)
		report_json_number(j, v);
	else
		report_json_null(j);
}

/* An arrival speedup in ns, or null for 0 (a guard rail that did not fire). */
static void json_ns_or_null(struct report_json *j, const char *key, uint64_t ns)
{
	report_json_key(j, key);
	if (ns)
		report_json_integer(j, (long long)ns);
	else
		report_json_null(j);
}

static void json_level_fields(struct report_json *j, const struct causal_amp_level *lv)
{
	report_json_kv_integer(j, "arrival_speedup_ns", (long long)lv->arrival_speedup_ns);
	json_number_or_null(j, "period_ns", lv->period_ns > 0, lv->period_ns);
	json_number_or_null(j, "load", lv->load >= 0, lv->load);
}

/* One level of one progress point on the scalability curve. */
static void json_amp_point(struct report_json *j, const struct causal_amp *a, size_t k, size_t pt)
{
	const struct causal_amp_level *lv = &a->levels[k];
	const struct causal_amp_point *v = &lv->points[pt];
	unsigned base_runs = a->baseline >= 0 ? a->levels[a->baseline].points[pt].runs : 0;

	report_json_object_begin(j);
	json_level_fields(j, lv);
	report_json_kv_integer(j, "runs", v->runs);
	json_number_or_null(j, "value", v->runs > 0, v->value);
	report_json_key(j, "ci");
	if (v->runs >= 2)
		json_interval(j, NULL, v->low, v->high);
	else
		report_json_null(j);
	json_number_or_null(j, "relative", v->has_relative, v->relative);
	report_json_key(j, "relative_ci");
	if (v->has_relative && v->runs >= 2 && base_runs >= 2)
		json_interval(j, NULL, v->rel_low, v->rel_high);
	else
		report_json_null(j);
	report_json_kv_bool(j, "unstable", v->unstable);
	report_json_kv_bool(j, "saturated", v->saturated);
	report_json_object_end(j);
}

static void json_scalability(struct report_json *j, const struct causal_profile *p,
			     const struct causal_amp *a)
{
	report_json_object_begin(j);
	json_number_or_null(j, "baseline_arrival_speedup_ns", a->baseline >= 0, 0);
	json_number_or_null(j, "baseline_period_ns", a->base_period_ns > 0, a->base_period_ns);
	report_json_kv_number(j, "confidence_level", CAUSAL_AMP_LEVEL);
	report_json_kv_integer(j, "ignored_experiments", (long long)a->ignored_experiments);
	json_ns_or_null(j, "beyond_period_arrival_speedup_ns", a->beyond_period_ns);
	json_ns_or_null(j, "no_arrivals_arrival_speedup_ns", a->no_arrivals_ns);
	report_json_key(j, "levels");
	report_json_array_begin(j);
	for (size_t k = 0; k < a->n_levels; k++) {
		const struct causal_amp_level *lv = &a->levels[k];

		report_json_object_begin(j);
		json_level_fields(j, lv);
		report_json_kv_integer(j, "runs", lv->runs);
		report_json_kv_integer(j, "experiments", lv->experiments);
		report_json_kv_number(j, "arrivals", lv->arrivals);
		report_json_kv_number(j, "duration_ns", lv->duration_ns);
		report_json_object_end(j);
	}
	report_json_array_end(j);
	report_json_key(j, "points");
	report_json_array_begin(j);
	for (size_t pt = 0; pt < a->n_points; pt++) {
		bool latency = p->points[pt].kind == CAUSAL_POINT_LATENCY;

		report_json_object_begin(j);
		report_json_kv_string(j, "point", causal_profile_string(p, p->points[pt].name));
		report_json_kv_string(j, "kind", causal_point_kind_name(p->points[pt].kind));
		report_json_kv_string(j, "unit", latency ? "ns" : "visits/s");
		report_json_key(j, "loads");
		report_json_array_begin(j);
		for (size_t k = 0; k < a->n_levels; k++)
			json_amp_point(j, a, k, pt);
		report_json_array_end(j);
		report_json_object_end(j);
	}
	report_json_array_end(j);
	report_json_object_end(j);
}

/* Each line's curves, one per load level at which it has one. */
static void json_load_curves(struct report_json *j, const struct causal_profile *p,
			     const struct causal_amp_profiles *ap)
{
	report_json_array_begin(j);
	for (size_t i = 0; i < ap->n_lines; i++) {
		const struct causal_amp_line *l = &ap->lines[i];
		const struct causal_point *pt = &p->points[l->point];

		report_json_object_begin(j);
		report_json_kv_string(j, "line", causal_profile_string(p, l->selected));
		report_json_kv_string(j, "point", causal_profile_string(p, pt->name));
		report_json_kv_string(j, "kind", causal_point_kind_name(pt->kind));
		report_json_key(j, "curves");
		report_json_array_begin(j);
		for (size_t k = 0; k < ap->amp.n_levels; k++) {
			if (!l->series[k])
				continue;
			report_json_object_begin(j);
			report_json_kv_integer(j, "arrival_speedup_ns",
					       (long long)ap->amp.levels[k].arrival_speedup_ns);
			json_number_or_null(j, "load", ap->amp.levels[k].load >= 0,
					    ap->amp.levels[k].load);
			json_curve_fields(j, l->series[k]);
			report_json_object_end(j);
		}
		report_json_array_end(j);
		report_json_object_end(j);
	}
	report_json_array_end(j);
}

static void json_amp(struct report_json *j, const struct causal_profile *p,
		     const struct causal_amp_profiles *ap)
{
	report_json_key(j, "scalability");
	if (ap)
		json_scalability(j, p, &ap->amp);
	else
		report_json_null(j);
	report_json_key(j, "load_curves");
	if (ap && ap->per_load)
		json_load_curves(j, p, ap);
	else
		report_json_null(j);
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
	report_json_kv_integer(&j, "lever_causal_report", 2);
	report_json_kv_string(&j, "method", causal_method_name(s->method));
	if (s->method == CAUSAL_METHOD_COZ_VIEWER) {
		report_json_kv_integer(&j, "viewer_min_points", s->viewer_min_points);
		report_json_kv_integer(&j, "dropped_coz_h", (long long)s->dropped_coz_h);
		report_json_kv_integer(&j, "dropped_out_of_range",
				       (long long)s->dropped_out_of_range);
	}
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
	report_json_kv_string(&j, "sort", causal_sort_name(s->sort));
	report_json_kv_integer(&j, "dropped_no_baseline", (long long)s->dropped_no_baseline);
	report_json_kv_integer(&j, "dropped_few_speedups", (long long)s->dropped_few_speedups);
	report_json_kv_bool(&j, "trim", s->trim);
	report_json_kv_integer(&j, "trimmed_experiments", (long long)s->trimmed_experiments);
	report_json_key(&j, "series");
	report_json_array_begin(&j);
	for (size_t i = 0; i < s->n_series; i++)
		json_series(&j, p, &s->series[i]);
	report_json_array_end(&j);
	json_amp(&j, p, opt ? opt->amp : NULL);
	report_json_object_end(&j);
	report_json_finish(&j);
}
