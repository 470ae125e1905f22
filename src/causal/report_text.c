/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The text report: a summary of the profile, then one table per progress
 * point (rank, line, the fitted effect at 100% with its interval, the fitted
 * shape, an inline curve), laid out for an 80-column terminal; with detail,
 * each line's fit, slope and points with their intervals follow. Lines and
 * points that rest on too little say so instead of a number (fit.c).
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

/* The header's method lines for Coz's viewer's method (viewer.c). */
static void print_viewer_header(FILE *out, const struct causal_summary *s)
{
	size_t dropped = s->dropped_no_baseline + s->dropped_few_speedups;

	fprintf(out, "  method: coz-viewer (what Coz's web viewer plots: no phase correction, "
		     "no\n    trimming, no intervals; --method=lever for lever's analysis)\n");
	fprintf(out,
		"  minimum points: %u; points dropped: %zu (under %d visits, NaN, or\n"
		"    outside -100..+200%%)\n",
		s->viewer_min_points, s->dropped_out_of_range, CAUSAL_VIEWER_MIN_DELTA);
	if (s->dropped_coz_h)
		fprintf(out, "  experiments on lines in coz.h dropped: %zu\n", s->dropped_coz_h);
	fprintf(out, "  lines with a usable curve: %zu", s->n_series);
	if (dropped)
		fprintf(out, " (%zu more lack a 0%% point or enough points)", dropped);
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
	if (s->method == CAUSAL_METHOD_COZ_VIEWER) {
		print_viewer_header(out, s);
		return;
	}
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
		if (c->buckets[k].thin) { /* no confident height for a thin point */
			fputs(ascii ? ":" : "\u00b7", out);
			continue;
		}
		level = (int)lround((clamp_curve(c->buckets[k].program_speedup) - sc->lo) /
				    (sc->hi - sc->lo) * 7);
		fputs(blocks[level < 0 ? 0 : level > 7 ? 7 : level], out);
	}
}

/* ------------------------------------------------------------ tables */

/* The fitted effect at 100% and its interval, or "thin" instead of the number. */
static void format_effect(char *buf, size_t size, const struct causal_series *c)
{
	if (c->thin || !isfinite(c->fit.effect))
		snprintf(buf, size, "%6s", "thin");
	else if (fabs(c->fit.effect) < 0.9995)
		snprintf(buf, size, "%+5.1f%%", 100 * c->fit.effect);
	else
		snprintf(buf, size, "%+5.0f%%", 100 * c->fit.effect);
}

/* "[+7.9,+8.9]": the effect's interval in points. */
static void format_effect_ci(char *buf, size_t size, const struct causal_series *c)
{
	if (!isfinite(c->fit.effect_low) || !isfinite(c->fit.effect_high))
		snprintf(buf, size, "[n/a]");
	else if (fabs(c->fit.effect_low) < 0.9995 && fabs(c->fit.effect_high) < 0.9995)
		snprintf(buf, size, "[%+.1f,%+.1f]", 100 * c->fit.effect_low,
			 100 * c->fit.effect_high);
	else /* 100 points or more: whole points keep the column's width */
		snprintf(buf, size, "[%+.0f,%+.0f]", 100 * c->fit.effect_low,
			 100 * c->fit.effect_high);
}

/* The fitted model's shape: "levels@25%" or "linear". */
static void format_shape(char *buf, size_t size, const struct causal_fit *f)
{
	if (f->levels_off)
		snprintf(buf, size, "levels@%.0f%%", 100 * f->knee);
	else
		snprintf(buf, size, "linear");
}

/* A row of the viewer's method: impact, largest program speedup, points. */
static void print_viewer_row(FILE *out, const struct causal_profile *p,
			     const struct causal_series *c, size_t rank,
			     const struct curve_scale *sc, bool ascii)
{
	fprintf(out, "%2zu  ", rank);
	print_location(out, causal_profile_string(p, c->selected), LINE_WIDTH, true);
	fprintf(out, " %+6.1f%% %+6.1f%% %6zu  ", 100 * c->impact, 100 * c->max_speedup,
		c->n_buckets);
	print_curve(out, c, sc, ascii);
	fprintf(out, "\n");
}

static void print_row(FILE *out, const struct causal_profile *p, const struct causal_series *c,
		      size_t rank, const struct curve_scale *sc, bool ascii)
{
	char effect[16], ci[48], shape[24];

	format_effect(effect, sizeof(effect), c);
	format_effect_ci(ci, sizeof(ci), c);
	format_shape(shape, sizeof(shape), &c->fit);
	fprintf(out, "%2zu%c ", rank, c->contention ? '!' : c->thin ? '?' : ' ');
	print_location(out, causal_profile_string(p, c->selected), LINE_WIDTH, true);
	fprintf(out, " %6s %-13s %-10s ", effect, ci, shape);
	print_curve(out, c, sc, ascii);
	fprintf(out, "\n");
}

/* The rows of one progress point under Coz's viewer's method. */
static void print_viewer_table(FILE *out, const struct causal_profile *p,
			       const struct causal_summary *s, const struct causal_series **rows,
			       size_t n, const struct curve_scale *sc, bool ascii)
{
	fprintf(out, "\n #  %-*s %7s %7s %6s  %s\n", LINE_WIDTH, "line", "impact", "max", "points",
		"curve 5..100%");
	for (size_t i = 0; i < n; i++)
		print_viewer_row(out, p, rows[i], i + 1, sc, ascii);
	fprintf(out,
		"  impact: Coz's viewer's, the largest area under the curve from 0 to x\n"
		"  divided by x; max: the largest program speedup; ranked by %s\n",
		causal_sort_name(s->sort));
	fprintf(out,
		"  curve: program speedup at line speedups 5..100%%, %s = %+.0f%% .. %s = "
		"%+.0f%%\n",
		ascii ? blocks_ascii[0] : blocks_utf8[0], 100 * sc->lo,
		ascii ? blocks_ascii[7] : blocks_utf8[7], 100 * sc->hi);
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
	bool ascii = opt && opt->ascii, contention = false, thin = false;
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
	if (s->method == CAUSAL_METHOD_COZ_VIEWER) {
		print_viewer_table(out, p, s, rows, n, &sc, ascii);
		return;
	}
	fprintf(out, "\n #  %-*s %6s %-13s %-10s %s\n", LINE_WIDTH, "line", "effect",
		s->level == 0.95 ? "[95% CI]" : "[CI]", "shape", "curve 5..100%");
	for (size_t i = 0; i < n; i++) {
		print_row(out, p, rows[i], i + 1, &sc, ascii);
		contention |= rows[i]->contention;
		thin |= rows[i]->thin != 0;
	}
	fprintf(out, "  effect: fitted program speedup at 100%% line speedup; ranked by %s\n",
		s->sort == CAUSAL_SORT_SLOPE  ? "slope (--sort)"
		: s->sort == CAUSAL_SORT_NAME ? "name (--sort)"
					      : "impact");
	fprintf(out,
		"  curve: program speedup at line speedups 5..100%%, %s = %+.0f%% .. %s = "
		"%+.0f%%, %s thin\n",
		ascii ? blocks_ascii[0] : blocks_utf8[0], 100 * sc.lo,
		ascii ? blocks_ascii[7] : blocks_utf8[7], 100 * sc.hi, ascii ? ":" : "\u00b7");
	if (contention)
		fprintf(out, "  ! contention: the slope's interval lies below 0; speeding the line "
			     "up\n    slows the program\n");
	if (thin)
		fprintf(out,
			"  ? thin: the curve rests on too few experiments or visits, or its "
			"interval\n    is wider than %.0f points; run longer or again (--detail "
			"says why)\n",
			100 * CAUSAL_THIN_WIDTH);
}

/* ------------------------------------------------------------ detail */

/* One-letter codes of the thin-evidence reasons, for the detail's last column. */
static void thin_codes(char *buf, size_t size, unsigned thin)
{
	snprintf(buf, size, "%s%s%s", thin & CAUSAL_THIN_FEW_EXPERIMENTS ? "e" : "",
		 thin & CAUSAL_THIN_FEW_VISITS ? "v" : "", thin & CAUSAL_THIN_WIDE ? "w" : "");
}

static void print_detail_point(FILE *out, const struct causal_series *c,
			       const struct causal_bucket *b, bool first)
{
	char ci[48], value[24], codes[8];

	snprintf(ci, sizeof(ci), "[%+.1f, %+.1f]", 100 * b->ci_low, 100 * b->ci_high);
	if (b->thin) /* the number in parentheses: not a measurement to rely on */
		snprintf(value, sizeof(value), "(%+.1f)", 100.0 * b->program_speedup);
	else
		snprintf(value, sizeof(value), "%+.1f", 100.0 * b->program_speedup);
	thin_codes(codes, sizeof(codes), b->thin);
	fprintf(out, "   %8d  %16s  %-16s %+6.1f  %11u  ", b->speedup_pct, value, first ? "" : ci,
		100 * b->fit, b->experiments);
	if (!first && c->phase_corrected)
		fprintf(out, "%5.3f", b->phase_factor);
	else
		fprintf(out, "%5s", "-");
	fprintf(out, "%s%s\n", b->thin ? " " : "", codes);
}

/* A line's points under Coz's viewer's method: the aggregates behind each. */
static void print_viewer_detail(FILE *out, const struct causal_profile *p,
				const struct causal_series *c, size_t rank)
{
	fprintf(out, "\n%zu. ", rank);
	print_location(out, causal_profile_string(p, c->selected), 50, false);
	fprintf(out, " (");
	print_location(out, causal_profile_string(p, p->points[c->point].name), 20, false);
	fprintf(out, ")\n   impact %+.1f%%, least-squares slope %+.2f, %u experiments\n",
		100 * c->impact, c->slope, c->experiments);
	fprintf(out, "   speedup%%  program-speedup%%  experiments       visits   duration-ms\n");
	for (size_t i = 0; i < c->n_buckets; i++) {
		const struct causal_bucket *b = &c->buckets[i];

		fprintf(out, "   %8d  %16.1f  %11u  %11.0f  %12.3f\n", b->speedup_pct,
			100 * b->program_speedup, b->experiments, b->visits, b->duration / 1e6);
	}
}

static void print_detail(FILE *out, const struct causal_profile *p, const struct causal_series *c,
			 size_t rank)
{
	char shape[24], why[64];
	unsigned thin = 0;

	format_shape(shape, sizeof(shape), &c->fit);
	fprintf(out, "\n%zu. ", rank);
	print_location(out, causal_profile_string(p, c->selected), 50, false);
	fprintf(out, " (");
	print_location(out, causal_profile_string(p, p->points[c->point].name), 20, false);
	fprintf(out, ")\n   fit: %s, effect at 100%% %+.1f%% [%+.1f, %+.1f], initial slope %+.2f\n",
		shape, 100 * c->fit.effect, 100 * c->fit.effect_low, 100 * c->fit.effect_high,
		c->fit.slope);
	fprintf(out, "   slope %+.2f [%+.2f, %+.2f], impact %+.1f%%, %u experiments%s\n", c->slope,
		c->slope_low, c->slope_high, 100 * c->impact, c->experiments,
		c->contention ? ", contention" : "");
	if (c->thin)
		fprintf(out, "   thin evidence: %s\n", causal_thin_text(c->thin, why, sizeof(why)));
	fprintf(out, "   speedup%%  program-speedup%%  interval            fit  experiments  "
		     "phase\n");
	for (size_t i = 0; i < c->n_buckets; i++) {
		print_detail_point(out, c, &c->buckets[i], i == 0);
		thin |= c->buckets[i].thin;
	}
	if (thin)
		fprintf(out,
			"   (thin points in parentheses: e = under %d experiments, v = under %d "
			"visits,\n    w = interval wider than %.0f points)\n",
			CAUSAL_THIN_EXPERIMENTS, CAUSAL_THIN_VISITS, 100 * CAUSAL_THIN_WIDTH);
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
			if (s->method == CAUSAL_METHOD_COZ_VIEWER)
				print_viewer_detail(out, p, &s->series[i], ++shown);
			else
				print_detail(out, p, &s->series[i], ++shown);
		}
	}
}
