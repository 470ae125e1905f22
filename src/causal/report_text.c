/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The text report: a summary of the profile, then one table per progress
 * point (rank, line, slope with its interval, max predicted speedup, points,
 * an inline curve), laid out for an 80-column terminal; with detail, each
 * line's points and their intervals follow.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causal/causal.h"

#define LINE_WIDTH  22
#define CURVE_STEPS 20 /* one character per 5% of line speedup, 5..100% */

/* Long paths keep their tail (file name and line), which is what identifies them. */
static void print_location(FILE *out, const char *text, int width, bool pad)
{
	size_t len = strlen(text);

	if (len <= (size_t)width)
		fprintf(out, "%-*s", pad ? width : 0, text);
	else
		fprintf(out, "...%s", text + len - (size_t)(width - 3));
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
		print_location(out, causal_profile_string(p, p->points[i].name), 44, false);
		fprintf(out, " (%s)", causal_point_kind_name(p->points[i].kind));
	}
	fprintf(out, "\n");
}

static void print_header(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			 const struct causal_report_options *opt)
{
	size_t dropped = s->dropped_no_baseline + s->dropped_few_speedups;
	size_t files = opt ? opt->n_files : 0;
	uint64_t period = 0;
	const char *sampler = causal_profile_sampler(p, &period);

	fprintf(out, "lever causal report: %zu run%s, %zu experiment%s", p->n_runs,
		p->n_runs == 1 ? "" : "s", p->n_experiments, p->n_experiments == 1 ? "" : "s");
	if (files > 1)
		fprintf(out, ", %zu files", files);
	fprintf(out, "\n");
	if (sampler)
		fprintf(out, "  sampler: %s, %llu us period\n", sampler,
			(unsigned long long)(period / 1000));
	print_points(out, p);
	fprintf(out, "  phase correction: %s\n",
		!s->phase_correction ? "off"
		: s->runtime_ns > 0  ? "on"
				     : "on, but the profile has no runtime records");
	fprintf(out, "  intervals: %.0f%%, bootstrap over experiments, %u resamples, seed %llu\n",
		100 * s->level, s->resamples, (unsigned long long)s->seed);
	if (s->trimmed_experiments)
		fprintf(out, "  far-out experiments set aside: %zu (--no-trim keeps them)\n",
			s->trimmed_experiments);
	fprintf(out, "  lines with a usable curve: %zu", s->n_series);
	if (dropped)
		fprintf(out, " (%zu more lack a 0%% baseline or enough speedups)", dropped);
	fprintf(out, "\n");
}

/* ------------------------------------------------------------ curves */

static const char *const blocks_utf8[] = {"\u2581", "\u2582", "\u2583", "\u2584",
					  "\u2585", "\u2586", "\u2587", "\u2588"};
static const char *const blocks_ascii[] = {"_", ".", ",", "-", "=", "+", "*", "#"};

struct curve_scale {
	double lo, hi;
};

static double clamp_curve(double y)
{
	return y < -1 ? -1 : y > 2 ? 2 : y;
}

/* One scale for every curve of a table, so that heights compare across lines. */
static void curve_scale_init(struct curve_scale *sc, const struct causal_series *const *rows,
			     size_t n)
{
	sc->lo = 0;
	sc->hi = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < rows[i]->n_buckets; k++) {
			double y = clamp_curve(rows[i]->buckets[k].program_speedup);

			sc->lo = y < sc->lo ? y : sc->lo;
			sc->hi = y > sc->hi ? y : sc->hi;
		}
	}
	if (sc->hi - sc->lo < 0.01)
		sc->hi = sc->lo + 0.01;
}

static void print_curve(FILE *out, const struct causal_series *c, const struct curve_scale *sc,
			bool ascii)
{
	const char *const *blocks = ascii ? blocks_ascii : blocks_utf8;
	size_t k = 0;

	for (int step = 1; step <= CURVE_STEPS; step++) {
		int pct = step * 100 / CURVE_STEPS;
		int level;

		while (k < c->n_buckets && c->buckets[k].speedup_pct < pct)
			k++;
		if (k == c->n_buckets || c->buckets[k].speedup_pct != pct) {
			fputc(' ', out);
			continue;
		}
		level = (int)lround((clamp_curve(c->buckets[k].program_speedup) - sc->lo) /
				    (sc->hi - sc->lo) * 7);
		fputs(blocks[level < 0 ? 0 : level > 7 ? 7 : level], out);
	}
}

/* ------------------------------------------------------------ tables */

/* A slope or bound in 5 characters or so ("+0.23", "-12"). */
static void format_slope(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "n/a");
	else if (fabs(v) < 9.995)
		snprintf(buf, size, "%+.2f", v);
	else
		snprintf(buf, size, "%+.0f", v);
}

static void print_row(FILE *out, const struct causal_profile *p, const struct causal_series *c,
		      size_t rank, const struct curve_scale *sc, bool ascii)
{
	char slope[16], lo[16], hi[16], ci[40];

	format_slope(slope, sizeof(slope), c->slope);
	format_slope(lo, sizeof(lo), c->slope_low);
	format_slope(hi, sizeof(hi), c->slope_high);
	snprintf(ci, sizeof(ci), "[%s,%s]", lo, hi);
	fprintf(out, "%2zu%c ", rank, c->contention ? '!' : ' ');
	print_location(out, causal_profile_string(p, c->selected), LINE_WIDTH, true);
	fprintf(out, " %6s %-13s %+6.1f%% %3zu ", slope, ci, 100.0 * c->max_speedup, c->n_buckets);
	print_curve(out, c, sc, ascii);
	fprintf(out, "\n");
}

/* The series of one progress point, in summary order, the first `top` of them. */
static size_t rows_of_point(const struct causal_summary *s, uint32_t point, size_t top,
			    const struct causal_series **rows, size_t *total)
{
	size_t n = 0;

	*total = 0;
	for (size_t i = 0; i < s->n_series; i++) {
		if (s->series[i].point != point)
			continue;
		(*total)++;
		if (!top || n < top)
			rows[n++] = &s->series[i];
	}
	return n;
}

static void print_table(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			uint32_t point, const struct causal_report_options *opt,
			const struct causal_series **rows)
{
	const struct causal_point *pt = &p->points[point];
	size_t total, n = rows_of_point(s, point, opt ? opt->top : 0, rows, &total);
	bool ascii = opt && opt->ascii, contention = false;
	struct curve_scale sc;

	if (total == 0)
		return;
	curve_scale_init(&sc, rows, n);
	fprintf(out, "\nprogress point ");
	print_location(out, causal_profile_string(p, pt->name), 40, false);
	fprintf(out, " (%s): %zu line%s", causal_point_kind_name(pt->kind), total,
		total == 1 ? "" : "s");
	if (n < total)
		fprintf(out, ", the first %zu shown (--top 0 shows all)", n);
	fprintf(out, "\n #  %-*s %6s %-13s %7s %3s %s\n", LINE_WIDTH, "line", "slope",
		s->level == 0.95 ? "[95% CI]" : "[CI]", "max", "pts", "curve 5..100%");
	for (size_t i = 0; i < n; i++) {
		print_row(out, p, rows[i], i + 1, &sc, ascii);
		contention |= rows[i]->contention;
	}
	fprintf(
	    out,
	    "  curve: program speedup at line speedups 5..100%%, %s = %+.0f%% .. %s = %+.0f%%\n",
	    ascii ? blocks_ascii[0] : blocks_utf8[0], 100 * sc.lo,
	    ascii ? blocks_ascii[7] : blocks_utf8[7], 100 * sc.hi);
	if (contention)
		fprintf(out, "  ! contention: the slope's interval lies below 0; speeding the line "
			     "up\n    slows the program\n");
}

/* ------------------------------------------------------------ detail */

static void print_detail(FILE *out, const struct causal_profile *p, const struct causal_series *c,
			 size_t rank)
{
	fprintf(out, "\n%zu. ", rank);
	print_location(out, causal_profile_string(p, c->selected), 50, false);
	fprintf(out, " (");
	print_location(out, causal_profile_string(p, p->points[c->point].name), 20, false);
	fprintf(out, ")\n   slope %+.2f [%+.2f, %+.2f], impact %+.1f%%, %u experiments%s\n",
		c->slope, c->slope_low, c->slope_high, 100 * c->impact, c->experiments,
		c->contention ? ", contention" : "");
	fprintf(out, "   speedup%%  program-speedup%%  interval            experiments  phase\n");
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];
		char ci[48];

		snprintf(ci, sizeof(ci), "[%+.1f, %+.1f]", 100 * b->ci_low, 100 * b->ci_high);
		fprintf(out, "   %8d  %+16.1f  %-18s  %11u  ", b->speedup_pct,
			100.0 * b->program_speedup, i ? ci : "", b->experiments);
		if (i && c->phase_corrected)
			fprintf(out, "%5.3f\n", b->phase_factor);
		else
			fprintf(out, "%5s\n", "-");
	}
}

void causal_report_text(FILE *out, const struct causal_profile *p, const struct causal_summary *s,
			const struct causal_report_options *opt)
{
	const struct causal_series **rows;

	print_header(out, p, s, opt);
	if (s->n_series == 0) {
		fprintf(out, "\nNo line has a usable curve yet. A line needs experiments at 0%% "
			     "and at several\nother speedups, each with enough progress-point "
			     "visits. Run the program\nlonger or again (profiles append), add "
			     "progress points, or lower --min-speedups.\n");
		return;
	}
	rows = malloc(s->n_series * sizeof(*rows));
	if (!rows) {
		fprintf(out, "(out of memory)\n");
		return;
	}
	for (uint32_t pt = 0; pt < p->n_points; pt++)
		print_table(out, p, s, pt, opt, rows);
	free(rows);
	if (!opt || !opt->detail)
		return;
	for (uint32_t pt = 0; pt < p->n_points; pt++) {
		for (size_t i = 0, shown = 0; i < s->n_series; i++) {
			if (s->series[i].point != pt || (opt->top && shown >= opt->top))
				continue;
			print_detail(out, p, &s->series[i], ++shown);
		}
	}
}
