/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `lever annotate dump`: a record (doc/formats/annotate-record.md) as one
 * table for other tools (R, pandas; issue 15, spec/freud.md §4.2.5): one
 * row per call, the columns
 *
 *   symbol, id, parent, the metrics any selected call has (record units:
 *   µs for time, cpu, wait and hold), then the features by name, the union
 *   over the selected symbols in order of first declaration
 *
 * with a missing value (a metric not recorded, a feature a symbol does not
 * have or that was missing at that call) empty in CSV and null in JSON. A
 * branch feature's cell is its outcome string as recorded (`TNN`; a string in
 * JSON), empty or null when the branch did not run.
 * CSV follows RFC 4180 (fields with a comma, quote or line break are
 * quoted); JSON is an array of one object per row with the same keys, the
 * shape pandas.read_json and R's jsonlite::fromJSON turn into a data frame.
 * Numbers are printed in the shortest form that reads back exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"
#include "report/report.h"

/* One output column past symbol, id and parent: a metric, or a feature by name. */
struct column {
	char *name;	 /* the header (a feature whose name clashes gets "feature:" before it) */
	const char *key; /* the metric or feature name */
	int metric;	 /* enum annotate_metric, or -1 for a feature */
};

struct table {
	const struct annotate_symbol **symbols;
	size_t n_symbols;
	struct column *cols;
	size_t n_cols;
	long *feature_of; /* [symbol][column]: the symbol's feature index, or -1 */
};

static void table_free(struct table *t)
{
	for (size_t c = 0; c < t->n_cols; c++)
		free(t->cols[c].name);
	free(t->cols);
	free(t->feature_of);
	free(t->symbols);
}

static bool metric_present(const struct annotate_symbol *s, int m)
{
	if (!s->metrics[m])
		return false;
	for (size_t i = 0; i < s->n_calls; i++)
		if (!isnan(s->metrics[m][i]))
			return true;
	return false;
}

static bool reserved_name(const char *name)
{
	return strcmp(name, "symbol") == 0 || strcmp(name, "id") == 0 ||
	       strcmp(name, "parent") == 0 || annotate_metric_parse(name) >= 0;
}

static int add_column(struct table *t, const char *key, int metric)
{
	struct column *c = realloc(t->cols, (t->n_cols + 1) * sizeof(*c));
	bool clash = metric < 0 && reserved_name(key);
	size_t len = strlen(key) + (clash ? 8 : 0) + 1;

	if (!c)
		return -ENOMEM;
	t->cols = c;
	c = &t->cols[t->n_cols];
	c->name = malloc(len);
	if (!c->name)
		return -ENOMEM;
	snprintf(c->name, len, "%s%s", clash ? "feature:" : "", key);
	c->key = key;
	c->metric = metric;
	t->n_cols++;
	return 0;
}

static bool has_feature_column(const struct table *t, const char *name)
{
	for (size_t c = 0; c < t->n_cols; c++)
		if (t->cols[c].metric < 0 && strcmp(t->cols[c].key, name) == 0)
			return true;
	return false;
}

static int build_columns(struct table *t)
{
	int rc = 0;

	for (int m = 0; m < ANNOTATE_N_METRICS && !rc; m++) {
		bool present = false;

		for (size_t s = 0; s < t->n_symbols && !present; s++)
			present = metric_present(t->symbols[s], m);
		if (present)
			rc = add_column(t, annotate_metric_name((enum annotate_metric)m), m);
	}
	for (size_t s = 0; s < t->n_symbols && !rc; s++)
		for (size_t f = 0; f < t->symbols[s]->n_features && !rc; f++) {
			const char *name = t->symbols[s]->features[f].name;

			if (!has_feature_column(t, name))
				rc = add_column(t, name, -1);
		}
	if (rc)
		return rc;
	t->feature_of = malloc((t->n_symbols * t->n_cols + 1) * sizeof(*t->feature_of));
	if (!t->feature_of)
		return -ENOMEM;
	for (size_t s = 0; s < t->n_symbols; s++)
		for (size_t c = 0; c < t->n_cols; c++)
			t->feature_of[s * t->n_cols + c] =
			    t->cols[c].metric < 0
				? annotate_symbol_feature(t->symbols[s], t->cols[c].key)
				: -1;
	return 0;
}

/* The selected symbols: those named (each must exist), or all of them. */
static int select_symbols(struct table *t, const struct annotate_record *r,
			  const char *const *names, size_t n_names, const char **missing)
{
	size_t n = n_names ? n_names : r->n_symbols;

	t->symbols = calloc(n + 1, sizeof(*t->symbols));
	if (!t->symbols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct annotate_symbol *s =
		    n_names ? annotate_record_find(r, names[i]) : &r->symbols[i];
		bool dup = false;

		if (!s) {
			*missing = names[i];
			return -ENOENT;
		}
		for (size_t j = 0; j < t->n_symbols; j++)
			dup |= t->symbols[j] == s;
		if (!dup)
			t->symbols[t->n_symbols++] = s;
	}
	return 0;
}

/* ------------------------------------------------------------ values */

/* The shortest %g form that reads back as the same double. */
static void print_number(FILE *f, double v)
{
	char buf[40];

	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/* The value of column c at call i of symbol s (NaN: missing). */
static double cell(const struct table *t, size_t s, size_t c, size_t i)
{
	const struct annotate_symbol *sym = t->symbols[s];
	long fi;

	if (t->cols[c].metric >= 0)
		return sym->metrics[t->cols[c].metric] ? sym->metrics[t->cols[c].metric][i] : NAN;
	fi = t->feature_of[s * t->n_cols + c];
	return fi < 0 ? NAN : sym->features[fi].values[i];
}

/*
 * A branch feature's cell: its outcome string as recorded (`TNN`, `T...T+40`,
 * `?`), NULL when the column is not a branch of s or the branch did not run.
 */
static const char *outcome_cell(const struct table *t, size_t s, size_t c, size_t i)
{
	const struct annotate_symbol *sym = t->symbols[s];
	long fi;

	if (t->cols[c].metric >= 0)
		return NULL;
	fi = t->feature_of[s * t->n_cols + c];
	if (fi < 0 || sym->features[fi].kind != ANNOTATE_BRANCH || !sym->features[fi].outcomes)
		return NULL;
	return sym->features[fi].outcomes[i];
}

static bool is_branch_cell(const struct table *t, size_t s, size_t c)
{
	long fi = t->cols[c].metric >= 0 ? -1 : t->feature_of[s * t->n_cols + c];

	return fi >= 0 && t->symbols[s]->features[fi].kind == ANNOTATE_BRANCH;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void write_csv(FILE *f, const struct table *t)
{
	fputs("symbol,id,parent", f);
	for (size_t c = 0; c < t->n_cols; c++) {
		fputc(',', f);
		report_csv_field(f, t->cols[c].name);
	}
	fputc('\n', f);
	for (size_t s = 0; s < t->n_symbols; s++)
		for (size_t i = 0; i < t->symbols[s]->n_calls; i++) {
			report_csv_field(f, t->symbols[s]->name);
			fprintf(f, ",%" PRIu64 ",%" PRIu64, t->symbols[s]->id[i],
				t->symbols[s]->parent[i]);
			for (size_t c = 0; c < t->n_cols; c++) {
				double v = cell(t, s, c, i);
				const char *o = outcome_cell(t, s, c, i);

				fputc(',', f);
				if (o)
					report_csv_field(f, o);
				else if (!isnan(v) && !is_branch_cell(t, s, c))
					print_number(f, v);
			}
			fputc('\n', f);
		}
}

static void write_json(FILE *f, const struct table *t)
{
	bool first = true;

	fputs("[", f);
	for (size_t s = 0; s < t->n_symbols; s++)
		for (size_t i = 0; i < t->symbols[s]->n_calls; i++) {
			fputs(first ? "\n{\"symbol\": " : ",\n{\"symbol\": ", f);
			first = false;
			json_string(f, t->symbols[s]->name);
			fprintf(f, ", \"id\": %" PRIu64 ", \"parent\": %" PRIu64,
				t->symbols[s]->id[i], t->symbols[s]->parent[i]);
			for (size_t c = 0; c < t->n_cols; c++) {
				double v = cell(t, s, c, i);
				const char *o = outcome_cell(t, s, c, i);

				fputs(", ", f);
				json_string(f, t->cols[c].name);
				fputs(": ", f);
				if (o)
					json_string(f, o);
				else if (isnan(v) || is_branch_cell(t, s, c))
					fputs("null", f);
				else
					print_number(f, v);
			}
			fputc('}', f);
		}
	fputs(first ? "]\n" : "\n]\n", f);
}

int annotate_dump(FILE *f, const struct annotate_record *r, const char *const *symbols,
		  size_t n_symbols, enum annotate_dump_format format, const char **missing)
{
	struct table t = {0};
	int rc = select_symbols(&t, r, symbols, n_symbols, missing);

	if (!rc)
		rc = build_columns(&t);
	if (!rc) {
		errno = 0;
		if (format == ANNOTATE_DUMP_JSON)
			write_json(f, &t);
		else
			write_csv(f, &t);
		if (ferror(f))
			rc = errno ? -errno : -EIO; /* the failed write's reason */
	}
	table_free(&t);
	return rc;
}
