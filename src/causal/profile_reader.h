/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Private to the causal profile reader (doc/formats/profile.md), split by job:
 *
 *   profile_fields.c  a line into a record and its key=value fields; typed
 *                     field values; diagnostics (FILE:LINE: message)
 *   profile_model.c   building struct causal_profile: runs, experiments,
 *                     points, samples; its queries
 *   profile_read.c    the tab-separated reader: one record type at a time,
 *                     lines, runs, the public entry points
 *   profile_jsonl.c   Coz's JSON Lines, rewritten as tab-separated records
 *
 * Record and key names come from profile_format.h, shared with the writer.
 */
#ifndef LEVER_CAUSAL_PROFILE_READER_H
#define LEVER_CAUSAL_PROFILE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "causal/causal.h"
#include "causal/profile_format.h"
#include "causal/table.h"

#define NONE	   SIZE_MAX
#define DROPPED	   (SIZE_MAX - 1)
#define MAX_FIELDS 16

struct causal_tables {
	struct string_table strings;
	struct u64_map points;	/* kind << 32 | name id -> point index */
	struct u64_map samples; /* run << 32 | location id -> sample index */
};

struct field {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

struct record {
	const char *type;
	size_t type_len;
	struct field fields[MAX_FIELDS];
	size_t n_fields;
};

struct reader {
	struct causal_profile *p;
	const char *name;
	uint32_t source;
	uint64_t lineno;
	size_t run;	   /* current run, NONE before the first record */
	size_t experiment; /* experiment the next point records of the run belong to */
	/* tagged runs (run=ID): ID's string id -> run; each run's current experiment */
	struct u64_map run_tags;
	uint32_t tag; /* the current record's run tag, UINT32_MAX if untagged */
	size_t *run_experiment;
	size_t run_experiment_cap;
	bool strict;
	bool failed;
	bool said_unknown;
	char *scratch; /* NUL-terminated copy of a field value */
	size_t scratch_cap;
	enum { FORMAT_UNKNOWN, FORMAT_LEGACY, FORMAT_JSON } format;
	char *json_line; /* a JSON line rewritten as a legacy record */
	size_t json_len, json_cap;
};

/* ---- profile_fields.c ---- */
int profile_grow(void **array, size_t *cap, size_t need, size_t size);
#define GROW(arr, n, cap) profile_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

void profile_add_diagnostic(struct causal_profile *p, const char *text);
void profile_set_error(struct causal_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A bad line: a diagnostic, or (strict) the error that ends the read. */
void profile_bad_line(struct reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void profile_out_of_memory(struct reader *rd);

bool profile_split_record(struct reader *rd, const char *line, size_t len, struct record *rec);
bool profile_type_is(const struct record *rec, const char *name);
const struct field *profile_find_field(const struct record *rec, const char *key);
bool profile_get_signed(struct reader *rd, const struct record *rec, const char *type,
			const char *key, int64_t *out);
bool profile_get_count(struct reader *rd, const struct record *rec, const char *type,
		       const char *key, int64_t *out);
bool profile_get_unsigned(struct reader *rd, const struct record *rec, const char *type,
			  const char *key, uint64_t *out);
bool profile_get_speedup(struct reader *rd, const struct record *rec, double *out, int *pct);
uint32_t profile_get_string(struct reader *rd, const struct record *rec, const char *type,
			    const char *key);

/* ---- profile_model.c ---- */
size_t profile_start_run(struct reader *rd, bool has_startup, uint64_t startup_ns);
struct causal_run *profile_current_run(struct reader *rd);
void profile_select_run(struct reader *rd, size_t run);
uint32_t profile_find_point(struct reader *rd, uint32_t name, enum causal_point_kind kind);
struct causal_experiment *profile_point_owner(struct reader *rd);
void profile_add_delta(struct reader *rd, struct causal_experiment *e,
		       const struct causal_delta *d);

/* ---- profile_read.c ---- */
void profile_dispatch_record(struct reader *rd, const struct record *rec);

/* ---- profile_jsonl.c ---- */
void profile_read_json_line(struct reader *rd, const char *line, size_t len);
void profile_jsonl_free(struct reader *rd);

#endif
