/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The minimal text report: one small table per line, steepest curve first,
 * laid out for an 80-column terminal.
 */
#include <string.h>

#include "causal/causal.h"

#define NAME_WIDTH 74

/* Long paths keep their tail (file name and line), which is what identifies them. */
static void print_location(FILE *out, const char *text, int width)
{
	size_t len = strlen(text);

	if (len <= (size_t)width)
		fprintf(out, "%s", text);
	else
		fprintf(out, "...%s", text + len - (size_t)(width - 3));
}

static const char *kind_name(enum causal_point_kind kind)
{
	return kind == CAUSAL_POINT_LATENCY ? "latency" : "throughput";
}

static void print_points(FILE *out, const struct causal_profile *p)
{
	fprintf(out, "  progress points: ");
	if (p->n_points == 0)
		fprintf(out, "none");
	for (size_t i = 0; i < p->n_points; i++) {
		if (i == 4) {
			fprintf(out, ", and %zu more", p->n_points - i);
			break;
		}
		fprintf(out, "%s", i ? ", " : "");
		print_location(out, causal_profile_string(p, p->points[i].name), 44);
		fprintf(out, " (%s)", kind_name(p->points[i].kind));
	}
	fprintf(out, "\n");
}

/* The sampler of lever's runs ("perf, 1000 us period"), if they agree; else nothing. */
static void print_sampler(FILE *out, const struct causal_profile *p)
{
	const struct causal_run *first = NULL;

	for (size_t i = 0; i < p->n_runs; i++) {
		const struct causal_run *r = &p->runs[i];

		if (!r->has_lever_header)
			return;
		if (!first)
			first = r;
		else if (strcmp(r->sampler, first->sampler) || r->period_ns != first->period_ns)
			return;
	}
	if (first && first->sampler[0])
		fprintf(out, "  sampler: %s, %llu us period\n", first->sampler,
			(unsigned long long)(first->period_ns / 1000));
}

static void print_header(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			 size_t shown)
{
	size_t dropped = s->dropped_no_baseline + s->dropped_few_speedups;

	fprintf(out, "lever causal report: %zu run%s, %zu experiment%s\n", p->n_runs,
		p->n_runs == 1 ? "" : "s", p->n_experiments, p->n_experiments == 1 ? "" : "s");
	print_sampler(out, p);
	print_points(out, p);
	fprintf(out, "  lines with a usable curve: %zu", s->n_series);
	if (dropped)
		fprintf(out, " (%zu more lack a 0%% baseline or enough speedups)", dropped);
	fprintf(out, "\n");
	if (shown < s->n_series)
		fprintf(out, "  showing the %zu steepest; --top 0 shows all\n", shown);
}

static void print_series(FILE *out, const struct causal_profile *p, const struct causal_series *c,
			 size_t rank, bool one_point)
{
	const struct causal_point *pt = &p->points[c->point];

	fprintf(out, "\n%zu. ", rank);
	print_location(out, causal_profile_string(p, c->selected), NAME_WIDTH);
	fprintf(out, "\n   slope %+.2f, max %+.1f%%, %u experiments", c->slope,
		100.0 * c->max_speedup, c->experiments);
	if (!one_point) {
		fprintf(out, ", %s ", kind_name(pt->kind));
		print_location(out, causal_profile_string(p, pt->name), 24);
	}
	fprintf(out, "\n   speedup%%  program-speedup%%  experiments\n");
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];

		fprintf(out, "   %8d  %+16.1f  %11u\n", b->speedup_pct, 100.0 * b->program_speedup,
			b->experiments);
	}
}

void causal_report_text(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	size_t shown = s->n_series;

	if (opt && opt->top && opt->top < shown)
		shown = opt->top;
	print_header(out, p, s, shown);
	if (s->n_series == 0) {
		fprintf(out, "\nNo line has a usable curve yet. A line needs experiments at 0%% "
			     "and at several\nother speedups, each with enough progress-point "
			     "visits. Run the program\nlonger or again (profiles append), add "
			     "progress points, or lower --min-speedups.\n");
		return;
	}
	for (size_t i = 0; i < shown; i++)
		print_series(out, p, &s->series[i], i + 1, p->n_points == 1);
}
