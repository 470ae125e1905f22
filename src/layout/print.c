// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Output of `lever layout` (spec autocpa.md §2.8, §8.7): structs as pahole
 * prints them — one member per line with its offset and size, holes,
 * cache-line boundary markers and the size summary — with the sampled
 * misses per field beside; the suggested layout as a C struct ready to
 * paste (pahole's comments, `aligned(64)` where algorithm F starts a
 * line) or why the layout is kept; the ranked "you will save" list; and
 * a JSON report written through src/report. Every count is labelled by
 * what the record's source measures (issue 17 B4): a clock sample is CPU
 * time, not a miss.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "report/report.h"

/* pahole's columns: the type in 26 characters, the name and ';' in 21. */
#define TYPE_WIDTH 26
#define NAME_WIDTH 21

void layout_units_for(const char *source, uint64_t period, struct layout_units *u)
{
	u->source = source;
	u->period = period;
	u->count = "samples";
	u->scaled = "events";
	if (!source)
		return;
	if (strcmp(source, "pmu") == 0) {
		u->count = "sampled misses";
		u->scaled = "misses";
	} else if (strcmp(source, "clock") == 0) {
		u->scaled = "ns of CPU time";
	} else if (strcmp(source, "instr") == 0) {
		u->count = "simulated misses";
		u->scaled = "misses";
	}
}

/* The generic units when a caller has none (a record that names no source). */
static const struct layout_units *units_or_default(const struct layout_units *u,
						   struct layout_units *def)
{
	if (u)
		return u;
	layout_units_for(NULL, 0, def);
	return def;
}

struct member_view {
	const struct layout_field *f;
	uint32_t offset;
	bool line_start;
};

static void print_declaration(FILE *out, const struct member_view *m)
{
	char name[256];

	snprintf(name, sizeof(name), "%s%s%s;", m->f->name, m->f->array_suffix,
		 m->line_start ? " __attribute__((aligned(64)))" : "");
	fprintf(out, "\t%-*s %-*s /* %5" PRIu32 " %5" PRIu32 " */", TYPE_WIDTH, m->f->type,
		NAME_WIDTH, name, m->offset, m->f->size);
}

/* pahole marks the first member at or past each 64-byte boundary. */
static void print_boundary(FILE *out, uint32_t offset, uint32_t *next_boundary)
{
	while (offset >= *next_boundary) {
		uint32_t line = *next_boundary / LAYOUT_LINE_SIZE;

		if (offset == *next_boundary)
			fprintf(out,
				"\t/* --- cacheline %" PRIu32 " boundary (%" PRIu32
				" bytes) --- */\n",
				line, *next_boundary);
		else if (offset - *next_boundary < LAYOUT_LINE_SIZE)
			fprintf(out,
				"\t/* --- cacheline %" PRIu32 " boundary (%" PRIu32
				" bytes) was %" PRIu32 " bytes ago --- */\n",
				line, *next_boundary, offset - *next_boundary);
		*next_boundary += LAYOUT_LINE_SIZE;
	}
}

struct body_totals {
	uint32_t members_size, holes, hole_bytes;
};

static void print_members(FILE *out, const struct member_view *m, size_t n, bool with_samples,
			  struct body_totals *t)
{
	uint32_t end = 0, next_boundary = LAYOUT_LINE_SIZE;

	memset(t, 0, sizeof(*t));
	for (size_t k = 0; k < n; k++) {
		if (m[k].offset > end && k > 0) {
			fprintf(out, "\n\t/* XXX %" PRIu32 " byte%s hole, try to pack */\n\n",
				m[k].offset - end, m[k].offset - end == 1 ? "" : "s");
			t->holes++;
			t->hole_bytes += m[k].offset - end;
		}
		print_boundary(out, m[k].offset, &next_boundary);
		print_declaration(out, &m[k]);
		if (with_samples)
			fprintf(out, " /* raw %8" PRIu64 " adj %8" PRIu64 " */", m[k].f->raw,
				m[k].f->adj);
		fputc('\n', out);
		end = m[k].offset + m[k].f->size;
		t->members_size += m[k].f->size;
	}
}

static void print_summary(FILE *out, uint32_t size, size_t n, uint32_t end,
			  const struct body_totals *t)
{
	fprintf(out, "\n\t/* size: %" PRIu32 ", cachelines: %" PRIu32 ", members: %zu */\n", size,
		(size + LAYOUT_LINE_SIZE - 1) / LAYOUT_LINE_SIZE, n);
	if (t->holes)
		fprintf(out,
			"\t/* sum members: %" PRIu32 ", holes: %" PRIu32 ", sum holes: %" PRIu32
			" */\n",
			t->members_size, t->holes, t->hole_bytes);
	if (size > end)
		fprintf(out, "\t/* padding: %" PRIu32 " */\n", size - end);
	if (size % LAYOUT_LINE_SIZE)
		fprintf(out, "\t/* last cacheline: %" PRIu32 " bytes */\n",
			size % LAYOUT_LINE_SIZE);
}

static void print_struct(FILE *out, const char *name, const struct member_view *m, size_t n,
			 uint32_t size, bool with_samples)
{
	struct body_totals t;
	uint32_t end = n ? m[n - 1].offset + m[n - 1].f->size : 0;

	fprintf(out, "struct %s {\n", name);
	print_members(out, m, n, with_samples, &t);
	print_summary(out, size, n, end, &t);
	fprintf(out, "};\n");
}

void layout_print_annotated(FILE *f, const struct layout_struct *s, const struct layout_units *u)
{
	struct member_view *m = calloc(s->n_fields ? s->n_fields : 1, sizeof(*m));
	struct layout_units def;

	u = units_or_default(u, &def);

	if (!m)
		return;
	for (size_t i = 0; i < s->n_fields; i++)
		m[i] = (struct member_view){.f = &s->fields[i], .offset = s->fields[i].offset};
	fprintf(f, "/* %s: %" PRIu64 " %s; raw = at the field, adj = with its basic blocks */\n",
		s->name, s->total_raw, u->count);
	print_struct(f, s->name, m, s->n_fields, s->size, true);
	free(m);
}

static const char *algorithm_name(enum layout_algorithm a)
{
	switch (a) {
	case LAYOUT_ALGO_MISSES:
		return "by misses";
	case LAYOUT_ALGO_THREADS:
		return "by threads";
	case LAYOUT_ALGO_ORIGINAL:
		break;
	}
	return "original";
}

/* No field may move: each is pinned or the flexible array member. */
static bool all_pinned(const struct layout_struct *s)
{
	for (size_t i = 0; i < s->n_fields; i++)
		if (!s->fields[i].pinned && !s->fields[i].flexible)
			return false;
	return s->n_fields > 0;
}

/* Why G keeps the layout, with the numbers it decided on. */
void layout_print_keep_reason(FILE *f, const struct layout_suggestion *sg,
			      const struct layout_units *u)
{
	struct layout_units def;

	u = units_or_default(u, &def);
	fprintf(f, "keep the current layout: ");
	switch (sg->keep) {
	case LAYOUT_KEEP_BELOW_NOISE:
		if (!sg->rejected_saved) {
			fprintf(
			    f,
			    "reordering by misses moves fields but saves nothing (estimate E 0)");
			break;
		}
		fprintf(f,
			"reordering by misses saves %" PRIu64 " %s (estimate E), not above its "
			"noise (%" PRIu64 ")",
			sg->rejected_saved, u->count, sg->noise);
		break;
	case LAYOUT_KEEP_WOULD_GROW:
		fprintf(f,
			"reordering by misses grows it %" PRIu32 " -> %" PRIu32
			" bytes while the modelled %s go %" PRIu64 " -> %" PRIu64
			" (a drop of more than %" PRIu64 " is needed)",
			sg->s->size, sg->rejected_size, u->count, sg->modelled_before,
			sg->rejected_modelled, sg->noise);
		break;
	case LAYOUT_KEEP_FROZEN:
		fprintf(f, "%s", sg->s->frozen);
		if (sg->rejected_saved)
			fprintf(f, " (a reorder would save %" PRIu64 " %s)", sg->rejected_saved,
				u->count);
		return;
	case LAYOUT_KEEP_MOVES_FIXED:
		fprintf(f,
			"reordering by misses would move %s, fixed at offset %" PRIu32
			" by the constraints",
			sg->s->fields[sg->moved_field].name, sg->s->fields[sg->moved_field].offset);
		break;
	case LAYOUT_KEEP_NO_MOVE:
	case LAYOUT_KEEP_NOTHING:
		if (all_pinned(sg->s)) {
			fprintf(f,
				"every field is pinned where it is (a likely cast, the record or "
				"the constraints; estimate E %" PRIu64 " %s)",
				sg->saved, u->count);
			break;
		}
		fprintf(f, "it is already in miss order (estimate E %" PRIu64 " %s)", sg->saved,
			u->count);
		break;
	}
	if (sg->threads_considered)
		fprintf(f,
			"; grouping by threads avoids %" PRIu64
			" %s of sharing per object%s and raises the modelled %s by %" PRIu64,
			sg->threads_avoided, u->count,
			sg->s->n_objects ? "" : " (the record has no data addresses for it)",
			u->count, sg->threads_rise);
}

/* Why G keeps the layout, with the numbers it decided on, as a C comment. */
static void print_kept(FILE *f, const struct layout_suggestion *sg, const struct layout_units *u)
{
	fprintf(f, "/* %s: ", sg->s->name);
	layout_print_keep_reason(f, sg, u);
	fprintf(f, " */\n");
}

void layout_print_suggestion(FILE *f, const struct layout_suggestion *sg,
			     const struct layout_units *u)
{
	const struct layout_struct *s = sg->s;
	struct member_view *m;
	struct layout_units def;

	u = units_or_default(u, &def);
	if (sg->algorithm == LAYOUT_ALGO_ORIGINAL) {
		print_kept(f, sg, u);
		return;
	}
	m = calloc(s->n_fields ? s->n_fields : 1, sizeof(*m));
	if (!m)
		return;
	for (size_t k = 0; k < s->n_fields; k++)
		m[k] = (struct member_view){.f = &s->fields[sg->order[k]],
					    .offset = sg->offsets[k],
					    .line_start = sg->line_start[sg->order[k]]};
	fprintf(f,
		"/* %s, suggested %s: saves %" PRIu64 " %s (estimate E; %" PRIu64
		" on the original order), modelled %s %" PRIu64 " -> %" PRIu64 ", size %" PRIu32
		" -> %" PRIu32 " */\n",
		s->name, algorithm_name(sg->algorithm), sg->saved, u->count, sg->original_saved,
		u->count, sg->modelled_before, sg->modelled_after, s->size, sg->size);
	if (sg->algorithm == LAYOUT_ALGO_THREADS)
		fprintf(f,
			"/* cross-thread sharing per object %" PRIu64 " -> %" PRIu64
			" %s: each thread group starts a cache line */\n",
			sg->sharing_before, sg->sharing_after, u->count);
	print_struct(f, s->name, m, s->n_fields, sg->size, false);
	free(m);
}

void layout_print_ranking(FILE *f, const struct layout_suggestion *sg, size_t n,
			  const struct layout_units *u)
{
	struct layout_units def;

	u = units_or_default(u, &def);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "In struct %s you will save %" PRIu64 " %s (%s", sg[i].s->name,
			sg[i].benefit, u->count, algorithm_name(sg[i].algorithm));
		if (u->period > 1)
			fprintf(f, "; about %.4g %s at period %" PRIu64 ")\n",
				(double)sg[i].benefit * (double)u->period, u->scaled, u->period);
		else
			fprintf(f, ")\n");
	}
}

/* The pair passes params' significance rule (issue 17 B2). */
static bool pair_is_significant(const struct layout_false_sharing *p, const struct layout_struct *s,
				const struct layout_params *params)
{
	return p->weight >= params->sharing_min_samples &&
	       (double)p->weight >= params->sharing_min_share * (double)s->total_raw;
}

void layout_print_false_sharing(FILE *f, const struct layout_struct *s,
				const struct layout_params *params, const struct layout_units *u)
{
	uint32_t *identity = malloc((s->n_fields ? s->n_fields : 1) * sizeof(*identity));
	struct layout_false_sharing *pairs = NULL;
	size_t n, shown = 0, left = 0;
	uint64_t left_weight = 0;
	struct layout_units def;

	u = units_or_default(u, &def);
	if (!identity)
		return;
	for (size_t i = 0; i < s->n_fields; i++)
		identity[i] = (uint32_t)i;
	n = layout_find_false_sharing(s, identity, NULL, NULL, 0);
	pairs = n ? malloc(n * sizeof(*pairs)) : NULL;
	if (pairs)
		layout_find_false_sharing(s, identity, NULL, pairs, n);
	for (size_t i = 0; pairs && i < n; i++) {
		if (!pair_is_significant(&pairs[i], s, params) || shown == 64) {
			left++;
			left_weight += pairs[i].weight;
			continue;
		}
		shown++;
		fprintf(
		    f,
		    "/* false sharing in %s, cacheline %" PRIu32 ": %s written by thread %" PRIu32
		    ", %s used by thread %" PRIu32 " (%" PRIu64 " %s in %" PRIu64 " object%s) */\n",
		    s->name, pairs[i].line, s->fields[pairs[i].written_field].name,
		    pairs[i].writer_tid, s->fields[pairs[i].other_field].name, pairs[i].other_tid,
		    pairs[i].weight, u->count, pairs[i].objects, pairs[i].objects == 1 ? "" : "s");
	}
	if (left)
		fprintf(f,
			"/* %zu false-sharing pair%s in %s left out (%" PRIu64
			" %s in all): below %" PRIu64 " %s or %.3g%% of the struct's "
			"(--sharing-min-samples, --sharing-min-share), or past the first 64 */\n",
			left, left == 1 ? "" : "s", s->name, left_weight, u->count,
			params->sharing_min_samples, u->count, 100.0 * params->sharing_min_share);
	free(pairs);
	free(identity);
}

static void write_field_json(struct report_json *j, const struct layout_field *f)
{
	report_json_object_begin(j);
	report_json_kv_string(j, "name", f->name);
	report_json_kv_string(j, "type", f->type);
	report_json_kv_string(j, "array", f->array_suffix);
	report_json_kv_integer(j, "offset", f->offset);
	report_json_kv_integer(j, "size", f->size);
	report_json_kv_integer(j, "align", f->align);
	report_json_kv_bool(j, "flexible", f->flexible);
	report_json_kv_bool(j, "pinned", f->pinned);
	report_json_kv_bool(j, "at_offset", f->at_offset);
	report_json_kv_integer(j, "raw", (long long)f->raw);
	report_json_kv_integer(j, "adj", (long long)f->adj);
	report_json_key(j, "threads");
	report_json_array_begin(j);
	for (size_t t = 0; t < f->n_threads; t++) {
		report_json_object_begin(j);
		report_json_kv_integer(j, "tid", f->threads[t].tid);
		report_json_kv_integer(j, "weight", (long long)f->threads[t].weight);
		report_json_kv_integer(j, "writes", (long long)f->threads[t].writes);
		report_json_object_end(j);
	}
	report_json_array_end(j);
	report_json_object_end(j);
}

static const char *keep_reason_name(enum layout_keep_reason r)
{
	switch (r) {
	case LAYOUT_KEEP_NO_MOVE:
		return "no-move";
	case LAYOUT_KEEP_BELOW_NOISE:
		return "below-noise";
	case LAYOUT_KEEP_WOULD_GROW:
		return "would-grow";
	case LAYOUT_KEEP_FROZEN:
		return "abi";
	case LAYOUT_KEEP_MOVES_FIXED:
		return "moves-fixed";
	case LAYOUT_KEEP_NOTHING:
		break;
	}
	return "";
}

static void write_suggestion_json(struct report_json *j, const struct layout_suggestion *sg)
{
	const struct layout_struct *s = sg->s;

	report_json_object_begin(j);
	report_json_kv_string(j, "struct", s->name);
	report_json_kv_integer(j, "size", s->size);
	report_json_kv_integer(j, "align", s->align);
	report_json_kv_integer(j, "samples", (long long)s->total_raw);
	report_json_key(j, "fields");
	report_json_array_begin(j);
	for (size_t i = 0; i < s->n_fields; i++)
		write_field_json(j, &s->fields[i]);
	report_json_array_end(j);
	report_json_key(j, "suggestion");
	report_json_object_begin(j);
	report_json_kv_string(j, "algorithm", algorithm_name(sg->algorithm));
	report_json_kv_string(j, "kept_because", keep_reason_name(sg->keep));
	report_json_key(j, "frozen");
	if (s->frozen)
		report_json_string(j, s->frozen);
	else
		report_json_null(j);
	report_json_kv_integer(j, "benefit", (long long)sg->benefit);
	report_json_kv_integer(j, "saved", (long long)sg->saved);
	report_json_kv_integer(j, "original_saved", (long long)sg->original_saved);
	report_json_kv_integer(j, "modelled_before", (long long)sg->modelled_before);
	report_json_kv_integer(j, "modelled_after", (long long)sg->modelled_after);
	report_json_kv_integer(j, "sharing_before", (long long)sg->sharing_before);
	report_json_kv_integer(j, "sharing_after", (long long)sg->sharing_after);
	report_json_kv_integer(j, "threads_sharing_avoided", (long long)sg->threads_avoided);
	report_json_kv_integer(j, "threads_modelled_rise", (long long)sg->threads_rise);
	report_json_kv_integer(j, "size", sg->size);
	report_json_key(j, "order");
	report_json_array_begin(j);
	for (size_t k = 0; k < s->n_fields; k++) {
		report_json_object_begin(j);
		report_json_kv_string(j, "name", s->fields[sg->order[k]].name);
		report_json_kv_integer(j, "offset", sg->offsets[k]);
		report_json_kv_bool(j, "line_start", sg->line_start[sg->order[k]]);
		report_json_object_end(j);
	}
	report_json_array_end(j);
	report_json_object_end(j);
	report_json_object_end(j);
}

void layout_write_json(FILE *f, const struct layout_suggestion *sg, size_t n,
		       const struct layout_units *u)
{
	struct report_json j;
	struct layout_units def;

	u = units_or_default(u, &def);
	report_json_init(&j, f);
	report_json_object_begin(&j);
	report_json_kv_string(&j, "format", "lever-layout-report");
	report_json_kv_integer(&j, "version", 1);
	report_json_kv_integer(&j, "line_size", LAYOUT_LINE_SIZE);
	report_json_key(&j, "source");
	if (u->source)
		report_json_string(&j, u->source);
	else
		report_json_null(&j);
	/* what every count below is, and what count × period is */
	report_json_kv_string(&j, "unit", u->count);
	report_json_kv_string(&j, "period_unit", u->scaled);
	report_json_key(&j, "period");
	if (u->period)
		report_json_integer(&j, (long long)u->period);
	else
		report_json_null(&j);
	report_json_key(&j, "structs");
	report_json_array_begin(&j);
	for (size_t i = 0; i < n; i++)
		write_suggestion_json(&j, &sg[i]);
	report_json_array_end(&j);
	report_json_object_end(&j);
	report_json_finish(&j);
}
