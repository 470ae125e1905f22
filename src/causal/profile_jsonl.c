/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Coz's JSON Lines profiles (spec/anchors.md §1.6): one object per line with
 * the record type under "type" and the same fields as keys
 * ("selected_samples" for selected-samples). A JSON line is rewritten into
 * the tab-separated record it stands for, so both formats go through the
 * same checks in profile_read.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "causal/profile_reader.h"

/* ------------------------------------------------------------ JSON Lines */

static bool json_append(struct reader *rd, const char *text, size_t n)
{
	if (profile_grow((void **)&rd->json_line, &rd->json_cap, rd->json_len + n + 1, 1)) {
		profile_out_of_memory(rd);
		return false;
	}
	memcpy(rd->json_line + rd->json_len, text, n);
	rd->json_len += n;
	rd->json_line[rd->json_len] = '\0';
	return true;
}

/* Append a name with '_' written as '-'. */
static bool json_append_dashed(struct reader *rd, const char *name, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = name[i] == '_' ? '-' : name[i];

		if (!json_append(rd, &c, 1))
			return false;
	}
	return true;
}

/* Text that cannot stand in a legacy field: TAB, newline, NUL. */
static bool fits_field(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\0')
			return false;
	}
	return true;
}

/* A JSON scalar as the text of a legacy value; false (after a diagnostic) if it is not one. */
static bool json_value_text(struct reader *rd, const char *key, json_t *v, char *buf, size_t size,
			    const char **text, size_t *len)
{
	if (json_is_string(v)) {
		*text = json_string_value(v);
		*len = json_string_length(v);
		if (!fits_field(*text, *len)) {
			profile_bad_line(rd, "\"%.40s\": string with a control character", key);
			return false;
		}
		return true;
	}
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v) && isfinite(json_real_value(v)))
		snprintf(buf, size, "%.17g", json_real_value(v));
	else {
		profile_bad_line(rd, "\"%.40s\" is not a string or a number", key);
		return false;
	}
	*text = buf;
	*len = strlen(buf);
	return true;
}

/* Rewrite one JSON object as the legacy line TYPE<TAB>key=value...; false if malformed. */
static bool json_to_record_line(struct reader *rd, json_t *obj)
{
	json_t *type = json_object_get(obj, PROFILE_JSON_KEY_TYPE);
	const char *key;
	json_t *v;

	rd->json_len = 0;
	if (!json_is_string(type) || json_string_length(type) == 0) {
		profile_bad_line(rd, "JSON record without a \"type\" string");
		return false;
	}
	/* Coz's JSON names churned between _ and - (anchors.md §1.6): accept both */
	if (!json_append_dashed(rd, json_string_value(type), json_string_length(type)))
		return false;
	json_object_foreach(obj, key, v)
	{
		char num[64];
		const char *text;
		size_t len, key_len = strlen(key);

		if (strcmp(key, PROFILE_JSON_KEY_TYPE) == 0)
			continue;
		if (key_len == 0 || !fits_field(key, key_len) || strchr(key, '=')) {
			profile_bad_line(rd, "JSON key \"%.40s\" cannot be a field name", key);
			return false;
		}
		if (!json_value_text(rd, key, v, num, sizeof(num), &text, &len))
			return false;
		/* selected_samples (JSON) is selected-samples (legacy) */
		if (!json_append(rd, "\t", 1) || !json_append_dashed(rd, key, key_len) ||
		    !json_append(rd, "=", 1) || !json_append(rd, text, len))
			return false;
	}
	return true;
}

void profile_read_json_line(struct reader *rd, const char *line, size_t len)
{
	json_error_t err;
	json_t *obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	struct record rec;

	if (!obj) {
		profile_bad_line(rd, "not valid JSON (column %d): %.100s", err.column, err.text);
		return;
	}
	if (!json_is_object(obj)) {
		profile_bad_line(rd, "JSON line is not an object");
		json_decref(obj);
		return;
	}
	if (json_to_record_line(rd, obj) &&
	    profile_split_record(rd, rd->json_line, rd->json_len, &rec))
		profile_dispatch_record(rd, &rec);
	json_decref(obj);
}
