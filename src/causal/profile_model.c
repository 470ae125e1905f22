/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The model the causal profile reader builds (struct causal_profile in
 * causal.h): runs, experiments, their point deltas, points and per-run
 * sample counts, and the queries the summary asks of it (phase correction,
 * doc/formats/profile.md "Rules for readers" 4-6; spec/coz.md §9).
 */
#include <stdlib.h>
#include <string.h>

#include "causal/profile_reader.h"

/* ------------------------------------------------------------ model */

/* Leave the current run: its next point records still belong to its experiment. */
static void save_run_state(struct reader *rd)
{
	if (rd->run != NONE)
		rd->run_experiment[rd->run] = rd->experiment;
}

size_t profile_start_run(struct reader *rd, bool has_startup, uint64_t startup_ns)
{
	struct causal_profile *p = rd->p;
	struct causal_run *run;

	if (GROW(p->runs, p->n_runs, p->cap_runs) || p->n_runs >= UINT32_MAX ||
	    GROW(rd->run_experiment, p->n_runs, rd->run_experiment_cap)) {
		profile_out_of_memory(rd);
		return NONE;
	}
	run = &p->runs[p->n_runs];
	memset(run, 0, sizeof(*run));
	run->source = rd->source;
	run->lineno = rd->lineno;
	run->has_startup = has_startup;
	run->startup_ns = startup_ns;
	save_run_state(rd);
	rd->run = p->n_runs++;
	rd->experiment = NONE;
	rd->run_experiment[rd->run] = NONE;
	return rd->run;
}

/* Records of a tagged run that lie after another run's records. */
void profile_select_run(struct reader *rd, size_t run)
{
	if (run == rd->run)
		return;
	save_run_state(rd);
	rd->run = run;
	rd->experiment = rd->run_experiment[run];
}

/* The current run; records before any `startup` get a run of their own. */
struct causal_run *profile_current_run(struct reader *rd)
{
	if (rd->run == NONE && profile_start_run(rd, false, 0) == NONE)
		return NULL;
	return &rd->p->runs[rd->run];
}

uint32_t profile_find_point(struct reader *rd, uint32_t name, enum causal_point_kind kind)
{
	struct causal_profile *p = rd->p;
	uint64_t key = (uint64_t)kind << 32 | name;
	uint32_t idx = u64_map_get(&p->tables->points, key);

	if (idx != UINT32_MAX)
		return idx;
	if (GROW(p->points, p->n_points, p->cap_points) || p->n_points >= UINT32_MAX - 1 ||
	    u64_map_put(&p->tables->points, key, (uint32_t)p->n_points)) {
		profile_out_of_memory(rd);
		return UINT32_MAX;
	}
	p->points[p->n_points] = (struct causal_point){.name = name, .kind = kind};
	return (uint32_t)p->n_points++;
}

/* The experiment a point record belongs to, or NULL (counted) if none. */
struct causal_experiment *profile_point_owner(struct reader *rd)
{
	if (rd->experiment == DROPPED)
		return NULL; /* belongs to an experiment we dropped: drop it too */
	if (rd->experiment == NONE) {
		rd->p->stats.orphan_points++;
		profile_bad_line(rd, "point record with no experiment before it");
		return NULL;
	}
	return &rd->p->experiments[rd->experiment];
}

void profile_add_delta(struct reader *rd, struct causal_experiment *e, const struct causal_delta *d)
{
	struct causal_profile *p = rd->p;

	if (GROW(p->deltas, p->n_deltas, p->cap_deltas)) {
		profile_out_of_memory(rd);
		return;
	}
	if (e->n_deltas == 0)
		e->first_delta = p->n_deltas;
	p->deltas[p->n_deltas++] = *d;
	e->n_deltas++;
	p->stats.records++;
}

void causal_profile_init(struct causal_profile *p)
{
	memset(p, 0, sizeof(*p));
}

void causal_profile_free(struct causal_profile *p)
{
	free(p->runs);
	free(p->experiments);
	free(p->deltas);
	free(p->points);
	free(p->samples);
	for (size_t i = 0; i < p->n_diagnostics; i++)
		free(p->diagnostics[i]);
	if (p->tables) {
		string_table_free(&p->tables->strings);
		u64_map_free(&p->tables->points);
		u64_map_free(&p->tables->samples);
		free(p->tables);
	}
	causal_profile_init(p);
}

const char *causal_profile_string(const struct causal_profile *p, uint32_t id)
{
	return p->tables ? string_table_text(&p->tables->strings, id) : "";
}

uint32_t causal_profile_find_string(const struct causal_profile *p, const char *text)
{
	return p->tables ? string_table_find(&p->tables->strings, text, strlen(text)) : UINT32_MAX;
}

static int64_t add_saturated(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

int64_t causal_profile_line_samples(const struct causal_profile *p, uint32_t location)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		if (p->samples[i].location == location)
			sum = add_saturated(sum, p->samples[i].count);
	}
	return sum;
}

int64_t causal_profile_total_runtime(const struct causal_profile *p)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_runs; i++) {
		if (p->runs[i].has_runtime)
			sum = add_saturated(sum, p->runs[i].runtime_ns);
	}
	return sum;
}

int64_t causal_run_effective_runtime(const struct causal_run *run)
{
	if (run->delay_ns > 0 && run->delay_ns < run->runtime_ns)
		return run->runtime_ns - run->delay_ns;
	return run->runtime_ns;
}

int64_t causal_profile_line_runtime(const struct causal_profile *p, uint32_t location)
{
	bool *in = calloc(p->n_runs ? p->n_runs : 1, sizeof(*in));
	int64_t sum = 0;

	if (!in)
		return causal_profile_total_runtime(p);
	for (size_t i = 0; i < p->n_samples; i++) {
		if (p->samples[i].location == location)
			in[p->samples[i].run] = true;
	}
	for (size_t i = 0; i < p->n_experiments; i++) {
		if (p->experiments[i].selected == location)
			in[p->experiments[i].run] = true;
	}
	for (size_t i = 0; i < p->n_runs; i++) {
		if (in[i] && p->runs[i].has_runtime)
			sum = add_saturated(sum, causal_run_effective_runtime(&p->runs[i]));
	}
	free(in);
	return sum;
}
